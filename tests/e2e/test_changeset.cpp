// Changesets: many files under one proposal, one decision through the
// terminal, one all-or-nothing apply, one changelog entry and one rollback
// id; in the formats agents write (git diff, the *** Begin Patch envelope,
// a list of changes on --json-input).

#include <algorithm>
#include <csignal>
#include <iterator>
#include <map>
#include <random>
#include <optional>
#include <string>

#include <sys/resource.h>

#include <fmt/format.h>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using json = nlohmann::json;
using Catch::Matchers::Contains;

// The tree as a person sees it: no changelog, no backups.
std::map<std::string, std::string> files_of(const TempRepo& repo) {
  auto t = repo.tree_snapshot();
  t.erase("KAI-CODER-CHANGELOG.md");
  for (auto it = t.begin(); it != t.end();)
    it = it->first.find(".bak-kaicoder-") != std::string::npos ? t.erase(it) : std::next(it);
  return t;
}

std::map<std::string, unsigned> modes_of(const TempRepo& repo) {
  auto m = repo.mode_snapshot();
  m.erase("KAI-CODER-CHANGELOG.md");
  for (auto it = m.begin(); it != m.end();)
    it = it->first.find(".bak-kaicoder-") != std::string::npos ? m.erase(it) : std::next(it);
  return m;
}

// Commit the tree as it is (what init added too), the changelog aside.
void commit_all(const TempRepo& repo, const std::string& message = "base") {
  repo.git({"add", "-A", "--", ".", ":!KAI-CODER-CHANGELOG.md"});
  repo.git({"-c", "user.name=kaicoder tests", "-c", "user.email=tests@kaicoder.invalid", "-c", "commit.gpgsign=false",
            "commit", "-q", "--allow-empty", "-m", message});
}

// The patch `git diff` writes for what the work tree holds now against
// HEAD (renames found, new files included); the work tree is then put back
// to HEAD, so the patch can be applied to it.
std::string diff_and_reset(const TempRepo& repo) {
  repo.git({"add", "-A", "--", ".", ":!KAI-CODER-CHANGELOG.md"});
  std::string patch = repo.git({"diff", "--cached", "-M", "HEAD"});
  repo.git({"reset", "-q", "--hard", "HEAD"});
  repo.git({"clean", "-q", "-fd", "--", ".", ":!KAI-CODER-CHANGELOG.md"});
  return patch;
}

// Make the same five changes by hand: edit, create in a new folder, delete
// the last file of a folder, rename, executable bit.
void change_by_hand(const TempRepo& repo) {
  repo.write("src/a.c", "int a(void) {\n  return 42;\n}\n");
  repo.write("lib/new/c.c", "int c(void) { return 3; }\n");
  repo.remove("gone/only.txt");
  repo.remove("gone");
  repo.write("new/name.txt", "moving house\n");
  repo.remove("old/name.txt");
  repo.remove("old");
  repo.chmod("tool", 0755);
}

}  // namespace

