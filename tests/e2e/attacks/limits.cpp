// Input limits ([limits] in kaicoder.toml): an agent that sends huge or
// negative values, floods the store with proposals, or stages a payload
// that would stall every later command. Each is refused before anything is
// staged, or handled without reading what it need not read.

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/checks.hpp"
#include "tests/support/mcp_calls.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

// The proposal folders in the store (next-id aside).
size_t staged(const TempRepo& repo) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(repo.abs(".kaicoder/staging"), ec)) n += e.is_directory();
  return n;
}

std::string changelog(const TempRepo& repo) {
  return repo.exists("KAI-CODER-CHANGELOG.md") ? repo.read("KAI-CODER-CHANGELOG.md") : "";
}

}  // namespace

TEST_CASE("a 5 MB why and other oversized fields are refused and nothing is staged", "[attack][limits]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const auto tree = repo.tree_snapshot();
  const std::string log_before = changelog(repo);

  // Through --json-input: an argument could not even carry 5 MB.
  json req = {{"path", "a.txt"}, {"target", "old"}, {"replacement", "new"}, {"why", std::string(5 << 20, 'w')}};
  Run big = repo.kai({"propose", "--json-input"}, req.dump());
  KAI_CHECK_EXIT(big, 2);
  CHECK_THAT(big.err, Contains("--why is 5242880 bytes; the limit is 4096 ([limits] why)"));
  CHECK_THAT(big.err, Contains("nothing was staged"));

  auto with = [](std::vector<std::string> args, std::vector<std::string> more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  Run why = repo.kai(edit("a.txt", "old", "new", std::string(4097, 'w')));
  KAI_CHECK_EXIT(why, 2);
  CHECK_THAT(why.err, Contains("[limits] why"));
  // 201 characters of summary (each two bytes: characters, not bytes, count).
  std::string summary;
  for (int i = 0; i < 201; ++i) summary += "\xC3\xA9";
  Run sum = repo.kai(with(edit("a.txt", "old", "new"), {"--summary", summary}));
  KAI_CHECK_EXIT(sum, 2);
  CHECK_THAT(sum.err, Contains("--summary is 201 characters; the limit is 200"));
  Run agent = repo.kai(with(edit("a.txt", "old", "new"), {"--agent", std::string(65, 'a')}));
  KAI_CHECK_EXIT(agent, 2);
  CHECK_THAT(agent.err, Contains("the agent name is 65 characters; the limit is 64"));
  Run env_agent = repo.kai(edit("a.txt", "old", "new"), "", {{"KAICODER_AGENT", std::string(100, 'b')}});
  KAI_CHECK_EXIT(env_agent, 2);
  CHECK_THAT(env_agent.err, Contains("[limits] agent"));
  Run name =
      repo.kai({"propose", "--path", std::string(256, 'n') + ".txt", "--content-file", "-", "--why", "w"}, "x\n");
  KAI_CHECK_EXIT(name, 2);
  CHECK_THAT(name.err, Contains("a name in --path is 260 bytes; the limit is 255 ([limits] path_component)"));
  std::string deep;
  while (deep.size() <= 4096) deep += "dir/";
  Run path = repo.kai({"propose", "--path", deep + "x.txt", "--content-file", "-", "--why", "w"}, "x\n");
  KAI_CHECK_EXIT(path, 2);
  CHECK_THAT(path.err, Contains("[limits] path)"));
  Run run = repo.kai({"run", "--why", std::string(5000, 'w'), "--", "true"});
  KAI_CHECK_EXIT(run, 2);
  CHECK_THAT(run.err, Contains("[limits] why"));
  Run run_agent = repo.kai({"run", "--why", "w", "--agent", std::string(65, 'a'), "--", "true"});
  KAI_CHECK_EXIT(run_agent, 2);

  CHECK(staged(repo) == 0);
  CHECK(repo.tree_snapshot() == tree);
  CHECK(changelog(repo) == log_before);
  // At the limit is fine.
  Run ok = repo.kai(with(edit("a.txt", "old", "new", std::string(4096, 'w')), {"--agent", std::string(64, 'a')}));
  KAI_CHECK_EXIT(ok, 0);
  CHECK(staged(repo) == 1);
}

TEST_CASE("negative and overflowing counts are usage errors", "[attack][limits]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  const auto tree = repo.tree_snapshot();
  for (std::vector<std::string> args : {std::vector<std::string>{"log", "-n", "-1"},
                                        {"log", "-n", "99999999999999999999"},
                                        {"log", "-n", "ten"},
                                        {"run", "--timeout", "-1", "--why", "w", "--", "true"},
                                        {"run", "--timeout", "0", "--why", "w", "--", "true"},
                                        {"run", "--timeout", "999999999999", "--why", "w", "--", "true"}}) {
    INFO(args[0] << " " << args[1] << " " << args[2]);
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("must be a whole number from"));
  }
  CHECK(staged(repo) == 1);
  CHECK(repo.tree_snapshot() == tree);
  KAI_CHECK_EXIT(repo.kai({"log", "-n", "0"}), 0);
}

