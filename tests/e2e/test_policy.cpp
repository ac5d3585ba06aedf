// A policy `allow` rule: applied at once, backed up and logged.

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;

TEST_CASE("an allow rule applies a proposal at once, backed up and logged with policy as approver", "[e2e][policy]") {
  TempRepo repo{{"docs/guide.md", "old text\n"}, {"src/a.c", "int x;\n"}};
  repo.init();
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") +
                                  "\n[[policy.rule]]\naction = \"edit\"\npath = \"docs/**\"\ndecision = \"allow\"\n");
  repo.trust();
  Run r = repo.kai(
      {"--json", "propose", "--path", "docs/guide.md", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("status") == "applied");
  std::string rid = j.at("applied").at("rollback_id");
  CHECK(repo.read("docs/guide.md") == "new text\n");
  CHECK(repo.read("docs/guide.md.bak-kaicoder-" + rid) == "old text\n");
  json e = log_entries(repo).at(0);
  CHECK(e.at("rollback_id") == rid);
  CHECK_THAT(e.at("approver").get<std::string>(), StartsWith("policy"));
  // Outside the rule a person still decides.
  Run other = repo.kai({"--json", "propose", "--path", "src/a.c", "--target", "x", "--replacement", "y", "--why", "w"});
  KAI_REQUIRE_EXIT(other, 0);
  CHECK(json_of(other).at("status") == "pending");
  CHECK(repo.read("src/a.c") == "int x;\n");
}

}  // namespace
