// Two-user mode through every door (issue 14): `kaicoder mcp` and
// `kaicoder hook` run as the agent user work unchanged and write the spool,
// changesets travel through it, the agent's show carries the diff (never a
// file it may not read), its wait sees an expiry on its own, and
// `agent-user check` reads POSIX ACLs. The owner approves through a
// pseudo-terminal, always; nothing lands before that.

#include <chrono>
#include <cstdlib>

#include "tests/e2e/attacks/two_user_support.hpp"

namespace {
using namespace kai::test;
using namespace kai::test::two_user;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;

std::string rpc(int id, const std::string& method, const json& params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n";
}

std::string tool_call(int id, const std::string& name, const json& args) {
  return rpc(id, "tools/call", {{"name", name}, {"arguments", args}});
}

// The response with `id` among the lines the server printed so far, or null.
json response(const std::string& out, int id) {
  size_t at = 0;
  for (size_t nl; (nl = out.find('\n', at)) != std::string::npos; at = nl + 1) {
    json j = json::parse(out.substr(at, nl - at), nullptr, false);
    if (j.is_object() && j.contains("id") && j["id"] == id) return j;
  }
  return nullptr;
}

json await_response(Process& p, int id, std::chrono::seconds limit = 30s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    json r = response(p.so_far().out, id);
    if (!r.is_null()) return r;
    std::this_thread::sleep_for(100ms);
  }
  FAIL("no response " << id << "; stdout: " << p.so_far().out << "\nstderr: " << p.so_far().err);
  return nullptr;
}

// A file the agent user can read (the case's folder is passable for it).
void give(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
  fs::permissions(p, fs::perms(0644));
}

std::string hook_payload(const TempRepo& repo, const std::string& name) {
  std::ifstream in(fs::path(KAICODER_SOURCE_DIR) / "tests/e2e/data/hooks" / name, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (size_t at; (at = text.find("@ROOT@")) != std::string::npos;) text.replace(at, 6, repo.path().string());
  return text;
}

// The ticket a deny reason names ("… as ticket T in the two-user spool …").
std::string ticket_in(const std::string& reason) {
  const std::string mark = "as ticket ";
  auto at = reason.find(mark);
  REQUIRE(at != std::string::npos);
  at += mark.size();
  return reason.substr(at, reason.find(' ', at) - at);
}

// Take the spool in as the owner; the proposal each ticket became.
std::map<std::string, int> take_in(const TempRepo& repo) {
  Run in = repo.kai({"--json", "intake"});
  KAI_REQUIRE_EXIT(in, 0);
  std::map<std::string, int> out;
  const json report = json_of(in);
  for (const auto& t : report.at("taken")) out[t.at("ticket").get<std::string>()] = t.at("proposal").get<int>();
  return out;
}

}  // namespace

