// The commands that program text of two other languages hands to the
// system, as shell text for the walker to judge: Tcl (tclsh, wish, expect)
// and Emacs Lisp (emacs --eval). Words known only at run time stand as an
// unknown variable, so that `exec rm -rf $dir` is still judged.

#include <algorithm>
#include <utility>

#include "lib/shell/walker.hpp"

namespace kai::shell {

namespace {

constexpr std::string_view k_unknown_word = "\"${VALUE_ONLY_KNOWN_AT_RUN_TIME}\"";
constexpr int k_max_script_depth = 8;

bool blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

// ---- Tcl ----

struct TclWord {
  std::string text;
  bool dynamic = false;  // holds $var or [command]: only known at run time
  bool braced = false;   // {...}: may be a script (if, while, proc bodies)
};

class Tcl {
public:
  explicit Tcl(std::vector<std::string>& out) : m_out(out) {}

  void script(std::string_view s, int depth) {
    if (depth > k_max_script_depth) return;
    size_t i = 0;
    while (i < s.size()) {
      std::vector<TclWord> words;
      while (i < s.size() && (blank(s[i]) || s[i] == '\n' || s[i] == ';')) ++i;
      if (i < s.size() && s[i] == '#') {  // a comment runs to the end of the line
        while (i < s.size() && s[i] != '\n') i += s[i] == '\\' ? 2 : 1;
        continue;
      }
      while (i < s.size() && s[i] != '\n' && s[i] != ';') {
        if (blank(s[i]) || (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n')) {
          i += s[i] == '\\' ? 2 : 1;
          continue;
        }
        words.push_back(word(s, i, depth));
      }
      if (!words.empty()) command(words, depth);
    }
  }

private:
  // The index of the bracket that closes the one at s[i] (s.size() if none).
  static size_t closing(std::string_view s, size_t i, char open, char close) {
    int level = 0;
    for (; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == open) {
        ++level;
      } else if (s[i] == close && --level == 0) {
        return i;
      }
    }
    return s.size();
  }

  TclWord word(std::string_view s, size_t& i, int depth) {
    TclWord w;
    if (s[i] == '{') {
      size_t start = i + 1;
      i = closing(s, i, '{', '}');
      w.text = std::string(s.substr(start, std::min(i, s.size()) - start));
      w.braced = true;
      if (i < s.size()) ++i;
      return w;
    }
    bool quoted = s[i] == '"';
    if (quoted) ++i;
    while (i < s.size()) {
      char ch = s[i];
      if (quoted ? ch == '"' : (blank(ch) || ch == '\n' || ch == ';')) break;
      if (ch == '\\' && i + 1 < s.size()) {
        char e = s[i + 1];
        w.text += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        i += 2;
      } else if (ch == '[') {
        size_t start = i + 1;
        i = closing(s, i, '[', ']');
        script(s.substr(start, std::min(i, s.size()) - start), depth + 1);
        w.dynamic = true;
        w.text += "[...]";
        if (i < s.size()) ++i;
      } else {
        if (ch == '$') w.dynamic = true;
        w.text += ch;
        ++i;
      }
    }
    if (quoted && i < s.size()) ++i;
    return w;
  }

  static std::string quoted(const TclWord& w) { return w.dynamic ? std::string(k_unknown_word) : quote_argv({w.text}); }

  // exec's words as shell text: its pipes and redirections stay operators.
  static std::string exec_text(const std::vector<TclWord>& words, size_t from) {
    std::string out;
    for (size_t k = from; k < words.size(); ++k) {
      const TclWord& w = words[k];
      std::string_view t = w.text;
      std::string piece;
      if (!w.braced && !w.dynamic && (t == "|" || t == "|&" || t == "&")) {
        piece = t == "|&" ? "2>&1 |" : std::string(t);
      } else if (!w.braced && !w.dynamic && (t.starts_with(">") || t.starts_with("<") || t.starts_with("2>"))) {
        size_t op = t.find_first_not_of("<>2&@");
        std::string_view oper = t.substr(0, op == std::string_view::npos ? t.size() : op);
        std::string_view file = op == std::string_view::npos ? std::string_view() : t.substr(op);
        if (oper.find('@') != std::string_view::npos) continue;  // >@ channel
        piece = std::string(oper);
        if (!file.empty()) piece += quote_argv({std::string(file)});
      } else {
        piece = quoted(w);
      }
      if (!out.empty()) out += ' ';
      out += piece;
    }
    return out;
  }

