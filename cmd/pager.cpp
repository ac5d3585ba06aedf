#include "cmd/pager.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kai::cmd {
namespace {

// Copies the rest of `from` to `to`, for when no pager could show it.
void copy_fd(int from, int to) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(from, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    for (ssize_t off = 0; off < n;) {
      ssize_t w = ::write(to, buf + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;
      off += w;
    }
  }
}

// Runs `command` with /bin/sh, its stdin the collected text, and waits.
// False when it could not start (the shell says 126 or 127 then).
bool run_pager(const std::string& command, int input) {
  // While the pager runs it owns the terminal: a ^C there is for it, not for us.
  struct sigaction ign {
  }, old_int{}, old_quit{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ign, &old_int);
  ::sigaction(SIGQUIT, &ign, &old_quit);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    ::dup2(input, STDIN_FILENO);
    ::setenv("LESS", "FRX", 0);  // a plain PAGER=less still keeps colours
    ::setenv("LV", "-c", 0);
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  bool started = false;
  if (pid > 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    started = !(WIFEXITED(status) && (WEXITSTATUS(status) == 126 || WEXITSTATUS(status) == 127));
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  return started;
}

}  // namespace

std::string pager_command() {
  const char* p = std::getenv("KAICODER_PAGER");
  if (!p) p = std::getenv("PAGER");
  if (!p) p = "less -FRX";
  std::string cmd = p;
  if (cmd.find_first_not_of(" \t") == std::string::npos || cmd == "cat") return "";
  return cmd;
}

Pager::Pager(const Session& s, Paging paging) {
  if (paging == Paging::off || s.json() || ::isatty(STDOUT_FILENO) != 1) return;
  m_command = pager_command();
  if (m_command.empty()) return;
  m_buffer = ::memfd_create("kaicoder-pager", MFD_CLOEXEC);
  if (m_buffer < 0) return;
  std::fflush(stdout);
  m_stdout = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (m_stdout < 0 || ::dup2(m_buffer, STDOUT_FILENO) < 0) {
    if (m_stdout >= 0) ::close(m_stdout);
    ::close(m_buffer);
    m_stdout = m_buffer = -1;
  }
}

Pager::~Pager() {
  if (m_buffer < 0) return;
  std::fflush(stdout);
  ::dup2(m_stdout, STDOUT_FILENO);
  ::close(m_stdout);
  off_t size = ::lseek(m_buffer, 0, SEEK_CUR);
  ::lseek(m_buffer, 0, SEEK_SET);
  if (size > 0 && !run_pager(m_command, m_buffer)) {
    ::lseek(m_buffer, 0, SEEK_SET);
    copy_fd(m_buffer, STDOUT_FILENO);
  }
  ::close(m_buffer);
}

}  // namespace kai::cmd
