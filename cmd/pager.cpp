#include "cmd/pager.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <optional>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
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

// The terminal's size, when stdout is a terminal that has one.
std::optional<winsize> terminal_size() {
  if (::isatty(STDOUT_FILENO) != 1) return std::nullopt;
  winsize w{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) != 0 || w.ws_row == 0 || w.ws_col == 0) return std::nullopt;
  return w;
}

// Whether the rest of `fd` takes more than `rows` rows on a screen `cols`
// wide: each line one row at least, long ones wrapped, kaicoder's colour
// codes no room at all. Stops reading once it knows.
bool longer_than(int fd, size_t rows, size_t cols) {
  size_t used = 0, width = 0;
  bool escape = false, line_open = false;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const auto c = static_cast<unsigned char>(buf[i]);
      if (escape) {
        escape = !(c >= '@' && c <= '~' && c != '[');
        continue;
      }
      if (c == '\x1b') {
        escape = true;
        continue;
      }
      if (c == '\n') {
        used += width == 0 ? 1 : (width + cols - 1) / cols;
        width = 0;
        line_open = false;
        if (used > rows) return true;
        continue;
      }
      line_open = true;
      if (c == '\t')
        width += 8 - width % 8;
      else if ((c & 0xC0) != 0x80)
        ++width;  // one column per character; wide ones are rare in a diff
    }
  }
  if (line_open) used += width == 0 ? 1 : (width + cols - 1) / cols;
  return used > rows;
}

// The controlling terminal, to look at or clear what was typed on it.
int open_tty() { return ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC); }

// Whether a whole line was typed ahead and waits to be read: the person
// answered before the text was shown.
bool answer_waiting() {
  int fd = open_tty();
  if (fd < 0) return false;
  int n = 0;
  const bool waiting = ::ioctl(fd, FIONREAD, &n) == 0 && n > 0;
  ::close(fd);
  return waiting;
}

// Keys typed into the pager that it did not read are no answer to the
// question that follows it.
void drop_typed_keys() {
  int fd = open_tty();
  if (fd < 0) return;
  ::tcflush(fd, TCIFLUSH);
  ::close(fd);
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

bool Pager::available(const Session& s) { return !s.json() && terminal_size() && !pager_command().empty(); }

Pager::Pager(const Session& s, Paging paging) : m_paging(paging) {
  if (paging == Paging::off || !available(s)) return;
  m_command = pager_command();
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

Pager::~Pager() { finish(); }

void Pager::finish() {
  if (m_buffer < 0) return;
  std::fflush(stdout);
  ::dup2(m_stdout, STDOUT_FILENO);
  ::close(m_stdout);
  m_stdout = -1;
  const off_t size = ::lseek(m_buffer, 0, SEEK_CUR);
  ::lseek(m_buffer, 0, SEEK_SET);
  bool page = size > 0;
  if (page && m_paging == Paging::before_prompt) {
    // Before a prompt: only what does not fit on the screen (the prompt
    // needs its own row), and not when the answer is already typed.
    const auto w = terminal_size();
    page = w && longer_than(m_buffer, w->ws_row - 1u, w->ws_col) && !answer_waiting();
    ::lseek(m_buffer, 0, SEEK_SET);
  }
  if (!page || !run_pager(m_command, m_buffer)) {
    ::lseek(m_buffer, 0, SEEK_SET);
    copy_fd(m_buffer, STDOUT_FILENO);
  } else if (m_paging == Paging::before_prompt) {
    drop_typed_keys();
  }
  ::close(m_buffer);
  m_buffer = -1;
}

}  // namespace kai::cmd
