#pragma once
// Shell runs (SPEC §2 `run`, §5): classify without running anything, refuse
// and log what is blocked, stage the rest as a `run` proposal, and execute an
// approved one exactly once — without holding the store lock while it runs.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/store/changelog.hpp"
#include "lib/store/proposal.hpp"
#include "lib/gate/propose.hpp"
#include "lib/result.hpp"
#include "lib/run/runner.hpp"
#include "lib/shell/shell.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

struct RunRequest {
  std::vector<std::string> argv;  // argv form, or
  std::string shell;              // --shell form
  std::string cwd;                // relative to the caller's working folder; default: there
  long timeout = 0;               // seconds; 0 = [run] timeout
  bool network = false;           // --network: this run gets the host's network (confirm tier)
  std::string why, agent;
  long proposer_uid = -1;  // the spool entry's owner (lib/two_user/intake); -1: the owner's own process
};

struct RunOutcome {
  RunResult result;
  Entry entry;
};

struct StagedRun {
  Proposal proposal;  // id 0 on a dry run or when blocked
  Classification classification;
  RunVerdict verdict = RunVerdict::ask;  // allow only when the policy allowed it
  std::optional<RunOutcome> ran;         // set when the policy allowed it and it ran
  bool existing = false;                 // a retry: `proposal` is the pending one it repeats, nothing new was staged
};

// The classification context for `ws`, with write targets checked against
// root confinement and the never-write list relative to `cwd_rel`.
ShellContext shell_context(const Workspace& ws, const std::string& cwd_rel);

// usage: malformed request; denied: cwd outside root, policy deny. A blocked
// command is not an error here: verdict is "blocked", nothing is staged and
// (unless a dry run) a `blocked` entry is logged; the caller exits 3.
Result<StagedRun> propose_run(Workspace& ws, const RunRequest& req, const std::filesystem::path& cwd, DryRun dry,
                              const std::function<void(std::string_view, int)>& on_output);

// Execute approved run proposal `id` once. Takes the lock to claim it and to
// record the outcome, not while the command runs. conflict when it is not
// approved, was changed since approval, or already started.
Result<RunOutcome> execute_run(Workspace& ws, int id, const std::string& approver,
                               const std::function<void(std::string_view, int)>& on_output);

// What a finished run printed (captured, capped, redacted); empty when none.
struct CapturedOutput {
  std::string out, err;
};
CapturedOutput run_output(const Workspace& ws, int id);

// The reason a --network run is confirm tier.
extern const std::string_view k_network_reason;

}  // namespace kai