TEST_CASE("two-user: kaicoder mcp as the agent user spools its writes and wait_for_decision hears the owner's approval",
          "[e2e][attack][twouser][mcp]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "bee\n"}, {".env", "TOKEN=s3cr3t-value\n"}};
  set_up(repo, agent);
  const fs::path io = repo.path().parent_path() / "mcp-io";
  fs::create_directories(io);
  fs::permissions(io, fs::perms(0755));
  const std::string patch =
      "--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+bea\n--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1 @@\n+sea\n";
  give(io / "in1",
       rpc(1, "initialize",
           {{"protocolVersion", "2025-06-18"},
            {"capabilities", json::object()},
            {"clientInfo", {{"name", "test-client"}, {"version", "1"}}}}) +
           json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump() + "\n" +
           tool_call(2, "propose_edit", {{"path", "a.txt"}, {"old_text", "old"}, {"new_text", "new"}, {"why", "t"}}) +
           tool_call(3, "read_file", {{"path", "a.txt"}}) + tool_call(4, "read_file", {{"path", ".env"}}) +
           tool_call(5, "propose_patch", {{"patch", patch}, {"why", "two files"}}) +
           tool_call(6, "run_command", {{"argv", {"rm", "-rf", "/"}}, {"why", "t"}}));
  // The input stays open until the case says so: a closed input ends a wait at once.
  auto after = [&io](const char* flag, const char* input) {
    return "while [ ! -e '" + (io / flag).string() + "' ]; do sleep 0.1; done; cat '" + (io / input).string() + "'; ";
  };
  const std::string script = "{ cat '" + (io / "in1").string() + "'; " + after("go", "in2") + after("go2", "in3") +
                             "while [ ! -e '" + (io / "done").string() + "' ]; do sleep 0.1; done; } | " +
                             kaicoder_bin() + " mcp";
  const auto before = repo.tree_snapshot();
  Process server = repo.spawn(as_user(agent, {"/bin/sh", "-c", script}));

  json proposed = await_response(server, 2);
  REQUIRE(proposed.at("result").at("isError") == false);
  const json& sc = proposed["result"]["structuredContent"];
  CHECK(sc.at("spooled") == true);
  const std::string ticket = sc.at("ticket").get<std::string>();
  CHECK_THAT(sc.at("next").get<std::string>(), Contains("wait_for_decision with ticket"));
  json read = await_response(server, 3);
  CHECK(read["result"]["structuredContent"]["text"] == "old\n");
  json secret = await_response(server, 4);
  CHECK(secret["result"]["isError"] == true);
  CHECK(secret.dump().find("s3cr3t-value") == std::string::npos);
  json patched = await_response(server, 5);
  REQUIRE(patched.at("result").at("isError") == false);
  const std::string patch_ticket = patched["result"]["structuredContent"].at("ticket").get<std::string>();
  json blocked = await_response(server, 6);
  CHECK(blocked["result"]["isError"] == true);
  CHECK_THAT(blocked.dump(), Contains("blocked"));
  CHECK(repo.tree_snapshot() == before);  // nothing written from the agent's side
  CHECK(names_in(repo.abs(".kaicoder/spool")).size() == 2);

  // Asked before intake, the status says the ticket waits; then the agent waits.
  give(io / "in2", tool_call(7, "proposal_status", {{"ticket", ticket}}) +
                       tool_call(8, "wait_for_decision", {{"ticket", ticket}, {"timeout_s", 120}}));
  give(io / "go", "");
  json early = await_response(server, 7);
  CHECK(early["result"]["isError"] == false);
  CHECK(early["result"]["structuredContent"]["decided"] == false);

  auto ids = take_in(repo);
  REQUIRE(ids.count(ticket));
  REQUIRE(ids.count(patch_ticket));
  Run a = repo.kai_tty({"approve", std::to_string(ids[ticket])}, "y");
  KAI_CHECK_EXIT(a, 0);
  json waited = await_response(server, 8, 60s);
  REQUIRE(waited.at("result").at("isError") == false);
  const json& w = waited["result"]["structuredContent"];
  CHECK(w.at("decided") == true);
  CHECK(w.at("proposal").at("status") == "applied");
  CHECK(w.at("proposal").at("id") == ids[ticket]);
  CHECK(w.at("rollback_id").get<std::string>().size() > 0);
  // Calls run side by side, so the status of the second ticket is asked
  // once intake has run: it names its proposal now.
  give(io / "in3", tool_call(9, "proposal_status", {{"ticket", patch_ticket}}));
  give(io / "go2", "");
  json pending = await_response(server, 9);
  CHECK(pending["result"]["structuredContent"]["proposal"]["status"] == "pending");
  CHECK(pending["result"]["structuredContent"]["proposal"]["kind"] == "changeset");
  give(io / "done", "");
  Run r = server.finish();
  KAI_CHECK_EXIT(r, 0);
  CHECK(repo.read("a.txt") == "new\n");
  // The changeset lands whole once the owner approves it too.
  CHECK(repo.read("b.txt") == "bee\n");
  KAI_CHECK_EXIT(repo.kai_tty({"approve", std::to_string(ids[patch_ticket])}, "y"), 0);
  CHECK(repo.read("b.txt") == "bea\n");
  CHECK(repo.read("c.txt") == "sea\n");
}

