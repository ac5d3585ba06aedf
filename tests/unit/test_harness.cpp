// lib/harness: the hook payloads of each harness read into one ToolCall,
// and settings files edited as text with every key and comment kept.

#include <catch2/catch.hpp>

#include "lib/harness/json_text.hpp"
#include "lib/harness/toml_text.hpp"
#include "lib/harness/tool_call.hpp"

using namespace kai;
using namespace kai::harness;
using json = nlohmann::json;
using Catch::Matchers::Contains;

TEST_CASE("Claude Code payloads are read into tool calls", "[hook]") {
  auto w =
      parse_tool_call(Harness::claude_code,
                      R"({"cwd": "/r", "tool_name": "Write", "tool_input": {"file_path": "/r/a", "content": "x"}})");
  REQUIRE(w);
  CHECK(w->op == Op::write);
  CHECK(w->path == "/r/a");
  CHECK(w->cwd == "/r");
  auto e = parse_tool_call(Harness::claude_code, R"({"tool_name": "MultiEdit", "tool_input": {"file_path": "a",
      "edits": [{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d", "replace_all": true}]}})");
  REQUIRE(e);
  CHECK(e->op == Op::edit);
  REQUIRE(e->edits.size() == 2);
  CHECK_FALSE(e->edits[0].all);
  CHECK(e->edits[1].all);
  auto g =
      parse_tool_call(Harness::claude_code, R"({"tool_name": "Grep", "tool_input": {"pattern": "x", "glob": "*.c"}})");
  REQUIRE(g);
  CHECK(g->op == Op::search);
  CHECK(g->glob == "*.c");
  CHECK(g->reads_contents);
  auto u = parse_tool_call(Harness::claude_code, R"({"tool_name": "Frobnicate", "tool_input": {}})");
  REQUIRE(u);
  CHECK(u->op == Op::unknown);
  auto m = parse_tool_call(Harness::claude_code, R"({"tool_name": "mcp__kaicoder__read_file", "tool_input": {}})");
  REQUIRE(m);
  CHECK(m->op == Op::pass);
  auto other = parse_tool_call(Harness::claude_code, R"({"tool_name": "mcp__kaicoder_evil__x", "tool_input": {}})");
  REQUIRE(other);
  CHECK(other->op == Op::unknown);
}

TEST_CASE("bad hook payloads are usage errors", "[hook]") {
  for (
      const char* text :
      {"", "{", "[]", R"({"tool_input": {}})", R"({"tool_name": "Write", "tool_input": []})",
       R"({"tool_name": "Write", "tool_input": {"file_path": "a"}})",
       R"({"tool_name": "Edit", "tool_input": {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}})"}) {
    INFO(text);
    auto c = parse_tool_call(Harness::claude_code, text);
    REQUIRE_FALSE(c);
    CHECK(c.error().code == Errc::usage);
  }
}

TEST_CASE("Codex, Gemini and Cursor payloads are read into tool calls", "[hook]") {
  auto b = parse_tool_call(Harness::codex, R"({"tool_name": "Bash", "tool_input": {"command": ["ls", "-l"]}})");
  REQUIRE(b);
  CHECK(b->op == Op::shell);
  CHECK(b->argv == std::vector<std::string>{"ls", "-l"});
  auto p =
      parse_tool_call(Harness::codex, R"({"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch"}})");
  REQUIRE(p);
  CHECK(p->op == Op::patch);
  auto r = parse_tool_call(Harness::gemini, R"({"cwd": "/r", "tool_name": "run_shell_command",
      "tool_input": {"command": "ls", "dir_path": "src"}})");
  REQUIRE(r);
  CHECK(r->op == Op::shell);
  CHECK(r->cwd == "/r/src");
  auto rep = parse_tool_call(Harness::gemini, R"({"tool_name": "replace", "tool_input": {"file_path": "a",
      "old_string": "x", "new_string": "y", "expected_replacements": 3}})");
  REQUIRE(rep);
  CHECK(rep->edits.at(0).all);
  auto gm = parse_tool_call(Harness::gemini, R"({"tool_name": "read_file", "tool_input": {},
      "mcp_context": {"server_name": "kaicoder", "tool_name": "read_file"}})");
  REQUIRE(gm);
  CHECK(gm->op == Op::pass);
  auto go = parse_tool_call(Harness::gemini, R"({"tool_name": "mcp__kaicoder__x", "tool_input": {},
      "mcp_context": {"server_name": "other"}})");
  REQUIRE(go);
  CHECK(go->op == Op::unknown);
  auto s =
      parse_tool_call(Harness::cursor, R"({"hook_event_name": "beforeShellExecution", "command": "ls", "cwd": "/r"})");
  REQUIRE(s);
  CHECK(s->op == Op::shell);
  auto mcp = parse_tool_call(Harness::cursor, R"({"hook_event_name": "beforeMCPExecution", "tool_name": "read_file",
      "command": "/usr/bin/kaicoder mcp --root /r"})");
  REQUIRE(mcp);
  CHECK(mcp->op == Op::pass);
  auto sr = parse_tool_call(Harness::cursor, R"({"hook_event_name": "preToolUse", "tool_name": "StrReplace",
      "tool_input": {"path": "a", "old_string": "x", "new_string": "y"}})");
  REQUIRE(sr);
  CHECK(sr->op == Op::edit);
  CHECK(sr->path == "a");
  auto del = parse_tool_call(Harness::cursor, R"({"hook_event_name": "preToolUse", "tool_name": "Delete",
      "tool_input": {"path": "a"}})");
  REQUIRE(del);
  CHECK(del->op == Op::remove);
  auto gl =
      parse_tool_call(Harness::gemini, R"({"tool_name": "glob", "tool_input": {"pattern": "*.c", "dir_path": "src"}})");
  REQUIRE(gl);
  CHECK(gl->op == Op::search);
  CHECK(gl->path == "src");
  CHECK_FALSE(gl->reads_contents);
  auto ld = parse_tool_call(Harness::gemini, R"({"tool_name": "list_directory", "tool_input": {"dir_path": "/etc"}})");
  REQUIRE(ld);
  CHECK(ld->op == Op::list);
  auto after = parse_tool_call(Harness::cursor, R"({"hook_event_name": "afterFileEdit"})");
  REQUIRE(after);
  CHECK(after->op == Op::unknown);
  CHECK_FALSE(parse_tool_call(Harness::cursor, R"({"command": "ls"})"));
}