TEST_CASE("a git diff of five kinds of change is one proposal, approved once, applied whole and undone with one id",
          "[e2e][changeset]") {
  TempRepo repo{{"src/a.c", "int a(void) {\n  return 1;\n}\n"},
                {"src/b.c", "int b(void) {\n  return 2;\n}\n"},
                {"old/name.txt", "moving house\n"},
                {"gone/only.txt", "last file in its folder\n"},
                {"tool", "#!/bin/sh\necho hi\n"}};
  repo.init();
  commit_all(repo);
  const auto before = files_of(repo);
  const auto before_modes = modes_of(repo);
  change_by_hand(repo);
  const auto wanted = files_of(repo);
  const auto wanted_modes = modes_of(repo);
  const std::string patch = diff_and_reset(repo);
  REQUIRE(files_of(repo) == before);

  Run p = repo.kai({"--json", "propose", "--patch", "-", "--why", "refactor"}, patch);
  KAI_REQUIRE_EXIT(p, 0);
  json j = json_of(p);
  CHECK(j.at("kind") == "changeset");
  REQUIRE(j.at("changes").size() == 5);
  CHECK(files_of(repo) == before);  // nothing written at propose

  // show: the diffstat first, then every file's diff; --file one of them.
  Run shown = repo.kai({"show", "1"});
  KAI_REQUIRE_EXIT(shown, 0);
  CHECK_THAT(shown.out, Contains("5 files changed"));
  CHECK_THAT(shown.out, Contains("old/name.txt \u2192 new/name.txt"));
  CHECK(shown.out.find("files changed") < shown.out.find("diff --git"));
  CHECK_THAT(shown.out, Contains("new mode 100755"));
  Run one = repo.kai({"show", "1", "--file", "src/a.c"});
  KAI_REQUIRE_EXIT(one, 0);
  CHECK_THAT(one.out, Contains("+  return 42;"));
  CHECK(one.out.find("diff --git a/lib/new/c.c") == std::string::npos);
  KAI_CHECK_EXIT(repo.kai({"show", "1", "--file", "nowhere.c"}), 7);

  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  INFO(a.all());
  REQUIRE(a.prompted);
  CHECK_THAT(a.tty + a.err, Contains("all 5 files"));
  CHECK(files_of(repo) == wanted);
  CHECK(modes_of(repo) == wanted_modes);
  // The folders it emptied hold nothing but the backups beside the old paths.
  const std::string rid0 = json_of(a).at("applied").at("rollback_id");
  CHECK(repo.ls("gone") == std::vector<std::string>{"only.txt.bak-kaicoder-" + rid0});
  CHECK(repo.ls("old") == std::vector<std::string>{"name.txt.bak-kaicoder-" + rid0});

  // One entry: every file and every backup, in the same order.
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  json e = entries.at(0);
  CHECK(e.at("kind") == "changeset");
  CHECK(e.at("action") == "apply_changeset");
  const std::string rid = e.at("rollback_id");
  CHECK(json_of(a).at("applied").at("rollback_id") == rid);
  std::vector<std::string> files = e.at("files");
  REQUIRE(files.size() == 6);  // the rename touches both of its paths
  std::string backups = e.at("backup");
  CHECK_THAT(backups, Contains((repo.path() / "old/name.txt.bak-kaicoder-").string() + rid));
  CHECK_THAT(backups, Contains((repo.path() / "src/a.c.bak-kaicoder-").string() + rid));
  const std::string log_text = repo.read("KAI-CODER-CHANGELOG.md");
  CHECK_THAT(log_text, Contains("changeset  \u00b7  rollback-id: " + rid));

  Run r = repo.kai_tty({"rollback", rid}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(files_of(repo) == before);
  CHECK(modes_of(repo) == before_modes);
  // The folder it made is gone; the rollback kept the files it removed in the state dir.
  const std::string undo_id = log_entries(repo).at(0).at("rollback_id");
  CHECK_FALSE(repo.exists("lib/new"));
  CHECK(repo.ls(".kaicoder/kept/" + undo_id).size() == 2);  // lib/new/c.c and new/name.txt, the rename's target
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
}

TEST_CASE("a *** Begin Patch envelope adds, updates with anchors, moves and deletes files as one changeset",
          "[e2e][changeset]") {
  TempRepo repo{
      {"app.py", "class Foo:\n    def bar(self):\n        return 1\n\n    def baz(self):\n        return 1\n"},
      {"old.py", "x = 1\n"},
      {"dead.py", "print('bye')\n"}};
  repo.init();
  const auto before = files_of(repo);
  const std::string patch =
      "*** Begin Patch\n"
      "*** Add File: pkg/new.py\n"
      "+def new():\n"
      "+    return 0\n"
      "*** Update File: app.py\n"
      "@@ class Foo:\n"
      "@@     def baz(self):\n"
      "-        return 1\n"
      "+        return 2\n"
      "*** Update File: old.py\n"
      "*** Move to: moved.py\n"
      "@@\n"
      "-x = 1\n"
      "+x = 2\n"
      "*** Delete File: dead.py\n"
      "*** End Patch\n";
  Run dry = repo.kai({"propose", "--dry-run", "--patch", "-", "--why", "envelope"}, patch);
  KAI_REQUIRE_EXIT(dry, 0);
  CHECK_THAT(dry.out, Contains("dry run: nothing staged"));
  CHECK_THAT(dry.out, Contains("4 files changed"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  CHECK(files_of(repo) == before);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "envelope"}, patch), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(repo.read("pkg/new.py") == "def new():\n    return 0\n");
  CHECK(repo.read("app.py") ==
        "class Foo:\n    def bar(self):\n        return 1\n\n    def baz(self):\n        return 2\n");
  CHECK(repo.read("moved.py") == "x = 2\n");
  CHECK_FALSE(repo.exists("old.py"));
  CHECK_FALSE(repo.exists("dead.py"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(files_of(repo) == before);
}

TEST_CASE(
    "changes given with --json-input: edit, replace_all, write, content_base64, delete, rename and mode in one "
    "changeset",
    "[e2e][changeset]") {
  TempRepo repo{
      {"a.txt", "one two one\n"}, {"b.txt", "bee\n"}, {"c.txt", "sea\n"}, {"d.txt", "dee\n"}, {"tool", "#!/bin/sh\n"}};
  repo.init();
  repo.chmod("c.txt", 0640);
  const auto before = files_of(repo);
  const auto before_modes = modes_of(repo);
  json req = {{"why", "many ops"},
              {"changes",
               {{{"op", "edit"}, {"path", "a.txt"}, {"target", "one"}, {"replacement", "1"}, {"replace_all", true}},
                {{"op", "write"}, {"path", "b.txt"}, {"content", "BEE\n"}},
                {{"op", "write"}, {"path", "bin/blob"}, {"content_base64", "AAECA/8="}},
                {{"op", "delete"}, {"path", "c.txt"}},
                {{"op", "rename"}, {"path", "d.txt"}, {"to", "e.txt"}},
                {{"op", "mode"}, {"path", "tool"}, {"mode", "0755"}}}}};
  Run p = repo.kai({"--json", "propose", "--json-input"}, req.dump());
  KAI_REQUIRE_EXIT(p, 0);
  CHECK(json_of(p).at("changes").size() == 6);
  Run listed = repo.kai({"list"});
  CHECK_THAT(listed.out, Contains("changeset"));
  CHECK_THAT(listed.out, Contains("6 files: a.txt, b.txt, "));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(repo.read("a.txt") == "1 two 1\n");
  CHECK(repo.read("b.txt") == "BEE\n");
  CHECK(repo.read("bin/blob") == std::string("\x00\x01\x02\x03\xff", 5));
  CHECK_FALSE(repo.exists("c.txt"));
  CHECK(repo.read("e.txt") == "dee\n");
  CHECK_FALSE(repo.exists("d.txt"));
  CHECK(repo.mode("tool") == 0755u);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(files_of(repo) == before);
  CHECK(modes_of(repo) == before_modes);  // the deleted file is back with its mode
  CHECK(repo.mode("c.txt") == 0640u);
}

TEST_CASE("one refused file refuses the whole changeset, naming it, and nothing is staged or written",
          "[e2e][changeset][refusal]") {
  TempRepo repo{{"src/a.c", "a\n"},
                {"vendor/lib.c", "v\n"},
                {"oracle.html", "<p>old</p>\n"},
                {"kaicoder.toml",
                 "[paths]\nprotected = [\"oracle.html\"]\n\n[[policy.rule]]\naction = \"edit\"\n"
                 "path = \"vendor/**\"\ndecision = \"deny\"\n"}};
  repo.trust();
  const auto before = repo.tree_snapshot();
  auto refused = [&](const json& changes) {
    return repo.kai({"propose", "--json-input"}, json{{"why", "w"}, {"changes", changes}}.dump());
  };

  SECTION("a policy deny on one file") {
    Run r = refused({{{"op", "edit"}, {"path", "src/a.c"}, {"target", "a"}, {"replacement", "b"}},
                     {{"op", "edit"}, {"path", "vendor/lib.c"}, {"target", "v"}, {"replacement", "w"}}});
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("vendor/lib.c"));
    CHECK_THAT(r.err, Contains("whole changeset is refused"));
  }
  SECTION("a never-write path") {
    Run r = refused({{{"op", "edit"}, {"path", "src/a.c"}, {"target", "a"}, {"replacement", "b"}},
                     {{"op", "write"}, {"path", ".env"}, {"content", "X=1\n"}}});
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains(".env"));
  }
  SECTION("a rename onto a never-write path, or through a symlinked folder") {
    repo.symlink("out", "/tmp");
    for (const json& c : {json{{"op", "rename"}, {"path", "oracle.html"}, {"to", ".git/hooks/pre-commit"}},
                          json{{"op", "write"}, {"path", "out/planted.txt"}, {"content", "x\n"}}}) {
      INFO(c.dump());
      Run r = refused({{{"op", "edit"}, {"path", "src/a.c"}, {"target", "a"}, {"replacement", "b"}}, c});
      KAI_CHECK_EXIT(r, 3);
      CHECK_THAT(r.err, Contains(c.contains("to") ? ".git" : "out"));
    }
    repo.remove("out");
  }
  SECTION("a protected file rewritten, deleted or renamed") {
    for (const json& c : {json{{"op", "write"}, {"path", "oracle.html"}, {"content", "x\n"}},
                          json{{"op", "delete"}, {"path", "oracle.html"}},
                          json{{"op", "rename"}, {"path", "oracle.html"}, {"to", "o.html"}},
                          json{{"op", "mode"}, {"path", "oracle.html"}, {"mode", "0755"}}}) {
      INFO(c.dump());
      Run r = refused({{{"op", "edit"}, {"path", "src/a.c"}, {"target", "a"}, {"replacement", "b"}}, c});
      KAI_CHECK_EXIT(r, 3);
      CHECK_THAT(r.err, Contains("oracle.html"));
      CHECK_THAT(r.err, Contains("surgical edits only"));
    }
  }
  SECTION("an edit whose target is missing") {
    Run r = refused({{{"op", "edit"}, {"path", "src/a.c"}, {"target", "a"}, {"replacement", "b"}},
                     {{"op", "edit"}, {"path", "oracle.html"}, {"target", "nope"}, {"replacement", "x"}}});
    KAI_CHECK_EXIT(r, 6);
    CHECK_THAT(r.err, Contains("oracle.html"));
  }
  SECTION("a malformed change") {
    Run r = refused({{{"op", "edit"}, {"path", "src/a.c"}, {"target", "a"}}});
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("changes[0]"));
  }
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("hunks on a protected file count as edits", "[e2e][changeset]") {
  TempRepo repo{{"oracle.html", "<p>old</p>\n"}, {"kaicoder.toml", "[paths]\nprotected = [\"oracle.html\"]\n"}};
  repo.trust();
  const std::string patch = "--- a/oracle.html\n+++ b/oracle.html\n@@ -1 +1 @@\n-<p>old</p>\n+<p>new</p>\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "w"}, patch), 0);
  // A protected path is in the confirm tier: a plain yes is not enough.
  Run plain = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(plain, 4);
  CHECK_THAT(plain.err, Contains("still pending"));
  CHECK(repo.read("oracle.html") == "<p>old</p>\n");
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "CONFIRM"), 0);
  CHECK(repo.read("oracle.html") == "<p>new</p>\n");
}

