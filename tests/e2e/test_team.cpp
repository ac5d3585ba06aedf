// Team mode (kaicoder-team(7)) end to end: a bare repository as the team
// remote, the agent's clone that proposes and publishes, the person's clone
// that fetches, reviews and decides at a terminal with an SSH key made here,
// and the agent's clone applying only what was signed. Attacks on the
// decisions and the remote are in attacks/team.cpp.

#include <chrono>
#include <csignal>
#include <map>
#include <thread>
#include <unistd.h>

#include "tests/support/mcp_calls.hpp"
#include "tests/support/team.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

// The newest changelog entry of `repo`.
json newest_entry(const TempRepo& repo) {
  json e = log_entries(repo);
  REQUIRE(!e.empty());
  return e[0];
}

}  // namespace

TEST_CASE("a team proposal travels: publish, fetch, show, approve at a terminal, and wait applies it", "[e2e][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  CHECK(pub.ref == "refs/kaicoder/proposals/" + pub.origin + "/" + std::to_string(pub.id));
  CHECK(pub.origin.size() == 12);
  CHECK(pub.base == git_ok(t.agent, {"rev-parse", "HEAD"}));
  // The remote holds the proposal commit: its parent is the base, its tree the result.
  CHECK(git_ok(t.agent, {"ls-remote", "origin", pub.ref}).starts_with(pub.commit));
  CHECK(git_ok(t.agent, {"rev-parse", pub.commit + "^"}) == pub.base);
  CHECK(git_ok(t.agent, {"show", pub.commit + ":a.txt"}) == "beta");
  const std::string message = git_ok(t.agent, {"log", "-1", "--format=%B", pub.commit});
  CHECK_THAT(message, Contains("Kaicoder-Proposal: " + pub.origin + "/1"));
  CHECK_THAT(message, Contains("Kaicoder-Kind: edit"));
  CHECK_THAT(message, Contains("Kaicoder-Why: team change"));
  // Nothing is written in the agent's tree before a decision.
  CHECK(t.agent.read("a.txt") == "alpha\n");

  const int id = t.fetch_one();
  Run list = t.person.kai({"list"});
  KAI_CHECK_EXIT(list, 0);
  CHECK_THAT(list.out, Contains("[team " + pub.origin + "/1]"));
  Run shown = t.person.kai({"--json", "show", std::to_string(id)});
  KAI_REQUIRE_EXIT(shown, 0);
  json s = json_of(shown);
  CHECK(s.at("proposal").at("team").at("origin") == pub.origin);
  CHECK(s.at("proposal").at("team").at("commit") == pub.commit);
  CHECK(s.at("proposal").at("team").at("role") == "remote");
  CHECK_THAT(s.at("diff").get<std::string>(), Contains("-alpha") && Contains("+beta"));
  // The person's tree is untouched by a fetch.
  CHECK(t.person.read("a.txt") == "alpha\n");
  // No terminal, no decision.
  KAI_CHECK_EXIT(t.person.kai({"approve", std::to_string(id)}), 3);

  Run ok = t.person.kai_tty({"approve", std::to_string(id)}, "y");
  KAI_REQUIRE_EXIT(ok, 0);
  CHECK(ok.prompted);
  CHECK_THAT(ok.all(), Contains("signed by person@example.com"));
  CHECK_THAT(ok.tty, !Contains("lways"));      // "always allow" is never offered for a team proposal
  CHECK(t.person.read("a.txt") == "alpha\n");  // decided here, applied there
  const std::string decision_ref = "refs/kaicoder/decisions/" + pub.origin + "/1";
  const std::string decision = git_ok(t.person, {"ls-remote", "origin", decision_ref}).substr(0, 40);
  CHECK(git_ok(t.person, {"rev-parse", decision + "^"}) == pub.commit);
  CHECK_THAT(t.decision_file(decision, "decision.toml"), Contains("decision = \"approve\""));
  // Decided once.
  KAI_CHECK_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 6);

  Run waited = t.agent.kai({"--json", "wait", "1", "--timeout", "60"});
  KAI_REQUIRE_EXIT(waited, 0);
  json w = json_of(waited);
  CHECK(w.at("proposal").at("status") == "applied");
  CHECK(w.at("team_decision").at("signer") == "person@example.com");
  CHECK(t.agent.read("a.txt") == "beta\n");
  json e = newest_entry(t.agent);
  CHECK(e.at("approver") == "person@example.com (team)");
  CHECK_THAT(e.at("result").get<std::string>(), Contains(pub.commit) && Contains(decision));
  // The branch moved to the proposal commit: history holds exactly the approved commit.
  CHECK(git_ok(t.agent, {"rev-parse", "HEAD"}) == pub.commit);
  CHECK(git_ok(t.agent, {"status", "--porcelain"}).empty());
  // Waiting again reports the outcome.
  KAI_CHECK_EXIT(t.agent.kai({"wait", "1"}), 0);
}

