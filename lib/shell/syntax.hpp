#pragma once
// Internal to lib/shell/: the syntax tree of a shell script and the parser
// that builds it (lib/shell/parser.cpp, lib/shell/words.cpp).
//
// The parser never fails: it records errors and keeps going, because what
// matters is that every command the shell could run is seen. A script with
// errors is "not understood" and never auto-allowed.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kai::shell {

struct Script;
using ScriptPtr = std::shared_ptr<const Script>;

enum class SegKind {
  text,     // literal characters
  param,    // $NAME, ${NAME}, $1, $@ ... (text holds the name)
  subst,    // $(...) or `...` (subs[0] is the body)
  procsub,  // <(...) or >(...) (subs[0] is the body, text is "<" or ">")
  dynamic,  // anything else only known at run time: ${x:-y}, $((...)), arrays;
            // subs holds the substitutions inside it, which still run
};

struct Seg {
  SegKind kind = SegKind::text;
  std::string text;
  bool quoted = false;  // inside quotes or escaped: no splitting, globbing, braces or ~
  std::vector<ScriptPtr> subs;
};

struct Word {
  std::vector<Seg> segs;
  std::string raw;  // as written
};

enum class RedirOp { out, append, clobber, in, inout, dup_out, dup_in, out_err, append_err, heredoc, herestring };

struct Redir {
  int fd = -1;  // explicit descriptor (`2>`), -1 when implied
  RedirOp op = RedirOp::out;
  Word target;                 // file, descriptor or here-string; delimiter for here-documents
  std::shared_ptr<Word> body;  // here-document body (filled once its line ends)
  bool quoted_delim = false;   // <<'EOF': the body is taken literally
};

struct Assign {
  std::string name;
  Word value;
};

enum class CmdKind {
  simple,    // assignments, words, redirections
  subshell,  // ( body )
  group,     // { body; } and the compound commands (if, while, case, [[ ]])
  function,  // name() body
  for_loop,  // for name [in words]; do body; done
};

struct Command {
  CmdKind kind = CmdKind::simple;
  std::vector<Assign> assigns;
  std::vector<Word> words;  // simple: the command; others: words that are only expanded
  std::vector<Redir> redirs;
  ScriptPtr body;
  std::string name;  // function name or loop variable
  bool has_in = false;
  std::string text;  // as written
};

struct Pipeline {
  std::vector<Command> cmds;
  bool background = false;
};

struct Script {
  std::vector<Pipeline> pipelines;
};

struct Parsed {
  Script script;
  std::vector<std::string> errors;
  bool too_deep = false;  // nesting beyond k_max_nesting: the rest was not read
};

inline constexpr int k_max_nesting = 48;

// `depth`: nesting already used by the text this one came from (a `bash -c`
// string inside a substitution), so that the total stays bounded.
Parsed parse(std::string_view src, int depth = 0);

// Literal value of a word that has no expansions; nullopt otherwise.
std::optional<std::string> literal(const Word& w);

}  // namespace kai::shell
