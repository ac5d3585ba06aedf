// `kaicoder propose --wait`: blocking until the person decides.

#include <thread>

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("propose --wait blocks until approval and prints the rollback id", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(waiter.done());
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  Run w = waiter.finish(20s);
  KAI_REQUIRE_EXIT(w, 0);
  std::string rid = show_json(repo, 1).at("rollback_id");
  CHECK(is_rollback_id(rid));
  CHECK_THAT(w.out, Contains("rollback-id: " + rid));
  CHECK_THAT(w.out, Contains(repo.abs("a.txt.bak-kaicoder-" + rid).string()));
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("propose --wait exits 4 when the proposal is rejected", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1", "--reason", "no thanks"}, "y"), 0);
  Run w = waiter.finish(20s);
  KAI_CHECK_EXIT(w, 4);
  CHECK_THAT(w.out, Contains("rejected"));
  CHECK(repo.read("a.txt") == "old\n");
}

// Exit 0 means "done" (SPEC §3): approval alone writes nothing and can still
// be followed by a reject, so the waiter waits for the apply itself.
TEST_CASE("a --wait proposer keeps waiting while its proposal is approved but not yet applied", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  CHECK_FALSE(waiter.done());
  KAI_REQUIRE_EXIT(repo.kai({"apply", "1"}), 0);
  Run w = waiter.finish(20s);
  KAI_CHECK_EXIT(w, 0);
  CHECK_THAT(w.out, Contains("rollback-id: " + show_json(repo, 1).at("rollback_id").get<std::string>()));
}

TEST_CASE("propose --wait --json reports the outcome as one object", "[e2e][wait][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = {"--json"};
  for (const auto& a : edit("a.txt", "old", "new")) args.push_back(a);
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  Run w = waiter.finish(20s);
  KAI_REQUIRE_EXIT(w, 0);
  json j = json::parse(w.out);
  CHECK(j.at("status") == "applied");
  CHECK(j.at("exit_code") == 0);
  CHECK(is_rollback_id(j.at("rollback_id")));
}

}  // namespace
