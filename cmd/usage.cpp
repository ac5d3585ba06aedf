#include "cmd/usage.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {

namespace {

// A word someone typed, fit to quote in a message: one line, no hidden
// characters, not longer than a word should be.
std::string quote_word(std::string_view word) {
  std::string shown = make_visible(word.substr(0, 64), Allow::nothing);
  if (word.size() > 64) shown += "...";
  return "'" + shown + "'";
}

// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string one_of(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += quote_word(words[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> close = closest_words(word, candidates);
  return close.empty() ? std::string() : fmt::format("; did you mean {}?", one_of(close));
}

Error unknown_command(std::string_view word, const std::vector<std::string>& verbs) {
  return make_error(Errc::usage, fmt::format("unknown command {}{}", quote_word(word), did_you_mean(word, verbs)),
                    "kaicoder help lists the commands");
}

// The global options that take a value: the word after them is no command.
bool takes_value(std::string_view word) { return word == "--root" || word == "--config" || word == "--color"; }

// The long and short options `app` (and, for a command, kaicoder itself) knows.
std::vector<std::string> option_names(const CLI::App& app, const CLI::App* sub) {
  std::vector<std::string> out;
  for (const CLI::App* a : {sub, &app}) {
    if (!a) continue;
    for (const CLI::Option* o : a->get_options()) {
      for (const auto& l : o->get_lnames()) out.push_back("--" + l);
      for (const auto& s : o->get_snames()) out.push_back("-" + s);
    }
  }
  return out;
}

}  // namespace

const char* const* Invocation::argv() {
  m_ptrs.clear();
  for (const auto& a : args) m_ptrs.push_back(a.c_str());
  return m_ptrs.data();
}

Invocation read_invocation(int argc, char** argv, const std::vector<std::string>& verbs) {
  Invocation inv;
  inv.args.assign(argv, argv + argc);
  auto& a = inv.args;
  size_t i = 1;
  while (i < a.size() && a[i] != "--" && a[i].starts_with("-")) i += takes_value(a[i]) ? 2 : 1;
  if (i >= a.size() || a[i] == "--") {
    inv.argv();
    return inv;
  }
  inv.typed = a[i];
  const auto known = [&](const std::string& w) { return std::find(verbs.begin(), verbs.end(), w) != verbs.end(); };
  if (a[i] == "help") {
    size_t j = i + 1;
    while (j < a.size() && a[j].starts_with("-")) ++j;
    std::vector<std::string> rewritten(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(i));
    if (j < a.size()) {
      inv.typed = a[j];
      if (!known(a[j])) inv.error = unknown_command(a[j], verbs);
      rewritten.push_back(a[j]);
    } else {
      inv.typed.clear();  // the overview
    }
    rewritten.push_back("--help");
    a = std::move(rewritten);
  } else if (!known(a[i])) {
    std::vector<std::string> all = verbs;
    all.push_back("help");
    inv.error = unknown_command(a[i], all);
  }
  inv.argv();
  return inv;
}

Error usage_error(const CLI::ParseError& e, CLI::App& app, const Invocation& inv) {
  const std::string& cmd = inv.typed;
  CLI::App* sub = nullptr;
  if (!cmd.empty()) {
    for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == cmd) sub = s;
  }
  const std::string hint =
      sub ? fmt::format("kaicoder help {} shows its options", cmd) : std::string("kaicoder help lists the commands");
  const std::string in = sub ? fmt::format(" for '{}'", cmd) : std::string();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::vector<std::string> left = app.remaining(true);
    for (const auto& w : left)
      if (w.size() > 1 && w.front() == '-') {
        const std::string name = w.substr(0, w.find('='));
        return make_error(
            Errc::usage,
            fmt::format("unknown option {}{}{}", quote_word(name), in, did_you_mean(name, option_names(app, sub))),
            hint);
      }
    if (!left.empty())
      return make_error(Errc::usage, fmt::format("unexpected argument {}{}", quote_word(left.front()), in), hint);
  }
  if (!sub && dynamic_cast<const CLI::RequiredError*>(&e))
    return make_error(Errc::usage, "no command given", "kaicoder help lists the commands");
  const std::string what = make_visible(e.what(), Allow::nothing);
  return make_error(Errc::usage, sub ? fmt::format("{}: {}", cmd, what) : what, hint);
}

}  // namespace kai::cmd
