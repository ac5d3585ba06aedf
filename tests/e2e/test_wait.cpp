// kaicoder wait and the id a --wait-ing proposer prints before it blocks:
// every outcome's exit code, a killed waiter that resumes, and one proposal
// staged once however often an agent retries it.

#include <csignal>
#include <thread>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// stderr of a running child once it holds a whole first line ("" if it never does).
std::string first_err_line(Process& p) {
  for (int i = 0; i < 400; ++i) {
    const std::string& e = p.so_far().err;
    if (size_t nl = e.find('\n'); nl != std::string::npos) return e.substr(0, nl);
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return "";
}

std::string waiting_line(int id) {
  return "kaicoder: proposal " + std::to_string(id) + " is waiting for a person: kaicoder approve " +
         std::to_string(id);
}

// A waiter on proposal 1 that is still blocked a moment after it started.
Process blocked_waiter(const TempRepo& repo, std::vector<std::string> args) {
  Process w = repo.spawn_kai(args);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(w.done());
  return w;
}

}  // namespace

TEST_CASE("wait exits 0 once the proposal is applied, with its backup and rollback id", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Process w = blocked_waiter(repo, {"--json", "wait", "1"});
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  Run r = w.finish(20s);
  KAI_REQUIRE_EXIT(r, 0);
  json j = json::parse(r.out);
  CHECK(j.at("status") == "applied");
  CHECK(j.at("exit_code") == 0);
  CHECK(j.at("rollback_id") == show_json(repo, 1).at("rollback_id"));
  CHECK_FALSE(j.at("rollback_id").get<std::string>().empty());
  CHECK_THAT(j.at("backup").get<std::string>(), Contains("a.txt.bak-kaicoder-"));
  CHECK(repo.read("a.txt") == "new\n");
  // Asked again once it is decided, it answers at once.
  Run again = repo.kai({"wait", "1"});
  KAI_CHECK_EXIT(again, 0);
  CHECK_THAT(again.out, Contains("rollback-id: " + j.at("rollback_id").get<std::string>()));
}

TEST_CASE("wait exits 4 when the proposal is rejected", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Process w = blocked_waiter(repo, {"wait", "1"});
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1", "--reason", "not now"}, "y"), 0);
  Run r = w.finish(20s);
  KAI_CHECK_EXIT(r, 4);
  CHECK_THAT(r.out, Contains("proposal 1 is rejected"));
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("wait exits 5 when the proposal expires before a decision", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", "[approval]\ntimeout = 1\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run r = repo.kai({"--json", "wait", "1"}, "", {}, 20s);
  KAI_CHECK_EXIT(r, 5);
  CHECK(json_of(r).at("status") == "timeout");
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("wait exits 6 when the approved change could not be applied", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "original\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--content-file", "-", "--why", "w"}, "from the agent\n"),
                   0);
  Process w = blocked_waiter(repo, {"wait", "1"});
  repo.write("a.txt", "hand edit\n");
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 6);
  Run r = w.finish(20s);
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.out, Contains("failed"));
  CHECK(repo.read("a.txt") == "hand edit\n");
}

TEST_CASE("wait exits 7 for an unknown id", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"wait", "42"});
  KAI_CHECK_EXIT(r, 7);
  CHECK_THAT(r.err, Contains("42"));
  Run j = repo.kai({"--json", "wait", "42"});
  KAI_CHECK_EXIT(j, 7);
  CHECK(json_of(j).at("error").at("code") == 7);
}

TEST_CASE("wait exits 8 when its timeout runs out before a decision", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  const auto start = std::chrono::steady_clock::now();
  Run r = repo.kai({"wait", "1", "--timeout", "1"});
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(900));
  KAI_CHECK_EXIT(r, 8);
  CHECK_THAT(r.err, Contains("still waiting for a person: kaicoder approve 1"));
  CHECK_THAT(r.err, Contains("kaicoder wait 1"));
  Run j = repo.kai({"--json", "wait", "1", "--timeout", "0"});
  KAI_CHECK_EXIT(j, 8);
  CHECK(json_of(j).at("status") == "pending");
  CHECK(json_of(j).at("exit_code") == 8);
  // Giving up decides nothing.
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(repo.read("a.txt") == "old\n");
  KAI_CHECK_EXIT(repo.kai({"wait", "1", "--timeout", "soon"}), 2);
}