TEST_CASE("a team rejection is a signed decision too: the proposing clone rejects and writes nothing", "[e2e][team]") {
  TeamRepos t;
  t.publish({"propose", "--path", "b.txt", "--content-file", "-", "--why", "replace bravo"}, "BRAVO\n");
  const int id = t.fetch_one();
  Run no = t.person.kai_tty({"reject", std::to_string(id), "--reason", "not like this"}, "y");
  KAI_REQUIRE_EXIT(no, 0);
  Run waited = t.agent.kai({"wait", "1", "--timeout", "60"});
  KAI_CHECK_EXIT(waited, 4);
  CHECK(t.agent.read("b.txt") == "bravo\n");
  json e = newest_entry(t.agent);
  CHECK(e.at("kind") == "rejected");
  CHECK(e.at("approver") == "person@example.com (team)");
  CHECK_THAT(e.at("result").get<std::string>(), Contains("not like this"));
  // The person's record says so too.
  Run shown = t.person.kai({"--json", "show", std::to_string(id)});
  CHECK(json_of(shown).at("proposal").at("status") == "rejected");
}

TEST_CASE("every file kind is published: write, delete and a changeset", "[e2e][team]") {
  TeamRepos t;
  t.publish({"propose", "--path", "new.txt", "--content-file", "-", "--why", "new file"}, "new\n");
  t.publish({"propose", "--path", "b.txt", "--delete", "--why", "drop bravo"});
  const std::string patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-alpha\n+ALPHA\n--- a/certified/c.txt\n+++ b/certified/c.txt\n"
      "@@ -1 +1 @@\n-charlie\n+CHARLIE\n";
  t.agent.write("p.diff", patch);
  t.publish({"propose", "--patch", "p.diff", "--why", "two files"});
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  CHECK(json_of(fetched).at("added").size() == 3);
  for (int id = 1; id <= 3; ++id) KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 0);
  for (int id = 1; id <= 3; ++id) KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(id), "--timeout", "60"}), 0);
  CHECK(t.agent.read("a.txt") == "ALPHA\n");
  CHECK(t.agent.read("certified/c.txt") == "CHARLIE\n");
  CHECK(!t.agent.exists("b.txt"));
  CHECK(t.agent.exists("new.txt"));
  // The first one moved the branch; the others were made on the old base.
  CHECK_THAT(git_ok(t.agent, {"log", "-1", "--format=%B"}), Contains("Kaicoder-Kind: write"));
}

TEST_CASE("publish refuses a run, uncommitted files, and works only with [team]", "[e2e][team]") {
  TeamRepos t;
  Run run = t.agent.kai({"run", "--why", "w", "--", "true"});
  KAI_REQUIRE_EXIT(run, 0);
  Run r = t.agent.kai({"publish", "1"});
  KAI_CHECK_EXIT(r, 2);
  CHECK_THAT(r.err, Contains("never published"));

  t.agent.write("a.txt", "alpha\nlocal\n");
  KAI_REQUIRE_EXIT(t.agent.kai(edit("a.txt", "local", "LOCAL")), 0);
  Run dirty = t.agent.kai({"publish", "2"});
  KAI_CHECK_EXIT(dirty, 6);
  CHECK_THAT(dirty.err, Contains("commit first"));
  CHECK(git_ok(t.agent, {"ls-remote", "origin", "refs/kaicoder/*"}).empty());

  TempRepo solo{{"a.txt", "alpha\n"}};
  solo.init();
  KAI_REQUIRE_EXIT(solo.kai(edit("a.txt", "alpha", "beta")), 0);
  Run off = solo.kai({"publish", "1"});
  KAI_CHECK_EXIT(off, 2);
  CHECK_THAT(off.err, Contains("[team] remote"));
  KAI_CHECK_EXIT(solo.kai({"fetch"}), 2);
}

