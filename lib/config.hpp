#pragma once
// kaicoder.toml (SPEC §8): the user's ~/.config/kaicoder/config.toml merged
// under the root's kaicoder.toml. Validation is strict: a malformed file, an
// unknown key, a wrong type or a bad pattern is an error naming the file, the
// line and the key, so a typo can never silently loosen a rule.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "lib/result.hpp"

namespace kai {

struct PolicyRule {
  std::string action;    // read edit write delete run rollback
  std::string path;      // glob, for file actions
  std::string command;   // prefix or glob, for run
  std::string decision;  // allow ask deny
  std::string origin;    // "file:line" for messages
};

struct Config {
  // [approval]
  std::vector<std::string> approvers;
  long timeout = 300;
  // [policy]
  std::string mode = "normal";  // or propose-only
  std::map<std::string, std::string> defaults = {{"read", "allow"},  {"edit", "ask"}, {"write", "ask"},
                                                 {"delete", "ask"},  {"run", "ask"},  {"rollback", "ask"}};
  std::vector<PolicyRule> rules;
  // [paths] — lists from every file add up; nothing can remove an entry
  std::vector<std::string> deny_write, deny_read, protected_paths;
  // A file with more than one hard link: "refuse" it, or "break" the link
  // (the new bytes go to a new file under this name; other names keep theirs).
  std::string hardlinks = "refuse";
  // Files that grant privileges or run code; the same list kaicoder.toml.example shows.
  std::vector<std::string> confirm = {"*.sh", "scripts/**", ".github/**", "Dockerfile*", "docker-compose*.y*ml",
                                      "compose*.y*ml", ".claude/**", ".cursor/**", ".vscode/**", ".husky/**",
                                      ".pre-commit-config.yaml", ".gitlab-ci.yml"};
  // [run]
  long run_timeout = 600;
  long validate_timeout = 60;  // seconds each [validate] command may take
  long max_output = 65536;
  std::string sandbox = "full";   // full, landlock or none (lib/sandbox.hpp)
  std::string network = "off";    // "on": runs share the host's network
  std::vector<std::string> blocked, protected_processes;
  std::vector<std::string> writable;  // absolute folders a sandboxed command may write besides root and temp
  std::vector<std::string> readable;  // absolute paths in home a full-sandboxed command may also read
  std::vector<std::string> devices;   // /dev nodes passed through to sandboxed commands (GPU, KVM)
  std::vector<std::string> env;       // environment variables runs get besides the built-in allow-list
  long snapshots_keep = 50;  // snapshots of runs kept for rollback; 0 = none taken
  // [risk]
  long risk_medium = 5, risk_high = 20;
  // [hooks] — shell strings run with /bin/sh -c from root; empty = none
  std::string notify, review;
  long notify_timeout = 10, review_timeout = 60;
  bool hooks_network = false;  // [hooks] network: hooks share the host's network
  // [validate]
  std::map<std::string, std::string> validate;
  // [changelog]
  std::string changelog = "KAI-CODER-CHANGELOG.md";
  long changelog_keep = 500;

  std::vector<std::filesystem::path> loaded;  // files that were read, lowest precedence first
};

// Load `files` in order (later ones win for single values; lists add up).
// Missing files are skipped. Errc::usage with "FILE:LINE: KEY: problem" on any error.
Result<Config> load_config(const std::vector<std::filesystem::path>& files);

// The config text `kaicoder init` writes.
std::string default_config_text();

}  // namespace kai
