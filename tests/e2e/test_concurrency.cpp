// Concurrency (SPEC §5): one store lock serialises every state change, so
// racing processes apply each approved proposal exactly once, log it once,
// and back it up once; two people approving the same proposal at once get
// one apply between them.

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "tests/support/checks.hpp"
#include "tests/support/mcp_calls.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

std::string line_name(int i) { return "line " + std::string(i < 10 ? "0" : "") + std::to_string(i); }

// `sh -c` script applying `ids` in order, printing "ID EXIT" per line.
std::string apply_script(const std::vector<int>& ids) {
  std::ostringstream s;
  s << "for i in";
  for (int id : ids) s << ' ' << id;
  s << "; do \"$KAI\" apply \"$i\" >/dev/null 2>&1; echo \"$i $?\"; done";
  return s.str();
}

TEST_CASE("racing apply processes apply every approved proposal exactly once", "[e2e][concurrency][long]") {
  constexpr int k_lines = 10;
  std::string shared;
  for (int i = 1; i <= k_lines; ++i) shared += line_name(i) + "\n";
  TempRepo repo{{"shared.txt", shared}, {"o1.txt", "one\n"}, {"o2.txt", "two\n"}, {"o3.txt", "three\n"}};
  repo.init();

  // Proposals 1..10 edit one line each of shared.txt; 11..13 touch other
  // files. Proposed through one kaicoder mcp: the race is in the applies.
  std::map<int, std::string> replacement;
  std::vector<std::pair<std::string, json>> calls;
  for (int i = 1; i <= k_lines; ++i) {
    replacement[i] = line_name(i) + " edited by proposal " + std::to_string(i);
    calls.push_back({"propose_edit",
                     {{"path", "shared.txt"},
                      {"old_text", line_name(i) + "\n"},
                      {"new_text", replacement[i] + "\n"},
                      {"why", "w"}}});
  }
  calls.push_back({"propose_edit", {{"path", "o1.txt"}, {"old_text", "one"}, {"new_text", "ONE"}, {"why", "w"}}});
  calls.push_back({"write_file", {{"path", "o2.txt"}, {"content", "TWO\n"}, {"why", "w"}}});
  calls.push_back({"delete_file", {{"path", "o3.txt"}, {"why", "w"}}});
  const std::vector<json> proposed = mcp_tool_calls(repo, "racer", calls);
  // The server stages calls side by side, so ids follow the order they were
  // staged in, not sent in: together they are 1..total, each once.
  const int total = k_lines + 3;
  std::set<int> staged;
  for (const json& reply : proposed) {
    INFO(reply.dump());
    REQUIRE(reply.at("ok") == true);
    staged.insert(reply.at("proposal").at("id").get<int>());
  }
  REQUIRE(staged.size() == static_cast<size_t>(total));
  REQUIRE(*staged.begin() == 1);
  REQUIRE(*staged.rbegin() == total);
  std::vector<int> ids;
  for (int id = 1; id <= total; ++id) {
    ids.push_back(id);
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", std::to_string(id), "--no-apply"}, "y"), 0);
  }

  std::vector<std::vector<int>> orders = {ids, {ids.rbegin(), ids.rend()}, ids, ids};
  std::mt19937 rng(20260709);
  std::shuffle(orders[2].begin(), orders[2].end(), rng);
  std::shuffle(orders[3].begin(), orders[3].end(), rng);
  std::vector<Process> racers;
  for (const auto& order : orders)
    racers.push_back(repo.spawn({"sh", "-c", apply_script(order)}, "", {{"KAI", kaicoder_bin()}}));

  std::map<int, std::vector<int>> codes;  // id → exit codes seen
  for (auto& p : racers) {
    Run r = p.finish(90s);
    KAI_REQUIRE_EXIT(r, 0);
    std::istringstream lines(r.out);
    int id, rc;
    while (lines >> id >> rc) codes[id].push_back(rc);
  }
  for (int id : ids) {
    INFO("proposal " << id);
    REQUIRE(codes[id].size() == racers.size());
    CHECK(std::count(codes[id].begin(), codes[id].end(), 0) == 1);
    // Everyone else was told it was already applied.
    CHECK(std::count(codes[id].begin(), codes[id].end(), 6) == static_cast<long>(racers.size()) - 1);
  }

  // Each edit landed exactly once.
  std::string result = repo.read("shared.txt");
  for (int i = 1; i <= k_lines; ++i) {
    INFO(replacement[i]);
    size_t first = result.find(replacement[i]);
    CHECK(first != std::string::npos);
    CHECK(result.find(replacement[i], first + 1) == std::string::npos);
  }
  std::string want;
  for (int i = 1; i <= k_lines; ++i) want += replacement[i] + "\n";
  CHECK(result == want);
  CHECK(repo.read("o1.txt") == "ONE\n");
  CHECK(repo.read("o2.txt") == "TWO\n");
  CHECK_FALSE(repo.exists("o3.txt"));

  // One changelog entry and one backup per proposal.
  json entries = log_entries(repo);
  CHECK(entries.size() == static_cast<size_t>(total));
  std::set<std::string> logged;
  for (const auto& e : entries) logged.insert(e.at("rollback_id").get<std::string>());
  CHECK(logged.size() == static_cast<size_t>(total));
  for (int id : ids) {
    INFO("proposal " << id);
    json p = show_json(repo, id);
    CHECK(p.at("status") == "applied");
    std::string rid = p.at("rollback_id");
    CHECK(logged.count(rid) == 1);
    std::string backup = p.at("backup");
    REQUIRE_FALSE(backup.empty());
    CHECK(std::filesystem::is_regular_file(backup));
  }
  CHECK(repo.find(".bak-kaicoder-").size() == static_cast<size_t>(total));
  CHECK(repo.find("kaicoder-tmp").empty());

  // Undoing the shared edits newest first walks the file back to where it began.
  for (const auto& e : entries) {
    if (e.at("files").at(0) != repo.abs("shared.txt").string()) continue;
    KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id").get<std::string>()}, "y"), 0);
  }
  CHECK(repo.read("shared.txt") == shared);
}

