#include "lib/shell_parse.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "lib/shell.hpp"

namespace kai::shell {
namespace {

constexpr size_t k_max_errors = 16;
constexpr size_t k_max_fields = 256;  // brace expansion beyond this is not followed
constexpr int k_max_brace_depth = 32;
constexpr size_t k_max_brace_groups = 64;
constexpr size_t k_max_brace_word = 4096;

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_meta(char c) {
  return is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_start(char c) { return is_alpha(c) || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
bool is_special_param(char c) { return c != '\0' && std::string_view("@*#?-$!").find(c) != std::string_view::npos; }

bool is_name(std::string_view s) {
  if (s.empty() || !is_name_start(s[0])) return false;
  return std::all_of(s.begin(), s.end(), is_name_char);
}

bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_digit); }

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
      case 'e': case 'E': out += '\x1b'; break;
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

struct Pending {
  std::string delim;
  bool strip_tabs = false;
  bool quoted = false;
  std::shared_ptr<Word> body;
};

struct ParseState {
  std::vector<std::string> errors;
  bool too_deep = false;
};

struct Stops {
  bool paren = false;     // `)` ends the list
  bool case_arm = false;  // `;;`, `;&`, `;;&` end the list
  std::vector<std::string_view> words;
};

ScriptPtr script_of(Command c) {
  auto s = std::make_shared<Script>();
  Pipeline p;
  p.cmds.push_back(std::move(c));
  s->pipelines.push_back(std::move(p));
  return s;
}

void append_script(Script& to, Script from) {
  for (auto& p : from.pipelines) to.pipelines.push_back(std::move(p));
}

class Parser {
public:
  Parser(std::string_view src, int depth, ParseState& st) : m_src(src), m_depth(depth), m_st(st) {}

  Script parse_top() {
    Script s = parse_list({});
    if (!m_pending.empty()) error("here-document without a body");
    return s;
  }

  // The whole input as the body of an unquoted here-document.
  Word read_heredoc_word();

  // Plain words for tokenize_argv; nullopt (with `err`) when a shell is needed.
  std::optional<std::vector<std::string>> plain_words(std::string& err);

private:
  // Nesting guard: beyond k_max_nesting the rest of the input is dropped and
  // the parse reported as too deep (the caller blocks such a command).
  struct Guard {
    Parser& p;
    bool ok;
    explicit Guard(Parser& parser) : p(parser), ok(parser.m_depth < k_max_nesting) {
      if (ok) {
        ++p.m_depth;
      } else {
        p.m_st.too_deep = true;
        p.m_pos = p.m_src.size();
      }
    }
    ~Guard() {
      if (ok) --p.m_depth;
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
  };

  bool at_end() const { return m_pos >= m_src.size(); }
  char cur() const { return at_end() ? '\0' : m_src[m_pos]; }
  char peek(size_t k) const { return m_pos + k < m_src.size() ? m_src[m_pos + k] : '\0'; }
  bool starts(std::string_view s) const { return m_src.substr(std::min(m_pos, m_src.size()), s.size()) == s; }
  void advance(size_t n) { m_pos = std::min(m_pos + n, m_src.size()); }
  void error(std::string msg) {
    if (m_st.errors.size() < k_max_errors) m_st.errors.push_back(std::move(msg));
  }

  void skip_blanks();
  void consume_newline();
  void skip_newlines();
  void read_heredoc_body(Pending& p);
  std::string_view peek_word() const;
  void expect_word(std::string_view kw);

  Script parse_list(const Stops& stops);
  Pipeline parse_pipeline();
  Command parse_command();
  Command parse_compound(std::string_view kw);
  Command parse_simple();
  Command parse_subshell();
  Command parse_group();
  Command parse_if();
  Command parse_while(std::string_view kw);
  Command parse_for(std::string_view kw);
  Command parse_case();
  Command parse_function_keyword();
  Command parse_double_bracket();
  void parse_function_body(Command& c);
  bool at_redirection() const;
  void parse_redir(Command& c);
  void parse_trailing_redirs(Command& c);
  bool split_assignment(Word& w, Command& c);

  Word read_word();
  void read_single(Word& w);
  void read_double(Word& w);
  void read_dollar(Word& w, bool in_dq);
  void read_subst(Word& w, bool in_dq);
  bool arith_closes() const;
  void read_arith(Word& w, bool in_dq);
  void read_brace_param(Word& w, bool in_dq);
  void read_backtick(Word& w, bool in_dq);
  void read_procsub(Word& w);
  void read_ansi_c(Word& w);
  void read_extglob(Word& w);
  void read_array(Word& w);