  void command(const std::vector<TclWord>& words, int depth) {
    const std::string& name = words[0].text;
    size_t k = 1;
    auto skip_options = [&](std::initializer_list<std::string_view> with_value) {
      while (k < words.size() && words[k].text.starts_with("-") && !words[k].dynamic) {
        if (words[k].text == "--") {
          ++k;
          break;
        }
        bool takes = std::find(with_value.begin(), with_value.end(), words[k].text) != with_value.end();
        k += takes ? 2 : 1;
      }
    };
    if (name == "exec") {
      skip_options({});
      if (k < words.size()) m_out.push_back(exec_text(words, k));
    } else if (name == "spawn") {
      skip_options({"-open", "-ignore"});
      if (k < words.size()) {
        std::string text;
        for (; k < words.size(); ++k) {
          if (!text.empty()) text += ' ';
          text += quoted(words[k]);
        }
        m_out.push_back(text);
      }
    } else if (name == "system") {
      std::string text;
      for (; k < words.size(); ++k) {
        if (!text.empty()) text += ' ';
        text += words[k].dynamic ? std::string(k_unknown_word) : words[k].text;
      }
      if (!text.empty()) m_out.push_back(text);
    } else if (name == "open" && words.size() > 1 && words[1].text.starts_with("|")) {
      if (words[1].dynamic) {
        m_out.emplace_back(k_unknown_word);
      } else {
        std::vector<std::string> cmds;
        Tcl list(cmds);
        std::vector<TclWord> inner{{"exec"}};
        std::string_view rest = std::string_view(words[1].text).substr(1);
        size_t j = 0;
        while (j < rest.size()) {
          if (blank(rest[j]) || rest[j] == '\n') {
            ++j;
            continue;
          }
          inner.push_back(list.word(rest, j, depth));
        }
        if (inner.size() > 1) m_out.push_back(exec_text(inner, 1));
      }
    } else if (name == "file" && words.size() > 2 && words[1].text == "delete") {
      k = 2;
      bool force = false;
      while (k < words.size() && words[k].text.starts_with("-") && !words[k].dynamic) {
        force = force || words[k].text == "-force";
        if (words[k++].text == "--") break;
      }
      std::string text = force ? "rm -rf --" : "rm --";
      for (; k < words.size(); ++k) {
        text += ' ';
        text += quoted(words[k]);
      }
      m_out.push_back(text);
    }
    // Bodies of if, while, proc, eval, after ... are scripts too.
    for (size_t j = 1; j < words.size(); ++j)
      if (words[j].braced && name != "puts" && name != "send" && name != "expect") script(words[j].text, depth + 1);
    if (one_of_tcl(name, {"eval", "uplevel", "after", "interp"}))
      for (size_t j = 1; j < words.size(); ++j)
        if (!words[j].braced && !words[j].dynamic) script(words[j].text, depth + 1);
  }

  static bool one_of_tcl(std::string_view x, std::initializer_list<std::string_view> l) {
    return std::find(l.begin(), l.end(), x) != l.end();
  }

