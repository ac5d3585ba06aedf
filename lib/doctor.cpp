#include "lib/doctor.hpp"

#include <algorithm>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <git2.h>

#include "lib/agent_user.hpp"
#include "lib/apply.hpp"
#include "lib/beneath.hpp"
#include "lib/certify.hpp"
#include "lib/confine.hpp"
#include "lib/git.hpp"
#include "lib/harness/integrate.hpp"
#include "lib/intake.hpp"
#include "lib/sandbox.hpp"
#include "lib/snapshot.hpp"
#include "lib/trust.hpp"
#include "lib/txn.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/lock.hpp"

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

using Checks = std::vector<Check>;

void add(Checks& out, std::string name, Level l, std::string detail, std::string fix = {}) {
  out.push_back({std::move(name), l, std::move(detail), std::move(fix)});
}

void check_state_dir(Workspace& ws, Checks& out) {
  const fs::path dir = ws.store.dir();
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    add(out, "state dir", Level::warn, fmt::format("{} does not exist yet", dir.string()), "run 'kaicoder init'");
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    add(out, "state dir", Level::fail, fmt::format("{} is not a folder", dir.string()),
        "move it aside and run 'kaicoder init'");
    return;
  }
  // Whoever can write the state dir can stage, approve or tamper with
  // proposals behind the gate's back; reading it only leaks diffs.
  if ((st.st_mode & 022) != 0)
    add(out, "state dir", Level::fail,
        fmt::format("{} can be written by other users (mode {:o})", dir.string(), st.st_mode & 0777),
        fmt::format("chmod 700 {}", dir.string()));
  else if ((st.st_mode & 0777) == 0711 && has_spool(dir))
    add(out, "state dir", Level::ok,
        fmt::format("{} (mode 711: the agent user passes through to the spool, two-user mode)", dir.string()));
  else if ((st.st_mode & 077) != 0)
    add(out, "state dir", Level::warn,
        fmt::format("{} is open to other users (mode {:o})", dir.string(), st.st_mode & 0777),
        fmt::format("chmod 700 {}", dir.string()));
  else
    add(out, "state dir", Level::ok, fmt::format("{} (mode 700)", dir.string()));
  auto lock = FileLock::try_acquire(dir / "lock");
  if (!lock) {
    std::optional<pid_t> pid = lock_holder(dir / "lock");
    std::string who = pid ? fmt::format("process {}", *pid) : "another process";
    add(out, "store lock", Level::warn, fmt::format("held by {}; changes wait for it, reads do not", who),
        fmt::format("let it finish, or end it{}: the kernel frees the lock of a process that died",
                    pid ? fmt::format(" (kill {})", *pid) : ""));
  } else
    add(out, "store lock", Level::ok, "free (an flock: a killed process never leaves it stuck)");
}

// "line 12 (no rollback-id), line 40 (bad time)" for one parsed file.
std::string malformed_lines(const Parsed& p) {
  std::string lines;
  for (const auto& m : p.malformed) lines += fmt::format("{}line {} ({})", lines.empty() ? "" : ", ", m.line, m.reason);
  return lines;
}

void check_changelog(Workspace& ws, Checks& out) {
  const std::string fix = "fix or remove those entries by hand; rollback uses the journal, not this text";
  auto archives = ws.changelog.parse_archives();
  if (!archives) add(out, "changelog archive", Level::fail, archives.error().message, "check the folder's permissions");
  for (const auto& a : archives ? *archives : std::vector<ArchiveFile>{})
    if (!a.parsed.malformed.empty())
      add(out, "changelog archive", Level::warn,
          fmt::format("{}: {} malformed entries: {}", a.file.string(), a.parsed.malformed.size(),
                      malformed_lines(a.parsed)),
          fix);
  auto p = ws.changelog.parse_live();
  if (!p) {
    if (p.error().code == Errc::not_found)
      add(out, "changelog", Level::ok, "no entries yet");
    else
      add(out, "changelog", Level::fail, p.error().message,
          p.error().hint.empty() ? "check the file's permissions" : p.error().hint);
    return;
  }
  if (p->malformed.empty()) {
    add(out, "changelog", Level::ok, fmt::format("{} entries in {}", p->entries.size(), ws.changelog.path().string()));
    return;
  }
  add(out, "changelog", Level::warn,
      fmt::format("{}: {} malformed entries: {}", ws.changelog.path().string(), p->malformed.size(),
                  malformed_lines(*p)),
      fix);
}

