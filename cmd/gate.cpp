#include "cmd/gate.hpp"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/util/fs.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {

namespace {
Error no_terminal(const std::string& what) {
  return make_error(Errc::denied, what, "a person decides at a terminal: run this command in an interactive shell");
}
}  // namespace

Status require_terminal(const std::string& what) {
  int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return no_terminal(what);
  ::close(fd);
  return ok_status();
}

Status tell_terminal(std::string_view text) {
  int fd = ::open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return no_terminal("no terminal to write to");
  const bool ok = write_all(fd, text);
  ::close(fd);
  if (!ok) return make_error(Errc::denied, "cannot write to the terminal");
  return ok_status();
}

Result<Reply> ask_reply(const std::string& question, Tier tier, OfferAlways always) {
  int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return no_terminal("no terminal to approve from");
  // The question names a path an agent chose: it must not drive the terminal.
  const std::string shown = make_visible(question, Allow::nothing);
  const bool offer = always == OfferAlways::yes && tier == Tier::normal;
  std::string prompt = tier == Tier::confirm ? fmt::format("{} Type CONFIRM to proceed: ", shown)
                       : offer               ? fmt::format("{} [y/N/a] ", shown)
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
  const std::string_view t = trim(line);
  if (tier == Tier::confirm) return t == "CONFIRM" ? Reply::yes : Reply::no;
  if (t == "y" || t == "Y" || t == "yes" || t == "YES" || t == "Yes") return Reply::yes;
  if (offer && (t == "a" || t == "A" || t == "always")) return Reply::always;
  return Reply::no;
}

Result<bool> ask_on_terminal(const std::string& question, Tier tier) {
  auto r = ask_reply(question, tier, OfferAlways::no);
  if (!r) return r.error();
  return *r == Reply::yes;
}

gate::Answer terminal_answer(Tier tier) { return tier == Tier::confirm ? gate::Answer::confirm : gate::Answer::yes; }

// The owner's word at the terminal, for init and trust: Errc::denied with
// no terminal, Errc::rejected when the answer is not yes.
Status owner_says_yes(const std::string& question, std::string_view what) {
  auto yes = ask_on_terminal(question, Tier::normal);
  if (!yes)
    return make_error(Errc::denied, fmt::format("{} asks its owner at a terminal, and there is none", what),
                      "run it yourself in an interactive shell; an agent cannot trust a root");
  if (!*yes) return make_error(Errc::rejected, fmt::format("{}: not confirmed; nothing was changed", what));
  return ok_status();
}

}  // namespace kai::cmd
