// Diffs must be what `git apply` accepts and what `git diff` prints, so most
// cases here hand the produced text to the real git in a scratch directory.

#include "unit/temp_dir.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <git2.h>

#include "lib/diff/diff.hpp"
#include "lib/util/git.hpp"

namespace fs = std::filesystem;
using namespace std::string_literals;
using kai::diff_buffers;
using kai::DiffOptions;
using kai::FileDiff;
using kai::test::TempDir;

namespace {

void write_file(const fs::path& p, std::string_view bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct Shell {
  int code = -1;
  std::string out;  // stdout and stderr
};

// Runs git in `dir` with no user or system configuration, and no repository
// above the scratch directory to be discovered.
Shell git_in(const fs::path& dir, const std::string& args) {
  const std::string cmd = "cd '" + dir.string() + "' && env GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null HOME='" +
                          dir.string() + "' GIT_CEILING_DIRECTORIES='" + dir.parent_path().string() + "' git " + args +
                          " 2>&1";
  Shell r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

DiffOptions full_options() {
  DiffOptions o;
  o.full = true;
  return o;
}

FileDiff diff(std::optional<std::string_view> before, std::optional<std::string_view> after,
              const DiffOptions& opts = DiffOptions{}, std::string_view path = "f.txt", unsigned mode = 0644) {
  kai::Result<FileDiff> d = diff_buffers(path, before, after, mode, opts);
  REQUIRE(d.ok());
  return *d;
}

// What `git diff --no-index` prints from the first hunk on.
std::string git_hunks(std::string_view before, std::string_view after) {
  TempDir dir;
  write_file(dir.path() / "old", before);
  write_file(dir.path() / "new", after);
  const Shell r = git_in(dir.path(), "diff --no-index --no-color old new");
  REQUIRE(r.code == 1);
  return r.out.substr(r.out.find("\n@@") + 1);
}

std::string our_hunks(const FileDiff& d) {
  const size_t at = d.text.find("\n@@");
  return at == std::string::npos ? std::string() : d.text.substr(at + 1);
}

// The diff must pass `git apply --check` against `before`, and applying it
// must produce exactly `after` (or remove the file). A modification must
// also have the very hunks `git diff` prints.
void require_applies(std::optional<std::string_view> before, std::optional<std::string_view> after,
                     const std::string& path = "f.txt", unsigned mode = 0644) {
  const FileDiff d = diff(before, after, full_options(), path, mode);
  TempDir dir;
  if (before) write_file(dir.path() / path, *before);
  write_file(dir.path() / "change.patch", d.text);
  INFO("diff:\n" << d.text);
  const Shell check = git_in(dir.path(), "apply --check change.patch");
  INFO("git apply --check: " << check.out);
  REQUIRE(check.code == 0);
  REQUIRE(git_in(dir.path(), "apply change.patch").code == 0);
  if (after)
    CHECK(read_file(dir.path() / path) == *after);
  else
    CHECK_FALSE(fs::exists(dir.path() / path));
  if (before && after) CHECK(our_hunks(d) == git_hunks(*before, *after));
}

std::string numbered_lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

std::string strip_ansi(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i = s.find('m', i);
      continue;
    }
    out += s[i];
  }
  return out;
}

size_t count_of(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

size_t changed_lines_in(const std::string& text) {
  size_t n = 0;
  std::istringstream in(text);
  bool in_hunks = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("@@", 0) == 0) in_hunks = true;
    if (in_hunks && !line.empty() && (line[0] == '+' || line[0] == '-')) ++n;
  }
  return n;
}

