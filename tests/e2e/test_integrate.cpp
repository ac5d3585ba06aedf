// kaicoder integrate HARNESS: on empty and on existing settings files (every
// key and comment kept), idempotent, --check exit 6, the owner's CONFIRM at
// a terminal (exit 3 without one), and each file written through kaicoder's
// own transaction (a proposal, a backup, a changelog entry, a rollback id).

#include <fstream>

#include <toml++/toml.h>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// JSON with // comments, as the harness reads it.
json settings(const TempRepo& repo, const std::string& rel) {
  return json::parse(repo.read(rel), nullptr, true, true);
}

bool has(const json& list, const std::string& v) {
  return list.is_array() && std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

TEST_CASE("integrate refuses without a terminal and writes nothing", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai({"integrate", "claude-code"});
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("terminal"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("integrate claude-code on an empty project wires it through proposals, and a second run changes nothing",
          "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 6);
  CHECK_FALSE(repo.exists(".mcp.json"));
  Run r = repo.kai_tty({"integrate", "claude-code"}, "CONFIRM");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("Write"));
  json mcp = settings(repo, ".mcp.json");
  CHECK(mcp.at("mcpServers").at("kaicoder").at("command") == "kaicoder");
  CHECK(mcp.at("mcpServers").at("kaicoder").at("args") == json::array({"mcp", "--root", repo.path().string()}));
  json s = settings(repo, ".claude/settings.json");
  for (const char* tool : {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}) CHECK(has(s.at("permissions").at("deny"), tool));
  CHECK(s.at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at("command") == "kaicoder hook claude-code");
  // Through the transaction: two write proposals, applied, logged, each with a rollback id.
  json entries = log_entries(repo);
  REQUIRE(entries.size() >= 2);
  CHECK(entries.at(0).at("action") == "write_file");
  CHECK(show_json(repo, 1).at("status") == "applied");
  CHECK(show_json(repo, 2).at("status") == "applied");
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 0);
  auto wired = repo.tree_snapshot();
  Run again = repo.kai_tty({"integrate", "claude-code"}, "CONFIRM");
  KAI_CHECK_EXIT(again, 0);
  CHECK_THAT(again.out, Contains("is wired"));
  CHECK(repo.tree_snapshot() == wired);
  // Rolling back the settings entry unwires it again.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 6);
}

TEST_CASE("integrate keeps every key and comment of existing settings", "[e2e][integrate]") {
  const std::string claude = "{\n  // the team's model\n  \"model\": \"opus\",\n  \"permissions\": {\n"
                             "    \"allow\": [\"Read\"], /* reads are fine */\n    \"deny\": [\"WebFetch\"]\n  },\n}\n";
  const std::string codex = "# team settings\nmodel = \"gpt-5-codex\" # pinned\nsandbox_mode = \"workspace-write\"\n\n"
                            "[profiles.fast]\nmodel = \"o4-mini\"\n";
  TempRepo repo{{".claude/settings.json", claude}, {".codex/config.toml", codex}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "claude-code"}, "CONFIRM"), 0);
  const std::string after = repo.read(".claude/settings.json");
  CHECK_THAT(after, Contains("// the team's model"));
  CHECK_THAT(after, Contains("/* reads are fine */"));
  json s = settings(repo, ".claude/settings.json");
  CHECK(s.at("model") == "opus");
  CHECK(has(s.at("permissions").at("allow"), "Read"));
  CHECK(has(s.at("permissions").at("deny"), "WebFetch"));
  CHECK(has(s.at("permissions").at("deny"), "Bash"));

  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "codex"}, "CONFIRM"), 0);
  const std::string toml_text = repo.read(".codex/config.toml");
  CHECK_THAT(toml_text, Contains("# team settings"));
  CHECK_THAT(toml_text, Contains("# pinned"));
  toml::table t = toml::parse(toml_text);
  CHECK(t["model"].value_or(std::string()) == "gpt-5-codex");
  CHECK(t["sandbox_mode"].value_or(std::string()) == "read-only");
  CHECK(t["profiles"]["fast"]["model"].value_or(std::string()) == "o4-mini");
  CHECK(t["features"]["shell_tool"].value_or(true) == false);
  CHECK(t["mcp_servers"]["kaicoder"]["tool_timeout_sec"].value_or(0) >= 600);
  CHECK(settings(repo, ".codex/hooks.json").at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at("command") ==
        "kaicoder hook codex");
  KAI_CHECK_EXIT(repo.kai({"integrate", "codex", "--check"}), 0);
}

