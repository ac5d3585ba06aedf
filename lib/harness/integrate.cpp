#include "lib/harness/integrate.hpp"

#include <algorithm>
#include <functional>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/harness/json_text.hpp"
#include "lib/harness/toml_text.hpp"
#include "lib/paths/paths.hpp"
#include "lib/util/fs.hpp"

namespace kai::harness {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// How long an MCP call may take: a wait for a person is bounded by the tool
// itself (wait_for_decision's timeout_s), so the harness must not cut it first.
constexpr long k_mcp_timeout_s = 3600;

struct JsonWant {
  JsonPath path;
  json value;
  bool add = false;  // append to the list at path; else set
  std::string what;
  std::function<bool(const json& doc)> has;  // present already; default: the value is there
};

struct TomlWant {
  std::string table, key, value, what;
};

struct FileWants {
  std::string rel;
  bool user = false;
  std::vector<JsonWant> json_wants;
  std::vector<TomlWant> toml_wants;
  bool toml = false;
};

bool json_has(const json& doc, const JsonWant& w) {
  if (w.has) return w.has(doc);
  const json* at = json_at(doc, w.path);
  if (!at) return false;
  if (!w.add) return *at == w.value;
  return at->is_array() && std::find(at->begin(), at->end(), w.value) != at->end();
}

// A hook list at `path` holds an entry running `command` (nested under
// "hooks" as Claude Code, Codex and Gemini write them, or directly as Cursor does).
std::function<bool(const json&)> hook_present(JsonPath path, std::string command) {
  return [path = std::move(path), command = std::move(command)](const json& doc) {
    const json* at = json_at(doc, path);
    if (!at || !at->is_array()) return false;
    for (const auto& entry : *at) {
      if (!entry.is_object()) continue;
      if (entry.value("command", json()) == command) return true;
      auto hooks = entry.find("hooks");
      if (hooks == entry.end() || !hooks->is_array()) continue;
      for (const auto& h : *hooks)
        if (h.is_object() && h.value("command", json()) == command) return true;
    }
    return false;
  };
}

// kaicoder's server entry: what matters is what it runs.
std::function<bool(const json&)> server_present(JsonPath path, json server) {
  return [path = std::move(path), server = std::move(server)](const json& doc) {
    const json* at = json_at(doc, path);
    if (!at || !at->is_object()) return false;
    for (const auto& [k, v] : server.items())
      if (!at->contains(k) || (*at)[k] != v) return false;
    return true;
  };
}

std::string hook_command(Harness h) { return fmt::format("kaicoder hook {}", harness_name(h)); }

std::vector<FileWants> wants_for(const Workspace& ws, Harness h, Scope scope) {
  const bool user = scope == Scope::user;
  // A project's server serves that root. A user-level one is started by the
  // harness in whichever project it runs, so it serves the nearest trusted
  // root above the folder it starts in (and refuses where there is none),
  // never the root that happened to run integrate.
  const json args = user ? json::array({"mcp"}) : json::array({"mcp", "--root", ws.root.string()});
  const std::string cmd = hook_command(h);
  const long hook_timeout = std::max(60L, ws.cfg.hook_wait + 30);
  std::vector<FileWants> out;
  auto server = [&](const JsonPath& path, const json& extra) {
    json s = {{"command", "kaicoder"}, {"args", args}};
    s.update(extra);
    return JsonWant{path, s, false, "kaicoder's MCP server registered (kaicoder mcp)", server_present(path, s)};
  };
  switch (h) {
    case Harness::claude_code: {
      // Claude Code reads project servers from .mcp.json only, and user
      // servers (`claude mcp add --scope user`) from the top-level
      // "mcpServers" of ~/.claude.json, a large file of its own state whose
      // other keys the text editor keeps.
      if (user)
        out.push_back({".claude.json", true, {server({"mcpServers", "kaicoder"}, {{"type", "stdio"}})}, {}, false});
      else
        out.push_back({".mcp.json", false, {server({"mcpServers", "kaicoder"}, json::object())}, {}, false});
      FileWants s{".claude/settings.json", user, {}, {}, false};
      for (const char* tool : {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"})
        s.json_wants.push_back({{"permissions", "deny"}, tool, true, fmt::format("its own {} tool denied", tool), {}});
      json entry = {{"matcher", "*"},
                    {"hooks", json::array({{{"type", "command"}, {"command", cmd}, {"timeout", hook_timeout}}})}};
      s.json_wants.push_back({{"hooks", "PreToolUse"},
                              entry,
                              true,
                              "`" + cmd + "` as its PreToolUse hook",
                              hook_present({"hooks", "PreToolUse"}, cmd)});
      // A project server asks before its first use unless enabled; a user server does not.
      if (!user)
        s.json_wants.push_back(
            {{"enabledMcpjsonServers"}, "kaicoder", true, "kaicoder's server enabled without a prompt", {}});
      out.push_back(std::move(s));
      break;
    }
    case Harness::codex: {
      FileWants c{".codex/config.toml", user, {}, {}, true};
      c.toml_wants = {
          {"", "sandbox_mode", "\"read-only\"", "its sandbox read-only: it cannot write the tree itself"},
          {"", "approval_policy", "\"never\"", "no escalation out of the sandbox"},
          {"features", "shell_tool", "false", "its shell tool off"},
          // The newer PTY shell (exec_command) is a feature of its own, on by
          // default in current versions: turning shell_tool off leaves it.
          {"features", "unified_exec", "false", "its unified exec shell off"},
          {"features", "hooks", "true", "hooks on"},
          {"mcp_servers.kaicoder", "command", "\"kaicoder\"", "kaicoder's MCP server registered (kaicoder mcp)"},
          {"mcp_servers.kaicoder", "args",
           user ? std::string("[\"mcp\"]") : fmt::format("[\"mcp\", \"--root\", {}]", json(ws.root.string()).dump()),
           user ? "kaicoder's MCP server serving the project it starts in" : "kaicoder's MCP server serving this root"},
          {"mcp_servers.kaicoder", "tool_timeout_sec", std::to_string(k_mcp_timeout_s),
           "a long tool timeout for waits"},
      };
      out.push_back(std::move(c));
      json entry = {{"hooks", json::array({{{"type", "command"}, {"command", cmd}, {"timeout", hook_timeout}}})}};
      out.push_back({".codex/hooks.json",
                     user,
                     {{{"hooks", "PreToolUse"},
                       entry,
                       true,
                       "`" + cmd + "` as its PreToolUse hook",
                       hook_present({"hooks", "PreToolUse"}, cmd)}},
                     {},
                     false});
      break;
    }
    case Harness::gemini: {
      FileWants g{".gemini/settings.json", user, {}, {}, false};
      g.json_wants.push_back(
          server({"mcpServers", "kaicoder"}, {{"trust", false}, {"timeout", k_mcp_timeout_s * 1000}}));
      for (const char* tool : {"write_file", "replace", "run_shell_command"})
        g.json_wants.push_back({{"tools", "exclude"}, tool, true, fmt::format("its own {} tool excluded", tool), {}});
      json entry = {
          {"matcher", ".*"},
          {"hooks",
           json::array(
               {{{"name", "kaicoder"}, {"type", "command"}, {"command", cmd}, {"timeout", hook_timeout * 1000}}})}};
      g.json_wants.push_back({{"hooks", "BeforeTool"},
                              entry,
                              true,
                              "`" + cmd + "` as its BeforeTool hook",
                              hook_present({"hooks", "BeforeTool"}, cmd)});
      out.push_back(std::move(g));
      break;
    }
    case Harness::cursor: {
      out.push_back({".cursor/mcp.json", user, {server({"mcpServers", "kaicoder"}, json::object())}, {}, false});
      FileWants c{".cursor/hooks.json", user, {}, {}, false};
      c.json_wants.push_back(
          {{"version"}, 1, false, "hooks file version 1", [](const json& doc) { return doc.contains("version"); }});
      for (const char* ev : {"preToolUse", "beforeShellExecution", "beforeReadFile", "beforeMCPExecution"}) {
        json entry = {{"command", cmd}, {"failClosed", true}, {"timeout", hook_timeout}};
        c.json_wants.push_back({{"hooks", ev},
                                entry,
                                true,
                                fmt::format("`{}` on {}, failing closed", cmd, ev),
                                hook_present({"hooks", ev}, cmd)});
      }
      out.push_back(std::move(c));
      break;
    }
  }
  return out;
}

void describe(IntegratePlan& p) {
  switch (p.harness) {
    case Harness::claude_code:
      p.keeps = {"Read, Grep, Glob and LS inside root (no secret files, nothing outside root)",
                 "its planning, to-do and web tools",
                 "kaicoder's MCP tools: read_file, list_dir, propose_edit, write_file, "
                 "delete_file, run_command, proposal_status, wait_for_decision, list_proposals"};
      p.loses = {
          "Write, Edit, MultiEdit, NotebookEdit and Bash (denied in its settings; the hook stages what still comes "
          "through)",
          "any other MCP server's tools and any tool kaicoder does not know (the hook denies them)"};
      break;
    case Harness::codex:
      p.keeps = {"reading inside its read-only sandbox", "kaicoder's MCP tools, with an hour's tool timeout for waits"};
      p.loses = {"writing the tree (read-only sandbox, no escalation)", "its shell tool",
                 "apply_patch outside kaicoder: each patch is staged as one proposal (a changeset when it touches "
                 "several files)"};
      break;
    case Harness::gemini:
      p.keeps = {"read_file, list_directory, glob and search inside root (no secret files)",
                 "kaicoder's MCP tools (trust false: Gemini still asks before each call)"};
      p.loses = {"write_file, replace and run_shell_command (excluded; the hook stages what still comes through)",
                 "save_memory and read_many_files (denied by the hook)"};
      break;
    case Harness::cursor:
      p.keeps = {"reads inside root (beforeReadFile)", "kaicoder's MCP server"};
      p.loses = {"its own edits and shell: each becomes a proposal through its hooks (failClosed)",
                 "other MCP servers' tools (beforeMCPExecution denies them)"};
      break;
  }
}

Result<SettingsFile> load(const Workspace& ws, const FileWants& w, const fs::path& home) {
  SettingsFile f;
  f.user = w.user;
  if (w.user) {
    f.rel = "~/" + w.rel;
    f.abs = home / w.rel;
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(f.abs, ec)))
      return make_error(Errc::denied,
                        fmt::format("'{}' is a symlink: kaicoder does not write through one", f.abs.string()));
  } else {
    auto rp = resolve(ws.root, ws.root, w.rel);
    if (!rp) return make_error(rp.error().code, fmt::format("'{}': {}", w.rel, rp.error().message), rp.error().hint);
    f.rel = rp->rel;
    f.abs = rp->abs;
  }
  auto bytes = read_file(f.abs, size_t{16} << 20);
  if (bytes) {
    f.exists = true;
    f.before = std::move(*bytes);
  } else if (bytes.error().code != Errc::not_found) {
    return make_error(Errc::io, fmt::format("cannot read '{}': {}", f.abs.string(), bytes.error().message));
  }
  return f;
}

Status plan_json(SettingsFile& f, const FileWants& w) {
  auto t = JsonText::parse(f.before);
  if (!t)
    return make_error(Errc::usage, fmt::format("'{}': {}", f.rel, t.error().message),
                      "fix the file, then run integrate again");
  for (const auto& want : w.json_wants) {
    if (json_has(t->value(), want)) continue;
    f.missing.push_back(want.what);
    Status s = want.add ? t->append(want.path, want.value) : t->set(want.path, want.value);
    if (!s) {
      f.refusal = fmt::format("{}: {}", want.what, s.error().message);
      return ok_status();
    }
  }
  f.after = t->text();
  if (!f.exists && !f.after.ends_with("\n")) f.after += "\n";
  return ok_status();
}

Status plan_toml(SettingsFile& f, const FileWants& w) {
  auto t = TomlText::parse(f.before);
  if (!t)
    return make_error(Errc::usage, fmt::format("'{}': {}", f.rel, t.error().message),
                      "fix the file, then run integrate again");
  for (const auto& want : w.toml_wants) {
    if (t->holds(want.table, want.key, want.value)) continue;
    f.missing.push_back(want.what);
    if (Status s = t->set(want.table, want.key, want.value); !s) {
      f.refusal = fmt::format("{}: {} ({})", want.what, s.error().message, s.error().hint);
      return ok_status();
    }
  }
  f.after = t->text();
  return ok_status();
}

}  // namespace

