// The compound commands: subshells, groups, if, while and until, for, case,
// functions and [[ ]]. Their bodies are lists again (parser.cpp).

#include <utility>

#include "lib/shell/chars.hpp"
#include "lib/shell/parser.hpp"

namespace kai::shell {

namespace {

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

}  // namespace

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
  } else if (kw == "then" || kw == "else" || kw == "elif" || kw == "fi" || kw == "do" || kw == "done" || kw == "esac" ||
             kw == "}" || kw == "in" || kw == "]]") {
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

}  // namespace kai::shell