// Every hunk's header counts must match the lines under it, shortened or not.
bool hunks_add_up(const std::string& text) {
  std::istringstream in(text);
  long old_left = 0, new_left = 0;
  bool ok = true;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("@@ -", 0) == 0) {
      ok = ok && old_left == 0 && new_left == 0;
      long a = 0, b = 1, c = 0, d = 1;
      if (std::sscanf(line.c_str(), "@@ -%ld,%ld +%ld,%ld @@", &a, &b, &c, &d) != 4) {
        b = 1, d = 1;
        if (std::sscanf(line.c_str(), "@@ -%ld,%ld +%ld @@", &a, &b, &c) != 3 &&
            std::sscanf(line.c_str(), "@@ -%ld +%ld,%ld @@", &a, &c, &d) != 3)
          std::sscanf(line.c_str(), "@@ -%ld +%ld @@", &a, &c);
      }
      old_left = b, new_left = d;
    } else if (!line.empty() && (line[0] == ' ' || line[0] == '-') && (old_left > 0 || new_left > 0)) {
      --old_left;
      if (line[0] == ' ') --new_left;
    } else if (!line.empty() && line[0] == '+' && new_left > 0) {
      --new_left;
    }
  }
  return ok && old_left == 0 && new_left == 0;
}

}  // namespace

TEST_CASE("identical contents give an empty diff", "[diff]") {
  const FileDiff d = diff("a\nb\n", "a\nb\n");
  CHECK(d.text.empty());
  CHECK(d.added == 0);
  CHECK(d.removed == 0);
  CHECK(d.hunks == 0);
  CHECK_FALSE(d.binary);
  CHECK_FALSE(d.truncated);
  CHECK(diff(std::nullopt, std::nullopt).text.empty());
}

TEST_CASE("a one-line change is a git-style diff that git applies", "[diff]") {
  const std::string before = "a\nb\nc\n", after = "a\nB\nc\n";
  const FileDiff d = diff(before, after);
  CHECK(d.text ==
        "diff --git a/f.txt b/f.txt\n"
        "index " +
            kai::blob_id(before).substr(0, 7) + ".." + kai::blob_id(after).substr(0, 7) +
            " 100644\n"
            "--- a/f.txt\n"
            "+++ b/f.txt\n"
            "@@ -1,3 +1,3 @@\n"
            " a\n"
            "-b\n"
            "+B\n"
            " c\n");
  CHECK(d.added == 1);
  CHECK(d.removed == 1);
  CHECK(d.hunks == 1);
  CHECK(d.old_blob == kai::blob_id(before));
  CHECK(d.new_blob == kai::blob_id(after));
  CHECK(d.old_size == 6);
  CHECK(d.new_size == 6);
  require_applies(before, after);
}

TEST_CASE("adding and removing the final newline is marked and applies", "[diff]") {
  const FileDiff added = diff("a\nb", "a\nb\n");
  CHECK(added.text.find("-b\n\\ No newline at end of file\n+b\n") != std::string::npos);
  require_applies("a\nb", "a\nb\n");

  const FileDiff removed = diff("a\nb\n", "a\nb");
  CHECK(removed.text.find("-b\n+b\n\\ No newline at end of file\n") != std::string::npos);
  require_applies("a\nb\n", "a\nb");
}

TEST_CASE("a file without a final newline can be changed in the middle and at the end", "[diff]") {
  const std::string before = numbered_lines(1, 20) + "last";
  std::string middle = before;
  middle.replace(middle.find("line 5\n"), 7, "line five\n");
  const FileDiff d = diff(before, middle);
  CHECK(d.text.find("No newline") == std::string::npos);
  require_applies(before, middle);

  const std::string end = numbered_lines(1, 20) + "final";
  CHECK(count_of(diff(before, end).text, "\\ No newline at end of file\n") == 2);
  require_applies(before, end);
}

TEST_CASE("CRLF line endings are kept byte for byte", "[diff]") {
  const std::string before = "one\r\ntwo\r\nthree\r\n", after = "one\r\n2\r\nthree\r\n";
  const FileDiff d = diff(before, after);
  CHECK(d.text.find("-two\r\n+2\r\n") != std::string::npos);
  CHECK(d.added == 1);
  require_applies(before, after);
  // Switching every line ending is a change of every line.
  const FileDiff converted = diff(before, "one\ntwo\nthree\n");
  CHECK(converted.added == 3);
  CHECK(converted.removed == 3);
  require_applies(before, "one\ntwo\nthree\n");
  require_applies("a\r\nb", "a\r\nb\r\n");
}

