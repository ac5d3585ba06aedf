#pragma once
// Long output goes through a pager, the way git does it, but only for a
// person at a terminal whose size is known: never with --json, --no-pager,
// when stdout is not a terminal, or when the terminal has no size (a script
// driving a pseudo-terminal it never sized). The command is
// $KAICODER_PAGER, else $PAGER, else "less -FRX" (-F: quit at once when it
// fits on one screen, -R: keep colours, -X: leave the text on screen); an
// empty one or "cat" means no pager.
//
// Two uses:
//
//   Pager pager(s, a->no_pager ? Paging::off : Paging::automatic);  // log, show
//   out(...);  // collected while the command runs
//   // ~Pager: the text is shown through the pager, and waited for
//
//   // A diff before a prompt (SPEC §11: approve, trust, integrate,
//   // rollback, certify): the pager only when the text is longer than
//   // the screen, and the prompt after the pager has exited.
//   Pager pager(s, Paging::before_prompt);
//   out(...);
//   pager.finish();            // shown; typed-ahead keys the pager left are dropped
//   ask_on_terminal(...);
//
// The answer is never read by the pager: an answer typed before the text
// is shown (a line waiting on the terminal) means the person answers
// without paging, so the text is printed as it is and the waiting line is
// the answer; after the pager exits, keys typed into it that it did not
// read are discarded, so only what is typed at the prompt answers it.
//
// The output is collected in an anonymous file and handed to the pager as
// its stdin when the command is done. So a pager that cannot start (not
// installed, not executable) loses nothing: the text is printed as it is.
// And since the pager reads a file, not a pipe, quitting it early leaves no
// writer to die of SIGPIPE.

#include <string>

#include "cmd/cli.hpp"

namespace kai::cmd {

enum class Paging { off, automatic, before_prompt };

// The pager command from the environment; empty when there is none.
std::string pager_command();

class Pager {
public:
  Pager(const Session& s, Paging paging);
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;
  ~Pager();

  // Whether output would go through a pager (before it is known how long it
  // is): a sized terminal, no --json, a pager command. A door that shows
  // a diff before a prompt then shows all of it instead of cutting it.
  static bool available(const Session& s);
  // Show what was collected (once; the destructor calls it).
  void finish();

private:
  int m_stdout = -1;  // the terminal, while stdout points at m_buffer
  int m_buffer = -1;
  Paging m_paging = Paging::off;
  std::string m_command;
};

}  // namespace kai::cmd