// Backups named by journal records, and backup files nobody names.
void check_backups(Workspace& ws, const Progress& progress, Checks& out) {
  std::set<std::string> named;
  size_t missing = 0, changed = 0;
  std::string first_problem;
  std::vector<std::string> corrupt, unverified;
  std::error_code ec;
  std::vector<fs::path> records;
  for (const auto& e : fs::directory_iterator(ws.store.dir() / "journal", ec))
    if (e.path().extension() == ".json") records.push_back(e.path());
  for (size_t i = 0; i < records.size(); ++i) {
    if (progress) progress("checking backups", i, records.size());
    const std::string id = records[i].stem().string();
    auto rec = ws.journal.load(id);
    if (!rec) {
      // Without a key nothing can be checked; the key check says so once.
      if (rec.error().code != Errc::denied) (rec.error().code == Errc::conflict ? unverified : corrupt).push_back(id);
      continue;
    }
    for (const auto& f : rec->files) {
      if (f.backup_rel.empty()) continue;
      named.insert(f.backup_rel);
      auto bytes = read_file(txn::abs_path(ws, f.backup_rel));
      if (!bytes)
        ++missing;
      else if (blob_id(*bytes) != f.backup_blob)
        ++changed;
      else
        continue;
      if (first_problem.empty()) first_problem = f.backup_rel;
    }
  }
  std::vector<std::string> orphans;
  fs::recursive_directory_iterator it(ws.root, fs::directory_options::skip_permission_denied, ec), end;
  for (size_t seen = 0; !ec && it != end; it.increment(ec)) {
    if (progress && ++seen % 256 == 0) progress("looking for orphan backups", seen, 0);
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec) && (name == ".git" || name == ws.guards.state_dir || name == "node_modules")) {
      it.disable_recursion_pending();
      continue;
    }
    if (name.find(".bak-kaicoder-") == std::string::npos) continue;
    std::string rel = it->path().lexically_relative(ws.root).generic_string();
    if (!named.count(rel)) orphans.push_back(rel);
  }
  if (progress) progress("", 0, 0);  // done
  if (!corrupt.empty()) {
    std::sort(corrupt.begin(), corrupt.end());
    add(out, "corrupt journal records", Level::fail,
        fmt::format("unreadable records for entries {}: they cannot be rolled back", fmt::join(corrupt, ", ")),
        fmt::format("restore {}/journal/<id>.json from a copy; 'kaicoder log' still shows those entries",
                    ws.store.dir().string()));
  }
  if (!unverified.empty()) {
    std::sort(unverified.begin(), unverified.end());
    add(out, "unverified journal records", Level::fail,
        fmt::format("records for entries {} were not written by kaicoder (no seal, or one that does not verify): they "
                    "are never rolled back",
                    fmt::join(unverified, ", ")),
        fmt::format("they were forged, copied, or written before records were sealed; move them out of {}/journal/ "
                    "once checked, and undo those changes with git if you need to",
                    ws.store.dir().string()));
  }
  if (auto last = ws.journal.last(); !last && last.error().code == Errc::conflict)
    add(out, "last-change pointer", Level::fail, last.error().message + ": 'rollback last' refuses it",
        fmt::format("roll back by rollback id; remove {}/journal/LAST once checked", ws.store.dir().string()));
  if (missing || changed)
    add(out, "backups", Level::fail,
        fmt::format("{} backups missing and {} changed since they were taken (first: {})", missing, changed,
                    first_problem),
        "those entries cannot be rolled back; restore the backup files from elsewhere if you have them");
  else
    add(out, "backups", Level::ok, fmt::format("{} backups, all present and unchanged", named.size()));
  if (!orphans.empty()) {
    std::string list;
    for (size_t i = 0; i < orphans.size() && i < 5; ++i) list += (i ? ", " : "") + orphans[i];
    add(out, "orphan backups", Level::warn,
        fmt::format("{} backup files belong to no entry: {}{}", orphans.size(), list, orphans.size() > 5 ? ", …" : ""),
        "look at them and delete the ones you do not need");
  }
}

