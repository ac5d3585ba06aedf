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
  // the run made there is an effect no proposal could make, never kept, and
  // the result says so.
  CHECK_THAT(seen, Contains("NEVER") && Contains(".codex/config.toml created"));
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

namespace {

// A repository with a secret at the top, in sub/ and beside docs, and the
// owner's key in the test's private home.
struct Secrets {
  TempRepo repo{{"a.txt", "a\n"},
                {".env", "TOKEN=s3cr3t-top\n"},
                {"docs/readme.md", "hi\n"},
                {"sub/.env", "TOKEN=s3cr3t-sub\n"},
                {"sub/notes.md", "notes\n"}};
  Secrets() { repo.init(); }
  std::string key() const { return (repo.home() / ".config" / "kaicoder" / "key").string(); }
};

// Each harness's call as it sends it on the hook's stdin.
std::string claude_call(const TempRepo& repo, const std::string& tool, const json& input) {
  return json{{"session_id", "5f0c0d1e-0000-4000-8000-000000000001"},
              {"transcript_path", "/tmp/transcript.jsonl"},
              {"cwd", repo.path().string()},
              {"permission_mode", "default"},
              {"hook_event_name", "PreToolUse"},
              {"tool_name", tool},
              {"tool_input", input},
              {"tool_use_id", "toolu_01"}}
      .dump();
}

std::string gemini_call(const TempRepo& repo, const std::string& tool, const json& input) {
  return json{{"session_id", "s1"},
              {"transcript_path", "/tmp/t.json"},
              {"cwd", repo.path().string()},
              {"hook_event_name", "BeforeTool"},
              {"timestamp", "2026-09-01T10:00:00Z"},
              {"tool_name", tool},
              {"tool_input", input}}
      .dump();
}

std::string cursor_pre(const TempRepo& repo, const std::string& tool, const json& input) {
  return json{{"conversation_id", "c1"},
              {"generation_id", "g1"},
              {"hook_event_name", "preToolUse"},
              {"workspace_roots", json::array({repo.path().string()})},
              {"cwd", repo.path().string()},
              {"tool_name", tool},
              {"tool_input", input}}
      .dump();
}

std::string cursor_read(const TempRepo& repo, const std::string& file) {
  return json{{"conversation_id", "c1"},
              {"generation_id", "g1"},
              {"hook_event_name", "beforeReadFile"},
              {"workspace_roots", json::array({repo.path().string()})},
              {"file_path", file},
              {"content", ""}}
      .dump();
}

// The reason, or "" when the call passes, in each harness's format.
std::string verdict(const TempRepo& repo, const std::string& harness, const std::string& payload) {
  Run r = repo.kai({"hook", harness}, payload);
  INFO(harness << ": " << payload.substr(0, 300) << "\n" << r.all());
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK(r.out.find("s3cr3t") == std::string::npos);
  if (harness == "gemini") return j.empty() ? "" : j.at("reason").get<std::string>();
  if (harness == "cursor") return j.at("permission") == "allow" ? "" : j.at("agent_message").get<std::string>();
  return j.empty() ? "" : j.at("hookSpecificOutput").at("permissionDecisionReason").get<std::string>();
}

}  // namespace

TEST_CASE("attack: a Grep glob the harness splits on whitespace or commas cannot reach a secret, in every harness",
          "[e2e][attack][hook]") {
  Secrets s;
  const TempRepo& repo = s.repo;
  const auto before = tree_but_log(repo);
  for (const std::string glob : {"*.md .env", "*.md,.env", "*.md\t.env", "*.md, .env", "*.md ,, .env"}) {
    INFO("glob: " << glob);
    CHECK_THAT(verdict(repo, "claude-code", claude_call(repo, "Grep", {{"pattern", "TOKEN"}, {"glob", glob}})),
               Contains(".env"));
    CHECK_THAT(verdict(repo, "codex", claude_call(repo, "Grep", {{"pattern", "TOKEN"}, {"glob", glob}})),
               Contains(".env"));
    CHECK_THAT(verdict(repo, "codex", claude_call(repo, "grep_files", {{"pattern", "TOKEN"}, {"include", glob}})),
               Contains(".env"));
    CHECK_THAT(verdict(repo, "cursor", cursor_pre(repo, "Grep", {{"pattern", "TOKEN"}, {"glob", glob}})),
               Contains(".env"));
    CHECK_THAT(verdict(repo, "gemini",
                       gemini_call(repo, "grep_search", {{"pattern", "TOKEN"}, {"include_pattern", glob}})),
               Contains(".env"));
  }
  // The one glob alone passes: it reaches markdown only (Claude Code leaves .git out).
  CHECK(verdict(repo, "claude-code", claude_call(repo, "Grep", {{"pattern", "TOKEN"}, {"glob", "*.md"}})).empty());
  CHECK(verdict(repo, "gemini", gemini_call(repo, "grep_search", {{"pattern", "x"}, {"include_pattern", "*.md"}}))
            .empty());
  CHECK(tree_but_log(repo) == before);
}