TEST_CASE("patches kaicoder does not take are refused at propose with the file named", "[e2e][changeset][refusal]") {
  TempRepo repo{{"a.txt", "one\ntwo\nthree\n"}, {"b.txt", "b\n"}};
  repo.init();
  const auto before = repo.tree_snapshot();
  SECTION("a hunk that does not apply") {
    const std::string patch =
        "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+2\n three\n";
    Run r = repo.kai({"propose", "--patch", "-", "--why", "w"}, patch);
    KAI_CHECK_EXIT(r, 6);
    CHECK_THAT(r.err, Contains("a.txt"));
    CHECK_THAT(r.err, Contains("hunk 1"));
  }
  SECTION("a binary patch") {
    const std::string patch =
        "diff --git a/a.bin b/a.bin\nnew file mode 100644\nindex 0000000..1111111\n"
        "Binary files /dev/null and b/a.bin differ\n";
    Run r = repo.kai({"propose", "--patch", "-", "--why", "w"}, patch);
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("a.bin"));
    CHECK_THAT(r.err, Contains("inary"));
  }
  SECTION("a symlink") {
    const std::string patch =
        "diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/l\n"
        "@@ -0,0 +1 @@\n+a.txt\n\\ No newline at end of file\n";
    Run r = repo.kai({"propose", "--patch", "-", "--why", "w"}, patch);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("symbolic link"));
  }
  SECTION("a submodule") {
    const std::string patch =
        "diff --git a/sub b/sub\nnew file mode 160000\nindex 0000000..1111111\n--- /dev/null\n"
        "+++ b/sub\n@@ -0,0 +1 @@\n+Subproject commit 1111111111111111111111111111111111111111\n";
    Run r = repo.kai({"propose", "--patch", "-", "--why", "w"}, patch);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("submodule"));
  }
  SECTION("a patch that leaves the root") {
    Run r = repo.kai({"propose", "--patch", "-", "--why", "w"}, "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n");
    KAI_CHECK_EXIT(r, 3);
  }
  SECTION("--patch with --path") {
    Run r = repo.kai({"propose", "--patch", "-", "--path", "a.txt", "--why", "w"}, "");
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("--path"));
  }
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("a changeset whose file changed after propose is stale as a whole: nothing is written", "[e2e][changeset]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}, {"c.txt", "c\n"}};
  repo.init();
  const std::string patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
      "--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-c\n+C\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "w"}, patch), 0);
  SECTION("changed before the approval") {
    repo.write("c.txt", "c\nmore\n");
    const auto before = tree_but_log(repo);
    Run a = repo.kai_tty({"approve", "1"}, "y");
    KAI_CHECK_EXIT(a, 6);
    CHECK_THAT(a.err, Contains("c.txt"));
    CHECK(tree_but_log(repo) == before);
  }
  SECTION("changed between approval and apply") {
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
    repo.chmod("b.txt", 0755);  // the mode counts too
    const auto before = tree_but_log(repo);
    Run a = repo.kai({"apply", "1"});
    KAI_CHECK_EXIT(a, 6);
    CHECK_THAT(a.err, Contains("b.txt"));
    CHECK_THAT(a.err, Contains("stale"));
    CHECK(tree_but_log(repo) == before);
    CHECK(repo.find(".bak-kaicoder-").empty());
  }
}

