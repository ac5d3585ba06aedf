// git's C-style path quoting (lib/util/git_quote) and its inverse.

#include <string>

#include <catch2/catch.hpp>

#include "lib/util/git_quote.hpp"

using kai::quote_c_style;
using kai::unquote_c_style;

namespace {

std::string unquoted(const std::string& s) {
  size_t end = 0;
  auto r = unquote_c_style(s, end);
  REQUIRE(r);
  CHECK(end == s.size());
  return *r;
}

}  // namespace

TEST_CASE("a plain path is written as it is, with its prefix", "[git_quote]") {
  CHECK(quote_c_style("a/", "src/main.cpp") == "a/src/main.cpp");
  CHECK(quote_c_style("", "with space/and-dash") == "with space/and-dash");
  CHECK(quote_c_style("b/", "") == "b/");
}

TEST_CASE("quotes, backslashes, controls and non-ASCII bytes are quoted as git does", "[git_quote]") {
  // what `git diff` prints for these names with core.quotePath on (the default)
  CHECK(quote_c_style("a/",
                      "sp\xC3\xA4"
                      "ce \"x\"") == "\"a/sp\\303\\244ce \\\"x\\\"\"");
  CHECK(quote_c_style("", "back\\slash") == "\"back\\\\slash\"");
  CHECK(quote_c_style("", "tab\there\nline") == "\"tab\\there\\nline\"");
  CHECK(quote_c_style("", std::string("nul\x01"
                                      "del\x7f",
                                      8)) == "\"nul\\001del\\177\"");
  CHECK(quote_c_style("", "\a\b\v\f\r") == "\"\\a\\b\\v\\f\\r\"");
}

TEST_CASE("unquoting gives back every byte that quoting wrote", "[git_quote]") {
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  const std::string q = quote_c_style("a/", all);
  CHECK(unquoted(q) == "a/" + all);
  CHECK(unquoted("\"a/sp\\303\\244ce \\\"x\\\"\"") ==
        "a/sp\xC3\xA4"
        "ce \"x\"");
}

TEST_CASE("unquoting stops at the closing quote and says where", "[git_quote]") {
  size_t end = 0;
  auto r = unquote_c_style("\"a b\" \"c d\"", end);
  REQUIRE(r);
  CHECK(*r == "a b");
  CHECK(end == 5);
}

TEST_CASE("malformed quoting is refused", "[git_quote]") {
  for (const char* bad : {"", "plain", "\"no closing quote", "\"trailing backslash\\", "\"\\q unknown\"",
                          "\"\\400 above a byte\"", "\"\\38 not octal\"", "\"\\7\"", "\"\\12\""}) {
    INFO(bad);
    size_t end = 0;
    auto r = unquote_c_style(bad, end);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::usage);
    CHECK(end == 0);
  }
}
