#pragma once
// Internal to lib/shell/: the static expansion of a word (parameters,
// substitutions, field splitting, braces, `~`), as far as it can be known
// without running anything.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/shell/syntax.hpp"

namespace kai::shell {

// A word after expansion: one word may give several fields (splitting of an
// unquoted expansion, brace expansion).
struct Field {
  std::string value;                           // after quote removal; unknown parts kept as written ($X)
  std::string raw;                             // the word as written
  bool dynamic = false;                        // part of it is only known at run time
  bool computed = false;                       // part of it came from a command substitution evaluated here
  bool from_var = false;                       // part of it came from a variable set earlier in the script
  bool glob = false;                           // unquoted pattern characters: names files only at run time
  bool tilde = false;                          // starts with an unquoted ~ (or $HOME): a home folder
  bool procsub = false;                        // <(...) / >(...): a pipe to another command
  bool download = false;                       // a substitution inside it runs a download
  bool synthetic = false;                      // supplied at run time by xargs / find, not written by the agent
  bool braced = false;                         // one of several words made by brace expansion
  std::shared_ptr<const std::string> content;  // procsub: the static output behind the pipe
};

// What the walker knows while expanding: variables set earlier in the script
// and the output of substitutions it could evaluate.
class ExpandEnv {
public:
  struct Value {
    std::string text;
    bool glob = false;  // bound by `for x in *.c`: stands for a matched name
    bool computed = false;
    bool dynamic = false;   // set at run time (read, $(...)): unknown text ...
    bool download = false;  // ... that came from a download
  };
  struct SubResult {
    std::optional<std::string> output;  // static output, nullopt when unknown
    bool download = false;
  };
  virtual ~ExpandEnv() = default;
  virtual std::optional<Value> param(const std::string& name) = 0;
  virtual std::optional<std::vector<std::string>> positional() = 0;
  // The characters unquoted expansions are split on; nullopt when IFS was
  // set to something only known at run time.
  virtual std::optional<std::string> ifs() = 0;
  // Walk a substitution (its commands are leaves too); want_output asks for
  // its static output.
  virtual SubResult sub(const Script& s, bool want_output) = 0;
};

// Expansion as the shell would do it, as far as it can be known statically.
// `braces`: apply bash brace expansion to unquoted text.
std::vector<Field> expand(const Word& w, ExpandEnv& env, bool braces = true);

}  // namespace kai::shell
