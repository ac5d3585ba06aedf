#pragma once
// Executing an approved `run` proposal (SPEC §5, §8 `[run]`): spawn, limits,
// capture, sandbox. Deciding whether a command may run at all is not done
// here; by the time run_command is called, a person (or an allow rule) has
// approved exactly this command and the caller has checked that cwd lies
// inside root.
//
// The command runs once, as the leader of a new session and process group,
// with stdin from /dev/null and no controlling terminal, so it can neither
// read the approver's terminal nor outlive its run: on timeout the whole
// group gets SIGTERM and, after a grace of 2 s, SIGKILL; when the command
// itself exits, whatever it left running in its group is killed too.
// At the `full` sandbox level the command is also the only child of the init
// of its own PID namespace: when it ends, every process it started ends too,
// whatever group or session it moved to. At the other levels a process that
// moves itself into another process group or session escapes the cleanup.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"
#include "lib/run/sandbox.hpp"

namespace kai {

struct RunSpec {
  std::vector<std::string> argv;                // argv form: exec directly, no shell
  std::string shell;                            // or: run with /bin/sh -c shell (exactly one of argv/shell)
  std::filesystem::path cwd;                    // must exist (the caller already checked it is inside root)
  std::vector<std::string> env;                 // full environment "K=V" for the child; its PATH finds argv[0]
  std::filesystem::path stdin_path;             // the child's stdin; empty = /dev/null
  std::chrono::milliseconds timeout{600'000};   // then the whole process group gets SIGTERM ...
  std::chrono::milliseconds kill_grace{2'000};  // ... and SIGKILL this much later
  size_t max_output = 65536;                    // bytes kept per stream: head and tail halves, a marker line between
  // The child's (and its children's) writable private memory, RLIMIT_DATA:
  // past it an allocation fails (git: "Out of memory, malloc failed").
  // 0 = no limit of kaicoder's. Read-only mappings (git's packs) do not count.
  size_t heap_limit = 0;
  SandboxMode sandbox = SandboxMode::full;
  // With full or landlock: the only trees the command may write (with full,
  // also its private /tmp and home).
  std::vector<std::filesystem::path> writable;
  // With full: what the command sees (lib/run/sandbox.hpp). layout.network and
  // layout.devices also count with landlock (TCP off, device ioctls).
  SandboxLayout layout;
  // Raw chunks as they arrive, for the approver's terminal (1 = stdout,
  // 2 = stderr). Not redacted: the approver may see what the command prints.
  std::function<void(std::string_view chunk, int stream)> on_output;
  // Applied to the captured output before it is returned (and so stored and
  // shown to the proposer). Each kept half is redacted on its own.
  std::function<std::string(std::string_view)> redact;
};

struct RunResult {
  int exit_code = -1;  // the command's own code; 128+signal when killed by a signal
  bool timed_out = false;
  int signal = 0;                       // the signal that ended it, 0 when it exited
  std::string out, err;                 // captured, capped, redacted
  size_t out_bytes = 0, err_bytes = 0;  // total produced
  bool out_cut = false, err_cut = false;
  std::string sandbox_note;  // what confined the run, or why nothing did
  // Filled by the caller (lib/run/confine check_guards): what the run did to
  // guarded paths and what was undone; empty when it touched none.
  std::vector<std::string> guards;
  std::chrono::milliseconds elapsed{0};
};

// Run the command and wait for it. A command that cannot be started (no such
// program, not executable, cwd vanished in between) is not an error: it ends
// with 127 or 126 and a "kaicoder: cannot run …" line in err, as in a shell.
// When the output of a stream exceeds max_output, the first and last halves
// are kept (cut at line boundaries where a line ends near the cut) with a
// line "[… N bytes cut …]" between them.
// Errors: usage when not exactly one of argv and shell is given; conflict
// when cwd is not a folder; denied when this kernel lacks what the sandbox
// level needs (the message names the level that would work); io when pipes,
// fork or the sandbox set-up fail (in the child too: nothing then ran), or a
// callback throws.
// Disk effects: whatever the command does.
Result<RunResult> run_command(const RunSpec& spec);

// `env` with NAME set to `value` (any earlier NAME= entries removed).
std::vector<std::string> with_env(std::vector<std::string> env, std::string_view name, std::string_view value);

// The marker put between the kept halves of a cut stream.
std::string cut_marker(size_t cut_bytes);

}  // namespace kai
