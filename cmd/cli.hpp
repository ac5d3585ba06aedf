#pragma once
// What every subcommand shares: the session (environment, workspace, output
// mode), the exit codes of SPEC §3, and the one way errors are reported.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cmd/output.hpp"
#include "cmd/progress.hpp"
#include "lib/two_user/agent_user.hpp"
#include "lib/two_user/intake.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/util/time.hpp"
#include "lib/config/workspace.hpp"

namespace kai::cmd {

constexpr int k_exit_ok = 0;
constexpr int k_exit_error = 1;
constexpr int k_exit_usage = 2;

int exit_code(Errc c);

// Exit code a --wait-ing proposer reports for a decided proposal: 0 when
// applied or approved, 4 rejected, 5 timeout, a run's own exit code, the
// code a failure was recorded with.
int outcome_exit_code(const Proposal& p);

struct Options {
  std::string root, config, color = "auto";
  std::string command;  // the subcommand, named in every --json envelope
  std::vector<std::string> argv;  // the command line as the program got it
  bool json = false, no_color = false;
};

class Session {
public:
  Session(Env env, Options opts);
  // Opens the workspace on first use. Errors are reported by the caller.
  Result<Workspace*> workspace();
  const Env& env() const { return m_env; }
  const Clock& clock() const { return m_clock; }
  bool json() const { return m_opts.json; }
  const std::string& command() const { return m_opts.command; }
  const std::vector<std::string>& argv() const { return m_opts.argv; }
  bool color() const { return m_color; }
  const std::string& user() const { return m_env.user; }
  // After the command: send queued [hooks] notify events (no lock is held now).
  void finish();
  // Two-user mode, the agent user's side (lib/two_user/agent_user find_agent_side):
  // the store belongs to another uid and has a spool. workspace() then opens
  // the root with built-in rules for the commands the agent may use
  // (propose, run, wait, list, show, read, ls, log, mcp, hook) and refuses
  // the others; propose, run and the writes of mcp and hook go to the spool
  // instead of the store (lib/two_user/agent_side).
  const std::optional<AgentSide>& agent_side() const { return m_agent; }
  // What the owner-side workspace() took in from the spool before the command.
  const IntakeReport& taken_in() const { return m_taken_in; }

private:
  Env m_env;
  Options m_opts;
  Clock m_clock;
  Redactor m_env_redactor;
  bool m_color = false;
  ProgressLine m_progress;  // declared before m_ws, so it outlives the callback it hands out
  std::optional<Workspace> m_ws;
  std::optional<AgentSide> m_agent;
  IntakeReport m_taken_in;
};

using RunFn = std::function<int(Session&)>;
using SetupFn = RunFn (*)(CLI::App&);

// Print `e` (stderr, or as JSON on stdout with --json) and return its exit code.
int report(Session& s, const Error& e);
// The --json envelope (SPEC §2): `j` with "ok" (rc is 0) and "command" set,
// and for a failure an "error" object (`e`, or one made from rc when `j`
// has none), printed as one object on stdout. Returns rc.
int emit(Session& s, nlohmann::json j, int rc = 0, const std::optional<Error>& e = std::nullopt);
// The error object of a run that ran and exited with `rc` (kind "exit").
nlohmann::json exit_error(int rc);
// The envelope of a failure before any command ran (a usage error).
nlohmann::json failure_envelope(const std::string& command, const Error& e);
// One JSON object on stdout, as it is.
void print_json(nlohmann::json j);

// An option check: a whole number from `lo` to `hi` written in digits (no
// sign, no overflow), else a usage error that says so.
CLI::Validator whole_number(long lo, long hi);

// Subcommand setups, one per cmd/<verb>.cpp.
RunFn setup_init(CLI::App& sub);
RunFn setup_trust(CLI::App& sub);
RunFn setup_propose(CLI::App& sub);
RunFn setup_list(CLI::App& sub);
RunFn setup_show(CLI::App& sub);
RunFn setup_approve(CLI::App& sub);
RunFn setup_reject(CLI::App& sub);
RunFn setup_apply(CLI::App& sub);
RunFn setup_log(CLI::App& sub);
RunFn setup_rollback(CLI::App& sub);
RunFn setup_read(CLI::App& sub);
RunFn setup_ls(CLI::App& sub);
RunFn setup_doctor(CLI::App& sub);
RunFn setup_serve(CLI::App& sub);
RunFn setup_run(CLI::App& sub);
RunFn setup_verify(CLI::App& sub);
RunFn setup_certify(CLI::App& sub);
RunFn setup_publish(CLI::App& sub);
RunFn setup_fetch(CLI::App& sub);
RunFn setup_wait(CLI::App& sub);
RunFn setup_hook(CLI::App& sub);
RunFn setup_integrate(CLI::App& sub);
RunFn setup_mcp(CLI::App& sub);
RunFn setup_intake(CLI::App& sub);
RunFn setup_agent_user(CLI::App& sub);

}  // namespace kai::cmd
