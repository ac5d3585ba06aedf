// kaicoder integrate HARNESS: on empty and on existing settings files (every
// key and comment kept), idempotent, --check exit 6, the owner's CONFIRM at
// a terminal (exit 3 without one), and every file written in ONE of
// kaicoder's own transactions: one changeset proposal (project files) or one
// transaction outside root (--user), one changelog entry, one rollback id
// that restores every file byte for byte and removes the created ones.

#include <csignal>
#include <fstream>

#include <toml++/toml.h>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// JSON with // comments, as the harness reads it.
json settings(const TempRepo& repo, const std::string& rel) { return json::parse(repo.read(rel), nullptr, true, true); }

// The hook command integrate wires: this kaicoder, by its absolute path.
std::string hook_cmd(const std::string& harness) { return std::string(kaicoder_bin()) + " hook " + harness; }

bool has(const json& list, const std::string& v) {
  return list.is_array() && std::find(list.begin(), list.end(), v) != list.end();
}

// Backups stay after a rollback (SPEC §5): everything else must be as before.
std::map<std::string, std::string> without_backups(std::map<std::string, std::string> t) {
  std::erase_if(t, [](const auto& kv) { return kv.first.find(".bak-kaicoder-") != std::string::npos; });
  return t;
}

// The harness files in the test's private home (not kaicoder's own folder),
// path → bytes. Folders are left out: a rollback keeps, beside a file it
// removes, the backup of what it removed, and so the folder.
std::map<std::string, std::string> home_snapshot(const TempRepo& repo) {
  std::map<std::string, std::string> out;
  for (auto it = std::filesystem::recursive_directory_iterator(repo.home());
       it != std::filesystem::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(repo.home()).generic_string();
    if (rel == ".config" || rel == ".cache" || rel == ".npm") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) out[rel] = read_outside(it->path());
  }
  return out;
}

// The newest changelog entry, which must be the only one added since `before` entries.
json one_new_entry(const TempRepo& repo, size_t before) {
  json entries = log_entries(repo);
  REQUIRE(entries.size() == before + 1);
  return entries.at(0);
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

TEST_CASE(
    "integrate claude-code on an empty project wires it through one changeset, and its rollback id undoes it whole",
    "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 6);
  CHECK_FALSE(repo.exists(".mcp.json"));
  const auto before = tree_but_log(repo);
  const size_t entries_before = log_entries(repo).size();
  Run r = repo.kai_tty({"integrate", "claude-code"}, "CONFIRM");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("Write"));
  json mcp = settings(repo, ".mcp.json");
  // The committed files name no machine path: the server is `kaicoder mcp`
  // from PATH, serving the root the harness starts it in.
  CHECK(mcp.at("mcpServers").at("kaicoder").at("command") == "kaicoder");
  CHECK(mcp.at("mcpServers").at("kaicoder").at("args") == json::array({"mcp"}));
  json s = settings(repo, ".claude/settings.json");
  for (const char* tool : {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"})
    CHECK(has(s.at("permissions").at("deny"), tool));
  CHECK_FALSE(s.contains("hooks"));
  CHECK(repo.read(".claude/settings.json").find(kaicoder_bin()) == std::string::npos);
  // The hook names this kaicoder by its absolute path, in the local settings
  // git ignores, and blocks the call when it cannot run.
  json local = settings(repo, ".claude/settings.local.json");
  const json& hook = local.at("hooks").at("PreToolUse").at(0).at("hooks").at(0);
  CHECK(hook.at("command") == hook_cmd("claude-code"));
  CHECK(hook.at("command").get<std::string>().front() == '/');
  CHECK(hook.at("onFailure") == "block");
  CHECK_THAT(repo.read(".gitignore"), Contains(".claude/settings.local.json\n"));
  CHECK_THAT(r.out, Contains("when its hook cannot start"));
  // One transaction: one changeset proposal, applied, one changelog entry
  // listing every file, one rollback id.
  json e = one_new_entry(repo, entries_before);
  CHECK(e.at("kind") == "changeset");
  CHECK(e.at("action") == "apply_changeset");
  REQUIRE(e.at("files").size() == 4);
  CHECK(e.at("files").dump().find(".mcp.json") != std::string::npos);
  CHECK(e.at("files").dump().find(".claude/settings.json") != std::string::npos);
  CHECK(e.at("files").dump().find(".claude/settings.local.json") != std::string::npos);
  const std::string id = e.at("rollback_id");
  CHECK_THAT(r.out, Contains("kaicoder rollback " + id));
  json p = show_json(repo, 1);
  CHECK(p.at("status") == "applied");
  CHECK(p.at("kind") == "changeset");
  CHECK(p.at("tier") == "confirm");
  KAI_CHECK_EXIT(repo.kai({"show", "2"}), 7);  // no second proposal
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 0);
  // Idempotent: a second run writes nothing and logs nothing.
  auto wired = repo.tree_snapshot();
  Run again = repo.kai_tty({"integrate", "claude-code"}, "CONFIRM");
  KAI_CHECK_EXIT(again, 0);
  CHECK_THAT(again.out, Contains("is wired"));
  CHECK(repo.tree_snapshot() == wired);
  CHECK(log_entries(repo).size() == entries_before + 1);
  // The one rollback id removes both created files (a rollback backs up
  // what it replaces, so .claude/ keeps that backup).
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(without_backups(tree_but_log(repo)) == before);
  CHECK_FALSE(repo.exists(".mcp.json"));
  CHECK_FALSE(repo.exists(".claude/settings.json"));
  CHECK_FALSE(repo.exists(".claude/settings.local.json"));
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 6);
}

