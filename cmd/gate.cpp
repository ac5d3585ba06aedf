#include "cmd/gate.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/util/fs.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {

Result<bool> ask_on_terminal(const std::string& question, Tier tier) {
  int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return make_error(Errc::denied, "no terminal to approve from",
                      "a person decides at a terminal: run this command in an interactive shell");
  // The question names a path an agent chose: it must not drive the terminal.
  const std::string shown = make_visible(question, Allow::nothing);
  std::string prompt = tier == Tier::confirm ? fmt::format("{} Type CONFIRM to proceed: ", shown)
                                             : fmt::format("{} [y/N] ", shown);
  if (!write_all(fd, prompt)) {
    ::close(fd);
    return make_error(Errc::denied, "cannot write to the terminal");
  }
  std::string line;
  char c;
  for (;;) {
    ssize_t n = ::read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || c == '\n') break;
    if (c != '\r') line += c;
    if (line.size() > 256) break;
  }
  ::close(fd);
  auto trimmed = line.substr(0, line.find_last_not_of(" \t") + 1);
  trimmed = trimmed.substr(std::min(trimmed.size(), trimmed.find_first_not_of(" \t")));
  if (tier == Tier::confirm) return trimmed == "CONFIRM";
  return trimmed == "y" || trimmed == "Y" || trimmed == "yes" || trimmed == "YES" || trimmed == "Yes";
}

}  // namespace kai::cmd
