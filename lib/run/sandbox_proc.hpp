#pragma once
// The processes between kaicoder and a run's command (lib/run/runner.cpp,
// lib/run/sandbox_ns.cpp): each dies with the one that started it, holds
// nothing another process of the run may read, and takes every process the
// run started with it. Everything here is async-signal-safe: it runs
// between fork and exec.

#include <cstddef>
#include <sys/types.h>

namespace kai {

// Sets this process's parent-death signal to `sig`, then checks that its
// parent is still `parent` (it may have died before the signal was set).
// False when it is gone: the caller ends at once.
bool follow_parent(int sig, pid_t parent) noexcept;

// SIGKILLs every live process below `root` (its children, theirs, ...; a
// zombie is left to its parent), round after round until none is left or
// `rounds` pass; a process whose parent is killed meanwhile is found again
// under `root` when `root` is a child subreaper. Returns how many processes
// were signalled. Reads /proc, so it sees what this process's /proc shows.
size_t kill_descendants(pid_t root, int rounds = 200) noexcept;

// Ends this process the way a child ended (`status` from waitpid): with the
// same exit code, or by the same signal (without a core dump).
[[noreturn]] void end_like(int status) noexcept;

// The landlock level's reaper: called in the forked child that runs the
// command, once it is the leader of its own session. Makes this process a
// child subreaper that is not dumpable, forks the command's process and
// returns in it only (with its parent-death signal set to SIGKILL and every
// signal still blocked; the caller unblocks them). The reaper itself waits:
// when the command's process ends, or when kaicoder (`parent`) dies, it
// SIGKILLs every process the run left behind (orphans come back to it
// wherever they moved, whatever session or group they made), reaps them and
// ends as the command did. A failed step writes "kaicoder: …" to `report_fd`
// and ends with 126.
void become_reaper(pid_t parent, int report_fd) noexcept;

}  // namespace kai
