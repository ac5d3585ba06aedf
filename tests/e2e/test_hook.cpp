// kaicoder hook HARNESS: recorded pre-tool payloads of each harness, the
// decision JSON and exit code each gets back, and the tree unchanged until a
// person approves what the hook staged. The payloads are the ones the
// harnesses document (tests/e2e/data/hooks/README.md says where each comes
// from); @ROOT@ in them stands for the test repository.

#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

std::string payload(const TempRepo& repo, const std::string& name) {
  std::ifstream in(std::filesystem::path(KAICODER_SOURCE_DIR) / "tests/e2e/data/hooks" / name, std::ios::binary);
  if (!in) throw std::runtime_error("no recorded payload " + name);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (size_t at; (at = text.find("@ROOT@")) != std::string::npos;) text.replace(at, 6, repo.path().string());
  return text;
}

Run hook(const TempRepo& repo, const std::string& harness, const std::string& text) {
  return repo.kai({"hook", harness}, text);
}

// Claude Code and Codex: the deny reason, or "" when the call passes ({}).
json pending(const TempRepo& repo) {
  return json_of(repo.kai({"--json", "list", "--status", "pending"})).at("proposals");
}

struct Fixture {
  TempRepo repo{{"a.txt", "one two one\n"}, {"src/b.txt", "b\n"}, {".env", "TOKEN=s3cr3t-value\n"}};
  Fixture() { repo.init(); }
};

}  // namespace

TEST_CASE("a Claude Code Write is staged as a proposal and lands only once a person approves", "[e2e][hook]") {
  Fixture f;
  auto before = tree_but_log(f.repo);
  Run r = hook(f.repo, "claude-code", payload(f.repo, "claude-write.json"));
  KAI_REQUIRE_EXIT(r, 0);
  const std::string why = claude_denial(r);
  CHECK_THAT(why, Contains("staged this as proposal 1"));
  CHECK_THAT(why, Contains("kaicoder approve 1"));
  CHECK_THAT(why, Contains("kaicoder wait 1"));
  CHECK(tree_but_log(f.repo) == before);
  CHECK_FALSE(f.repo.exists("new.txt"));
  json p = show_json(f.repo, 1);
  CHECK(p.at("kind") == "write");
  CHECK(p.at("agent") == "claude-code");
  // A retry of the same call finds the same proposal.
  CHECK_THAT(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-write.json"))),
             Contains("already holds this change as proposal 1"));
  CHECK(pending(f.repo).size() == 1);
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(f.repo.read("new.txt") == "hello from the agent\n");
}

TEST_CASE("a Claude Code Edit with replace_all and a MultiEdit become whole-file proposals", "[e2e][hook]") {
  Fixture f;
  Run r = hook(f.repo, "claude-code", payload(f.repo, "claude-edit-replace-all.json"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(claude_denial(r), Contains("proposal 1 (write of a.txt)"));
  CHECK(f.repo.read("a.txt") == "one two one\n");
  Run m = hook(f.repo, "claude-code", payload(f.repo, "claude-multiedit.json"));
  KAI_REQUIRE_EXIT(m, 0);
  CHECK_THAT(claude_denial(m), Contains("proposal 2 (write of src/b.txt)"));
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(f.repo.read("a.txt") == "1 two 1\n");
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "2"}, "y"), 0);
  CHECK(f.repo.read("src/b.txt") == "B!\n");
}

