// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "lib/diff/diff.hpp"
#include "lib/patch/patch.hpp"
#include "lib/patch/patch_envelope.hpp"
#include "lib/patch/patch_unified.hpp"

using kai::Changeset;
using kai::CurrentFile;
using kai::Errc;
using kai::FileOp;
using kai::FileOpKind;
using kai::Result;

namespace {

using Tree = std::map<std::string, CurrentFile>;

kai::ReadCurrent reader(const Tree& tree) {
  return [&tree](const std::string& p) -> Result<std::optional<CurrentFile>> {
    auto it = tree.find(p);
    if (it == tree.end()) return std::optional<CurrentFile>();
    return std::optional<CurrentFile>(it->second);
  };
}

// The tree after `patch`, or the error of parsing or applying it.
Result<Tree> patched(std::string_view patch, const Tree& tree, const kai::PatchLimits& limits = {}) {
  Result<Changeset> cs = kai::parse_patch(patch, limits);
  if (!cs) return cs.error();
  KAI_TRY(kai::apply_changeset(*cs, reader(tree), limits));
  Tree out = tree;
  for (const FileOp& op : cs->ops) {
    if (op.kind == FileOpKind::remove || op.kind == FileOpKind::rename) out.erase(op.path);
    if (op.after) out[op.target()] = CurrentFile{*op.after, op.after_mode};
  }
  return out;
}

std::string err(std::string_view patch, const Tree& tree, Errc* code = nullptr) {
  Result<Tree> r = patched(patch, tree);
  if (r) return "(applied)";
  if (code) *code = r.error().code;
  return r.error().message;
}

std::string numbered(int from, int to, std::string_view eol = "\n") {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + std::string(eol);
  return s;
}

}  // namespace

TEST_CASE("a git diff edit applies and names its parts", "[patch]") {
  Tree t{{"src/a.c", {"one\ntwo\nthree\n", 0644}}};
  std::string p =
      "diff --git a/src/a.c b/src/a.c\n"
      "index 1111111..2222222 100644\n"
      "--- a/src/a.c\n"
      "+++ b/src/a.c\n"
      "@@ -1,3 +1,3 @@\n"
      " one\n"
      "-two\n"
      "+TWO\n"
      " three\n";
  Result<Changeset> cs = kai::parse_patch(p);
  REQUIRE(cs);
  REQUIRE(cs->ops.size() == 1);
  CHECK(cs->ops[0].kind == FileOpKind::edit);
  CHECK(cs->ops[0].path == "src/a.c");
  CHECK(cs->ops[0].hunks.size() == 1);
  CHECK(cs->ops[0].hunks[0].header == "@@ -1,3 +1,3 @@");
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["src/a.c"].bytes == "one\nTWO\nthree\n");
  CHECK((*r)["src/a.c"].mode == 0644);
}

TEST_CASE("new and deleted files, with and without content", "[patch]") {
  Tree t{{"old.txt", {"bye\nnow\n", 0644}}, {"empty", {"", 0644}}};
  std::string p =
      "diff --git a/new.sh b/new.sh\n"
      "new file mode 100755\n"
      "index 0000000..3333333\n"
      "--- /dev/null\n"
      "+++ b/new.sh\n"
      "@@ -0,0 +1,2 @@\n"
      "+#!/bin/sh\n"
      "+echo hi\n"
      "diff --git a/blank b/blank\n"
      "new file mode 100644\n"
      "index 0000000..e69de29\n"
      "diff --git a/old.txt b/old.txt\n"
      "deleted file mode 100644\n"
      "index 4444444..0000000\n"
      "--- a/old.txt\n"
      "+++ /dev/null\n"
      "@@ -1,2 +0,0 @@\n"
      "-bye\n"
      "-now\n"
      "diff --git a/empty b/empty\n"
      "deleted file mode 100644\n"
      "index e69de29..0000000\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK(r->size() == 2);
  CHECK((*r)["new.sh"].bytes == "#!/bin/sh\necho hi\n");
  CHECK((*r)["new.sh"].mode == 0755);
  CHECK((*r)["blank"].bytes.empty());
  CHECK(r->count("old.txt") == 0);
  CHECK(r->count("empty") == 0);

  SECTION("a delete whose lines are not the file's is refused") {
    Tree changed{{"old.txt", {"bye\nnow\nmore\n", 0644}}, {"empty", {"", 0644}}};
    Errc code{};
    CHECK_THAT(err(p, changed, &code), Catch::Contains("old.txt"));
    CHECK(code == Errc::conflict);
  }
}

TEST_CASE("mode changes set and clear the executable bit", "[patch]") {
  Tree t{{"run.sh", {"echo\n", 0644}}, {"tool", {"x\n", 0750}}, {"priv", {"p\n", 0600}}};
  std::string p =
      "diff --git a/run.sh b/run.sh\n"
      "old mode 100644\n"
      "new mode 100755\n"
      "diff --git a/tool b/tool\n"
      "old mode 100755\n"
      "new mode 100644\n"
      "index 1..2\n"
      "--- a/tool\n"
      "+++ b/tool\n"
      "@@ -1 +1 @@\n"
      "-x\n"
      "+y\n"
      "diff --git a/priv b/priv\n"
      "old mode 100644\n"
      "new mode 100755\n";
  Result<Changeset> cs = kai::parse_patch(p);
  REQUIRE(cs);
  CHECK(cs->ops[0].kind == FileOpKind::mode);
  CHECK(cs->ops[1].kind == FileOpKind::edit);
  CHECK(cs->ops[1].new_mode == kai::k_mode_regular);
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["run.sh"].mode == 0755);
  CHECK((*r)["run.sh"].bytes == "echo\n");
  CHECK((*r)["tool"].mode == 0640);
  CHECK((*r)["tool"].bytes == "y\n");
  CHECK((*r)["priv"].mode == 0700);
}

