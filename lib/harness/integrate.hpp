#pragma once
// `kaicoder integrate HARNESS`: what wiring a harness to kaicoder takes, per
// settings file, computed from the files as they are (lib/harness/json_text,
// toml_text: every key and comment kept). For each harness: kaicoder's MCP
// server registered (`kaicoder mcp --root ROOT`), the harness's own writers
// and shell taken away where its settings can do that, and `kaicoder hook
// HARNESS` wired as its pre-tool hook, a second line. Reads only; writing
// the result is the caller's (cmd/integrate, through propose and the gate).
//
//   auto plan = plan_integration(ws, Harness::claude_code, Scope::project, home);
//   for (const SettingsFile& f : plan->files) if (f.changes()) ... f.before → f.after
//
// `doctor` asks the same plan what is missing (harness_status).

#include <filesystem>
#include <string>
#include <vector>

#include "lib/harness/tool_call.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai::harness {

// project: files inside root (the default). user: the harness's user-level
// files in the owner's home, outside root, where a harness reads them for
// every project (and where some read only there).
enum class Scope { project, user };

struct SettingsFile {
  std::string rel;  // root-relative for project files, "~/..." for user files
  std::filesystem::path abs;
  bool user = false;  // outside root, in the owner's home
  bool exists = false;
  std::string before, after;         // current bytes ("" when missing), wanted bytes
  std::vector<std::string> missing;  // what is not wired yet, one line each
  std::string refusal;               // set when the file cannot be edited as text: why, and what to add by hand
  std::vector<std::string> broken;   // kaicoder hooks found that would not run: what is wrong with each

  bool changes() const { return refusal.empty() && after != before; }
};

struct IntegratePlan {
  Harness harness = Harness::claude_code;
  Scope scope = Scope::project;
  std::vector<SettingsFile> files;
  std::vector<std::string> keeps, loses;  // what the harness keeps and loses once wired
  std::string when_hook_fails;            // what the harness does when its hook cannot start

  bool wired() const;    // nothing missing anywhere
  bool refused() const;  // a file cannot be edited as text: the plan is reported, never written
};

// What wiring needs from the process that runs it (cmd fills it).
struct WireEnv {
  // The running kaicoder (/proc/self/exe): the hook entries name it by its
  // absolute path. Empty (unit tests): the bare name `kaicoder`.
  std::filesystem::path self_exe;
  std::vector<std::pair<std::string, std::string>> vars;  // the environment a probed hook runs in
  // Run each kaicoder hook found once (lib/harness/probe) to see it answer;
  // else only check that it starts with an absolute path.
  bool probe = true;
};

// The plan for `h`. `home` is the owner's home (from the password database,
// never $HOME) for Scope::user. A settings file that is not JSON or TOML, or
// is a symlink or outside root where it must be inside, makes an error
// (usage, denied) naming it; one that parses but cannot be edited as text
// is a SettingsFile with `refusal` set.
//
// Where each harness's hook goes: it names this machine's kaicoder, so a
// project plan writes it to a file git ignores (Claude Code's
// .claude/settings.local.json; .codex/hooks.json, .gemini/settings.json and
// .cursor/hooks.json, which the plan adds to .gitignore) and refuses a file
// git already tracks; a user plan to the user-level file. A hook is wired
// when a kaicoder hook entry there starts with an absolute path to this
// version of kaicoder and answers a harmless call (lib/harness/probe).
Result<IntegratePlan> plan_integration(const Workspace& ws, Harness h, Scope scope, const std::filesystem::path& home,
                                       const WireEnv& wire = {});

// For doctor: the harnesses whose settings exist in the project (any of
// their files or folders), and what each still lacks.
struct HarnessStatus {
  Harness harness = Harness::claude_code;
  bool present = false;
  bool wired = false;
  std::vector<std::string> missing;  // "file: what", one per line
  std::vector<std::string> broken;   // "file: what": kaicoder hooks wired that would not run
};
std::vector<HarnessStatus> harness_status(const Workspace& ws, const WireEnv& wire = {});

}  // namespace kai::harness