TEST_CASE("propose --replace-all records how many times the target occurs and apply refuses another count",
          "[e2e][changeset]") {
  TempRepo repo{{"a.txt", "x = old; y = old;\n"}};
  repo.init();
  Run single = repo.kai(edit("a.txt", "old", "new"));
  KAI_CHECK_EXIT(single, 6);  // twice: not unique
  Run p = repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--replace-all",
                    "--why", "rename"});
  KAI_REQUIRE_EXIT(p, 0);
  const int id = json_of(p).at("id");
  CHECK(json_of(p).at("occurrences") == 2);
  SECTION("applied as proposed") {
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", std::to_string(id)}, "y"), 0);
    CHECK(repo.read("a.txt") == "x = new; y = new;\n");
  }
  SECTION("the count changed before the apply") {
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", std::to_string(id), "--no-apply"}, "y"), 0);
    repo.write("a.txt", "x = old; y = old; z = old;\n");
    Run a = repo.kai({"apply", std::to_string(id)});
    KAI_CHECK_EXIT(a, 6);
    CHECK_THAT(a.err, Contains("3 times"));
    CHECK(repo.read("a.txt") == "x = old; y = old; z = old;\n");
  }
}

namespace {

// The three files of the crash cases, before and after the changeset.
struct Three {
  std::optional<std::string> a, b, c;
  bool operator==(const Three&) const = default;
};

Three three_of(const TempRepo& repo) {
  auto at = [&](const std::string& p) {
    return repo.exists(p) ? std::optional<std::string>(repo.read(p)) : std::nullopt;
  };
  return {at("a.txt"), at("sub/new.txt"), at("c.txt")};
}

const Three k_three_old{"alpha\n", std::nullopt, "gamma\n"};
const Three k_three_new{"ALPHA\n", "beta\n", std::nullopt};

void propose_three(const TempRepo& repo) {
  json req = {{"why", "three files"},
              {"changes",
               {{{"op", "edit"}, {"path", "a.txt"}, {"target", "alpha"}, {"replacement", "ALPHA"}},
                {{"op", "write"}, {"path", "sub/new.txt"}, {"content", "beta\n"}},
                {{"op", "delete"}, {"path", "c.txt"}}}}};
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, req.dump()), 0);
}