TEST_CASE("integrate keeps every key and comment of existing settings", "[e2e][integrate]") {
  const std::string claude =
      "{\n  // the team's model\n  \"model\": \"opus\",\n  \"permissions\": {\n"
      "    \"allow\": [\"Read\"], /* reads are fine */\n    \"deny\": [\"WebFetch\"]\n  },\n}\n";
  const std::string codex =
      "# team settings\nmodel = \"gpt-5-codex\" # pinned\nsandbox_mode = \"workspace-write\"\n\n"
      "[profiles.fast]\nmodel = \"o4-mini\"\n";
  TempRepo repo{{".claude/settings.json", claude}, {".codex/config.toml", codex}};
  repo.init();
  const auto before = tree_but_log(repo);
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
  CHECK(t["features"]["unified_exec"].value_or(true) == false);
  CHECK(t["mcp_servers"]["kaicoder"]["tool_timeout_sec"].value_or(0) >= 600);
  CHECK(settings(repo, ".codex/hooks.json").at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at("command") ==
        hook_cmd("codex"));
  CHECK(t["mcp_servers"]["kaicoder"]["command"].value_or(std::string()) == "kaicoder");
  KAI_CHECK_EXIT(repo.kai({"integrate", "codex", "--check"}), 0);
  // Codex's two files were one entry; its rollback id gives back the team's
  // config.toml byte for byte and removes hooks.json, which it created.
  json e = log_entries(repo).at(0);
  CHECK(e.at("action") == "apply_changeset");
  REQUIRE(e.at("files").size() == 3);  // config.toml, hooks.json and .gitignore
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id").get<std::string>()}, "y"), 0);
  CHECK(repo.read(".codex/config.toml") == codex);
  CHECK_FALSE(repo.exists(".codex/hooks.json"));
  // And Claude Code's entry, the one before it, gives back its settings.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", log_entries(repo).at(2).at("rollback_id").get<std::string>()}, "y"), 0);
  CHECK(without_backups(tree_but_log(repo)) == before);
}

