#include "lib/doctor/doctor_store.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/gate/apply.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/util/git.hpp"
#include "lib/store/spool.hpp"
#include "lib/store/store.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/lock.hpp"

namespace kai::doctor {
namespace fs = std::filesystem;

namespace {

// One byte written and synced in `dir` in a file that never has a name
// (O_TMPFILE), or one named and removed at once where that is not supported.
Status try_write(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  std::string named;
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    named = (dir / ".doctor-write-XXXXXX").string();
    fd = ::mkstemp(named.data());
  }
  if (fd < 0) return make_error(Errc::io, errno_text(errno));
  const bool wrote = ::write(fd, "x", 1) == 1 && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!named.empty()) ::unlink(named.c_str());
  if (!wrote) return make_error(Errc::io, errno_text(err));
  return ok_status();
}

// The store's identity (lib/store/store StoreIdentity), and whether it
// replaced an earlier store whose records are gone.
void check_identity(Workspace& ws, Checks& out) {
  // Without a usable key the key line says why (an identity that does not
  // verify turns the key off, with its own message).
  if (!ws.sealer.usable()) return;
  auto ident = store_identity(ws.store.dir(), ws.sealer);
  if (!ident) {
    add(out, "store identity", Level::fail, ident.error().message, ident.error().hint);
    return;
  }
  if (ident->fresh) return;  // no store yet
  if (ident->id.empty()) {
    add(out, "store identity", Level::ok,
        "none (a store made before stores had one): records and once-only notes are bound to the root alone");
    return;
  }
  std::string what = fmt::format("{}: records and once-only notes are bound to it", ident->id.substr(0, 12));
  if (!ident->replaces.empty())
    what += "; the state dir was made anew, and the records of the store before it (proposals, journal, "
            "intents) are gone";
  add(out, "store identity", Level::ok, what);
}

}  // namespace

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
  // A write tried, not the mode read: a read-only mount, a full disk or a
  // folder of another owner fail every command that changes anything.
  if (auto w = try_write(dir); !w)
    add(out, "state dir writes", Level::fail, fmt::format("cannot write in {}: {}", dir.string(), w.error().message),
        "every command that proposes or decides fails until it can: make it writable, or free space there");
  check_identity(ws, out);
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

