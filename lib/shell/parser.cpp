// The parser: lists, pipelines, simple commands, redirections and
// here-documents. Words are read in words.cpp.

#include <algorithm>
#include <utility>

#include "lib/shell/chars.hpp"
#include "lib/shell/parser.hpp"

namespace kai::shell {

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
    read_quoted_char(w, false);
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

// `a &&`, `a ||` and `a |` at the end of the text, or before something that
// ends the list: bash refuses them ("unexpected end of file"), so they are
// errors here too and the script is not understood.
void Parser::missing_command(std::string_view op) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about
  // `"..." + std::string(op)` when optimising.
  std::string msg = at_end() ? "unexpected end of file after '" : "'";
  msg.append(op);
  msg.append(at_end() ? "'" : "' without a command after it");
  error(std::move(msg));
}

Script Parser::parse_list(const Stops& stops) {
  Script s;
  std::string_view dangling;  // the `&&` or `||` just read, until a command follows it
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
    dangling = {};
    skip_blanks();
    if (starts("&&") || starts("||")) {
      dangling = starts("&&") ? "&&" : "||";
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
  if (!dangling.empty()) missing_command(dangling);
  return s;
}

Pipeline Parser::parse_pipeline() {
  Pipeline p;
  p.cmds.push_back(parse_command());
  while (true) {
    skip_blanks();
    if (cur() != '|' || peek(1) == '|') break;
    std::string_view op = peek(1) == '&' ? "|&" : "|";  // `|&` also pipes stderr
    advance(op.size());
    skip_newlines();
    p.cmds.push_back(parse_command());
    const Command& c = p.cmds.back();
    if (c.kind == CmdKind::simple && c.words.empty() && c.assigns.empty() && c.redirs.empty()) missing_command(op);
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
      {"&>>", RedirOp::append_err}, {"&>", RedirOp::out_err}, {"<<<", RedirOp::herestring}, {"<<-", RedirOp::heredoc},
      {"<<", RedirOp::heredoc},     {"<>", RedirOp::inout},   {"<&", RedirOp::dup_in},      {"<", RedirOp::in},
      {">>", RedirOp::append},      {">|", RedirOp::clobber}, {">&", RedirOp::dup_out},     {">", RedirOp::out},
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

Parsed parse(std::string_view src, int depth) {
  ParseState st;
  Parser p(src, std::clamp(depth, 0, k_max_nesting), st);
  Parsed out;
  out.script = p.parse_top();
  out.errors = std::move(st.errors);
  out.too_deep = st.too_deep;
  return out;
}

}  // namespace kai::shell
