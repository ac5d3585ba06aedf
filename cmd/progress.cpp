#include "cmd/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd/output.hpp"

namespace kai::cmd {

ProgressLine::ProgressLine() : m_on(::isatty(STDERR_FILENO) == 1), m_throttle(std::chrono::steady_clock::now()) {}

ProgressLine::~ProgressLine() { clear(); }

Progress ProgressLine::callback() {
  if (!m_on) return {};
  return [this](std::string_view what, size_t done, size_t total) { update(what, done, total); };
}

void ProgressLine::update(std::string_view what, size_t done, size_t total) {
  if (what.empty()) return clear();
  if (!m_throttle.due(std::chrono::steady_clock::now())) return;
  winsize ws{};
  size_t width = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1u : 79u;
  // \r back to the start of the line, \x1b[K erases what a longer one left.
  write_stderr("\r" + progress_text(what, done, total, width) + "\x1b[K");
  m_drawn = true;
}

void ProgressLine::clear() {
  if (!m_drawn) return;
  write_stderr("\r\x1b[K");
  m_drawn = false;
}

}  // namespace kai::cmd
