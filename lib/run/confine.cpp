#include "lib/run/confine.hpp"

#include <algorithm>
#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/config/config.hpp"
#include "lib/paths/redact.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/util/fs.hpp"
#include "lib/config/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

// Harness settings (SPEC §7): an agent that rewrites them changes what the
// next agent session may do.
constexpr const char* k_harness[] = {".mcp.json", ".claude", ".codex", ".gemini", ".cursor"};

// Toolchains in the owner's home that builds read (relative to home).
constexpr const char* k_toolchains[] = {".gitconfig", ".config/git", ".cargo",     ".rustup", ".nvm",
                                        ".pyenv",     "go/pkg/mod",  ".local/bin", ".m2",     ".gradle"};

// What git writes at the top of its folder in normal work; everything else
// there (config, hooks/, info/, commondir, worktrees/, …) is read-only to runs.
bool git_writes(std::string_view name) {
  static constexpr std::string_view exact[] = {// clang-format off
      "objects", "refs", "logs", "index", "HEAD", "ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG", "packed-refs",
      "sequencer", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "gc.pid", "gc.log", "shallow", "lfs"};
                                               // clang-format on
  for (auto e : exact)
    if (name == e) return true;
  return name.starts_with("MERGE_") || name.starts_with("rebase-") || name.starts_with("BISECT_") ||
         (name.size() > 5 && name.substr(name.size() - 5) == ".lock");
}

bool env_allowed(std::string_view n, const std::vector<std::string>& extra) {
  static constexpr std::string_view exact[] = {"PATH",    "LANG",  "LANGUAGE",  "TERM",     "TZ", "USER",
                                               "LOGNAME", "SHELL", "COLORTERM", "NO_COLOR", "CI"};
  for (auto e : exact)
    if (n == e) return true;
  if (n.starts_with("LC_")) return true;
  return std::find(extra.begin(), extra.end(), n) != extra.end();
}

// `p` is `dir` or lies inside it (lexically).
bool is_under(const fs::path& p, const fs::path& dir) {
  auto rel = p.lexically_relative(dir);
  return !rel.empty() && *rel.begin() != "..";
}

bool lexists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec));
}

// Files in root that [hooks] and [validate] commands run (a notifier
// script, a checker): a run that rewrote them would run its code at the
// next proposal. The program itself, and the script an interpreter is
// given (`sh scripts/notify.sh`), are taken; output files are not.
std::vector<fs::path> hook_files(const Workspace& ws) {
  static constexpr std::string_view k_interpreters[] = {"sh",   "bash", "zsh",  "dash", "python", "python3",
                                                        "node", "ruby", "perl", "deno", "bun",    "env"};
  std::vector<std::string> commands = {ws.cfg.notify, ws.cfg.review};
  for (const auto& [pattern, command] : ws.cfg.validate) commands.push_back(command);
  std::vector<fs::path> out;
  for (const std::string& c : commands) {
    std::vector<std::string> words;
    std::string word;
    for (char ch : c + " ") {
      if (ch == ' ' || ch == '\t' || ch == '\n') {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
      } else if (ch != '\'' && ch != '"') {
        word += ch;
      }
    }
    bool program = true;  // the next word is what runs
    for (const std::string& w : words) {
      if (w == ";" || w == "&&" || w == "||" || w == "|") {
        program = true;
        continue;
      }
      if (!program || w.front() == '-') continue;
      const std::string name = fs::path(w).filename().string();
      program = std::find(std::begin(k_interpreters), std::end(k_interpreters), name) != std::end(k_interpreters);
      fs::path p = (fs::path(w).is_absolute() ? fs::path(w) : ws.root / w).lexically_normal();
      std::error_code ec;
      if (w.find("..") == std::string::npos && is_under(p, ws.root) && p != ws.root &&
          fs::is_regular_file(fs::symlink_status(p, ec)))
        out.push_back(p);
    }
  }
  return out;
}