TEST_CASE("attack: a glob with a slash, matched from the session's folder, cannot reach a secret below the search",
          "[e2e][attack][hook]") {
  Secrets s;
  const TempRepo& repo = s.repo;
  const std::string sub = repo.abs("sub").string();
  const auto before = tree_but_log(repo);
  for (const std::string glob : {"sub/.env", "sub/*", "**/.env", "s*/.env", "sub/.e*"}) {
    INFO("glob: " << glob);
    CHECK_THAT(verdict(repo, "claude-code",
                       claude_call(repo, "Grep", {{"pattern", "TOKEN"}, {"path", sub}, {"glob", glob}})),
               Contains("sub/.env"));
    CHECK_THAT(verdict(repo, "codex", claude_call(repo, "Grep", {{"pattern", "TOKEN"}, {"path", sub}, {"glob", glob}})),
               Contains("sub/.env"));
    CHECK_THAT(verdict(repo, "codex",
                       claude_call(repo, "grep_files", {{"pattern", "TOKEN"}, {"path", sub}, {"include", glob}})),
               Contains("sub/.env"));
    CHECK_THAT(verdict(repo, "cursor", cursor_pre(repo, "Grep", {{"pattern", "TOKEN"}, {"path", sub}, {"glob", glob}})),
               Contains("sub/.env"));
    CHECK_THAT(verdict(repo, "gemini",
                       gemini_call(repo, "grep_search",
                                   {{"pattern", "TOKEN"}, {"dir_path", "sub"}, {"include_pattern", glob}})),
               Contains("sub/.env"));
  }
  // git grep reads a pathspec that names a folder as everything below it.
  CHECK_THAT(verdict(repo, "gemini", gemini_call(repo, "grep_search", {{"pattern", "TOKEN"}, {"include_pattern", "sub"}})),
             Contains("sub/.env"));
  // Patterns each search reads its own way are denied as such.
  for (const std::string glob : {"{a,.env}", "[.]env", "\\.env", "!*.md", "/sub/.env", ":(top)sub", "../x"}) {
    INFO("glob: " << glob);
    CHECK_THAT(verdict(repo, "claude-code", claude_call(repo, "Grep", {{"pattern", "TOKEN"}, {"glob", glob}})),
               Contains("cannot"));
  }
  CHECK(tree_but_log(repo) == before);
  CHECK(json_of(repo.kai({"--json", "list"})).at("proposals").empty());
}

TEST_CASE("attack: a Read of a path a harness would trim or expand is denied, in every harness", "[e2e][attack][hook]") {
  Secrets s;
  const TempRepo& repo = s.repo;
  const std::string key = s.key();
  const auto before = tree_but_log(repo);
  const std::vector<std::string> paths = {" " + key,
                                          key + " ",
                                          "\t" + key,
                                          key + "\n",
                                          "~/.config/kaicoder/key",
                                          "$HOME/.config/kaicoder/key",
                                          repo.abs("a.txt").string() + "\\",
                                          repo.abs(".env.").string(),
                                          repo.abs("a.txt").string() + "/",
                                          std::string("\xc2\xa0") + key,
                                          repo.abs(".e\xe2\x80\x8bnv").string(),
                                          repo.abs("\xe2\x84\xaa.txt").string()};  // KELVIN SIGN: 'K' under NFC
  for (const std::string& p : paths) {
    INFO("path: " << p);
    CHECK_FALSE(verdict(repo, "claude-code", claude_call(repo, "Read", {{"file_path", p}})).empty());
    CHECK_FALSE(verdict(repo, "codex", claude_call(repo, "Read", {{"file_path", p}})).empty());
    CHECK_FALSE(verdict(repo, "codex", claude_call(repo, "read_file", {{"file_path", p}})).empty());
    CHECK_FALSE(verdict(repo, "gemini", gemini_call(repo, "read_file", {{"file_path", p}})).empty());
    CHECK_FALSE(verdict(repo, "cursor", cursor_read(repo, p)).empty());
    CHECK_FALSE(verdict(repo, "cursor", cursor_pre(repo, "Read", {{"file_path", p}})).empty());
  }
  // The same file, named plainly, is read; a name in another script too.
  CHECK(verdict(repo, "claude-code", claude_call(repo, "Read", {{"file_path", repo.abs("a.txt").string()}})).empty());
  CHECK(verdict(repo, "claude-code", claude_call(repo, "Read", {{"file_path", repo.abs("résumé.txt").string()}}))
            .empty());
  // A write to such a path is not staged under another name.
  CHECK_FALSE(
      verdict(repo, "claude-code", claude_call(repo, "Write", {{"file_path", " a.txt"}, {"content", "x"}})).empty());
  CHECK(json_of(repo.kai({"--json", "list"})).at("proposals").empty());
  CHECK(tree_but_log(repo) == before);
}

TEST_CASE("attack: reads under .git/ are refused alike by the hook and by MCP read_file and kaicoder read",
          "[e2e][attack][hook][mcp]") {
  Secrets s;
  TempRepo& repo = s.repo;
  repo.write(".git/config", "[remote \"origin\"]\n\turl = https://user:ghp_tok3n@example.com/r.git\n");
  const auto before = tree_but_log(repo);
  CHECK_THAT(verdict(repo, "claude-code", claude_call(repo, "Read", {{"file_path", repo.abs(".git/config").string()}})),
             Contains(".git/"));
  Run r = repo.kai({"read", ".git/config"});
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains(".git/"));
  CHECK(r.out.find("ghp_tok3n") == std::string::npos);
  const std::string call =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":".git/config"}}})"
      "\n"
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_dir","arguments":{"path":".git"}}})"
      "\n";
  Run m = repo.kai({"mcp"}, call);
  KAI_CHECK_EXIT(m, 0);
  CHECK(m.out.find("ghp_tok3n") == std::string::npos);
  CHECK(m.out.find("HEAD") == std::string::npos);
  size_t denied_count = 0;
  for (size_t at = 0; (at = m.out.find("inside .git/", at)) != std::string::npos; ++at) ++denied_count;
  CHECK(denied_count >= 2);
  CHECK(tree_but_log(repo) == before);
}
