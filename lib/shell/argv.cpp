// The argv form of a command: split a line into words without a shell, and
// quote words so that they read back the same.

#include <algorithm>

#include "lib/shell/shell.hpp"
#include "lib/shell/chars.hpp"
#include "lib/shell/parser.hpp"

namespace kai {

Result<std::vector<std::string>> tokenize_argv(std::string_view text) {
  shell::ParseState st;
  shell::Parser p(text, 0, st);
  std::string err;
  std::optional<std::vector<std::string>> words = p.plain_words(err);
  if (!words) return make_error(Errc::usage, "cannot split the command: " + err);
  return *words;
}

std::string quote_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    // NAME=value would read back as an assignment, not a word
    size_t eq = a.find('=');
    if (plain && eq != std::string::npos && shell::is_name(std::string_view(a).substr(0, eq))) plain = false;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace kai