TEST_CASE("integrate gemini and cursor write their settings and pass --check", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "gemini"}, "CONFIRM"), 0);
  json g = settings(repo, ".gemini/settings.json");
  CHECK(g.at("mcpServers").at("kaicoder").at("trust") == false);
  CHECK(has(g.at("tools").at("exclude"), "run_shell_command"));
  CHECK(g.at("hooks").at("BeforeTool").at(0).at("hooks").at(0).at("command") == hook_cmd("gemini"));
  CHECK_THAT(repo.read(".gitignore"), Contains(".gemini/settings.json\n"));
  KAI_CHECK_EXIT(repo.kai({"integrate", "gemini", "--check"}), 0);
  Run cr = repo.kai_tty({"--json", "integrate", "cursor"}, "CONFIRM");
  KAI_REQUIRE_EXIT(cr, 0);
  json out = json_of(cr);
  CHECK(out.at("ok") == true);
  CHECK(out.at("proposal") == 2);  // gemini's changeset was 1
  CHECK(out.at("rollback_id") == log_entries(repo).at(0).at("rollback_id"));
  REQUIRE(out.at("written").size() == 3);  // mcp.json, hooks.json and .gitignore
  CHECK(out.at("written").at(0).at("backup") == "");
  json c = settings(repo, ".cursor/hooks.json");
  CHECK(c.at("version") == 1);
  CHECK(c.at("hooks").at("preToolUse").at(0).at("command") == hook_cmd("cursor"));
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
  for (const char* path :
       {".mcp.json", ".codex/config.toml", ".gemini/settings.json", ".cursor/hooks.json", ".claude/settings.json"}) {
    INFO(path);
    Run r =
        repo.kai({"--json", "propose", "--path", path, "--content-file", "-", "--why", "unwire", "--dry-run"}, "{}\n");
    KAI_REQUIRE_EXIT(r, 0);
    CHECK(json_of(r).at("tier") == "confirm");
  }
}

