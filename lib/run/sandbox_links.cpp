// The seccomp filter every sandboxed process runs under (sandbox "full" and
// "landlock"): no new hard links. A second name for a file in another folder
// is the one way to write a file without an event in its own folder, which
// the per-folder watch of a run's snapshots relies on (lib/run/snapshot_watch.hpp).
// link() and linkat() fail with EXDEV, as Landlock refuses a link across its
// rules, so tools fall back to copying or renaming (git, cargo, rustc, pnpm
// do); io_uring, whose own LINKAT no filter sees, is not there (ENOSYS).

#include "lib/run/sandbox.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kai {
namespace {

struct Refusal {
  uint32_t nr;
  uint32_t ret;
};

constexpr uint32_t k_exdev = SECCOMP_RET_ERRNO | (static_cast<uint32_t>(EXDEV) & SECCOMP_RET_DATA);
constexpr uint32_t k_enosys = SECCOMP_RET_ERRNO | (static_cast<uint32_t>(ENOSYS) & SECCOMP_RET_DATA);
constexpr uint32_t k_io_uring_setup = 425;  // the same number on every architecture

// Each system call ABI the kernel of this build's architecture runs
// programs in, with its numbers. A process of any other is killed at its
// first system call.
#if defined(__x86_64__)
constexpr uint32_t k_x32 = 0x40000000;  // __X32_SYSCALL_BIT
constexpr uint32_t k_native_arch = AUDIT_ARCH_X86_64;
constexpr Refusal k_native[] = {{86, k_exdev},         {265, k_exdev},         {k_io_uring_setup, k_enosys},
                                {k_x32 + 86, k_exdev}, {k_x32 + 265, k_exdev}, {k_x32 + k_io_uring_setup, k_enosys}};
constexpr uint32_t k_compat_arch = AUDIT_ARCH_I386;
constexpr Refusal k_compat[] = {{9, k_exdev}, {303, k_exdev}, {k_io_uring_setup, k_enosys}};
#elif defined(__aarch64__)
constexpr uint32_t k_native_arch = AUDIT_ARCH_AARCH64;
constexpr Refusal k_native[] = {{37, k_exdev}, {k_io_uring_setup, k_enosys}};
constexpr uint32_t k_compat_arch = AUDIT_ARCH_ARM;
constexpr Refusal k_compat[] = {{9, k_exdev}, {328, k_exdev}, {k_io_uring_setup, k_enosys}};
#else
#error "the sandbox's seccomp filter knows no system call numbers for this architecture"
#endif

constexpr uint16_t k_ld = BPF_LD | BPF_W | BPF_ABS;
constexpr uint16_t k_jeq = BPF_JMP | BPF_JEQ | BPF_K;
constexpr uint16_t k_ret = BPF_RET | BPF_K;

// "If arch is `arch`: load nr, return each refusal's value on its number,
// else allow"; other arches jump past the block.
template <size_t N>
void block(sock_filter*& out, uint32_t arch, const Refusal (&refused)[N]) {
  static_assert(2 * N + 2 <= 255, "a jump spans at most 255 instructions");
  *out++ = sock_filter{k_jeq, 0, static_cast<uint8_t>(2 * N + 2), arch};
  *out++ = sock_filter{k_ld, 0, 0, static_cast<uint32_t>(offsetof(seccomp_data, nr))};
  for (const Refusal& r : refused) {
    *out++ = sock_filter{k_jeq, 0, 1, r.nr};
    *out++ = sock_filter{k_ret, 0, 0, r.ret};
  }
  *out++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_ALLOW};
}

}  // namespace

int refuse_new_links() noexcept {
  constexpr size_t n = 1 + (2 * std::size(k_native) + 3) + (2 * std::size(k_compat) + 3) + 1;
  sock_filter prog[n];
  sock_filter* out = prog;
  *out++ = sock_filter{k_ld, 0, 0, static_cast<uint32_t>(offsetof(seccomp_data, arch))};
  block(out, k_native_arch, k_native);
  block(out, k_compat_arch, k_compat);
  *out++ = sock_filter{k_ret, 0, 0, SECCOMP_RET_KILL_PROCESS};
  sock_fprog fprog{static_cast<unsigned short>(out - prog), prog};
  // no_new_privs is set first (LandlockRuleset::enforce): an unprivileged
  // process may then install a filter.
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0) != 0) return errno;
  return 0;
}

int probe_refuse_new_links() {
  pid_t pid = ::fork();
  if (pid < 0) return errno;
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(errno & 0xff);
    ::_exit(refuse_new_links() & 0xff);
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(st) ? WEXITSTATUS(st) : ECHILD;
}

}  // namespace kai
