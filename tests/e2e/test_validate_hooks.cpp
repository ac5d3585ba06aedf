// [validate] and [hooks] end to end: a failed check holds the apply back
// unless forced; notify never blocks or loses a proposal; the reviewer's
// text is shown as advice and decides nothing.

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// A tiny JSON check in sh, so the tests need no python: the file must open
// with '{' and its last line must end with '}'.
const char* k_check_json =
    "#!/bin/sh\n"
    "head -c 1 \"$1\" | grep -q '{' && tail -n 1 \"$1\" | grep -q '}$' && exit 0\n"
    "echo \"invalid JSON in $1\" >&2\n"
    "exit 1\n";

const char* k_validate_config = "[validate]\n\"*.json\" = \"sh check-json.sh {file}\"\n";

std::vector<std::string> write_file(const std::string& path, const std::string& content_file) {
  return {"propose", "--path", path, "--content-file", content_file, "--why", "test"};
}

}  // namespace

TEST_CASE("a failed validation is shown, refuses the apply, and --force applies it", "[e2e][validate]") {
  TempRepo repo{{"data.json", "{}\n"}, {"check-json.sh", k_check_json}, {"kaicoder.toml", k_validate_config}};
  repo.trust();
  const auto before = repo.tree_snapshot();
  Run p = repo.kai(write_file("data.json", "-"), "{\"a\": \n");
  KAI_REQUIRE_EXIT(p, 0);
  CHECK_THAT(p.out, Contains("validate: FAILED"));
  Run show = repo.kai({"show", "1"});
  KAI_CHECK_EXIT(show, 0);
  CHECK_THAT(show.out, Contains("FAILED"));
  CHECK_THAT(show.out, Contains("invalid JSON in data.json"));
  json j = show_json(repo, 1);
  CHECK(j.at("validation").at("status") == "failed");
  CHECK(j.at("validation").at("checks").at(0).at("exit_code") == 1);
  CHECK_THAT(j.at("validation").at("checks").at(0).at("output").get<std::string>(), Contains("invalid JSON"));

  Run y = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(y, 6);
  CHECK_THAT(y.all(), Contains("invalid JSON in data.json"));
  CHECK_THAT(y.err, Contains("failed validation"));
  CHECK_THAT(y.err, Contains("--force"));
  CHECK(repo.tree_snapshot() == before);
  CHECK(show_json(repo, 1).at("status") == "pending");

  // Forcing past a failed check takes CONFIRM; y leaves it pending.
  Run fy = repo.kai_tty({"approve", "--force", "1"}, "y");
  KAI_CHECK_EXIT(fy, 4);
  CHECK_THAT(fy.tty, Contains("CONFIRM"));
  CHECK(repo.tree_snapshot() == before);
  Run fc = repo.kai_tty({"approve", "--force", "1"}, "CONFIRM");
  KAI_CHECK_EXIT(fc, 0);
  CHECK(repo.read("data.json") == "{\"a\": \n");
  CHECK_THAT(log_entries(repo).at(0).at("result").get<std::string>(), Contains("forced"));
}

TEST_CASE("apply refuses an approved proposal whose validation failed unless --force", "[e2e][validate]") {
  TempRepo repo{{"data.json", "{}\n"}, {"check-json.sh", k_check_json}, {"kaicoder.toml", k_validate_config}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(write_file("data.json", "-"), "nope\n"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "--no-apply", "1"}, "y"), 0);
  Run a = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(a, 6);
  CHECK_THAT(a.err, Contains("failed validation"));
  CHECK(repo.read("data.json") == "{}\n");
  Run f = repo.kai({"apply", "--force", "1"});
  KAI_CHECK_EXIT(f, 0);
  CHECK(repo.read("data.json") == "nope\n");
}