TEST_CASE("creating a file uses /dev/null and new file mode", "[diff]") {
  const FileDiff d = diff(std::nullopt, "hello\nworld\n");
  CHECK(d.text.rfind("diff --git a/f.txt b/f.txt\nnew file mode 100644\nindex 0000000..", 0) == 0);
  CHECK(d.text.find("--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n") != std::string::npos);
  CHECK(d.added == 2);
  CHECK(d.old_blob.empty());
  require_applies(std::nullopt, "hello\nworld\n");
  require_applies(std::nullopt, "no newline");
  CHECK(diff(std::nullopt, "x\n", {}, "run.sh", 0755).text.find("new file mode 100755\n") != std::string::npos);
  require_applies(std::nullopt, "#!/bin/sh\n", "run.sh", 0755);
  require_applies(std::nullopt, "deep\n", "src/sub/dir/new.c");
}

TEST_CASE("deleting a file uses /dev/null and deleted file mode", "[diff]") {
  const FileDiff d = diff("bye\n", std::nullopt);
  CHECK(d.text.find("deleted file mode 100644\n") != std::string::npos);
  CHECK(d.text.find("--- a/f.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n") != std::string::npos);
  CHECK(d.removed == 1);
  CHECK(d.new_blob.empty());
  require_applies("bye\n", std::nullopt);
  require_applies("a\nb", std::nullopt);
}

TEST_CASE("empty files are created, deleted, filled and emptied", "[diff]") {
  const FileDiff created = diff(std::nullopt, "");
  CHECK(created.text == "diff --git a/f.txt b/f.txt\nnew file mode 100644\nindex 0000000..e69de29\n");
  CHECK(created.hunks == 0);
  require_applies(std::nullopt, "");
  require_applies("", std::nullopt);
  require_applies("", "now\nsome text\n");
  require_applies("some text\n", "");
  CHECK(diff("", "").text.empty());
}

TEST_CASE("a change far apart gives several hunks, as git diff prints them", "[diff]") {
  const std::string before = numbered_lines(1, 100);
  std::string after = before;
  after.replace(after.find("line 10\n"), 8, "changed 10\n");
  after.replace(after.find("line 80\n"), 8, "");
  after += "line 101\n";
  const FileDiff d = diff(before, after);
  CHECK(d.hunks == 3);
  CHECK(d.added == 2);
  CHECK(d.removed == 2);
  CHECK(our_hunks(d) == git_hunks(before, after));
  require_applies(before, after);
}

TEST_CASE("hunks match git diff on code, including function context", "[diff]") {
  const std::string before =
      "int add(int a, int b)\n{\n  int s = a + b;\n  return s;\n}\n\nint sub(int a, int b)\n{\n  int d = a - b;\n"
      "  if (d < 0)\n    d = 0;\n  return d;\n}\n";
  const std::string after =
      "int add(int a, int b)\n{\n  int s = a + b;\n  return s;\n}\n\nint sub(int a, int b)\n{\n  int d = a - b;\n"
      "  if (d < 0) {\n    log(d);\n    d = 0;\n  }\n  return d;\n}\n\nint mul(int a, int b)\n{\n  return a * b;\n}\n";
  CHECK(our_hunks(diff(before, after)) == git_hunks(before, after));
  require_applies(before, after);
}

TEST_CASE("paths with spaces and non-ASCII bytes are quoted as git quotes them", "[diff]") {
  const FileDiff spaced = diff("a\n", "b\n", {}, "dir/my file.txt");
  CHECK(spaced.text.find("--- a/dir/my file.txt\t\n") != std::string::npos);
  require_applies("a\n", "b\n", "dir/my file.txt");
  const FileDiff accented = diff("a\n", "b\n", {}, "caf\xc3\xa9.txt");
  CHECK(accented.text.find("--- \"a/caf\\303\\251.txt\"\n") != std::string::npos);
  require_applies("a\n", "b\n", "caf\xc3\xa9.txt");
  require_applies(std::nullopt, "new\n", "new \"quoted\" name.txt");
}

