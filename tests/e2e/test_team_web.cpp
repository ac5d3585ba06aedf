// Team mode on the review page (kaicoder-serve(1), kaicoder-team(7)): the
// person decides a team proposal of another clone in `kaicoder serve`, and
// the page signs and pushes the decision through the calls the terminal's
// approve and reject make. The agent's clone applies only what was signed.
// The page is never weaker than the terminal: CONFIRM where it is due, and a
// key that cannot sign without a passphrase refused with what to do, never
// a prompt on the server's terminal.

#include <filesystem>

#include "tests/support/serve.hpp"
#include "tests/support/team.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string decision_ref(const Published& p) {
  return "refs/kaicoder/decisions/" + p.origin + "/" + std::to_string(p.id);
}

// The remote's decision on `p`, "" when there is none.
std::string remote_decision(const TeamRepos& t, const Published& p) {
  return git_ok(t.person, {"ls-remote", t.remote.string(), decision_ref(p)});
}

// Refs under refs/kaicoder/decisions/ in the person's own clone.
std::string local_decisions(const TeamRepos& t) {
  return git_ok(t.person, {"for-each-ref", "refs/kaicoder/decisions/"});
}

httplib::Headers same_origin(const ServePage& page) {
  return {{"Origin", "http://127.0.0.1:" + std::to_string(page.port)}};
}

}  // namespace

TEST_CASE("serve: a team proposal approved on the review page is signed and pushed, and the agent's wait applies it",
          "[e2e][team][serve]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const int id = t.fetch_one();
  const std::string at = "/p/" + std::to_string(id);
  ServePage page(t.person);
  REQUIRE(page.sign_in());

  auto shown = page.get(at);
  REQUIRE(shown);
  CHECK(shown->status == 200);
  CHECK_THAT(shown->body, Contains("Approve and sign") && Contains("Reject and sign") && Contains(pub.origin) &&
                              Contains("<span class=\"l del\">-alpha</span>") &&
                              Contains("<span class=\"l add\">+beta</span>"));
  CHECK_THAT(shown->body,
             !Contains("No decision from this page") && !Contains("Always allow") && !Contains("Approve only"));
  // The page's live check binds to what the page showed: the proposal commit.
  auto state = page.get("/state.json");
  REQUIRE(state);
  CHECK(json::parse(state->body).at("proposals").at(std::to_string(id)).at("digest") == pub.commit);

  // Another choice than signing is not offered, and not taken when posted.
  auto form = ServePage::form_of(shown->body, at + "/approve");
  REQUIRE(form.at("digest") == pub.commit);
  for (const char* then : {"record", "force", "always"}) {
    auto other = form;
    other["then"] = then;
    auto no = page.post(at + "/approve", other, same_origin(page));
    REQUIRE(no);
    CHECK(no->status == 400);
  }
  CHECK(remote_decision(t, pub).empty());

  form["then"] = "sign";
  auto ok = page.post(at + "/approve", form, same_origin(page));
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK_THAT(ok->body, Contains("signed and pushed") && Contains("signed by person@example.com") &&
                           Contains("pushed to the team remote"));
  CHECK(t.person.read("a.txt") == "alpha\n");  // decided here, applied there
  const std::string decision = remote_decision(t, pub).substr(0, 40);
  REQUIRE(decision.size() == 40);
  CHECK(git_ok(t.person, {"rev-parse", decision + "^"}) == pub.commit);
  CHECK_THAT(t.decision_file(decision, "decision.toml"),
             Contains("decision = \"approve\"") && Contains("decider = \"" + current_user() + "\""));
  json p = show_json(t.person, id);
  CHECK(p.at("status") == "approved");
  CHECK(p.at("decided_by") == current_user() + " (web)");
  CHECK(p.at("channel") == "web");
  CHECK(p.at("team").at("pushed") == true);
  // The page now says who signed it; it is decided once.
  auto after = page.get(at);
  REQUIRE(after);
  CHECK_THAT(after->body,
             Contains("person@example.com") && Contains("pushed to the team remote") && !Contains("Approve and sign"));
  auto again = page.post(at + "/approve", form, same_origin(page));
  REQUIRE(again);
  CHECK(again->status == 409);
  KAI_CHECK_EXIT(page.stop(), 0);

  Run waited = t.agent.kai({"--json", "wait", std::to_string(pub.id), "--timeout", "60"});
  KAI_REQUIRE_EXIT(waited, 0);
  CHECK(json_of(waited).at("team_decision").at("signer") == "person@example.com");
  CHECK(t.agent.read("a.txt") == "beta\n");
  json e = log_entries(t.agent).at(0);
  CHECK(e.at("approver") == "person@example.com (team)");
  CHECK_THAT(e.at("result").get<std::string>(), Contains(pub.commit) && Contains(decision));
  CHECK(git_ok(t.agent, {"rev-parse", "HEAD"}) == pub.commit);
}

