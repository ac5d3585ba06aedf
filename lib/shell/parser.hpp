#pragma once
// Internal to lib/shell/: the parser class, shared by parser.cpp (lists,
// pipelines and commands), words.cpp (words, quotes and expansions as
// written) and argv.cpp (plain words without a shell).

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/shell/syntax.hpp"

namespace kai::shell {

inline constexpr size_t k_max_errors = 16;

// Append literal text to a word, merged with a text segment of the same quoting.
void add_text(Word& w, std::string_view s, bool quoted);

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
  void missing_command(std::string_view op);

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
  void read_quoted_char(Word& w, bool dquote);
  void read_dollar(Word& w, bool in_dq);
  bool read_paren_body(Seg& seg, const char* unterminated);
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

}  // namespace kai::shell