// The guarded entries of a git folder: read-only all but what git writes,
// submodules' folders recursively, an alternates file.
void guard_git_dir(const fs::path& git, SandboxLayout& l, int depth) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(git, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "modules" && depth < 4 && e.is_directory(ec)) {
      for (const auto& m : fs::directory_iterator(e.path(), ec))
        if (m.is_directory(ec)) guard_git_dir(m.path(), l, depth + 1);
    } else if (!git_writes(name)) {
      l.read_only.push_back(e.path());
    }
  }
  if (lexists(git / "objects" / "info" / "alternates")) l.read_only.push_back(git / "objects" / "info" / "alternates");
}

// Never-read secret files and kaicoder's backups anywhere in root. The walk
// skips the trees no secret or backup of interest lives in, and is bounded.
// It does enter build/ and dist/, which the other walks pass by: a build
// copies files there (`cp .env dist/`), and a copy of a secret file is as
// secret as the file; node_modules/ and target/ stay skipped for their size.
//
// A snapshot taken just before (`seen`) has met every file of root already:
// its guarded files (secrets and backups among them) and the files of the
// ignored trees it listed are judged here instead, and only what it did not
// enter is walked (folders guarded whole, nested repositories). The verdicts
// are the same; tests/unit/test_sandbox.cpp compares the two ways.
//
// Without a snapshot (the overlay), the folders are read again. The names
// the secret-file scan listed (Workspace::listed) hold no types: a folder
// that scan did not list to its end (it stops after 256 secret files, which
// a tree can plant, or could not open one) would pass for a file there, and
// the secrets in it would go unhidden; telling a folder from a file would
// take a stat of every name, which costs more than reading each folder
// again. What both walks pay for each name is its verdict (ReadCheck), and
// that is kept cheap for plain names (lib/paths).
void scan_tree(const Workspace& ws, SandboxLayout& l, const Snapshot* seen) {
  constexpr size_t k_max_entries = 200000, k_max_mounts = 400;
  size_t mounts = 0;
  auto enter = [&ws](std::string_view name) {
    return !walk_skips(ws.guards, name) || name == "build" || name == "dist";
  };
  ReadCheck check(ws.guards);
  // One file met (root-relative); false once the mounts are all used.
  auto judge = [&](const std::string& rel, std::string_view name) {
    if (name.find(".bak-kaicoder-") != std::string_view::npos) {
      l.read_only.push_back(ws.root / rel);
      ++mounts;
    } else if (!check.readable(rel)) {
      l.hidden.push_back(ws.root / rel);
      ++mounts;
    }
    return mounts < k_max_mounts;
  };
  // Walks the folder `top` ("" for root, or "a/b/").
  auto walk = [&](const std::string& top) {
    walk_tree(ws.root / top, k_max_entries, enter,
              [&](const std::string& rel, int, const char* name, unsigned) { return judge(top + rel, name); });
  };
  if (!seen || !seen->uncounted.empty()) return walk("");
  // Whether the walk would reach `rel`: every folder on its way entered.
  auto reached = [&](std::string_view rel) {
    if (rel.starts_with('/')) return false;  // the git folder's files outside root
    for (size_t from = 0, slash; (slash = rel.find('/', from)) != std::string_view::npos; from = slash + 1)
      if (!enter(rel.substr(from, slash - from))) return false;
    return true;
  };
  auto base = [](std::string_view rel) { return rel.substr(rel.rfind('/') + 1); };
  for (const auto* files : {&seen->guarded, &seen->ignored})
    for (const auto& [rel, key] : *files)
      if (!S_ISLNK(key.mode) && reached(rel) && !judge(rel, base(rel))) return;
  for (const auto& dir : seen->unwalked)
    if (mounts < k_max_mounts && reached(dir + "/")) walk(dir + "/");
}