TEST_CASE(
    "serve: a team proposal rejected on the review page is a signed rejection, and the agent's clone writes "
    "nothing",
    "[e2e][team][serve]") {
  TeamRepos t;
  const Published pub =
      t.publish({"propose", "--path", "b.txt", "--content-file", "-", "--why", "replace bravo"}, "BRAVO\n");
  const int id = t.fetch_one();
  const std::string at = "/p/" + std::to_string(id);
  ServePage page(t.person);
  REQUIRE(page.sign_in());
  auto shown = page.get(at);
  REQUIRE(shown);
  auto form = ServePage::form_of(shown->body, at + "/reject");
  form["reason"] = "not like this";
  auto no = page.post(at + "/reject", form);
  REQUIRE(no);
  CHECK(no->status == 200);
  CHECK_THAT(no->body, Contains("rejected team proposal") && Contains("signed by person@example.com"));
  const std::string decision = remote_decision(t, pub).substr(0, 40);
  REQUIRE(decision.size() == 40);
  CHECK_THAT(t.decision_file(decision, "decision.toml"),
             Contains("decision = \"reject\"") && Contains("not like this"));
  CHECK(show_json(t.person, id).at("status") == "rejected");
  KAI_CHECK_EXIT(page.stop(), 0);

  Run waited = t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "60"});
  KAI_CHECK_EXIT(waited, 4);
  CHECK(t.agent.read("b.txt") == "bravo\n");
  json e = log_entries(t.agent).at(0);
  CHECK(e.at("kind") == "rejected");
  CHECK(e.at("approver") == "person@example.com (team)");
  CHECK_THAT(e.at("result").get<std::string>(), Contains("not like this"));
}

TEST_CASE("serve: a confirm-tier team proposal takes CONFIRM on the page: without it nothing is signed or pushed",
          "[e2e][team][serve]") {
  TeamRepos t;
  // scripts/** takes CONFIRM by default.
  const Published pub =
      t.publish({"propose", "--path", "scripts/go.sh", "--content-file", "-", "--why", "a script"}, "echo hi\n");
  const int id = t.fetch_one();
  const std::string at = "/p/" + std::to_string(id);
  ServePage page(t.person);
  REQUIRE(page.sign_in());
  auto shown = page.get(at);
  REQUIRE(shown);
  CHECK_THAT(shown->body, Contains("Type CONFIRM to approve"));
  auto form = ServePage::form_of(shown->body, at + "/approve");
  form["then"] = "sign";
  for (const char* typed : {"", "y", "confirm"}) {
    form["confirm"] = typed;
    auto no = page.post(at + "/approve", form, same_origin(page));
    REQUIRE(no);
    CHECK(no->status == 403);
    CHECK_THAT(no->body, Contains("CONFIRM"));
  }
  CHECK(remote_decision(t, pub).empty());
  CHECK(local_decisions(t).empty());
  CHECK(show_json(t.person, id).at("status") == "pending");
  // The cut flag the form carried is bound to its token: claiming the diff
  // was shown whole on another flag is a refused form.
  auto flipped = form;
  flipped["cut"] = flipped["cut"] == "1" ? "0" : "1";
  flipped["confirm"] = "";
  auto forged = page.post(at + "/approve", flipped, same_origin(page));
  REQUIRE(forged);
  CHECK(forged->status == 403);

  form["confirm"] = "CONFIRM";
  auto ok = page.post(at + "/approve", form, same_origin(page));
  REQUIRE(ok);
  CHECK(ok->status == 200);
  const std::string decision = remote_decision(t, pub).substr(0, 40);
  REQUIRE(decision.size() == 40);
  CHECK_THAT(t.decision_file(decision, "decision.toml"), Contains("tier = \"confirm\""));
  KAI_CHECK_EXIT(page.stop(), 0);
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "60"}), 0);
  CHECK(t.agent.read("scripts/go.sh") == "echo hi\n");
}