TEST_CASE("Codex's file tools are judged as searches, reads and listings", "[hook]") {
  auto g = parse_tool_call(Harness::codex, R"({"cwd": "/r", "tool_name": "grep_files",
      "tool_input": {"pattern": "TOKEN", "include": " .env", "path": "sub"}})");
  REQUIRE(g);
  CHECK(g->op == Op::search);
  CHECK(g->path == "sub");
  CHECK(g->glob == " .env");
  auto r = parse_tool_call(Harness::codex, R"({"tool_name": "read_file", "tool_input": {"file_path": "/r/a"}})");
  REQUIRE(r);
  CHECK(r->op == Op::read);
  CHECK(r->path == "/r/a");
  auto l = parse_tool_call(Harness::codex, R"({"tool_name": "list_dir", "tool_input": {"dir_path": "/r"}})");
  REQUIRE(l);
  CHECK(l->op == Op::list);
  CHECK(l->path == "/r");
}

TEST_CASE("a hook payload nested past the bound is refused before it is parsed", "[hook]") {
  const std::string deep = R"({"tool_name": "Read", "tool_input": {"file_path": )" + std::string(100000, '[') + "}}";
  auto c = parse_tool_call(Harness::claude_code, deep);
  REQUIRE_FALSE(c);
  CHECK(c.error().code == Errc::usage);
  CHECK_THAT(c.error().message, Contains("deeper than"));
}

TEST_CASE("JsonText adds members and list items and keeps comments and layout", "[integrate]") {
  const std::string text = "{\n  // keep me\n  \"a\": 1, /* and me */\n  \"list\": [\"x\"],\n}\n";
  auto t = JsonText::parse(text);
  REQUIRE(t);
  CHECK(t->value().at("a") == 1);
  REQUIRE(t->append({"list"}, "y"));
  REQUIRE(t->set({"deep", "er", "key"}, json{{"n", 2}}));
  REQUIRE(t->append({"new", "items"}, json{{"k", "v"}}));
  REQUIRE(t->set({"a"}, 5));
  CHECK_THAT(t->text(), Contains("// keep me"));
  CHECK_THAT(t->text(), Contains("/* and me */"));
  auto back = JsonText::parse(t->text());
  REQUIRE(back);
  CHECK(back->value().at("list") == json::array({"x", "y"}));
  CHECK(back->value().at("deep").at("er").at("key").at("n") == 2);
  CHECK(back->value().at("new").at("items").at(0).at("k") == "v");
  CHECK(back->value().at("a") == 5);
}