TEST_CASE("renames and copies, with and without content change", "[patch]") {
  Tree t{{"a.txt", {numbered(1, 10), 0644}}, {"b.txt", {"same\n", 0755}}};
  std::string p =
      "diff --git a/a.txt b/dir/c.txt\n"
      "similarity index 90%\n"
      "rename from a.txt\n"
      "rename to dir/c.txt\n"
      "index 1..2 100644\n"
      "--- a/a.txt\n"
      "+++ b/dir/c.txt\n"
      "@@ -4,3 +4,3 @@\n"
      " line 4\n"
      "-line 5\n"
      "+line five\n"
      " line 6\n"
      "diff --git a/b.txt b/moved b.txt\n"
      "similarity index 100%\n"
      "rename from b.txt\n"
      "rename to moved b.txt\n";
  Result<Changeset> cs = kai::parse_patch(p);
  REQUIRE(cs);
  REQUIRE(cs->ops.size() == 2);
  CHECK(cs->ops[0].kind == FileOpKind::rename);
  CHECK(cs->ops[1].to == "moved b.txt");
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK(r->count("a.txt") == 0);
  CHECK(r->count("b.txt") == 0);
  CHECK((*r)["dir/c.txt"].bytes ==
        "line 1\nline 2\nline 3\nline 4\nline five\nline 6\nline 7\nline 8\nline 9\nline 10\n");
  CHECK((*r)["moved b.txt"].bytes == "same\n");
  CHECK((*r)["moved b.txt"].mode == 0755);

  SECTION("a rename onto an existing file is refused") {
    Tree taken = t;
    taken["moved b.txt"] = CurrentFile{"there\n", 0644};
    Errc code{};
    CHECK_THAT(err(p, taken, &code), Catch::Contains("moved b.txt") && Catch::Contains("already exists"));
    CHECK(code == Errc::conflict);
  }

  SECTION("a copy reads its source as it was, even when the patch changes it") {
    std::string c =
        "diff --git a/b.txt b/b3.txt\n"
        "similarity index 50%\n"
        "copy from b.txt\n"
        "copy to b3.txt\n"
        "--- a/b.txt\n+++ b/b3.txt\n@@ -1 +1,2 @@\n same\n+more\n"
        "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-same\n+changed\n";
    Result<Tree> rc = patched(c, t);
    REQUIRE(rc);
    CHECK((*rc)["b.txt"].bytes == "changed\n");
    CHECK((*rc)["b3.txt"].bytes == "same\nmore\n");
  }
  SECTION("a copy leaves its source as it is") {
    std::string c =
        "diff --git a/b.txt b/b2.txt\n"
        "similarity index 100%\n"
        "copy from b.txt\n"
        "copy to b2.txt\n";
    Result<Tree> rc = patched(c, t);
    REQUIRE(rc);
    CHECK((*rc)["b.txt"].bytes == "same\n");
    CHECK((*rc)["b2.txt"].bytes == "same\n");
    CHECK((*rc)["b2.txt"].mode == 0755);
  }
}

TEST_CASE("a complete rewrite with a dissimilarity index", "[patch]") {
  Tree t{{"r.txt", {"a\nb\n", 0644}}};
  std::string p =
      "diff --git a/r.txt b/r.txt\n"
      "dissimilarity index 100%\n"
      "index 1..2 100644\n"
      "--- a/r.txt\n"
      "+++ b/r.txt\n"
      "@@ -1,2 +1,3 @@\n"
      "-a\n"
      "-b\n"
      "+x\n"
      "+y\n"
      "+z\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["r.txt"].bytes == "x\ny\nz\n");
}

TEST_CASE("no newline at end of file on either side", "[patch]") {
  Tree t{{"f", {"a\nb", 0644}}, {"g", {"x\ny\n", 0644}}};
  std::string p =
      "diff --git a/f b/f\n"
      "--- a/f\n"
      "+++ b/f\n"
      "@@ -1,2 +1,2 @@\n"
      " a\n"
      "-b\n"
      "\\ No newline at end of file\n"
      "+b\n"
      "diff --git a/g b/g\n"
      "--- a/g\n"
      "+++ b/g\n"
      "@@ -1,2 +1,2 @@\n"
      " x\n"
      "-y\n"
      "+z\n"
      "\\ No newline at end of file\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["f"].bytes == "a\nb\n");
  CHECK((*r)["g"].bytes == "x\nz");

  SECTION("the old side without a newline does not match a line that has one") {
    Tree other{{"f", {"a\nb\n", 0644}}, {"g", {"x\ny\n", 0644}}};
    CHECK_THAT(err(p, other), Catch::Contains("'f'") && Catch::Contains("hunk 1"));
  }
}

TEST_CASE("CRLF lines are matched and kept as bytes", "[patch]") {
  Tree t{{"w.txt", {"one\r\ntwo\r\nthree\r\n", 0644}}};
  std::string p =
      "--- a/w.txt\n"
      "+++ b/w.txt\n"
      "@@ -1,3 +1,3 @@\n"
      " one\r\n"
      "-two\r\n"
      "+2\r\n"
      " three\r\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["w.txt"].bytes == "one\r\n2\r\nthree\r\n");
  // The same hunk without the CRs does not match: whitespace is exact.
  std::string lf = "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n";
  Errc code{};
  CHECK_THAT(err(lf, t, &code), Catch::Contains("w.txt"));
  CHECK(code == Errc::conflict);
}