TEST_CASE("two-user: kaicoder hook as the agent user stages through the spool and fails closed",
          "[e2e][attack][twouser][hook]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"src/b.txt", "b\n"}, {".env", "TOKEN=s3cr3t-value\n"}};
  set_up(repo, agent);
  const auto before = repo.tree_snapshot();
  Run w = agent_kai(repo, agent, {"hook", "claude-code"}, hook_payload(repo, "claude-write.json"));
  KAI_REQUIRE_EXIT(w, 0);
  const std::string why = claude_denial(w);
  CHECK_THAT(why, Contains("staged this as ticket"));
  CHECK_THAT(why, Contains("wait_for_decision with ticket"));
  const std::string ticket = ticket_in(why);
  // A multi-file apply_patch from Codex is one changeset, through the spool too.
  Run many = agent_kai(repo, agent, {"hook", "codex"}, hook_payload(repo, "codex-apply-patch-many.json"));
  KAI_REQUIRE_EXIT(many, 0);
  const std::string many_ticket = ticket_in(claude_denial(many));
  // Reads pass, a secret's does not; a shell call is staged; bad input is a deny.
  CHECK(agent_kai(repo, agent, {"hook", "claude-code"}, hook_payload(repo, "claude-read.json")).out == "{}\n");
  CHECK_THAT(
      claude_denial(agent_kai(repo, agent, {"hook", "claude-code"}, hook_payload(repo, "claude-read-secret.json"))),
      Contains("refused"));
  CHECK_THAT(
      claude_denial(agent_kai(repo, agent, {"hook", "claude-code"}, hook_payload(repo, "claude-bash-blocked.json"))),
      Contains("block"));
  Run broken = agent_kai(repo, agent, {"hook", "claude-code"}, "{not json");
  KAI_CHECK_EXIT(broken, 0);
  CHECK_THAT(claude_denial(broken), Contains("refused"));
  CHECK(repo.tree_snapshot() == before);

  auto ids = take_in(repo);
  REQUIRE(ids.count(ticket));
  REQUIRE(ids.count(many_ticket));
  KAI_CHECK_EXIT(repo.kai_tty({"approve", std::to_string(ids[ticket])}, "y"), 0);
  CHECK(repo.read("new.txt") == "hello from the agent\n");
  Run waited = agent_kai(repo, agent, {"wait", ticket, "--timeout", "5"});
  KAI_CHECK_EXIT(waited, 0);
  CHECK_THAT(waited.out, Contains("is applied"));
  Run shown = repo.kai({"--json", "show", std::to_string(ids[many_ticket])});
  CHECK(json_of(shown).at("kind") == "changeset");
  CHECK(json_of(shown).at("proposer_uid") == agent.uid());

  // Where the spool cannot be written, the hook still answers a deny, never a pass.
  fs::permissions(repo.abs(".kaicoder/spool"), fs::perms(0700));
  Run closed = agent_kai(repo, agent, {"hook", "claude-code"}, hook_payload(repo, "claude-edit.json"));
  KAI_CHECK_EXIT(closed, 0);
  CHECK_THAT(claude_denial(closed), Contains("refused"));
  CHECK(repo.read("src/b.txt") == "b\n");
}

