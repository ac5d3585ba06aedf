#include "lib/doctor/doctor.hpp"

#include "lib/doctor/doctor_store.hpp"

#include <algorithm>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <git2.h>

#include "lib/two_user/agent_user.hpp"
#include "lib/gate/apply.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/certify/certify.hpp"
#include "lib/run/confine.hpp"
#include "lib/util/git.hpp"
#include "lib/harness/integrate.hpp"
#include "lib/two_user/intake.hpp"
#include "lib/run/sandbox.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/config/trust.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/lock.hpp"
#include "lib/util/strings.hpp"

namespace kai {
namespace fs = std::filesystem;

std::string_view to_string(Level l) {
  switch (l) {
    case Level::ok: return "ok";
    case Level::warn: return "warn";
    case Level::fail: return "fail";
  }
  return "fail";
}

namespace {

using doctor::add;
using doctor::Checks;

void check_git(Workspace& ws, Checks& out) {
  git_init_once();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, ws.root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    add(out, "git", Level::warn, "root is not the top of a git work tree",
        "kaicoder works without git, but git history is a second line of undo");
    return;
  }
  const GitOwned<git_repository, git_repository_free> repo(raw);
  int ignored_bak = 0, ignored_state = 0;
  git_ignore_path_is_ignored(&ignored_bak, repo.get(), "a.bak-kaicoder-20260101T000000Z");
  git_ignore_path_is_ignored(&ignored_state, repo.get(), (ws.guards.state_dir + "/lock").c_str());
  // The index read as git reads it: a corrupt one makes every git command
  // fail, and git history is the second line of undo.
  git_index* raw_index = nullptr;
  Status index = git_check(git_repository_index(&raw_index, repo.get()), "open the git index");
  const GitOwned<git_index, git_index_free> owned_index(raw_index);
  if (index) index = git_check(git_index_read(raw_index, 1), "read the git index");
  git_repository_state_t state = static_cast<git_repository_state_t>(git_repository_state(repo.get()));
  if (!index)
    add(out, "git", Level::fail, fmt::format("the git index is unreadable: {}", index.error().message),
        "git status fails the same way; rebuild it with: rm .git/index && git reset (the work tree is kept)");
  else if (state != GIT_REPOSITORY_STATE_NONE)
    add(out, "git", Level::warn, "a merge, rebase or similar is in progress", "finish it before approving changes");
  else if (!ignored_bak || !ignored_state)
    add(out, "git", Level::warn, "backups or the state dir are not ignored by git",
        "run 'kaicoder init' or add '.kaicoder/' and '*.bak-kaicoder-*' to .gitignore");
  else
    add(out, "git", Level::ok, "clean state; backups and state dir ignored");
}

// The guardrails, exercised through the same functions real requests use.
void check_guardrails(Workspace& ws, Checks& out) {
  // clang-format off
  const char* must_refuse[] = {"../outside", "/etc/passwd", ".git/config", ".kaicoder/lock", ".env", "prod.env",
                               ".env.local", "KAI-CODER-CHANGELOG.md", "kaicoder.toml", "kaicoder-approvals/x.toml", "a.txt.bak-kaicoder-x",
                               "node_modules/x.js", "build/out", "dist/x", "target/x", "id_rsa"};
  // clang-format on
  std::vector<std::string> passed;
  for (const char* p : must_refuse) {
    auto rp = resolve(ws.root, ws.root, p);
    if (rp && check_write(ws.guards, *rp)) passed.push_back(p);
  }
  if (passed.empty())
    add(out, "guardrail self-test", Level::ok, fmt::format("{} never-write paths refused", std::size(must_refuse)));
  else
    add(out, "guardrail self-test", Level::fail,
        fmt::format("these paths were NOT refused: {}", fmt::join(passed, ", ")),
        "do not let agents use this build; report it as a bug");
}

// The level runs get here, and what exactly it confines (SPEC §8 [run] sandbox).
void check_sandbox(const Workspace& ws, Checks& out) {
  const NamespaceStatus ns = namespace_status();
  const LandlockStatus ll = landlock_status();
  const SandboxMode want = sandbox_mode(ws.cfg.sandbox);
  const SandboxMode best = ns.ok && ll.abi > 0 ? SandboxMode::full
                           : ll.abi > 0        ? SandboxMode::landlock
                                               : SandboxMode::none;
  const bool refused = want != SandboxMode::none && static_cast<int>(want) < static_cast<int>(best);
  std::string why;
  if (!ns.ok) why += fmt::format("; namespaces: {}", ns.detail);
  if (ll.abi == 0) why += fmt::format("; Landlock: {}", ll.detail);
  if (refused)
    add(out, "sandbox", Level::fail,
        fmt::format("[run] sandbox = \"{}\" but this machine supports at most \"{}\"{}", to_string(want),
                    to_string(best), why),
        fmt::format("runs, checks and hooks are refused; the owner may set [run] sandbox = \"{}\" in kaicoder.toml",
                    to_string(best)));
  else
    add(out, "sandbox", want == SandboxMode::full ? Level::ok : Level::warn,
        fmt::format("level \"{}\" (this machine supports \"{}\"; Landlock ABI {}){}", to_string(want), to_string(best),
                    ll.abi, why),
        want == SandboxMode::full || best != SandboxMode::full ? "" : "set [run] sandbox = \"full\" in kaicoder.toml");
  const SandboxMode at = refused ? SandboxMode::none : want;
  const bool full = at == SandboxMode::full, landlock = at == SandboxMode::landlock;
  const bool net_on = ws.cfg.network == "on";
  auto line = [&](const std::string& name, bool good, std::string text) {
    add(out, "sandbox: " + name, refused ? Level::fail : good ? Level::ok : Level::warn, std::move(text));
  };
  if (refused) return line("runs", false, "refused: nothing runs until the level is supported or lowered");
  // The guarded paths by name, from the list the sandbox itself uses.
  std::vector<std::string> names;
  for (const auto& p : guarded_paths(ws)) {
    std::error_code ec;
    std::string rel = p.lexically_relative(ws.root).generic_string();
    if (fs::is_directory(fs::symlink_status(p, ec)) || rel == ws.guards.state_dir || rel == k_approvals_dir) rel += "/";
    names.push_back(std::move(rel));
  }
  const std::string guarded = fmt::format("{}", fmt::join(names, ", "));
  line("writes", full,
       full       ? fmt::format("root and [run] writable only; read-only (mounts): {}, *.bak-kaicoder-* backups, and "
                                      ".git/ but for what git writes in normal work (objects/, refs/, logs/, index, HEAD, *.lock, "
                                      "…); such a path a run creates is removed after it; a private /tmp",
                                guarded)
       : landlock ? fmt::format("root, /tmp and [run] writable (Landlock); put back after each run from a copy kept "
                                "before it: {}, .git/config, .git/hooks/, .git/info/; other kaicoder commands wait for "
                                "the run (it holds the store lock)",
                                guarded)
                  : "anything this user can write");
  if (full) {
    // How a run's effects are read: over an overlay (its cost in proportion
    // to what the run wrote) or from snapshots of the tree before and after.
    const OverlayStatus o = overlay_for_runs(ws);
    if (!ws.cfg.overlay)
      line("effects", true, "read from snapshots of the tree before and after each run ([run] overlay = false)");
    else if (!o.ok)
      line("effects", false,
           fmt::format("read from snapshots of the tree before and after each run: no overlay ({})", o.detail));
    else if (o.redirect)
      line("effects", true, "read from an overlay of root, mounted by root with redirect_dir: folders can be moved");
    else
      line("effects", true,
           "read from an overlay of root in the run's user namespace: a folder that was in the tree cannot be "
           "renamed there (EXDEV: git mv of a folder fails; mv copies); [run] overlay = false reads them from "
           "snapshots instead");
  }
  line("reads", full,
       full ? "root minus its secret files; the system; from home only the toolchains and [run] readable; no /run, no "
              "owner's kaicoder folder, no other process"
            : "everything this user can read, secrets included");
  // What a run sees of other processes (kaicoder's, the person's shells).
  line("processes", full,
       full       ? "none but the run's own (a PID namespace); its init holds no readable memory or environment"
       : landlock ? "every process is listed: /proc/*/cmdline, status and the like stay readable; environments and "
                    "memory of processes outside the run are not (Landlock refuses ptrace access), nor kaicoder's "
                    "own (not dumpable)"
                  : "every process this user can read, environments and memory of its own processes included");
  line("terminals", full || (landlock && ll.abi >= 5),
       full                      ? "no tty, pts or console in the run's /dev; device ioctls off"
       : landlock && ll.abi >= 5 ? "no controlling terminal; device ioctls off (TIOCSTI refused)"
                                 : "no controlling terminal; an opened terminal can be written to");
  line("network", (full && !net_on) || net_on,
       net_on                    ? "on ([run] network = \"on\")"
       : full                    ? "off: an empty network namespace (no TCP, UDP or DNS); one run may ask with "
                                   "`run --network` (confirm tier)"
       : landlock && ll.abi >= 4 ? "TCP off (Landlock); no UNIX sockets (seccomp: socketpair only); UDP still "
                                   "reachable"
                                 : "not restricted");
  line("environment", true,
       "an allow-list (PATH, LANG, LC_*, TERM, TZ, USER, LOGNAME, SHELL, [run] env); HOME is the "
       "owner's home; kaicoder's own git settings");
  line("process lifetime", full || landlock,
       full       ? "a PID namespace: every process ends with the run"
       : landlock ? "a child subreaper kills every process the run left when it ends, or when kaicoder dies"
                  : "the run's process group is killed at its end; a process that leaves the group can outlive it");
  line("capabilities", full || landlock,
       full       ? "none: bounding set empty, no_new_privs, also as root"
       : landlock ? "none: effective, permitted, inheritable and ambient sets empty, no_new_privs, also as root; set-id "
                    "bits and file capabilities refused (seccomp)"
                  : "the user's own");
  if (ll.abi >= 6 && at != SandboxMode::none)
    line("signals and abstract sockets", true, "scoped to the run (Landlock ABI 6)");
  if (at != SandboxMode::none) {
    if (int err = probe_run_filter(); err != 0)
      add(out, "sandbox: hard links", Level::fail,
          fmt::format("this kernel refuses the seccomp filter every sandboxed run starts with ({}): runs are refused",
                      errno_text(err)),
          "use a kernel built with seccomp filters (CONFIG_SECCOMP_FILTER); a container must allow seccomp(2)");
    else
      line("hard links", true,
           "none new: link() fails with EXDEV (seccomp), so tools copy; io_uring off. The snapshot after a run then "
           "stats only what the kernel saw touched");
  }
}

void add_two_user_check(Workspace& ws, Checks& out);

void check_isolation(Workspace& ws, Checks& out) {
  if (two_user(ws)) {
    add_two_user_check(ws, out);
  } else if (::access(ws.root.c_str(), W_OK) == 0) {
    add(out, "isolation", Level::warn,
        fmt::format(
            "single-user: the gate is advisory against an agent with a shell (user '{}' can write the tree directly)",
            ws.user),
        "run the agent as its own user: sudo kaicoder agent-user setup NAME (kaicoder-agent-user(1))");
  } else {
    add(out, "isolation", Level::ok, fmt::format("user '{}' cannot write the tree directly", ws.user));
  }
  check_sandbox(ws, out);
}

// Two-user mode as it stands: what the agent user can still write or read
// that it must not, and entries waiting in the spool.
void add_two_user_check(Workspace& ws, Checks& out) {
  const std::string& name = ws.cfg.two_user_agent;
  auto agent = lookup_user(name);
  if (!agent) {
    add(out, "isolation", Level::fail,
        fmt::format("two-user: [two_user] agent names '{}', who is not a user here", name),
        "sudo kaicoder agent-user setup " + name);
    return;
  }
  const AgentAccess a = agent_access(ws.root, ws.guards, *agent, ws.owner_dir);
  const std::string level = two_user_level(a, name);
  if (a.holds())
    add(out, "isolation", a.reaches_root ? Level::ok : Level::warn, level,
        a.reaches_root ? ""
                       : fmt::format("'{}' cannot reach the root to read it; give the folders above it o+x", name));
  else
    add(out, "isolation", Level::fail, level,
        "sudo kaicoder agent-user setup " + name + " (then: kaicoder agent-user check)");
  if (!has_spool(ws.store.dir()))
    add(out, "spool", Level::fail, "two-user mode is set but there is no spool",
        "sudo kaicoder agent-user setup " + name);
  else if (size_t n = waiting_entries(ws.store.dir()).size())
    add(out, "spool", Level::warn, fmt::format("{} entr{} waiting for intake", n, n == 1 ? "y" : "ies"),
        "kaicoder intake (or keep kaicoder intake --watch running)");
  else
    add(out, "spool", Level::ok, "nothing waiting for intake");
}

void check_install(const DoctorInput& in, Checks& out) {
  std::error_code ec;
  bool man = false, comp = false;
  for (const auto& d : in.man_dirs) man |= fs::exists(d / "man1" / "kaicoder.1", ec);
  for (const auto& f : in.completion_files) comp |= fs::exists(f, ec);
  if (man && comp)
    add(out, "installation", Level::ok, "man pages and completions installed");
  else
    add(out, "installation", Level::warn,
        fmt::format("{} not installed", !man && !comp ? "man pages and completions"
                                        : !man        ? "man pages"
                                                      : "completions"),
        "sudo cmake --install build");
}

void check_snapshots(Workspace& ws, Checks& out) {
  SnapshotStore snaps = snapshots_of(ws);
  if (!snaps.exists()) {
    add(out, "run snapshots", Level::ok,
        ws.cfg.snapshots_keep > 0 ? "none yet (taken before each confirm-tier run)" : "off ([run] snapshots_keep = 0)");
    return;
  }
  auto names = snaps.names();
  if (!names)
    add(out, "run snapshots", Level::fail,
        fmt::format("{} does not open: {}", snaps.dir().string(), names.error().message),
        "move it aside; runs logged before then can no longer be rolled back");
  else if (static_cast<long>(names->size()) > ws.cfg.snapshots_keep)
    add(out, "run snapshots", Level::warn,
        fmt::format("{} kept, more than [run] snapshots_keep = {}", names->size(), ws.cfg.snapshots_keep),
        "the next confirm-tier run prunes the oldest");
  else
    add(out, "run snapshots", Level::ok, fmt::format("{} kept of at most {}", names->size(), ws.cfg.snapshots_keep));
}

// verify's core with its defaults: a warning, never a failure, since an
// uncovered change waits for its owner's signature rather than being broken.
void check_certify(Workspace& ws, Checks& out) {
  // The certified paths come from the base commit, not from the work tree's
  // config, which doctor does not read in a root nobody trusted.
  const bool configured = !ws.cfg.certify_paths.empty();
  CertifyRequest req;
  req.start = ws.root;
  auto c = check_certification(req);
  if (!c || (c->paths.empty() && !configured)) {
    if (!configured)
      add(out, "certification", Level::ok, "no [certify] paths");
    else
      add(out, "certification", Level::warn, c.error().message,
          c.error().hint.empty() ? "run 'kaicoder verify'" : c.error().hint);
    return;
  }
  const std::string since = fmt::format("since {} ({})", c->base.substr(0, 12), c->base_from);
  if (c->uncovered() > 0)
    add(out, "certification", Level::warn,
        fmt::format("{} to certified paths {} {} a signed approval", count_of(c->uncovered(), "change"), since,
                    c->uncovered() == 1 ? "lacks" : "lack"),
        "see them with 'kaicoder verify'; the owner signs with 'kaicoder certify'");
  else if (c->paths.empty())
    add(out, "certification", Level::warn, fmt::format("the base {} has no [certify] paths yet", c->base.substr(0, 12)),
        "commit [certify] to the branch you count from, or name it with 'kaicoder verify --base'");
  else
    add(out, "certification", Level::ok,
        fmt::format("{} to certified paths {}, {}", count_of(c->changes.size(), "change"), since,
                    c->changes.size() == 1 ? "signed" : "all signed"));
}

// Which agent harnesses the project has settings for, and whether each
// writes only through kaicoder (lib/harness/integrate says what is missing).
void check_harnesses(Workspace& ws, const Env& env, Checks& out) {
  for (const auto& st : harness::harness_status(ws, harness::WireEnv{env.self_exe, env.vars, true})) {
    const std::string name = fmt::format("harness {}", harness::harness_name(st.harness));
    if (!st.broken.empty())
      add(out, name, Level::fail,
          fmt::format("its kaicoder hook would not run: {}", fmt::join(st.broken, "; ")),
          fmt::format("wire it again with: kaicoder integrate {}", harness::harness_name(st.harness)));
    else if (st.wired)
      add(out, name, Level::ok, "wired: kaicoder is its only writer");
    else if (st.present)
      add(out, name, Level::warn,
          fmt::format("still has a writer of its own; missing: {}", fmt::join(st.missing, "; ")),
          fmt::format("kaicoder integrate {}", harness::harness_name(st.harness)));
  }
}

}  // namespace