TEST_CASE("a 2 GB content file is refused without being read", "[attack][limits]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const auto tree = repo.tree_snapshot();
  // Sparse: 2 GB long, nothing on disk. Reading it all would take long and
  // need 2 GB of memory; the case would then run into its time limit.
  for (const char* flag : {"--content-file", "--target-file"}) {
    { std::ofstream(repo.abs("big.bin")); }
    fs::resize_file(repo.abs("big.bin"), std::uintmax_t{2} << 30);
    INFO(flag);
    std::vector<std::string> args = {"propose", "--path", "a.txt", flag, "big.bin", "--why", "w"};
    if (std::string(flag) == "--target-file") args.insert(args.end(), {"--replacement", "x"});
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("is over the limit of 67108864 bytes ([limits] content)"));
    repo.remove("big.bin");
  }
  CHECK(staged(repo) == 0);
  CHECK(repo.tree_snapshot() == tree);
}

TEST_CASE("content over a configured limit is refused from a file, stdin or JSON", "[attack][limits]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", "[limits]\ncontent = 1024\n"}};
  repo.trust();
  const auto tree = repo.tree_snapshot();
  Run stdin_big = repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "w"}, std::string(1025, 'x'));
  KAI_CHECK_EXIT(stdin_big, 2);
  CHECK_THAT(stdin_big.err, Contains("over the limit of 1024 bytes"));
  json req = {{"path", "a.txt"}, {"target", "old"}, {"replacement", std::string(1025, 'r')}, {"why", "w"}};
  Run json_big = repo.kai({"propose", "--json-input"}, req.dump());
  KAI_CHECK_EXIT(json_big, 2);
  CHECK_THAT(json_big.err, Contains("--replacement is over the limit of 1024 bytes"));
  CHECK(staged(repo) == 0);
  CHECK(repo.tree_snapshot() == tree);
  KAI_CHECK_EXIT(repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "w"}, std::string(1024, 'x')),
                 0);
}