TEST_CASE("a base that moved is refused where the proposal was made", "[e2e][team]") {
  TeamRepos t;
  t.publish({"propose", "--path", "b.txt", "--content-file", "-", "--why", "replace bravo"}, "BRAVO\n");
  // Meanwhile the file changes on the agent's side.
  t.agent.write("b.txt", "bravo, edited by hand\n");
  git_ok(t.agent, {"commit", "-q", "-am", "by hand"});
  const int id = t.fetch_one();
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 0);
  Run waited = t.agent.kai({"wait", "1", "--timeout", "60"});
  KAI_CHECK_EXIT(waited, 6);
  CHECK(t.agent.read("b.txt") == "bravo, edited by hand\n");
  CHECK(newest_entry(t.agent).at("kind") == "failed");
}

TEST_CASE("verify in a third clone accepts a team-approved change to a certified path and refuses an unapproved one",
          "[e2e][team][verify]") {
  TeamRepos t;
  const std::string base = git_ok(t.agent, {"rev-parse", "HEAD"});
  t.publish_edit("certified/c.txt", "charlie", "CHARLIE");
  const int id = t.fetch_one();
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 0);
  KAI_REQUIRE_EXIT(t.agent.kai({"wait", "1", "--timeout", "60"}), 0);
  git_ok(t.agent, {"push", "-q", "origin", "main"});

  // CI: a fresh clone with the decisions fetched; never initialised by kaicoder.
  TempRepo ci;
  git_ok(ci, {"remote", "add", "origin", t.remote.string()});
  git_ok(ci, {"fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main",
              "+refs/kaicoder/decisions/*:refs/kaicoder/decisions/*"});
  git_ok(ci, {"reset", "-q", "--hard", "origin/main"});
  Run ok = ci.kai({"--json", "verify", "--base", base});
  KAI_CHECK_EXIT(ok, 0);
  json j = json_of(ok);
  REQUIRE(j.at("changes").size() == 1);
  CHECK(j.at("changes")[0].at("covered") == true);
  CHECK(j.at("changes")[0].at("signer") == "person@example.com");

  // A change nobody signed: refused.
  ci.write("certified/c.txt", "changed in CI\n");
  git_ok(ci, {"commit", "-q", "-am", "unsigned"});
  Run bad = ci.kai({"--json", "verify", "--base", base});
  KAI_CHECK_EXIT(bad, 6);
  CHECK(json_of(bad).at("uncovered") == 1);

  // Without the decisions the approved change is not covered either.
  TempRepo bare_ci;
  git_ok(bare_ci, {"remote", "add", "origin", t.remote.string()});
  git_ok(bare_ci, {"fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main"});
  git_ok(bare_ci, {"reset", "-q", "--hard", "origin/main"});
  KAI_CHECK_EXIT(bare_ci.kai({"verify", "--base", base}), 6);
}

