// The entry points of lib/shell.hpp: a script or an argv is checked for
// hidden characters, parsed and walked; every leaf is judged by its rule.

#include "lib/shell/shell.hpp"

#include <optional>

#include "lib/shell/syntax.hpp"
#include "lib/shell/walker.hpp"
#include "lib/util/text.hpp"

namespace kai {

std::string_view to_string(RunVerdict v) {
  switch (v) {
    case RunVerdict::allow: return "allow";
    case RunVerdict::ask: return "ask";
    case RunVerdict::confirm: return "confirm";
    case RunVerdict::blocked: return "blocked";
  }
  return "blocked";
}

}  // namespace kai

namespace kai {
namespace {

// Characters that make what the approver sees differ from what runs
// (lib/util/text.hpp lists them): control characters other than tab and
// newline (a CR too, even before a newline), bidi controls, invisible
// characters, line separators, invalid UTF-8.
std::optional<std::string> disguise(std::string_view s) {
  std::optional<HiddenChar> h = find_hidden(s, Allow::script);
  if (!h) return std::nullopt;
  if (h->invalid) return "invalid UTF-8 at byte " + std::to_string(h->at);
  return std::string(h->kind) + " (" + code_point_name(h->cp) + ") at byte " + std::to_string(h->at);
}

Classification disguised(const std::string& what) {
  Classification out;
  out.verdict = RunVerdict::blocked;
  out.understood = false;
  out.reasons.push_back("blocked: contains a " + what +
                        ", which can make what the approver sees differ from what runs");
  return out;
}

}  // namespace

Classification classify_shell(std::string_view script, const ShellContext& ctx) {
  if (std::optional<std::string> d = disguise(script)) return disguised(*d);
  Classification out;
  shell::Walker w(ctx, out, 0);
  w.walk(shell::parse(script));
  return out;
}

Classification classify_argv(const std::vector<std::string>& argv, const ShellContext& ctx) {
  Classification out;
  if (argv.empty()) {
    out.understood = false;
    out.reasons.push_back("not understood: empty command: ");
    return out;
  }
  for (const std::string& a : argv)
    if (std::optional<std::string> d = disguise(a)) return disguised(*d);
  shell::Walker w(ctx, out, 0);
  shell::Call c;
  for (const std::string& a : argv) {
    shell::Field f;
    f.value = a;
    f.raw = quote_argv({a});
    c.argv.push_back(std::move(f));
  }
  c.text = quote_argv(argv);
  w.classify(c);
  return out;
}

}  // namespace kai