TEST_CASE("an agent with 100 pending proposals is refused the 101st", "[attack][limits]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  // The flood goes through one `kaicoder mcp` (the same propose path, one
  // process instead of a hundred): a hundred write_file calls as agent bot.
  std::vector<std::pair<std::string, json>> calls;
  for (int i = 1; i <= 100; ++i)
    calls.push_back({"write_file", {{"path", "f" + std::to_string(i) + ".txt"}, {"content", "x\n"}, {"why", "flood"}}});
  for (const json& reply : mcp_tool_calls(repo, "bot", calls)) {
    INFO(reply.dump());
    REQUIRE(reply.at("ok") == true);
    CHECK(reply.at("proposal").at("agent") == "bot");
  }
  const auto tree = repo.tree_snapshot();
  const std::string log_before = changelog(repo);
  Run r = repo.kai({"propose", "--path", "f101.txt", "--content-file", "-", "--why", "flood", "--agent", "bot"}, "x\n");
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("agent 'bot' already has 100 proposals waiting for a decision ([limits] pending is 100)"));
  CHECK_THAT(r.err, Contains("wait until the person decides some"));
  Run run = repo.kai({"run", "--why", "flood", "--agent", "bot", "--", "true"});
  KAI_CHECK_EXIT(run, 3);
  CHECK_THAT(run.err, Contains("[limits] pending"));
  CHECK(staged(repo) == 100);
  CHECK(repo.tree_snapshot() == tree);
  CHECK(changelog(repo) == log_before);
  // Another proposer is not held up, and a decision makes room again.
  KAI_CHECK_EXIT(
      repo.kai({"propose", "--path", "g.txt", "--content-file", "-", "--why", "w", "--agent", "other"}, "x\n"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  KAI_CHECK_EXIT(
      repo.kai({"propose", "--path", "f101.txt", "--content-file", "-", "--why", "flood", "--agent", "bot"}, "x\n"), 0);
}

TEST_CASE("proposals that expire together are one timeout entry and one notify event", "[attack][limits]") {
  TempRepo repo{
      {"a.txt", "old\n"},
      {"kaicoder.toml", "[approval]\ntimeout = 300\n[hooks]\nnotify = 'cat >> events.jsonl; echo >> events.jsonl'\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "mine")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);  // the person's own history
  for (int i = 0; i < 12; ++i)
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "f" + std::to_string(i) + ".txt", "--content-file", "-", "--why",
                               "flood", "--agent", "bot"},
                              "x\n"),
                     0);
  // One payload is a FIFO: a sweep that opened payloads would block on it.
  repo.remove(".kaicoder/staging/5/content");
  REQUIRE(::mkfifo(repo.abs(".kaicoder/staging/5/content").c_str(), 0600) == 0);
  // All twelve grow old at once: their records say so, sealed as kaicoder
  // would (time passing, without a wait that a slow machine could stretch).
  for (int id = 2; id <= 13; ++id) {
    json meta = json::parse(repo.read(".kaicoder/staging/" + std::to_string(id) + "/meta.json"));
    meta["created"] = "2020-01-01T00:00:00Z";
    write_sealed_record(repo, id, meta);
  }

  Run late = repo.kai_tty({"approve", "2"}, "y");
  KAI_CHECK_EXIT(late, 5);
  json entries = log_entries(repo);
  std::vector<json> timeouts;
  for (const auto& e : entries)
    if (e.at("kind") == "timeout") timeouts.push_back(e);
  REQUIRE(timeouts.size() == 1);
  CHECK(timeouts[0].at("summary") == "12 proposals expired: 2-13");
  CHECK(timeouts[0].at("result") == "timeout: not decided within 300 s");
  CHECK(timeouts[0].at("files").size() == 12);
  CHECK(timeouts[0].at("action") == "write_file");
  // The person's own entry is still in the live changelog, right below.
  REQUIRE(entries.size() == 2);
  CHECK(entries[1].at("kind") == "edit");
  for (int id = 2; id <= 13; ++id) CHECK(show_json(repo, id == 5 ? 4 : id).at("status") == "timeout");

  int timeout_events = 0;
  std::istringstream lines(repo.read("events.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    json e = json::parse(line);
    if (e.at("event") != "timeout") continue;
    ++timeout_events;
    CHECK(e.at("ids") == json({2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}));
  }
  CHECK(timeout_events == 1);
}

TEST_CASE("list never opens a staged payload", "[attack][limits]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "big.txt", "--content-file", "-", "--why", "w"}, "x\n"), 0);
  // A payload that never ends: opening it for reading blocks until the
  // case's time limit kills the command.
  repo.remove(".kaicoder/staging/1/content");
  REQUIRE(::mkfifo(repo.abs(".kaicoder/staging/1/content").c_str(), 0600) == 0);
  Run list = repo.kai({"list"}, "", {}, std::chrono::seconds(10));
  KAI_CHECK_EXIT(list, 0);
  CHECK_THAT(list.out, Contains("big.txt"));
  Run json_list = repo.kai({"--json", "list"}, "", {}, std::chrono::seconds(10));
  KAI_CHECK_EXIT(json_list, 0);
  CHECK(json_of(json_list).at("proposals").size() == 1);
  // A payload that is gone is still noticed.
  repo.remove(".kaicoder/staging/1/content");
  Run gone = repo.kai({"list"});
  KAI_CHECK_EXIT(gone, 0);
  CHECK_THAT(gone.out, Contains("missing its 'content' payload"));
}
