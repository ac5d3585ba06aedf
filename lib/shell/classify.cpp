// The entry points of lib/shell.hpp: a script or an argv is checked for
// hidden characters, parsed and walked; every leaf is judged by its rule.

#include "lib/shell/shell.hpp"

#include <algorithm>
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

int severity(const std::string& reason) {
  if (reason.starts_with("blocked: ")) return 0;
  if (reason.starts_with("confirm: ")) return 1;
  if (reason.starts_with("not understood: ")) return 2;
  return 3;
}

// No verdict without a reason, the worst first: a command nothing was said
// about is made of ordinary commands kaicoder knows, and says so.
void finish(Classification& out, std::string_view text) {
  if (out.reasons.empty()) {
    std::vector<std::string> names;
    for (const Leaf& l : out.leaves) {
      if (l.argv.empty()) continue;
      std::string n = shell::basename_of(l.argv[0]);
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
    }
    std::string list;
    for (const std::string& n : names) {
      if (!list.empty()) list += ", ";
      list += n;
    }
    out.reasons.push_back(out.leaves.empty() ? "ask: nothing to run: " + shell::shown(text)
                                             : "ask: ordinary commands kaicoder knows (" + list +
                                                   "): nothing in them needs a warning: " + shell::shown(text));
  }
  std::stable_sort(out.reasons.begin(), out.reasons.end(),
                   [](const std::string& a, const std::string& b) { return severity(a) < severity(b); });
}

}  // namespace

std::vector<FamilyCoverage> checker_coverage() { return shell::coverage(); }

Classification classify_shell(std::string_view script, const ShellContext& ctx) {
  if (std::optional<std::string> d = disguise(script)) return disguised(*d);
  Classification out;
  shell::Walker w(ctx, out, 0);
  w.walk(shell::parse(script));
  finish(out, script);
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
  finish(out, c.text);
  return out;
}

}  // namespace kai