TEST_CASE("binary contents are summarised, never diffed as text", "[diff]") {
  std::string before = "PNG\0\x01\x02"s, after = "PNG\0\x01\x03\x04"s;
  const FileDiff d = diff(before, after, {}, "img.png");
  CHECK(d.binary);
  CHECK(d.added == 0);
  CHECK(d.hunks == 0);
  CHECK(d.text == "Binary file img.png differs (6 → 7 bytes, blob " + kai::blob_id(before).substr(0, 7) + " → " +
                      kai::blob_id(after).substr(0, 7) + ")\n");
  CHECK(diff("text\n", after).binary);
  CHECK(diff(std::nullopt, after).text.find("Binary file f.txt created (7 bytes") == 0);
  CHECK(diff(before, std::nullopt).text.find("Binary file f.txt deleted (6 bytes") == 0);
  // Like git, only the first 8000 bytes are looked at.
  const std::string late_nul = std::string(8000, 'x') + "\n" + std::string(1, '\0') + "\n";
  CHECK_FALSE(diff(late_nul, late_nul + "more\n").binary);
}

TEST_CASE("a diff past the change limit keeps its headers and first hunks", "[diff]") {
  std::string before, after;
  for (int i = 0; i < 3000; ++i) {
    before += "line " + std::to_string(i) + "\n";
    after += (i % 3 == 0 ? "LINE " : "line ") + std::to_string(i) + "\n";
  }
  DiffOptions opts;
  opts.max_changed_lines = 400;
  const FileDiff d = diff(before, after, opts);
  CHECK(d.truncated);
  CHECK(d.added == 1000);
  CHECK(d.removed == 1000);
  CHECK(d.hunks == 1);
  CHECK(d.text.rfind("diff --git a/f.txt b/f.txt\nindex ", 0) == 0);
  CHECK(d.text.find("--- a/f.txt\n+++ b/f.txt\n@@ ") != std::string::npos);
  CHECK(changed_lines_in(d.text) == 100);
  // It ends between two edits, with context after them as any hunk has.
  CHECK(d.text.find("@@ -1,150 +1,150 @@\n") != std::string::npos);
  CHECK(d.text.size() - d.text.rfind("+LINE 147\n") == std::string("+LINE 147\n line 148\n line 149\n").size());
  CHECK(hunks_add_up(d.text));
  // The shortened hunk is recounted, so what is shown is still a valid patch.
  TempDir dir;
  write_file(dir.path() / "f.txt", before);
  write_file(dir.path() / "part.patch", d.text);
  CHECK(git_in(dir.path(), "apply --check part.patch").code == 0);

  const FileDiff whole = diff(before, after, [] {
    DiffOptions o;
    o.max_changed_lines = 400;
    o.full = true;
    return o;
  }());
  CHECK_FALSE(whole.truncated);
  CHECK(changed_lines_in(whole.text) == 2000);
}

TEST_CASE("a single huge run of changes is cut inside it", "[diff]") {
  std::string before, after;
  for (int i = 0; i < 5000; ++i) {
    before += "old " + std::to_string(i) + "\n";
    after += "new " + std::to_string(i) + "\n";
  }
  const FileDiff d = diff(before, after);
  CHECK(d.truncated);
  CHECK(d.hunks == 1);
  CHECK(d.added == 5000);
  CHECK(d.removed == 5000);
  CHECK(changed_lines_in(d.text) == 500);
  CHECK(d.text.find("@@ -1,500 +0,0 @@\n-old 0\n") != std::string::npos);
  CHECK(hunks_add_up(d.text));
}

TEST_CASE("truncation stops at a hunk boundary when hunks are small", "[diff]") {
  std::string before, after;
  for (int i = 0; i < 1000; ++i) {
    before += "line " + std::to_string(i) + "\n";
    after += (i % 10 == 0 ? "LINE " : "line ") + std::to_string(i) + "\n";
  }
  DiffOptions opts;
  opts.max_changed_lines = 100;
  const FileDiff d = diff(before, after, opts);
  CHECK(d.truncated);
  CHECK(d.hunks == 100);
  CHECK(changed_lines_in(d.text) == 24);  // 12 whole hunks of 2 changed lines fit in 25
  CHECK(count_of(d.text, "\n@@ ") == 12);
  CHECK(hunks_add_up(d.text));
}