// The next command that proposes finishes or undoes what a crash left.
Run next_command(const TempRepo& repo) {
  return repo.kai({"propose", "--path", "unrelated.txt", "--content-file", "-", "--why", "next"}, "next\n");
}

std::vector<std::string> crash_points() {
  std::vector<std::string> out{"after-intent"};
  for (const char* p : {"after-backup", "after-replace"})
    for (int n = 1; n <= 3; ++n) out.push_back(fmt::format("{}:{}", p, n));
  out.push_back("after-journal");
  // Between the journal's pointers: some name the new entry, some the old.
  for (int n = 1; n <= 2; ++n) out.push_back(fmt::format("after-pointer:{}", n));
  for (const char* p : {"after-changelog", "after-status"}) out.push_back(p);
  return out;
}

}  // namespace

TEST_CASE("a crash at any step of a three-file changeset apply leaves all three old or all three new",
          "[e2e][changeset][crash][long]") {
  // Made, proposed and approved once, then restored before each fault point.
  TempRepo repo{{"a.txt", "alpha\n"}, {"c.txt", "gamma\n"}};
  repo.init();
  repo.chmod("c.txt", 0750);
  propose_three(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  repo.save();
  for (const std::string& point : crash_points()) {
    INFO("fault " << point);
    repo.restore();
    Run crashed = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", point}});
    INFO(crashed.all());
    REQUIRE(crashed.killed_by(SIGKILL));
    KAI_REQUIRE_EXIT(next_command(repo), 0);

    const Three now = three_of(repo);
    REQUIRE((now == k_three_old || now == k_three_new));
    CHECK(repo.find("kaicoder-tmp").empty());
    CHECK(repo.ls(".kaicoder/intents").empty());
    if (now == k_three_new) {
      json p = show_json(repo, 1);
      CHECK(p.at("status") == "applied");
      const std::string rid = p.at("rollback_id");
      json entries = log_entries(repo);
      size_t logged = 0;
      for (const auto& e : entries) logged += e.at("rollback_id") == rid;
      CHECK(logged == 1);
      CHECK(repo.find(".bak-kaicoder-").size() == 2);  // a.txt and c.txt
      KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
      CHECK(three_of(repo) == k_three_old);
      CHECK(repo.mode("c.txt") == 0750u);
    } else {
      CHECK(repo.find(".bak-kaicoder-").empty());
      CHECK_FALSE(repo.exists("sub"));  // the folder made for the new file went with it
      CHECK(show_json(repo, 1).at("status") == "approved");
      KAI_REQUIRE_EXIT(repo.kai({"apply", "1"}), 0);
      CHECK(three_of(repo) == k_three_new);
    }
  }
}

TEST_CASE("a crash at any step of a three-file changeset rollback leaves all three old or all three new",
          "[e2e][changeset][crash][long]") {
  // Made, proposed, approved and applied once, then restored before each fault point.
  TempRepo repo{{"a.txt", "alpha\n"}, {"c.txt", "gamma\n"}};
  repo.init();
  propose_three(repo);
  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  const std::string applied = json_of(a).at("applied").at("rollback_id");
  REQUIRE(three_of(repo) == k_three_new);
  repo.save();
  for (const std::string& point : crash_points()) {
    INFO("fault " << point);
    repo.restore();

    Run crashed = repo.kai_tty({"rollback", applied}, "y", {{"KAICODER_FAULT", point}});
    INFO(crashed.all());
    REQUIRE(crashed.killed_by(SIGKILL));
    KAI_REQUIRE_EXIT(next_command(repo), 0);

    const Three now = three_of(repo);
    REQUIRE((now == k_three_old || now == k_three_new));
    CHECK(repo.find("kaicoder-tmp").empty());
    CHECK(repo.ls(".kaicoder/intents").empty());
    if (now == k_three_old) {
      CHECK(show_json(repo, 1).at("status") == "rolled-back");
      const std::string rid = log_entries(repo).at(0).at("rollback_id");
      KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);  // and undone in turn
      CHECK(three_of(repo) == k_three_new);
    } else {
      CHECK(show_json(repo, 1).at("status") == "applied");
      KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", applied}, "y"), 0);
      CHECK(three_of(repo) == k_three_old);
    }
  }
}

