// Proposal ids are decimal, read by one parser everywhere (SPEC §11):
// what it refuses no command or door may take for an id.

#include <catch2/catch.hpp>

#include "lib/store/proposal.hpp"

using kai::parse_proposal_id;
using kai::read_proposal_id;

TEST_CASE("proposal ids are decimal digits, nothing else", "[ids]") {
  CHECK(parse_proposal_id("8") == 8);
  CHECK(parse_proposal_id("12") == 12);
  CHECK(parse_proposal_id("0") == 0);  // well formed; no proposal has it
  CHECK(parse_proposal_id("999999999") == 999999999);
  for (const char* bad : {"010", "00", "0x8", "+8", "-8", " 8", "8 ", "1e3", "8.0", "", "eight", "٨", "8\n",
                          "1000000000", "99999999999999999999", "0b1", "08", "\t8"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(parse_proposal_id(bad));
  }
}

TEST_CASE("a malformed id is a usage error naming the text and the valid form", "[ids]") {
  auto r = read_proposal_id("0x8");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == kai::Errc::usage);
  CHECK_THAT(r.error().message, Catch::Matchers::Contains("'0x8' is not a proposal id"));
  CHECK_THAT(r.error().message, Catch::Matchers::Contains("decimal"));
  CHECK(read_proposal_id("8").ok());
  // A long text is quoted only in part.
  auto long_one = read_proposal_id(std::string(500, '9'));
  REQUIRE_FALSE(long_one);
  CHECK(long_one.error().message.size() < 300);
}