TEST_CASE("hunks are found at an offset, nearest first, and in order", "[patch]") {
  std::string body = numbered(1, 40);
  Tree t{{"f", {"new 1\nnew 2\nnew 3\n" + body, 0644}}};
  std::string p =
      "--- a/f\n+++ b/f\n"
      "@@ -10,3 +10,3 @@\n line 10\n-line 11\n+eleven\n line 12\n"
      "@@ -30,3 +30,3 @@\n line 30\n-line 31\n+thirty-one\n line 32\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  std::string want = (*r)["f"].bytes;
  CHECK(want.find("line 10\neleven\nline 12\n") != std::string::npos);
  CHECK(want.find("line 30\nthirty-one\nline 32\n") != std::string::npos);
  CHECK(want.find("line 11\n") == std::string::npos);

  SECTION("a hunk is found before its stated line too") {
    Tree shorter{{"f", {numbered(5, 40), 0644}}};
    Result<Tree> r2 = patched(p, shorter);
    REQUIRE(r2);
    CHECK((*r2)["f"].bytes.find("line 10\neleven\nline 12\n") != std::string::npos);
  }
  SECTION("the nearest of two equal places wins") {
    Tree twice{{"f", {"x\nA\ny\nfill\nfill\nfill\nfill\nx\nA\ny\n", 0644}}};
    std::string q = "--- a/f\n+++ b/f\n@@ -7,3 +7,3 @@\n x\n-A\n+B\n y\n";
    Result<Tree> r2 = patched(q, twice);
    REQUIRE(r2);
    CHECK((*r2)["f"].bytes == "x\nA\ny\nfill\nfill\nfill\nfill\nx\nB\ny\n");
  }
}

TEST_CASE("a hunk that does not apply is refused naming the file and the hunk", "[patch]") {
  Tree t{{"src/m.c", {numbered(1, 20), 0644}}};
  std::string p =
      "--- a/src/m.c\n+++ b/src/m.c\n"
      "@@ -2,3 +2,3 @@\n line 2\n-line 3\n+three\n line 4\n"
      "@@ -10,3 +10,3 @@\n line 10\n-line 99\n+ten\n line 12\n";
  Errc code{};
  std::string m = err(p, t, &code);
  CHECK(code == Errc::conflict);
  CHECK_THAT(m, Catch::Contains("'src/m.c'") && Catch::Contains("hunk 2") && Catch::Contains("@@ -10,3 +10,3 @@"));
}

TEST_CASE("hunks must match at the start or end when git says so", "[patch]") {
  Tree t{{"f", {"zero\none\ntwo\nthree\n", 0644}}};
  // No trailing context: must match at the end; here it is not at the end.
  std::string end = "--- a/f\n+++ b/f\n@@ -2,2 +2,1 @@\n one\n-two\n";
  CHECK_THAT(err(end, t), Catch::Contains("hunk 1"));
  // Starts at line 1: must match at the start.
  std::string begin = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n";
  CHECK_THAT(err(begin, t), Catch::Contains("hunk 1"));
}

TEST_CASE("quoted names with spaces, quotes and unicode", "[patch]") {
  Tree t{{"dir x/späce \"q\".txt", {"a\n", 0644}}, {"tab\there", {"t\n", 0644}}};
  std::string p =
      "diff --git \"a/dir x/sp\\303\\244ce \\\"q\\\".txt\" \"b/dir x/sp\\303\\244ce \\\"q\\\".txt\"\n"
      "index 1..2 100644\n"
      "--- \"a/dir x/sp\\303\\244ce \\\"q\\\".txt\"\n"
      "+++ \"b/dir x/sp\\303\\244ce \\\"q\\\".txt\"\n"
      "@@ -1 +1 @@\n"
      "-a\n"
      "+b\n"
      "diff --git \"a/tab\\there\" \"b/tab\\there\"\n"
      "old mode 100644\n"
      "new mode 100755\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["dir x/späce \"q\".txt"].bytes == "b\n");
  CHECK((*r)["tab\there"].mode == 0755);

  SECTION("unquoted names with spaces, as git writes them (a tab after the name)") {
    Tree s{{"my file.txt", {"a\n", 0644}}};
    std::string q =
        "diff --git a/my file.txt b/my file.txt\n"
        "index 1..2 100644\n"
        "--- a/my file.txt\t\n"
        "+++ b/my file.txt\t\n"
        "@@ -1 +1 @@\n-a\n+b\n";
    Result<Tree> rs = patched(q, s);
    REQUIRE(rs);
    CHECK((*rs)["my file.txt"].bytes == "b\n");
  }
}

TEST_CASE("plain diff -u output, with and without a/ b/ prefixes", "[patch]") {
  Tree t{{"src/x.c", {"int a;\n", 0644}}, {"y.c", {"int b;\n", 0644}}};
  std::string p =
      "Only in new: junk\n"
      "diff -u old/src/x.c new/src/x.c\n"
      "--- old/src/x.c\t2024-01-01 10:00:00.000000000 +0000\n"
      "+++ new/src/x.c\t2024-01-02 10:00:00.000000000 +0000\n"
      "@@ -1 +1 @@\n"
      "-int a;\n"
      "+int c;\n"
      "--- y.c\n"
      "+++ y.c\n"
      "@@ -1 +1 @@\n"
      "-int b;\n"
      "+int d;\n"
      "--- /dev/null\n"
      "+++ b/z.c\n"
      "@@ -0,0 +1 @@\n"
      "+int z;\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["src/x.c"].bytes == "int c;\n");
  CHECK((*r)["y.c"].bytes == "int d;\n");
  CHECK((*r)["z.c"].bytes == "int z;\n");
  CHECK((*r)["z.c"].mode == 0644);
}

