// Word scanning: quotes, escapes, $'...', parameters, substitutions,
// arithmetic, process substitutions and arrays, as written; the expansion
// of what is read here is expand.cpp's.

#include <cstdint>
#include <utility>

#include "lib/shell/chars.hpp"
#include "lib/shell/parser.hpp"

namespace kai::shell {

void add_text(Word& w, std::string_view s, bool quoted) {
  if (!w.segs.empty() && w.segs.back().kind == SegKind::text && w.segs.back().quoted == quoted) {
    w.segs.back().text += s;
    return;
  }
  Seg seg;
  seg.text = std::string(s);
  seg.quoted = quoted;
  w.segs.push_back(std::move(seg));
}

namespace {

// Substitutions nested in a word, to hang under a `dynamic` segment.
void collect_subs(const Word& w, std::vector<ScriptPtr>& out) {
  for (const Seg& s : w.segs) out.insert(out.end(), s.subs.begin(), s.subs.end());
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    cp = std::min<uint32_t>(cp, 0x10FFFF);
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Read up to `max` digits of `base` from s[i...]; advances i.
uint32_t read_number(std::string_view s, size_t& i, int base, size_t max) {
  uint32_t v = 0;
  for (size_t n = 0; n < max && i < s.size(); ++n, ++i) {
    int d = base == 8 ? (s[i] >= '0' && s[i] <= '7' ? s[i] - '0' : -1) : hex_value(s[i]);
    if (d < 0) break;
    v = v * static_cast<uint32_t>(base) + static_cast<uint32_t>(d);
  }
  return v;
}

// bash's $'...': `$'\x72m'` is `rm`, so the words must be decoded before
// they are judged.
std::string decode_ansi_c(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i++];
      continue;
    }
    char e = s[i + 1];
    i += 2;
    switch (e) {
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'e':
      case 'E': out += '\x1b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'c':
        if (i < s.size()) out += static_cast<char>(s[i++] & 0x1F);
        break;
      case 'x': out += static_cast<char>(read_number(s, i, 16, 2)); break;
      case 'u': append_utf8(out, read_number(s, i, 16, 4)); break;
      case 'U': append_utf8(out, read_number(s, i, 16, 8)); break;
      default:
        if (e >= '0' && e <= '7') {
          --i;
          out += static_cast<char>(read_number(s, i, 8, 3));
        } else {
          out += e;  // \\ \' \" \? and unknown escapes
        }
    }
  }
  return out;
}

}  // namespace

Word Parser::read_word() {
  Word w;
  size_t begin = m_pos;
  while (!at_end()) {
    char c = cur();
    if (c == '\\') {
      if (peek(1) == '\n') {
        m_pos += 2;
      } else if (m_pos + 1 < m_src.size()) {
        add_text(w, m_src.substr(m_pos + 1, 1), true);
        m_pos += 2;
      } else {
        add_text(w, "\\", true);
        ++m_pos;
      }
    } else if (c == '\'') {
      read_single(w);
    } else if (c == '"') {
      read_double(w);
    } else if (c == '`') {
      read_backtick(w, false);
    } else if (c == '$') {
      read_dollar(w, false);
    } else if ((c == '<' || c == '>') && peek(1) == '(' && m_pos == begin) {
      read_procsub(w);
    } else if (c == '(' && w.segs.size() == 1 && w.segs[0].kind == SegKind::text && !w.segs[0].quoted &&
               w.segs[0].text.size() > 1 && w.segs[0].text.back() == '=' &&
               is_name(std::string_view(w.segs[0].text).substr(0, w.segs[0].text.find_first_of("+=")))) {
      read_array(w);
    } else if (peek(1) == '(' && (c == '?' || c == '*' || c == '+' || c == '@' || c == '!')) {
      read_extglob(w);
    } else if (is_meta(c)) {
      break;
    } else {
      add_text(w, m_src.substr(m_pos, 1), false);
      ++m_pos;
    }
  }
  w.raw = std::string(m_src.substr(begin, std::min(m_pos, m_src.size()) - begin));
  return w;
}

void Parser::read_single(Word& w) {
  ++m_pos;
  size_t end = m_src.find('\'', m_pos);
  if (end == std::string_view::npos) {
    error("unterminated single quote");
    add_text(w, m_src.substr(m_pos), true);
    m_pos = m_src.size();
    return;
  }
  add_text(w, m_src.substr(m_pos, end - m_pos), true);
  m_pos = end + 1;
}

void Parser::read_double(Word& w) {
  ++m_pos;
  add_text(w, "", true);
  while (true) {
    if (at_end()) {
      error("unterminated double quote");
      return;
    }
    char c = cur();
    if (c == '"') {
      ++m_pos;
      return;
    }
    read_quoted_char(w, true);
  }
}

