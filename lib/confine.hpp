#pragma once
// What a workspace's runs, checks and hooks may see and touch (SPEC §8
// `[run]`): the sandbox level, the layout the `full` level builds (guarded
// paths read-only, secrets hidden, home hidden but for the toolchains), the
// writable trees, the clean environment, and the check of the guarded paths
// after the run.
//
//   RunSpec spec; spec.shell = ...;
//   confine(ws, spec, {.root_writable = true});
//   GuardWatch w = watch_guards(ws, spec.sandbox);
//   auto r = run_command(spec);
//   std::vector<std::string> touched = check_guards(w);   // restores, removes, reports

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lib/runner.hpp"

namespace kai {

class Workspace;

struct ConfineOptions {
  bool root_writable = true;                      // runs: yes; checks and hooks: only their scratch folder
  std::vector<std::filesystem::path> writable;    // besides root and [run] writable
  bool network = false;                           // besides [run] network = "on"
};

// Fills spec.sandbox, spec.writable, spec.layout and spec.env for a command
// of `ws`.
void confine(const Workspace& ws, RunSpec& spec, const ConfineOptions& o);

// The environment runs get: the allow-list (PATH, LANG, LC_*, TERM, TZ,
// USER, LOGNAME, SHELL, … plus [run] env) taken from the process
// environment, HOME = the owner's real home, TMPDIR=/tmp, and kaicoder's own
// git settings through GIT_CONFIG_COUNT/KEY/VALUE (core.fsmonitor=false,
// core.hooksPath=/dev/null, core.pager=cat, protocol.ext.allow=never).
std::vector<std::string> clean_environment(const Workspace& ws);

// Why `name` may never be passed to a run (GIT_*, LD_*, BASH_ENV, …, and
// secret-looking names), or nullopt.
std::optional<std::string> env_name_refused(std::string_view name);

// The state of the guarded paths before a run, to compare after it.
struct GuardWatch {
  struct Saved {
    std::string bytes;
    unsigned mode = 0;
  };
  std::filesystem::path root, git_dir;
  std::set<std::string> git_top;   // names at the top of .git/ before the run
  bool alternates = false;         // .git/objects/info/alternates existed
  // Guarded files by path; nullopt = did not exist (at every level for the
  // harness settings paths, else at the landlock level only).
  std::map<std::filesystem::path, std::optional<Saved>> saved;
  // landlock level: folders where a new file is removed after the run
  std::vector<std::filesystem::path> sealed;
  // landlock level: .kaicoder/ files too large to copy, by size and mtime
  std::map<std::filesystem::path, std::pair<uintmax_t, long long>> large;
  std::vector<std::filesystem::path> store_files;  // .kaicoder/ files before the run
  std::filesystem::path store;
};
GuardWatch watch_guards(const Workspace& ws, SandboxMode mode);

// After the run: removes entries the run added at the top of .git/ (and an
// alternates file) and harness settings it created, and at the landlock level puts back every saved file it
// changed or removed and removes what it created in guarded folders. Returns
// one line per thing done or noticed ("restored kaicoder.toml"), relative to
// root; empty when the run touched nothing guarded.
std::vector<std::string> check_guards(const GuardWatch& w);

}  // namespace kai
