#pragma once
// The sandbox of runs, checks and hooks (SPEC §8 `[run] sandbox`), in three
// levels:
//   full      new user, mount, network and PID namespaces built from a
//             SandboxLayout (lib/run/sandbox_ns.cpp), with Landlock stacked on
//             top and no capabilities;
//   landlock  Landlock alone: writes confined to the given trees, TCP off
//             unless the network is on, abstract sockets and signals scoped;
//   none      nothing (only the owner sets it).
//
// Landlock (this file): a run may read and execute anything, but may create,
// change, rename or delete files only beneath the trees it is given (root,
// the temp folder, configured extras).
//
// The ruleset is built in the parent, where every failure can be reported as
// an Error; the forked child only enforces it right before exec:
//
//   Result<LandlockRuleset> rs = build_write_ruleset(writable);   // parent
//   ... fork ...
//   int err = rs->enforce();                                      // child
//   if (err != 0) { report, _exit(126); }                         // fail closed
//   execve(...);

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

enum class SandboxMode { full, landlock, none };

// The mode `[run] sandbox` names ("none", "landlock", else full).
inline SandboxMode sandbox_mode(std::string_view setting) {
  return setting == "none" ? SandboxMode::none : setting == "landlock" ? SandboxMode::landlock : SandboxMode::full;
}
std::string_view to_string(SandboxMode m);

// Landlock support of this kernel: ABI version (0 = unavailable) and a reason
// text ("landlock ABI 7", or why it is missing: not built in, disabled at
// boot, blocked by a seccomp filter).
struct LandlockStatus {
  int abi = 0;
  std::string detail;
};
LandlockStatus landlock_status();

// Installs the seccomp filter of every sandboxed process (lib/run/sandbox_links.cpp
// says why each rule): link() and linkat() fail with EXDEV; io_uring_setup()
// and openat2() with ENOSYS; chmod, fchmod, fchmodat, fchmodat2, mknod and
// mknodat with a set-user-ID or set-group-ID bit in the mode, and open,
// openat and creat that create a file with one, with EPERM; with
// `unix_sockets_off` (the landlock level) also socket(AF_UNIX). Needs
// no_new_privs set. Async-signal-safe; 0 or an errno.
int install_run_filter(bool unix_sockets_off) noexcept;
// Whether this kernel takes that filter: install_run_filter() in a child
// process. 0, or the errno that stops every sandboxed run here.
int probe_run_filter();

// Drops every capability for good, also when the caller is root: with
// CAP_SETPCAP the securebits that keep root from gaining any at exec
// (locked) and the bounding set; always the ambient, inheritable, permitted
// and effective sets; then no_new_privs. A process without CAP_SETPCAP keeps
// the bounding set it has, which no_new_privs makes unreachable. Async-
// signal-safe; 0 or an errno.
int drop_capabilities() noexcept;

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
  // children for good: the ruleset, then install_run_filter(). Async-signal-
  // safe (three system calls), so it may run between fork and exec. Returns
  // 0, or the errno of the failed call.
  int enforce() const noexcept;
  // Also grants the write rights beneath `path`, opened now: for trees that
  // only exist inside the run's namespaces (its private /tmp). Async-signal-
  // safe; called before enforce(). Returns 0 or an errno.
  int allow_in_child(const char* path) const noexcept;

  int abi() const { return m_abi; }
  // The trees that stayed writable, as given, in order.
  const std::vector<std::filesystem::path>& writable() const { return m_writable; }
  // Given paths that did not exist and so were left out.
  const std::vector<std::filesystem::path>& missing() const { return m_missing; }
  // "landlock ABI 7: writes limited to /r, /tmp" (plus any missing paths,
  // and "; TCP off" when TCP is handled).
  std::string note() const;

private:
  friend Result<LandlockRuleset> build_write_ruleset(const std::vector<std::filesystem::path>& writable,
                                                     const struct LandlockExtras& extras);
  int m_fd = -1;
  int m_abi = 0;
  uint64_t m_rights = 0;
  bool m_tcp_off = false;
  bool m_unix_off = false;
  bool m_terminals_off = false;
  std::vector<std::filesystem::path> m_writable;
  std::vector<std::filesystem::path> m_missing;
};