TEST_CASE("an unreachable remote is said, and local work goes on", "[e2e][team]") {
  TeamRepos t;
  t.use_url((t.agent.home().parent_path() / "nowhere.git").string());
  Run r = t.agent.kai(
      {"propose", "--path", "a.txt", "--target", "alpha", "--replacement", "beta", "--why", "w", "--publish"});
  KAI_CHECK_EXIT(r, 1);
  CHECK_THAT(r.err, Contains("cannot push to the team remote 'origin'"));
  // Staged and published here; the push is what failed.
  Run shown = t.agent.kai({"--json", "show", "1"});
  KAI_REQUIRE_EXIT(shown, 0);
  CHECK(json_of(shown).at("proposal").at("team").at("pushed") == false);
  Run w = t.agent.kai({"wait", "1", "--timeout", "1"});
  KAI_CHECK_EXIT(w, 8);
  CHECK_THAT(w.err, Contains("could not be asked"));
  // A person at this clone's terminal still decides it.
  KAI_CHECK_EXIT(t.agent.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
  Run f = t.person.kai({"fetch"});
  KAI_CHECK_EXIT(f, 1);
  CHECK_THAT(f.err, Contains("team remote"));
  Run pruning = t.person.kai({"fetch", "--prune"});
  KAI_CHECK_EXIT(pruning, 1);
  CHECK_THAT(pruning.err, Contains("cannot read the team remote 'origin'"));
  KAI_CHECK_EXIT(t.person.kai({"list"}), 0);
  // Once it is back, publish pushes what is there (a decided proposal is not published again).
  t.use_url(t.remote.string());
  KAI_CHECK_EXIT(t.agent.kai({"publish", "1"}), 6);
}

TEST_CASE("a decision made while the remote is unreachable is kept, and pushed once it is back", "[e2e][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const int id = t.fetch_one();
  t.use_url((t.person.home().parent_path() / "nowhere.git").string());
  Run ok = t.person.kai_tty({"approve", std::to_string(id)}, "y");
  KAI_CHECK_EXIT(ok, 1);
  CHECK_THAT(ok.all(), Contains("signed by person@example.com") && Contains("cannot push to the team remote 'origin'"));
  Run shown = t.person.kai({"show", std::to_string(id)});
  KAI_CHECK_EXIT(shown, 0);
  CHECK_THAT(shown.out, Contains("not pushed yet: kaicoder publish " + std::to_string(id)));
  // The agent's wait meanwhile finds nothing on the remote.
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "1"}), 8);
  // Back: the next fetch pushes it, and the agent's wait applies it.
  t.use_url(t.remote.string());
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  CHECK(json_of(fetched).at("pushed") == json::array({id}));
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "60"}), 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
}

TEST_CASE("fetch --prune drops the refs of rejected and expired proposals past [team] keep, never an applied one",
          "[e2e][team]") {
  TeamRepos t;
  // Long enough for propose --publish to push before it expires on a busy
  // machine; the prune below waits out the rest.
  constexpr auto k_expiry = std::chrono::seconds(4);
  t.agent.write("../home/.config/kaicoder/config.toml", "[approval]\ntimeout = 4\n");
  const auto proposed = std::chrono::steady_clock::now();
  const Published expiring = t.publish_edit("b.txt", "bravo", "BRAVO");
  t.agent.write("../home/.config/kaicoder/config.toml", "");
  const Published rejected = t.publish_edit("a.txt", "alpha", "beta");
  const Published applied = t.publish_edit("certified/c.txt", "charlie", "CHARLIE");
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  REQUIRE(json_of(fetched).at("added").size() == 3);
  // Local ids follow the remote ids here: 1, 2, 3.
  KAI_REQUIRE_EXIT(t.person.kai_tty({"reject", "2"}, "y"), 0);
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", "3"}, "y"), 0);
  KAI_REQUIRE_EXIT(t.agent.kai({"wait", "3", "--timeout", "60"}), 0);
  git_ok(t.agent, {"push", "-q", "origin", "main"});
  git_ok(t.person, {"pull", "-q", "--ff-only", "origin", "main"});

  // With the default keep (14 days) nothing goes.
  Run kept = t.person.kai({"--json", "fetch", "--prune"});
  KAI_REQUIRE_EXIT(kept, 0);
  CHECK(json_of(kept).at("pruned").empty());

  t.person.write("../home/.config/kaicoder/config.toml", "[team]\nkeep = 0\n");
  std::this_thread::sleep_until(proposed + k_expiry + std::chrono::milliseconds(1100));
  Run pruned = t.person.kai({"--json", "fetch", "--prune"});
  KAI_REQUIRE_EXIT(pruned, 0);
  const std::string left = git_ok(t.person, {"ls-remote", "origin", "refs/kaicoder/*"});
  CHECK_THAT(left, !Contains(expiring.ref));
  CHECK_THAT(left, !Contains(rejected.ref));
  CHECK_THAT(left, !Contains("decisions/" + rejected.origin + "/2"));
  CHECK_THAT(left, Contains(applied.ref));
  CHECK_THAT(left, Contains("decisions/" + applied.origin + "/3"));
  const json p = json_of(pruned).at("pruned");
  CHECK(p.size() >= 3);
  // Here too: the person's refs of what was pruned are gone, the applied one's decision stays.
  const std::string here = git_ok(t.person, {"for-each-ref", "--format=%(refname)", "refs/kaicoder/"});
  CHECK_THAT(here, !Contains("proposals/" + expiring.origin + "/1") && !Contains("/" + rejected.origin + "/2"));
  CHECK_THAT(here, Contains("decisions/" + applied.origin + "/3"));
  // And verify still finds what it needs.
  KAI_CHECK_EXIT(t.person.kai({"verify", "--base", applied.base}), 0);
}