namespace {

// "line 12 (no rollback-id), line 40 (bad time)" for one parsed file.
std::string malformed_lines(const Parsed& p) {
  std::string lines;
  for (const auto& m : p.malformed) lines += fmt::format("{}line {} ({})", lines.empty() ? "" : ", ", m.line, m.reason);
  return lines;
}

}  // namespace

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
    if (it->is_directory(ec) && walk_skips(ws.guards, name)) {
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

namespace {

// The live index (lib/store/store.hpp Store::live) against every record.
// One that is missing, forged, stale or short of a live proposal is made
// again from the records here when the store lock is free; the commands
// that propose or decide also make it again when it is missing, forged or stale.
void check_live_index(Workspace& ws, const Store::Audit& audit, Checks& out) {
  const std::string wrong = ws.store.check_live(audit);
  if (wrong.empty()) {
    add(out, "live index", Level::ok, "names every pending and approved proposal");
    return;
  }
  if (ws.store.sealer().usable()) {
    if (auto lock = FileLock::try_acquire(ws.store.dir() / "lock")) {
      if (auto n = ws.store.rebuild_live()) {  // read again under the lock
        add(out, "live index", Level::ok,
            fmt::format("{}; made again from the records ({} pending or approved)", wrong, *n));
        return;
      }
    }
  }
  add(out, "live index", Level::warn, wrong,
      "the next command that proposes or decides makes it again from the records; or run kaicoder doctor when the "
      "store lock is free");
}

// The archive's per-bucket summaries and listings (lib/store/store catalog): made again
// from the records when one is missing, forged or disagrees, as the live index is.
// Returns the buckets that disagreed.
std::vector<std::string> check_archive(Workspace& ws, const Store::Audit& audit, Checks& out) {
  std::vector<std::string> untidy;
  std::vector<std::string> wrong = ws.store.check_summaries(audit, false, &untidy);
  if (wrong.empty() && !untidy.empty()) {
    // Appended to (an archived proposal's new line after a rollback): in
    // order, only longer than it needs to be. Written compact when the lock
    // is free, as housekeeping (each summary read again under the lock, no
    // record read): nothing to report either way.
    if (auto lock = FileLock::try_acquire(ws.store.dir() / "lock")) (void)ws.store.compact_summaries(untidy);
    return wrong;
  }
  if (wrong.empty()) return wrong;
  const std::string what = fmt::format("the summaries of archive buckets {} (or their listings) disagree with their "
                                       "records (missing, forged or cut short): list reads those records one by one",
                                       fmt::join(wrong, ", "));
  if (ws.store.sealer().usable()) {
    if (auto lock = FileLock::try_acquire(ws.store.dir() / "lock")) {
      (void)ws.store.check_summaries(true);  // read again under the lock
      add(out, "archive", Level::ok, what + "; made again from the records");
      return wrong;
    }
  }
  add(out, "archive", Level::warn, what, "run kaicoder doctor when the store lock is free");
  return wrong;
}

}  // namespace

void check_proposals(Workspace& ws, bool full, Checks& out) {
  // One read of every record, shared by the checks below; unless `full`,
  // not of an archive bucket unchanged since an earlier doctor read it whole.
  const Store::Audit audit = ws.store.audit(full ? Store::Depth::full : Store::Depth::changed);
  size_t pending = 0, expired = 0, approved = 0;
  std::vector<int> corrupt, failed, unverified;
  const std::vector<int> debris = ws.store.unrecorded();
  for (const auto& e : audit.entries) {
    const int id = e.id;
    if (std::find(debris.begin(), debris.end(), id) != debris.end()) continue;
    const auto& p = e.proposal;
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
  std::string read = fmt::format("{} records read", audit.entries.size());
  if (!audit.vouched.empty())
    read += fmt::format(", {} unchanged since doctor last read them (doctor --full reads them too)",
                        audit.vouched.size() == 1 ? fmt::format("archive bucket {}", audit.vouched.front())
                                                  : fmt::format("archive buckets {}", fmt::join(audit.vouched, ", ")));
  add(out, "proposals", Level::ok,
      fmt::format("{} pending, {} approved and not applied yet; {}", pending, approved, read));
  check_live_index(ws, audit, out);
  // The buckets read whole and found in order are not read again until
  // something in them changes.
  (void)ws.store.vouch(audit, check_archive(ws, audit, out));
  if (expired)
    add(out, "expired proposals", Level::warn, fmt::format("{} pending proposals are past approval.timeout", expired),
        "the next command that proposes or decides (propose, run, approve, reject, apply, rollback) marks them "
        "timeout and logs them; list, show and log only read");
  if (!failed.empty())
    add(out, "failed applies", Level::warn, fmt::format("proposals {} failed to apply", fmt::join(failed, ", ")),
        fmt::format("'kaicoder show {}' says why; 'kaicoder apply {}' tries again", failed.front(), failed.front()));
  if (!debris.empty())
    add(out, "interrupted proposals", Level::warn,
        fmt::format("staging folders {} hold no record: a command was killed or ran out of space while it staged "
                    "them; they are never applied",
                    fmt::join(debris, ", ")),
        "the next command that proposes or decides (propose, run, approve, reject, apply, rollback) removes them; "
        "list, show and log only read");
  if (!corrupt.empty()) {
    // A record kaicoder cannot read is never applied, so this is a warning;
    // the folder still blocks nothing but its own id.
    const fs::path first = ws.store.folder(corrupt.front());
    add(out, "corrupt proposals", Level::warn,
        fmt::format("proposals {} have unreadable records", fmt::join(corrupt, ", ")),
        fmt::format("look at {}/meta.json{}; move the folder out of the state dir to be rid of it — it is never applied",
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
    for (const auto& tmp : i.temps) what += fmt::format("; its new bytes {} were never put in place", tmp);
    done.push_back(what);
  }
  // Runs whose effects are not recorded yet, or wait for a person.
  for (auto& r : inspect_runs(ws)) done.push_back(std::move(r));
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

// The key that seals kaicoder's records (lib/store/mac).
void check_key(Workspace& ws, Checks& out) {
  if (auto u = ws.sealer.usable(); !u)
    add(out, "key", Level::fail, u.error().message + " (records are not checked)", u.error().hint);
  else
    add(out, "key", Level::ok,
        fmt::format("{} (mode 600): records are sealed and checked", (ws.owner_dir / "key").string()));
}

}  // namespace kai::doctor