TEST_CASE("binary patches, symlinks and submodules are refused naming the file", "[patch]") {
  auto refused = [](std::string_view p, Errc want, std::string_view name) {
    Result<Changeset> cs = kai::parse_patch(p);
    REQUIRE_FALSE(cs);
    CHECK(cs.error().code == want);
    CHECK_THAT(cs.error().message, Catch::Contains(std::string(name)));
  };
  refused("diff --git a/img.png b/img.png\nindex 1..2 100644\nGIT binary patch\nliteral 5\nabc\n", Errc::usage,
          "img.png");
  refused("diff --git a/img.png b/img.png\nindex 1..2 100644\nBinary files a/img.png and b/img.png differ\n",
          Errc::usage, "img.png");
  refused("Binary files old/x.bin and new/x.bin differ\n", Errc::usage, "x.bin");
  refused(
      "diff --git a/link b/link\nnew file mode 120000\nindex 0..1\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 "
      "@@\n+/etc/passwd\n"
      "\\ No newline at end of file\n",
      Errc::denied, "link");
  refused(
      "diff --git a/lib/sub b/lib/sub\nindex 1..2 160000\n--- a/lib/sub\n+++ b/lib/sub\n@@ -1 +1 @@\n"
      "-Subproject commit 1\n+Subproject commit 2\n",
      Errc::denied, "lib/sub");
  refused("diff --git a/f b/f\nold mode 100644\nnew mode 120000\n", Errc::denied, "symbolic link");
}

TEST_CASE("malformed and hostile patches are refused", "[patch]") {
  auto code_of = [](std::string_view p) {
    Result<Changeset> cs = kai::parse_patch(p);
    return cs ? Errc{} : cs.error().code;
  };
  CHECK(code_of("") == Errc::usage);
  CHECK(code_of("just some text\n") == Errc::usage);
  CHECK(code_of("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n") == Errc::usage);      // truncated hunk
  CHECK(code_of("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n") != Errc::usage);  // extra line is not part of the hunk
  CHECK(code_of("--- a/f\n+++ b/f\n@@ -x +1 @@\n-a\n") == Errc::usage);
  CHECK(code_of("--- a/f\n+++ b/f\n@@ -0,0 +0,0 @@\n\\ No newline at end of file\n") == Errc::usage);
  CHECK(code_of("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n") == Errc::denied);
  CHECK(code_of("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n") == Errc::denied);
  CHECK(code_of("diff --git a/a b/a\nsimilarity index 90%\nrename from a\nrename to \n") == Errc::usage);
  CHECK(code_of("--- a/x//y\n+++ b/x//y\n@@ -1 +1 @@\n-a\n+b\n") == Errc::usage);
  CHECK(code_of("diff --git \"a/bad\\q\" \"b/bad\\q\"\nold mode 100644\nnew mode 100755\n") == Errc::usage);
  kai::PatchLimits small;
  small.max_patch_bytes = 10;
  CHECK_FALSE(kai::parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", small));
  small = {};
  small.max_files = 1;
  CHECK_FALSE(
      kai::parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n", small));
  small = {};
  small.max_line_bytes = 8;
  CHECK_FALSE(kai::parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+bbbbbbbbbbbbbbbbbbbb\n", small));
}

TEST_CASE("a changeset refuses what does not fit the tree", "[patch]") {
  Tree t{{"a", {"1\n", 0644}}, {"b", {"2\n", 0644}}};
  Errc code{};
  // Touching a path twice.
  CHECK_THAT(err("--- a/a\n+++ b/a\n@@ -1 +1 @@\n-1\n+x\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n", t, &code),
             Catch::Contains("'a' twice"));
  CHECK(code == Errc::conflict);
  CHECK_THAT(err("diff --git a/a b/c\nsimilarity index 100%\nrename from a\nrename to c\n"
                 "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1 +1 @@\n-1\n+3\n",
                 t),
             Catch::Contains("twice"));
  // A create of an existing file.
  CHECK_THAT(err("--- /dev/null\n+++ b/a\n@@ -0,0 +1 @@\n+new\n", t, &code), Catch::Contains("'a': it already exists"));
  CHECK(code == Errc::conflict);
  // An update or delete of a missing one.
  CHECK_THAT(err("--- a/zz\n+++ b/zz\n@@ -1 +1 @@\n-1\n+x\n", t, &code), Catch::Contains("'zz': it does not exist"));
  CHECK_THAT(err("--- a/zz\n+++ /dev/null\n@@ -1 +0,0 @@\n-1\n", t, &code), Catch::Contains("'zz': it does not exist"));
  CHECK(code == Errc::conflict);
}

TEST_CASE("placing hunks on hostile input is bounded", "[patch]") {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "a\n";
  Tree t{{"f", {big, 0644}}};
  std::string p = "--- a/f\n+++ b/f\n@@ -10000,1002 +10000,1002 @@\n";
  for (int i = 0; i < 1000; ++i) p += " a\n";
  p += "-b\n+c\n a\n";
  kai::PatchLimits limits;
  limits.max_match_steps = 1'000'000;
  Result<Tree> r = patched(p, t, limits);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::conflict);
  CHECK_THAT(r.error().message, Catch::Contains("too long"));
}

TEST_CASE("envelope: add, delete, update, move", "[patch]") {
  Tree t{{"src/app.py", {"import os\n\ndef greet():\n    print(\"Hi\")\n\ndef main():\n    greet()\n", 0755}},
         {"obsolete.txt", {"x\n", 0644}},
         {"notes.md", {"a\nb\nc\n", 0644}}};
  std::string p =
      "*** Begin Patch\n"
      "*** Add File: hello.txt\n"
      "+Hello world\n"
      "+\n"
      "*** Update File: src/app.py\n"
      "*** Move to: src/main.py\n"
      "@@ def greet():\n"
      "-    print(\"Hi\")\n"
      "+    print(\"Hello, world!\")\n"
      "*** Delete File: obsolete.txt\n"
      "*** Update File: notes.md\n"
      " a\n"
      "-b\n"
      "+B\n"
      "*** End Patch\n";
  Result<Changeset> cs = kai::parse_patch(p);
  REQUIRE(cs);
  CHECK(cs->format == kai::PatchFormat::envelope);
  REQUIRE(cs->ops.size() == 4);
  CHECK(cs->ops[0].kind == FileOpKind::create);
  CHECK(cs->ops[1].kind == FileOpKind::rename);
  CHECK(cs->ops[1].hunks[0].anchors == std::vector<std::string>{"def greet():"});
  CHECK(cs->ops[2].kind == FileOpKind::remove);
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["hello.txt"].bytes == "Hello world\n\n");
  CHECK(r->count("src/app.py") == 0);
  CHECK((*r)["src/main.py"].bytes ==
        "import os\n\ndef greet():\n    print(\"Hello, world!\")\n\ndef main():\n    greet()\n");
  CHECK((*r)["src/main.py"].mode == 0755);
  CHECK(r->count("obsolete.txt") == 0);
  CHECK((*r)["notes.md"].bytes == "a\nB\nc\n");
}

TEST_CASE("envelope anchors find context in order after them", "[patch]") {
  std::string file =
      "class A:\n    def run(self):\n        return 1\n"
      "class B:\n    def run(self):\n        return 1\n";
  Tree t{{"m.py", {file, 0644}}};
  std::string p =
      "*** Begin Patch\n*** Update File: m.py\n"
      "@@ class B:\n@@     def run(self):\n-        return 1\n+        return 2\n"
      "*** End Patch\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["m.py"].bytes ==
        "class A:\n    def run(self):\n        return 1\nclass B:\n    def run(self):\n        return 2\n");

  SECTION("a missing anchor names the file, hunk and anchor") {
    std::string q = "*** Begin Patch\n*** Update File: m.py\n@@ class C:\n-x\n+y\n*** End Patch\n";
    Errc code{};
    CHECK_THAT(err(q, t, &code), Catch::Contains("'m.py'") && Catch::Contains("hunk 1") && Catch::Contains("class C:"));
    CHECK(code == Errc::conflict);
  }
  SECTION("hunks apply in order: a second hunk cannot match before the first") {
    std::string q =
        "*** Begin Patch\n*** Update File: m.py\n@@ class B:\n     def run(self):\n"
        "@@\n-class A:\n+class Z:\n*** End Patch\n";
    CHECK_THAT(err(q, t), Catch::Contains("hunk 2"));
  }
}