TEST_CASE("team mode over a real transport: git daemon on 127.0.0.1", "[e2e][team]") {
  // A bare repository served by git daemon with pushes enabled.
  TeamRepos t;
  const fs::path top = t.remote.parent_path();
  Process daemon;
  int port = 0;
  for (int attempt = 0; attempt < 5 && port == 0; ++attempt) {
    const int candidate = 20000 + static_cast<int>((::getpid() * 7919 + attempt * 104729) % 30000);
    daemon =
        t.agent.spawn({"git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1",
                       "--port=" + std::to_string(candidate), "--base-path=" + top.string(), top.string()});
    // Ready when it answers.
    for (int i = 0; i < 50; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (daemon.done()) break;
      Run probe =
          t.agent.spawn({"git", "ls-remote", "git://127.0.0.1:" + std::to_string(candidate) + "/remote.git"}).finish();
      if (probe.ok()) {
        port = candidate;
        break;
      }
    }
  }
  if (port == 0) {
    WARN("git daemon could not serve on 127.0.0.1: the real-transport case is skipped");
    return;
  }
  t.use_url("git://127.0.0.1:" + std::to_string(port) + "/remote.git");
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const int id = t.fetch_one();
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 0);
  Run waited = t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "60"});
  KAI_CHECK_EXIT(waited, 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
  ::kill(-daemon.pid(), SIGTERM);
  (void)daemon.finish(10s);
}

namespace {

// The local id the person's clone gave each remote proposal, by its id in the agent's clone.
std::map<int, int> local_ids(const TempRepo& person, const json& added) {
  std::map<int, int> out;
  for (const auto& id : added) {
    Run shown = person.kai({"--json", "show", std::to_string(id.get<int>())});
    KAI_REQUIRE_EXIT(shown, 0);
    out[json_of(shown).at("proposal").at("team").at("remote_id").get<int>()] = id.get<int>();
  }
  return out;
}

}  // namespace

