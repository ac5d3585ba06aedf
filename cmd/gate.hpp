#pragma once
// The terminal half of the human gate (SPEC §4): approve, reject and
// rollback read the answer from the controlling terminal, never from stdin,
// so an agent in a pipe cannot answer its own question.

#include <string>
#include <string_view>

#include "lib/gate/gate.hpp"
#include "lib/config/policy.hpp"
#include "lib/result.hpp"

namespace kai::cmd {

// Ask `question` on /dev/tty. Normal tier: y/N. Confirm tier: the person
// must type CONFIRM. Errc::denied when there is no terminal to ask on.
Result<bool> ask_on_terminal(const std::string& question, Tier tier);

// What the person answered an approval that may offer "always allow".
enum class Reply { no, yes, always };
// ask_on_terminal, for the normal tier with "always allow" offered when
// `always` is yes: [y/N/a], where a (or "always") is Reply::always.
enum class OfferAlways { no, yes };
Result<Reply> ask_reply(const std::string& question, Tier tier, OfferAlways always);

// What a yes at the terminal for `tier` was: ask_on_terminal accepts only
// CONFIRM for the confirm tier.
gate::Answer terminal_answer(Tier tier);

// The owner's y/N at the terminal for `what` (init, trust): Errc::denied
// with no terminal, Errc::rejected when the answer is not yes.
Status owner_says_yes(const std::string& question, std::string_view what);

// Write `text` to /dev/tty only, never to stdout or stderr (which an agent
// that started us may read): for what only the person may see. The caller
// made it safe to show. Errc::denied when there is no terminal.
Status tell_terminal(std::string_view text);

// Errc::denied (with `what` as the message) unless /dev/tty can be opened:
// for commands that must refuse before doing any work without a person.
Status require_terminal(const std::string& what);

}  // namespace kai::cmd
