// Blast radius end to end: risk from the files that include a header, the
// [risk] thresholds from kaicoder.toml, and the confirm tier for high risk.

#include <filesystem>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// `n` C files that include src/util.h, added to the index.
void add_includers(const TempRepo& repo, int n) {
  for (int i = 0; i < n; ++i)
    repo.write("src/f" + std::to_string(i) + ".c", "#include \"util.h\"\nint f" + std::to_string(i) + ";\n");
  Run add = repo.spawn({"git", "add", "-A", "src"}).finish();
  REQUIRE(add.ok());
}

}  // namespace

TEST_CASE("a header included by enough files is medium risk, with the reason", "[e2e][risk]") {
  TempRepo repo{
      {"src/util.h", "int util;\n"}, {"README.md", "hello\n"}, {"kaicoder.toml", "[risk]\nmedium = 3\nhigh = 6\n"}};
  repo.trust();
  add_includers(repo, 4);
  Run dry = repo.kai({"--json", "propose", "--dry-run", "--path", "src/util.h", "--target", "util", "--replacement",
                      "u", "--why", "rename"});
  KAI_REQUIRE_EXIT(dry, 0);
  json d = json_of(dry);
  CHECK(d.at("risk") == "medium");
  CHECK(d.at("risk_reason") == "4 tracked files depend on src/util.h (e.g. src/f0.c, src/f1.c, src/f2.c, \u2026)");
  CHECK(d.at("tier") == "normal");

  KAI_REQUIRE_EXIT(repo.kai(edit("src/util.h", "util", "u")), 0);
  Run show = repo.kai({"show", "1"});
  KAI_REQUIRE_EXIT(show, 0);
  CHECK_THAT(show.out, Contains("risk medium"));
  CHECK_THAT(show.out, Contains("risk:     medium (4 tracked files depend on src/util.h"));
  json shown = show_json(repo, 1);
  CHECK(shown.at("risk") == "medium");
  CHECK(shown.at("risk_reason") == d.at("risk_reason"));
  Run list = repo.kai({"list"});
  CHECK_THAT(list.out, Contains("edit       medium  normal   src/util.h"));

  // A file nobody includes stays low, and the cached graph answers the same.
  Run low = repo.kai({"--json", "propose", "--dry-run", "--path", "README.md", "--target", "hello", "--replacement",
                      "hi", "--why", "w"});
  KAI_REQUIRE_EXIT(low, 0);
  CHECK(json_of(low).at("risk") == "low");
  CHECK(json_of(low).at("risk_reason") == "no tracked file depends on README.md");
  // The graph is cached once the state dir exists (the first proposal made it).
  CHECK(std::filesystem::exists(repo.abs(".kaicoder/cache/deps")));
}

TEST_CASE("a high-risk proposal needs CONFIRM at approve", "[e2e][risk]") {
  TempRepo repo{{"src/util.h", "int util;\n"}, {"kaicoder.toml", "[risk]\nmedium = 2\nhigh = 5\n"}};
  repo.trust();
  add_includers(repo, 5);
  Run p =
      repo.kai({"--json", "propose", "--path", "src/util.h", "--target", "util", "--replacement", "u", "--why", "w"});
  KAI_REQUIRE_EXIT(p, 0);
  json j = json_of(p);
  CHECK(j.at("risk") == "high");
  CHECK(j.at("tier") == "confirm");
  CHECK_THAT(j.at("tier_reason").get<std::string>(), Contains("high risk: 5 tracked files depend on src/util.h"));

  Run y = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(y, 4);  // not CONFIRM: declined
  CHECK(y.prompted);
  CHECK_THAT(y.tty + y.out, Contains("risk high"));
  CHECK_THAT(y.tty + y.out, Contains("risk:     high (5 tracked files depend on src/util.h"));
  CHECK_THAT(y.tty + y.out, Contains("CONFIRM"));
  CHECK(repo.read("src/util.h") == "int util;\n");
  CHECK(show_json(repo, 1).at("status") == "pending");

  Run c = repo.kai_tty({"approve", "1"}, "CONFIRM");
  KAI_CHECK_EXIT(c, 0);
  CHECK(repo.read("src/util.h") == "int u;\n");
}

TEST_CASE("a high risk overrides an allow rule: a person decides", "[e2e][risk]") {
  TempRepo repo{{"src/util.h", "int util;\n"},
                {"kaicoder.toml",
                 "[risk]\nmedium = 1\nhigh = 2\n[[policy.rule]]\naction = \"edit\"\npath = \"src/**\"\n"
                 "decision = \"allow\"\n"}};
  repo.trust();
  add_includers(repo, 2);
  Run p =
      repo.kai({"--json", "propose", "--path", "src/util.h", "--target", "util", "--replacement", "u", "--why", "w"});
  KAI_REQUIRE_EXIT(p, 0);
  CHECK(json_of(p).at("decision") == "ask");
  CHECK_FALSE(json_of(p).contains("applied"));
  CHECK(repo.read("src/util.h") == "int util;\n");
}

TEST_CASE("deleting a file that others include is at least medium risk", "[e2e][risk]") {
  TempRepo repo{{"src/util.h", "int util;\n"}, {"kaicoder.toml", "[risk]\nmedium = 10\nhigh = 20\n"}};
  repo.trust();
  add_includers(repo, 1);
  Run del = repo.kai({"--json", "propose", "--dry-run", "--path", "src/util.h", "--delete", "--why", "w"});
  KAI_REQUIRE_EXIT(del, 0);
  CHECK(json_of(del).at("risk") == "medium");
  CHECK(json_of(del).at("risk_reason") ==
        "1 tracked file depends on src/util.h (src/f0.c); deleting a file that others depend on");
  Run edit_it = repo.kai({"--json", "propose", "--dry-run", "--path", "src/util.h", "--target", "util", "--replacement",
                          "u", "--why", "w"});
  CHECK(json_of(edit_it).at("risk") == "low");
}

TEST_CASE("a corrupt graph cache never fails a proposal", "[e2e][risk]") {
  TempRepo repo{{"src/util.h", "int util;\n"}, {"kaicoder.toml", "[risk]\nmedium = 1\nhigh = 5\n"}};
  repo.trust();
  add_includers(repo, 1);
  KAI_REQUIRE_EXIT(repo.kai(edit("src/util.h", "util", "u")), 0);
  repo.write(".kaicoder/cache/deps", "kaicoder-deps 1\nkey nonsense\n\x01\x02");
  Run again = repo.kai({"--json", "propose", "--dry-run", "--path", "src/util.h", "--target", "util", "--replacement",
                        "v", "--why", "w"});
  KAI_REQUIRE_EXIT(again, 0);
  CHECK(json_of(again).at("risk") == "medium");
}