TEST_CASE("an over-long line truncates the diff and is shortened on screen", "[diff]") {
  const std::string before = "short\n" + std::string(50000, 'a') + "\n";
  const std::string after = "short\n" + std::string(50000, 'b') + "\n";
  const FileDiff d = diff(before, after);
  CHECK(d.truncated);
  CHECK(d.added == 1);
  CHECK(d.text.size() < 25000);
  CHECK(d.text.find("[… 40000 more bytes]") != std::string::npos);
  const FileDiff whole = diff(before, after, full_options());
  CHECK_FALSE(whole.truncated);
  CHECK(whole.text.size() > 100000);
}

TEST_CASE("counts describe the whole diff on a large input", "[diff]") {
  std::string before, after;
  for (int i = 0; i < 100000; ++i) {
    before += "value " + std::to_string(i) + " = " + std::to_string(i * 7 % 13) + ";\n";
    if (i % 97 == 5) continue;
    after += "value " + std::to_string(i) + " = " + std::to_string(i % 31 == 0 ? i : i * 7 % 13) + ";\n";
  }
  const FileDiff d = diff(before, after);
  CHECK(d.truncated);
  TempDir dir;
  write_file(dir.path() / "old", before);
  write_file(dir.path() / "new", after);
  const Shell numstat = git_in(dir.path(), "diff --no-index --numstat old new");
  CHECK(numstat.out.rfind(std::to_string(d.added) + "\t" + std::to_string(d.removed) + "\t", 0) == 0);
  CHECK(diff(before, after, full_options()).text.size() > 100000);
}

TEST_CASE("intraline marks the changed words", "[diff]") {
  const kai::IntraLine il = kai::intraline("int x = compute(a, b);", "int x = compute(a, c);");
  REQUIRE(il.removed.size() == 1);
  REQUIRE(il.added.size() == 1);
  CHECK(il.removed[0].begin == 19);
  CHECK(il.removed[0].end == 20);
  CHECK(il.added[0].begin == 19);
  CHECK(il.added[0].end == 20);

  const kai::IntraLine grown = kai::intraline("return count;", "return counts;");
  CHECK(grown.removed.empty());
  REQUIRE(grown.added.size() == 1);
  CHECK(grown.added[0].begin == 12);
  CHECK(grown.added[0].end == 13);

  const kai::IntraLine two = kai::intraline("a = 1; b = 2; c = 3;", "a = 9; b = 2; c = 8;");
  CHECK(two.removed.size() == 2);
  CHECK(two.added.size() == 2);

  CHECK(kai::intraline("same", "same").removed.empty());
}

TEST_CASE("intraline never splits a UTF-8 character", "[diff]") {
  // "é" is C3 A9 and "è" is C3 A8: they share their first byte.
  const kai::IntraLine il = kai::intraline("caf\xc3\xa9 ok", "caf\xc3\xa8 ok");
  REQUIRE(il.removed.size() == 1);
  CHECK(il.removed[0].begin == 3);
  CHECK(il.removed[0].end == 5);
}

TEST_CASE("intraline gives a very long line as one span without diffing it", "[diff]") {
  const std::string a(20000, 'a'), b = std::string(19999, 'a') + "b";
  const kai::IntraLine il = kai::intraline(a, b);
  REQUIRE(il.removed.size() == 1);
  CHECK(il.removed[0].begin == 0);
  CHECK(il.removed[0].end == a.size());
  REQUIRE(il.added.size() == 1);
  CHECK(il.added[0].end == b.size());
}

