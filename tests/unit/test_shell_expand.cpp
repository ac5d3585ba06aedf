// The static expander on its own (lib/shell/expand.hpp), with a small
// environment of known variables instead of the walker.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/shell/expand.hpp"

// Inside the namespace, so that its names win over any other file's in a
// unity batch.
namespace kai::shell {

namespace {

class FakeExpandEnv final : public ExpandEnv {
public:
  std::map<std::string, Value> vars;
  std::optional<std::vector<std::string>> args;
  std::optional<std::string> split_on = std::string(" \t\n");
  std::optional<std::string> output;  // what every substitution prints
  bool download = false;              // every substitution runs a download
  int subs = 0;

  std::optional<Value> param(const std::string& name) override {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::vector<std::string>> positional() override { return args; }
  std::optional<std::string> ifs() override { return split_on; }
  SubResult sub(const Script&, bool want_output) override {
    ++subs;
    SubResult r;
    r.download = download;
    if (want_output) r.output = output;
    return r;
  }
};

// The fields of the second word of `echo WORD`.
std::vector<Field> fields(const std::string& word, FakeExpandEnv& env, bool braces = true) {
  kai::shell::Parsed p = kai::shell::parse("echo " + word);
  REQUIRE(p.errors.empty());
  const Command& c = p.script.pipelines.at(0).cmds.at(0);
  REQUIRE(c.words.size() == 2);
  return expand(c.words[1], env, braces);
}

std::vector<std::string> values(const std::vector<Field>& fs) {
  std::vector<std::string> out;
  for (const Field& f : fs) out.push_back(f.value);
  return out;
}

}  // namespace

TEST_CASE("a known variable is split when unquoted and kept whole when quoted", "[shell][shell_expand]") {
  FakeExpandEnv env;
  env.vars["X"] = ExpandEnv::Value{"a  b\tc", false, false, false, false};
  std::vector<Field> un = fields("$X", env);
  CHECK(values(un) == std::vector<std::string>{"a", "b", "c"});
  CHECK(un[0].from_var);
  CHECK(values(fields("\"$X\"", env)) == std::vector<std::string>{"a  b\tc"});
  CHECK(values(fields("pre${X}post", env)) == std::vector<std::string>{"prea", "b", "cpost"});
}

TEST_CASE("IFS decides where fields end, and an unknown IFS makes the word dynamic", "[shell][shell_expand]") {
  FakeExpandEnv env;
  env.vars["P"] = ExpandEnv::Value{"a:b::c", false, false, false, false};
  env.split_on = ":";
  CHECK(values(fields("$P", env)) == std::vector<std::string>{"a", "b", "", "c"});
  env.split_on = std::nullopt;
  std::vector<Field> fs = fields("$P", env);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].dynamic);
}

TEST_CASE("an unknown variable stays as written and marks the field dynamic", "[shell][shell_expand]") {
  FakeExpandEnv env;
  std::vector<Field> fs = fields("$NOPE/x", env);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].value == "$NOPE/x");
  CHECK(fs[0].dynamic);
  CHECK(fs[0].raw == "$NOPE/x");
  env.vars["D"] = ExpandEnv::Value{"", false, false, true, true};
  std::vector<Field> d = fields("$D", env);
  REQUIRE(d.size() == 1);
  CHECK(d[0].dynamic);
  CHECK(d[0].download);
}

TEST_CASE("$HOME and a leading unquoted ~ name the home folder", "[shell][shell_expand]") {
  FakeExpandEnv env;
  std::vector<Field> home = fields("$HOME/.ssh", env);
  REQUIRE(home.size() == 1);
  CHECK(home[0].value == "~/.ssh");
  CHECK(home[0].tilde);
  CHECK(fields("~/x", env).at(0).tilde);
  CHECK_FALSE(fields("\"~/x\"", env).at(0).tilde);
  CHECK_FALSE(fields("a~", env).at(0).tilde);
}

TEST_CASE("brace expansion makes several fields, only outside quotes", "[shell][shell_expand]") {
  FakeExpandEnv env;
  std::vector<Field> fs = fields("f{a,b}.c", env);
  CHECK(values(fs) == std::vector<std::string>{"fa.c", "fb.c"});
  for (const Field& f : fs) CHECK(f.braced);
  CHECK(values(fields("{1..3}", env)) == std::vector<std::string>{"1", "2", "3"});
  CHECK(values(fields("{a..c..2}", env)) == std::vector<std::string>{"a", "c"});
  CHECK(values(fields("'{a,b}'", env)) == std::vector<std::string>{"{a,b}"});
  CHECK(values(fields("{a,b}", env, false)) == std::vector<std::string>{"{a,b}"});
  CHECK(values(fields("{single}", env)) == std::vector<std::string>{"{single}"});
  // too many words to follow: the word is only known at run time
  std::vector<Field> huge = fields("{1..100000}", env);
  REQUIRE_FALSE(huge.empty());
  CHECK(huge[0].dynamic);
}