namespace {

// Text of `lines` lines, each ended with `eol`, the last one perhaps without.
std::string text_of(std::mt19937& rng, size_t lines, const std::string& eol, bool final_newline) {
  static const char* k_words[] = {"alpha", "beta", "gamma",      "delta", "return x;",
                                  "}",     "{",    "int y = 2;", "",      "  // note"};
  std::string out;
  for (size_t i = 0; i < lines; ++i) {
    out += k_words[rng() % std::size(k_words)];
    out += std::to_string(rng() % 50);
    if (i + 1 < lines || final_newline) out += eol;
  }
  return out;
}

// The bytes of `text` with some lines changed, inserted or removed.
std::string edited(std::mt19937& rng, const std::string& text) {
  const std::string eol = text.find("\r\n") != std::string::npos ? "\r\n" : "\n";
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !lines.empty(); ++e) {
    size_t at = rng() % lines.size();
    switch (rng() % 3) {
      case 0: lines[at] = "changed " + std::to_string(rng() % 1000) + (lines[at].ends_with('\n') ? eol : ""); break;
      case 1:
        lines.insert(lines.begin() + static_cast<long>(at), "inserted " + std::to_string(rng() % 1000) + eol);
        break;
      default:
        if (lines.size() > 1) lines.erase(lines.begin() + static_cast<long>(at));
    }
  }
  // Sometimes the final newline comes or goes.
  if (!lines.empty() && rng() % 4 == 0) {
    std::string& last = lines.back();
    if (last.ends_with('\n'))
      last.resize(last.size() - eol.size());
    else
      last += eol;
  }
  std::string out;
  for (const auto& l : lines) out += l;
  return out;
}

}  // namespace

