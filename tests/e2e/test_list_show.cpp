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

namespace {

// The lines of `text`.
std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("list has a header and stable columns for every kind", "[e2e][list]") {
  TempRepo repo{{"a.txt", "old\n"}, {"docs/b.txt", "b\n"}, {"docs/c.txt", "c\n"}, {"d.txt", "d\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "test", "--", "make", "test"}), 0);
  const std::string patch =
      "--- a/docs/b.txt\n+++ b/docs/b.txt\n@@ -1 +1 @@\n-b\n+B\n"
      "--- a/docs/c.txt\n+++ b/docs/c.txt\n@@ -1 +1 @@\n-c\n+C\n"
      "--- a/d.txt\n+++ b/d.txt\n@@ -1 +1 @@\n-d\n+D\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "three"}, patch), 0);
  Run l = repo.kai({"list"});
  KAI_REQUIRE_EXIT(l, 0);
  auto lines = text_lines(l.out);
  REQUIRE(lines.size() >= 4);
  const std::string& header = lines[0];
  CHECK(header.find("  ID  STATUS       KIND       RISK    TIER     WHAT") == 0);
  const size_t what = header.find("WHAT"), summary = header.find("SUMMARY");
  REQUIRE(summary != std::string::npos);
  // Every row starts each column where the header does.
  for (size_t i = 1; i <= 3; ++i) {
    INFO(lines[i]);
    // Columns count characters: the one "…" takes one.
    std::string row = lines[i];
    for (size_t at = row.find("\u2026"); at != std::string::npos; at = row.find("\u2026")) row.replace(at, 3, ".");
    CHECK(row.size() > summary);
    CHECK(row[what - 1] == ' ');
    CHECK(row[summary - 1] == ' ');
    CHECK(row[summary - 2] == ' ');
  }
  CHECK_THAT(l.out, Contains("   1  pending      edit       low     normal   a.txt"));
  CHECK_THAT(l.out, Contains("   2  pending      run        -       "));
  CHECK_THAT(l.out, Contains("make test"));
  CHECK_THAT(l.out, Contains("   3  pending      changeset  "));
  CHECK_THAT(l.out, Contains("3 files: docs/b.txt, docs/c.txt\u2026"));
}

TEST_CASE("show names risk and tier side by side, and counts say 1 line", "[e2e][show]") {
  TempRepo repo{{"oracle.html", "<p>old</p>\n"}, {"kaicoder.toml", "[paths]\nprotected = [\"oracle.html\"]\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("oracle.html", "old", "new")), 0);
  Run s = repo.kai({"show", "1"});
  KAI_REQUIRE_EXIT(s, 0);
  // Never "risk medium" alone for a proposal that takes CONFIRM.
  CHECK_THAT(s.out, Contains("proposal 1 \u00b7 edit \u00b7 risk medium \u00b7 tier confirm \u00b7 pending"));
  json j = show_json(repo, 1);
  CHECK(j.at("risk") == "medium");
  CHECK(j.at("tier") == "confirm");
  Run l = repo.kai({"--json", "list"});
  CHECK(json_of(l).at("proposals").at(0).at("tier") == "confirm");
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "one.txt", "--content-file", "-", "--why", "w"}, "just one\n"), 0);
  CHECK(show_json(repo, 2).at("summary") == "created one.txt (1 line)");
}

TEST_CASE("rollback lines name whole root-relative paths", "[e2e][log]") {
  TempRepo repo{{"README.md", "top\n"}, {"bench/README.md", "bench\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("bench/README.md", "bench", "BENCH")), 0);
  const std::string rid = approve(repo, 1);
  json e = log_entries(repo).at(0);
  CHECK(e.at("rollback") == "restore bench/README.md.bak-kaicoder-" + rid + " \u2192 bench/README.md");
  CHECK_THAT(repo.read("KAI-CODER-CHANGELOG.md"),
             Contains("- rollback:  restore bench/README.md.bak-kaicoder-" + rid + " \u2192 bench/README.md"));
}