TEST_CASE("JsonText starts an empty file and refuses what is not an object", "[integrate]") {
  auto t = JsonText::parse("");
  REQUIRE(t);
  REQUIRE(t->set({"mcpServers", "kaicoder"}, json{{"command", "kaicoder"}}));
  CHECK(json::parse(t->text()).at("mcpServers").at("kaicoder").at("command") == "kaicoder");
  CHECK_FALSE(JsonText::parse("[1]"));
  CHECK_FALSE(JsonText::parse("{\"a\": }"));
  CHECK_FALSE(JsonText::parse("{ /* open"));
  auto s = JsonText::parse(R"({"permissions": "all"})");
  REQUIRE(s);
  auto r = s->append({"permissions", "deny"}, "Bash");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::conflict);
}

TEST_CASE("JsonText removes list items with their commas and keeps the rest", "[integrate]") {
  const std::string text =
      "{\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"hooks\": [{\"command\": \"old\"}]}, // old one\n"
      "      {\"hooks\": [{\"command\": \"mine\"}]},\n      {\"hooks\": [{\"command\": \"old\"}]}\n    ]\n  }\n}\n";
  auto t = JsonText::parse(text);
  REQUIRE(t);
  auto is_old = [](const json& e) { return e.at("hooks").at(0).at("command") == "old"; };
  REQUIRE(t->remove_items({"hooks", "PreToolUse"}, is_old));
  auto back = JsonText::parse(t->text());
  REQUIRE(back);
  CHECK(back->value().at("hooks").at("PreToolUse") == json::parse(R"([{"hooks": [{"command": "mine"}]}])"));
  CHECK_THAT(t->text(), Contains("\"mine\""));
  // The only item, with a trailing comma; a list that is not there.
  auto one = JsonText::parse("{\"l\": [ 1, ], \"m\": 2}");
  REQUIRE(one);
  REQUIRE(one->remove_items({"l"}, [](const json& v) { return v == 1; }));
  REQUIRE(JsonText::parse(one->text()));
  CHECK(one->value().at("l").empty());
  CHECK(one->value().at("m") == 2);
  REQUIRE(one->remove_items({"none"}, [](const json&) { return true; }));
  // The last of several.
  auto last = JsonText::parse("{\"l\": [1, 2, 3]}");
  REQUIRE(last);
  REQUIRE(last->remove_items({"l"}, [](const json& v) { return v == 3; }));
  CHECK(last->text() == "{\"l\": [1, 2]}");
}

TEST_CASE("TomlText sets keys at the top and in tables and keeps comments", "[integrate]") {
  auto t = TomlText::parse(
      "# top\nmodel = \"m\" # pinned\nsandbox_mode = \"workspace-write\" # was\n\n[profiles.x]\nmodel = \"o\"\n");
  REQUIRE(t);
  REQUIRE(t->set("", "sandbox_mode", "\"read-only\""));
  REQUIRE(t->set("", "approval_policy", "\"never\""));
  REQUIRE(t->set("features", "hooks", "true"));
  REQUIRE(t->set("mcp_servers.kaicoder", "args", R"(["mcp", "--root", "/r"])"));
  CHECK(t->holds("", "sandbox_mode", "\"read-only\""));
  CHECK(t->holds("", "approval_policy", "\"never\""));
  CHECK(t->holds("features", "hooks", "true"));
  CHECK(t->holds("mcp_servers.kaicoder", "args", R"(["mcp", "--root", "/r"])"));
  CHECK(t->holds("profiles.x", "model", "\"o\""));
  CHECK_THAT(t->text(), Contains("# top"));
  CHECK_THAT(t->text(), Contains("# pinned"));
  CHECK_THAT(t->text(), Contains("# was"));
  CHECK(t->text().find("[profiles.x]") > t->text().find("approval_policy"));
}

TEST_CASE("TomlText refuses what it cannot edit as text", "[integrate]") {
  auto t = TomlText::parse("args = [\n  \"a\",\n]\n");
  REQUIRE(t);
  auto r = t->set("", "args", "[]");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::conflict);
  CHECK_THAT(r.error().hint, Contains("by hand"));
  CHECK(t->text() == "args = [\n  \"a\",\n]\n");
  // A table also made by a dotted key cannot be opened again.
  auto d = TomlText::parse("features.hooks = false\n");
  REQUIRE(d);
  CHECK_FALSE(d->set("features", "hooks", "true"));
  CHECK(d->text() == "features.hooks = false\n");
  CHECK_FALSE(TomlText::parse("a = \n"));
}