// One character where double-quote rules hold: inside "…" (`dquote`) or a
// here-document body, where a backslash escapes only $ ` \ (and " inside
// quotes) and drops a newline.
void Parser::read_quoted_char(Word& w, bool dquote) {
  const char c = cur();
  if (c == '\\') {
    const char n = peek(1);
    if (n == '\n') {
      m_pos += 2;
    } else if (n == '$' || n == '`' || n == '\\' || (dquote && n == '"')) {
      add_text(w, std::string(1, n), true);
      m_pos += 2;
    } else {
      add_text(w, "\\", true);
      ++m_pos;
    }
  } else if (c == '$') {
    read_dollar(w, true);
  } else if (c == '`') {
    read_backtick(w, true);
  } else {
    add_text(w, m_src.substr(m_pos, 1), true);
    ++m_pos;
  }
}

void Parser::read_dollar(Word& w, bool in_dq) {
  char n = peek(1);
  if (n == '(') {
    if (peek(2) == '(' && arith_closes()) {
      read_arith(w, in_dq);
    } else {
      read_subst(w, in_dq);
    }
  } else if (n == '{') {
    read_brace_param(w, in_dq);
  } else if (!in_dq && n == '\'') {
    read_ansi_c(w);
  } else if (!in_dq && n == '"') {
    ++m_pos;  // $"..." (locale translation) reads as "..."
    read_double(w);
  } else if (is_name_start(n)) {
    size_t s = m_pos + 1, e = s;
    while (e < m_src.size() && is_name_char(m_src[e])) ++e;
    Seg seg;
    seg.kind = SegKind::param;
    seg.text = std::string(m_src.substr(s, e - s));
    seg.quoted = in_dq;
    w.segs.push_back(std::move(seg));
    m_pos = e;
  } else if (is_digit(n) || is_special_param(n)) {
    Seg seg;
    seg.kind = SegKind::param;
    seg.text = std::string(1, n);
    seg.quoted = in_dq;
    w.segs.push_back(std::move(seg));
    m_pos += 2;
  } else {
    add_text(w, "$", in_dq);
    ++m_pos;
  }
}

// The command list of `$(...)` or `<(...)`, read into `seg` up to its
// closing parenthesis; false (nothing read) past the nesting limit.
bool Parser::read_paren_body(Seg& seg, const char* unterminated) {
  Guard g(*this);
  if (!g.ok) return false;
  Stops stops;
  stops.paren = true;
  seg.subs.push_back(std::make_shared<Script>(parse_list(stops)));
  if (cur() == ')') {
    ++m_pos;
  } else if (!m_st.too_deep) {
    error(unterminated);
  }
  return true;
}

void Parser::read_subst(Word& w, bool in_dq) {
  m_pos += 2;
  Seg seg;
  seg.kind = SegKind::subst;
  seg.quoted = in_dq;
  if (read_paren_body(seg, "unterminated $(")) w.segs.push_back(std::move(seg));
}

// `$((` starts arithmetic only when its parentheses close with `))`;
// otherwise it is a command substitution of a subshell. A plain scan decides
// it, so nested input is never parsed twice.
bool Parser::arith_closes() const {
  int level = 0;
  for (size_t i = m_pos + 3; i < m_src.size(); ++i) {
    if (m_src[i] == '(') {
      ++level;
    } else if (m_src[i] == ')') {
      if (level == 0) return i + 1 < m_src.size() && m_src[i + 1] == ')';
      --level;
    }
  }
  return false;
}

void Parser::read_arith(Word& w, bool in_dq) {
  m_pos += 3;
  Seg seg;
  seg.kind = SegKind::dynamic;
  seg.text = "$((...))";
  seg.quoted = in_dq;
  int level = 0;
  while (true) {
    if (at_end()) {
      error("unterminated $((");
      break;
    }
    char c = cur();
    if (c == '$' || c == '`') {  // substitutions inside arithmetic still run
      Word tmp;
      if (c == '$') {
        read_dollar(tmp, true);
      } else {
        read_backtick(tmp, true);
      }
      collect_subs(tmp, seg.subs);
      continue;
    }
    ++m_pos;
    if (c == '(') ++level;
    if (c == ')') {
      if (level == 0 && cur() == ')') {
        ++m_pos;
        break;
      }
      --level;
    }
  }
  w.segs.push_back(std::move(seg));
}