TEST_CASE(
    "serve: a key that needs a passphrase no ssh-agent holds cannot sign on the page: it says what to do, "
    "prompts nowhere, and nothing is decided",
    "[e2e][team][serve]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const int id = t.fetch_one();
  // The same key, now with a passphrase: still the allowed signer, but it
  // cannot sign without someone typing the passphrase.
  Run pw = t.person.spawn({"ssh-keygen", "-q", "-p", "-P", "", "-N", "a passphrase", "-f", t.person_key().string()})
               .finish();
  INFO(pw.all());
  REQUIRE(pw.ok());
  const std::string at = "/p/" + std::to_string(id);
  ServePage page(t.person);
  REQUIRE(page.sign_in());
  auto shown = page.get(at);
  REQUIRE(shown);
  auto form = ServePage::form_of(shown->body, at + "/approve");
  form["then"] = "sign";
  auto no = page.post(at + "/approve", form, same_origin(page));
  REQUIRE(no);
  CHECK(no->status == 500);
  CHECK_THAT(no->body, Contains("could not sign the decision") && Contains("nothing was signed or pushed") &&
                           Contains("decide at a terminal with kaicoder approve " + std::to_string(id)) &&
                           Contains("ssh-agent"));
  // Rejecting needs the key just as much.
  auto rform = ServePage::form_of(shown->body, at + "/reject");
  auto rno = page.post(at + "/reject", rform);
  REQUIRE(rno);
  CHECK(rno->status == 500);
  CHECK_THAT(rno->body, Contains("kaicoder reject " + std::to_string(id)));
  CHECK(remote_decision(t, pub).empty());
  CHECK(local_decisions(t).empty());
  CHECK(show_json(t.person, id).at("status") == "pending");
  // The server is still answering, and never asked for the passphrase on its terminal.
  auto still = page.get(at);
  REQUIRE(still);
  CHECK(still->status == 200);
  Run done = page.stop();
  KAI_CHECK_EXIT(done, 0);
  CHECK_THAT(done.tty, !Contains("passphrase"));
  // At a terminal the same key is refused the same way, with the terminal's next step.
  Run tty = t.person.kai_tty({"approve", std::to_string(id)}, "y");
  KAI_CHECK_EXIT(tty, 1);
  CHECK_THAT(tty.all(), Contains("could not sign the decision") && Contains("ssh-add"));
  CHECK(remote_decision(t, pub).empty());
}

TEST_CASE(
    "serve: a team decision made on the page while the remote is unreachable is kept, and pushed once it is "
    "back",
    "[e2e][team][serve]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const int id = t.fetch_one();
  t.use_url((t.person.home().parent_path() / "nowhere.git").string());
  const std::string at = "/p/" + std::to_string(id);
  ServePage page(t.person);
  REQUIRE(page.sign_in());
  auto shown = page.get(at);
  REQUIRE(shown);
  auto form = ServePage::form_of(shown->body, at + "/approve");
  auto ok = page.post(at + "/approve", form, same_origin(page));
  REQUIRE(ok);
  CHECK(ok->status == 202);
  CHECK_THAT(ok->body, Contains("signed, waiting to push") && Contains("signed by person@example.com") &&
                           Contains("cannot push to the team remote") &&
                           Contains("kaicoder publish " + std::to_string(id)));
  CHECK(show_json(t.person, id).at("team").at("pushed") == false);
  auto after = page.get(at);
  REQUIRE(after);
  CHECK_THAT(after->body, Contains("not pushed yet"));
  KAI_CHECK_EXIT(page.stop(), 0);
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "1"}), 8);
  // Back: the next fetch pushes it, as after a decision at a terminal.
  t.use_url(t.remote.string());
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  CHECK(json_of(fetched).at("pushed") == json::array({id}));
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "60"}), 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
}
