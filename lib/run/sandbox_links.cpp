// The seccomp filter every sandboxed process runs under (sandbox "full" and
// "landlock"), for what Landlock cannot say:
//
// - No new hard links. A second name for a file in another folder is the one
//   way to write a file without an event in its own folder, which the
//   per-folder watch of a run's snapshots relies on (lib/run/snapshot_watch.hpp).
//   link() and linkat() fail with EXDEV, as Landlock refuses a link across
//   its rules, so tools fall back to copying or renaming (git, cargo, rustc,
//   pnpm do); io_uring, whose own LINKAT and OPENAT no filter sees, is not
//   there (ENOSYS).
// - No set-user-ID or set-group-ID bit, ever: chmod, fchmod, fchmodat and
//   fchmodat2 with a mode that holds 06000, open, openat and creat that
//   create a file (O_CREAT, O_TMPFILE) with such a mode, and mknod and
//   mknodat with one fail with EPERM. openat2(), whose mode lies behind a
//   pointer no filter can read, answers ENOSYS, and libc falls back to
//   openat(), which the filter judges. (File capabilities need CAP_SETFCAP,
//   which no run holds: drop_capabilities.)
// - At the `landlock` level only, no UNIX socket of its own: socket(AF_UNIX)
//   fails with EPERM, so a run cannot connect to a pathname socket outside it
//   (a tmux or screen server, an ssh agent, a desktop bus), which Landlock
//   cannot refuse; socketpair() stays. The `full` level hides those sockets
//   behind its mounts instead.

#include "lib/run/sandbox.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kai {
namespace {

// What a rule does with a call of its number.
enum class Judge : uint8_t {
  refuse,       // always: return `ret`
  set_id_mode,  // EPERM when argument `mode` holds 06000
  creates,      // EPERM when argument `flags` creates a file and argument `mode` holds 06000
  unix_socket,  // EPERM when argument 0 is AF_UNIX (only with the landlock level's rules)
  socketcall,   // EPERM: i386's multiplexer, whose arguments lie behind a pointer (landlock level only)
};

struct Rule {
  uint32_t nr;
  Judge judge;
  uint32_t ret = 0;  // for refuse
  uint8_t mode = 0, flags = 0;
};

constexpr uint32_t errno_ret(int err) { return SECCOMP_RET_ERRNO | (static_cast<uint32_t>(err) & SECCOMP_RET_DATA); }
constexpr uint32_t k_exdev = errno_ret(EXDEV), k_enosys = errno_ret(ENOSYS), k_eperm = errno_ret(EPERM);
constexpr uint32_t k_set_id = 06000;
// O_CREAT and __O_TMPFILE, the same on every architecture below.
constexpr uint32_t k_creating = 0100 | 020000000;
// The same number on every architecture.
constexpr uint32_t k_io_uring_setup = 425, k_openat2 = 437, k_fchmodat2 = 452;

constexpr Rule refuse(uint32_t nr, uint32_t ret) { return {nr, Judge::refuse, ret}; }
constexpr Rule mode_at(uint32_t nr, uint8_t mode) { return {nr, Judge::set_id_mode, 0, mode, 0}; }
constexpr Rule create_at(uint32_t nr, uint8_t flags, uint8_t mode) { return {nr, Judge::creates, 0, mode, flags}; }
constexpr Rule unix_socket(uint32_t nr) { return {nr, Judge::unix_socket}; }

// Each system call ABI the kernel of this build's architecture runs
// programs in, with its numbers. A process of any other is killed at its
// first system call.
#if defined(__x86_64__)
// x32 programs use the same numbers with this bit set; the filter clears it
// before it compares, so both ABIs are judged by one table.
constexpr uint32_t k_native_mask = ~0x40000000u;  // __X32_SYSCALL_BIT
constexpr uint32_t k_native_arch = AUDIT_ARCH_X86_64;
constexpr Rule k_native[] = {
    refuse(86, k_exdev),  refuse(265, k_exdev),  refuse(k_io_uring_setup, k_enosys), refuse(k_openat2, k_enosys),
    mode_at(90, 1),       mode_at(91, 1),        mode_at(268, 2),                     mode_at(k_fchmodat2, 2),
    create_at(2, 1, 2),   create_at(257, 2, 3),  mode_at(85, 1),                      mode_at(133, 1),
    mode_at(259, 2),      unix_socket(41)};
constexpr uint32_t k_compat_arch = AUDIT_ARCH_I386;
// i386 programs may reach sockets through socketcall(), whose arguments lie
// behind a pointer: at the landlock level it is refused as a whole.
constexpr Rule k_compat[] = {
    refuse(9, k_exdev),  refuse(303, k_exdev),  refuse(k_io_uring_setup, k_enosys), refuse(k_openat2, k_enosys),
    mode_at(15, 1),      mode_at(94, 1),        mode_at(306, 2),                     mode_at(k_fchmodat2, 2),
    create_at(5, 1, 2),  create_at(295, 2, 3),  mode_at(8, 1),                       mode_at(14, 1),
    mode_at(297, 2),     unix_socket(359),      {102, Judge::socketcall}};
#elif defined(__aarch64__)
constexpr uint32_t k_native_mask = ~0u;
constexpr uint32_t k_native_arch = AUDIT_ARCH_AARCH64;
constexpr Rule k_native[] = {refuse(37, k_exdev),   refuse(k_io_uring_setup, k_enosys), refuse(k_openat2, k_enosys),
                             mode_at(52, 1),        mode_at(53, 2),                     mode_at(k_fchmodat2, 2),
                             create_at(56, 2, 3),   mode_at(33, 2),                     unix_socket(198)};
constexpr uint32_t k_compat_arch = AUDIT_ARCH_ARM;
constexpr Rule k_compat[] = {
    refuse(9, k_exdev),  refuse(330, k_exdev),  refuse(k_io_uring_setup, k_enosys), refuse(k_openat2, k_enosys),
    mode_at(15, 1),      mode_at(94, 1),        mode_at(333, 2),                     mode_at(k_fchmodat2, 2),
    create_at(5, 1, 2),  create_at(322, 2, 3),  mode_at(8, 1),                       mode_at(14, 1),
    mode_at(324, 2),     unix_socket(281)};
#else
#error "the sandbox's seccomp filter knows no system call numbers for this architecture"
#endif

constexpr uint16_t k_ld = BPF_LD | BPF_W | BPF_ABS;
constexpr uint16_t k_and = BPF_ALU | BPF_AND | BPF_K;
constexpr uint16_t k_jeq = BPF_JMP | BPF_JEQ | BPF_K;
constexpr uint16_t k_jset = BPF_JMP | BPF_JSET | BPF_K;
constexpr uint16_t k_ret = BPF_RET | BPF_K;

// The low 32 bits of argument `i` (every architecture here is little-endian).
constexpr uint32_t arg_low(uint8_t i) { return static_cast<uint32_t>(offsetof(seccomp_data, args) + 8u * i); }

// The instructions of one rule's verdict, after its number matched; each
// path ends in a return.
size_t body(sock_filter* out, const Rule& r) {
  sock_filter* at = out;
  switch (r.judge) {
    case Judge::refuse: *at++ = sock_filter{k_ret, 0, 0, r.ret}; break;
    case Judge::set_id_mode:
      *at++ = sock_filter{k_ld, 0, 0, arg_low(r.mode)};
      *at++ = sock_filter{k_jset, 0, 1, k_set_id};
      *at++ = sock_filter{k_ret, 0, 0, k_eperm};
      *at++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_ALLOW};
      break;
    case Judge::creates:
      *at++ = sock_filter{k_ld, 0, 0, arg_low(r.flags)};
      *at++ = sock_filter{k_jset, 0, 3, k_creating};
      *at++ = sock_filter{k_ld, 0, 0, arg_low(r.mode)};
      *at++ = sock_filter{k_jset, 0, 1, k_set_id};
      *at++ = sock_filter{k_ret, 0, 0, k_eperm};
      *at++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_ALLOW};
      break;
    case Judge::socketcall: *at++ = sock_filter{k_ret, 0, 0, k_eperm}; break;
    case Judge::unix_socket:
      *at++ = sock_filter{k_ld, 0, 0, arg_low(0)};
      *at++ = sock_filter{k_jeq, 0, 1, AF_UNIX};
      *at++ = sock_filter{k_ret, 0, 0, k_eperm};
      *at++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_ALLOW};
      break;
  }
  return static_cast<size_t>(at - out);
}