TEST_CASE("envelope: end of file, CRLF files, trailing whitespace, no final newline", "[patch]") {
  Tree t{{"w.txt", {"x\r\ny\r\nx\r\n", 0644}}, {"n.txt", {"a\nb", 0644}}, {"s.txt", {"keep  \nold\n", 0644}}};
  std::string p =
      "*** Begin Patch\n"
      "*** Update File: w.txt\n"
      "@@\n"
      "-x\n"
      "+z\n"
      "*** End of File\n"
      "*** Update File: n.txt\n"
      "@@\n"
      " a\n"
      "+mid\n"
      "*** Update File: s.txt\n"
      "@@\n"
      " keep\n"
      "-old\n"
      "+new\n"
      "*** End Patch\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["w.txt"].bytes == "x\r\ny\r\nz\r\n");
  CHECK((*r)["n.txt"].bytes == "a\nmid\nb");
  CHECK((*r)["s.txt"].bytes == "keep  \nnew\n");
}

TEST_CASE("envelope leniency: padded markers, here-documents, blank lines, CRLF patch text", "[patch]") {
  Tree t{{"a.txt", {"one\ntwo\nthree\nfour\n", 0644}}};
  std::string want = "ONE\ntwo\nthree\nFOUR\n";
  std::string body =
      "*** Update File: a.txt\n"
      "@@\n-one\n+ONE\n"
      "\n"
      "@@\n three\n-four\n+FOUR\n";
  for (std::string p : {"*** Begin Patch \n  " + body + " *** End Patch\n",
                        "<<'EOF'\n*** Begin Patch\n" + body + "*** End Patch\nEOF\n",
                        "\n\n*** Begin Patch\n" + body + "*** End Patch"}) {
    INFO(p);
    Result<Tree> r = patched(p, t);
    REQUIRE(r);
    CHECK((*r)["a.txt"].bytes == want);
  }
  std::string crlf = "*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n-one\r\n+ONE\r\n*** End Patch\r\n";
  Result<Tree> r = patched(crlf, t);
  REQUIRE(r);
  CHECK((*r)["a.txt"].bytes == "ONE\ntwo\nthree\nfour\n");
}

TEST_CASE("envelope: first hunk without @@, pure insertions, a trailing empty context line", "[patch]") {
  Tree t{{"p.py", {"import os\n\ndef f():\n    pass\n", 0644}}};
  std::string p =
      "*** Begin Patch\n*** Update File: p.py\n"
      " import os\n+import sys\n"
      "@@ def f():\n+    x = 1\n"
      "*** End Patch\n";
  Result<Tree> r = patched(p, t);
  REQUIRE(r);
  CHECK((*r)["p.py"].bytes == "import os\nimport sys\n\ndef f():\n    x = 1\n    pass\n");
  // Without an anchor a pure insertion goes to the end of the file.
  Result<Tree> r2 = patched("*** Begin Patch\n*** Update File: p.py\n@@\n+# end\n*** End Patch\n", t);
  REQUIRE(r2);
  CHECK((*r2)["p.py"].bytes == "import os\n\ndef f():\n    pass\n# end\n");
  // An empty context line after the last line stands for the end of the file.
  Result<Tree> r3 =
      patched("*** Begin Patch\n*** Update File: p.py\n@@\n-    pass\n+    return 2\n \n*** End Patch\n", t);
  REQUIRE(r3);
  CHECK((*r3)["p.py"].bytes == "import os\n\ndef f():\n    return 2\n");
}