void check_proposals(Workspace& ws, Checks& out) {
  auto ids = ws.store.ids();
  size_t pending = 0, expired = 0, approved = 0;
  std::vector<int> corrupt, failed, unverified;
  for (int id : ids ? *ids : std::vector<int>{}) {
    auto p = ws.store.load(id, Store::Payloads::none);
    if (!p) {
      corrupt.push_back(id);
      continue;
    }
    if (p->sealed != SealCheck::ok && p->sealed != SealCheck::no_key) {
      unverified.push_back(id);  // never expired, approved or applied: counted only here
      continue;
    }
    approved += p->state == State::approved;
    if (p->state == State::failed) failed.push_back(id);
    if (p->state != State::pending) continue;
    TimePoint created;
    if (parse_iso_utc(p->created, created) && ws.clock->now() - created > std::chrono::seconds(ws.cfg.timeout))
      ++expired;
    else
      ++pending;
  }
  add(out, "proposals", Level::ok, fmt::format("{} pending, {} approved and not applied yet", pending, approved));
  if (expired)
    add(out, "expired proposals", Level::warn, fmt::format("{} pending proposals are past approval.timeout", expired),
        "the next command that proposes or decides (propose, run, approve, reject, apply, rollback) marks them "
        "timeout and logs them; list, show and log only read");
  if (!failed.empty())
    add(out, "failed applies", Level::warn, fmt::format("proposals {} failed to apply", fmt::join(failed, ", ")),
        fmt::format("'kaicoder show {}' says why; 'kaicoder apply {}' tries again", failed.front(), failed.front()));
  if (!corrupt.empty()) {
    // A record kaicoder cannot read is never applied, so this is a warning;
    // the folder still blocks nothing but its own id.
    const fs::path first = ws.store.dir() / "staging" / std::to_string(corrupt.front());
    add(out, "corrupt proposals", Level::warn,
        fmt::format("proposals {} have unreadable records", fmt::join(corrupt, ", ")),
        fmt::format("look at {}/meta.json{}; move the folder out of staging/ to be rid of it — it is never applied",
                    first.string(), corrupt.size() > 1 ? " (and the others)" : ""));
  }
  if (!unverified.empty())
    add(out, "unverified proposals", Level::fail,
        fmt::format("records of proposals {} were not written by kaicoder (no seal, or one that does not verify): "
                    "they are never approved, applied or run",
                    fmt::join(unverified, ", ")),
        fmt::format("they were forged, copied, or written before records were sealed: reject them (kaicoder reject "
                    "{}) and propose them again",
                    unverified.front()));
}

// Interrupted transactions (intents), what recovery will do with each, and
// the intents it already refused to obey.
void check_intents(Workspace& ws, Checks& out) {
  if (!ws.sealer.usable()) {
    std::error_code ec;
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(ws.store.dir() / "intents", ec)) n += e.path().extension() == ".json";
    if (n)
      add(out, "half-done changes", Level::warn, fmt::format("{} interrupted changes, not checked: there is no key", n),
          "run 'kaicoder init' at a terminal; the next command that changes something then finishes them");
    return;
  }
  std::vector<IntentInfo> found = inspect_intents(ws);
  std::vector<std::string> done, refused;
  for (const auto& i : found) {
    if (!i.refused.empty()) {
      refused.push_back(fmt::format("{} ({})", i.name, i.refused));
      continue;
    }
    std::string what = i.proposal > 0 ? fmt::format("proposal {} (entry {})", i.proposal, i.rollback_id)
                                      : fmt::format("entry {}", i.rollback_id);
    for (const auto& b : i.cut_backups) what += fmt::format("; its backup {} was cut short by the crash", b);
    done.push_back(what);
  }
  if (!done.empty())
    add(out, "half-done changes", Level::warn, fmt::format("interrupted: {}", fmt::join(done, "; ")),
        "the next command that proposes or decides (propose, run, approve, reject, apply, rollback) finishes or "
        "undoes them and removes backups a crash cut short; list, show and log only read");
  else if (refused.empty())
    add(out, "half-done changes", Level::ok, "none");
  if (!refused.empty())
    add(out, "forged intents", Level::fail,
        fmt::format("intents not written by kaicoder, never obeyed: {}", fmt::join(refused, "; ")),
        "the next command that changes anything moves them to the quarantine folder");
  std::vector<std::string> aside;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ws.store.dir() / "quarantine", ec))
    if (e.path().extension() == ".json") {
      auto why = read_file(fs::path(e.path()).replace_extension(".why"));
      std::string reason = why ? why->substr(0, why->find('\n')) : "no note";
      aside.push_back(fmt::format("{} ({})", e.path().filename().string(), reason));
    }
  std::sort(aside.begin(), aside.end());
  if (!aside.empty())
    add(out, "quarantined intents", Level::fail,
        fmt::format("{} intents were set aside, not obeyed: {}", aside.size(), fmt::join(aside, "; ")),
        fmt::format("something other than kaicoder wrote under {}; find out what, then delete {}/quarantine/",
                    ws.store.dir().string(), ws.store.dir().string()));
}

