// Attacks on the hook adapters (kaicoder hook HARNESS): an agent, or a
// payload it shaped, trying to get a write, a read of a secret or a search
// past kaicoder through its harness's pre-tool hook. Each is denied in the
// harness's own format, never with a silent exit that a harness reads as a
// pass, and nothing in the tree or the store changes.

#include "lib/run/sandbox.hpp"
#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

std::string claude(const TempRepo& repo, const std::string& tool, const json& input) {
  return json{
      {"hook_event_name", "PreToolUse"}, {"cwd", repo.path().string()}, {"tool_name", tool}, {"tool_input", input}}
      .dump();
}

// The deny reason Claude Code would read; fails the case on a pass or a bad answer.
std::string denied(const Run& r) {
  INFO(r.all());
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  REQUIRE(j.at("hookSpecificOutput").at("permissionDecision") == "deny");
  return j.at("hookSpecificOutput").at("permissionDecisionReason").get<std::string>();
}

struct Planted {
  TempRepo repo{{"a.txt", "a\n"}, {".env", "TOKEN=s3cr3t-value\n"}, {"docs/readme.md", "hi\n"}};
  Planted() { repo.init(); }
};

}  // namespace

TEST_CASE("attack: a Write payload whose path climbs out of root is denied and stages nothing", "[e2e][attack][hook]") {
  Planted p;
  auto before = tree_but_log(p.repo);
  for (const std::string& path : {p.repo.path().string() + "/../escaped.txt",
                                  std::string("/tmp/kaicoder-hook-escape.txt"), std::string("../escaped.txt")}) {
    INFO(path);
    CHECK_THAT(
        denied(p.repo.kai({"hook", "claude-code"}, claude(p.repo, "Write", {{"file_path", path}, {"content", "x"}}))),
        Contains("outside"));
  }
  CHECK(tree_but_log(p.repo) == before);
  CHECK_FALSE(std::filesystem::exists(p.repo.path().parent_path() / "escaped.txt"));
  CHECK(json_of(p.repo.kai({"--json", "list"})).at("proposals").empty());
}

TEST_CASE("attack: reading a secret through a symlink, the state folder or .git is denied", "[e2e][attack][hook]") {
  Planted p;
  p.repo.symlink("docs/env-link", "../.env");
  KAI_REQUIRE_EXIT(p.repo.kai(edit("a.txt", "a", "b")), 0);  // a staged payload under .kaicoder/
  for (const char* rel : {"docs/env-link", ".kaicoder/staging/1/meta.json", ".git/config"}) {
    INFO(rel);
    Run r = p.repo.kai({"hook", "claude-code"}, claude(p.repo, "Read", {{"file_path", p.repo.abs(rel).string()}}));
    CHECK_FALSE(denied(r).empty());
  }
  // Glob and Grep that would reach the link or the state folder.
  CHECK_FALSE(denied(p.repo.kai({"hook", "claude-code"},
                                claude(p.repo, "Grep", {{"pattern", "TOKEN"}, {"path", p.repo.abs("docs").string()}})))
                  .empty());
  CHECK_FALSE(
      denied(p.repo.kai({"hook", "claude-code"}, claude(p.repo, "Grep", {{"pattern", "x"}, {"glob", "*.json"}})))
          .empty());
  CHECK_FALSE(denied(p.repo.kai({"hook", "claude-code"}, claude(p.repo, "Glob", {{"pattern", "../**/*"}}))).empty());
  CHECK_FALSE(denied(p.repo.kai({"hook", "claude-code"}, claude(p.repo, "Grep", {{"pattern", "x"}, {"glob", "!*.md"}})))
                  .empty());
}

constexpr char k_nul_inside[] =
    "{\"tool_name\": \"Write\", \"tool_input\": {\"file_path\": \"a.txt\", \"content\": \"x\"}}\0trailing";

TEST_CASE("attack: payloads built to crash or confuse the hook are denied with valid JSON", "[e2e][attack][hook]") {
  Planted p;
  auto before = tree_but_log(p.repo);
  std::string deep(100000, '[');
  const std::vector<std::string> payloads = {
      deep,
      std::string("\xff\xfe{\"tool_name\"", 13),
      std::string(k_nul_inside, sizeof k_nul_inside - 1),  // a NUL, then more bytes
      R"({"tool_name": "Write"})",
      R"({"tool_name": ["Write"], "tool_input": {}})",
      R"({"tool_name": "Edit", "tool_input": {"file_path": "a.txt", "old_string": "a", "new_string": 1}})",
      R"({"tool_name": "MultiEdit", "tool_input": {"file_path": "a.txt", "edits": "all"}})",
      R"({"tool_name": "Bash", "tool_input": {"command": []}})",
  };
  for (const auto& text : payloads) {
    INFO("payload: " << text.substr(0, 80));
    for (const char* h : {"claude-code", "codex"}) CHECK_FALSE(denied(p.repo.kai({"hook", h}, text)).empty());
    Run g = p.repo.kai({"hook", "gemini"}, text);
    KAI_CHECK_EXIT(g, 0);
    CHECK(json::parse(g.out).at("decision") == "deny");
    Run c = p.repo.kai({"hook", "cursor"}, text);
    KAI_CHECK_EXIT(c, 0);
    CHECK(json::parse(c.out).at("permission") == "deny");
  }
  CHECK(tree_but_log(p.repo) == before);
  CHECK(json_of(p.repo.kai({"--json", "list"})).at("proposals").empty());
}