TEST_CASE(
    "corpus: git diff of generated multi-file commits, proposed, approved and applied, gives the tree git apply gives",
    "[e2e][changeset][corpus]") {
  const unsigned seed = GENERATE(range(1u, 7u));
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  TempRepo repo;
  repo.init();
  // The base: files in folders, LF and CRLF, with and without a final
  // newline, some executable.
  std::vector<std::string> names;
  for (int i = 0; i < 10; ++i) {
    std::string name = fmt::format("{}f{}.txt", i % 3 == 0 ? "" : i % 3 == 1 ? "src/" : "deep/er/", i);
    repo.write(name, text_of(rng, 3 + rng() % 20, rng() % 3 == 0 ? "\r\n" : "\n", rng() % 4 != 0));
    if (rng() % 4 == 0) repo.chmod(name, 0755);
    names.push_back(name);
  }
  commit_all(repo);
  // The commit: every kind of change, chosen by the seed.
  std::shuffle(names.begin(), names.end(), rng);
  repo.write(names[0], edited(rng, repo.read(names[0])));
  repo.write(names[1], edited(rng, repo.read(names[1])));
  repo.remove(names[2]);
  {
    std::string bytes = repo.read(names[3]);
    unsigned mode = repo.mode(names[3]);
    repo.remove(names[3]);
    repo.write("moved/" + std::to_string(seed) + ".txt", seed % 2 ? bytes : edited(rng, bytes));
    repo.chmod("moved/" + std::to_string(seed) + ".txt", mode);
  }
  repo.chmod(names[4], repo.mode(names[4]) & 0100 ? 0644 : 0755);
  if (seed % 2) repo.write(names[5], edited(rng, repo.read(names[5])));
  repo.write("new/file" + std::to_string(seed) + ".txt",
             text_of(rng, 1 + rng() % 5, seed % 3 ? "\n" : "\r\n", seed % 2));
  const auto committed = files_of(repo);  // what the commit holds: the tree to reach
  const std::string patch = diff_and_reset(repo);
  const auto base = files_of(repo);
  INFO(patch);
  for (const char* part : {"new mode", "new file mode", "deleted file mode", "@@"}) CHECK_THAT(patch, Contains(part));

  Run p = repo.kai({"propose", "--patch", "-", "--why", "corpus"}, patch);
  KAI_REQUIRE_EXIT(p, 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  const auto by_kaicoder = files_of(repo);
  const auto modes_by_kaicoder = modes_of(repo);
  CHECK(by_kaicoder != base);
  CHECK(by_kaicoder == committed);

  repo.git({"reset", "-q", "--hard", "HEAD"});
  repo.git({"clean", "-q", "-fd", "--", ".", ":!.kaicoder", ":!KAI-CODER-CHANGELOG.md"});
  Run applied = repo.spawn({"git", "apply", "-"}, patch).finish();
  INFO(applied.all());
  REQUIRE(applied.ok());
  std::map<std::string, std::string> by_git = files_of(repo);
  CHECK(by_kaicoder == by_git);
  CHECK(modes_by_kaicoder == modes_of(repo));
}

TEST_CASE("a changeset whose diff is cut for display takes CONFIRM, however small each file", "[e2e][changeset]") {
  TempRepo repo;
  repo.init();
  json changes = json::array();
  for (int f = 0; f < 3; ++f) {
    std::string content;
    for (int l = 0; l < 800; ++l) content += fmt::format("file {} line {}\n", f, l);
    changes.push_back({{"op", "write"}, {"path", fmt::format("gen/{}.txt", f)}, {"content", content}});
  }
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, json{{"why", "generated"}, {"changes", changes}}.dump()), 0);
  Run shown = repo.kai({"show", "1"});
  CHECK_THAT(shown.out, Contains("diff cut for display"));
  CHECK_THAT(shown.out, Contains("in 3 files"));
  CHECK_THAT(shown.out, Contains("kaicoder show 1 --file PATH"));
  Run plain = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(plain, 4);
  CHECK_THAT(plain.err, Contains("still pending"));
  CHECK_FALSE(repo.exists("gen"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "CONFIRM"), 0);
  CHECK(repo.read("gen/2.txt").size() > 10000);
}

TEST_CASE("approve pages a changeset longer than the screen before it asks", "[e2e][changeset][pager]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}};
  repo.init();
  const std::string patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "w"}, patch), 0);
  // Ten rows: the header, the files and both diffs do not fit.
  Run a = repo.kai_tty({"approve", "1"}, "y", {{"KAICODER_PAGER", "sed 's/^/paged: /'"}, {"PAGER", std::nullopt}},
                       TtyOutput::terminal, k_default_limit, TtySize{10, 80});
  KAI_REQUIRE_EXIT(a, 0);
  REQUIRE(a.prompted);
  const std::string seen = a.out + a.tty;
  CHECK_THAT(seen, Contains("paged: 2 files changed"));
  CHECK_THAT(seen, Contains("paged: +B"));
  CHECK(seen.find("paged: +B") < seen.find("Apply proposal 1 to all 2 files?"));
  CHECK(repo.read("a.txt") == "A\n");
  CHECK(repo.read("b.txt") == "B\n");
}