TEST_CASE("two people approving the same proposal at once apply it exactly once", "[e2e][concurrency]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  TtyProcess first = repo.spawn_kai_tty({"approve", "1"});
  TtyProcess second = repo.spawn_kai_tty({"approve", "1"});
  // Both people see the question before either answers.
  REQUIRE(first.wait_for_prompt());
  REQUIRE(second.wait_for_prompt());
  first.answer("y");
  second.answer("y");
  Run a = first.finish();
  Run b = second.finish();
  INFO("first:\n" << a.all() << "\nsecond:\n" << b.all());
  std::vector<int> exits = {a.exit_code, b.exit_code};
  std::sort(exits.begin(), exits.end());
  REQUIRE(exits == std::vector<int>{0, 6});
  const Run& loser = a.exit_code == 6 ? a : b;
  CHECK_THAT(loser.err, Contains("already applied"));
  CHECK(repo.read("a.txt") == "new\n");
  CHECK(log_entries(repo).size() == 1);
  CHECK(repo.find(".bak-kaicoder-").size() == 1);
}

TEST_CASE("one person approving while another rejects: exactly one decision wins", "[e2e][concurrency]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  TtyProcess approver = repo.spawn_kai_tty({"approve", "1"});
  TtyProcess rejecter = repo.spawn_kai_tty({"reject", "1", "--reason", "no"});
  REQUIRE(approver.wait_for_prompt());
  REQUIRE(rejecter.wait_for_prompt());
  approver.answer("y");
  rejecter.answer("y");
  Run a = approver.finish();
  Run r = rejecter.finish();
  INFO("approve:\n" << a.all() << "\nreject:\n" << r.all());
  std::vector<int> exits = {a.exit_code, r.exit_code};
  std::sort(exits.begin(), exits.end());
  REQUIRE(exits == std::vector<int>{0, 6});
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  if (a.exit_code == 0) {
    CHECK(repo.read("a.txt") == "new\n");
    CHECK(entries.at(0).at("kind") == "edit");
    CHECK(show_json(repo, 1).at("status") == "applied");
  } else {
    CHECK(repo.read("a.txt") == "old\n");
    CHECK(entries.at(0).at("kind") == "rejected");
    CHECK(show_json(repo, 1).at("status") == "rejected");
  }
}

TEST_CASE("proposals staged at the same moment get distinct ids", "[e2e][concurrency]") {
  TempRepo repo{{"a.txt", "1\n2\n3\n4\n5\n6\n"}};
  repo.init();
  std::vector<Process> procs;
  for (int i = 1; i <= 6; ++i)
    procs.push_back(repo.spawn_kai({"--json", "propose", "--path", "a.txt", "--target", std::to_string(i) + "\n",
                                    "--replacement", std::to_string(i) + "x\n", "--why", "w"}));
  std::set<int> ids;
  for (auto& p : procs) {
    Run r = p.finish();
    KAI_REQUIRE_EXIT(r, 0);
    ids.insert(json_of(r).at("id").get<int>());
  }
  CHECK(ids == std::set<int>{1, 2, 3, 4, 5, 6});
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  CHECK(json_of(l).at("proposals").size() == 6);
}

}  // namespace
