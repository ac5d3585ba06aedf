// The `full` sandbox level: new user, mount, network and PID namespaces
// (see NamespacePlan in lib/run/sandbox.hpp). Everything that can fail for a
// reason worth a sentence happens in prepare(), in the parent; the child
// side only replays the prepared operations with system calls, and fails
// closed.

#include "lib/run/sandbox.hpp"

#include <algorithm>
#include <map>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "lib/run/sandbox_proc.hpp"
#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

using Op = NamespacePlan::Op;

constexpr int k_ns_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID;
// The device nodes every run gets.
constexpr const char* k_basic_devices[] = {"null", "zero", "full", "random", "urandom"};

bool under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

// --- the child side: system calls only, no allocation ---

[[noreturn]] void fail(int report_fd, std::string_view what, int err) noexcept {
  const char* reason = ::strerrordesc_np(err);
  if (!reason) reason = "unknown error";
  ssize_t ignored = ::write(report_fd, what.data(), what.size());
  ignored = ::write(report_fd, reason, std::strlen(reason));
  (void)ignored;
  ::_exit(126);
}

bool write_proc(const char* path, const std::string& text) noexcept {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// A read-only remount of a bind mount must keep the flags the kernel locked
// on the mount it came from (nosuid, nodev, noexec, atime), or it is refused.
int remount(const char* target, bool read_only) noexcept {
  struct statvfs sv {};
  if (::statvfs(target, &sv) != 0) return errno;
  unsigned long flags = MS_BIND | MS_REMOUNT | (read_only ? MS_RDONLY : 0);
  if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return ::mount(nullptr, target, nullptr, flags, nullptr) == 0 ? 0 : errno;
}

int apply(const Op& op) noexcept {
  switch (op.kind) {
    case Op::private_root: return ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 ? 0 : errno;
    case Op::tmpfs: return ::mount("tmpfs", op.a.c_str(), "tmpfs", op.flags, op.b.c_str()) == 0 ? 0 : errno;
    case Op::bind: return ::mount(op.a.c_str(), op.b.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0 ? 0 : errno;
    case Op::remount_ro: return remount(op.a.c_str(), true);
    case Op::remount_rw: return remount(op.a.c_str(), false);
    case Op::mkdir: return ::mkdir(op.a.c_str(), 0755) == 0 || errno == EEXIST ? 0 : errno;
    case Op::touch: {
      int fd = ::open(op.a.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, static_cast<mode_t>(op.flags));
      if (fd < 0) return errno;
      ::close(fd);
      return 0;
    }
    case Op::symlink: return ::symlink(op.a.c_str(), op.b.c_str()) == 0 || errno == EEXIST ? 0 : errno;
    case Op::reopen: {
      // A descriptor opened before unshare() names a mount of the old
      // namespace, which cannot be bound here: the same number, opened anew.
      int fd = ::open(op.a.c_str(), O_PATH | O_CLOEXEC);
      if (fd < 0) return errno;
      int err = ::dup3(fd, static_cast<int>(op.flags), O_CLOEXEC) < 0 ? errno : 0;
      ::close(fd);
      return err;
    }
    case Op::proc:
      return ::mount("proc", op.a.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : errno;
    case Op::overlay: return ::mount("overlay", op.a.c_str(), "overlay", op.flags, op.b.c_str()) == 0 ? 0 : errno;
    case Op::attach: {
      // The detached overlay prepare() made, put in place; its descriptor
      // goes with it, before any command runs.
      const int fd = static_cast<int>(op.flags);
      int err = ::move_mount(fd, "", AT_FDCWD, op.a.c_str(), MOVE_MOUNT_F_EMPTY_PATH) == 0 ? 0 : errno;
      ::close(fd);
      return err;
    }
  }
  return EINVAL;
}

int wait_for(pid_t pid, int* status) noexcept {
  pid_t got;
  while ((got = ::waitpid(pid, status, 0)) < 0 && errno == EINTR) {}
  return got;
}

}  // namespace

NamespacePlan::NamespacePlan(NamespacePlan&& o) noexcept
    : m_ops(std::move(o.m_ops)),
      m_fds(std::exchange(o.m_fds, {})),
      m_private(std::move(o.m_private)),
      m_uid_map(std::move(o.m_uid_map)),
      m_gid_map(std::move(o.m_gid_map)),
      m_network(o.m_network),
      m_overlay(o.m_overlay),
      m_redirect(o.m_redirect),
      m_read_only(o.m_read_only),
      m_hidden(o.m_hidden),
      m_direct(o.m_direct) {}

NamespacePlan& NamespacePlan::operator=(NamespacePlan&& o) noexcept {
  if (this != &o) {
    for (int fd : m_fds) ::close(fd);
    m_ops = std::move(o.m_ops);
    m_fds = std::exchange(o.m_fds, {});
    m_private = std::move(o.m_private);
    m_uid_map = std::move(o.m_uid_map);
    m_gid_map = std::move(o.m_gid_map);
    m_network = o.m_network;
    m_overlay = o.m_overlay;
    m_redirect = o.m_redirect;
    m_read_only = o.m_read_only;
    m_hidden = o.m_hidden;
    m_direct = o.m_direct;
  }
  return *this;
}

NamespacePlan::~NamespacePlan() {
  for (int fd : m_fds) ::close(fd);
}

NamespaceStatus namespace_status() {
  static const NamespaceStatus cached = [] {
    // A child tries what a run needs: the namespaces, its own uid map, a
    // private / and a /proc of the new PID namespace (refused in containers
    // that mask parts of /proc).
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return NamespaceStatus{false, "cannot create a pipe: " + errno_text(errno)};
    std::string uid_map = fmt::format("{} {} 1\n", ::geteuid(), ::geteuid());
    std::string gid_map = fmt::format("{} {} 1\n", ::getegid(), ::getegid());
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(p[0]);
      auto step = [&](int ok, char code) {
        if (ok != 0) {
          char msg[2] = {code, static_cast<char>(errno)};
          ssize_t ignored = ::write(p[1], msg, 2);
          (void)ignored;
          ::_exit(1);
        }
      };
      step(::unshare(k_ns_flags | CLONE_NEWNET), 'u');
      step(write_proc("/proc/self/setgroups", "deny") ? 0 : -1, 's');
      step(write_proc("/proc/self/uid_map", uid_map) ? 0 : -1, 'm');
      step(write_proc("/proc/self/gid_map", gid_map) ? 0 : -1, 'g');
      pid_t init = ::fork();
      if (init == 0) {
        step(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 'r');
        step(::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr), 'p');
        ::_exit(0);
      }
      int st = 0;
      if (init < 0 || wait_for(init, &st) < 0) ::_exit(1);
      ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    ::close(p[1]);
    if (pid < 0) {
      ::close(p[0]);
      return NamespaceStatus{false, "cannot fork: " + errno_text(errno)};
    }
    char msg[2] = {0, 0};
    ssize_t got = ::read(p[0], msg, 2);
    ::close(p[0]);
    int st = 0;
    wait_for(pid, &st);
    if (got <= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0)
      return NamespaceStatus{true, "user, mount, network and PID namespaces"};
    std::string err = got == 2 ? errno_text(static_cast<unsigned char>(msg[1])) : "the probe failed";
    switch (msg[0]) {
      case 'u':
        return NamespaceStatus{false, fmt::format("cannot create user namespaces ({}); an AppArmor restriction of "
                                                  "unprivileged user namespaces, a container's seccomp profile or "
                                                  "user.max_user_namespaces = 0 does this",
                                                  err)};
      case 'p':
        return NamespaceStatus{false, fmt::format("cannot mount /proc in a new PID namespace ({}); a container "
                                                  "that masks parts of /proc does this",
                                                  err)};
      default: return NamespaceStatus{false, fmt::format("cannot set up user namespaces ({})", err)};
    }
  }();
  return cached;
}

namespace {

// A path overlayfs's option string cannot carry (its separators).
bool overlay_safe(const fs::path& p) { return p.string().find_first_of(",:\\") == std::string::npos; }

std::string overlay_options(const fs::path& lower, const fs::path& upper, const fs::path& work) {
  return fmt::format("lowerdir={},upperdir={},workdir={},userxattr", lower.string(), upper.string(), work.string());
}

// Runs `body` in a forked child that has entered new user and mount
// namespaces mapping only this user, with / made private. `ok` when every
// step and `body` succeeded; otherwise `err` is the errno of the first that
// failed, or `why` says what else went wrong.
struct ProbeResult {
  bool ok = false;
  int err = 0;
  std::string why;
};
ProbeResult probe_in_user_namespace(const std::function<bool()>& body) {
  const std::string uid_map = fmt::format("{} {} 1\n", ::geteuid(), ::geteuid());
  const std::string gid_map = fmt::format("{} {} 1\n", ::getegid(), ::getegid());
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return {false, 0, "cannot create a pipe: " + errno_text(errno)};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    auto step = [&](bool ok) {
      if (!ok) {
        int err = errno;
        ssize_t ignored = ::write(p[1], &err, sizeof err);
        (void)ignored;
        ::_exit(1);
      }
    };
    step(::unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0);
    step(write_proc("/proc/self/setgroups", "deny"));
    step(write_proc("/proc/self/uid_map", uid_map));
    step(write_proc("/proc/self/gid_map", gid_map));
    step(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0);
    step(body());
    ::_exit(0);
  }
  ::close(p[1]);
  if (pid < 0) {
    ::close(p[0]);
    return {false, 0, "cannot fork: " + errno_text(errno)};
  }
  int err = 0;
  ssize_t got = ::read(p[0], &err, sizeof err);
  ::close(p[0]);
  int st = 0;
  wait_for(pid, &st);
  if (got > 0) return {false, err, ""};
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return {false, 0, "the probe failed"};
  return {true, 0, ""};
}

// An overlay of `lower` with trusted extended attributes and redirect_dir=on,
// made by this process (root, in the first user namespace) and not yet
// attached anywhere: a descriptor (close-on-exec) that move_mount() puts in
// place inside a run's mount namespace, or errno.
Result<int> detached_overlay(const fs::path& lower, const fs::path& upper, const fs::path& work) {
  int fs = ::fsopen("overlay", FSOPEN_CLOEXEC);
  if (fs < 0) return make_error(Errc::io, fmt::format("fsopen: {}", errno_text(errno)));
  Fd ctx(fs);
  auto set = [&](const char* key, const std::string& value) {
    return ::fsconfig(fs, FSCONFIG_SET_STRING, key, value.c_str(), 0) == 0;
  };
  if (!set("lowerdir", lower.string()) || !set("upperdir", upper.string()) || !set("workdir", work.string()) ||
      !set("redirect_dir", "on") || ::fsconfig(fs, FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
    return make_error(Errc::io, fmt::format("overlayfs refused the options: {}", errno_text(errno)));
  int m = ::fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (m < 0) return make_error(Errc::io, fmt::format("fsmount: {}", errno_text(errno)));
  return m;
}

// Whether root's overlay with trusted extended attributes, attached inside a
// user namespace as a run's is, renames a folder of its lower layer and
// records it (trusted.overlay.redirect): empty, or why not.
std::string probe_redirect(const fs::path& dir) {
  const fs::path lower = dir / "redirect", upper = lower / "upper", work = lower / "work";
  std::error_code ec;
  fs::create_directories(lower / "moved", ec);
  fs::create_directories(upper, ec);
  fs::create_directories(work, ec);
  if (ec) return "cannot make a scratch folder: " + ec.message();
  auto m = detached_overlay(lower, upper, work);
  if (!m) return m.error().message;
  Fd mount_fd(*m);
  const std::string from = (lower / "moved").string(), to = (lower / "renamed").string();
  ProbeResult r = probe_in_user_namespace([&] {
    return ::move_mount(mount_fd.get(), "", AT_FDCWD, lower.c_str(), MOVE_MOUNT_F_EMPTY_PATH) == 0 &&
           ::rename(from.c_str(), to.c_str()) == 0;
  });
  if (!r.ok && r.err != 0) return fmt::format("a folder of the lower layer could not be renamed ({})", errno_text(r.err));
  if (!r.ok) return r.why;
  char buf[64];
  if (::lgetxattr((upper / "renamed").c_str(), "trusted.overlay.redirect", buf, sizeof buf) <= 0)
    return "the probe's rename left no redirect";
  return {};
}

}  // namespace

OverlayStatus overlay_status(const fs::path& scratch_parent) {
  static std::map<std::string, OverlayStatus> cached;
  if (auto it = cached.find(scratch_parent.string()); it != cached.end()) return it->second;
  auto probe = [&]() -> OverlayStatus {
    if (!namespace_status().ok) return {false, "no user namespaces"};
    std::error_code ec;
    fs::create_directories(scratch_parent, ec);
    std::string tmpl = (scratch_parent / "overlay-probe-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) return {false, "cannot make a scratch folder: " + errno_text(errno)};
    const fs::path dir = tmpl, lower = dir / "lower", upper = lower / "upper", work = lower / "work";
    struct Cleanup {
      fs::path d;
      ~Cleanup() {
        std::error_code e;
        fs::remove_all(d, e);
      }
    } cleanup{dir};
    fs::create_directories(upper, ec);
    fs::create_directories(work, ec);
    if (ec) return {false, "cannot make a scratch folder: " + ec.message()};
    if (!overlay_safe(dir)) return {false, "the state folder's path holds ',' ':' or '\\'"};
    // Root tries its own overlay first, the one that moves folders: one
    // probe, as for any user, where the kernel allows it.
    if (::geteuid() == 0 && probe_redirect(dir).empty())
      return {true, "an overlay of the root (overlayfs, mounted by root with redirect_dir)", true};
    const std::string opts = overlay_options(lower, upper, work);
    const std::string probe_file = (lower / "probe").string();
    ProbeResult r = probe_in_user_namespace([&] {
      if (::mount("overlay", lower.c_str(), "overlay", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) return false;
      int fd = ::open(probe_file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) return false;
      ::close(fd);
      return true;
    });
    struct stat landed {};
    if (r.ok && ::lstat((upper / "probe").c_str(), &landed) == 0)
      return {true, "an overlay of the root (overlayfs in a user namespace)"};
    if (r.err != 0) return {false, fmt::format("overlayfs cannot be mounted here ({})", errno_text(r.err))};
    return {false, fmt::format("overlayfs cannot be mounted here ({})", r.why.empty() ? "the probe failed" : r.why)};
  };
  OverlayStatus s = probe();
  cached[scratch_parent.string()] = s;
  return s;
}

Result<NamespacePlan> NamespacePlan::prepare(const SandboxLayout& layout) {
  NamespaceStatus ns = namespace_status();
  if (!ns.ok) {
    LandlockStatus ll = landlock_status();
    std::string lower = ll.abi > 0 ? "[run] sandbox = \"landlock\" would work here (the weaker level)"
                                   : "only [run] sandbox = \"none\" would run here (no confinement at all)";
    return make_error(Errc::denied, fmt::format("the full sandbox is not available: {}", ns.detail),
                      fmt::format("{}; only the owner can lower it in kaicoder.toml; `kaicoder doctor` shows what "
                                  "this machine supports",
                                  lower));
  }
  NamespacePlan plan;
  plan.m_network = layout.network;
  plan.m_uid_map = fmt::format("{} {} 1\n", ::geteuid(), ::geteuid());
  plan.m_gid_map = fmt::format("{} {} 1\n", ::getegid(), ::getegid());
  auto& ops = plan.m_ops;
  auto add = [&ops](Op::Kind k, std::string a, std::string b, unsigned long flags, std::string what) {
    ops.push_back(Op{k, std::move(a), std::move(b), flags, fmt::format("kaicoder: the sandbox cannot {}: ", what)});
  };
  // Reserves a descriptor for `p`, which the child opens again in its own
  // mount namespace before anything is covered, and binds from
  // /proc/self/fd (the old /proc, where the child still has its own entry).
  // With an overlay, a source in root is opened again once the overlay is
  // mounted (it binds the overlay); one that must bind the live tree past
  // it (`live`: the [run] direct trees) before.
  std::vector<Op> reopen, reopen_late;
  const fs::path& over = layout.overlay_root;
  auto source = [&plan, &reopen, &reopen_late, &over](const fs::path& p, bool live = false) -> Result<std::string> {
    int fd = ::open(p.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0)
      return make_error(Errc::io, fmt::format("cannot open '{}' for the sandbox: {}", p.string(), errno_text(errno)));
    plan.m_fds.push_back(fd);
    const bool late = !live && !over.empty() && (p == over || under(p, over));
    (late ? reopen_late : reopen)
        .push_back(Op{Op::reopen, p.string(), "", static_cast<unsigned long>(fd),
                      fmt::format("kaicoder: the sandbox cannot open '{}': ", p.string())});
    return fmt::format("/proc/self/fd/{}", fd);
  };
  auto is_dir = [](const fs::path& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  };
  auto exists = [](const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
  };

  add(Op::private_root, "", "", 0, "make the mounts private");

  // A minimal /dev: no terminal, no pts, no disk.
  add(Op::tmpfs, "/dev", "mode=0755,size=64k", MS_NOSUID | MS_NOEXEC, "mount a private /dev");
  std::vector<fs::path> devices;
  for (const char* d : k_basic_devices) devices.push_back(fs::path("/dev") / d);
  devices.insert(devices.end(), layout.devices.begin(), layout.devices.end());
  for (const fs::path& d : devices) {
    if (!exists(d) || !under(d, "/dev")) continue;
    auto src = source(d);
    if (!src) return src.error();
    for (fs::path dir = "/dev"; const auto& part : d.parent_path().lexically_relative("/dev"))
      if (part != ".") add(Op::mkdir, (dir /= part).string(), "", 0, fmt::format("create '{}'", dir.string()));
    add(Op::touch, d.string(), "", 0600, fmt::format("create '{}'", d.string()));
    add(Op::bind, *src, d.string(), 0, fmt::format("pass '{}' through", d.string()));
  }
  add(Op::mkdir, "/dev/shm", "", 0, "create /dev/shm");
  add(Op::tmpfs, "/dev/shm", "mode=1777", MS_NOSUID | MS_NODEV, "mount /dev/shm");
  plan.m_private.push_back("/dev/shm");
  add(Op::symlink, "/proc/self/fd", "/dev/fd", 0, "link /dev/fd");
  add(Op::symlink, "/proc/self/fd/0", "/dev/stdin", 0, "link /dev/stdin");
  add(Op::symlink, "/proc/self/fd/1", "/dev/stdout", 0, "link /dev/stdout");
  add(Op::symlink, "/proc/self/fd/2", "/dev/stderr", 0, "link /dev/stderr");
  const std::string empty_file = "/dev/.kaicoder-empty";  // what hidden files show
  add(Op::touch, empty_file, "", 0444, "create an empty file");

  // The PID namespace's own /proc: no other process, no other environ.
  add(Op::proc, "/proc", "", 0, "mount /proc for the new PID namespace");

  // Scratch and covered trees, outermost first; one inside another is made
  // in the outer one's tmpfs first.
  struct Cover {
    fs::path path;
    bool scratch;
  };
  std::vector<Cover> covers;
  for (const auto& p : layout.scratch)
    if (is_dir(p)) covers.push_back({p, true});
  for (const auto& p : layout.covered)
    if (is_dir(p)) covers.push_back({p, false});
  std::sort(covers.begin(), covers.end(), [](const Cover& x, const Cover& y) { return x.path < y.path; });
  std::vector<fs::path> made;  // covers made so far
  auto cover_of = [&made](const fs::path& p) -> std::optional<fs::path> {
    std::optional<fs::path> best;
    for (const auto& c : made)
      if ((p == c || under(p, c)) && (!best || c.string().size() > best->string().size())) best = c;
    return best;
  };
  // mkdir ops for the folders between cover `c` and `p` (both excluded).
  auto make_parents = [&](const fs::path& c, const fs::path& p) {
    fs::path dir = c;
    fs::path rel = p.parent_path().lexically_relative(c);
    for (const auto& part : rel)
      if (part != "." && !part.empty())
        add(Op::mkdir, (dir /= part).string(), "", 0, fmt::format("create '{}'", dir.string()));
  };
  for (const auto& c : covers) {
    if (auto outer = cover_of(c.path)) {
      if (*outer == c.path) continue;
      make_parents(*outer, c.path);
      add(Op::mkdir, c.path.string(), "", 0, fmt::format("create '{}'", c.path.string()));
    }
    add(Op::tmpfs, c.path.string(), c.scratch ? "mode=1777" : "mode=0755,size=64k", MS_NOSUID | MS_NODEV,
        fmt::format("hide '{}'", c.path.string()));
    if (c.scratch) plan.m_private.push_back(c.path.string());
    made.push_back(c.path);
  }

  // What stays visible under a cover, bound back from the real tree.
  std::vector<std::pair<fs::path, bool>> keeps;  // path, writable
  for (const auto& p : layout.keep_writable) keeps.emplace_back(p, true);
  for (const auto& p : layout.keep_read_only) keeps.emplace_back(p, false);
  std::sort(keeps.begin(), keeps.end());
  for (const auto& [p, writable] : keeps) {
    auto c = cover_of(p);
    if (!c || !exists(p)) continue;
    auto src = source(p);
    if (!src) return src.error();
    if (p != *c) {
      make_parents(*c, p);
      if (is_dir(p))
        add(Op::mkdir, p.string(), "", 0, fmt::format("create '{}'", p.string()));
      else
        add(Op::touch, p.string(), "", 0600, fmt::format("create '{}'", p.string()));
    }
    add(Op::bind, *src, p.string(), 0, fmt::format("keep '{}'", p.string()));
    if (!writable) add(Op::remount_ro, p.string(), "", 0, fmt::format("make '{}' read-only", p.string()));
  }

  // Guarded paths: bound over themselves (and read-only), or hidden.
  for (const auto& p : layout.pinned)
    if (is_dir(p)) add(Op::bind, p.string(), p.string(), 0, fmt::format("pin '{}'", p.string()));
  for (const auto& p : layout.read_only) {
    if (!exists(p)) continue;
    add(Op::bind, p.string(), p.string(), 0, fmt::format("guard '{}'", p.string()));
    add(Op::remount_ro, p.string(), "", 0, fmt::format("make '{}' read-only", p.string()));
    ++plan.m_read_only;
  }
  for (const auto& p : layout.hidden) {
    if (!exists(p)) continue;
    if (is_dir(p)) {
      add(Op::tmpfs, p.string(), "mode=0555,size=4k", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
          fmt::format("hide '{}'", p.string()));
    } else {
      add(Op::bind, empty_file, p.string(), 0, fmt::format("hide '{}'", p.string()));
      add(Op::remount_ro, p.string(), "", 0, fmt::format("hide '{}'", p.string()));
    }
    ++plan.m_hidden;
  }
  // A writable tree inside a guarded one (a hook's scratch folder in
  // .kaicoder/) is made writable again on top.
  for (const auto& p : layout.keep_writable)
    for (const auto& g : layout.read_only)
      if (is_dir(p) && exists(g) && p != g && under(p, g)) {
        add(Op::bind, p.string(), p.string(), 0, fmt::format("keep '{}' writable", p.string()));
        add(Op::remount_rw, p.string(), "", 0, fmt::format("keep '{}' writable", p.string()));
        break;
      }
  // [run] direct: build trees bound from the live tree over the overlay, writable.
  if (!over.empty())
    for (const auto& d : layout.direct) {
      if (!is_dir(d) || !under(d, over)) continue;
      auto src = source(d, true);
      if (!src) return src.error();
      add(Op::bind, *src, d.string(), 0, fmt::format("write '{}' directly", d.string()));
      ++plan.m_direct;
    }
  // Right after private_root: the sources of the live tree, the overlay,
  // then the sources that bind it.
  std::vector<Op> head = std::move(reopen);
  if (!over.empty()) {
    if (!overlay_safe(over) || !overlay_safe(layout.overlay_upper) || !overlay_safe(layout.overlay_work))
      return make_error(Errc::io, "cannot mount the run's overlay: the root's path holds ',' ':' or '\\'");
    if (layout.overlay_redirect) {
      auto m = detached_overlay(over, layout.overlay_upper, layout.overlay_work);
      if (!m) return make_error(Errc::io, fmt::format("cannot mount the run's overlay: {}", m.error().message));
      plan.m_fds.push_back(*m);  // closed by the plan in this process; by attach in the child
      head.push_back(Op{Op::attach, over.string(), "", static_cast<unsigned long>(*m),
                        "kaicoder: the sandbox cannot attach the overlay of the root: "});
      plan.m_redirect = true;
    } else {
      head.push_back(Op{Op::overlay, over.string(),
                        overlay_options(over, layout.overlay_upper, layout.overlay_work),
                        MS_NOSUID | MS_NODEV, "kaicoder: the sandbox cannot mount the overlay of the root: "});
    }
    head.insert(head.end(), reopen_late.begin(), reopen_late.end());
    // The overlay's files are not the ones the ruleset was opened on.
    plan.m_private.push_back(over.string());
    plan.m_overlay = true;
  }
  ops.insert(ops.begin() + 1, head.begin(), head.end());
  return plan;
}

void NamespacePlan::enter(int report_fd, const LandlockRuleset& ruleset) const noexcept {
  // The first process: it stays outside the new PID namespace and waits.
  if (::unshare(k_ns_flags | (m_network ? 0 : CLONE_NEWNET)) != 0)
    fail(report_fd, "kaicoder: the sandbox cannot create its namespaces: ", errno);
  if (!write_proc("/proc/self/setgroups", "deny"))
    fail(report_fd, "kaicoder: the sandbox cannot deny setgroups: ", errno);
  if (!write_proc("/proc/self/uid_map", m_uid_map))
    fail(report_fd, "kaicoder: the sandbox cannot map its user: ", errno);
  if (!write_proc("/proc/self/gid_map", m_gid_map))
    fail(report_fd, "kaicoder: the sandbox cannot map its group: ", errno);
  // A fork of kaicoder holds kaicoder's memory (the owner's key among it)
  // and its environment: no process without CAP_SYS_PTRACE may read a
  // process that is not dumpable (/proc/<pid>/mem, environ, maps, ptrace,
  // process_vm_readv), and no run has a capability. Not before the maps
  // above: /proc/self of a process that is not dumpable belongs to root.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    fail(report_fd, "kaicoder: the sandbox cannot hide its memory: ", errno);
  int status_pipe[2], life_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0 || ::pipe2(life_pipe, O_CLOEXEC) != 0)
    fail(report_fd, "kaicoder: the sandbox cannot create a pipe: ", errno);
  // Only SIGKILL ends this process early: a SIGTERM for the run's group
  // reaches the run's process, and this one then ends as it did.
  sigset_t all;
  ::sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);
  pid_t init = ::fork();
  if (init < 0) fail(report_fd, "kaicoder: the sandbox cannot start its init: ", errno);
  if (init > 0) {
    ::close(status_pipe[1]);
    ::close(life_pipe[0]);  // its write end closes when this process dies: init sees that
    ::close(report_fd);
    int st = 0;
    wait_for(init, &st);
    int run_status = 0;
    if (::read(status_pipe[0], &run_status, sizeof run_status) == static_cast<ssize_t>(sizeof run_status))
      end_like(run_status);
    end_like(st);
  }

  // Init, PID 1 of the new namespace. When the first process dies (with
  // kaicoder, or SIGKILL at the end of a timeout), so does init, and with
  // it the namespace. Its parent lies outside the namespace (getppid() is
  // 0 here), so whether the first process died before the signal was set
  // is read from the pipe whose only writer it is.
  ::close(status_pipe[0]);
  ::close(life_pipe[1]);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  pollfd life{life_pipe[0], POLLIN, 0};
  if (::poll(&life, 1, 0) != 0) ::_exit(126);  // the first process is gone
  ::close(life_pipe[0]);
  for (const Op& op : m_ops)
    if (int err = apply(op); err != 0) fail(report_fd, op.what, err);
  if (::chdir("/") != 0) fail(report_fd, "kaicoder: the sandbox cannot enter '/': ", errno);
  for (const std::string& p : m_private)
    if (int err = ruleset.allow_in_child(p.c_str()); err != 0)
      fail(report_fd, "kaicoder: the sandbox cannot make a private folder writable: ", err);
  if (int err = ruleset.enforce(); err != 0)
    fail(report_fd, "kaicoder: cannot enforce the sandbox (landlock, seccomp): ", err);
  if (int err = drop_capabilities(); err != 0) fail(report_fd, "kaicoder: the sandbox cannot drop capabilities: ", err);
  // Not dumpable either (it is a fork of kaicoder too), before the run's
  // process exists; that process becomes dumpable again when it execs.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
    fail(report_fd, "kaicoder: the sandbox cannot hide its memory: ", errno);
  pid_t run = ::fork();
  if (run < 0) fail(report_fd, "kaicoder: the sandbox cannot start the command: ", errno);
  if (run == 0) {
    ::close(status_pipe[1]);
    return;  // the run's process: the caller execs the command
  }
  ::close(report_fd);
  // Reap whatever the run leaves; end with the run's own process.
  while (true) {
    int st = 0;
    pid_t got = ::waitpid(-1, &st, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == run || got < 0) {
      ssize_t ignored = ::write(status_pipe[1], &st, sizeof st);
      (void)ignored;
      ::_exit(0);
    }
  }
}

std::string NamespacePlan::note() const {
  return fmt::format("namespaces: user, mount, pid{} ({}); {}{} guarded path(s) read-only, {} hidden",
                     m_network ? "" : ", net", m_network ? "network on" : "network off",
                     m_overlay ? fmt::format("an overlay of root{} ({} tree(s) written directly); ",
                                             m_redirect ? " that moves folders" : "", m_direct)
                               : "",
                     m_read_only, m_hidden);
}

}  // namespace kai
