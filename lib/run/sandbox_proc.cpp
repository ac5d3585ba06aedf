#include "lib/run/sandbox_proc.hpp"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string_view>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kai {
namespace {

// Appends the decimal digits of `n` at `out`; returns the end.
char* put_number(char* out, long n) noexcept {
  char digits[24];
  int k = 0;
  do {
    digits[k++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n > 0 && k < 24);
  while (k > 0) *out++ = digits[--k];
  return out;
}

// The state letter and the parent of process `pid`, from /proc/<pid>/stat.
// False when it is gone or unreadable.
bool proc_stat(pid_t pid, char& state, pid_t& ppid) noexcept {
  char path[48] = "/proc/";
  char* end = put_number(path + 6, pid);
  std::memcpy(end, "/stat", 6);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[640];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  // "pid (comm) S ppid …": the command name may hold ')' and spaces, so the
  // last ')' ends it.
  std::string_view text(buf, static_cast<size_t>(n));
  size_t paren = text.rfind(')');
  if (paren == std::string_view::npos || paren + 4 >= text.size()) return false;
  state = text[paren + 2];
  long p = 0;
  for (size_t i = paren + 4; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) p = p * 10 + (text[i] - '0');
  ppid = static_cast<pid_t>(p);
  return true;
}

// Calls `f(pid)` for every process /proc lists.
template <class F>
void each_process(F&& f) noexcept {
  int fd = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[8192];
  while (true) {
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
      unsigned short reclen = 0;
      std::memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char* name = buf + off + 19;
      long pid = 0;
      bool number = *name != '\0';
      for (const char* c = name; *c; ++c) {
        if (*c < '0' || *c > '9') {
          number = false;
          break;
        }
        pid = pid * 10 + (*c - '0');
      }
      if (number) f(static_cast<pid_t>(pid));
      if (reclen == 0) break;
      off += reclen;
    }
  }
  ::close(fd);
}

bool contains(const pid_t* set, size_t n, pid_t pid) noexcept {
  for (size_t i = 0; i < n; ++i)
    if (set[i] == pid) return true;
  return false;
}

// SIGKILL by pidfd where the kernel has them, after checking that the pid
// still names a process under `root`: a pid freed and reused meanwhile is
// not signalled.
void kill_one(pid_t pid, const pid_t* found, size_t n, pid_t root) noexcept {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  char state = 0;
  pid_t ppid = 0;
  const bool still = proc_stat(pid, state, ppid) && (ppid == root || contains(found, n, ppid));
  if (pidfd >= 0) {
    if (still) ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
    ::close(pidfd);
  } else if (still) {
    ::kill(pid, SIGKILL);
  }
}

void pause_ms(long ms) noexcept {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

}  // namespace

bool follow_parent(int sig, pid_t parent) noexcept {
  if (::prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0) return false;
  return ::getppid() == parent;
}

size_t kill_descendants(pid_t root, int rounds) noexcept {
  constexpr size_t k_cap = 2048;
  pid_t found[k_cap];
  size_t total = 0;
  for (int round = 0; round < rounds; ++round) {
    // Everything below root, by parent links, scan after scan until a scan
    // adds nothing (a child listed before its parent is found next time).
    size_t n = 0;
    for (bool grew = true; grew && n < k_cap;) {
      grew = false;
      each_process([&](pid_t pid) {
        if (pid == root || n >= k_cap || contains(found, n, pid)) return;
        char state = 0;
        pid_t ppid = 0;
        if (!proc_stat(pid, state, ppid) || state == 'Z' || state == 'X') return;
        if (ppid == root || contains(found, n, ppid)) {
          found[n++] = pid;
          grew = true;
        }
      });
    }
    if (n == 0) break;
    for (size_t i = 0; i < n; ++i) kill_one(found[i], found, n, root);
    total += n;
    pause_ms(5);
  }
  return total;
}

[[noreturn]] void end_like(int status) noexcept {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    struct rlimit no_core {};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(sig, SIG_DFL);
    sigset_t set;
    ::sigemptyset(&set);
    ::sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::kill(::getpid(), sig);
    ::_exit(128 + sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 126);
}

namespace {

[[noreturn]] void reaper_fail(int report_fd, std::string_view what) noexcept {
  const char* reason = ::strerrordesc_np(errno);
  if (!reason) reason = "unknown error";
  ssize_t ignored = ::write(report_fd, what.data(), what.size());
  ignored = ::write(report_fd, reason, std::strlen(reason));
  (void)ignored;
  ::_exit(126);
}

// Kills what is left below this process and reaps it, until nothing is:
// every orphan of the run is this subreaper's child by then.
void clear_below(pid_t me) noexcept {
  for (int i = 0; i < 400; ++i) {
    kill_descendants(me, 20);
    int st = 0;
    pid_t got;
    while ((got = ::waitpid(-1, &st, WNOHANG)) > 0) {}
    if (got < 0 && errno == ECHILD) return;
    pause_ms(5);
  }
}

}  // namespace

void become_reaper(pid_t parent, int report_fd) noexcept {
  // Every signal waits for the loop below; only SIGKILL ends this process
  // early. A SIGTERM for the run's group reaches the command, and this
  // process then ends as the command did.
  sigset_t all;
  ::sigfillset(&all);
  ::sigprocmask(SIG_BLOCK, &all, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, nullptr);  // children must stay waitable
  // A SIGTERM when kaicoder dies: this process then clears the run away.
  if (!follow_parent(SIGTERM, parent)) ::_exit(126);
  // It is a fork of kaicoder: its memory and environment are kaicoder's.
  if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) reaper_fail(report_fd, "kaicoder: the sandbox cannot hide its memory: ");
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0)
    reaper_fail(report_fd, "kaicoder: the sandbox cannot adopt the run's processes: ");
  const pid_t me = ::getpid();
  const pid_t run = ::fork();
  if (run < 0) reaper_fail(report_fd, "kaicoder: the sandbox cannot start the command: ");
  if (run == 0) {
    if (!follow_parent(SIGKILL, me)) ::_exit(126);
    return;  // the command's process
  }
  ::close(report_fd);
  for (int fd = 0; fd <= 2; ++fd) ::close(fd);  // the command's output ends with it
  int run_status = 0;
  bool run_ended = false;
  while (true) {
    siginfo_t info{};
    timespec tick{1, 0};
    (void)::sigtimedwait(&all, &info, &tick);
    if (::getppid() != parent) {  // kaicoder is gone: so is the run
      clear_below(me);
      ::_exit(128 + SIGKILL);
    }
    int st = 0;
    pid_t got;
    while ((got = ::waitpid(-1, &st, WNOHANG)) > 0)
      if (got == run) {
        run_status = st;
        run_ended = true;
      }
    if (run_ended) {
      clear_below(me);
      end_like(run_status);
    }
  }
}

}  // namespace kai
