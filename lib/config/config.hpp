#pragma once
// kaicoder.toml (SPEC §8): the owner's config.toml (in their own kaicoder
// folder, found through the password database) merged under the trusted
// root's kaicoder.toml, then any restricting overlay (`--config FILE`) on top.
// Validation is strict: a malformed file, an unknown key, a wrong type or a
// bad pattern is an error naming the file, the line and the key, so a typo can
// never silently loosen a rule. An overlay comes from the caller, who may be
// the agent, so it may only tighten: `deny`/`ask` rules and the
// deny_read/deny_write/protected/confirm lists; any other key is an error.

#include <filesystem>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lib/result.hpp"

namespace kai {

// Files of the tree with their git blob ids, sorted by path.
using FileBlobs = std::vector<std::pair<std::string, std::string>>;

struct PolicyRule {
  std::string action;    // read edit write delete run rollback
  std::string path;      // glob, for file actions
  std::string command;   // prefix or glob, for run
  bool exact = false;    // run: `command` is the whole command, matched as written
  FileBlobs files;       // run: the files it runs, bound to these blob ids (lib/run/tree_scripts)
  std::string decision;  // allow ask deny
  std::string origin;    // "file:line" for messages
};

struct Config {
  // [approval]
  std::vector<std::string> approvers;
  long timeout = 300;
  // [policy]
  std::string mode = "normal";  // or propose-only
  std::map<std::string, std::string> defaults = {{"read", "allow"}, {"edit", "ask"}, {"write", "ask"},
                                                 {"delete", "ask"}, {"run", "ask"},  {"rollback", "ask"}};
  std::vector<PolicyRule> rules;
  // [paths] — lists from every file add up; nothing can remove an entry
  std::vector<std::string> deny_write, deny_read, protected_paths;
  // A file with more than one hard link: "refuse" it, or "break" the link
  // (the new bytes go to a new file under this name; other names keep theirs).
  std::string hardlinks = "refuse";
  // Names that are shell syntax (`$`, backticks, `;`, a leading `-`, …) are
  // refused unless this is set; hidden characters are refused regardless.
  bool allow_unusual_names = false;
  // clang-format off
  // Files that grant privileges or run code; the same list kaicoder.toml.example shows.
  std::vector<std::string> confirm = {"*.sh", "scripts/**", ".github/**", "Dockerfile*", "docker-compose*.y*ml",
                                      "compose*.y*ml", ".claude/**", ".cursor/**", ".codex/**", ".gemini/**",
                                      ".mcp.json", ".vscode/**", ".husky/**",
                                      ".pre-commit-config.yaml", ".gitlab-ci.yml", "kaicoder-approvals/**"};
  // clang-format on
  // [run] The files give these limits in seconds; inside lib/ they are
  // milliseconds, so tests can use short ones.
  std::chrono::milliseconds run_timeout{600'000};
  std::chrono::milliseconds validate_timeout{60'000};  // each [validate] command
  long max_output = 65536;
  std::string sandbox = "full";  // full, landlock or none (lib/run/sandbox.hpp)
  std::string network = "off";   // "on": runs share the host's network
  std::vector<std::string> blocked, protected_processes;
  std::vector<std::string> writable;  // absolute folders a sandboxed command may write besides root and temp
  std::vector<std::string> readable;  // absolute paths in home a full-sandboxed command may also read
  std::vector<std::string> devices;   // /dev nodes passed through to sandboxed commands (GPU, KVM)
  std::vector<std::string> env;       // environment variables runs get besides the built-in allow-list
  long snapshots_keep = 50;           // snapshots of runs kept for rollback; 0 = none taken
  // Whether a full-level run goes over an overlay of root (its effects read
  // from the upper folder) where the kernel can mount one; false: snapshots.
  bool overlay = true;
  // Folders at root's top written directly past the overlay when they
  // exist, git ignores them and they are not sensitive (lib/gate/run_effects).
  std::vector<std::string> direct = {"build", "target", "node_modules", "dist"};
  // [risk]
  long risk_medium = 5, risk_high = 20;
  // [hooks] — shell strings run with /bin/sh -c from root; empty = none
  std::string notify, review;
  std::chrono::milliseconds notify_timeout{10'000}, review_timeout{60'000};
  bool hooks_network = false;  // [hooks] network: hooks share the host's network
  // [hooks.adapter] wait: seconds `kaicoder hook` waits for a person to decide
  // what it staged before it answers the harness; 0 = answer at once
  long hook_wait = 0;
  // [validate]
  std::map<std::string, std::string> validate;
  // [changelog]
  std::string changelog = "KAI-CODER-CHANGELOG.md";
  long changelog_keep = 500;
  // [certify] — what `kaicoder verify` certifies. Read from the base commit's
  // kaicoder.toml (lib/certify), never from the head or the work tree.
  std::vector<std::string> certify_paths;
  std::string certify_base;     // a revision; empty = merge base with upstream, else the root commit
  std::string allowed_signers;  // path in the repository of the ssh allowed-signers file
  // The SSH key `certify` and team decisions sign with when git's
  // user.signingkey does not name one (lib/certify/signing_key): an
  // absolute path or "~/…" in the owner's home. Read from the owner's own
  // config only.
  std::string signing_key;
  // [team] — team mode (lib/team): the git remote proposals and signed
  // decisions travel through; empty = off, nothing is ever pushed.
  std::string team_remote;
  long team_keep = 14L * 24 * 3600;  // seconds the refs of rejected and expired proposals stay (fetch --prune)
  // [limits] — what one proposal may carry (SPEC §2); past one, propose and
  // run refuse it (exit 2) before anything is staged
  struct Limits {
    long why = 4096;            // bytes
    long summary = 200;         // characters
    long agent = 64;            // characters
    long path = 4096;           // bytes of one path (PATH_MAX)
    long path_component = 255;  // bytes of one name in it (NAME_MAX)
    long content = 64L << 20;   // bytes of content, target or replacement
    long pending = 100;         // pending proposals of one proposer (agent name); past it: exit 3
  } limits;

  // [two_user] — the Unix user the agent runs as (kaicoder-agent-user(1));
  // set: two-user mode, where proposals arrive through the spool and the
  // uid that proposed one never approves it. Only the owner's config or the
  // trusted kaicoder.toml may set it.
  std::string two_user_agent;

  std::vector<std::filesystem::path> loaded;  // files that were read, lowest precedence first
};

// Where a config file came from. `trusted`: the owner's config or the
// trusted root's kaicoder.toml, which may set anything. `overlay`: a file the
// caller named, which may only add restrictions.
enum class ConfigRole { trusted, overlay };

struct ConfigFile {
  ConfigFile(std::filesystem::path p, ConfigRole r = ConfigRole::trusted, std::optional<std::string> t = std::nullopt)
      : path(std::move(p)), role(r), text(std::move(t)) {}
  std::filesystem::path path;
  ConfigRole role = ConfigRole::trusted;
  // The bytes to parse when the caller already read them (the bytes whose
  // digest was checked, so the file cannot change in between); else `path` is read.
  std::optional<std::string> text;
};

// Load `files` in order (later ones win for single values; lists add up).
// Missing files are skipped. Errc::usage with "FILE:LINE: KEY: problem" on
// any error, including a key an overlay may not set and a rule that can never
// match (a file rule without a path, a run rule without a command).
Result<Config> load_config(const std::vector<ConfigFile>& files);

// The same validation for one file's text held in memory (a blob read from
// git); `origin` names it in messages.
Result<Config> parse_config_text(std::string_view text, const std::string& origin);

// The config text `kaicoder init` writes.
std::string default_config_text();

// Why `name` may never be passed to a run (GIT_*, LD_*, BASH_ENV, …, and
// secret-looking names), or nullopt.
std::optional<std::string> env_name_refused(std::string_view name);

}  // namespace kai
