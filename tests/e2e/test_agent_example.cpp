// examples/agent.sh, the worked example of an agent harness, run against a
// real tree while the test plays the person who decides on a terminal: so
// the example in the README is known to work.

#include <thread>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

const std::string k_script = std::string(KAICODER_SOURCE_DIR) + "/examples/agent.sh";

Process start_agent(const TempRepo& repo, const std::string& file = "greeting.txt") {
  return repo.spawn({"bash", k_script, file}, "", {{"KAICODER", kaicoder_bin()}});
}

// The next pending proposal after `after`, once the agent has staged it.
int next_pending(const TempRepo& repo, int after) {
  Run r;
  for (int i = 0; i < 1200; ++i) {
    r = repo.kai({"--json", "list", "--status", "pending"});
    if (r.ok()) {
      const json listed = json_of(r);
      for (const auto& p : listed.at("proposals"))
        if (p.at("id").get<int>() > after) return p.at("id");
    }
    std::this_thread::sleep_for(25ms);
  }
  FAIL("the agent staged no proposal after " << after << "; list says " << r.all());
  return 0;
}

// Approve `id` at the terminal, typing CONFIRM when its tier asks for it.
void approve_as_asked(const TempRepo& repo, int id) {
  const bool confirm = show_json(repo, id).at("tier") == "confirm";
  KAI_CHECK_EXIT(repo.kai_tty({"approve", std::to_string(id)}, confirm ? "CONFIRM" : "y"), 0);
}

}  // namespace

TEST_CASE("the example agent edits, writes and runs through kaicoder while a person decides", "[e2e][agent]") {
  TempRepo repo{{"greeting.txt", "greeting = hello\n"}};
  repo.init();
  Process agent = start_agent(repo);

  const int edit_id = next_pending(repo, 0);
  CHECK(show_json(repo, edit_id).at("agent") == "example-agent");
  approve_as_asked(repo, edit_id);
  const int write_id = next_pending(repo, edit_id);
  CHECK(show_json(repo, write_id).at("path") == "NOTES.md");
  KAI_CHECK_EXIT(repo.kai_tty({"reject", std::to_string(write_id), "--reason", "no notes please"}, "y"), 0);
  const int run_id = next_pending(repo, write_id);
  CHECK(show_json(repo, run_id).at("kind") == "run");
  approve_as_asked(repo, run_id);

  Run r = agent.finish(60s);
  KAI_CHECK_EXIT(r, 0);
  const std::string rid = show_json(repo, edit_id).at("rollback_id");
  CHECK_THAT(r.out, Contains("agent: read greeting.txt"));
  CHECK_THAT(r.out, Contains("agent: applied: rollback id " + rid));
  CHECK_THAT(r.out, Contains("rejected by a person: no notes please"));
  CHECK_THAT(r.out, Contains("the command ran and exited 0; it printed: greeting = hello, world"));
  CHECK_THAT(r.out, Contains("agent: done"));
  CHECK(repo.read("greeting.txt") == "greeting = hello, world\n");
  CHECK_FALSE(repo.exists("NOTES.md"));
}

TEST_CASE("the example agent reads again and re-proposes after a conflict", "[e2e][agent]") {
  TempRepo repo{{"greeting.txt", "greeting = hello\n"}};
  repo.init();
  Process agent = start_agent(repo);
  const int edit_id = next_pending(repo, 0);
  // Approved, then the file changes before it is applied: its target is no
  // longer unique, so the apply fails and the waiting agent hears 6.
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", std::to_string(edit_id), "--no-apply"}, "y"), 0);
  repo.write("greeting.txt", "greeting = hello\nhello again\n");
  KAI_CHECK_EXIT(repo.kai({"apply", std::to_string(edit_id)}), 6);
  // The second attempt is refused at once for the same reason; the agent moves on.
  const int write_id = next_pending(repo, edit_id);
  CHECK(show_json(repo, write_id).at("path") == "NOTES.md");
  approve_as_asked(repo, write_id);
  approve_as_asked(repo, next_pending(repo, write_id));
  Run r = agent.finish(60s);
  KAI_CHECK_EXIT(r, 0);
  size_t conflicts = 0;
  for (size_t at = r.out.find("conflict:"); at != std::string::npos; at = r.out.find("conflict:", at + 1)) ++conflicts;
  CHECK(conflicts == 2);
  CHECK(repo.read("greeting.txt") == "greeting = hello\nhello again\n");
  CHECK(repo.read("NOTES.md").find("whole world") != std::string::npos);
}

TEST_CASE("the example agent gives up on proposals nobody decides in time", "[e2e][agent]") {
  TempRepo repo{{"greeting.txt", "greeting = hello\n"}, {"kaicoder.toml", "[approval]\ntimeout = 1\n"}};
  repo.trust();
  Run r = start_agent(repo).finish(60s);
  KAI_CHECK_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("nobody decided before the timeout"));
  CHECK(repo.read("greeting.txt") == "greeting = hello\n");
}

TEST_CASE("the example agent stops when a read is refused", "[e2e][agent]") {
  TempRepo repo{{"greeting.txt", "greeting = hello\n"}, {".env", "TOKEN=hello\n"}};
  repo.init();
  Run r = start_agent(repo, ".env").finish(60s);
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.out, Contains("cannot read .env (exit 3)"));
  CHECK_THAT(r.out, !Contains("TOKEN=hello"));
}

TEST_CASE("the example agent escapes every control character it puts into JSON", "[e2e][agent]") {
  TempRepo repo;
  // Every byte from 1 to 31, DEL, a quote, a backslash and some UTF-8: the
  // text a model may hand back. NUL cannot reach a bash variable at all.
  std::string text;
  for (int c = 1; c < 32; ++c) text += static_cast<char>(c);
  text += "\x7f\"\\ caf\xc3\xa9 \xe2\x80\xae";
  repo.write("model-output.bin", text);
  Run r =
      repo.spawn(
              {"bash", "-c",
               "source <(sed -n '/^json_string()/,/^}/p' \"$1\") && json_string \"$(cat model-output.bin; printf .)\"",
               "bash", k_script})
          .finish();
  KAI_REQUIRE_EXIT(r, 0);
  for (char c : r.out) CHECK(static_cast<unsigned char>(c) >= 0x20);
  CHECK(r.out.find('\x7f') == std::string::npos);
  CHECK(json::parse(r.out).get<std::string>() == text + ".");
}
