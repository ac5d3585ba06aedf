#pragma once
// `kaicoder hook HARNESS`: one pre-tool hook call answered, as data. The
// harness's payload is read (lib/harness/tool_call), a write or a command
// becomes a kaicoder proposal through the same calls `kaicoder propose` and
// `kaicoder run` make (lib/gate/propose, lib/gate/runs: the one gate), reads and
// searches are checked (lib/harness/access), and the answer is written in the
// harness's own decision format. cmd/hook only moves bytes.
//
//   HookAnswer a = answer_hook(Harness::claude_code, payload, ws, {cwd, uid});
//   write a.out to stdout, a.err to stderr, exit a.exit_code
//
// It fails closed: bad JSON, a missing field, an unknown tool, a refusal or
// any error becomes a deny in the harness's format, never a silent pass.
// In a process of the agent user (two-user mode, lib/two_user/agent_side) a write or
// a command goes into the spool instead, and the deny names its ticket.

#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "lib/harness/tool_call.hpp"
#include "lib/config/workspace.hpp"

namespace kai::harness {

struct HookAnswer {
  int exit_code = 0;
  std::string out;  // stdout: the harness's decision JSON
  std::string err;  // stderr
  bool allowed = false;
  std::string reason;  // the deny reason, as the agent reads it
  int proposal = 0;    // the proposal staged (or found waiting), 0 when none
};

struct HookEnv {
  std::filesystem::path cwd;  // the hook process's working folder (the harness's project)
  uid_t uid = 0;              // for the caller's own input files (lib/gate/reader)
};

// Answer one hook payload. Never fails: every error is a deny. Stages at
// most one proposal; with [hooks.adapter] wait set, waits that long for its
// decision and reports the outcome.
HookAnswer answer_hook(Harness h, std::string_view payload, Workspace& ws, const HookEnv& env);

// A deny in `h`'s format for a call kaicoder could not even look at (no
// trusted root, a payload it could not read): `payload` is used only to
// pick the format (Cursor's event).
HookAnswer refuse_hook(Harness h, std::string_view payload, const std::string& reason);

}  // namespace kai::harness