TEST_CASE("the MCP tools publish with 'publish', and the MCP wait applies only what a person signed",
          "[e2e][team][mcp]") {
  TeamRepos t;
  const std::string base = git_ok(t.agent, {"rev-parse", "HEAD"});
  const std::string patch = "--- a/certified/c.txt\n+++ b/certified/c.txt\n@@ -1 +1 @@\n-charlie\n+CHARLIE\n";
  const auto staged = mcp_tool_calls(
      t.agent, "bot",
      {{"propose_edit",
        {{"path", "a.txt"}, {"old_text", "alpha"}, {"new_text", "beta"}, {"why", "team edit"}, {"publish", true}}},
       {"write_file", {{"path", "new.txt"}, {"content", "new\n"}, {"why", "team write"}, {"publish", true}}},
       {"delete_file", {{"path", "b.txt"}, {"why", "team delete"}, {"publish", true}}},
       {"propose_patch", {{"patch", patch}, {"why", "team patch"}, {"publish", true}}}});
  std::map<std::string, int> id;  // tool → proposal id in the agent's clone
  const char* tools[] = {"edit", "write", "delete", "patch"};
  for (size_t i = 0; i < staged.size(); ++i) {
    INFO(staged[i].dump());
    REQUIRE(staged[i].at("ok") == true);
    const json& pub = staged[i].at("published");
    const int n = staged[i].at("proposal").at("id").get<int>();
    id[tools[i]] = n;
    CHECK(pub.at("ref") == "refs/kaicoder/proposals/" + pub.at("origin").get<std::string>() + "/" + std::to_string(n));
    CHECK(pub.at("base") == base);
    CHECK(staged[i].at("proposal").at("team").at("pushed") == true);
    CHECK_THAT(staged[i].at("next").get<std::string>(), Contains("wait_for_decision"));
    // On the remote: a commit on the base.
    const std::string commit = pub.at("commit");
    CHECK(git_ok(t.agent, {"ls-remote", "origin", pub.at("ref")}).starts_with(commit));
    CHECK(git_ok(t.agent, {"rev-parse", commit + "^"}) == base);
  }
  CHECK_THAT(git_ok(t.agent, {"log", "-1", "--format=%B", staged[3].at("published").at("commit")}),
             Contains("Kaicoder-Kind: changeset"));
  CHECK(t.agent.read("a.txt") == "alpha\n");  // nothing written before a decision

  // Nobody has decided: the wait says so, and that the remote was asked.
  auto early = mcp_tool_calls(t.agent, "bot", {{"wait_for_decision", {{"id", id["edit"]}, {"timeout_s", 1}}}});
  CHECK(early[0].at("ok") == true);
  CHECK(early[0].at("decided") == false);
  CHECK(!early[0].contains("remote_note"));
  CHECK_THAT(early[0].at("next").get<std::string>(), Contains("team remote"));

  // The person fetches, approves the edit and the patch, rejects the write;
  // a decision on the delete is forged with a key the base does not allow.
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  const auto local = local_ids(t.person, json_of(fetched).at("added"));
  REQUIRE(local.size() == 4);
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(local.at(id["edit"]))}, "y"), 0);
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(local.at(id["patch"]))}, "y"), 0);
  KAI_REQUIRE_EXIT(t.person.kai_tty({"reject", std::to_string(local.at(id["write"])), "--reason", "not now"}, "y"), 0);
  const json& del = staged[2].at("published");
  Published del_pub{id["delete"], del.at("commit"), del.at("base"), del.at("origin"), del.at("ref")};
  t.forge(TeamRepos::decision_text(del_pub), t.stranger_key(), del_pub.commit,
          "refs/kaicoder/decisions/" + del_pub.origin + "/" + std::to_string(del_pub.id));

  // The agent's MCP waits, side by side in one server.
  const auto waited = mcp_tool_calls(t.agent, "bot",
                                     {{"wait_for_decision", {{"id", id["edit"]}, {"timeout_s", 60}}},
                                      {"wait_for_decision", {{"id", id["write"]}, {"timeout_s", 60}}},
                                      {"wait_for_decision", {{"id", id["delete"]}, {"timeout_s", 60}}},
                                      {"wait_for_decision", {{"id", id["patch"]}, {"timeout_s", 60}}}});
  INFO(waited[0].dump() << "\n" << waited[1].dump() << "\n" << waited[2].dump() << "\n" << waited[3].dump());
  CHECK(waited[0].at("ok") == true);
  CHECK(waited[0].at("proposal").at("status") == "applied");
  CHECK(waited[0].at("team_decision").at("signer") == "person@example.com");
  CHECK(waited[0].contains("rollback_id"));
  CHECK(waited[3].at("proposal").at("status") == "applied");
  CHECK(waited[1].at("ok") == false);
  CHECK(waited[1].at("error").at("kind") == "rejected");
  CHECK(waited[2].at("ok") == false);
  CHECK(waited[2].at("error").at("code") == 3);
  CHECK(t.agent.read("a.txt") == "beta\n");
  CHECK(t.agent.read("certified/c.txt") == "CHARLIE\n");
  CHECK(!t.agent.exists("new.txt"));
  CHECK(t.agent.exists("b.txt"));
  Run shown = t.agent.kai({"--json", "show", std::to_string(id["delete"])});
  CHECK(json_of(shown).at("proposal").at("status") == "pending");
  // The changelog names the signer, the proposal commit and the decision.
  bool edit_logged = false;
  for (const auto& e : log_entries(t.agent))
    if (e.value("why", "") == "team edit") {
      edit_logged = true;
      CHECK(e.at("approver") == "person@example.com (team)");
      CHECK_THAT(e.at("result").get<std::string>(),
                 Contains(staged[0].at("published").at("commit").get<std::string>()));
    }
  CHECK(edit_logged);
}