TEST_CASE("attack: an unknown harness name is a usage error (exit 2, a block), never exit 1", "[e2e][attack][hook]") {
  Planted p;
  Run r = p.repo.kai({"hook", "claude"}, claude(p.repo, "Write", {{"file_path", "a.txt"}, {"content", "x"}}));
  KAI_CHECK_EXIT(r, 2);
  CHECK(p.repo.read("a.txt") == "a\n");
}

TEST_CASE("attack: a hook stages, it never applies: the agent cannot approve what its hook staged",
          "[e2e][attack][hook]") {
  Planted p;
  CHECK_THAT(denied(p.repo.kai({"hook", "claude-code"},
                               claude(p.repo, "Write", {{"file_path", "a.txt"}, {"content", "pwned\n"}}))),
             Contains("proposal 1"));
  // The agent tries the approval itself through the shell its hook guards.
  CHECK_THAT(denied(p.repo.kai({"hook", "claude-code"}, claude(p.repo, "Bash", {{"command", "kaicoder approve 1"}}))),
             Contains("blocks this command"));
  KAI_CHECK_EXIT(p.repo.kai({"approve", "1"}), 3);
  CHECK(p.repo.read("a.txt") == "a\n");
}

TEST_CASE("attack: an approved run cannot unwire a harness by rewriting its settings",
          "[e2e][attack][hook][integrate]") {
  kai::NamespaceStatus ns = kai::namespace_status();
  if (!ns.ok || kai::landlock_status().abi == 0) {
    WARN("SKIPPED: the full sandbox is not available here: " << ns.detail);
    return;
  }
  TempRepo repo{
      {"probe.py",
       "import os\n"
       "def attempt(label, f):\n"
       "    try:\n"
       "        f()\n"
       "        print(label, 'DONE', flush=True)\n"
       "    except Exception as e:\n"
       "        print(label, 'refused:', type(e).__name__, flush=True)\n"
       "attempt('settings', lambda: open('.claude/settings.json', 'w').write('{}'))\n"
       "attempt('mcp', lambda: os.remove('.mcp.json'))\n"
       "os.makedirs('.codex', exist_ok=True)\n"
       "attempt('codex', lambda: open('.codex/config.toml', 'w').write('sandbox_mode = \\'danger-full-access\\''))\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "claude-code"}, "CONFIRM"), 0);
  const std::string settings = repo.read(".claude/settings.json"), mcp = repo.read(".mcp.json");
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "tidy up", "--", "python3", "probe.py"}), 0);
  const int id = json_of(repo.kai({"--json", "list", "--status", "pending"})).at("proposals").at(0).at("id").get<int>();
  Run a = repo.kai_tty({"approve", std::to_string(id)}, "y");
  if (show_json(repo, id).at("status") == "pending") a = repo.kai_tty({"approve", std::to_string(id)}, "CONFIRM");
  const std::string seen = a.all() + repo.kai({"--json", "show", std::to_string(id)}).out;
  INFO(seen);
  CHECK_THAT(seen, Contains("settings "));
  CHECK(seen.find("settings DONE") == std::string::npos);
  CHECK(seen.find("mcp DONE") == std::string::npos);
  // A harness folder that did not exist cannot be mounted read-only: what
  // the run made there is removed after it, and its entry says so.
  CHECK_THAT(seen, Contains(".codex: removed"));
  CHECK(repo.read(".claude/settings.json") == settings);
  CHECK(repo.read(".mcp.json") == mcp);
  CHECK_FALSE(repo.exists(".codex"));
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 0);
}

TEST_CASE("attack: listing or searching a folder outside root through Gemini's tools is denied",
          "[e2e][attack][hook]") {
  Planted p;
  auto gemini = [&](const std::string& tool, const json& input) {
    Run r = p.repo.kai({"hook", "gemini"}, json{{"hook_event_name", "BeforeTool"},
                                                {"cwd", p.repo.path().string()},
                                                {"tool_name", tool},
                                                {"tool_input", input}}
                                               .dump());
    KAI_REQUIRE_EXIT(r, 0);
    return json::parse(r.out);
  };
  CHECK(gemini("list_directory", {{"dir_path", "/etc"}}).at("decision") == "deny");
  CHECK(gemini("glob", {{"pattern", "*"}, {"dir_path", p.repo.home().string()}}).at("decision") == "deny");
  CHECK(gemini("search_file_content", {{"pattern", "TOKEN"}, {"include", ".env"}}).at("decision") == "deny");
  CHECK(gemini("read_many_files", {{"paths", json::array({"a.txt"})}}).at("decision") == "deny");
  CHECK(gemini("list_directory", {{"dir_path", p.repo.abs("docs").string()}}) == json::object());
}
