#pragma once
// Two-user mode in cmd/: the agent user's side of the commands it may run
// (they write the spool and read tickets and the status copies, never the
// store), the owner side's intake before a command, and tickets accepted
// wherever a proposal id is.

#include <chrono>
#include <optional>
#include <string>

#include "cmd/cli.hpp"
#include "lib/agent_user.hpp"
#include "lib/intake.hpp"
#include "lib/spool.hpp"

namespace kai::cmd {

// The workspace of an agent-side process: the root the store lies in, with
// built-in rules (the owner's config is not the agent's to read), for the
// commands the agent may run. denied for any other command.
Result<Workspace> open_agent_workspace(const Env& env, const Clock& clock, const AgentSide& side, const std::string& command);

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

// Agent side of propose and run: write `e` to the spool, print the ticket;
// with `wait`, then wait as agent_wait does.
int submit_to_spool(Session& s, Workspace& ws, SpoolEntry e, const char* command, bool wait);
// The same for a run, after judging it here with the built-in rules: a
// blocked command is refused at once (exit 3) and never spooled; the
// owner's intake judges it again with the owner's.
int submit_run_to_spool(Session& s, Workspace& ws, const RunRequest& req, bool wait);
// The working folder relative to root, for a spool entry; usage when outside.
Result<std::string> cwd_in_root(const Session& s, const Workspace& ws);

// Agent side of wait, list and show: tickets and the status copies only.
int agent_wait(Session& s, Workspace& ws, const std::string& id_or_ticket, std::optional<std::chrono::seconds> within);
int agent_list(Session& s, Workspace& ws, const std::string& status);
int agent_show(Session& s, Workspace& ws, const std::string& id_or_ticket);

// A proposal id, or a ticket resolved to the proposal it became.
Result<int> resolve_id(const Workspace& ws, const std::string& id_or_ticket);

}  // namespace kai::cmd