TEST_CASE(
    "MCP publish: an unreachable remote, uncommitted files and no [team] are said, and the proposal stays "
    "staged",
    "[e2e][team][mcp]") {
  TeamRepos t;
  t.use_url((t.agent.home().parent_path() / "nowhere.git").string());
  auto r = mcp_tool_calls(
      t.agent, "bot",
      {{"propose_edit",
        {{"path", "a.txt"}, {"old_text", "alpha"}, {"new_text", "beta"}, {"why", "w"}, {"publish", true}}}});
  INFO(r[0].dump());
  CHECK(r[0].at("ok") == false);
  CHECK(r[0].at("error").at("code") == 1);
  CHECK_THAT(r[0].at("error").at("message").get<std::string>(), Contains("cannot push to the team remote 'origin'"));
  CHECK(r[0].at("proposal").at("id") == 1);
  CHECK(r[0].at("proposal").at("status") == "pending");
  CHECK(r[0].at("proposal").at("team").at("pushed") == false);
  CHECK_THAT(r[0].at("next").get<std::string>(), Contains("kaicoder publish 1"));
  // The wait goes on without the remote, and says why it could not ask.
  auto w = mcp_tool_calls(t.agent, "bot", {{"wait_for_decision", {{"id", 1}, {"timeout_s", 1}}}});
  CHECK(w[0].at("ok") == true);
  CHECK(w[0].at("decided") == false);
  CHECK_THAT(w[0].at("remote_note").get<std::string>(), Contains("team remote"));
  // Local work goes on: a person at this terminal decides it, and the wait reports it.
  KAI_REQUIRE_EXIT(t.agent.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
  w = mcp_tool_calls(t.agent, "bot", {{"wait_for_decision", {{"id", 1}, {"timeout_s", 5}}}});
  CHECK(w[0].at("proposal").at("status") == "applied");
  t.use_url(t.remote.string());

  // Files that differ from HEAD: commit first; staged all the same, nothing pushed.
  t.agent.write("b.txt", "bravo\nlocal\n");
  auto dirty = mcp_tool_calls(
      t.agent, "bot",
      {{"propose_edit",
        {{"path", "b.txt"}, {"old_text", "local"}, {"new_text", "LOCAL"}, {"why", "w"}, {"publish", true}}}});
  INFO(dirty[0].dump());
  CHECK(dirty[0].at("ok") == false);
  CHECK(dirty[0].at("error").at("code") == 6);
  CHECK_THAT(dirty[0].at("error").at("message").get<std::string>(), Contains("differs from HEAD"));
  CHECK_THAT(dirty[0].at("error").at("hint").get<std::string>(), Contains("commit first"));
  CHECK(dirty[0].at("proposal").at("status") == "pending");
  CHECK(git_ok(t.agent, {"ls-remote", "origin", "refs/kaicoder/*"}).empty());

  // Without [team]: usage, nothing published.
  TempRepo solo{{"a.txt", "alpha\n"}};
  solo.init();
  auto off = mcp_tool_calls(solo, "bot",
                            {{"write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "w"}, {"publish", true}}},
                             {"write_file", {{"path", "b.txt"}, {"content", "y\n"}, {"why", "w"}}}});
  CHECK(off[0].at("ok") == false);
  CHECK(off[0].at("error").at("code") == 2);
  CHECK_THAT(off[0].at("error").at("message").get<std::string>(), Contains("[team] remote"));
  CHECK(off[1].at("ok") == true);
  CHECK(!off[1].contains("published"));
}