TEST_CASE("colorize adds only escape codes", "[diff]") {
  const std::string before = numbered_lines(1, 30) + "--- not a header\nend";
  std::string after = before;
  after.replace(after.find("line 3\n"), 7, "line three\n");
  after.replace(after.find("--- not a header\n"), 17, "");
  after += "\n";
  const FileDiff d = diff(before, after);
  const std::string colored = kai::colorize_diff(d.text);
  CHECK(strip_ansi(colored) == d.text);
  CHECK(colored.find("\x1b[1mdiff --git a/f.txt b/f.txt\x1b[0m\n") != std::string::npos);
  CHECK(colored.find("\x1b[36m@@ -1,6 +1,6 @@\x1b[0m\n") != std::string::npos);
  // The removed "---" line is a removed line, not a header.
  CHECK(colored.find("\x1b[31m---- not a header\x1b[0m\n") != std::string::npos);
  CHECK(colored.find("\x1b[31m-line \x1b[7m3\x1b[27m\x1b[0m\n") != std::string::npos);
  CHECK(colored.find("\x1b[32m+line \x1b[7mthree\x1b[27m\x1b[0m\n") != std::string::npos);
  CHECK(kai::colorize_diff("").empty());
  const std::string crlf = diff("a = 1;\r\nb\r\n", "a = 2;\r\nb\r\n").text;
  const std::string crlf_colored = kai::colorize_diff(crlf);
  CHECK(strip_ansi(crlf_colored) == crlf);
  CHECK(crlf_colored.find("\x1b[31m-a = \x1b[7m1\x1b[27m;\r\x1b[0m\n") != std::string::npos);
  const std::string binary = diff("\0"s, "\0\0"s).text;
  CHECK(strip_ansi(kai::colorize_diff(binary)) == binary);
}

TEST_CASE("colorize leaves wholly different pairs without reverse video", "[diff]") {
  const std::string text = kai::colorize_diff(diff("alpha\n", "omega\n").text);
  CHECK(text.find("\x1b[7m") == std::string::npos);
  CHECK(text.find("\x1b[31m-alpha\x1b[0m\n") != std::string::npos);
}

TEST_CASE("random edits apply and match git diff", "[diff]") {
  // Few distinct lines, mixed endings and a final line with or without a
  // newline: the cases where line matching has real choices to make.
  const char* pieces[] = {"a\n", "b\n", "}\n", "\n", "x\r\n", "  return 0;\n", "{\n", "c"};
  uint64_t seed = 20240601;
  auto next = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(seed >> 33);
  };
  auto random_text = [&](size_t lines) {
    std::string s;
    for (size_t i = 0; i < lines; ++i) {
      std::string_view p = pieces[next() % 8];
      if (p == "c" && i + 1 < lines) continue;  // only the last line may lack a newline
      s += p;
    }
    return s;
  };
  for (int i = 0; i < 20; ++i) {
    const std::string before = random_text(5 + next() % 40);
    std::string after = before;
    for (size_t edits = 1 + next() % 4; edits > 0; --edits) {
      const size_t at = after.empty() ? 0 : next() % after.size();
      const size_t cut = after.empty() ? 0 : std::min(after.size() - at, next() % 12);
      after.replace(at, cut, random_text(next() % 4));
    }
    if (after == before) after += "tail\n";
    INFO("case " << i);
    require_applies(before, after);
  }
}

TEST_CASE("blob ids are git's, computed without initialising libgit2", "[diff][blob_id]") {
  CHECK(kai::blob_id("") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  CHECK(kai::blob_id("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a");
  // Every length across SHA-1's 64-byte blocks, and a large buffer, as libgit2 hashes them.
  kai::git_init_once();
  std::string bytes;
  for (size_t n = 0; n < 300; ++n) {
    git_oid oid;
    REQUIRE(git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB) == 0);
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &oid);
    INFO("length " << n);
    CHECK(kai::blob_id(bytes) == hex);
    bytes += static_cast<char>((n * 131 + 7) % 256);
  }
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  git_oid oid;
  REQUIRE(git_odb_hash(&oid, big.data(), big.size(), GIT_OBJECT_BLOB) == 0);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  CHECK(kai::blob_id(big) == hex);
}
