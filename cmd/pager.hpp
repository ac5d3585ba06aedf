#pragma once
// Long `log` and `show` output goes through a pager, the way git does it,
// but only for a person at a terminal: never with --json, --no-pager, or
// when stdout is not a terminal. The command is $KAICODER_PAGER, else
// $PAGER, else "less -FRX" (-F: quit at once when it fits on one screen,
// -R: keep colours, -X: leave the text on screen); an empty one or "cat"
// means no pager.
//
//   Pager pager(s, a->no_pager ? Paging::off : Paging::automatic);
//   out(...);  // collected while the command runs
//   // ~Pager: the text is shown through the pager, and waited for
//
// The output is collected in an anonymous file and handed to the pager as
// its stdin when the command is done. So a pager that cannot start (not
// installed, not executable) loses nothing: the text is printed as it is.
// And since the pager reads a file, not a pipe, quitting it early leaves no
// writer to die of SIGPIPE. log and show finish quickly, so nothing is lost
// by not streaming.

#include <string>

#include "cmd/cli.hpp"

namespace kai::cmd {

enum class Paging { off, automatic };

// The pager command from the environment; empty when there is none.
std::string pager_command();

class Pager {
public:
  Pager(const Session& s, Paging paging);
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;
  ~Pager();

private:
  int m_stdout = -1;  // the terminal, while stdout points at m_buffer
  int m_buffer = -1;
  std::string m_command;
};

}  // namespace kai::cmd
