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

#include "lib/run/runner.hpp"

namespace kai {

class Workspace;
struct Snapshot;

// Where a run's effects go besides the tree (lib/gate/run_effects):
struct EffectsPlan {
  // An overlay of root (the full level where the kernel has one): the run
  // writes its upper folder, with work as overlayfs's scratch folder.
  std::filesystem::path upper, work;
  // The overlay mounted by root with trusted extended attributes and
  // redirect_dir=on (OverlayStatus::redirect): folders of the lower layer
  // can be renamed.
  bool redirect = false;
  // Folders in root bound past the overlay, written directly ([run] direct).
  std::vector<std::filesystem::path> direct;
  // No overlay, full level: .git/objects read-only and git's new objects
  // written here (GIT_OBJECT_DIRECTORY, the repository's objects as an
  // alternate), moved into .git/objects when the effects land.
  std::filesystem::path objects;
};

struct ConfineOptions {
  bool root_writable = true;                    // runs: yes; checks and hooks: only their scratch folder
  std::vector<std::filesystem::path> writable;  // besides root and [run] writable
  bool network = false;                         // besides [run] network = "on"
  // A snapshot of root taken just before: the secret files and backups its
  // walk met stand in for the layout's own walk of root, which then reads
  // only the folders the snapshot did not enter. Null: the layout walks.
  const Snapshot* seen = nullptr;
  // A run's effects plan; null for checks, hooks and a run without one.
  const EffectsPlan* effects = nullptr;
};

// The paths in root runs may never change: the state dir, kaicoder's config
// files, the changelog, kaicoder-approvals/ (lib/certify/manifest), the harness
// settings (SPEC §7) and the files [hooks] and [validate] run. Absolute,
// existing or not. The full level mounts them read-only; the landlock level
// puts them back after the run (watch_guards, check_guards).
std::vector<std::filesystem::path> guarded_paths(const Workspace& ws);

// Fills spec.sandbox, spec.writable, spec.layout and spec.env for a command
// of `ws`.
void confine(const Workspace& ws, RunSpec& spec, const ConfineOptions& o);

// The environment runs get: the allow-list (PATH, LANG, LC_*, TERM, TZ,
// USER, LOGNAME, SHELL, … plus [run] env) taken from the process
// environment, HOME = the owner's real home, TMPDIR=/tmp, and kaicoder's own
// git settings through GIT_CONFIG_COUNT/KEY/VALUE (core.fsmonitor=false,
// core.hooksPath=/dev/null, core.pager=cat, protocol.ext.allow=never).
std::vector<std::string> clean_environment(const Workspace& ws);

// The state of the guarded paths before a run, to compare after it.
struct GuardWatch {
  struct Saved {
    std::string bytes;
    unsigned mode = 0;
  };
  std::filesystem::path root, git_dir;
  std::set<std::string> git_top;  // names at the top of .git/ before the run
  bool alternates = false;        // .git/objects/info/alternates existed
  // full level: guarded paths that did not exist; one the run creates is removed
  std::vector<std::filesystem::path> absent;
  // landlock level: guarded files by path; nullopt = did not exist.
  std::map<std::filesystem::path, std::optional<Saved>> saved;
  // landlock level: guarded folders, where anything new is removed after the
  // run, and what they held: folders (with their mode) and other entries
  std::vector<std::filesystem::path> sealed;
  std::map<std::filesystem::path, unsigned> folders;
  std::set<std::filesystem::path> present;
  // landlock level: files too large to copy, by size and mtime
  std::map<std::filesystem::path, std::pair<uintmax_t, long long>> large;
  std::filesystem::path store;  // the state dir
  // Not watched: the state dir's snapshot store, scratch folders and lock.
  bool skipped(const std::filesystem::path& p) const;
};
// The guarded paths of the run `mode` confines. At the landlock level the
// caller holds the store lock from here to check_guards(): nothing but the
// run changes the store meanwhile, so the put-back can be exact.
GuardWatch watch_guards(const Workspace& ws, SandboxMode mode);

// After the run: removes entries the run added at the top of .git/ (and an
// alternates file) and guarded paths it created; at the landlock level also
// puts back every saved file it changed or removed (the state dir,
// kaicoder's config, kaicoder-approvals/, harness settings, git's settings
// and hooks), recreates the folders it removed and removes what it created
// in guarded folders. Returns one line per thing done or noticed ("changed
// kaicoder.toml: restored"), relative to root; empty when the run touched
// nothing guarded.
std::vector<std::string> check_guards(const GuardWatch& w);

}  // namespace kai