TEST_CASE("integrate --user wires Claude Code's user files in one transaction outside root, undone by one rollback id",
          "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  const auto user_settings = repo.home() / ".claude" / "settings.json";
  const auto claude_json = repo.home() / ".claude.json";
  std::filesystem::create_directories(user_settings.parent_path());
  const std::string settings_text = "{\n  // mine\n  \"theme\": \"dark\"\n}\n";
  // Claude Code's own state file: large, many keys, a project-scoped server.
  const std::string state_text =
      "{\n  \"numStartups\": 34,\n  \"oauthAccount\": {\"emailAddress\": \"me@example.com\"},\n"
      "  \"projects\": {\n    \"/home/me/p\": {\"allowedTools\": [], \"mcpServers\": {\"db\": {\"command\": "
      "\"db-mcp\"}}}\n  },\n"
      "  \"mcpServers\": {\n    \"memory\": {\"type\": \"stdio\", \"command\": \"npx\", \"args\": [\"-y\", \"mem\"]}\n "
      " }\n}\n";
  {
    std::ofstream(user_settings) << settings_text;
    std::ofstream(claude_json) << state_text;
  }
  const auto home_before = home_snapshot(repo);
  const auto tree_before = tree_but_log(repo);
  const size_t entries_before = log_entries(repo).size();
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--user", "--check"}), 6);
  Run r = repo.kai_tty({"integrate", "claude-code", "--user"}, "CONFIRM");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("outside root"));
  // ~/.claude.json: kaicoder at the top level, every other key as it was.
  json state = json::parse(read_outside(claude_json));
  CHECK(state.at("mcpServers").at("kaicoder").at("type") == "stdio");
  CHECK(state.at("mcpServers").at("kaicoder").at("command") == kaicoder_bin());
  // User level: no --root, so it serves the project the harness starts it in.
  CHECK(state.at("mcpServers").at("kaicoder").at("args") == json::array({"mcp"}));
  CHECK(state.at("mcpServers").at("memory").at("command") == "npx");
  CHECK(state.at("numStartups") == 34);
  CHECK(state.at("oauthAccount").at("emailAddress") == "me@example.com");
  CHECK(state.at("projects").at("/home/me/p").at("mcpServers").size() == 1);
  // ~/.claude/settings.json: its comment kept, the writers denied, the hook wired.
  const std::string after = read_outside(user_settings);
  CHECK_THAT(after, Contains("// mine"));
  json s = json::parse(after, nullptr, true, true);
  CHECK(s.at("theme") == "dark");
  CHECK(has(s.at("permissions").at("deny"), "Bash"));
  CHECK(s.at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at("command") == hook_cmd("claude-code"));
  CHECK(s.at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at("onFailure") == "block");
  CHECK_FALSE(s.contains("enabledMcpjsonServers"));
  // Nothing in the project: user scope registers the server in the home.
  CHECK(tree_but_log(repo) == tree_before);
  // One changelog entry for both files, each with its backup beside it.
  json e = one_new_entry(repo, entries_before);
  CHECK(e.at("action") == "apply_changeset");
  REQUIRE(e.at("files").size() == 2);
  CHECK(e.at("files").dump().find("/.claude.json") != std::string::npos);
  CHECK(e.at("files").dump().find("/.claude/settings.json") != std::string::npos);
  const std::string id = e.at("rollback_id");
  CHECK(read_outside(repo.home() / (".claude.json.bak-kaicoder-" + id)) == state_text);
  CHECK(read_outside(repo.home() / ".claude" / ("settings.json.bak-kaicoder-" + id)) == settings_text);
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--user", "--check"}), 0);
  // Idempotent.
  const auto wired = home_snapshot(repo);
  Run again = repo.kai_tty({"integrate", "claude-code", "--user"}, "CONFIRM");
  KAI_CHECK_EXIT(again, 0);
  CHECK_THAT(again.out, Contains("is wired"));
  CHECK(home_snapshot(repo) == wired);
  // A rollback outside root is decided at a terminal: without one, nothing moves.
  Run no_tty = repo.kai({"rollback", id});
  KAI_CHECK_EXIT(no_tty, 3);
  CHECK(home_snapshot(repo) == wired);
  // The one rollback id gives both files back byte for byte.
  Run back = repo.kai_tty({"rollback", id}, "y");
  KAI_REQUIRE_EXIT(back, 0);
  CHECK_THAT(back.out, Contains("~/.claude.json"));
  CHECK(without_backups(home_snapshot(repo)) == home_before);
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--user", "--check"}), 6);
}

TEST_CASE("integrate --user on an empty home creates the user files, and the rollback id removes them",
          "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  const auto home_before = home_snapshot(repo);
  for (const char* h : {"claude-code", "gemini"}) {
    INFO(h);
    Run r = repo.kai_tty({"integrate", h, "--user"}, "CONFIRM");
    KAI_REQUIRE_EXIT(r, 0);
    KAI_CHECK_EXIT(repo.kai({"integrate", h, "--user", "--check"}), 0);
  }
  CHECK(json::parse(read_outside(repo.home() / ".claude.json")).at("mcpServers").contains("kaicoder"));
  CHECK(json::parse(read_outside(repo.home() / ".gemini" / "settings.json"))
            .at("mcpServers")
            .at("kaicoder")
            .at("trust") == false);
  CHECK_FALSE(repo.exists(".mcp.json"));
  // Newest first: gemini's entry, then Claude Code's.
  json entries = log_entries(repo);
  for (size_t i = 0; i < 2; ++i)
    KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", entries.at(i).at("rollback_id").get<std::string>()}, "y"), 0);
  CHECK(without_backups(home_snapshot(repo)) == home_before);  // every created file gone
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

TEST_CASE("a crash at any step of integrate --user leaves both user files old or both new", "[e2e][integrate][crash]") {
  std::vector<std::string> points{"after-intent",    "after-backup:1", "after-replace:1", "after-backup:2",
                                  "after-replace:2", "after-journal",  "after-changelog", "after-status"};
  // Made once, then restored before each fault point.
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  const auto user_settings = repo.home() / ".claude" / "settings.json";
  const auto claude_json = repo.home() / ".claude.json";
  std::filesystem::create_directories(user_settings.parent_path());
  std::ofstream(user_settings) << "{\"theme\": \"dark\"}\n";
  std::ofstream(claude_json) << "{\"numStartups\": 3}\n";
  const auto old_home = home_snapshot(repo);
  repo.save();
  for (const std::string& point : points) {
    INFO("fault " << point);
    repo.restore();
    Run crashed = repo.kai_tty({"integrate", "claude-code", "--user"}, "CONFIRM", {{"KAICODER_FAULT", point}});
    INFO(crashed.all());
    REQUIRE(crashed.killed_by(SIGKILL));
    // The next command that takes the lock finishes or undoes it.
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "next"}, "next\n"), 0);
    CHECK(repo.ls(".kaicoder/intents").empty());
    const auto now = without_backups(home_snapshot(repo));
    const bool wired = repo.kai({"integrate", "claude-code", "--user", "--check"}).exit_code == 0;
    if (!wired) {
      CHECK(now == old_home);
      CHECK(home_snapshot(repo) == old_home);  // and no backup left behind
    } else {
      json e = log_entries(repo).at(0);
      REQUIRE(e.at("action") == "apply_changeset");
      KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id").get<std::string>()}, "y"), 0);
      CHECK(without_backups(home_snapshot(repo)) == old_home);
    }
  }
}

