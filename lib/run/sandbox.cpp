#include "lib/run/sandbox.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "lib/util/fs.hpp"

// Rights newer than the installed kernel headers: the values are fixed by the
// kernel's ABI, so defining them here lets an older build machine produce a
// binary that still confines everything a newer kernel can.
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
// The Landlock system calls share one number on every architecture.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

namespace kai {
namespace fs = std::filesystem;

namespace {

// The ruleset attribute as of ABI 6; the kernel takes the size it is given,
// so older kernels get the prefix they know (see ruleset_attr_size).
struct RulesetAttr {
  uint64_t handled_access_fs = 0;
  uint64_t handled_access_net = 0;  // ABI >= 4
  uint64_t scoped = 0;              // ABI >= 6
};

size_t ruleset_attr_size(int abi) {
  if (abi >= 6) return sizeof(RulesetAttr);
  if (abi >= 4) return offsetof(RulesetAttr, scoped);
  return offsetof(RulesetAttr, handled_access_net);
}

// Only the rights that change the filesystem are handled; reading, listing
// and executing stay unhandled and so allowed everywhere. IOCTL_DEV (ABI 5)
// is handled and granted only on the devices the owner passes through: no
// ioctl reaches a terminal (TIOCSTI) or any other device.
uint64_t handled_write_rights(int abi) {
  uint64_t r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
               LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
               LANDLOCK_ACCESS_FS_MAKE_SYM;
  // ABI 1 cannot handle REFER (it always refuses cross-folder renames and
  // links instead), and only ABI 3 knows TRUNCATE.
  if (abi >= 2) r |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) r |= LANDLOCK_ACCESS_FS_TRUNCATE;
  return r;
}

// The subset the kernel accepts in a rule on a non-directory.
constexpr uint64_t k_file_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                   LANDLOCK_ACCESS_FS_IOCTL_DEV | LANDLOCK_ACCESS_FS_READ_FILE;

long landlock_version() { return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION); }

// Grant `rights` (narrowed to the file rights for a non-directory) beneath
// `p`. Returns 0, ENOENT when `p` does not exist, or another errno. With
// `follow` false a symlink gets no rule (ELOOP).
int allow_beneath(int ruleset, const fs::path& p, uint64_t rights, bool follow = true) {
  int fd = ::open(p.c_str(), O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return errno;
  struct stat st {};
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (S_ISLNK(st.st_mode)) {
    err = ELOOP;
  } else {
    landlock_path_beneath_attr attr{};
    attr.allowed_access = S_ISDIR(st.st_mode) ? rights : rights & k_file_rights;
    if (S_ISDIR(st.st_mode)) attr.allowed_access &= ~static_cast<uint64_t>(LANDLOCK_ACCESS_FS_IOCTL_DEV);
    attr.parent_fd = fd;
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0) err = errno;
  }
  ::close(fd);
  return err;
}

// Names in /dev of terminals and consoles: a run may neither type into nor
// read from one (the owner's shell reads the same device).
bool terminal_name(std::string_view name) {
  for (std::string_view prefix : {"tty", "pts", "ptmx", "pty", "console", "vcs", "hvc"})
    if (name.starts_with(prefix)) return true;
  return false;
}

// Reading is handled too, and granted everywhere but on the terminals: every
// entry of / but /dev, and every entry of /dev but the terminals (symlinks
// get no rule of their own: a link to a terminal resolves to it, and is
// judged there).
int allow_reading_but_terminals(int ruleset) {
  for (const char* top : {"/", "/dev"}) {
    DIR* d = ::opendir(top);
    if (!d) return errno;
    int err = 0;
    while (dirent* e = ::readdir(d)) {
      std::string_view name = e->d_name;
      if (name == "." || name == ".." || (std::string_view(top) == "/" && name == "dev")) continue;
      if (std::string_view(top) == "/dev" && terminal_name(name)) continue;
      int r = allow_beneath(ruleset, fs::path(top) / name, LANDLOCK_ACCESS_FS_READ_FILE, false);
      if (r != 0 && r != ELOOP && r != ENOENT && r != EACCES) {
        err = r;
        break;
      }
    }
    ::closedir(d);
    if (err != 0) return err;
  }
  return 0;
}

}  // namespace

LandlockStatus landlock_status() {
  long v = landlock_version();
  if (v > 0) return {static_cast<int>(v), fmt::format("landlock ABI {}", v)};
  int err = errno;
  switch (err) {
    case ENOSYS: return {0, "the kernel was built without landlock (ENOSYS)"};
    case EOPNOTSUPP:
      return {0, "landlock is built in but disabled at boot (EOPNOTSUPP); add landlock to the lsm= kernel parameter"};
    case EPERM: return {0, "the landlock system call was refused (EPERM); a seccomp filter may block it"};
    default: return {0, fmt::format("the landlock version query failed: {}", errno_text(err))};
  }
}

LandlockRuleset::LandlockRuleset(LandlockRuleset&& o) noexcept
    : m_fd(std::exchange(o.m_fd, -1)),
      m_abi(o.m_abi),
      m_rights(o.m_rights),
      m_tcp_off(o.m_tcp_off),
      m_unix_off(o.m_unix_off),
      m_terminals_off(o.m_terminals_off),
      m_writable(std::move(o.m_writable)),
      m_missing(std::move(o.m_missing)) {}

LandlockRuleset& LandlockRuleset::operator=(LandlockRuleset&& o) noexcept {
  if (this != &o) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = std::exchange(o.m_fd, -1);
    m_abi = o.m_abi;
    m_rights = o.m_rights;
    m_tcp_off = o.m_tcp_off;
    m_unix_off = o.m_unix_off;
    m_terminals_off = o.m_terminals_off;
    m_writable = std::move(o.m_writable);
    m_missing = std::move(o.m_missing);
  }
  return *this;
}

