#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/paths/glob.hpp"

using namespace std::literals;

namespace {

struct GlobCase {
  std::string_view pattern;
  std::string_view path;
  bool want;
};

// clang-format off
constexpr GlobCase k_glob_cases[] = {
    // no '/' in the pattern: any component, at any depth
    {"*.sh", "a.sh", true},
    {"*.sh", "scripts/deploy/a.sh", true},
    {"*.sh", ".sh", true},
    {"*.sh", "a.shx", false},
    {"*.sh", "a.sh.txt", false},
    {"*.sh", "sh", false},
    {"*.sh", "a.sh/inner.txt", true},           // a folder named a.sh covers what is in it
    {"*.env", ".env", true},
    {"*.env", "config/prod.env", true},
    {"*.env", "environment.ts", false},
    {"Dockerfile*", "Dockerfile", true},
    {"Dockerfile*", "docker/Dockerfile.dev", true},
    {"Dockerfile*", "dockerfile", false},       // case-sensitive
    {"Makefile", "Makefile", true},
    {"Makefile", "sub/Makefile", true},
    {"Makefile", "Makefile.am", false},
    {"Makefile", "MyMakefile", false},
    // leading '/': anchored at root
    {"/top", "top", true},
    {"/top", "top/inner/x", true},
    {"/top", "a/top", false},
    {"/top", "topx", false},
    {"/top", "to", false},
    // '/' in the middle: anchored at root
    {"a/b", "a/b", true},
    {"a/b", "a/b/c", true},
    {"a/b", "x/a/b", false},
    {"a/b", "a/bc", false},
    {"docs/*.md", "docs/a.md", true},
    {"docs/*.md", "docs/x/a.md", false},        // '*' never crosses '/'
    {"docs/*.md", "x/docs/a.md", false},
    {"src/*", "src/a.c", true},
    {"src/*", "src/lib/a.c", true},             // src/lib matches, so all beneath it
    {"src/*", "src", false},
    // '**'
    {"scripts/**", "scripts/a.sh", true},
    {"scripts/**", "scripts/x/y/z.sh", true},
    {"scripts/**", "scripts", false},           // inside, not the folder itself
    {"scripts/**", "x/scripts/a.sh", false},
    {"scripts/**", "scriptsx/a.sh", false},
    {"scripts/**", "scripts.sh", false},
    {"docs/**/*.md", "docs/a.md", true},
    {"docs/**/*.md", "docs/x/a.md", true},
    {"docs/**/*.md", "docs/x/y/z/a.md", true},
    {"docs/**/*.md", "docs/a.txt", false},
    {"docs/**/*.md", "x/docs/a.md", false},
    {"docs/**/*.md", "docs.md", false},
    {"a/**/b", "a/b", true},
    {"a/**/b", "a/x/b", true},
    {"a/**/b", "a/x/y/b", true},
    {"a/**/b", "a/b/c", true},
    {"a/**/b", "a/xb", false},
    {"a/**/b", "xa/b", false},
    {"a/**/b", "a/x/bb", false},
    {"**/foo", "foo", true},
    {"**/foo", "a/b/foo", true},
    {"**/foo", "a/foo/x", true},
    {"**/foo", "a/xfoo", false},
    {"**/*.md", "a.md", true},
    {"**/*.md", "x/y/a.md", true},
    {"**", "anything/at/all", true},
    {"*", "anything/at/all", true},
    {"a**b", "axxb", true},                     // '**' inside a name is '*'
    {"a**b", "ax/xb", false},
    {".github/**", ".github/workflows/ci.yml", true},
    // trailing '/': folders only
    {"node_modules/", "node_modules/x.js", true},
    {"node_modules/", "a/node_modules/b/c.js", true},
    {"node_modules/", "node_modules", false},   // a file of that name
    {"node_modules/", "node_modules_x/y.js", false},
    {"node_modules/", "x/my_node_modules/y", false},
    {"/vendor/", "vendor/lib.c", true},
    {"/vendor/", "src/vendor/lib.c", false},
    {"/vendor/", "vendor", false},
    {"build/", "src/build/out.o", true},
    {"build/", "build.gradle", false},
    // classes and '?'
    {"[ab]c", "ac", true},
    {"[ab]c", "bc", true},
    {"[ab]c", "cc", false},
    {"[ab]c", "x/ac", true},
    {"[ab]c", "abc", false},
    {"[!ab]c", "cc", true},
    {"[!ab]c", "ac", false},
    {"[^ab]c", "bc", false},
    {"[a-c]x", "bx", true},
    {"[a-c]x", "dx", false},
    {"*.[ch]", "x.c", true},
    {"*.[ch]", "x.h", true},
    {"*.[ch]", "x.o", false},
    {"[]]x", "]x", true},                       // ']' first is a literal
    {"[!]]x", "ax", true},
    {"?", "a", true},
    {"?", "ab", false},
    {"?", "x/a", true},
    {"a?c", "abc", true},
    {"a?c", "ac", false},
    {"a/?/c", "a/b/c", true},
    {"a?c", "a/c", false},                      // '?' never matches '/'
    {"x/a[/]c", "x/a/c", false},
    // escapes and literal brackets
    {"\\*.txt", "*.txt", true},
    {"\\*.txt", "a.txt", false},
    {"a\\?", "a?", true},
    {"a\\?", "ab", false},
    {"a[", "a[", true},                         // unterminated '[' is a literal
    {"a[b", "ab", false},
    // several stars, and a path that would make naive backtracking crawl
    {"a*b*c", "aXbYc", true},
    {"a*b*c", "abc", true},
    {"a*b*c", "acb", false},
    {"*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
    // degenerate input
    {"", "a", false},
    {"*", "", false},
    {"/", "a", false},
};
// clang-format on

}  // namespace

TEST_CASE("glob_match follows gitignore semantics over root-relative paths", "[glob]") {
  for (const GlobCase& c : k_glob_cases) {
    INFO("pattern '" << c.pattern << "' path '" << c.path << "'");
    CHECK(kai::glob_match(c.pattern, c.path) == c.want);
  }
}

TEST_CASE("GlobSet answers what glob_match answers for each pattern of the list", "[glob]") {
  std::vector<std::string_view> all;
  for (const GlobCase& c : k_glob_cases) {
    INFO("pattern '" << c.pattern << "' path '" << c.path << "'");
    CHECK(kai::GlobSet({c.pattern}).any(c.path) == c.want);
    all.push_back(c.pattern);
  }
  // The whole list at once: true exactly when some pattern matches.
  kai::GlobSet set(all);
  for (const GlobCase& c : k_glob_cases) {
    bool some = false;
    for (std::string_view pattern : all) some = some || kai::glob_match(pattern, c.path);
    INFO("path '" << c.path << "'");
    CHECK(set.any(c.path) == some);
  }
  CHECK_FALSE(kai::GlobSet({}).any("a"));
  CHECK(kai::GlobSet({"*.sh", "/top"}).any("/top/x"));
  CHECK_FALSE(kai::GlobSet({"*.sh", "/top"}).any("x/top"));
}

TEST_CASE("GlobSet with a folder memo answers what it answers without, path after path", "[glob]") {
  std::vector<std::string_view> all;
  for (const GlobCase& c : k_glob_cases) all.push_back(c.pattern);
  kai::GlobSet set(all);
  // The table's paths in its order (the folder changes nearly every time),
  // then paths of a walk: folder after folder, several files in each.
  std::vector<std::string_view> paths;
  for (const GlobCase& c : k_glob_cases) paths.push_back(c.path);
  for (std::string_view p : {"a.sh"sv, "b.c"sv, "src/a.c"sv, "src/b.env"sv, "src/c.h"sv, "secret/a"sv, "secret/b"sv,
                             "build/x/y.o"sv, "build/x/z.o"sv, "x/.kube/config"sv, "x/.kube/other"sv, "top"sv,
                             "top/a"sv, "top/a/b"sv, "/top/a"sv, "a/b/c/d/e"sv, "a/b/c/d/f.sh"sv, "a/b/c/d/f"sv})
    paths.push_back(p);
  for (const auto& list :
       {all, std::vector<std::string_view>{"secret/", "**/.kube/config", "*.env", "/top/*", "a/**/f"}}) {
    kai::GlobSet one(list);
    kai::GlobSet::FolderMemo memo;
    for (std::string_view p : paths) {
      INFO("path '" << p << "'");
      CHECK(one.any(p, memo) == one.any(p));
    }
  }
  kai::GlobSet::FolderMemo memo;
  CHECK_FALSE(set.any("", memo));
}

TEST_CASE("GlobSet's folder memo keeps a walk of a 3,000-deep chain linear in its depth, and exact", "[glob]") {
  // Down the chain, and back up it with a file in every folder on the way,
  // as a depth-first walk meets them.
  kai::GlobSet set({"**/.kube/config", "a/**/f", "secret/", "*.env", "/n/n/m/", "n/n/n/n/leaf"});
  kai::GlobSet::FolderMemo memo;
  std::vector<std::string> folders{"n"};
  for (int i = 1; i < 3000; ++i) folders.push_back(folders.back() + "/n");
  const std::clock_t t0 = std::clock();  // CPU time: a busy machine does not stretch it
  size_t hits = 0;
  for (const auto& f : folders) hits += set.any(f + "/n", memo);
  for (auto it = folders.rbegin(); it != folders.rend(); ++it) hits += set.any(*it + "/x.env", memo);
  CHECK(hits == folders.size());  // every x.env, and no folder
  // Seconds even unoptimised and sanitized; matching every folder's
  // ancestors again for each path (3000 x 3000 x 3000) took hours.
  CHECK(static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC < 60.0);
  for (size_t i : {size_t{0}, size_t{1}, size_t{1500}, size_t{2999}}) {
    kai::GlobSet::FolderMemo fresh;
    CHECK(set.any(folders[i] + "/x.env", memo) == set.any(folders[i] + "/x.env"));
    CHECK(set.any(folders[i] + "/.kube/config", fresh) == set.any(folders[i] + "/.kube/config"));
  }
}

TEST_CASE("GlobSet's quick test of a pattern's literal ends never turns away a name glob_match takes", "[glob]") {
  // Patterns with their wildcards first, last, in the middle, escaped, in
  // classes and unterminated; names made of the same few bytes, every one
  // up to four long, so that heads, tails and their overlaps all occur.
  const std::vector<std::string_view> patterns = {"a",    "ab",   "*",     "a*",    "*a",      "a*b",   "ab*ba", "a?",
                                                  "?a",   "a?b",  "[ab]",  "a[ab]", "[ab]a",   "a[!a]", "a[",    "[a",
                                                  "a\\*", "\\*a", "a\\?b", "\\[a",  "a*\\",    "**a",   "a**b",  "*.*",
                                                  "a.*",  ".*a",  "aa*aa", "a*a*a", "b[a-b]*", "*[ab]"};
  const std::string alphabet = "ab.*[\\";
  std::vector<std::string> names{""};
  for (size_t len = 1, from = 0; len <= 4; ++len) {
    const size_t to = names.size();
    for (size_t i = from; i < to; ++i)
      for (char c : alphabet) names.push_back(names[i] + c);
    from = to;
  }
  size_t checked = 0;
  for (std::string_view pattern : patterns) {
    kai::GlobSet one({pattern});
    for (const std::string& name : names) {
      if (name.empty()) continue;
      for (const std::string& path : {name, "x/" + name, name + "/y"}) {
        kai::GlobSet::FolderMemo memo;  // the walks' way, which takes the quick test
        if (one.any(path, memo) != kai::glob_match(pattern, path)) {
          INFO("pattern '" << pattern << "' path '" << path << "'");
          CHECK(one.any(path, memo) == kai::glob_match(pattern, path));
        }
        ++checked;
      }
    }
  }
  CHECK(checked > 100000);
}

TEST_CASE("glob_match ignores a leading slash on the path", "[glob]") {
  CHECK(kai::glob_match("/top", "/top/x"));
  CHECK(kai::glob_match("*.sh", "/a/b.sh"));
}

TEST_CASE("glob_match matches bytes, so UTF-8 names work", "[glob]") {
  CHECK(kai::glob_match("*.md", "dokumente/über.md"));
  CHECK(kai::glob_match("?ber.md", "über.md") == false);  // '?' is one byte, 'ü' is two
  CHECK(kai::glob_match("??ber.md", "über.md"));
  CHECK(kai::glob_match("ü*r.md", "über.md"));
}

TEST_CASE("validate_glob accepts ordinary patterns", "[glob]") {
  for (std::string_view p :
       {"*.sh"sv, "scripts/**"sv, "/top"sv, "node_modules/"sv, "docs/**/*.md"sv, "a/**/b"sv, "[ab]c"sv, "[!a-z]x"sv,
        "?"sv, "a\\[b"sv, "**"sv, "Dockerfile*"sv, "secrets/**"sv, ".github/**"sv, "a\\\\"sv}) {
    INFO(p);
    CHECK(kai::validate_glob(p).ok());
  }
}

TEST_CASE("validate_glob refuses patterns that are broken or would silently match nothing", "[glob]") {
  for (std::string_view p : {""sv, "a\0b"sv, "[ab"sv, "x/[a"sv, "../x"sv, "a/../b"sv, "a/.."sv, "./x"sv, "a/./b"sv,
                             "a//b"sv, "/"sv, "//"sv, "a\\"sv, "[a/b]"sv}) {
    INFO(std::string(p));
    kai::Status s = kai::validate_glob(p);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == kai::Errc::usage);
    CHECK_FALSE(s.error().message.empty());
    CHECK(s.error().message.back() != '.');
  }
}