TEST_CASE("a wired hook that is not an absolute path to this kaicoder fails integrate --check and doctor",
          "[e2e][integrate][doctor]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "claude-code"}, "CONFIRM"), 0);
  KAI_REQUIRE_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 0);
  auto harness_line = [&] {
    Run d = repo.kai({"--json", "doctor"});
    json j = json_of(d);
    for (const auto& c : j.at("checks"))
      if (c.at("name") == "harness claude-code") return std::make_pair(d.exit_code, c);
    return std::make_pair(d.exit_code, json());
  };
  auto [ok_rc, ok_line] = harness_line();
  CHECK(ok_line.at("level") == "ok");
  const std::string local = repo.read(".claude/settings.local.json");
  // A hook that names a kaicoder that is not there, one found through PATH,
  // and one that is not kaicoder: each fails both checks, naming what is wrong.
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"/nonexistent/kaicoder hook claude-code", "not an executable file"},
      {"kaicoder hook claude-code", "absolute path"},
      {"/bin/true --kaicoder hook claude-code", ""},
  };
  for (const auto& [command, why] : broken) {
    INFO(command);
    std::string text = local;
    const std::string wired = hook_cmd("claude-code");
    text.replace(text.find(wired), wired.size(), command);
    repo.write(".claude/settings.local.json", text);
    Run c = repo.kai({"integrate", "claude-code", "--check"});
    KAI_CHECK_EXIT(c, 6);
    CHECK_THAT(c.out, Contains("missing"));
    if (!why.empty()) CHECK_THAT(c.out, Contains(why));
    auto [rc, line] = harness_line();
    if (!why.empty()) {
      CHECK(rc == 1);
      CHECK(line.at("level") == "fail");
      CHECK_THAT(line.at("detail").get<std::string>(), Contains(why));
    } else {
      CHECK(line.at("level") != "ok");
    }
  }
  // integrate wires it again, by its absolute path.
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "claude-code"}, "CONFIRM"), 0);
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 0);
}

TEST_CASE("integrate refuses to write this machine's path into a settings file git tracks", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}, {".cursor/hooks.json", "{\"version\": 1}\n"}};
  repo.init();  // the team's hooks.json is in the first commit: git tracks it
  const auto before = tree_but_log(repo);
  Run r = repo.kai_tty({"integrate", "cursor"}, "CONFIRM");
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.out, Contains("git tracks it"));
  CHECK_THAT(r.out, Contains("--user"));
  CHECK(tree_but_log(repo) == before);
}