TEST_CASE("envelope refusals", "[patch]") {
  Tree t{{"a", {"1\n", 0644}}};
  Errc code{};
  CHECK_THAT(err("*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n", t, &code), Catch::Contains("already exists"));
  CHECK(code == Errc::conflict);
  CHECK_THAT(err("*** Begin Patch\n*** Delete File: b\n*** End Patch\n", t, &code), Catch::Contains("does not exist"));
  CHECK_THAT(err("*** Begin Patch\n*** Update File: b\n@@\n-1\n+2\n*** End Patch\n", t, &code),
             Catch::Contains("'b': it does not exist"));
  CHECK(code == Errc::conflict);
  CHECK_THAT(err("*** Begin Patch\n*** Update File: a\n*** Move to: a\n*** End Patch\n", t), Catch::Contains("twice"));
  // The last line replaced: the file ends with a line ending.
  Tree nonl{{"n", {"x\ny", 0644}}};
  Result<Tree> r = patched("*** Begin Patch\n*** Update File: n\n@@\n-y\n+z\n*** End Patch\n", nonl);
  REQUIRE(r);
  CHECK((*r)["n"].bytes == "x\nz\n");
  // Matching work is bounded for envelope hunks too.
  std::string many;
  for (int i = 0; i < 5000; ++i) many += "a\n";
  Tree big{{"big", {many, 0644}}};
  std::string hostile = "*** Begin Patch\n*** Update File: big\n@@\n";
  for (int i = 0; i < 1000; ++i) hostile += " a\n";
  hostile += "-b\n*** End Patch\n";
  kai::PatchLimits limits;
  limits.max_match_steps = 100000;
  Result<Tree> slow = patched(hostile, big, limits);
  REQUIRE_FALSE(slow);
  CHECK_THAT(slow.error().message, Catch::Contains("too long"));
  CHECK_THAT(err("*** Begin Patch\n*** Update File: a\n*** Move to: a2\n*** Delete File: a\n*** End Patch\n", t),
             Catch::Contains("twice"));
  auto parse_code = [](std::string_view p) {
    Result<Changeset> cs = kai::parse_patch(p);
    return cs ? Errc{} : cs.error().code;
  };
  CHECK(parse_code("*** Begin Patch\n*** Update File: a\n-1\n+2\n") == Errc::usage);  // no End Patch
  CHECK(parse_code("*** Begin Patch\n*** Update File: a\n*** End Patch\n") == Errc::usage);
  CHECK(parse_code("*** Begin Patch\n*** Frobnicate: a\n*** End Patch\n") == Errc::usage);
  CHECK(parse_code("*** Begin Patch\n*** Update File: a\n@@\n-1\nbad line\n*** End Patch\n") == Errc::usage);
  CHECK(parse_code("*** Begin Patch\n*** Delete File: ../x\n*** End Patch\n") == Errc::denied);
  CHECK(parse_code("*** Begin Patch\n*** End Patch\n") == Errc::usage);
}

// ---------------------------------------------------------------------------
// Corpus: real commits, their `git diff`, our applier and `git apply`.

namespace {

namespace fs = std::filesystem;

void sh(const std::string& cmd) {
  INFO(cmd);
  REQUIRE(std::system(cmd.c_str()) == 0);
}

// Every regular file under `dir` (no .git): bytes and whether it is executable.
std::map<std::string, std::pair<std::string, bool>> snapshot(const fs::path& dir) {
  std::map<std::string, std::pair<std::string, bool>> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    bool exec = (fs::status(it->path()).permissions() & fs::perms::owner_exec) != fs::perms::none;
    out[fs::relative(it->path(), dir).string()] = {s.str(), exec};
  }
  return out;
}

struct Counts {
  size_t renames = 0, creates = 0, removes = 0, modes = 0;
};

// `git diff -M HEAD~1 HEAD` of the repository `git` runs in, applied three
// ways to HEAD~1: by our applier, by `git apply` on a copy, and as HEAD
// itself; all three must agree byte for byte, executable bits included.
Counts check_against_git_apply(const kai::test::TempDir& t, const std::string& git, const std::string& name) {
  Counts c;
  const fs::path dir = t / name;
  fs::create_directories(dir / "old");
  fs::create_directories(dir / "new");
  const std::string d = dir.string();
  sh(git + "diff -M HEAD~1 HEAD > '" + d + "/change.patch'");
  sh(git + "archive HEAD~1 | tar -x -C '" + d + "/old'");
  sh(git + "archive HEAD | tar -x -C '" + d + "/new'");
  sh("cp -a '" + d + "/old' '" + d + "/by-git'");
  sh("cd '" + d + "/by-git' && git apply '" + d + "/change.patch'");

  std::ifstream in(dir / "change.patch", std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  Result<Changeset> cs = kai::parse_patch(text.str());
  INFO((cs ? std::string() : cs.error().message));
  REQUIRE(cs);
  const fs::path old_root = dir / "old";
  kai::ReadCurrent read = [&](const std::string& p) -> Result<std::optional<CurrentFile>> {
    fs::path f = old_root / p;
    struct stat st {};
    if (::lstat(f.c_str(), &st) != 0) return std::optional<CurrentFile>();
    std::ifstream file(f, std::ios::binary);
    std::ostringstream s;
    s << file.rdbuf();
    return std::optional<CurrentFile>(CurrentFile{s.str(), st.st_mode & 07777u});
  };
  kai::Status st = kai::apply_changeset(*cs, read);
  INFO((st ? std::string() : st.error().message));
  REQUIRE(st);

  auto ours = snapshot(old_root);
  for (const FileOp& op : cs->ops) {
    c.renames += op.kind == FileOpKind::rename;
    c.creates += op.kind == FileOpKind::create;
    c.removes += op.kind == FileOpKind::remove;
    c.modes += op.new_mode.has_value();
    if (op.kind == FileOpKind::remove || op.kind == FileOpKind::rename) ours.erase(op.path);
    if (op.after) ours[op.target()] = {*op.after, (op.after_mode & 0100) != 0};
  }
  // The same commit as a mail from `git format-patch` (message, diffstat,
  // signature around the diff) gives the same results.
  sh(git + "format-patch -M -1 --stdout HEAD > '" + d + "/mail.patch'");
  std::ifstream mail_in(dir / "mail.patch", std::ios::binary);
  std::ostringstream mail;
  mail << mail_in.rdbuf();
  Result<Changeset> from_mail = kai::parse_patch(mail.str());
  REQUIRE(from_mail);
  REQUIRE(kai::apply_changeset(*from_mail, read));
  REQUIRE(from_mail->ops.size() == cs->ops.size());
  for (size_t i = 0; i < cs->ops.size(); ++i) {
    CHECK(from_mail->ops[i].target() == cs->ops[i].target());
    CHECK(from_mail->ops[i].after == cs->ops[i].after);
    CHECK(from_mail->ops[i].after_mode == cs->ops[i].after_mode);
  }

  auto want = snapshot(dir / "new");
  auto by_git = snapshot(dir / "by-git");
  CHECK(want == by_git);
  CHECK(ours.size() == want.size());
  for (const auto& [path, v] : want) {
    INFO(path);
    REQUIRE(ours.count(path) == 1);
    CHECK(ours[path].first == v.first);
    CHECK(ours[path].second == v.second);
  }
  return c;
}

}  // namespace

