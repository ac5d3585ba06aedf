#include "lib/harness/integrate.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <git2.h>

#include "lib/util/git.hpp"
#include "lib/harness/json_text.hpp"
#include "lib/harness/probe.hpp"
#include "lib/harness/toml_text.hpp"
#include "lib/paths/paths.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/fs.hpp"
#include "lib/version.hpp"

namespace kai::harness {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// How long an MCP call may take: a wait for a person is bounded by the tool
// itself (wait_for_decision's timeout_s), so the harness must not cut it first.
constexpr long k_mcp_timeout_s = 3600;

// What the plan found wrong with the kaicoder hooks in one hook list,
// filled by that list's `has` (hook_present) and used by plan_json.
struct HookCheck {
  std::vector<std::string> faults;  // what is wrong with each kaicoder hook there that would not run
  std::set<std::string> drop;       // their commands: the entries that hold only them are removed
};

// One probe per command in a plan (Cursor names the same one four times).
using ProbeCache = std::map<std::string, std::string>;

struct JsonWant {
  JsonPath path;
  json value;
  bool add = false;  // append to the list at path; else set
  std::string what;
  std::function<bool(const json& doc)> has;    // present already; default: the value is there
  std::shared_ptr<HookCheck> hooks = nullptr;  // a hook list: the kaicoder hooks there that would not run
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
  std::vector<std::string> lines{};  // a text file (.gitignore): lines it must hold
  bool machine_path = false;       // holds this machine's path to kaicoder: never a file git tracks
};

bool json_has(const json& doc, const JsonWant& w) {
  if (w.has) return w.has(doc);
  const json* at = json_at(doc, w.path);
  if (!at) return false;
  if (!w.add) return *at == w.value;
  return at->is_array() && std::find(at->begin(), at->end(), w.value) != at->end();
}

// Whether `command` runs kaicoder's hook for `h`, from whatever path.
bool is_kaicoder_hook(const std::string& command, Harness h) {
  const std::string prog = hook_program(command);
  const std::string tail = fmt::format(" hook {}", harness_name(h));
  return fs::path(prog).filename() == "kaicoder" && command.size() > tail.size() && command.ends_with(tail);
}

// The commands of one hook entry: its own (Cursor) and those of its
// "hooks" list (Claude Code, Codex, Gemini).
std::vector<std::string> entry_commands(const json& entry) {
  std::vector<std::string> out;
  if (!entry.is_object()) return out;
  if (auto c = entry.find("command"); c != entry.end() && c->is_string()) out.push_back(c->get<std::string>());
  auto hooks = entry.find("hooks");
  if (hooks == entry.end() || !hooks->is_array()) return out;
  for (const auto& one : *hooks)
    if (one.is_object())
      if (auto c = one.find("command"); c != one.end() && c->is_string()) out.push_back(c->get<std::string>());
  return out;
}

// Every command in the hook list at `path`.
std::vector<std::string> hook_commands(const json& doc, const JsonPath& path) {
  std::vector<std::string> out;
  const json* at = json_at(doc, path);
  if (!at || !at->is_array()) return out;
  for (const auto& entry : *at)
    for (std::string& c : entry_commands(entry)) out.push_back(std::move(c));
  return out;
}

// An entry whose every hook is one of `drop` (and that has one): removing
// it removes nothing else. An entry that is not made only of command hooks
// (a prompt hook beside kaicoder's) is kept.
bool only_dropped(const json& entry, const std::set<std::string>& drop) {
  const std::vector<std::string> cmds = entry_commands(entry);
  if (cmds.empty()) return false;
  if (auto hooks = entry.find("hooks"); hooks != entry.end() && hooks->is_array() && hooks->size() != cmds.size())
    return false;
  return std::all_of(cmds.begin(), cmds.end(), [&](const std::string& c) { return drop.count(c) != 0; });
}

// The hook list at `path` holds a kaicoder hook for `h` that works: with
// no binary to wire (unit tests), exactly `command`; else one whose
// program is an absolute path to this version of kaicoder that answers a
// harmless call (lib/harness/probe). Every kaicoder hook there that would
// not run goes to `check`, whether or not a working one is there too. With
// `stale` set, the list is one that must hold no kaicoder hook at all (a
// file git may share, where an earlier integrate wrote the bare command):
// each one found is reported with `stale` as the reason, and none is wanted.
std::function<bool(const json&)> hook_present(JsonPath path, std::string command, Harness h, const WireEnv& wire,
                                              const Workspace& ws, std::shared_ptr<HookCheck> check,
                                              std::shared_ptr<ProbeCache> cache, std::string stale = {}) {
  return [path = std::move(path), command = std::move(command), h, &wire, &ws, check = std::move(check),
          cache = std::move(cache), stale = std::move(stale)](const json& doc) {
    check->faults.clear();
    check->drop.clear();
    bool found = false;
    for (const std::string& c : hook_commands(doc, path)) {
      if (!is_kaicoder_hook(c, h)) continue;
      std::string fault;
      if (!stale.empty()) {
        fault = fmt::format("`{}` {}", c, stale);
      } else if (wire.self_exe.empty()) {
        found |= c == command;
        continue;
      } else {
        auto it = cache->find(c);
        if (it == cache->end()) {
          std::string f =
              wire.probe ? hook_fault(c, h, version(), ProbeEnv{ws.root, wire.vars, std::chrono::milliseconds(10000)})
              : hook_program(c).starts_with('/') ? std::string()
                                                 : fmt::format("`{}` does not start with an absolute path", c);
          it = cache->emplace(c, std::move(f)).first;
        }
        fault = it->second;
      }
      if (fault.empty())
        found = true;
      else if (check->drop.insert(c).second)
        check->faults.push_back(std::move(fault));
    }
    return found || !stale.empty();
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

std::vector<FileWants> wants_for(const Workspace& ws, Harness h, Scope scope, const WireEnv& wire) {
  const bool user = scope == Scope::user;
  // The server serves the nearest trusted root above the folder the
  // harness starts it in (and refuses where there is none): no machine path
  // in a project's file. A project file names it `kaicoder`, found on PATH:
  // when it is not there the server does not start and the agent has no
  // tool of kaicoder's, which writes nothing. A user file, which stays on
  // this machine, names the binary that wired it.
  const json args = json::array({"mcp"});
  const std::string server_cmd = user && !wire.self_exe.empty() ? wire.self_exe.string() : std::string("kaicoder");
  // The hook names the binary that wired it, by its absolute path, in a
  // file that stays on this machine (lib/harness/probe checks it answers).
  const std::string cmd = wire.self_exe.empty() ? fmt::format("kaicoder hook {}", harness_name(h))
                                                : hook_command_for(wire.self_exe, h);
  auto cache = std::make_shared<ProbeCache>();
  auto hook_want = [&](const JsonPath& path, json entry, std::string what, std::string stale = {}) {
    auto check = std::make_shared<HookCheck>();
    return JsonWant{path,
                    std::move(entry),
                    true,
                    std::move(what),
                    hook_present(path, cmd, h, wire, ws, check, cache, std::move(stale)),
                    check};
  };
  const long hook_timeout = std::max(60L, ws.cfg.hook_wait + 30);
  std::vector<FileWants> out;
  // A project file that holds this machine's path is kept out of git.
  auto ignored = [&](std::vector<std::string> rels) {
    if (!user) out.push_back({".gitignore", false, {}, {}, false, std::move(rels), false});
  };
  auto server = [&](const JsonPath& path, const json& extra) {
    json s = {{"command", server_cmd}, {"args", args}};
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
      FileWants s{".claude/settings.json", user, {}, {}, false, {}, user};
      for (const char* tool : {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"})
        s.json_wants.push_back({{"permissions", "deny"}, tool, true, fmt::format("its own {} tool denied", tool), {}});
      // onFailure "block" (Claude Code 2.1.295 and later): a hook that cannot
      // start, times out or exits oddly blocks the call. Older versions drop
      // the key and let such a call through.
      json entry = {
          {"matcher", "*"},
          {"hooks",
           json::array({{{"type", "command"}, {"command", cmd}, {"timeout", hook_timeout}, {"onFailure", "block"}}})}};
      JsonWant hook =
          hook_want({"hooks", "PreToolUse"}, entry, "`" + cmd + "` as its PreToolUse hook, blocking when it fails");
      // A project server asks before its first use unless enabled; a user server does not.
      if (!user)
        s.json_wants.push_back(
            {{"enabledMcpjsonServers"}, "kaicoder", true, "kaicoder's server enabled without a prompt", {}});
      // An earlier integrate put a bare `kaicoder hook claude-code` here, in
      // the file teammates share; Claude Code runs the hooks of every
      // settings file, so that one still runs, from whatever PATH finds.
      if (!user)
        s.json_wants.push_back(hook_want({"hooks", "PreToolUse"}, nullptr, "",
                                         "is in .claude/settings.json, which git may share; kaicoder's hook belongs "
                                         "in .claude/settings.local.json, naming this machine's kaicoder"));
      if (user) {
        s.json_wants.push_back(std::move(hook));
        out.push_back(std::move(s));
      } else {
        // The hook, which names this machine's kaicoder, goes to the
        // project's local settings, which Claude Code reads and git ignores.
        out.push_back(std::move(s));
        out.push_back({".claude/settings.local.json", false, {std::move(hook)}, {}, false, {}, true});
        ignored({".claude/settings.local.json"});
      }
      break;
    }
    case Harness::codex: {
      FileWants c{".codex/config.toml", user, {}, {}, true, {}, false};
      c.toml_wants = {
          {"", "sandbox_mode", "\"read-only\"", "its sandbox read-only: it cannot write the tree itself"},
          {"", "approval_policy", "\"never\"", "no escalation out of the sandbox"},
          {"features", "shell_tool", "false", "its shell tool off"},
          // The newer PTY shell (exec_command) is a feature of its own, on by
          // default in current versions: turning shell_tool off leaves it.
          {"features", "unified_exec", "false", "its unified exec shell off"},
          {"features", "hooks", "true", "hooks on"},
          {"mcp_servers.kaicoder", "command", json(server_cmd).dump(), "kaicoder's MCP server registered (kaicoder mcp)"},
          {"mcp_servers.kaicoder", "args", "[\"mcp\"]", "kaicoder's MCP server serving the project it starts in"},
          {"mcp_servers.kaicoder", "tool_timeout_sec", std::to_string(k_mcp_timeout_s),
           "a long tool timeout for waits"},
      };
      out.push_back(std::move(c));
      // Codex has no option that blocks a call when its hook cannot start.
      json entry = {{"hooks", json::array({{{"type", "command"}, {"command", cmd}, {"timeout", hook_timeout}}})}};
      out.push_back({".codex/hooks.json",
                     user,
                     {hook_want({"hooks", "PreToolUse"}, entry, "`" + cmd + "` as its PreToolUse hook")},
                     {},
                     false,
                     {},
                     true});
      ignored({".codex/hooks.json"});
      break;
    }
    case Harness::gemini: {
      FileWants g{".gemini/settings.json", user, {}, {}, false, {}, true};
      g.json_wants.push_back(
          server({"mcpServers", "kaicoder"}, {{"trust", false}, {"timeout", k_mcp_timeout_s * 1000}}));
      for (const char* tool : {"write_file", "replace", "run_shell_command"})
        g.json_wants.push_back({{"tools", "exclude"}, tool, true, fmt::format("its own {} tool excluded", tool), {}});
      // Gemini CLI has no option that blocks a call when its hook cannot start.
      json entry = {
          {"matcher", ".*"},
          {"hooks",
           json::array(
               {{{"name", "kaicoder"}, {"type", "command"}, {"command", cmd}, {"timeout", hook_timeout * 1000}}})}};
      g.json_wants.push_back(hook_want({"hooks", "BeforeTool"}, entry, "`" + cmd + "` as its BeforeTool hook"));
      out.push_back(std::move(g));
      ignored({".gemini/settings.json"});
      break;
    }
    case Harness::cursor: {
      out.push_back({".cursor/mcp.json", user, {server({"mcpServers", "kaicoder"}, json::object())}, {}, false, {}, false});
      FileWants c{".cursor/hooks.json", user, {}, {}, false, {}, true};
      c.json_wants.push_back(
          {{"version"}, 1, false, "hooks file version 1", [](const json& doc) { return doc.contains("version"); }});
      for (const char* ev : {"preToolUse", "beforeShellExecution", "beforeReadFile", "beforeMCPExecution"}) {
        json entry = {{"command", cmd}, {"failClosed", true}, {"timeout", hook_timeout}};
        c.json_wants.push_back(hook_want({"hooks", ev}, entry, fmt::format("`{}` on {}, failing closed", cmd, ev)));
      }
      out.push_back(std::move(c));
      ignored({".cursor/hooks.json"});
      break;
    }
  }
  return out;
}

void describe(IntegratePlan& p) {
  switch (p.harness) {
    case Harness::claude_code:
      p.when_hook_fails =
          "Claude Code 2.1.295 and later block the call (onFailure \"block\"); older versions let it through";
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
      p.when_hook_fails =
          "Codex has no option to block then and lets the call through; its read-only sandbox and the shell tools "
          "turned off still keep it from writing the tree";
      p.keeps = {"reading inside its read-only sandbox", "kaicoder's MCP tools, with an hour's tool timeout for waits"};
      p.loses = {"writing the tree (read-only sandbox, no escalation)", "its shell tool",
                 "apply_patch outside kaicoder: each patch is staged as one proposal (a changeset when it touches "
                 "several files)"};
      break;
    case Harness::gemini:
      p.when_hook_fails =
          "Gemini CLI has no option to block then and lets the call through; write_file, replace and "
          "run_shell_command stay excluded in its settings";
      p.keeps = {"read_file, list_directory, glob and search inside root (no secret files)",
                 "kaicoder's MCP tools (trust false: Gemini still asks before each call)"};
      p.loses = {"write_file, replace and run_shell_command (excluded; the hook stages what still comes through)",
                 "save_memory and read_many_files (denied by the hook)"};
      break;
    case Harness::cursor:
      p.when_hook_fails = "Cursor blocks the call (failClosed)";
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
    const bool has = json_has(t->value(), want);
    if (want.hooks && !want.hooks->drop.empty()) {
      // Kaicoder hooks that would not run: reported, and their entries
      // removed, so that what the harness runs is only the one that works.
      const std::set<std::string> drop = want.hooks->drop;
      for (const auto& fault : want.hooks->faults) {
        f.missing.push_back(fmt::format("{}; its entry is removed", fault));
        f.broken.push_back(fault);
      }
      Status s = t->remove_items(want.path, [&](const json& e) { return only_dropped(e, drop); });
      if (!s) {
        f.refusal = fmt::format("removing kaicoder hooks that would not run: {}", s.error().message);
        return ok_status();
      }
      for (const std::string& c : hook_commands(t->value(), want.path))
        if (drop.count(c))
          f.missing.push_back(fmt::format("`{}` shares its hook entry with other hooks: remove it by hand", c));
    }
    if (has) continue;
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

Status plan_lines(SettingsFile& f, const FileWants& w) {
  f.after = f.before;
  for (const std::string& line : w.lines) {
    bool there = false;
    for (std::string_view l : split(f.before, "\n"))
      if (trim_right(l, "\r \t") == line || trim_right(l, "\r \t") == "/" + line) there = true;
    if (there) continue;
    f.missing.push_back(fmt::format("'{}' kept out of git (it names this machine's kaicoder)", line));
    if (!f.after.empty() && !f.after.ends_with("\n")) f.after += "\n";
    f.after += line + "\n";
  }
  return ok_status();
}

// Whether git tracks `rel` in the repository at `root` (its index).
bool tracked_by_git(const fs::path& root, const std::string& rel) {
  git_init_once();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return false;
  const GitOwned<git_repository, git_repository_free> repo(raw);
  git_index* idx = nullptr;
  if (git_repository_index(&idx, repo.get()) != 0) return false;
  const GitOwned<git_index, git_index_free> index(idx);
  return git_index_get_bypath(index.get(), rel.c_str(), 0) != nullptr;
}

}  // namespace

bool IntegratePlan::wired() const {
  return std::all_of(files.begin(), files.end(), [](const SettingsFile& f) { return f.missing.empty(); });
}

bool IntegratePlan::refused() const {
  return std::any_of(files.begin(), files.end(), [](const SettingsFile& f) { return !f.refusal.empty(); });
}

Result<IntegratePlan> plan_integration(const Workspace& ws, Harness h, Scope scope, const fs::path& home,
                                       const WireEnv& wire) {
  IntegratePlan p;
  p.harness = h;
  p.scope = scope;
  describe(p);
  for (const FileWants& w : wants_for(ws, h, scope, wire)) {
    auto f = load(ws, w, home);
    if (!f) return f.error();
    KAI_TRY(!w.lines.empty() ? plan_lines(*f, w) : w.toml ? plan_toml(*f, w) : plan_json(*f, w));
    if (w.machine_path && !w.user && !wire.self_exe.empty() && f->after != f->before && tracked_by_git(ws.root, f->rel))
      f->refusal = fmt::format(
          "git tracks it, and it would name this machine's kaicoder ({}): teammates and CI would inherit that path; "
          "stop tracking it (git rm --cached {}) or wire your user settings with --user",
          wire.self_exe.string(), f->rel);
    if (!f->refusal.empty()) f->after = f->before;
    p.files.push_back(std::move(*f));
  }
  return p;
}

std::vector<HarnessStatus> harness_status(const Workspace& ws, const WireEnv& wire) {
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
    if (!s.present) {
      out.push_back(std::move(s));
      continue;
    }
    auto plan = plan_integration(ws, m.h, Scope::project, {}, wire);
    if (!plan) {
      s.missing.push_back(plan.error().message);
    } else {
      for (const auto& f : plan->files) {
        for (const auto& what : f.missing) s.missing.push_back(fmt::format("{}: {}", f.rel, what));
        for (const auto& what : f.broken) s.broken.push_back(fmt::format("{}: {}", f.rel, what));
      }
      s.wired = plan->wired();
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kai::harness