TEST_CASE("propose --wait names its id on stderr before it blocks, and a killed waiter resumes with wait",
          "[e2e][wait]") {
  const bool as_json = GENERATE(false, true);
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  if (as_json) args.insert(args.begin(), "--json");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(first_err_line(waiter) == waiting_line(1));
  CHECK(show_json(repo, 1).at("status") == "pending");
  if (as_json) CHECK(waiter.so_far().out.empty());  // stdout: one object, at the end
  ::kill(waiter.pid(), SIGKILL);
  Run killed = waiter.finish(10s);
  CHECK(killed.killed_by(SIGKILL));
  // The proposal outlives its waiter; the person decides; `wait` learns it.
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  Run resumed = repo.kai({"--json", "wait", "1"});
  KAI_REQUIRE_EXIT(resumed, 0);
  CHECK(json_of(resumed).at("status") == "applied");
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("propose --wait --json prints the id line first and one JSON object when decided", "[e2e][wait][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.insert(args.begin(), "--json");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(first_err_line(waiter) == waiting_line(1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  Run r = waiter.finish(20s);
  KAI_CHECK_EXIT(r, 4);
  json j = json::parse(r.out);  // the whole of stdout is the one object
  CHECK(j.at("status") == "rejected");
  CHECK(j.at("exit_code") == 4);
}

TEST_CASE("run --wait names its id first, and wait on a run exits with the command's code", "[e2e][wait][run]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  Process waiter = repo.spawn_kai({"run", "--why", "t", "--wait", "--shell", "echo out-of-the-run; exit 3"});
  REQUIRE(first_err_line(waiter) == waiting_line(1));
  ::kill(waiter.pid(), SIGKILL);
  CHECK(waiter.finish(10s).killed_by(SIGKILL));
  Run pending = repo.kai({"--json", "wait", "1", "--timeout", "0"});
  KAI_CHECK_EXIT(pending, 8);
  CHECK(json_of(pending).at("ran") == false);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  Run r = repo.kai({"--json", "wait", "1"});
  KAI_CHECK_EXIT(r, 3);
  json j = json_of(r);
  CHECK(j.at("ran") == true);
  CHECK(j.at("exit_code") == 3);
  CHECK_THAT(j.at("stdout").get<std::string>(), Contains("out-of-the-run"));
  Run plain = repo.kai({"wait", "1"});
  KAI_CHECK_EXIT(plain, 3);
  CHECK_THAT(plain.out, Contains("out-of-the-run"));
}

TEST_CASE("a proposal repeated while it is pending returns its id and stages nothing new", "[e2e][wait][retry]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> a1 = edit("a.txt", "old", "new");
  a1.insert(a1.end(), {"--agent", "bot"});
  KAI_REQUIRE_EXIT(repo.kai(a1), 0);
  std::vector<std::string> j1 = a1;
  j1.insert(j1.begin(), "--json");
  Run again = repo.kai(j1);
  KAI_REQUIRE_EXIT(again, 0);
  CHECK(json_of(again).at("id") == 1);
  CHECK(json_of(again).at("existing") == true);
  CHECK_FALSE(repo.exists(".kaicoder/staging/2"));
  Run plain = repo.kai(a1);
  KAI_REQUIRE_EXIT(plain, 0);
  CHECK_THAT(plain.out, Contains("already waiting: proposal 1"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/2"));

  // Another agent, or other content, is another proposal.
  std::vector<std::string> other_agent = edit("a.txt", "old", "new");
  other_agent.insert(other_agent.end(), {"--agent", "other"});
  other_agent.insert(other_agent.begin(), "--json");
  Run b = repo.kai(other_agent);
  KAI_REQUIRE_EXIT(b, 0);
  CHECK(json_of(b).at("id") == 2);
  CHECK(json_of(b).at("existing") == false);
  std::vector<std::string> other_text = edit("a.txt", "old", "newer");
  other_text.insert(other_text.end(), {"--agent", "bot"});
  other_text.insert(other_text.begin(), "--json");
  Run c = repo.kai(other_text);
  KAI_REQUIRE_EXIT(c, 0);
  CHECK(json_of(c).at("id") == 3);
  // The file changed since: the retry is a new proposal, not a stale one.
  repo.write("a.txt", "old\nmore\n");
  Run changed = repo.kai(j1);
  KAI_REQUIRE_EXIT(changed, 0);
  CHECK(json_of(changed).at("id") == 4);
  CHECK(json_of(changed).at("existing") == false);
  repo.write("a.txt", "old\n");

  // Once it is decided, the same request is a new proposal.
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  Run after = repo.kai(j1);
  KAI_REQUIRE_EXIT(after, 0);
  CHECK(json_of(after).at("id") == 5);
  CHECK(json_of(after).at("existing") == false);
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("a command repeated while it is pending returns its id and stages nothing new", "[e2e][wait][retry][run]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  std::vector<std::string> cmd = {"--json", "run", "--why", "t", "--agent", "bot", "--", "touch", "made.txt"};
  Run first = repo.kai(cmd);
  KAI_REQUIRE_EXIT(first, 0);
  CHECK(json_of(first).at("proposal").at("id") == 1);
  CHECK(json_of(first).at("existing") == false);
  Run again = repo.kai(cmd);
  KAI_REQUIRE_EXIT(again, 0);
  CHECK(json_of(again).at("proposal").at("id") == 1);
  CHECK(json_of(again).at("existing") == true);
  CHECK_FALSE(repo.exists(".kaicoder/staging/2"));
  Run other = repo.kai({"--json", "run", "--why", "t", "--agent", "bot", "--", "touch", "other.txt"});
  KAI_REQUIRE_EXIT(other, 0);
  CHECK(json_of(other).at("proposal").at("id") == 2);
  CHECK_FALSE(repo.exists("made.txt"));
}