TEST_CASE("corpus: our applier and git apply agree byte for byte on real commits", "[patch]") {
  kai::test::TempDir t;
  const std::string repo = (t / "repo").string();
  t.mkdir("repo");
  const std::string git = "git -C '" + repo + "' -c user.name=t -c user.email=t@example.com -c core.autocrlf=false ";
  sh("git init -q '" + repo + "'");

  std::string many;
  for (int i = 1; i <= 300; ++i) many += "int v" + std::to_string(i) + " = " + std::to_string(i) + ";\n";
  std::string mod;
  for (int i = 1; i <= 60; ++i) mod += "def f" + std::to_string(i) + "():\n    return " + std::to_string(i) + "\n";
  t.write("repo/src/many.c", many);
  t.write("repo/README", "Title\n\nno final newline");
  t.write("repo/win.txt", "alpha\r\nbeta\r\ngamma\r\ndelta\r\n");
  t.write("repo/old_name.txt", "unchanged content\nline two\n");
  t.write("repo/pkg/mod.py", mod);
  t.write("repo/gone.txt", "remove me\n");
  t.write("repo/gone dir/only.txt", "the folder goes too\n");
  t.write("repo/script.sh", "#!/bin/sh\necho run\n");
  t.write("repo/tool.sh", "#!/bin/sh\necho old\n");
  t.write("repo/späce dir/fü le.txt", "umlaut\n");
  t.write("repo/ends.txt", "keep\nlast");
  t.write("repo/empty.txt", "");
  sh(git + "add -A && " + git + "commit -q -m old");

  for (int i = 5; i <= 300; i += 25) {
    std::string from = "int v" + std::to_string(i) + " = ", to = "long v" + std::to_string(i) + " = ";
    many.replace(many.find(from), from.size(), to);
  }
  many.insert(many.find("int v150"), "/* inserted */\n");
  many.erase(many.find("int v200"), many.find("int v201") - many.find("int v200"));
  t.write("repo/src/many.c", many);
  t.write("repo/README", "Title\n\nno final newline, still");
  t.write("repo/win.txt", "alpha\r\nBETA\r\ngamma\r\ndelta\r\nepsilon\r\n");
  sh(git + "mv old_name.txt new_name.txt");
  sh(git + "mv pkg/mod.py pkg/module.py");
  mod.replace(mod.find("return 30"), 9, "return 3000");
  t.write("repo/pkg/module.py", mod);
  sh(git + "rm -q gone.txt 'gone dir/only.txt'");
  sh("chmod +x '" + repo + "/script.sh' '" + repo + "/tool.sh'");
  t.write("repo/tool.sh", "#!/bin/sh\necho new\n");
  t.write("repo/späce dir/fü le.txt", "umlaut changed\n");
  t.write("repo/ends.txt", "keep\nlast\n");
  t.write("repo/new/file.c", "int fresh;\n");
  t.write("repo/new/nonl.txt", "no newline here");
  sh("chmod +x '" + repo + "/new/file.c'");
  sh(git + "rm -q empty.txt");
  sh(git + "add -A && " + git + "commit -q -m new");

  Counts c = check_against_git_apply(t, git, "pair");
  CHECK(c.renames == 2);
  CHECK(c.creates == 2);
  CHECK(c.removes == 3);
  CHECK(c.modes >= 3);
}