  std::vector<std::string>& m_out;
};

// ---- Emacs Lisp ----

// The string literals of the form that starts at code[open] ('('), up to
// its closing parenthesis; a word that is not a literal (a variable, a
// call) at the top level is kept as nullopt.
std::vector<std::optional<std::string>> form_args(std::string_view code, size_t open, size_t& end) {
  std::vector<std::optional<std::string>> args;
  int level = 0;
  size_t i = open;
  for (; i < code.size(); ++i) {
    char ch = code[i];
    if (ch == '"') {
      std::string lit;
      for (++i; i < code.size() && code[i] != '"'; ++i) {
        if (code[i] == '\\' && i + 1 < code.size()) ++i;
        lit += code[i];
      }
      if (level == 1) args.emplace_back(std::move(lit));
    } else if (ch == '(') {
      if (++level == 2) args.emplace_back(std::nullopt);
    } else if (ch == ')') {
      if (--level == 0) break;
    } else if (level == 1 && !blank(ch) && ch != '\n' && ch != '\'') {
      size_t start = i;
      while (i + 1 < code.size() && !blank(code[i + 1]) && code[i + 1] != '\n' && code[i + 1] != ')' &&
             code[i + 1] != '(' && code[i + 1] != '"')
        ++i;
      std::string sym(code.substr(start, i - start + 1));
      args.emplace_back(sym == "nil" || sym == "t" || sym.starts_with(":") ? std::optional<std::string>(sym)
                                                                           : std::nullopt);
    }
  }
  end = i;
  if (!args.empty()) args.erase(args.begin());  // the function's own name
  return args;
}

std::string argv_text(const std::vector<std::optional<std::string>>& words) {
  std::string out;
  for (const auto& w : words) {
    if (w && (*w == "nil" || *w == "t" || w->starts_with(":"))) continue;
    if (!out.empty()) out += ' ';
    out += w ? quote_argv({*w}) : std::string(k_unknown_word);
  }
  return out;
}

}  // namespace

std::vector<std::string> tcl_commands(std::string_view code) {
  std::vector<std::string> out;
  Tcl(out).script(code, 0);
  return out;
}

std::vector<std::string> elisp_commands(std::string_view code) {
  // clang-format off
  static constexpr std::string_view k_shell[] = {
      "shell-command", "shell-command-to-string", "async-shell-command", "call-process-shell-command",
      "process-file-shell-command", "compile", "dired-do-shell-command", "eshell-command",
      "start-process-shell-command", "start-file-process-shell-command"};
  static constexpr std::string_view k_argv[] = {"call-process", "process-lines", "process-file", "call-process-region",
                                                "start-process", "start-file-process", "make-process"};
  // clang-format on
  std::vector<std::string> out;
  for (size_t at = code.find('('); at != std::string_view::npos; at = code.find('(', at + 1)) {
    size_t n = at + 1;
    while (n < code.size() && !blank(code[n]) && code[n] != '\n' && code[n] != ')' && code[n] != '(' && code[n] != '"')
      ++n;
    std::string_view name = code.substr(at + 1, n - at - 1);
    bool shell = std::find(std::begin(k_shell), std::end(k_shell), name) != std::end(k_shell);
    bool argv = std::find(std::begin(k_argv), std::end(k_argv), name) != std::end(k_argv);
    bool dir = name == "delete-directory", file = name == "delete-file" || name == "dired-delete-file";
    if (!shell && !argv && !dir && !file) continue;
    size_t end = 0;
    std::vector<std::optional<std::string>> args = form_args(code, at, end);
    if (args.empty()) continue;
    if (shell) {
      // start-process-shell-command NAME BUFFER COMMAND: the command is last
      const auto& cmd = name.starts_with("start-") ? args.back() : args.front();
      out.push_back(cmd ? *cmd : std::string(k_unknown_word));
    } else if (dir || file) {
      bool recursive = dir && args.size() > 1 && args[1] && *args[1] == "t";
      out.push_back(std::string(recursive ? "rm -rf -- " : "rm -- ") +
                    (args[0] ? quote_argv({*args[0]}) : std::string(k_unknown_word)));
    } else {
      std::vector<std::optional<std::string>> words = args;
      if (name == "make-process") {
        auto cmd = std::find(words.begin(), words.end(), std::optional<std::string>(":command"));
        words = cmd == words.end() ? decltype(words){} : decltype(words)(cmd + 1, words.end());
        auto stop = std::find_if(words.begin(), words.end(), [](const auto& w) { return w && w->starts_with(":"); });
        words.erase(stop, words.end());
      } else if (name.starts_with("start-")) {  // NAME BUFFER PROGRAM ARGS
        words.erase(words.begin(), words.begin() + std::min<size_t>(2, words.size()));
      } else if (name == "call-process" || name == "process-file") {  // PROGRAM INFILE DEST DISPLAY ARGS
        if (words.size() > 1) words.erase(words.begin() + 1, words.begin() + std::min<size_t>(4, words.size()));
      } else if (name == "call-process-region") {  // START END PROGRAM DELETE DEST DISPLAY ARGS
        words.erase(words.begin(), words.begin() + std::min<size_t>(2, words.size()));
        if (words.size() > 1) words.erase(words.begin() + 1, words.begin() + std::min<size_t>(4, words.size()));
      }
      std::string text = argv_text(words);
      if (!text.empty()) out.push_back(text);
    }
  }
  return out;
}

}  // namespace kai::shell
