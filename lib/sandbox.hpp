#pragma once
// The write sandbox for `kaicoder run` (SPEC §8 `[run] sandbox`), built on
// Linux Landlock. A run may read and execute anything, but may create,
// change, rename or delete files only beneath the trees it is given (root,
// the system temp folder, configured extras).
//
// The ruleset is built in the parent, where every failure can be reported as
// an Error; the forked child only enforces it right before exec:
//
//   Result<LandlockRuleset> rs = build_write_ruleset(writable);   // parent
//   ... fork ...
//   int err = rs->enforce();                                      // child
//   if (err != 0) { report, _exit(126); }                         // fail closed
//   execve(...);

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

enum class SandboxMode { landlock, none };

// The mode `[run] sandbox` names ("none", else Landlock).
inline SandboxMode sandbox_mode(std::string_view setting) {
  return setting == "none" ? SandboxMode::none : SandboxMode::landlock;
}

// Landlock support of this kernel: ABI version (0 = unavailable) and a reason
// text ("landlock ABI 7", or why it is missing: not built in, disabled at
// boot, blocked by a seccomp filter).
struct LandlockStatus {
  int abi = 0;
  std::string detail;
};
LandlockStatus landlock_status();

// A Landlock ruleset that confines writes, ready to be enforced.
class LandlockRuleset {
public:
  LandlockRuleset() = default;
  LandlockRuleset(LandlockRuleset&& o) noexcept;
  LandlockRuleset& operator=(LandlockRuleset&& o) noexcept;
  LandlockRuleset(const LandlockRuleset&) = delete;
  LandlockRuleset& operator=(const LandlockRuleset&) = delete;
  ~LandlockRuleset();

  // Sets no_new_privs and restricts the calling process and its future
  // children for good. Async-signal-safe (two system calls), so it may run
  // between fork and exec. Returns 0, or the errno of the failed call.
  int enforce() const noexcept;

  int abi() const { return m_abi; }
  // The trees that stayed writable, as given, in order.
  const std::vector<std::filesystem::path>& writable() const { return m_writable; }
  // Given paths that did not exist and so were left out.
  const std::vector<std::filesystem::path>& missing() const { return m_missing; }
  // "landlock ABI 7: writes limited to /r, /tmp" (plus any missing paths).
  std::string note() const;

private:
  friend Result<LandlockRuleset> build_write_ruleset(const std::vector<std::filesystem::path>& writable);
  int m_fd = -1;
  int m_abi = 0;
  std::vector<std::filesystem::path> m_writable;
  std::vector<std::filesystem::path> m_missing;
};

// Build a ruleset that handles every filesystem write right of this kernel's
// ABI and grants them beneath each existing `writable` path (a regular file
// gets the file rights only); /dev/null stays writable so that `>/dev/null`
// works. Reading and executing are not restricted. A writable path that does
// not exist is skipped and listed in missing().
// Errors: denied when Landlock is unavailable (the message says why and that
// `[run] sandbox = "none"` runs unsandboxed), io when a path cannot be opened
// or a rule cannot be added.
Result<LandlockRuleset> build_write_ruleset(const std::vector<std::filesystem::path>& writable);

}  // namespace kai