TEST_CASE("two-user: changesets from the agent user go through the spool and land whole after approval",
          "[e2e][attack][twouser][spool][changeset]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "one\n"}, {"b.txt", "two\n"}, {"gone.txt", "bye\n"}};
  set_up(repo, agent);
  const std::string diff =
      "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+uno\n"
      "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 "
      "@@\n-bye\n";
  Run p = agent_kai(repo, agent, {"--json", "propose", "--patch", "-", "--why", "t"}, diff);
  KAI_REQUIRE_EXIT(p, 0);
  const std::string patch_ticket = spooled_ticket(p);
  const std::string changes =
      R"({"changes": [{"op": "edit", "path": "b.txt", "target": "two", "replacement": "dos"},
                      {"op": "write", "path": "tool.sh", "content": "#!/bin/sh\n", "mode": "0755"}], "why": "t"})";
  Run j = agent_kai(repo, agent, {"--json", "propose", "--json-input"}, changes);
  KAI_REQUIRE_EXIT(j, 0);
  const std::string json_ticket = spooled_ticket(j);
  // A malformed changeset entry planted by hand is quarantined; the others are taken in.
  KAI_REQUIRE_EXIT(
      agent_sh(
          repo, agent,
          R"(printf '{"version":1,"type":"changeset","cwd":"","request":{"changes":[{"op":"edit","path":"a.txt"}]}}' > )"
          ".kaicoder/spool/t-bad-changeset.json"),
      0);
  Run in = repo.kai({"--json", "intake"});
  KAI_REQUIRE_EXIT(in, 0);
  json report = json_of(in);
  REQUIRE(report.at("quarantined").size() == 1);
  CHECK(report["quarantined"][0]["ticket"] == "t-bad-changeset");
  CHECK_THAT(report["quarantined"][0]["error"]["message"].get<std::string>(), Contains("malformed changeset request"));
  REQUIRE(report.at("taken").size() == 2);
  CHECK(repo.read("a.txt") == "one\n");
  Run sp = agent_kai(repo, agent, {"--json", "show", patch_ticket});
  KAI_CHECK_EXIT(sp, 0);
  json spj = json_of(sp);
  CHECK(spj.at("kind") == "changeset");
  CHECK_THAT(spj.at("diff").get<std::string>(), Contains("+uno"));
  Run one = agent_kai(repo, agent, {"show", patch_ticket, "--file", "gone.txt"});
  KAI_CHECK_EXIT(one, 0);
  CHECK_THAT(one.out, Contains("-bye"));
  CHECK(one.out.find("+uno") == std::string::npos);
  KAI_CHECK_EXIT(agent_kai(repo, agent, {"show", patch_ticket, "--file", "b.txt"}), 7);
  for (const std::string& t : {patch_ticket, json_ticket}) {
    const json shown = json_of(agent_kai(repo, agent, {"--json", "show", t}));
    // A new executable file is confirm tier: the person types CONFIRM.
    const std::string answer = shown.at("tier") == "confirm" ? "CONFIRM" : "y";
    Run a = repo.kai_tty({"approve", std::to_string(shown.at("id").get<int>())}, answer);
    INFO(a.all());
    KAI_CHECK_EXIT(a, 0);
    CHECK(json_of(repo.kai({"--json", "show", std::to_string(shown.at("id").get<int>())})).at("status") == "applied");
  }
  CHECK(repo.read("a.txt") == "uno\n");
  CHECK_FALSE(repo.exists("gone.txt"));
  CHECK(repo.read("b.txt") == "dos\n");
  CHECK((repo.mode("tool.sh") & 0111) != 0);
  Run bad = agent_kai(repo, agent, {"wait", "t-bad-changeset"});
  KAI_CHECK_EXIT(bad, 2);
}