// "If arch is `arch`: load nr, judge it by its rule, else allow"; other
// arches jump past the block. Returns false when a jump would not fit.
template <size_t N>
bool block(sock_filter*& out, uint32_t arch, uint32_t mask, const Rule (&rules)[N], bool unix_off) {
  sock_filter* start = out++;  // the arch test, patched below
  *out++ = sock_filter{k_ld, 0, 0, static_cast<uint32_t>(offsetof(seccomp_data, nr))};
  if (mask != ~0u) *out++ = sock_filter{k_and, 0, 0, mask};
  for (const Rule& r : rules) {
    if ((r.judge == Judge::unix_socket || r.judge == Judge::socketcall) && !unix_off) continue;
    sock_filter* test = out++;
    size_t n = body(out, r);
    out += n;
    *test = sock_filter{k_jeq, 0, static_cast<uint8_t>(n), r.nr};
  }
  *out++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_ALLOW};
  const auto skip = out - start - 1;
  if (skip > 255) return false;
  *start = sock_filter{k_jeq, 0, static_cast<uint8_t>(skip), arch};
  return true;
}

// The most instructions a rule takes: its test and the longest verdict.
constexpr size_t k_rule_max = 1 + 6;

}  // namespace

int install_run_filter(bool unix_sockets_off) noexcept {
  constexpr size_t n = 1 + (3 + k_rule_max * std::size(k_native) + 1) + (3 + k_rule_max * std::size(k_compat) + 1) + 1;
  sock_filter prog[n];
  sock_filter* out = prog;
  *out++ = sock_filter{k_ld, 0, 0, static_cast<uint32_t>(offsetof(seccomp_data, arch))};
  if (!block(out, k_native_arch, k_native_mask, k_native, unix_sockets_off) ||
      !block(out, k_compat_arch, ~0u, k_compat, unix_sockets_off))
    return EINVAL;
  *out++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_KILL_PROCESS};
  sock_fprog fprog{static_cast<unsigned short>(out - prog), prog};
  // no_new_privs is set first (LandlockRuleset::enforce): an unprivileged
  // process may then install a filter.
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) return errno;
  return 0;
}

int probe_run_filter() {
  pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(errno & 0xff);
    ::_exit(install_run_filter(true) & 0xff);
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : ECHILD;
}

}  // namespace kai