  std::string_view m_src;
  size_t m_pos = 0;
  int m_depth = 0;
  ParseState& m_st;
  std::vector<Pending> m_pending;
};

void Parser::skip_blanks() {
  while (!at_end()) {
    char c = cur();
    if (is_blank(c)) {
      ++m_pos;
    } else if (c == '\\' && peek(1) == '\n') {
      m_pos += 2;
    } else if (c == '#') {
      while (!at_end() && cur() != '\n') ++m_pos;
    } else {
      break;
    }
  }
}

// Here-document bodies start on the line after their operator, so they are
// read when that line's newline is consumed.
void Parser::consume_newline() {
  advance(1);
  std::vector<Pending> pending = std::move(m_pending);
  m_pending.clear();
  for (auto& p : pending) read_heredoc_body(p);
}

void Parser::skip_newlines() {
  while (true) {
    skip_blanks();
    if (cur() != '\n') return;
    consume_newline();
  }
}

void Parser::read_heredoc_body(Pending& p) {
  std::string text;
  bool found = false;
  while (!at_end()) {
    size_t eol = m_src.find('\n', m_pos);
    size_t end = eol == std::string_view::npos ? m_src.size() : eol;
    std::string_view line = m_src.substr(m_pos, end - m_pos);
    if (p.strip_tabs)
      while (!line.empty() && line[0] == '\t') line.remove_prefix(1);
    m_pos = eol == std::string_view::npos ? m_src.size() : eol + 1;
    if (line == p.delim) {
      found = true;
      break;
    }
    text += line;
    text += '\n';
  }
  if (!found) error("here-document '" + p.delim + "' not terminated");
  if (p.quoted) {
    Word w;
    add_text(w, text, true);
    w.raw = text;
    *p.body = std::move(w);
    return;
  }
  Guard g(*this);
  if (!g.ok) return;
  Parser sub(text, m_depth, m_st);
  *p.body = sub.read_heredoc_word();
}

Word Parser::read_heredoc_word() {
  Word w;
  add_text(w, "", true);
  while (!at_end()) {
    char c = cur();
    if (c == '\\') {
      char n = peek(1);
      if (n == '\n') {
        m_pos += 2;
      } else if (n == '$' || n == '`' || n == '\\') {
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
  w.raw = std::string(m_src);
  return w;
}

// The next token when it is a plain unquoted word: reserved words are only
// recognised in this form.
std::string_view Parser::peek_word() const {
  size_t e = std::min(m_pos, m_src.size());
  while (e < m_src.size()) {
    char c = m_src[e];
    if (is_meta(c) || c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') break;
    ++e;
  }
  if (e < m_src.size() && !is_meta(m_src[e])) return {};
  return m_src.substr(std::min(m_pos, m_src.size()), e - std::min(m_pos, m_src.size()));
}

void Parser::expect_word(std::string_view kw) {
  skip_newlines();
  if (peek_word() == kw) {
    advance(kw.size());
  } else if (!m_st.too_deep) {
    error("missing '" + std::string(kw) + "'");
  }
}

Script Parser::parse_list(const Stops& stops) {
  Script s;
  while (true) {
    skip_blanks();
    if (at_end()) break;
    char c = cur();
    if (c == '\n') {
      consume_newline();
      continue;
    }
    if (c == ')') {
      if (stops.paren) break;
      error("unexpected ')'");
      ++m_pos;
      continue;
    }
    if (c == ';') {
      if (stops.case_arm && (peek(1) == ';' || peek(1) == '&')) break;
      error("unexpected ';'");
      ++m_pos;
      continue;
    }
    if ((c == '&' && peek(1) != '>') || c == '|') {
      error(std::string("unexpected '") + c + "'");
      ++m_pos;
      continue;
    }
    std::string_view kw = peek_word();
    if (!kw.empty() && std::find(stops.words.begin(), stops.words.end(), kw) != stops.words.end()) break;
    size_t before = m_pos;
    s.pipelines.push_back(parse_pipeline());
    skip_blanks();
    if (starts("&&") || starts("||")) {
      m_pos += 2;
      skip_newlines();
    } else if (cur() == ';' && peek(1) != ';' && peek(1) != '&') {
      ++m_pos;
    } else if (cur() == '&' && peek(1) != '>') {
      s.pipelines.back().background = true;
      ++m_pos;
    } else if (m_pos == before && !at_end()) {
      error(std::string("unexpected '") + cur() + "'");
      ++m_pos;
    }
  }
  return s;
}

Pipeline Parser::parse_pipeline() {
  Pipeline p;
  p.cmds.push_back(parse_command());
  while (true) {
    skip_blanks();
    if (cur() != '|' || peek(1) == '|') break;
    advance(peek(1) == '&' ? 2 : 1);  // `|&` also pipes stderr
    skip_newlines();
    p.cmds.push_back(parse_command());
  }
  return p;
}

Command Parser::parse_command() {
  skip_blanks();
  // `!` negates; `! (cmd)` and dash's `!(cmd)` both run cmd.
  while (peek_word() == "!") {
    ++m_pos;
    skip_blanks();
  }
  size_t begin = m_pos;
  std::string_view kw = peek_word();
  if (kw == "time" || kw == "coproc") {
    // `time { ...; }` / `coproc { ...; }`: the keyword times or backgrounds
    // a compound command; before a simple command it is read as a wrapper.
    size_t save = m_pos;
    advance(kw.size());
    skip_blanks();
    if (kw == "time" && peek_word() == "-p") {
      advance(2);
      skip_blanks();
    }
    std::string_view next = peek_word();
    if (cur() != '(' && next != "{") m_pos = save;
    begin = m_pos;
    kw = peek_word();
  }
  Command c = parse_compound(kw);
  size_t end = std::min(m_pos, m_src.size());
  while (end > begin && (is_blank(m_src[end - 1]) || m_src[end - 1] == '\n')) --end;
  c.text = std::string(m_src.substr(std::min(begin, end), end - std::min(begin, end)));
  return c;
}

Command Parser::parse_compound(std::string_view kw) {
  Command c;
  if (cur() == '(') {
    c = parse_subshell();
  } else if (kw == "{") {
    c = parse_group();
  } else if (kw == "if") {
    c = parse_if();
  } else if (kw == "while" || kw == "until") {
    c = parse_while(kw);
  } else if (kw == "for" || kw == "select") {
    c = parse_for(kw);
  } else if (kw == "case") {
    c = parse_case();
  } else if (kw == "function") {
    c = parse_function_keyword();
  } else if (kw == "[[") {
    c = parse_double_bracket();
  } else if (kw == "then" || kw == "else" || kw == "elif" || kw == "fi" || kw == "do" || kw == "done" ||
             kw == "esac" || kw == "}" || kw == "in" || kw == "]]") {
    error("unexpected '" + std::string(kw) + "'");
    advance(kw.size());
    return c;
  } else {
    return parse_simple();
  }
  parse_trailing_redirs(c);
  return c;
}

void Parser::parse_trailing_redirs(Command& c) {
  while (true) {
    skip_blanks();
    if (!at_redirection()) return;
    parse_redir(c);
  }
}

Command Parser::parse_subshell() {
  Command c;
  c.kind = CmdKind::subshell;
  ++m_pos;
  Guard g(*this);
  if (!g.ok) return c;
  Stops stops;
  stops.paren = true;
  auto body = std::make_shared<Script>(parse_list(stops));
  if (cur() == ')') {
    ++m_pos;
  } else if (!m_st.too_deep) {
    error("missing ')'");
  }
  c.body = std::move(body);
  return c;
}

Command Parser::parse_group() {
  Command c;
  c.kind = CmdKind::group;
  ++m_pos;
  Guard g(*this);
  if (!g.ok) return c;
  Stops stops;
  stops.words = {"}"};
  c.body = std::make_shared<Script>(parse_list(stops));
  expect_word("}");
  return c;
}

Command Parser::parse_if() {
  Command c;
  c.kind = CmdKind::group;
  advance(2);
  Guard g(*this);
  if (!g.ok) return c;
  Script all;
  Stops cond, body;
  cond.words = {"then"};
  body.words = {"elif", "else", "fi"};
  append_script(all, parse_list(cond));
  expect_word("then");
  append_script(all, parse_list(body));
  while (peek_word() == "elif") {
    advance(4);
    append_script(all, parse_list(cond));
    expect_word("then");
    append_script(all, parse_list(body));
  }
  if (peek_word() == "else") {
    advance(4);
    Stops fi;
    fi.words = {"fi"};
    append_script(all, parse_list(fi));
  }
  expect_word("fi");
  c.body = std::make_shared<Script>(std::move(all));
  return c;
}

Command Parser::parse_while(std::string_view kw) {
  Command c;
  c.kind = CmdKind::group;
  advance(kw.size());
  Guard g(*this);
  if (!g.ok) return c;
  Script all;
  Stops cond, body;
  cond.words = {"do"};
  body.words = {"done"};
  append_script(all, parse_list(cond));
  expect_word("do");
  append_script(all, parse_list(body));
  expect_word("done");
  c.body = std::make_shared<Script>(std::move(all));
  return c;
}

Command Parser::parse_for(std::string_view kw) {
  Command c;
  c.kind = CmdKind::for_loop;
  advance(kw.size());
  Guard g(*this);
  if (!g.ok) return c;
  skip_blanks();
  if (starts("((")) {
    // for ((i = 0; i < n; i++)): arithmetic only
    int level = 0;
    while (!at_end()) {
      char ch = cur();
      ++m_pos;
      if (ch == '(') ++level;
      if (ch == ')' && --level == 0) break;
    }
  } else {
    Word name = read_word();
    c.name = literal(name).value_or("");
    skip_newlines();
    if (peek_word() == "in") {
      advance(2);
      c.has_in = true;
      while (true) {
        skip_blanks();
        if (at_end() || cur() == ';' || cur() == '\n') break;
        if (is_meta(cur())) {
          error("unexpected '" + std::string(1, cur()) + "' in a for list");
          break;
        }
        c.words.push_back(read_word());
      }
    }
  }
  skip_blanks();
  if (cur() == ';') ++m_pos;
  skip_newlines();
  Stops body;
  if (peek_word() == "{") {
    ++m_pos;
    body.words = {"}"};
    c.body = std::make_shared<Script>(parse_list(body));
    expect_word("}");
  } else {
    expect_word("do");
    body.words = {"done"};
    c.body = std::make_shared<Script>(parse_list(body));
    expect_word("done");
  }
  return c;
}

Command Parser::parse_case() {
  Command c;
  c.kind = CmdKind::group;
  advance(4);
  Guard g(*this);
  if (!g.ok) return c;
  skip_blanks();
  if (!at_end() && !is_meta(cur())) c.words.push_back(read_word());
  expect_word("in");
  Script all;
  Stops arm;
  arm.case_arm = true;
  arm.words = {"esac"};
  while (true) {
    skip_newlines();
    if (at_end()) {
      if (!m_st.too_deep) error("missing 'esac'");
      break;
    }
    if (peek_word() == "esac") {
      advance(4);
      break;
    }
    if (cur() == '(') ++m_pos;
    while (true) {  // patterns, each of which may hold substitutions
      skip_blanks();
      if (at_end()) break;
      if (cur() == ')') {
        ++m_pos;
        break;
      }
      if (cur() == '|') {
        ++m_pos;
        continue;
      }
      if (is_meta(cur())) {
        error("bad case pattern");
        ++m_pos;
        break;
      }
      c.words.push_back(read_word());
    }
    append_script(all, parse_list(arm));
    if (starts(";;&")) {
      m_pos += 3;
    } else if (starts(";;") || starts(";&")) {
      m_pos += 2;
    }
  }
  c.body = std::make_shared<Script>(std::move(all));
  return c;
}

void Parser::parse_function_body(Command& c) {
  skip_newlines();
  Guard g(*this);
  if (!g.ok) return;
  c.body = script_of(parse_command());
}

Command Parser::parse_function_keyword() {
  Command c;
  c.kind = CmdKind::function;
  advance(8);
  skip_blanks();
  Word name = read_word();
  c.name = literal(name).value_or(name.raw);
  skip_blanks();
  if (cur() == '(') {
    ++m_pos;
    skip_blanks();
    if (cur() == ')') ++m_pos;
  }
  parse_function_body(c);
  return c;
}

// [[ ... ]]: `<`, `>`, `&&`, `(` are operators of the test here, not of the
// shell; only the words (and their substitutions) matter.
Command Parser::parse_double_bracket() {
  Command c;
  c.kind = CmdKind::group;
  advance(2);
  while (true) {
    skip_blanks();
    if (at_end()) {
      error("missing ']]'");
      break;
    }
    if (cur() == '\n') {
      consume_newline();
      continue;
    }
    if (peek_word() == "]]") {
      advance(2);
      break;
    }
    char ch = cur();
    if (is_meta(ch) && !((ch == '<' || ch == '>') && peek(1) == '(')) {
      ++m_pos;
      continue;
    }
    c.words.push_back(read_word());
  }
  return c;
}

bool Parser::at_redirection() const {
  size_t p = std::min(m_pos, m_src.size());
  while (p < m_src.size() && is_digit(m_src[p])) ++p;
  if (p < m_src.size() && (m_src[p] == '<' || m_src[p] == '>')) return !(p + 1 < m_src.size() && m_src[p + 1] == '(');
  return p == m_pos && starts("&>");
}

void Parser::parse_redir(Command& c) {
  Redir r;
  if (is_digit(cur())) {
    int fd = 0;
    while (is_digit(cur())) {
      fd = fd > 99999 ? fd : fd * 10 + (cur() - '0');
      ++m_pos;
    }
    r.fd = fd;
  }
  struct Op {
    std::string_view text;
    RedirOp op;
  };
  static constexpr Op k_ops[] = {
      {"&>>", RedirOp::append_err}, {"&>", RedirOp::out_err}, {"<<<", RedirOp::herestring},
      {"<<-", RedirOp::heredoc},    {"<<", RedirOp::heredoc}, {"<>", RedirOp::inout},
      {"<&", RedirOp::dup_in},      {"<", RedirOp::in},       {">>", RedirOp::append},
      {">|", RedirOp::clobber},     {">&", RedirOp::dup_out}, {">", RedirOp::out},
  };
  bool strip_tabs = false;
  for (const Op& op : k_ops) {
    if (!starts(op.text)) continue;
    r.op = op.op;
    strip_tabs = op.text == "<<-";
    advance(op.text.size());
    break;
  }
  skip_blanks();
  if (at_end() || (is_meta(cur()) && !((cur() == '<' || cur() == '>') && peek(1) == '('))) {
    error("redirection without a target");
    c.redirs.push_back(std::move(r));
    return;
  }
  r.target = read_word();
  if (r.op == RedirOp::heredoc) {
    std::string delim;
    for (const Seg& s : r.target.segs) delim += s.kind == SegKind::text ? s.text : "$" + s.text;
    r.quoted_delim = r.target.raw.find_first_of("'\"\\") != std::string::npos;
    r.body = std::make_shared<Word>();
    m_pending.push_back({delim, strip_tabs, r.quoted_delim, r.body});
  }
  c.redirs.push_back(std::move(r));
}

bool Parser::split_assignment(Word& w, Command& c) {
  if (w.segs.empty() || w.segs[0].kind != SegKind::text || w.segs[0].quoted) return false;
  const std::string& t = w.segs[0].text;
  size_t eq = t.find('=');
  if (eq == std::string::npos) return false;
  size_t name_end = eq > 0 && t[eq - 1] == '+' ? eq - 1 : eq;
  if (!is_name(std::string_view(t).substr(0, name_end))) return false;
  Assign a;
  a.name = t.substr(0, name_end);
  a.value.raw = w.raw;
  std::string rest = t.substr(eq + 1);
  if (!rest.empty()) add_text(a.value, rest, false);
  for (size_t i = 1; i < w.segs.size(); ++i) a.value.segs.push_back(std::move(w.segs[i]));
  c.assigns.push_back(std::move(a));
  return true;
}

Command Parser::parse_simple() {
  Command c;
  while (true) {
    skip_blanks();
    if (at_end()) break;
    char ch = cur();
    if (at_redirection()) {
      parse_redir(c);
      continue;
    }
    if (ch == '(') {
      size_t save = m_pos;
      ++m_pos;
      skip_blanks();
      if (cur() == ')' && c.words.size() == 1 && c.assigns.empty() && c.redirs.empty()) {
        ++m_pos;
        c.kind = CmdKind::function;
        c.name = literal(c.words[0]).value_or(c.words[0].raw);
        c.words.clear();
        parse_function_body(c);
        return c;
      }
      m_pos = save;
      error("unexpected '('");
      break;
    }
    if (is_meta(ch) && !((ch == '<' || ch == '>') && peek(1) == '(')) break;
    Word w = read_word();
    if (w.raw.empty()) {  // cannot happen on a non-meta character; keeps the loop finite
      ++m_pos;
      continue;
    }
    if (c.words.empty() && split_assignment(w, c)) continue;
    c.words.push_back(std::move(w));
  }
  return c;
}

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
    if (c == '\\') {
      char n = peek(1);
      if (n == '\n') {
        m_pos += 2;
      } else if (n == '$' || n == '`' || n == '"' || n == '\\') {
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

void Parser::read_subst(Word& w, bool in_dq) {
  m_pos += 2;
  Seg seg;
  seg.kind = SegKind::subst;
  seg.quoted = in_dq;
  Guard g(*this);
  if (!g.ok) return;
  Stops stops;
  stops.paren = true;
  seg.subs.push_back(std::make_shared<Script>(parse_list(stops)));
  if (cur() == ')') {
    ++m_pos;
  } else if (!m_st.too_deep) {
    error("unterminated $(");
  }
  w.segs.push_back(std::move(seg));
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
  Guard g(*this);
  if (!g.ok) return;
  Stops stops;
  stops.paren = true;
  seg.subs.push_back(std::make_shared<Script>(parse_list(stops)));
  if (cur() == ')') {
    ++m_pos;
  } else if (!m_st.too_deep) {
    error("unterminated process substitution");
  }
  w.segs.push_back(std::move(seg));
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

// ---- expansion ----

enum : char { k_lit = 0, k_quoted = 1, k_expanded = 2 };  // per character of a field

struct Piece {
  std::string value;
  std::string mask;
};

bool is_ifs(char c) { return c == ' ' || c == '\t' || c == '\n'; }

enum class Braces { literal, expanded, too_many };

// A sequence `{1..9}`, `{a..e}`, `{0..20..5}` of at most `budget` elements.
Braces brace_sequence(std::string_view body, std::vector<std::string>& out, size_t budget) {
  size_t dots = body.find("..");
  if (dots == std::string_view::npos) return Braces::literal;
  std::string_view a = body.substr(0, dots), rest = body.substr(dots + 2);
  size_t dots2 = rest.find("..");
  std::string_view b = rest.substr(0, dots2);
  long step = 1;
  auto number = [](std::string_view s, long& v) {
    bool neg = !s.empty() && s[0] == '-';
    if (neg) s.remove_prefix(1);
    if (!all_digits(s) || s.size() > 9) return false;
    v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    if (neg) v = -v;
    return true;
  };
  if (dots2 != std::string_view::npos && (!number(rest.substr(dots2 + 2), step) || step == 0)) return Braces::literal;
  step = step < 0 ? -step : step;
  long x = 0, y = 0;
  bool chars = a.size() == 1 && b.size() == 1 && is_alpha(a[0]) && is_alpha(b[0]);
  if (chars) {
    x = a[0];
    y = b[0];
  } else if (!number(a, x) || !number(b, y)) {
    return Braces::literal;
  }
  long count = (x > y ? x - y : y - x) / step + 1;
  if (count > static_cast<long>(budget)) return Braces::too_many;
  for (long i = 0, v = x; i < count; ++i, v += (x > y ? -step : step))
    out.push_back(chars ? std::string(1, static_cast<char>(v)) : std::to_string(v));
  return Braces::expanded;
}

// Alternatives of the brace group (b, e) of p.
Braces brace_alternatives(const Piece& p, size_t b, size_t e, std::vector<Piece>& alts, size_t budget) {
  std::vector<size_t> commas;
  int level = 0;
  for (size_t i = b + 1; i < e; ++i) {
    if (p.mask[i] != k_lit) continue;
    if (p.value[i] == '{') ++level;
    if (p.value[i] == '}') --level;
    if (p.value[i] == ',' && level == 0) commas.push_back(i);
  }
  if (commas.empty()) {
    std::vector<std::string> seq;
    Braces r = brace_sequence(std::string_view(p.value).substr(b + 1, e - b - 1), seq, budget);
    for (auto& s : seq) alts.push_back({s, std::string(s.size(), k_lit)});
    return r;
  }
  commas.push_back(e);
  size_t start = b + 1;
  for (size_t c : commas) {
    alts.push_back({p.value.substr(start, c - start), p.mask.substr(start, c - start)});
    start = c + 1;
  }
  return Braces::expanded;
}

// bash brace expansion of the unquoted literal parts; false when the result
// would pass k_max_fields, or the word is too big to try (the word is then
// taken as unknown rather than literally: `{rm,-rf,/}` is `rm -rf /`).
bool brace_expand(const Piece& p, std::vector<Piece>& out, int depth) {
  if (depth > k_max_brace_depth) return false;
  size_t opens = 0;
  for (size_t i = 0; i < p.value.size(); ++i) opens += p.value[i] == '{' && p.mask[i] == k_lit;
  if (opens == 0) {
    out.push_back(p);
    return out.size() <= k_max_fields;
  }
  if (opens > k_max_brace_groups || p.value.size() > k_max_brace_word) return false;
  for (size_t b = 0; b < p.value.size(); ++b) {
    if (p.value[b] != '{' || p.mask[b] != k_lit) continue;
    int level = 0;
    size_t e = b;
    for (size_t i = b; i < p.value.size(); ++i) {
      if (p.mask[i] != k_lit) continue;
      if (p.value[i] == '{') ++level;
      if (p.value[i] == '}' && --level == 0) {
        e = i;
        break;
      }
    }
    if (e == b) continue;
    std::vector<Piece> alts;
    Braces r = brace_alternatives(p, b, e, alts, k_max_fields);
    if (r == Braces::too_many) return false;
    if (r == Braces::literal) continue;
    for (const Piece& a : alts) {
      Piece next{p.value.substr(0, b) + a.value + p.value.substr(e + 1), p.mask.substr(0, b) + a.mask + p.mask.substr(e + 1)};
      if (!brace_expand(next, out, depth + 1)) return false;
      if (out.size() > k_max_fields) return false;
    }
    return true;
  }
  out.push_back(p);
  return out.size() <= k_max_fields;
}

bool has_glob(const Piece& p) {
  for (size_t i = 0; i < p.value.size(); ++i) {
    if (p.mask[i] == k_quoted) continue;
    char c = p.value[i];
    if (c == '*' || c == '?') return true;
    if (c == '[' && p.value.find(']', i + 1) != std::string::npos) return true;
    if (p.mask[i] == k_lit && i + 1 < p.value.size() && p.value[i + 1] == '(' && (c == '+' || c == '@' || c == '!'))
      return true;
  }
  return false;
}

class FieldBuilder {
public:
  FieldBuilder(const Word& w, bool braces) : m_raw(w.raw), m_braces(braces) {}

  Field& flags() { return m_flags; }

  void add(std::string_view s, char mask) {
    m_cur.value += s;
    m_cur.mask.append(s.size(), mask);
    if (mask == k_quoted || !s.empty()) m_started = true;
  }

  // An unquoted expansion, split as the shell would with this IFS:
  // whitespace in it separates fields, any other character of it ends one.
  void split(std::string_view v, const std::optional<std::string>& ifs) {
    if (!ifs) {  // splitting only known at run time
      m_flags.dynamic = true;
      add(v, k_quoted);
      return;
    }
    auto in_ifs = [&](char ch) { return ifs->find(ch) != std::string::npos; };
    auto white = [&](char ch) { return in_ifs(ch) && is_ifs(ch); };
    size_t i = 0;
    while (i < v.size()) {
      if (white(v[i])) {
        end_field();
        while (i < v.size() && white(v[i])) ++i;
        continue;
      }
      if (in_ifs(v[i])) {
        m_started = true;  // a delimiter ends a field even when it is empty
        end_field();
        ++i;
        while (i < v.size() && white(v[i])) ++i;
        continue;
      }
      size_t j = i;
      while (j < v.size() && !in_ifs(v[j])) ++j;
      add(v.substr(i, j - i), k_expanded);
      i = j;
    }
  }

  void mark_home() {
    if (m_cur.value.empty()) m_home = true;
  }

  void end_field() {
    if (!m_started) return;
    Field f = m_flags;
    f.raw = m_raw;
    f.tilde = f.tilde || m_home || (!m_cur.value.empty() && m_cur.value[0] == '~' && m_cur.mask[0] == k_lit);
    std::vector<Piece> pieces;
    if (m_braces && !brace_expand(m_cur, pieces, 0)) {
      f.dynamic = true;  // too many words to follow
      pieces.clear();
    }
    if (pieces.empty()) pieces = {m_cur};
    for (const Piece& p : pieces) {
      Field g = f;
      g.value = p.value;
      g.glob = g.glob || has_glob(p);
      g.tilde = g.tilde && !g.value.empty() && g.value[0] == '~';
      m_out.push_back(std::move(g));
    }
    if (pieces.size() > 1)
      for (size_t i = m_out.size() - pieces.size(); i < m_out.size(); ++i) m_out[i].braced = true;
    m_cur = {};
    m_started = false;
    m_home = false;
    m_flags = {};
  }

  std::vector<Field> take() {
    end_field();
    return std::move(m_out);
  }

private:
  std::string m_raw;
  bool m_braces;
  Piece m_cur;
  bool m_started = false;
  bool m_home = false;
  Field m_flags;
  std::vector<Field> m_out;
};

void expand_param(FieldBuilder& b, const Seg& s, ExpandEnv& env) {
  char m = s.quoted ? k_quoted : k_expanded;
  if (s.text == "@" || s.text == "*") {
    if (auto pos = env.positional()) {
      b.flags().from_var = true;
      for (size_t i = 0; i < pos->size(); ++i) {
        if (i > 0) {
          if (s.quoted && s.text == "@") {
            b.end_field();
            b.flags().from_var = true;
          } else if (s.quoted) {
            b.add(" ", k_quoted);
          }
        }
        if (s.quoted) {
          b.add((*pos)[i], k_quoted);
        } else {
          b.split((*pos)[i], env.ifs());
          b.end_field();
        }
      }
      return;
    }
  } else if (auto v = env.param(s.text); v && v->dynamic) {
    b.flags().dynamic = true;
    b.flags().download = b.flags().download || v->download;
    b.add("$" + s.text, k_quoted);
    return;
  } else if (v) {
    b.flags().from_var = true;
    b.flags().computed = b.flags().computed || v->computed;
    b.flags().glob = b.flags().glob || v->glob;
    if (s.quoted) {
      b.add(v->text, k_quoted);
    } else {
      b.split(v->text, env.ifs());
    }
    return;
  } else if (s.text == "HOME") {
    b.mark_home();
    b.add("~", m);
    return;
  }
  b.flags().dynamic = true;
  b.add("$" + s.text, k_quoted);
}

}  // namespace

Parsed parse(std::string_view src, int depth) {
  ParseState st;
  Parser p(src, std::clamp(depth, 0, k_max_nesting), st);
  Parsed out;
  out.script = p.parse_top();
  out.errors = std::move(st.errors);
  out.too_deep = st.too_deep;
  return out;
}

std::optional<std::string> literal(const Word& w) {
  std::string out;
  for (const Seg& s : w.segs) {
    if (s.kind != SegKind::text) return std::nullopt;
    out += s.text;
  }
  return out;
}

std::vector<Field> expand(const Word& w, ExpandEnv& env, bool braces) {
  FieldBuilder b(w, braces);
  for (const Seg& s : w.segs) {
    switch (s.kind) {
      case SegKind::text:
        b.add(s.text, s.quoted ? k_quoted : k_lit);
        break;
      case SegKind::param:
        expand_param(b, s, env);
        break;
      case SegKind::subst: {
        ExpandEnv::SubResult r = env.sub(*s.subs.at(0), true);
        b.flags().download = b.flags().download || r.download;
        if (!r.output) {
          b.flags().dynamic = true;
          b.add("$(...)", k_quoted);
          break;
        }
        std::string out = *r.output;
        while (!out.empty() && out.back() == '\n') out.pop_back();
        b.flags().computed = true;
        if (s.quoted) {
          b.add(out, k_quoted);
        } else {
          b.split(out, env.ifs());
        }
        break;
      }
      case SegKind::procsub: {
        ExpandEnv::SubResult r = env.sub(*s.subs.at(0), s.text == "<");
        b.flags().download = b.flags().download || r.download;
        b.flags().procsub = true;
        if (r.output) b.flags().content = std::make_shared<const std::string>(std::move(*r.output));
        b.add("/dev/fd/63", k_quoted);
        break;
      }
      case SegKind::dynamic:
        for (const ScriptPtr& sub : s.subs)
          b.flags().download = env.sub(*sub, false).download || b.flags().download;
        b.flags().dynamic = true;
        b.add(s.text, k_quoted);
        break;
    }
  }
  return b.take();
}

}  // namespace kai::shell

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