TEST_CASE("a single Claude Code Edit is a surgical edit proposal, and a missing target is refused", "[e2e][hook]") {
  Fixture f;
  Run r = hook(f.repo, "claude-code", payload(f.repo, "claude-edit.json"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(claude_denial(r), Contains("proposal 1 (edit of src/b.txt)"));
  CHECK(show_json(f.repo, 1).at("kind") == "edit");
  Run miss = hook(f.repo, "claude-code", payload(f.repo, "claude-edit-missing.json"));
  KAI_REQUIRE_EXIT(miss, 0);
  CHECK_THAT(claude_denial(miss), Contains("not found"));
  CHECK(pending(f.repo).size() == 1);
}

TEST_CASE("a Claude Code Bash call is staged as a run, and a blocked one is refused unstaged", "[e2e][hook]") {
  Fixture f;
  Run r = hook(f.repo, "claude-code", payload(f.repo, "claude-bash.json"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(claude_denial(r), Contains("proposal 1 (run of `touch made-by-run`)"));
  CHECK(show_json(f.repo, 1).at("why") == "Create a marker file");
  CHECK_FALSE(f.repo.exists("made-by-run"));
  Run b = hook(f.repo, "claude-code", payload(f.repo, "claude-bash-blocked.json"));
  KAI_REQUIRE_EXIT(b, 0);
  CHECK_THAT(claude_denial(b), Contains("blocks this command"));
  CHECK(pending(f.repo).size() == 1);
}

TEST_CASE("Claude Code reads pass inside root and are denied for secrets and outside root", "[e2e][hook]") {
  Fixture f;
  Run ok = hook(f.repo, "claude-code", payload(f.repo, "claude-read.json"));
  KAI_REQUIRE_EXIT(ok, 0);
  CHECK(json::parse(ok.out) == json::object());
  Run secret = hook(f.repo, "claude-code", payload(f.repo, "claude-read-secret.json"));
  KAI_REQUIRE_EXIT(secret, 0);
  CHECK_THAT(claude_denial(secret), Contains(".env"));
  CHECK(secret.out.find("s3cr3t") == std::string::npos);
  Run outside = hook(f.repo, "claude-code", payload(f.repo, "claude-read-outside.json"));
  KAI_REQUIRE_EXIT(outside, 0);
  CHECK_THAT(claude_denial(outside), Contains("outside"));
}

TEST_CASE("Claude Code Grep and Glob pass only when they cannot reach a secret or leave root", "[e2e][hook]") {
  Fixture f;
  // The whole root holds .env and kaicoder's state: denied.
  CHECK_THAT(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-grep-root.json"))), Contains(".env"));
  CHECK_THAT(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-glob-all.json"))), Contains("refused"));
  // Narrowed to text files, or to a folder without secrets: passes.
  CHECK(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-grep-glob.json"))).empty());
  CHECK(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-glob-src.json"))).empty());
  // Leaving root, or a pattern kaicoder cannot judge: denied.
  CHECK_THAT(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-grep-outside.json"))),
             Contains("outside"));
  CHECK_THAT(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-grep-braces.json"))),
             Contains("cannot mirror"));
}

TEST_CASE("Claude Code: malformed JSON and unknown tools are denied with valid JSON, exit 0", "[e2e][hook]") {
  Fixture f;
  auto before = tree_but_log(f.repo);
  for (const std::string& text :
       {std::string("{not json"), std::string(""), std::string("[1,2]"), payload(f.repo, "claude-unknown-tool.json"),
        payload(f.repo, "claude-notebook-edit.json"),
        std::string(R"({"tool_name": "Write", "tool_input": {"file_path": 7}})")}) {
    INFO("payload: " << text);
    Run r = hook(f.repo, "claude-code", text);
    KAI_CHECK_EXIT(r, 0);
    CHECK_FALSE(claude_denial(r).empty());
  }
  CHECK(tree_but_log(f.repo) == before);
  CHECK(pending(f.repo).empty());
  // Passing tools pass.
  CHECK(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-todo.json"))).empty());
  CHECK(claude_denial(hook(f.repo, "claude-code", payload(f.repo, "claude-mcp-kaicoder.json"))).empty());
}

TEST_CASE("Codex: Bash with an argument vector and a one-file apply_patch are staged", "[e2e][hook]") {
  Fixture f;
  Run b = hook(f.repo, "codex", payload(f.repo, "codex-bash.json"));
  KAI_REQUIRE_EXIT(b, 0);
  CHECK_THAT(claude_denial(b), Contains("proposal 1 (run of"));
  Run p = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch.json"));
  KAI_REQUIRE_EXIT(p, 0);
  CHECK_THAT(claude_denial(p), Contains("proposal 2 (write of src/b.txt)"));
  CHECK(f.repo.read("src/b.txt") == "b\n");
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "2"}, "y"), 0);
  CHECK(f.repo.read("src/b.txt") == "b\nc\n");
  Run secret = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-secret.json"));
  KAI_REQUIRE_EXIT(secret, 0);
  CHECK_THAT(claude_denial(secret), Contains(".env"));
  CHECK(f.repo.read(".env") == "TOKEN=s3cr3t-value\n");
}

TEST_CASE("Codex: an apply_patch of several files is one changeset, written only once a person approves it",
          "[e2e][hook]") {
  Fixture f;
  auto before = tree_but_log(f.repo);
  Run many = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-many.json"));
  KAI_REQUIRE_EXIT(many, 0);
  const std::string why = claude_denial(many);
  CHECK_THAT(why, Contains("staged this as proposal 1 (changeset of 2 files: notes/new.txt, src/b.txt)"));
  CHECK_THAT(why, Contains("kaicoder approve 1"));
  CHECK_THAT(why, Contains("kaicoder wait 1"));
  CHECK(tree_but_log(f.repo) == before);
  json p = pending(f.repo);
  REQUIRE(p.size() == 1);
  CHECK(p[0].at("kind") == "changeset");
  // The model retries the denied call: the same changeset, not a second one.
  CHECK_THAT(claude_denial(hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-many.json"))),
             Contains("already holds this change as proposal 1"));
  CHECK(pending(f.repo).size() == 1);
  CHECK(tree_but_log(f.repo) == before);
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(f.repo.read("notes/new.txt") == "hello\n");
  CHECK_FALSE(f.repo.exists("src/b.txt"));
  CHECK(pending(f.repo).empty());
}

TEST_CASE("Codex: an apply_patch that moves a file is a changeset too, renamed only once approved", "[e2e][hook]") {
  Fixture f;
  auto before = tree_but_log(f.repo);
  Run r = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-move.json"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(claude_denial(r), Contains("staged this as proposal 1 (changeset of 1 file: src/b.txt -> src/c.txt)"));
  CHECK(tree_but_log(f.repo) == before);
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK_FALSE(f.repo.exists("src/b.txt"));
  CHECK(f.repo.read("src/c.txt") == "b\nc\n");
}

TEST_CASE("Codex: an apply_patch of several files whose hunk does not apply is refused whole, naming it",
          "[e2e][hook]") {
  Fixture f;
  auto before = tree_but_log(f.repo);
  Run r = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-stale.json"));
  KAI_REQUIRE_EXIT(r, 0);
  const std::string why = claude_denial(r);
  CHECK_THAT(why, Contains("kaicoder refused this"));
  CHECK_THAT(why, Contains("src/b.txt"));
  CHECK_THAT(why, Contains("hunk"));
  CHECK(tree_but_log(f.repo) == before);
  CHECK_FALSE(f.repo.exists("notes/new.txt"));
  CHECK(pending(f.repo).empty());
}

TEST_CASE("Codex: an apply_patch of several files that touches a secret or leaves root is refused whole",
          "[e2e][hook]") {
  Fixture f;
  auto before = tree_but_log(f.repo);
  Run secret = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-many-secret.json"));
  KAI_REQUIRE_EXIT(secret, 0);
  const std::string why = claude_denial(secret);
  CHECK_THAT(why, Contains("kaicoder refused this"));
  CHECK_THAT(why, Contains(".env"));
  CHECK_THAT(why, !Contains("s3cr3t-value"));
  Run outside = hook(f.repo, "codex", payload(f.repo, "codex-apply-patch-many-outside.json"));
  KAI_REQUIRE_EXIT(outside, 0);
  CHECK_THAT(claude_denial(outside), Contains("kaicoder refused this"));
  CHECK_THAT(claude_denial(outside), Contains("escaped.txt"));
  CHECK(tree_but_log(f.repo) == before);
  CHECK(f.repo.read(".env") == "TOKEN=s3cr3t-value\n");
  CHECK_FALSE(f.repo.exists("notes/ok.txt"));
  CHECK_FALSE(std::filesystem::exists(f.repo.path().parent_path() / "escaped.txt"));
  CHECK(pending(f.repo).empty());
}

TEST_CASE("Gemini CLI: BeforeTool writes, replaces and shell calls are staged and answered with decision deny",
          "[e2e][hook]") {
  Fixture f;
  auto reason = [&](const std::string& name) {
    Run r = hook(f.repo, "gemini", payload(f.repo, name));
    KAI_REQUIRE_EXIT(r, 0);
    json j = json::parse(r.out);
    if (j.empty()) return std::string();
    REQUIRE(j.at("decision") == "deny");
    return j.at("reason").get<std::string>();
  };
  CHECK_THAT(reason("gemini-write-file.json"), Contains("proposal 1 (write of new.txt)"));
  CHECK_THAT(reason("gemini-replace.json"), Contains("proposal 2 (write of a.txt)"));
  CHECK_THAT(reason("gemini-shell.json"), Contains("proposal 3 (run of"));
  CHECK(reason("gemini-read-file.json").empty());
  CHECK_THAT(reason("gemini-read-secret.json"), Contains(".env"));
  CHECK_THAT(reason("gemini-save-memory.json"), Contains("save_memory"));
  CHECK_FALSE(f.repo.exists("new.txt"));
}

TEST_CASE("Cursor: each before* event answers with permission, failing closed", "[e2e][hook]") {
  Fixture f;
  auto answer = [&](const std::string& name) {
    Run r = hook(f.repo, "cursor", payload(f.repo, name));
    KAI_REQUIRE_EXIT(r, 0);
    return json::parse(r.out);
  };
  json shell = answer("cursor-shell.json");
  CHECK(shell.at("permission") == "deny");
  CHECK_THAT(shell.at("agent_message").get<std::string>(), Contains("proposal 1 (run of"));
  CHECK(answer("cursor-read.json").at("permission") == "allow");
  CHECK(answer("cursor-read-secret.json").at("permission") == "deny");
  json write = answer("cursor-pretooluse-write.json");
  CHECK(write.at("permission") == "deny");
  CHECK(write.at("decision") == "deny");
  CHECK_THAT(write.at("reason").get<std::string>(), Contains("proposal 2 (write of new.txt)"));
  CHECK(answer("cursor-mcp-kaicoder.json").at("permission") == "allow");
  CHECK(answer("cursor-mcp-other.json").at("permission") == "deny");
  CHECK(answer("cursor-after-edit.json").at("permission") == "deny");
  CHECK_FALSE(f.repo.exists("new.txt"));
}

TEST_CASE("with [hooks.adapter] wait the hook reports the decision it waited for", "[e2e][hook]") {
  Fixture f;
  std::string cfg = f.repo.read("kaicoder.toml");
  const size_t at = cfg.find("[hooks.adapter]");
  REQUIRE(at != std::string::npos);
  cfg.replace(cfg.find("wait = 0", at), 8, "wait = 20");
  f.repo.write("kaicoder.toml", cfg);
  f.repo.trust();
  Process h = f.repo.spawn_kai({"hook", "claude-code"}, payload(f.repo, "claude-write.json"));
  for (int i = 0; i < 200 && !f.repo.exists(".kaicoder/staging/1/meta.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  KAI_REQUIRE_EXIT(f.repo.kai_tty({"approve", "1"}, "y"), 0);
  Run r = h.finish(30s);
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(claude_denial(r), Contains("approved proposal 1"));
  CHECK_THAT(claude_denial(r), Contains("do not write it again"));
  CHECK(f.repo.read("new.txt") == "hello from the agent\n");
}

TEST_CASE("outside a trusted root every hook call is denied", "[e2e][hook]") {
  TempRepo repo{{"a.txt", "x\n"}};
  Run r = repo.kai({"hook", "claude-code"}, payload(repo, "claude-read.json"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(claude_denial(r), Contains("kaicoder refused this"));
  Run g = repo.kai({"hook", "gemini"}, payload(repo, "gemini-read-file.json"));
  KAI_REQUIRE_EXIT(g, 0);
  CHECK(json::parse(g.out).at("decision") == "deny");
}
