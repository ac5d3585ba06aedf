#include "lib/util/text.hpp"

#include <cstdio>

namespace kai {

namespace {

// Length of a hidden Unicode character starting at s[i] (UTF-8), else 0.
size_t hidden_unicode(std::string_view s, size_t i, unsigned& cp) {
  if (i + 2 >= s.size()) return 0;
  auto b0 = static_cast<unsigned char>(s[i]), b1 = static_cast<unsigned char>(s[i + 1]),
       b2 = static_cast<unsigned char>(s[i + 2]);
  if (b0 == 0xD8 && b1 == 0x9C) {  // U+061C ARABIC LETTER MARK (2 bytes)
    cp = 0x061C;
    return 2;
  }
  if ((b0 & 0xF0) != 0xE0 || (b1 & 0xC0) != 0x80 || (b2 & 0xC0) != 0x80) return 0;
  cp = ((b0 & 0x0Fu) << 12) | ((b1 & 0x3Fu) << 6) | (b2 & 0x3Fu);
  bool hidden = (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) ||
                cp == 0x2060 || cp == 0xFEFF;
  return hidden ? 3 : 0;
}

bool hidden_control(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c == '\n' || c == '\t') return false;
  if (c == '\r') return !(i + 1 < s.size() && s[i + 1] == '\n');
  return c < 0x20 || c == 0x7F;
}

}  // namespace

std::string make_visible(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned cp = 0;
    if (size_t n = hidden_unicode(text, i, cp)) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "<U+%04X>", cp);
      out += buf;
      i += n;
    } else if (hidden_control(text, i)) {
      auto c = static_cast<unsigned char>(text[i]);
      out += '^';
      out += c == 0x7F ? '?' : static_cast<char>(c + 0x40);
      ++i;
    } else {
      out += text[i++];
    }
  }
  return out;
}

bool has_hidden_characters(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned cp = 0;
    if (hidden_unicode(text, i, cp) || hidden_control(text, i)) return true;
  }
  return false;
}

size_t utf8_length(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string cut_to_length(std::string_view text, size_t max) {
  if (utf8_length(text) <= max) return std::string(text);
  if (max == 0) return {};
  size_t seen = 0, i = 0;
  for (; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == max - 1) break;  // max - 1 kept, then "…"
  return std::string(text.substr(0, i)) + "\u2026";
}

}  // namespace kai