TEST_CASE("corpus: random commits with repeated lines and CRLF and missing final newlines", "[patch]") {
  kai::test::TempDir t;
  const std::string repo = (t / "repo").string();
  t.mkdir("repo");
  const std::string git = "git -C '" + repo + "' -c user.name=t -c user.email=t@example.com -c core.autocrlf=false ";
  sh("git init -q '" + repo + "'");

  // A fixed generator: the corpus is the same on every run.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto rnd = [&](size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state >> 33) % n);
  };
  // Few distinct lines, so that hunks could match in many places.
  const std::vector<std::string> words = {"{", "}", "return 0;", "", "x++;", "// note", "if (x) {", "int x;"};
  std::map<std::string, std::vector<std::string>> files;  // name -> lines, each with its ending
  std::map<std::string, bool> crlf;
  auto render = [&](const std::string& name) {
    std::string s;
    for (const std::string& l : files[name]) s += l;
    return s;
  };
  auto line = [&](const std::string& name) { return words[rnd(words.size())] + (crlf[name] ? "\r\n" : "\n"); };
  for (int f = 0; f < 6; ++f) {
    std::string name = "f" + std::to_string(f) + (f % 2 ? ".c" : ".txt");
    crlf[name] = f == 3;
    for (int i = 0; i < 40 + 30 * f; ++i) files[name].push_back(line(name));
    t.write("repo/" + name, render(name));
  }
  sh(git + "add -A && " + git + "commit -q -m c0");

  int next_name = 100;
  for (int commit = 1; commit <= 6; ++commit) {
    for (auto& [name, lines] : files) {
      if (lines.empty()) continue;
      for (int e = 0; e < 1 + static_cast<int>(rnd(6)); ++e) {
        size_t at = rnd(lines.size() + 1);
        switch (rnd(4)) {
          case 0: lines.insert(lines.begin() + static_cast<long>(at), line(name)); break;
          case 1:
            if (at < lines.size()) lines.erase(lines.begin() + static_cast<long>(at));
            break;
          default:
            if (at < lines.size()) lines[at] = line(name);
            break;
        }
      }
      if (rnd(5) == 0 && !lines.empty()) {  // toggle the final newline
        std::string& last = lines.back();
        if (!last.empty() && last.back() == '\n')
          last.erase(last.size() - (crlf[name] ? 2 : 1));
        else
          last += crlf[name] ? "\r\n" : "\n";
      }
      // A line without its newline must stay the last one.
      for (size_t i = 0; i + 1 < lines.size(); ++i)
        if (lines[i].empty() || lines[i].back() != '\n') lines[i] += crlf[name] ? "\r\n" : "\n";
      t.write("repo/" + name, render(name));
    }
    if (commit % 2 == 0) {  // a rename with a small change
      std::string from = files.begin()->first, to = "r" + std::to_string(next_name++) + "_" + from;
      sh(git + "mv '" + from + "' '" + to + "'");
      files[to] = files[from];
      crlf[to] = crlf[from];
      files.erase(from);
      if (!files[to].empty()) files[to][0] = line(to);
      t.write("repo/" + to, render(to));
    }
    if (commit % 3 == 0) {  // a deletion, a creation, a mode change
      std::string gone = std::prev(files.end())->first;
      sh(git + "rm -q -f '" + gone + "'");
      files.erase(gone);
      std::string made = "new" + std::to_string(next_name++) + ".txt";
      for (int i = 0; i < 5; ++i) files[made].push_back(line(made));
      t.write("repo/" + made, render(made));
      sh("chmod +x '" + repo + "/" + files.begin()->first + "'");
    }
    sh(git + "add -A && " + git + "commit -q -m c" + std::to_string(commit));
    check_against_git_apply(t, git, "commit" + std::to_string(commit));
  }
}

TEST_CASE("diffs made by lib/diff apply back to their new side", "[patch]") {
  uint64_t state = 12345;
  auto rnd = [&](size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state >> 33) % n);
  };
  const std::vector<std::string> words = {"a", "b", "{", "}", "", "  x", "return;"};
  auto text = [&](bool crlf) {
    std::string s;
    size_t n = rnd(30);
    for (size_t i = 0; i < n; ++i) s += words[rnd(words.size())] + (crlf ? "\r\n" : "\n");
    if (!s.empty() && rnd(4) == 0) s.pop_back();  // no final newline (or a lone CR)
    return s;
  };
  kai::DiffOptions opts;
  opts.full = true;
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    bool crlf = rnd(3) == 0;
    std::string before = text(crlf), after = before;
    // Mutate a copy so that the two sides share most lines.
    std::vector<std::string> lines;
    for (size_t pos = 0; pos < after.size();) lines.emplace_back(kai::patch_detail::next_line(after, pos));
    for (size_t e = rnd(4) + 1; e > 0; --e) {
      size_t at = rnd(lines.size() + 1);
      if (rnd(2) == 0 || lines.empty())
        lines.insert(lines.begin() + static_cast<long>(at), words[rnd(words.size())] + "\n");
      else if (at < lines.size())
        lines.erase(lines.begin() + static_cast<long>(at));
    }
    after.clear();
    for (size_t i = 0; i < lines.size(); ++i) {
      after += lines[i];
      if (i + 1 < lines.size() && (after.empty() || after.back() != '\n')) after += '\n';
    }
    Result<kai::FileDiff> d = kai::diff_buffers("f.txt", before, after, 0644, opts);
    REQUIRE(d);
    if (d->text.empty()) continue;
    INFO(d->text);
    Tree t{{"f.txt", {before, 0644}}};
    Result<Tree> r = patched(d->text, t);
    INFO((r ? std::string() : r.error().message));
    REQUIRE(r);
    CHECK((*r)["f.txt"].bytes == after);
    ++checked;
  }
  CHECK(checked > 200);

  // Created and deleted files.
  for (int round = 0; round < 20; ++round) {
    std::string body = text(rnd(2) == 0);
    Result<kai::FileDiff> made = kai::diff_buffers("n/new.txt", std::nullopt, body, 0755, opts);
    REQUIRE(made);
    INFO(made->text);
    Result<Tree> r = patched(made->text, Tree{});
    REQUIRE(r);
    CHECK((*r)["n/new.txt"].bytes == body);
    CHECK((*r)["n/new.txt"].mode == 0755);
    Result<kai::FileDiff> gone = kai::diff_buffers("old.txt", body, std::nullopt, 0644, opts);
    REQUIRE(gone);
    Result<Tree> r2 = patched(gone->text, Tree{{"old.txt", {body, 0644}}});
    REQUIRE(r2);
    CHECK(r2->empty());
  }
}