TEST_CASE("a bare kaicoder hook an earlier integrate left in .claude/settings.json fails --check and doctor, and "
          "integrate removes it",
          "[e2e][integrate][doctor]") {
  // What integrate wrote before hooks named kaicoder by its path, beside a hook of the team's own.
  const std::string old_settings = R"({
  // the team's settings
  "permissions": {"deny": ["Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"]},
  "hooks": {
    "PreToolUse": [
      {"matcher": "*", "hooks": [{"type": "command", "command": "kaicoder hook claude-code", "timeout": 60}]},
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
    ]
  },
  "enabledMcpjsonServers": ["kaicoder"]
}
)";
  TempRepo repo{{"a.txt", "x\n"}, {".claude/settings.json", old_settings}};
  repo.init();
  auto harness_line = [&] {
    Run d = repo.kai({"--json", "doctor"});
    json j = json_of(d);  // kept: the loop reads into it
    for (const auto& c : j.at("checks"))
      if (c.at("name") == "harness claude-code") return std::make_pair(d.exit_code, c);
    return std::make_pair(d.exit_code, json());
  };
  Run c = repo.kai({"integrate", "claude-code", "--check"});
  KAI_CHECK_EXIT(c, 6);
  CHECK_THAT(c.out, Contains("`kaicoder hook claude-code` is in .claude/settings.json"));
  auto [rc, line] = harness_line();
  CHECK(rc == 1);
  CHECK(line.at("level") == "fail");
  CHECK_THAT(line.at("detail").get<std::string>(), Contains(".claude/settings.json"));
  // integrate removes it with its comma, keeps the team's hook and comment,
  // and wires the one that names this kaicoder in the local settings.
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "claude-code"}, "CONFIRM"), 0);
  const std::string text = repo.read(".claude/settings.json");
  CHECK(text.find("kaicoder hook") == std::string::npos);
  CHECK_THAT(text, Contains("// the team's settings"));
  json s = settings(repo, ".claude/settings.json");
  REQUIRE(s.at("hooks").at("PreToolUse").size() == 1);
  CHECK(s.at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at("command") == "./lint.sh");
  CHECK(settings(repo, ".claude/settings.local.json").at("hooks").at("PreToolUse").at(0).at("hooks").at(0).at(
            "command") == hook_cmd("claude-code"));
  KAI_CHECK_EXIT(repo.kai({"integrate", "claude-code", "--check"}), 0);
  auto [ok_rc, ok_line] = harness_line();
  CHECK(ok_line.at("level") == "ok");
}

TEST_CASE("a kaicoder hook that would not run beside one that works is named and removed", "[e2e][integrate]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "cursor"}, "CONFIRM"), 0);
  // A second entry on one event, naming a kaicoder that is not there: Cursor
  // would fail closed on it and block every call.
  std::string text = repo.read(".cursor/hooks.json");
  const std::string wired = hook_cmd("cursor");
  const size_t at = text.find(wired);
  REQUIRE(at != std::string::npos);
  const size_t entry = text.rfind('{', at);
  const size_t end = text.find('}', at) + 1;
  const std::string stale = "/nonexistent/kaicoder hook cursor";
  std::string copy = text.substr(entry, end - entry);
  copy.replace(copy.find(wired), wired.size(), stale);
  text.insert(entry, copy + ", ");
  repo.write(".cursor/hooks.json", text);
  Run c = repo.kai({"integrate", "cursor", "--check"});
  KAI_CHECK_EXIT(c, 6);
  CHECK_THAT(c.out, Contains("/nonexistent/kaicoder"));
  CHECK_THAT(c.out, Contains("not an executable file"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"integrate", "cursor"}, "CONFIRM"), 0);
  CHECK(repo.read(".cursor/hooks.json").find(stale) == std::string::npos);
  CHECK(settings(repo, ".cursor/hooks.json").at("hooks").at("preToolUse").size() == 1);
  KAI_CHECK_EXIT(repo.kai({"integrate", "cursor", "--check"}), 0);
}