// What the ruleset handles besides filesystem writes.
struct LandlockExtras {
  bool tcp_off = false;  // ABI >= 4: no TCP bind or connect at all
  // No UNIX socket of the run's own (the seccomp filter; the landlock level,
  // where pathname sockets outside the run stay reachable otherwise).
  bool unix_sockets_off = false;
  // Reading handled too: granted on everything but /dev's terminals and
  // consoles, which a run can then neither read nor write (the landlock
  // level, which shares the system's /dev).
  bool terminals_unreadable = false;
  // ABI >= 5 handles device ioctls (no terminal ioctl such as TIOCSTI); these
  // device nodes keep them, and stay writable ([run] devices).
  std::vector<std::filesystem::path> devices;
};

// Build a ruleset that handles every filesystem write right of this kernel's
// ABI, plus device ioctls (ABI >= 5) and the scoping of abstract UNIX sockets
// and signals (ABI >= 6: the run can reach neither outside its own domain),
// and grants the writes beneath each existing `writable` path (a regular file
// gets the file rights only); /dev/null stays writable so that `>/dev/null`
// works. Reading and executing are not restricted. A writable path that does
// not exist is skipped and listed in missing().
// Errors: denied when Landlock is unavailable (the message says why and that
// `[run] sandbox = "none"` runs unsandboxed), io when a path cannot be opened
// or a rule cannot be added.
Result<LandlockRuleset> build_write_ruleset(const std::vector<std::filesystem::path>& writable,
                                            const LandlockExtras& extras = {});

// --- the full level: namespaces (lib/run/sandbox_ns.cpp) ---

// Whether this kernel lets this process create user, mount, network and PID
// namespaces and mount a /proc in them: `ok`, or why not (AppArmor's
// restriction of unprivileged user namespaces, a container's seccomp
// profile, max_user_namespaces = 0). Probed once per process by a child.
struct NamespaceStatus {
  bool ok = false;
  std::string detail;
};
NamespaceStatus namespace_status();

// The file system a `full` run sees. Every path is absolute; paths that do
// not exist are skipped.
struct SandboxLayout {
  // Bound read-only over themselves: the guarded paths in root.
  std::vector<std::filesystem::path> read_only;
  // Bound over themselves writable: a mount point cannot be renamed or
  // removed, so a run cannot swap `.git` for a folder of its own.
  std::vector<std::filesystem::path> pinned;
  // An empty read-only file or folder is put over each: never-read secrets.
  std::vector<std::filesystem::path> hidden;
  // Replaced by a fresh, empty, private tmpfs the run may write (its /tmp,
  // /var/tmp, and the owner's home, whose writes vanish with the run).
  std::vector<std::filesystem::path> scratch;
  // Replaced by an empty folder the run cannot write (/run, the owner's
  // kaicoder folder when it lies outside home).
  std::vector<std::filesystem::path> covered;
  // Paths under a scratch or covered tree that stay visible, bound back from
  // the real file system: writable (root, [run] writable) or read-only
  // (toolchains in home, [run] readable).
  std::vector<std::filesystem::path> keep_writable, keep_read_only;
  // /dev holds null, zero, full, random, urandom, these, and nothing else.
  std::vector<std::filesystem::path> devices;
  bool network = false;  // share the host's network instead of an empty one
  // An overlay mounted over `overlay_root` before anything else (a run's
  // effects, lib/run/effects.hpp): the live tree is its lower layer, and
  // what the run writes lands in `overlay_upper` (with `overlay_work`, both
  // on the root's file system). Empty: no overlay. Everything below binds
  // the overlay, not the live tree, where it names a path in root.
  std::filesystem::path overlay_root, overlay_upper, overlay_work;
  // Mount it with trusted extended attributes and redirect_dir=on: made by
  // this process (root, in the first user namespace) as a detached mount in
  // prepare(), attached in the run's mount namespace. A folder of the lower
  // layer can then be renamed; the upper folder records the move in
  // trusted.overlay.redirect, which settle_redirects (lib/run/effects.hpp)
  // resolves before the effects are read. Only where OverlayStatus::redirect.
  bool overlay_redirect = false;
  // Folders in root bound from the live tree past the overlay, writable
  // ([run] direct: build trees whose outputs never go through it).
  std::vector<std::filesystem::path> direct;
};