SandboxLayout layout_of(const Workspace& ws, const ConfineOptions& o, const std::vector<fs::path>& writable,
                        SandboxMode mode) {
  SandboxLayout l;
  const fs::path& root = ws.root;
  l.network = o.network || ws.cfg.network == "on";
  for (const auto& d : ws.cfg.devices) l.devices.emplace_back(d);
  // The mounts are the full level's alone: the landlock level takes only
  // the network and the devices from here.
  if (mode != SandboxMode::full) return l;
  l.read_only = guarded_paths(ws);
  std::error_code ec;
  const fs::path git = root / ".git";
  if (fs::is_directory(fs::symlink_status(git, ec))) {
    l.pinned.push_back(git);  // a mount point cannot be renamed away
    guard_git_dir(git, l, 0);
  } else if (lexists(git)) {
    l.read_only.push_back(git);  // a gitdir: pointer; its target lies outside root and so is read-only
  }
  scan_tree(ws, l, o.seen);
  // System secrets: readable by root without any capability.
  for (const char* f : {"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/ssl/private"})
    l.hidden.emplace_back(f);
  for (const auto& e : fs::directory_iterator("/etc/ssh", ec))
    if (e.path().filename().string().starts_with("ssh_host_") && !e.path().string().ends_with(".pub"))
      l.hidden.push_back(e.path());
  // Private trees; the owner's home hidden but for the toolchains.
  l.scratch = {"/tmp", "/var/tmp"};
  const fs::path home = ws.home.empty() ? fs::path() : fs::weakly_canonical(ws.home, ec);
  if (!home.empty() && home != "/") l.scratch.push_back(home);
  l.covered = {"/run"};
  if (!ws.owner_dir.empty()) l.covered.push_back(ws.owner_dir);
  l.keep_writable = writable;
  if (!o.root_writable) l.keep_read_only.push_back(root);
  if (!home.empty())
    for (const char* t : k_toolchains) l.keep_read_only.push_back(home / t);
  for (const auto& r : ws.cfg.readable) l.keep_read_only.emplace_back(r);
  // With the network on, name resolution may need systemd-resolved's folder.
  if (l.network) l.keep_read_only.emplace_back("/run/systemd/resolve");
  return l;
}

}  // namespace

std::vector<fs::path> guarded_paths(const Workspace& ws) {
  std::vector<fs::path> out;
  out.push_back(ws.root / ws.guards.state_dir);
  for (const auto& c : ws.guards.config_files) out.push_back(ws.root / c);
  out.push_back(ws.root / ws.guards.changelog);
  out.push_back(ws.root / k_approvals_dir);
  for (const char* h : k_harness) out.push_back(ws.root / h);
  for (const auto& f : hook_files(ws)) out.push_back(f);
  return out;
}

std::vector<std::string> clean_environment(const Workspace& ws) {
  std::vector<std::string> env;
  for (const auto& [name, value] : ws.env_vars)
    if (env_allowed(name, ws.cfg.env) && !env_name_refused(name)) env.push_back(name + "=" + value);
  if (std::none_of(env.begin(), env.end(), [](const std::string& kv) { return kv.starts_with("PATH="); }))
    env.emplace_back("PATH=/usr/local/bin:/usr/bin:/bin");
  if (!ws.home.empty()) env.push_back("HOME=" + ws.home.string());
  env.emplace_back("TMPDIR=/tmp");
  // kaicoder's own git settings, above every config file git reads.
  static constexpr std::pair<const char*, const char*> k_git[] = {{"core.fsmonitor", "false"},
                                                                  {"core.hooksPath", "/dev/null"},
                                                                  {"core.pager", "cat"},
                                                                  {"protocol.ext.allow", "never"}};
  env.push_back(fmt::format("GIT_CONFIG_COUNT={}", std::size(k_git)));
  for (size_t i = 0; i < std::size(k_git); ++i) {
    env.push_back(fmt::format("GIT_CONFIG_KEY_{}={}", i, k_git[i].first));
    env.push_back(fmt::format("GIT_CONFIG_VALUE_{}={}", i, k_git[i].second));
  }
  return env;
}

