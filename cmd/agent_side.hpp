#pragma once
// Two-user mode in cmd/: the agent user's side of the commands it may run
// (they write the spool and read tickets and the status copies, never the
// store), the owner side's intake before a command, and tickets accepted
// wherever a proposal id is.

#include <chrono>
#include <optional>
#include <string>

#include "cmd/cli.hpp"
#include "lib/two_user/agent_side.hpp"
#include "lib/two_user/agent_user.hpp"
#include "lib/two_user/intake.hpp"
#include "lib/store/spool.hpp"

namespace kai::cmd {

// The workspace of an agent-side process: the root the store lies in, with
// built-in rules (the owner's config is not the agent's to read), for the
// commands the agent may run. denied for any other command.
Result<Workspace> open_agent_workspace(const Env& env, const Clock& clock, const AgentSide& side,
                                       const std::string& command);

// The owner-side commands that take in what waits in the spool before they
// start: those that propose or decide (list, show, log, read and ls only read).
bool takes_in_first(const std::string& command);
// Take the spool in for `command` and say on stderr what was taken in or
// quarantined (not for `intake`, which prints it itself).
void take_in_spool(Workspace& ws, const std::string& command, IntakeReport& into);
// For the owner's commands that only read: say on stderr how many entries
// wait in the spool, and how to take them in.
void note_waiting_spool(const Workspace& ws);
// One line per ticket of `r`, on stdout (kaicoder intake).
void print_intake(const IntakeReport& r);
nlohmann::json intake_json(const IntakeReport& r);

// Agent side of propose and run: report the ticket a lib/two_user/agent_side spool_*
// call returned (or its error); with `wait`, then wait as agent_wait does.
int report_spooled(Session& s, Workspace& ws, const Result<std::string>& ticket, const char* command, bool wait);

// Agent side of wait, list and show: tickets and the status copies only
// (lib/two_user/agent_side); a wait ends with exit 5 once the copy is past the
// owner's timeout.
int agent_wait(Session& s, Workspace& ws, const std::string& id_or_ticket, std::optional<std::chrono::seconds> within);
int agent_list(Session& s, Workspace& ws, const std::string& status);
// `file`: of a changeset, that one file's diff (not_found when it changes no such file).
int agent_show(Session& s, Workspace& ws, const std::string& id_or_ticket, const std::string& file = {});

}  // namespace kai::cmd