TEST_CASE("two-user: the agent's show carries the diff, redacted and made visible, never of a file it cannot read",
          "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "key=s3cr3t-value\nold \x1b[31mred\n"},
                {"private.txt", "owner only\n"},
                {".env", "TOKEN=s3cr3t-value\n"}};
  set_up(repo, agent);
  repo.chmod("private.txt", 0600);
  Run p = agent_kai(repo, agent,
                    {"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "t"});
  KAI_REQUIRE_EXIT(p, 0);
  const std::string ticket = spooled_ticket(p);
  // The agent cannot read private.txt, but may propose its whole content.
  Run w = agent_kai(repo, agent, {"--json", "propose", "--path", "private.txt", "--content-file", "-", "--why", "t"},
                    "mine\n");
  KAI_REQUIRE_EXIT(w, 0);
  const std::string private_ticket = spooled_ticket(w);
  auto ids = take_in(repo);
  REQUIRE(ids.size() == 2);

  Run shown = agent_kai(repo, agent, {"show", ticket});
  KAI_CHECK_EXIT(shown, 0);
  CHECK_THAT(shown.out, Contains("-old \\e[31mred"));
  CHECK_THAT(shown.out, Contains("+new \\e[31mred"));
  CHECK(shown.out.find("s3cr3t-value") == std::string::npos);
  CHECK(shown.out.find('\x1b') == std::string::npos);
  Run sj = agent_kai(repo, agent, {"--json", "show", ticket});
  CHECK_THAT(json_of(sj).at("diff").get<std::string>(), Contains("+new"));
  // The copy holds the diff, never what binds the decision.
  Run copy = agent_sh(repo, agent,
                      "cat .kaicoder/status/" + std::to_string(ids[ticket]) + ".diff .kaicoder/status/" +
                          std::to_string(ids[ticket]) + ".json");
  KAI_CHECK_EXIT(copy, 0);
  for (const char* never : {"approved_digest", "payload_digest", "\"seal\"", "s3cr3t-value"}) {
    INFO(never);
    CHECK(copy.out.find(never) == std::string::npos);
  }

  Run priv = agent_kai(repo, agent, {"show", private_ticket});
  KAI_CHECK_EXIT(priv, 0);
  CHECK(priv.out.find("owner only") == std::string::npos);
  CHECK_THAT(priv.out, Contains("no diff was left for the agent user"));
  CHECK_FALSE(repo.exists(".kaicoder/status/" + std::to_string(ids[private_ticket]) + ".diff"));
  // A proposal the owner made: no diff for the agent either.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "key", "--replacement", "k", "--why", "t"}), 0);
  Run own = agent_kai(repo, agent, {"--json", "show", "3"});
  KAI_CHECK_EXIT(own, 0);
  CHECK(json_of(own).at("diff") == "");
}

TEST_CASE("two-user: the agent's wait sees an expiry without any command of the owner",
          "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}};
  set_up(repo, agent);
  std::string cfg = repo.read("kaicoder.toml");
  const size_t at = cfg.find("timeout = 300");
  REQUIRE(at != std::string::npos);
  repo.write("kaicoder.toml", cfg.replace(at, std::string("timeout = 300").size(), "timeout = 5"));
  repo.trust();
  Run p = agent_kai(repo, agent,
                    {"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "t"});
  KAI_REQUIRE_EXIT(p, 0);
  const std::string ticket = spooled_ticket(p);
  auto ids = take_in(repo);
  REQUIRE(ids.count(ticket));
  Run pending = agent_kai(repo, agent, {"wait", ticket, "--timeout", "0"});
  KAI_CHECK_EXIT(pending, 8);
  std::this_thread::sleep_for(6s);
  // No owner command ran since: the agent's side computes the expiry itself.
  Run w = agent_kai(repo, agent, {"--json", "wait", ticket, "--timeout", "30"});
  KAI_CHECK_EXIT(w, 5);
  CHECK(json_of(w).at("status") == "timeout");
  CHECK(json_of(w).at("expired") == true);
  Run listed = agent_kai(repo, agent, {"list", "--status", "timeout"});
  CHECK_THAT(listed.out, Contains("timeout"));
  // And the owner cannot approve it any more.
  Run a = repo.kai_tty({"approve", std::to_string(ids[ticket])}, "y");
  CHECK(a.exit_code != 0);
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("two-user: agent-user check names a file the agent user can write through a POSIX ACL entry",
          "[e2e][attack][twouser][acl]") {
  KAI_NEED_USERS();
  if (std::system("command -v setfacl >/dev/null 2>&1") != 0) {
    WARN("skipped: setfacl is not installed (Debian's acl package; scripts/deps.sh --test installs it)");
    return;
  }
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"src/b.txt", "b\n"}};
  set_up(repo, agent);
  KAI_REQUIRE_EXIT(repo.kai({"agent-user", "check"}), 0);
  Run acl = repo.spawn({"setfacl", "-m", "u:" + agent.name + ":rw", repo.abs("a.txt").string()}).finish();
  if (acl.exit_code != 0) {
    WARN("skipped: this file system keeps no POSIX ACLs: " << acl.err);
    return;
  }
  Run c = repo.kai({"agent-user", "check"});
  KAI_CHECK_EXIT(c, 3);
  CHECK_THAT(c.out, Contains("a.txt"));
  // And the agent really can: the check says what the kernel allows.
  KAI_CHECK_EXIT(agent_sh(repo, agent, "echo x >> a.txt"), 0);
  // A group entry within the mask counts too; a mask of r-- takes write away.
  KAI_REQUIRE_EXIT(repo.spawn({"setfacl", "-b", repo.abs("a.txt").string()}).finish(), 0);
  KAI_REQUIRE_EXIT(repo.spawn({"setfacl", "-m", "g:" + agent.name + ":rwx", repo.abs("src").string()}).finish(), 0);
  Run g = repo.kai({"agent-user", "check"});
  KAI_CHECK_EXIT(g, 3);
  CHECK_THAT(g.out, Contains("src/"));
  KAI_REQUIRE_EXIT(repo.spawn({"setfacl", "-m", "m::rx", repo.abs("src").string()}).finish(), 0);
  KAI_CHECK_EXIT(repo.kai({"agent-user", "check"}), 0);
}
