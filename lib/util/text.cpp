#include "lib/util/text.hpp"

#include <cstdio>

namespace kai {

namespace {

bool is_bidi(uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
         cp == 0x061C;
}

bool is_invisible(uint32_t cp) {
  return (cp >= 0x200B && cp <= 0x200D) || (cp >= 0x2060 && cp <= 0x2064) || cp == 0xFEFF || cp == 0x00AD ||
         cp == 0x180E || cp == 0x3164 || cp == 0x115F || cp == 0x1160 || cp == 0xFFA0;
}

// A C0 control or DEL at s[i] that `allow` does not keep.
bool hidden_ascii(std::string_view s, size_t i, Allow allow) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c >= 0x20 && c != 0x7F) return false;
  if (c == '\t') return allow == Allow::nothing;
  if (c == '\n') return allow != Allow::tab_newline && allow != Allow::script;
  if (c == '\r') return !(allow == Allow::tab_newline && i + 1 < s.size() && s[i + 1] == '\n');
  return true;
}

std::string_view ascii_kind(unsigned char c) {
  switch (c) {
    case 0x1B: return "escape";
    case '\r': return "carriage return";
    case '\n': return "newline";
    case '\b': return "backspace";
    case 0x7F: return "delete";
    case 0: return "NUL";
    default: return "control character";
  }
}

// Decodes the UTF-8 sequence at s[i] (s[i] >= 0x80). Returns its length, 0
// when it is not valid UTF-8 (overlong, surrogate, truncated, out of range).
size_t decode(std::string_view s, size_t i, uint32_t& cp) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t len = b >= 0xC2 && b < 0xE0 ? 2 : b >= 0xE0 && b < 0xF0 ? 3 : b >= 0xF0 && b < 0xF5 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  cp = len == 2 ? b & 0x1Fu : len == 3 ? b & 0x0Fu : b & 0x07u;
  for (size_t k = 1; k < len; ++k) {
    auto cb = static_cast<unsigned char>(s[i + k]);
    if ((cb & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cb & 0x3Fu);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return len;
}

}  // namespace

std::optional<HiddenChar> find_hidden(std::string_view s, Allow allow, size_t from) {
  for (size_t i = from; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (hidden_ascii(s, i, allow)) return HiddenChar{i, 1, b, false, ascii_kind(b)};
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t len = decode(s, i, cp);
    if (len == 0) return HiddenChar{i, 1, b, true, "invalid UTF-8"};
    if (cp <= 0x9F) return HiddenChar{i, len, cp, false, "control character"};
    if (is_bidi(cp)) return HiddenChar{i, len, cp, false, "bidirectional control"};
    if (is_invisible(cp)) return HiddenChar{i, len, cp, false, "invisible character"};
    if (cp == 0x2028 || cp == 0x2029) return HiddenChar{i, len, cp, false, "line separator"};
    i += len;
  }
  return std::nullopt;
}

std::string code_point_name(uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

std::string make_visible(std::string_view text, Allow allow) {
  std::optional<HiddenChar> h = find_hidden(text, allow);
  if (!h) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  size_t done = 0;
  for (; h; h = find_hidden(text, allow, done)) {
    out.append(text.substr(done, h->at - done));
    char buf[16];
    if (h->invalid || h->cp < 0x80) {
      switch (h->cp) {
        case 0x1B: out += "\\e"; break;
        case '\r': out += "\\r"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default: std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(h->cp)); out += buf;
      }
    } else {
      out += '<';
      out += code_point_name(h->cp);
      out += '>';
    }
    done = h->at + h->len;
  }
  out.append(text.substr(done));
  return out;
}

std::optional<size_t> first_invalid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    uint32_t cp = 0;
    size_t len = decode(text, i, cp);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::optional<std::string> not_utf8(std::string_view what, std::string_view text) {
  std::optional<size_t> at = first_invalid_utf8(text);
  if (!at) return std::nullopt;
  return std::string(what) + " is not valid UTF-8 (byte " + std::to_string(*at) + ")";
}

bool has_hidden_characters(std::string_view text, Allow allow) { return find_hidden(text, allow).has_value(); }
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

std::optional<std::string> base64_decode(std::string_view s) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : s) {
    int v = ch >= 'A' && ch <= 'Z'     ? ch - 'A'
            : ch >= 'a' && ch <= 'z'   ? ch - 'a' + 26
            : (ch >= '0' && ch <= '9') ? ch - '0' + 52
            : ch == '+' || ch == '-'   ? 62
            : ch == '/' || ch == '_'   ? 63
                                       : -1;
    if (ch == '=') break;
    if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') continue;
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

std::string base64_encode(std::string_view bytes) {
  static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += k_alphabet[(n >> 18) & 63];
    out += k_alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? k_alphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? k_alphabet[n & 63] : '=';
  }
  return out;
}

}  // namespace kai