LandlockRuleset::~LandlockRuleset() {
  if (m_fd >= 0) ::close(m_fd);
}

int LandlockRuleset::enforce() const noexcept {
  // Required for an unprivileged process to restrict itself; it also keeps
  // setuid programs (sudo, su) from gaining privileges inside the run.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_landlock_restrict_self, m_fd, 0) != 0) return errno;
  return install_run_filter(m_unix_off);
}

int LandlockRuleset::allow_in_child(const char* path) const noexcept {
  int fd = ::open(path, O_PATH | O_CLOEXEC | O_DIRECTORY);
  if (fd < 0) return errno;
  landlock_path_beneath_attr attr{};
  attr.allowed_access = m_rights & ~static_cast<uint64_t>(LANDLOCK_ACCESS_FS_IOCTL_DEV);
  attr.parent_fd = fd;
  int err = ::syscall(SYS_landlock_add_rule, m_fd, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0 ? errno : 0;
  ::close(fd);
  return err;
}

// No capability survives into the run, also when kaicoder runs as root:
// securebits first (root gains nothing at exec, and this cannot be undone),
// then the bounding and ambient sets, then the sets themselves. The first
// two need CAP_SETPCAP, which a process in its own user namespace (the
// `full` level) and root have; anyone else has no capability to lose there.
int drop_capabilities() noexcept {
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (::syscall(SYS_capget, &hdr, data) != 0) return errno;
  if (data[0].effective & (1u << CAP_SETPCAP)) {
    if (::prctl(PR_SET_SECUREBITS,
                SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                    SECBIT_KEEP_CAPS_LOCKED,
                0, 0, 0) != 0)
      return errno;
    for (int cap = 0; cap < 64; ++cap)
      if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  data[0] = data[1] = {};
  if (::syscall(SYS_capset, &hdr, data) != 0) return errno;
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno;
}

std::string LandlockRuleset::note() const {
  std::string s = fmt::format("landlock ABI {}: writes limited to ", m_abi);
  if (m_writable.empty()) s += "nothing";
  for (size_t i = 0; i < m_writable.size(); ++i) s += (i ? ", " : "") + m_writable[i].string();
  if (!m_missing.empty()) {
    s += "; not found, so not writable: ";
    for (size_t i = 0; i < m_missing.size(); ++i) s += (i ? ", " : "") + m_missing[i].string();
  }
  if (m_tcp_off) s += "; TCP off";
  if (m_unix_off) s += "; no UNIX sockets";
  if (m_terminals_off) s += "; no terminals";
  return s;
}

std::string_view to_string(SandboxMode m) {
  switch (m) {
    case SandboxMode::full: return "full";
    case SandboxMode::landlock: return "landlock";
    case SandboxMode::none: return "none";
  }
  return "full";
}

Result<LandlockRuleset> build_write_ruleset(const std::vector<fs::path>& writable, const LandlockExtras& extras) {
  LandlockStatus st = landlock_status();
  if (st.abi <= 0) {
    return make_error(Errc::denied, fmt::format("landlock is not available on this kernel ({}); set [run] sandbox = "
                                                "\"none\" to run unsandboxed",
                                                st.detail));
  }
  LandlockRuleset rs;
  rs.m_abi = st.abi;
  uint64_t rights = handled_write_rights(st.abi);
  if (st.abi >= 5) rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  rs.m_rights = rights;
  RulesetAttr attr;
  attr.handled_access_fs = rights | (extras.terminals_unreadable ? LANDLOCK_ACCESS_FS_READ_FILE : 0);
  rs.m_terminals_off = extras.terminals_unreadable;
  if (extras.tcp_off && st.abi >= 4) {
    attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    rs.m_tcp_off = true;
  }
  rs.m_unix_off = extras.unix_sockets_off;
  if (st.abi >= 6) attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
  // The ruleset fd is close-on-exec, so it never reaches the command.
  long fd = ::syscall(SYS_landlock_create_ruleset, &attr, ruleset_attr_size(st.abi), 0);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot create a landlock ruleset: {}", errno_text(errno)));
  rs.m_fd = static_cast<int>(fd);

  for (const fs::path& p : writable) {
    int err = allow_beneath(rs.m_fd, p, rights);
    if (err == ENOENT) {
      rs.m_missing.push_back(p);
    } else if (err != 0) {
      return make_error(Errc::io,
                        fmt::format("cannot make '{}' writable in the sandbox: {}", p.string(), errno_text(err)));
    } else {
      rs.m_writable.push_back(p);
    }
  }
  // Commands routinely discard output with >/dev/null; a system without it
  // is broken anyway, so its absence is not an error.
  if (int err = allow_beneath(rs.m_fd, "/dev/null", rights & ~static_cast<uint64_t>(LANDLOCK_ACCESS_FS_IOCTL_DEV));
      err != 0 && err != ENOENT) {
    return make_error(Errc::io, fmt::format("cannot make '/dev/null' writable in the sandbox: {}", errno_text(err)));
  }
  for (const fs::path& d : extras.devices)
    if (int err = allow_beneath(rs.m_fd, d, rights | LANDLOCK_ACCESS_FS_READ_FILE); err != 0 && err != ENOENT)
      return make_error(Errc::io,
                        fmt::format("cannot pass device '{}' into the sandbox: {}", d.string(), errno_text(err)));
  if (extras.terminals_unreadable)
    if (int err = allow_reading_but_terminals(rs.m_fd); err != 0)
      return make_error(Errc::io, fmt::format("cannot keep the terminals out of the sandbox: {}", errno_text(err)));
  return rs;
}

}  // namespace kai