void confine(const Workspace& ws, RunSpec& spec, const ConfineOptions& o) {
  spec.sandbox = sandbox_mode(ws.cfg.sandbox);
  spec.env = clean_environment(ws);
  std::vector<fs::path> writable;
  if (o.root_writable) writable.push_back(ws.root);
  writable.insert(writable.end(), o.writable.begin(), o.writable.end());
  std::error_code ec;
  const fs::path home = ws.home.empty() ? fs::path() : fs::weakly_canonical(ws.home, ec);
  for (const auto& w : ws.cfg.writable) {
    fs::path p(w);
    // Never the whole home, or a folder above it.
    if (!home.empty() && is_under(home, p)) continue;
    writable.push_back(p);
  }
  // The full level gives each run its own /tmp; the landlock level shares the system's.
  spec.writable = writable;
  if (spec.sandbox == SandboxMode::landlock)
    spec.writable.push_back("/tmp");  // never $TMPDIR: the proposer may have set it
  spec.layout = layout_of(ws, o, writable, spec.sandbox);
  if (o.effects && spec.sandbox == SandboxMode::full) {
    const EffectsPlan& fx = *o.effects;
    const fs::path objects = ws.root / ".git" / "objects";
    if (!fx.upper.empty()) {
      spec.layout.overlay_root = ws.root;
      spec.layout.overlay_upper = fx.upper;
      spec.layout.overlay_work = fx.work;
      spec.layout.overlay_redirect = fx.redirect;
      spec.layout.direct = fx.direct;
    } else if (!fx.objects.empty() && fs::is_directory(fs::symlink_status(objects, ec))) {
      // Existing objects read-only; new ones into the run's own folder.
      spec.layout.read_only.push_back(objects);
      spec.layout.keep_writable.push_back(fx.objects);
      spec.env = with_env(spec.env, "GIT_OBJECT_DIRECTORY", fx.objects.string());
      spec.env = with_env(spec.env, "GIT_ALTERNATE_OBJECT_DIRECTORIES", objects.string());
    }
  }
}

GuardWatch watch_guards(const Workspace& ws, SandboxMode mode) {
  GuardWatch w;
  w.root = ws.root;
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(ws.root / ".git", ec))) {
    w.git_dir = ws.root / ".git";
    for (const auto& e : fs::directory_iterator(w.git_dir, ec)) w.git_top.insert(e.path().filename().string());
    w.alternates = lexists(w.git_dir / "objects" / "info" / "alternates");
  }
  const fs::path changelog = ws.root / ws.guards.changelog;
  if (mode != SandboxMode::landlock) {
    // The full level mounts the guarded paths that exist read-only; one that
    // does not exist yet (kaicoder.toml, .claude/, kaicoder-approvals/) could
    // be created, and is removed after the run. Only kaicoder itself creates
    // the changelog, and may while the run executes: it is left.
    for (const auto& p : guarded_paths(ws))
      if (!lexists(p) && p != changelog) w.absent.push_back(p);
    return w;
  }
  // The landlock level cannot keep a run out of these: their bytes are kept
  // and put back after it. The caller holds the store lock for the whole
  // run, so every change found here is the run's own.
  constexpr uintmax_t k_max_file = 1 << 20, k_max_total = 64u << 20;
  uintmax_t total = 0;
  auto save = [&](const fs::path& p) {
    std::error_code e2;
    auto st = fs::symlink_status(p, e2);
    if (!fs::exists(st)) {
      w.saved[p] = std::nullopt;
      return;
    }
    if (!fs::is_regular_file(st)) return;
    uintmax_t size = fs::file_size(p, e2);
    if (!e2 && size <= k_max_file && total + size <= k_max_total) {
      if (auto bytes = read_file(p)) {
        total += size;
        w.saved[p] = GuardWatch::Saved{std::move(*bytes), static_cast<unsigned>(st.permissions())};
        return;
      }
    }
    auto t = fs::last_write_time(p, e2);
    w.large[p] = {size, static_cast<long long>(t.time_since_epoch().count())};
  };
  // A guarded folder: every file in it kept, anything new in it removed.
  auto save_tree = [&](const fs::path& dir) {
    w.sealed.push_back(dir);
    std::error_code e2;
    for (auto it = fs::recursive_directory_iterator(dir, e2); !e2 && it != fs::recursive_directory_iterator();
         it.increment(e2)) {
      const fs::path& p = it->path();
      if (w.skipped(p)) {
        it.disable_recursion_pending();
        continue;
      }
      auto st = it->symlink_status(e2);
      if (fs::is_directory(st))
        w.folders[p] = static_cast<unsigned>(st.permissions());
      else
        w.present.insert(p);
      if (fs::is_regular_file(st)) save(p);
    }
  };
  w.store = ws.root / ws.guards.state_dir;
  for (const auto& p : guarded_paths(ws)) {
    if (fs::is_directory(fs::symlink_status(p, ec)))
      save_tree(p);
    else
      save(p);
  }
  if (!w.git_dir.empty()) {
    for (const char* f : {"config", "config.worktree", "commondir"}) save(w.git_dir / f);
    for (const char* d : {"hooks", "info"})
      if (fs::is_directory(w.git_dir / d, ec)) save_tree(w.git_dir / d);
  }
  return w;
}