namespace {
// The soft limit on open files lowered for the commands this process
// starts (they inherit it), and put back after.
class OpenFileLimit {
public:
  explicit OpenFileLimit(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &m_was);
    struct rlimit lowered = m_was;
    lowered.rlim_cur = std::min<rlim_t>(soft, m_was.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &lowered);
  }
  OpenFileLimit(const OpenFileLimit&) = delete;
  OpenFileLimit& operator=(const OpenFileLimit&) = delete;
  ~OpenFileLimit() { ::setrlimit(RLIMIT_NOFILE, &m_was); }

private:
  struct rlimit m_was {};
};
}  // namespace

TEST_CASE("a changeset of more files than the open-file limit applies and rolls back: one descriptor a folder",
          "[e2e][changeset]") {
  // 400 files in 8 folders under a limit of 128 open files: a descriptor
  // held per file ran out of them ("Too many open files") part-way.
  TempRepo repo;
  json changes = json::array();
  std::map<std::string, std::string> before, after;
  for (int f = 0; f < 400; ++f) {
    const std::string rel = fmt::format("d{}/f{}.txt", f % 8, f);
    before[rel] = fmt::format("file {} as it was\n", f);
    after[rel] = fmt::format("file {} as the changeset makes it\n", f);
    repo.write(rel, before[rel]);
    changes.push_back({{"op", "write"}, {"path", rel}, {"content", after[rel]}});
  }
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, json{{"why", "many files"}, {"changes", changes}}.dump()), 0);
  {
    OpenFileLimit limit(128);
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  }
  for (const auto& [rel, bytes] : after) REQUIRE(repo.read(rel) == bytes);
  {
    OpenFileLimit limit(128);
    KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  }
  for (const auto& [rel, bytes] : before) REQUIRE(repo.read(rel) == bytes);
}

namespace {
// Files in 300 folders, one each, and proposal 1 rewriting every one of
// them: a transaction holds a folder open for each until it is done.
void propose_in_300_folders(const TempRepo& repo) {
  json changes = json::array();
  for (int f = 0; f < 300; ++f) {
    const std::string rel = fmt::format("d{}/f.txt", f);
    repo.write(rel, fmt::format("file {} as it was\n", f));
    changes.push_back({{"op", "write"}, {"path", rel}, {"content", fmt::format("file {} changed\n", f)}});
  }
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, json{{"why", "many folders"}, {"changes", changes}}.dump()),
                   0);
}
}  // namespace

TEST_CASE("a changeset over more folders than the soft open-file limit raises it toward the hard one and applies",
          "[e2e][changeset]") {
  TempRepo repo;
  propose_in_300_folders(repo);  // under a soft limit of 128
  {
    OpenFileLimit limit(128);
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  }
  for (int f = 0; f < 300; ++f) REQUIRE(repo.read(fmt::format("d{}/f.txt", f)) == fmt::format("file {} changed\n", f));
  {
    OpenFileLimit limit(128);
    KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  }
  for (int f = 0; f < 300; ++f)
    REQUIRE(repo.read(fmt::format("d{}/f.txt", f)) == fmt::format("file {} as it was\n", f));
}

TEST_CASE("a changeset over more folders than the hard open-file limit allows is refused before any file changes",
          "[e2e][changeset][refusal]") {
  TempRepo repo;
  propose_in_300_folders(repo);
  auto before = repo.tree_snapshot();
  before.erase("KAI-CODER-CHANGELOG.md");
  // prlimit sets both limits for kaicoder alone: no raising past 128.
  TtyProcess approver =
      repo.spawn_tty({"prlimit", "--nofile=128:128", "--", std::string(kaicoder_bin()), "approve", "1"});
  REQUIRE(approver.wait_for_prompt());
  approver.answer("y");
  Run r = approver.finish();
  KAI_CHECK_EXIT(r, 1);
  CHECK_THAT(r.err, Contains("300 folders") && Contains("128 open files") && Contains("nothing was changed"));
  CHECK_THAT(r.err, Contains("ulimit -n"));
  auto after = repo.tree_snapshot();
  after.erase("KAI-CODER-CHANGELOG.md");
  CHECK(after == before);
  CHECK(repo.find(".bak-kaicoder-").empty());
}