bool IntegratePlan::wired() const {
  return std::all_of(files.begin(), files.end(), [](const SettingsFile& f) { return f.missing.empty(); });
}

bool IntegratePlan::refused() const {
  return std::any_of(files.begin(), files.end(), [](const SettingsFile& f) { return !f.refusal.empty(); });
}

Result<IntegratePlan> plan_integration(const Workspace& ws, Harness h, Scope scope, const fs::path& home) {
  IntegratePlan p;
  p.harness = h;
  p.scope = scope;
  describe(p);
  for (const FileWants& w : wants_for(ws, h, scope)) {
    auto f = load(ws, w, home);
    if (!f) return f.error();
    KAI_TRY(w.toml ? plan_toml(*f, w) : plan_json(*f, w));
    if (!f->refusal.empty()) f->after = f->before;
    p.files.push_back(std::move(*f));
  }
  return p;
}

std::vector<HarnessStatus> harness_status(const Workspace& ws) {
  struct Marker {
    Harness h;
    std::vector<const char*> names;
  };
  const Marker markers[] = {{Harness::claude_code, {".claude", ".mcp.json"}},
                            {Harness::codex, {".codex"}},
                            {Harness::gemini, {".gemini"}},
                            {Harness::cursor, {".cursor"}}};
  std::vector<HarnessStatus> out;
  for (const auto& m : markers) {
    HarnessStatus s;
    s.harness = m.h;
    std::error_code ec;
    for (const char* n : m.names) s.present |= fs::exists(fs::symlink_status(ws.root / n, ec));
    auto plan = plan_integration(ws, m.h, Scope::project, {});
    if (!plan) {
      s.missing.push_back(plan.error().message);
    } else {
      for (const auto& f : plan->files)
        for (const auto& what : f.missing) s.missing.push_back(fmt::format("{}: {}", f.rel, what));
      s.wired = plan->wired();
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kai::harness