std::vector<Check> run_doctor(const DoctorInput& in) {
  Checks out;
  // Doctor works anywhere, and says first whether the root is one its owner trusted.
  const AnyRoot any = find_any_root(in.env);
  const std::string cfg_file = (any.root / "kaicoder.toml").string();
  if (any.trust == Trust::trusted)
    add(out, "trust", Level::ok, fmt::format("{} is a trusted root", any.root.string()));
  else if (any.trust == Trust::changed)
    add(out, "trust", Level::fail,
        fmt::format("{} changed since you trusted it; kaicoder refuses to work here", cfg_file),
        "run `kaicoder trust` at a terminal: it shows what changed and asks");
  else
    add(out, "trust", Level::fail,
        fmt::format("{} is not a trusted root; kaicoder refuses to work here", any.root.string()),
        "the owner runs `kaicoder init` (new tree) or `kaicoder trust` (a tree with a kaicoder.toml) at a terminal");
  Result<Workspace> ws = any.trust == Trust::trusted ? Workspace::open(in.env, *in.clock)
                                                     : make_error(Errc::denied, "the root is not trusted");
  if (!ws) {
    // An untrusted kaicoder.toml is not read at all: the built-in defaults
    // let every other check run.
    if (any.trust == Trust::trusted)
      add(out, "config", Level::fail, ws.error().message, ws.error().hint);
    else
      add(out, "config", Level::warn, "not read: the root is not trusted; built-in defaults", "see the trust check");
    Env bare = in.env;
    bare.config_override = std::nullopt;
    ws = Workspace::open_without_config(bare, *in.clock);
    if (!ws) {
      add(out, "root", Level::fail, ws.error().message);
      return out;
    }
    ws->use_owner_dir(in.env.user_config_dir);  // the key is still the owner's
  } else {
    std::string files;
    for (const auto& f : ws->cfg.loaded) files += (files.empty() ? "" : ", ") + f.string();
    add(out, "config", Level::ok, files.empty() ? "no config file; built-in defaults" : files);
  }
  add(out, "root", Level::ok, ws->root.string());
  doctor::check_state_dir(*ws, out);
  doctor::check_key(*ws, out);
  doctor::check_changelog(*ws, out);
  doctor::check_backups(*ws, in.progress, out);
  doctor::check_proposals(*ws, in.full, out);
  doctor::check_intents(*ws, out);
  check_git(*ws, out);
  check_certify(*ws, out);
  check_snapshots(*ws, out);
  check_guardrails(*ws, out);
  check_isolation(*ws, out);
  check_harnesses(*ws, in.env, out);
  check_install(in, out);
  return out;
}

}  // namespace kai