TEST_CASE("unquoted pattern characters mark a glob, quoted ones do not", "[shell][shell_expand]") {
  FakeExpandEnv env;
  CHECK(fields("*.c", env).at(0).glob);
  CHECK(fields("a?[bc]", env).at(0).glob);
  CHECK_FALSE(fields("'*.c'", env).at(0).glob);
  CHECK_FALSE(fields("\\*.c", env).at(0).glob);
  CHECK_FALSE(fields("plain", env).at(0).glob);
}

TEST_CASE("a substitution with known output is computed, without it dynamic", "[shell][shell_expand]") {
  FakeExpandEnv env;
  env.output = "rm -rf\n\n";
  std::vector<Field> fs = fields("$(printf x)", env);
  CHECK(values(fs) == std::vector<std::string>{"rm", "-rf"});
  CHECK(fs.at(0).computed);
  CHECK(values(fields("\"$(printf x)\"", env)) == std::vector<std::string>{"rm -rf"});
  env.output = std::nullopt;
  std::vector<Field> unknown = fields("$(date)", env);
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0].dynamic);
  CHECK(env.subs == 3);
}

TEST_CASE("a process substitution is a pipe with the output behind it", "[shell][shell_expand]") {
  FakeExpandEnv env;
  env.output = "echo hi\n";
  std::vector<Field> fs = fields("<(cat x)", env);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].value == "/dev/fd/63");
  CHECK(fs[0].procsub);
  REQUIRE(fs[0].content);
  CHECK(*fs[0].content == "echo hi\n");
}

TEST_CASE("the positional parameters: \"$@\" one field each, \"$*\" one field", "[shell][shell_expand]") {
  FakeExpandEnv env;
  env.args = std::vector<std::string>{"a b", "c"};
  CHECK(values(fields("\"$@\"", env)) == std::vector<std::string>{"a b", "c"});
  CHECK(values(fields("\"$*\"", env)) == std::vector<std::string>{"a b c"});
  CHECK(values(fields("$@", env)) == std::vector<std::string>{"a", "b", "c"});
  env.args = std::nullopt;
  CHECK(fields("\"$@\"", env).at(0).dynamic);
}

TEST_CASE("substitutions inside a dynamic word are still walked", "[shell][shell_expand]") {
  FakeExpandEnv env;
  std::vector<Field> fs = fields("${X:-$(rm -rf /)}", env);
  REQUIRE(fs.size() == 1);
  CHECK(fs[0].dynamic);
  CHECK(env.subs == 1);
}

TEST_CASE("every word split from an expansion keeps its marks, not only the first", "[shell][shell_expand]") {
  FakeExpandEnv env;
  SECTION("a substitution that downloads") {
    env.output = "sh -c x\n";
    env.download = true;
    std::vector<Field> fs = fields("$(curl -s u; echo)", env);
    REQUIRE(values(fs) == std::vector<std::string>{"sh", "-c", "x"});
    for (const Field& f : fs) {
      INFO(f.value);
      CHECK(f.computed);
      CHECK(f.download);
    }
  }
  SECTION("a variable holding computed or downloaded text") {
    env.vars["X"] = ExpandEnv::Value{"5 rm -rf", false, true, false, true};
    std::vector<Field> fs = fields("pre$X", env);
    REQUIRE(values(fs) == std::vector<std::string>{"pre5", "rm", "-rf"});
    for (const Field& f : fs) {
      INFO(f.value);
      CHECK(f.from_var);
      CHECK(f.computed);
      CHECK(f.download);
    }
  }
  SECTION("a variable bound to a glob, split on another IFS, empty fields too") {
    env.vars["G"] = ExpandEnv::Value{"a::b", true, false, false, false};
    env.split_on = ":";
    std::vector<Field> fs = fields("$G", env);
    REQUIRE(values(fs) == std::vector<std::string>{"a", "", "b"});
    for (const Field& f : fs) {
      INFO(f.value);
      CHECK(f.from_var);
      CHECK(f.glob);
    }
  }
  SECTION("unquoted positional parameters") {
    env.args = std::vector<std::string>{"a b", "c"};
    std::vector<Field> fs = fields("$@", env);
    REQUIRE(values(fs) == std::vector<std::string>{"a", "b", "c"});
    for (const Field& f : fs) CHECK(f.from_var);
  }
  SECTION("text after the expansion's last word is not marked") {
    env.vars["X"] = ExpandEnv::Value{"a ", false, true, false, false};
    std::vector<Field> fs = fields("${X}.txt", env);
    REQUIRE(values(fs) == std::vector<std::string>{"a", ".txt"});
    CHECK(fs[0].computed);
    CHECK_FALSE(fs[1].computed);
    CHECK_FALSE(fs[1].from_var);
  }
  SECTION("a literal word is not marked") {
    std::vector<Field> fs = fields("a", env);
    REQUIRE(fs.size() == 1);
    CHECK_FALSE(fs[0].computed);
    CHECK_FALSE(fs[0].download);
    CHECK_FALSE(fs[0].from_var);
  }
}

}  // namespace kai::shell