TEST_CASE("integrate gemini and cursor write their settings and pass --check", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "gemini"}, "CONFIRM"), 0);
  json g = settings(repo, ".gemini/settings.json");
  CHECK(g.at("mcpServers").at("kaicoder").at("trust") == false);
  CHECK(has(g.at("tools").at("exclude"), "run_shell_command"));
  CHECK(g.at("hooks").at("BeforeTool").at(0).at("hooks").at(0).at("command") == "kaicoder hook gemini");
  KAI_CHECK_EXIT(repo.kai({"integrate", "gemini", "--check"}), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "cursor"}, "CONFIRM"), 0);
  json c = settings(repo, ".cursor/hooks.json");
  CHECK(c.at("version") == 1);
  CHECK(c.at("hooks").at("beforeShellExecution").at(0).at("failClosed") == true);
  CHECK(settings(repo, ".cursor/mcp.json").at("mcpServers").at("kaicoder").at("command") == "kaicoder");
  KAI_CHECK_EXIT(repo.kai({"integrate", "cursor", "--check"}), 0);
  // doctor sees both wired, and Claude Code and Codex absent.
  Run d = repo.kai({"doctor"});
  CHECK_THAT(d.out, Contains("gemini"));
  CHECK_THAT(d.out, Contains("wired"));
}

TEST_CASE("integrate writes nothing when the owner does not confirm", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"integrate", "cursor"}, "y");
  KAI_CHECK_EXIT(r, 4);
  CHECK(repo.tree_snapshot() == before);
  KAI_CHECK_EXIT(repo.kai({"integrate", "cursor", "--check"}), 6);
}

TEST_CASE("integrate --check reports a file it cannot edit as text, and integrate refuses it", "[e2e][integrate]") {
  TempRepo repo{{".codex/config.toml", "sandbox_mode = \"\"\"\nworkspace-write\"\"\"\n"}};
  repo.init();
  Run r = repo.kai({"integrate", "codex", "--check"});
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.out, Contains("by hand"));
  auto before = repo.tree_snapshot();
  KAI_CHECK_EXIT(repo.kai_tty({"integrate", "codex"}, "CONFIRM"), 6);
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("harness settings are confirm tier for proposals", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  for (const char* path : {".mcp.json", ".codex/config.toml", ".gemini/settings.json", ".cursor/hooks.json",
                           ".claude/settings.json"}) {
    INFO(path);
    Run r = repo.kai({"--json", "propose", "--path", path, "--content-file", "-", "--why", "unwire", "--dry-run"}, "{}\n");
    KAI_REQUIRE_EXIT(r, 0);
    CHECK(json_of(r).at("tier") == "confirm");
  }
}

TEST_CASE("integrate --user writes the owner's user settings with a backup and a changelog entry", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  const auto user_settings = repo.home() / ".claude" / "settings.json";
  std::filesystem::create_directories(user_settings.parent_path());
  {
    std::ofstream out(user_settings);
    out << "{\n  // mine\n  \"theme\": \"dark\"\n}\n";
  }
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--user", "--check"}), 6);
  Run r = repo.kai_tty({"integrate", "claude-code", "--user"}, "CONFIRM");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("outside root"));
  const std::string after = read_outside(user_settings);
  CHECK_THAT(after, Contains("// mine"));
  json s = json::parse(after, nullptr, true, true);
  CHECK(s.at("theme") == "dark");
  CHECK(has(s.at("permissions").at("deny"), "Bash"));
  // The backup beside it holds the old bytes; the changelog says how to restore it.
  bool backup = false;
  for (const auto& e : std::filesystem::directory_iterator(user_settings.parent_path()))
    if (e.path().filename().string().starts_with("settings.json.bak-kaicoder-"))
      backup = read_outside(e.path()) == "{\n  // mine\n  \"theme\": \"dark\"\n}\n";
  CHECK(backup);
  json entries = log_entries(repo);
  bool logged = false;
  for (const auto& e : entries)
    // The owner's home as kaicoder sees it (the test's home is mounted over it).
    if (e.at("files").dump().find("/.claude/settings.json") != std::string::npos)
      logged = e.at("rollback").get<std::string>().find("by hand") != std::string::npos;
  CHECK(logged);
  // The project's .mcp.json carries the server.
  CHECK(settings(repo, ".mcp.json").at("mcpServers").contains("kaicoder"));
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--user", "--check"}), 0);
}

TEST_CASE("integrate refuses a settings file that is a symlink out of root", "[e2e][integrate][attack]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  const auto outside = repo.home() / "planted.json";
  {
    std::ofstream out(outside);
    out << "{}\n";
  }
  std::filesystem::create_directories(repo.abs(".claude"));
  repo.symlink(".claude/settings.json", outside.string());
  Run r = repo.kai_tty({"integrate", "claude-code"}, "CONFIRM");
  KAI_CHECK_EXIT(r, 3);
  CHECK(read_outside(outside) == "{}\n");
  CHECK_FALSE(repo.exists(".mcp.json"));
}

TEST_CASE("doctor names a harness that still has a writer of its own", "[e2e][integrate][doctor]") {
  TempRepo repo{{".claude/settings.json", "{\"model\": \"opus\"}\n"}};
  repo.init();
  Run d = repo.kai({"doctor"});
  CHECK_THAT(d.out, Contains("harness claude-code"));
  CHECK_THAT(d.out, Contains("writer of its own"));
  CHECK_THAT(d.out, Contains("kaicoder integrate claude-code"));
  CHECK(d.out.find("harness codex") == std::string::npos);
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "claude-code"}, "CONFIRM"), 0);
  Run after = repo.kai({"doctor"});
  CHECK_THAT(after.out, Contains("kaicoder is its only writer"));
}
