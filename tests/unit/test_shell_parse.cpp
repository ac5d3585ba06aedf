// The shell parser on its own (lib/shell/syntax.hpp): the tree it builds for
// each construct, and what it records instead of failing.

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/shell/syntax.hpp"

// Inside the namespace, so that its names win over any other file's in a
// unity batch.
namespace kai::shell {

namespace {

// The words of a simple command, each as written.
std::vector<std::string> raw_words(const Command& c) {
  std::vector<std::string> out;
  for (const Word& w : c.words) out.push_back(w.raw);
  return out;
}

const Command& only_command(const Parsed& p) {
  REQUIRE(p.script.pipelines.size() == 1);
  REQUIRE(p.script.pipelines[0].cmds.size() == 1);
  return p.script.pipelines[0].cmds[0];
}

}  // namespace

TEST_CASE("a simple command: assignments, words and redirections apart", "[shell][shell_parse]") {
  Parsed p = parse("CC=gcc make -j2 all > build.log 2>&1");
  CHECK(p.errors.empty());
  const Command& c = only_command(p);
  CHECK(c.kind == CmdKind::simple);
  REQUIRE(c.assigns.size() == 1);
  CHECK(c.assigns[0].name == "CC");
  CHECK(literal(c.assigns[0].value) == "gcc");
  CHECK(raw_words(c) == std::vector<std::string>{"make", "-j2", "all"});
  REQUIRE(c.redirs.size() == 2);
  CHECK(c.redirs[0].op == RedirOp::out);
  CHECK(c.redirs[0].fd == -1);
  CHECK(literal(c.redirs[0].target) == "build.log");
  CHECK(c.redirs[1].op == RedirOp::dup_out);
  CHECK(c.redirs[1].fd == 2);
  CHECK(literal(c.redirs[1].target) == "1");
}

TEST_CASE("lists and pipelines: one pipeline per list item, background marked", "[shell][shell_parse]") {
  Parsed p = parse("a | b | c && d; e &\nf");
  CHECK(p.errors.empty());
  REQUIRE(p.script.pipelines.size() == 4);
  CHECK(p.script.pipelines[0].cmds.size() == 3);
  CHECK(raw_words(p.script.pipelines[0].cmds[2]) == std::vector<std::string>{"c"});
  CHECK_FALSE(p.script.pipelines[1].background);
  CHECK(p.script.pipelines[2].background);
  CHECK(raw_words(p.script.pipelines[3].cmds[0]) == std::vector<std::string>{"f"});
}

TEST_CASE("compound commands keep their bodies", "[shell][shell_parse]") {
  SECTION("subshell and group") {
    Parsed p = parse("(cd x && make) ; { rm a; }");
    CHECK(p.errors.empty());
    REQUIRE(p.script.pipelines.size() == 2);
    const Command& sub = p.script.pipelines[0].cmds[0];
    CHECK(sub.kind == CmdKind::subshell);
    REQUIRE(sub.body);
    CHECK(sub.body->pipelines.size() == 2);
    CHECK(p.script.pipelines[1].cmds[0].kind == CmdKind::group);
  }
  SECTION("if, while and case are groups whose body holds every branch") {
    Parsed p = parse("if test -f x; then rm x; elif true; then ls; else echo no; fi");
    CHECK(p.errors.empty());
    const Command& c = only_command(p);
    CHECK(c.kind == CmdKind::group);
    REQUIRE(c.body);
    CHECK(c.body->pipelines.size() == 5);
    Parsed q = parse("case $x in a) rm a;; b|c) rm b;; esac");
    CHECK(q.errors.empty());
    REQUIRE(only_command(q).body);
    CHECK(only_command(q).body->pipelines.size() == 2);
  }
  SECTION("a for loop names its variable and its words") {
    Parsed p = parse("for f in *.c b.c; do gcc -c \"$f\"; done");
    CHECK(p.errors.empty());
    const Command& c = only_command(p);
    CHECK(c.kind == CmdKind::for_loop);
    CHECK(c.name == "f");
    CHECK(c.has_in);
    CHECK(raw_words(c) == std::vector<std::string>{"*.c", "b.c"});
    REQUIRE(c.body);
    CHECK(c.body->pipelines.size() == 1);
  }
  SECTION("a function definition and its body") {
    Parsed p = parse("clean() { rm -rf build; }");
    CHECK(p.errors.empty());
    const Command& c = only_command(p);
    CHECK(c.kind == CmdKind::function);
    CHECK(c.name == "clean");
    REQUIRE(c.body);
  }
}

TEST_CASE("words: quotes, parameters and substitutions become segments", "[shell][shell_parse]") {
  Parsed p = parse("echo 'a b'\"$HOME\"$(rm -rf /)`ls`");
  CHECK(p.errors.empty());
  const Command& c = only_command(p);
  REQUIRE(c.words.size() == 2);
  const std::vector<Seg>& segs = c.words[1].segs;
  REQUIRE(segs.size() == 4);
  CHECK(segs[0].kind == SegKind::text);
  CHECK(segs[0].quoted);
  CHECK(segs[0].text == "a b");
  CHECK(segs[1].kind == SegKind::param);
  CHECK(segs[1].quoted);
  CHECK(segs[1].text == "HOME");
  CHECK(segs[2].kind == SegKind::subst);
  REQUIRE(segs[2].subs.size() == 1);
  const Command& inner = segs[2].subs[0]->pipelines.at(0).cmds.at(0);
  CHECK(raw_words(inner) == std::vector<std::string>{"rm", "-rf", "/"});
  CHECK(segs[3].kind == SegKind::subst);
  CHECK_FALSE(literal(c.words[1]));
}

TEST_CASE("$'...' is decoded before anything judges the word", "[shell][shell_parse]") {
  Parsed p = parse("$'\\x72m' $'\\162\\u0066' $'a\\'b'");
  CHECK(p.errors.empty());
  const Command& c = only_command(p);
  REQUIRE(c.words.size() == 3);
  CHECK(literal(c.words[0]) == "rm");
  CHECK(literal(c.words[1]) == "rf");
  CHECK(literal(c.words[2]) == "a'b");
}

TEST_CASE("what only the run knows is a dynamic segment, with its substitutions kept", "[shell][shell_parse]") {
  Parsed p = parse("echo ${X:-$(id)} $((1+2))");
  CHECK(p.errors.empty());
  const Command& c = only_command(p);
  REQUIRE(c.words.size() == 3);
  REQUIRE(c.words[1].segs.size() == 1);
  CHECK(c.words[1].segs[0].kind == SegKind::dynamic);
  CHECK(c.words[1].segs[0].subs.size() == 1);
  CHECK(c.words[2].segs.at(0).kind == SegKind::dynamic);
}

TEST_CASE("here-documents: the body is read after the line, quoted delimiters keep it literal",
          "[shell][shell_parse]") {
  Parsed p = parse("cat <<EOF > out\nhello $USER\nEOF\ncat <<-'END'\n\t$HOME\n\tEND\n");
  CHECK(p.errors.empty());
  REQUIRE(p.script.pipelines.size() == 2);
  const Command& a = p.script.pipelines[0].cmds.at(0);
  REQUIRE(a.redirs.size() == 2);
  CHECK(a.redirs[0].op == RedirOp::heredoc);
  CHECK_FALSE(a.redirs[0].quoted_delim);
  REQUIRE(a.redirs[0].body);
  bool has_param = false;
  for (const Seg& s : a.redirs[0].body->segs) has_param = has_param || s.kind == SegKind::param;
  CHECK(has_param);
  const Command& b = p.script.pipelines[1].cmds.at(0);
  REQUIRE(b.redirs.size() == 1);
  CHECK(b.redirs[0].quoted_delim);
  REQUIRE(b.redirs[0].body);
  CHECK(literal(*b.redirs[0].body) == "$HOME\n");
}

TEST_CASE("process substitution is a segment of its own", "[shell][shell_parse]") {
  Parsed p = parse("diff <(sort a) >(tee b)");
  CHECK(p.errors.empty());
  const Command& c = only_command(p);
  REQUIRE(c.words.size() == 3);
  CHECK(c.words[1].segs.at(0).kind == SegKind::procsub);
  CHECK(c.words[1].segs.at(0).text == "<");
  CHECK(c.words[2].segs.at(0).text == ">");
}

TEST_CASE("the parser records errors and keeps reading instead of failing", "[shell][shell_parse]") {
  for (const char* bad : {"echo 'unterminated", "echo \"open", "if true; then ls", "echo $(ls", "cat <<EOF",
                          "case x in", "( ls", "{ ls"}) {
    INFO(bad);
    Parsed p = parse(bad);
    CHECK_FALSE(p.errors.empty());
    CHECK_FALSE(p.too_deep);
  }
  // the command before the error is still seen
  Parsed p = parse("rm -rf / ; echo 'open");
  REQUIRE_FALSE(p.script.pipelines.empty());
  CHECK(raw_words(p.script.pipelines[0].cmds.at(0)) == std::vector<std::string>{"rm", "-rf", "/"});
}

TEST_CASE("a list or pipe with nothing after its operator is an error, as in bash", "[shell][shell_parse]") {
  struct Case {
    const char* text;
    const char* error;
  };
  for (const Case& c :
       {Case{"make &&", "unexpected end of file after '&&'"}, Case{"make ||", "unexpected end of file after '||'"},
        Case{"make |", "unexpected end of file after '|'"}, Case{"make |&", "unexpected end of file after '|&'"},
        Case{"make && \n\n", "unexpected end of file after '&&'"},
        Case{"make && # done", "unexpected end of file after '&&'"},
        Case{"(make &&)", "'&&' without a command after it"},
        Case{"echo $(make ||)", "'||' without a command after it"}, Case{"(make |)", "'|' without a command after it"},
        Case{"make | ; ls", "'|' without a command after it"},
        Case{"case x in x) make && ;; esac", "'&&' without a command after it"},
        Case{"if make &&; then ls; fi", "unexpected ';'"}}) {
    INFO(c.text);
    Parsed p = parse(c.text);
    REQUIRE_FALSE(p.errors.empty());
    CHECK(p.errors.front() == c.error);
    // the command before the operator is still there
    REQUIRE_FALSE(p.script.pipelines.empty());
  }
  // the same operators with a command after them, quoted, or across lines
  for (const char* good : {"make && ls", "make || ls", "make | wc", "make |& wc", "make &&\n  ls", "make |\nwc",
                           "echo 'a &&' \"b |\" c\\|", "make | > log", "make &", "(make && ls)",
                           "cat <<EOF &&\nbody\nEOF\nls", "make && ! ls"}) {
    INFO(good);
    CHECK(parse(good).errors.empty());
  }
}

TEST_CASE("nesting beyond the limit stops the parse and says so", "[shell][shell_parse]") {
  std::string deep;
  for (int i = 0; i < k_max_nesting + 4; ++i) deep += "$(";
  deep += "ls";
  for (int i = 0; i < k_max_nesting + 4; ++i) deep += ")";
  CHECK(parse("echo " + deep).too_deep);
  // the depth a caller already used counts too
  std::string shallow = "echo $($(ls))";
  CHECK_FALSE(parse(shallow).too_deep);
  CHECK(parse(shallow, k_max_nesting).too_deep);
}

}  // namespace kai::shell
