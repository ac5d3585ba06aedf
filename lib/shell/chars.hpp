#pragma once
// Internal to lib/shell/: the character classes of the shell grammar.

#include <algorithm>
#include <string_view>

namespace kai::shell {

inline bool is_blank(char c) { return c == ' ' || c == '\t'; }
inline bool is_meta(char c) {
  return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_name_start(char c) { return is_alpha(c) || c == '_'; }
inline bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
inline bool is_special_param(char c) {
  return c != '\0' && std::string_view("@*#?-$!").find(c) != std::string_view::npos;
}

inline bool is_name(std::string_view s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_name_char);
}

inline bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

}  // namespace kai::shell