bool GuardWatch::skipped(const fs::path& p) const {
  // The snapshot store (a run's undo, checked by its own ids) and the
  // scratch folders of hooks and checks; the store lock, which a restore
  // would replace by a new file nobody holds.
  if (store.empty() || !is_under(p, store) || p == store) return false;
  const fs::path first = *p.lexically_relative(store).begin();
  return first == "snapshots.git" || first == "scratch" || first == "lock";
}

std::vector<std::string> check_guards(const GuardWatch& w) {
  std::vector<std::string> out;
  auto rel = [&w](const fs::path& p) { return p.lexically_relative(w.root).generic_string(); };
  std::error_code ec;
  auto remove = [&](const fs::path& p, std::string_view why) {
    std::error_code e2;
    fs::remove_all(p, e2);
    out.push_back(e2 ? fmt::format("{} {}: could NOT remove it: {}", why, rel(p), e2.message())
                     : fmt::format("{} {}: removed", why, rel(p)));
  };
  if (!w.git_dir.empty()) {
    for (const auto& e : fs::directory_iterator(w.git_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (!w.git_top.count(name) && !git_writes(name)) remove(e.path(), "created");
    }
    const fs::path alt = w.git_dir / "objects" / "info" / "alternates";
    if (!w.alternates && lexists(alt)) remove(alt, "created");
  }
  for (const auto& p : w.absent)
    if (lexists(p)) remove(p, "created");
  // Folders first, so that the files in a removed one have a place again.
  for (const auto& [p, mode] : w.folders)
    if (!lexists(p)) {
      Status s = make_dirs(p, static_cast<mode_t>(mode));
      out.push_back(s ? fmt::format("removed {}/: restored", rel(p))
                      : fmt::format("removed {}/: could NOT restore it: {}", rel(p), s.error().message));
    }
  for (const auto& [p, saved] : w.saved) {
    std::error_code e2;
    auto st = fs::symlink_status(p, e2);
    if (!saved) {
      if (fs::exists(st)) remove(p, "created");
      continue;
    }
    bool same = fs::is_regular_file(st) && static_cast<unsigned>(st.permissions()) == saved->mode;
    if (same) {
      auto now = read_file(p);
      same = now && *now == saved->bytes;
    }
    if (same) continue;
    const bool gone = !fs::exists(st);
    if (!gone && !fs::is_regular_file(st)) fs::remove_all(p, e2);
    Status s = make_dirs(p.parent_path(), 0755);
    if (s) s = write_file_atomic(p, saved->bytes, static_cast<mode_t>(saved->mode));
    const char* what = gone ? "removed" : "changed";
    out.push_back(s ? fmt::format("{} {}: restored", what, rel(p))
                    : fmt::format("{} {}: could NOT restore it: {}", what, rel(p), s.error().message));
  }
  // Anything new in a guarded folder; what is new inside a new folder goes
  // with it.
  std::vector<fs::path> created;
  for (const auto& dir : w.sealed)
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      const fs::path& p = it->path();
      if (w.skipped(p)) {
        it.disable_recursion_pending();
        continue;
      }
      std::error_code e2;
      if (fs::is_directory(it->symlink_status(e2)) ? w.folders.count(p) != 0 : w.present.count(p) != 0) continue;
      created.push_back(p);
      it.disable_recursion_pending();
    }
  for (const auto& p : created) remove(p, "created");
  for (const auto& [p, was] : w.large) {
    std::error_code e2;
    uintmax_t size = fs::file_size(p, e2);
    auto t = fs::last_write_time(p, e2);
    if (e2 || size != was.first || static_cast<long long>(t.time_since_epoch().count()) != was.second)
      out.push_back(fmt::format("changed {}: too large to have been kept, NOT restored", rel(p)));
  }
  return out;
}

}  // namespace kai