// Whether this kernel lets this process mount an overlay in a user
// namespace, with its upper folder inside its lower one as a run's is:
// `ok`, or why not (an old kernel, ENODEV, EPERM, ELOOP). Probed once per
// process by a child, in a scratch folder made under `scratch_parent` (on
// the file system the runs' upper folders live on), removed again. Root
// probes its own overlay (`redirect`) first, and the user-namespace one
// only where that fails: one probe either way where the kernel allows it.
struct OverlayStatus {
  bool ok = false;
  std::string detail;
  // Root only: an overlay mounted by this process with trusted extended
  // attributes and redirect_dir=on, attached in a user namespace, renames a
  // folder of its lower layer (SandboxLayout::overlay_redirect).
  bool redirect = false;
};
OverlayStatus overlay_status(const std::filesystem::path& scratch_parent);

}  // namespace kai

namespace kai {

// A SandboxLayout turned into the exact mounts to make, with every source
// opened and every string built, so that the forked child only makes system
// calls:
//
//   Result<NamespacePlan> ns = NamespacePlan::prepare(layout);   // parent
//   ... fork; setsid ...
//   ns->enter(report_fd, ruleset);   // child: returns only in the run's process
//   execve(...);
class NamespacePlan {
public:
  NamespacePlan() = default;
  NamespacePlan(NamespacePlan&&) noexcept;
  NamespacePlan& operator=(NamespacePlan&&) noexcept;
  NamespacePlan(const NamespacePlan&) = delete;
  NamespacePlan& operator=(const NamespacePlan&) = delete;
  ~NamespacePlan();

  // Errors: denied when this kernel cannot make the namespaces (the message
  // names the level that would work), io when a source cannot be opened.
  static Result<NamespacePlan> prepare(const SandboxLayout& layout);

  // Child side, in a forked child that already left the caller's session.
  // Creates the namespaces and forks their init (PID 1), which makes the
  // mounts, adds its private trees to `ruleset`, enforces it, drops every
  // capability (bounding set included; no_new_privs), and forks the run's
  // process: the only one in which this call returns. The first process
  // waits for init and ends as the run's process ended; when the run's
  // process ends, init ends, and the kernel kills every process left in the
  // namespace. A failed step writes "kaicoder: …" to `report_fd` and ends
  // with 126: nothing runs unconfined.
  void enter(int report_fd, const LandlockRuleset& ruleset) const noexcept;

  // "namespaces: user, mount, pid, net (network off); an overlay of root (0 tree(s) written directly); 12 guarded
  // paths read-only, 2 hidden"; root's overlay is "an overlay of root that moves folders"
  std::string note() const;

  struct Op {
    enum Kind { private_root, reopen, tmpfs, bind, remount_ro, remount_rw, mkdir, touch, symlink, proc, overlay, attach } kind;
    std::string a, b;  // target; or source and target
    unsigned long flags = 0;  // mount flags; the descriptor of reopen and attach
    std::string what;  // "kaicoder: the sandbox cannot hide '/x': " for the report
  };

private:
  std::vector<Op> m_ops;
  std::vector<int> m_fds;              // sources, opened O_PATH; closed with the plan
  std::vector<std::string> m_private;  // trees the run may write inside its namespaces
  std::string m_uid_map, m_gid_map;
  bool m_network = false;
  bool m_overlay = false;
  bool m_redirect = false;  // the overlay is root's, with redirect_dir (folders of the tree can be renamed)
  size_t m_read_only = 0, m_hidden = 0, m_direct = 0;
};

}  // namespace kai
