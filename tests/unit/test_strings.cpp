#include <catch2/catch.hpp>

#include "lib/util/strings.hpp"

using namespace kai;

TEST_CASE("trim takes only the named characters, from the named side", "[strings]") {
  CHECK(trim("  \ta b\t ") == "a b");
  CHECK(trim(" \r\n x \r\n", " \t\r\n") == "x");
  CHECK(trim(" \r x \r") == "\r x \r");  // CR is not a blank unless named
  CHECK(trim_left("  x  ") == "x  ");
  CHECK(trim_right("  x \r", " \t\r") == "  x");
  CHECK(trim("   ").empty());
  CHECK(trim("").empty());
  CHECK(trim_left(" \t").empty());
  CHECK(trim_right(" \t").empty());
}

TEST_CASE("split keeps empty pieces and takes separators of any length", "[strings]") {
  using V = std::vector<std::string_view>;
  CHECK(split("a//b", "/") == V{"a", "", "b"});
  CHECK(split("", "/") == V{""});
  CHECK(split("/a/", "/") == V{"", "a", ""});
  CHECK(split("a::b::c", "::") == V{"a", "b", "c"});
  CHECK(split("a:b", "::") == V{"a:b"});
  CHECK(split("abc", "") == V{"abc"});
  // split_into gives the same pieces, and nothing of what the vector held.
  V out{"stale", "pieces", "here", "and", "more"};
  split_into("a\tb", "\t", out);
  CHECK(out == V{"a", "b"});
  split_into("", "/", out);
  CHECK(out == V{""});
}

TEST_CASE("ascii_lower lowers ASCII letters only", "[strings]") {
  CHECK(ascii_lower("POST Put") == "post put");
  CHECK(ascii_lower("\xC3\x89T\xC3\x89") == "\xC3\x89t\xC3\x89");  // ÉTÉ: only the T changes
  CHECK(ascii_lower("").empty());
}

TEST_CASE("the generated folders are the four a build or a package manager fills, by exact name", "[strings]") {
  for (const char* name : {"node_modules", "target", "dist", "build"}) {
    INFO(name);
    CHECK(is_generated_dir(name));
  }
  for (const char* name : {"", "src", "builds", "build-dev", "Build", "node_modules/", ".git", "out", "tmp"}) {
    INFO(name);
    CHECK_FALSE(is_generated_dir(name));
  }
}

TEST_CASE("edit_distance counts inserts, deletes, replacements and swaps of neighbours", "[strings]") {
  CHECK(edit_distance("list", "list") == 0);
  CHECK(edit_distance("lsit", "list") == 1);      // swap
  CHECK(edit_distance("appove", "approve") == 1);  // insert
  CHECK(edit_distance("approvee", "approve") == 1);
  CHECK(edit_distance("rejekt", "reject") == 1);
  CHECK(edit_distance("", "log") == 3);
  CHECK(edit_distance("abc", "xyz") == 3);
}

TEST_CASE("closest_words suggests what is near, and nothing for what is far", "[strings]") {
  const std::vector<std::string> verbs{"list", "log", "ls", "approve", "apply", "reject", "rollback"};
  CHECK(closest_words("lsit", verbs) == std::vector<std::string>{"list"});
  CHECK(closest_words("appove", verbs) == std::vector<std::string>{"approve"});
  CHECK(closest_words("frobnicate", verbs).empty());
  CHECK(closest_words("", verbs).empty());
  // A prefix of several: all of them.
  CHECK(closest_words("roll", verbs) == std::vector<std::string>{"rollback"});
  const std::vector<std::string> opts{"--replacement", "--replacement-file", "--target", "--why"};
  CHECK(closest_words("--replacment", opts) == std::vector<std::string>{"--replacement"});
}

TEST_CASE("count_of says 1 line, 2 lines", "[strings]") {
  CHECK(count_of(0, "line") == "0 lines");
  CHECK(count_of(1, "line") == "1 line");
  CHECK(count_of(2, "file") == "2 files");
  CHECK(count_of(1, "entry", "entries") == "1 entry");
  CHECK(count_of(3, "entry", "entries") == "3 entries");
}