void Parser::read_brace_param(Word& w, bool in_dq) {
  m_pos += 2;
  std::string content;
  bool plain = true;
  Seg seg;
  seg.kind = SegKind::dynamic;
  seg.text = "${...}";
  seg.quoted = in_dq;
  while (true) {
    if (at_end()) {
      error("unterminated ${");
      break;
    }
    char c = cur();
    if (c == '}') {
      ++m_pos;
      break;
    }
    Word tmp;
    if (c == '\\') {
      advance(2);
      plain = false;
    } else if (c == '\'' && !in_dq) {
      read_single(tmp);
      plain = false;
    } else if (c == '"') {
      read_double(tmp);
      plain = false;
    } else if (c == '$') {
      read_dollar(tmp, true);
      plain = false;
    } else if (c == '`') {
      read_backtick(tmp, true);
      plain = false;
    } else {
      content += c;
      ++m_pos;
    }
    collect_subs(tmp, seg.subs);
  }
  if (plain && (is_name(content) || all_digits(content) || (content.size() == 1 && is_special_param(content[0])))) {
    seg.kind = SegKind::param;
    seg.text = content;
  }
  w.segs.push_back(std::move(seg));
}

void Parser::read_backtick(Word& w, bool in_dq) {
  ++m_pos;
  std::string body;
  while (true) {
    if (at_end()) {
      error("unterminated backquote");
      break;
    }
    char c = cur();
    if (c == '`') {
      ++m_pos;
      break;
    }
    char n = peek(1);
    if (c == '\\' && (n == '$' || n == '`' || n == '\\' || (in_dq && n == '"'))) {
      body += n;
      m_pos += 2;
      continue;
    }
    body += c;
    ++m_pos;
  }
  Seg seg;
  seg.kind = SegKind::subst;
  seg.quoted = in_dq;
  Guard g(*this);
  if (!g.ok) return;
  Parser sub(body, m_depth, m_st);
  seg.subs.push_back(std::make_shared<Script>(sub.parse_top()));
  w.segs.push_back(std::move(seg));
}

void Parser::read_procsub(Word& w) {
  Seg seg;
  seg.kind = SegKind::procsub;
  seg.text = std::string(1, cur());
  m_pos += 2;
  if (read_paren_body(seg, "unterminated process substitution")) w.segs.push_back(std::move(seg));
}

void Parser::read_ansi_c(Word& w) {
  m_pos += 2;
  size_t s = m_pos;
  while (!at_end() && cur() != '\'') advance(cur() == '\\' ? 2 : 1);
  std::string_view raw = m_src.substr(s, std::min(m_pos, m_src.size()) - s);
  if (at_end()) {
    error("unterminated $'");
  } else {
    ++m_pos;
  }
  add_text(w, decode_ansi_c(raw), true);
}

void Parser::read_extglob(Word& w) {
  size_t s = m_pos;
  m_pos += 2;
  int level = 1;
  while (!at_end() && level > 0) {
    char c = cur();
    if (c == '\\') {
      advance(2);
      continue;
    }
    if (c == '\n') break;
    if (c == '(') ++level;
    if (c == ')') --level;
    ++m_pos;
  }
  if (level > 0) error("unterminated pattern");
  add_text(w, m_src.substr(s, std::min(m_pos, m_src.size()) - s), false);
}

// name=(a b c): the elements are only known at run time, but substitutions
// inside them run.
void Parser::read_array(Word& w) {
  ++m_pos;
  Seg seg;
  seg.kind = SegKind::dynamic;
  seg.text = "(...)";
  while (true) {
    skip_blanks();
    if (at_end()) {
      error("unterminated array");
      break;
    }
    char c = cur();
    if (c == '\n') {
      consume_newline();
    } else if (c == ')') {
      ++m_pos;
      break;
    } else if (is_meta(c) && !((c == '<' || c == '>') && peek(1) == '(')) {
      ++m_pos;
    } else {
      collect_subs(read_word(), seg.subs);
    }
  }
  w.segs.push_back(std::move(seg));
}

std::optional<std::vector<std::string>> Parser::plain_words(std::string& err) {
  std::vector<std::string> out;
  while (true) {
    skip_blanks();
    if (at_end()) break;
    if (is_meta(cur())) {
      err = std::string("'") + cur() + "' needs a shell";
      return std::nullopt;
    }
    Word w = read_word();
    std::optional<std::string> v = literal(w);
    if (!v) {
      err = "'" + w.raw + "' needs a shell to expand";
      return std::nullopt;
    }
    out.push_back(std::move(*v));
  }
  if (!m_st.errors.empty()) {
    err = m_st.errors.front();
    return std::nullopt;
  }
  return out;
}

}  // namespace kai::shell