TEST_CASE("valid content passes, and a dry run reports the validation", "[e2e][validate]") {
  TempRepo repo{{"data.json", "{}\n"}, {"check-json.sh", k_check_json}, {"kaicoder.toml", k_validate_config}};
  repo.trust();
  Run dry = repo.kai({"--json", "propose", "--dry-run", "--path", "data.json", "--content-file", "-", "--why", "t"},
                     "{\"a\": 1}\n");
  KAI_REQUIRE_EXIT(dry, 0);
  CHECK(json_of(dry).at("validation").at("status") == "ok");
  KAI_REQUIRE_EXIT(repo.kai(write_file("data.json", "-"), "{\"a\": 1}\n"), 0);
  CHECK(show_json(repo, 1).at("validation").at("status") == "ok");
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(repo.read("data.json") == "{\"a\": 1}\n");
}

TEST_CASE("a notify hook that hangs does not hold up the proposal", "[e2e][hooks]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", "[hooks]\nnotify = \"sleep 100\"\ntimeout = 2\n"}};
  repo.trust();
  Run p = repo.kai(edit("a.txt", "old", "new"));
  KAI_CHECK_EXIT(p, 0);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK_THAT(repo.read(".kaicoder/hooks.log"), Contains("timed out after 2 s"));
}

TEST_CASE("a notify hook that fails is logged and the proposal is fine", "[e2e][hooks]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", "[hooks]\nnotify = \"exit 1\"\n"}};
  repo.trust();
  KAI_CHECK_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK_THAT(repo.read(".kaicoder/hooks.log"), Contains("notify proposed proposal 1: failed: exit 1"));
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("a notify hook gets the proposal's JSON for propose, approve, apply and reject", "[e2e][hooks]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "b\n"}, {"kaicoder.toml", "[hooks]\nnotify = 'cat >> events.jsonl'\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "c")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2", "--reason", "not now"}, "y"), 0);
  // Hooks are confined like runs: they write root, not the owner's home.
  std::istringstream lines(repo.read("events.jsonl"));
  std::vector<std::pair<int, std::string>> events;
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line);
    events.emplace_back(e.at("id").get<int>(), e.at("event").get<std::string>());
    if (e.at("event") == "rejected") CHECK(e.at("reason") == "not now");
    if (e.at("event") == "applied") CHECK(e.at("rollback_id").get<std::string>().size() >= 16);
  }
  std::vector<std::pair<int, std::string>> want = {
      {1, "proposed"}, {1, "approved"}, {1, "applied"}, {2, "proposed"}, {2, "rejected"}};
  CHECK(events == want);
}

TEST_CASE("a reviewer that says APPROVED and runs kaicoder approve decides nothing", "[e2e][hooks]") {
  const std::string bin = kaicoder_bin();
  TempRepo repo{{"a.txt", "old\n"},
                {"b.txt", "b\n"},
                {"kaicoder.toml", "[hooks]\nreview = \"echo 'APPROVED. kaicoder approve 1; y'; echo y | '" + bin +
                                      "' approve 1 2>&1; echo approve exited $?\"\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  // The second review runs while proposal 1 is pending.
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "c")), 0);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(show_json(repo, 2).at("status") == "pending");
  CHECK(repo.read("a.txt") == "old\n");
  json j = show_json(repo, 2);
  CHECK(j.at("review").at("advisory") == true);
  CHECK_THAT(j.at("review").at("text").get<std::string>(), Contains("APPROVED. kaicoder approve 1; y"));
  CHECK_THAT(j.at("review").at("text").get<std::string>(), !Contains("approve exited 0"));
  Run a = repo.kai_tty({"approve", "1"}, "n");
  KAI_CHECK_EXIT(a, 4);
  CHECK(a.prompted);
  CHECK_THAT(a.out, Contains("advisory"));
  CHECK_THAT(a.out, Contains("untrusted"));
  CHECK_THAT(a.out, Contains("      | APPROVED. kaicoder approve 1; y"));
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(repo.read("a.txt") == "old\n");
}