// The key that seals kaicoder's records (lib/mac).
void check_key(Workspace& ws, Checks& out) {
  if (auto u = ws.sealer.usable(); !u)
    add(out, "key", Level::fail, u.error().message + " (records are not checked)", u.error().hint);
  else
    add(out, "key", Level::ok,
        fmt::format("{} (mode 600): records are sealed and checked", (ws.owner_dir / "key").string()));
}

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
  git_repository_state_t state = static_cast<git_repository_state_t>(git_repository_state(repo.get()));
  if (state != GIT_REPOSITORY_STATE_NONE)
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
  line("reads", full,
       full ? "root minus its secret files; the system; from home only the toolchains and [run] readable; no /run, no "
              "owner's kaicoder folder, no other process"
            : "everything this user can read, secrets included");
  line("terminals", full || (landlock && ll.abi >= 5),
       full                      ? "no tty, pts or console in the run's /dev; device ioctls off"
       : landlock && ll.abi >= 5 ? "no controlling terminal; device ioctls off (TIOCSTI refused)"
                                 : "no controlling terminal; an opened terminal can be written to");
  line("network", (full && !net_on) || net_on,
       net_on                    ? "on ([run] network = \"on\")"
       : full                    ? "off: an empty network namespace (no TCP, UDP or DNS); one run may ask with "
                                   "`run --network` (confirm tier)"
       : landlock && ll.abi >= 4 ? "TCP off (Landlock); UDP and UNIX sockets still reachable"
                                 : "not restricted");
  line("environment", true,
       "an allow-list (PATH, LANG, LC_*, TERM, TZ, USER, LOGNAME, SHELL, [run] env); HOME is the "
       "owner's home; kaicoder's own git settings");
  line("process lifetime", full,
       full ? "a PID namespace: every process ends with the run"
            : "the run's process group is killed at its end; a process that leaves the group can outlive it");
  line("capabilities", full,
       full       ? "none: bounding set empty, no_new_privs, also as root"
       : landlock ? "no_new_privs; the user's own capabilities are kept"
                  : "the user's own");
  if (ll.abi >= 6 && at != SandboxMode::none)
    line("signals and abstract sockets", true, "scoped to the run (Landlock ABI 6)");
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
  if (a.writable.empty() && a.secrets_readable.empty() && a.owner_dir.empty())
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
        fmt::format("{} change(s) to certified paths {} lack a signed approval", c->uncovered(), since),
        "see them with 'kaicoder verify'; the owner signs with 'kaicoder certify'");
  else if (c->paths.empty())
    add(out, "certification", Level::warn, fmt::format("the base {} has no [certify] paths yet", c->base.substr(0, 12)),
        "commit [certify] to the branch you count from, or name it with 'kaicoder verify --base'");
  else
    add(out, "certification", Level::ok,
        fmt::format("{} change(s) to certified paths {}, all signed", c->changes.size(), since));
}

// Which agent harnesses the project has settings for, and whether each
// writes only through kaicoder (lib/harness/integrate says what is missing).
void check_harnesses(Workspace& ws, Checks& out) {
  for (const auto& st : harness::harness_status(ws)) {
    const std::string name = fmt::format("harness {}", harness::harness_name(st.harness));
    if (st.wired)
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
  check_state_dir(*ws, out);
  check_key(*ws, out);
  check_changelog(*ws, out);
  check_backups(*ws, in.progress, out);
  check_proposals(*ws, out);
  check_intents(*ws, out);
  check_git(*ws, out);
  check_certify(*ws, out);
  check_snapshots(*ws, out);
  check_guardrails(*ws, out);
  check_isolation(*ws, out);
  check_harnesses(*ws, out);
  check_install(in, out);
  return out;
}

}  // namespace kai
