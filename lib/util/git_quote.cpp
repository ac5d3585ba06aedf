#include "lib/util/git_quote.hpp"

#include <algorithm>

namespace kai {

std::string quote_c_style(std::string_view prefix, std::string_view path) {
  std::string whole = std::string(prefix) + std::string(path);
  bool plain = std::none_of(whole.begin(), whole.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u >= 0x7f || c == '"' || c == '\\';
  });
  if (plain) return whole;
  std::string out = "\"";
  for (char c : whole) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\a': out += "\\a"; continue;
      case '\b': out += "\\b"; continue;
      case '\t': out += "\\t"; continue;
      case '\n': out += "\\n"; continue;
      case '\v': out += "\\v"; continue;
      case '\f': out += "\\f"; continue;
      case '\r': out += "\\r"; continue;
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      default: break;
    }
    if (u < 0x20 || u >= 0x7f) {
      out += '\\';
      out += static_cast<char>('0' + (u >> 6));
      out += static_cast<char>('0' + ((u >> 3) & 7));
      out += static_cast<char>('0' + (u & 7));
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

Result<std::string> unquote_c_style(std::string_view s, size_t& end) {
  std::string out;
  auto bad = [] { return make_error(Errc::usage, "malformed quoted path in the patch"); };
  if (s.empty() || s[0] != '"') return bad();
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      end = i + 1;
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= s.size()) return bad();
    c = s[i];
    switch (c) {
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'v': out += '\v'; break;
      case 'f': out += '\f'; break;
      case 'r': out += '\r'; break;
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      default: {
        if (c < '0' || c > '3' || i + 2 >= s.size()) return bad();
        unsigned v = 0;
        for (size_t k = 0; k < 3; ++k) {
          char d = s[i + k];
          if (d < '0' || d > '7') return bad();
          v = v * 8 + static_cast<unsigned>(d - '0');
        }
        out += static_cast<char>(v);
        i += 2;
      }
    }
  }
  return bad();
}

}  // namespace kai
