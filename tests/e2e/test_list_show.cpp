// `kaicoder list` and `kaicoder show`.

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("list shows pending proposals first and filters by --status", "[e2e][list]") {
  TempRepo repo{{"a.txt", "1\n2\n3\n4\n"}};
  repo.init();
  for (const char* line : {"1", "2", "3", "4"})
    KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", line, std::string(line) + "x")), 0);
  approve(repo, 2);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "3"}, "y"), 0);

  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  std::vector<std::pair<int, std::string>> got;
  const json listed = json_of(l);
  for (const auto& p : listed.at("proposals"))
    got.emplace_back(p.at("id").get<int>(), p.at("status").get<std::string>());
  std::vector<std::pair<int, std::string>> want = {{1, "pending"}, {4, "pending"}, {3, "rejected"}, {2, "applied"}};
  CHECK(got == want);

  Run text = repo.kai({"list"});
  KAI_REQUIRE_EXIT(text, 0);
  size_t p1 = text.out.find("   1  pending"), p4 = text.out.find("   4  pending"), p2 = text.out.find("   2  applied");
  CHECK(p1 != std::string::npos);
  CHECK(p1 < p4);
  CHECK(p4 < p2);

  Run only = repo.kai({"--json", "list", "--status", "applied"});
  KAI_REQUIRE_EXIT(only, 0);
  REQUIRE(json_of(only).at("proposals").size() == 1);
  CHECK(json_of(only).at("proposals").at(0).at("id") == 2);
  Run none = repo.kai({"list", "--status", "timeout"});
  KAI_REQUIRE_EXIT(none, 0);
  CHECK_THAT(none.out, Contains("no proposals with status timeout"));
  KAI_CHECK_EXIT(repo.kai({"list", "--status", "bogus"}), 2);
}

TEST_CASE("show prints metadata and the diff, and --full shows a diff too large for review", "[e2e][show]") {
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "line " + std::to_string(i) + "\n";
  TempRepo repo{{"a.txt", "old\n"}, {"big.txt", big}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new", "the reason")), 0);
  Run s = repo.kai({"show", "1"});
  KAI_REQUIRE_EXIT(s, 0);
  CHECK_THAT(s.out, Contains("proposal 1"));
  CHECK_THAT(s.out, Contains("path:     a.txt"));
  CHECK_THAT(s.out, Contains("why:\n      | the reason"));
  CHECK_THAT(s.out, Contains("-old\n+new\n"));
  json j = show_json(repo, 1);
  CHECK(j.at("id") == 1);
  CHECK_THAT(j.at("diff").get<std::string>(), Contains("+new"));

  std::string changed;
  for (int i = 0; i < 3000; ++i) changed += (i % 2 ? "LINE " : "line ") + std::to_string(i) + "\n";
  repo.write("big.in", changed);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "big.txt", "--content-file", "big.in", "--why", "w"}), 0);
  json brief = show_json(repo, 2);
  Run full = repo.kai({"--json", "show", "2", "--full"});
  KAI_REQUIRE_EXIT(full, 0);
  json jf = json_of(full);
  CHECK(jf.at("diff_info").at("truncated") == false);
  CHECK(jf.at("diff").get<std::string>().size() >= brief.at("diff").get<std::string>().size());
  CHECK_THAT(jf.at("diff").get<std::string>(), Contains("+LINE 2999\n"));
  CHECK(brief.at("diff_info").at("truncated") == true);
  Run t = repo.kai({"show", "2"});
  KAI_CHECK_EXIT(t, 0);
  CHECK_THAT(t.out, Contains("kaicoder show 2 --full"));
}

TEST_CASE("list reports a corrupt proposal record and the other proposals still work", "[e2e][list]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B")), 0);
  repo.write(".kaicoder/staging/1/meta.json", "{ not json");
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  json j = json_of(l);
  REQUIRE(j.at("corrupt").size() == 1);
  CHECK(j.at("corrupt").at(0).at("id") == 1);
  REQUIRE(j.at("proposals").size() == 1);
  CHECK(j.at("proposals").at(0).at("id") == 2);
  Run text = repo.kai({"list"});
  KAI_CHECK_EXIT(text, 0);
  CHECK_THAT(text.out, Contains("corrupt"));
  approve(repo, 2);
  CHECK(repo.read("a.txt") == "a\nB\n");
  // The next id never reuses the corrupt one.
  Run next =
      repo.kai({"--json", "propose", "--path", "a.txt", "--target", "a\n", "--replacement", "x\n", "--why", "w"});
  KAI_REQUIRE_EXIT(next, 0);
  CHECK(json_of(next).at("id") == 3);
}

}  // namespace
