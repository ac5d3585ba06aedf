#include "lib/gate/apply.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/gate/decide.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/util/git.hpp"
#include "lib/run/hooks.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

using namespace txn;

namespace {

std::string line_list(std::string_view text, const std::vector<size_t>& offsets) {
  std::string out;
  size_t line = 1, pos = 0, shown = 0;
  for (size_t off : offsets) {
    for (; pos < off; ++pos) line += text[pos] == '\n';
    if (shown++ == 10) return out + ", …";
    out += fmt::format("{}{}", out.empty() ? "" : ", ", line);
  }
  return out;
}

}  // namespace

Result<std::string> apply_edit(std::string_view current, std::string_view target, std::string_view replacement,
                               std::string_view path) {
  if (target.empty()) return make_error(Errc::usage, "the target text is empty", "name the exact text to replace");
  std::vector<size_t> hits;
  // Overlapping matches count: "aa" occurs twice in "aaa", so it is ambiguous.
  for (size_t at = current.find(target); at != std::string_view::npos; at = current.find(target, at + 1))
    hits.push_back(at);
  if (hits.empty())
    return make_error(Errc::conflict, fmt::format("target not found in '{}'", path),
                      "read the file again ('kaicoder read') and copy the exact text, whitespace included");
  if (hits.size() > 1)
    return make_error(
        Errc::conflict,
        fmt::format("target found {} times in '{}' (lines {})", hits.size(), path, line_list(current, hits)),
        "include more surrounding lines so the target occurs exactly once");
  std::string out;
  out.reserve(current.size() - target.size() + replacement.size());
  out.append(current.substr(0, hits[0])).append(replacement).append(current.substr(hits[0] + target.size()));
  return out;
}

Status validation_permits_apply(const Proposal& p, Force force) {
  if (p.validation.status != "failed" || force == Force::yes) return ok_status();
  return make_error(Errc::conflict, fmt::format("proposal {} failed validation", p.id),
                    fmt::format("see why: kaicoder show {}; apply it anyway with --force", p.id));
}

Result<Outcome> apply_proposal(Workspace& ws, Proposal& p, const std::string& approver, Force force) {
  auto fail = [&](Error e) -> Error {
    p.state = State::failed;
    p.result = fmt::format("failed: {}", e.message);
    p.outcome_code = static_cast<int>(e.code);
    (void)ws.store.save(p);
    queue_notify(ws, p, "failed");
    return e;
  };
  if (p.kind == Kind::run) return make_error(Errc::usage, fmt::format("proposal {} is a command run", p.id));
  KAI_TRY(not_team_remote(p));  // another clone's: applied there, never here
  if (p.state != State::approved && p.state != State::failed)
    return make_error(Errc::conflict, fmt::format("proposal {} is {}, not approved", p.id, to_string(p.state)),
                      p.state == State::pending ? "approve it first: kaicoder approve " + std::to_string(p.id) : "");
  // Before anything else in the record is believed: who approved it, the
  // digest, the state all come from a record that must be kaicoder's own.
  KAI_TRY(require_sealed(ws.store, p));
  if (p.approved_digest.empty()) return make_error(Errc::conflict, fmt::format("proposal {} was never approved", p.id));
  KAI_TRY(ws.changelog.check_readable());  // before any file changes: the entry must be writable
  // A sealed record can still be an old copy put back: one that was applied
  // (and maybe rolled back since) is never applied again on its strength.
  // The owner's folder says so even when the journal was pruned by hand.
  std::string last = ws.journal.latest_for(p.path);
  auto rec = last.empty() ? Result<Record>(make_error(Errc::not_found, "")) : ws.journal.load(last);
  if (ws.sealer.spent("apply", std::to_string(p.id)) || (rec && rec->proposal == p.id))
    return make_error(Errc::conflict,
                      fmt::format("proposal {} was applied before{}", p.id,
                                  rec && rec->proposal == p.id ? " (entry " + last + ")" : ""),
                      "propose the change again to apply it once more");
  if (loaded_digest(p) != p.approved_digest)
    return fail(make_error(Errc::conflict, fmt::format("proposal {} was changed after it was approved", p.id),
                           "its staged files no longer match what the approver saw; propose it again"));
  if (auto v = validation_permits_apply(p, force); !v) return fail(v.error());
  const bool forced = force == Force::yes && p.validation.status == "failed";
  CreateDirs create = p.kind == Kind::write && !p.base.exists ? CreateDirs::yes : CreateDirs::no;
  if (p.kind == Kind::changeset) {
    auto o = apply_changeset_proposal(ws, p, approver, forced);
    if (!o) return fail(o.error());
    return o;
  }
  MadeFolders made(ws);  // for a new file: recorded, so that its rollback removes them again
  if (create == CreateDirs::yes) made.add(p.path);
  auto tg = open_target(ws, p.path, create);
  if (!tg) return fail(tg.error());
  const FileState& cur = tg->current;
  std::optional<std::string> after;
  if (p.kind == Kind::edit && p.replace_all) {
    if (!cur.exists) return fail(make_error(Errc::conflict, fmt::format("'{}' no longer exists", p.path)));
    ReplacedAll all = replace_every(cur.bytes, p.target, p.replacement);
    if (all.count != p.occurrences)
      return fail(make_error(Errc::conflict,
                             fmt::format("target occurs {} times in '{}', not {} as when proposal {} was made",
                                         all.count, p.path, p.occurrences, p.id),
                             "propose the change again against the file as it is now"));
    after = std::move(all.bytes);
  } else if (p.kind == Kind::edit) {
    if (!cur.exists) return fail(make_error(Errc::conflict, fmt::format("'{}' no longer exists", p.path)));
    auto r = apply_edit(cur.bytes, p.target, p.replacement, p.path);
    if (!r) return fail(r.error());
    after = std::move(*r);
  } else {
    if (!same(FileSide{p.base.exists, p.base.blob, p.base.mode}, cur))
      return fail(make_error(Errc::conflict,
                             fmt::format("'{}' changed since proposal {} was made (stale base)", p.path, p.id),
                             "propose the change again against the file as it is now"));
    if (p.kind == Kind::write) after = p.content;
  }
  const auto now = ws.clock->now();
  if (after && cur.exists && *after == cur.bytes) {
    // Nothing would change: no write, no backup, nothing to roll back.
    p.state = State::applied;
    p.result = "ok (no change: the file already holds this content)";
    p.outcome_code = 0;
    KAI_TRY(ws.store.save(p));
    (void)ws.sealer.spend("apply", std::to_string(p.id));
    queue_notify(ws, p, "applied");
    Outcome o;
    o.unchanged = true;
    return o;
  }
  Txn t;
  t.rec.kind = std::string(to_string(p.kind));
  t.rec.time = iso_utc(now);
  t.rec.proposal = p.id;
  t.proposal = p.id;
  t.live = &p;  // loaded sealed, or saved, under the lock: its status is not read again
  const std::string dir = dir_of(tg->rel);
  auto fresh = ws.journal.fresh_id(now, [&](const std::string& id) { return backup_taken(tg->dir, tg->name, id); });
  if (!fresh) return fail(fresh.error());
  t.rec.id = std::move(*fresh);
  FileChange f;
  f.rel = tg->rel;
  f.before = side_of(cur);
  f.after = after ? FileSide{true, blob_id(*after), cur.exists ? cur.mode : 0644u} : FileSide{};
  if (cur.exists) {
    f.backup_rel = dir + backup_name(tg->name, t.rec.id);
    f.backup_blob = f.before.blob;
  }
  t.rec.files.push_back(f);
  for (const auto& d : made.folders()) t.rec.files.push_back(made_folder(d));
  t.entry = make_entry(ws, t, t.rec.kind, std::string(action_name(p.kind)));
  describe_apply(ws, t.entry, p, approver, forced);
  std::vector<Target> targets;
  targets.push_back(std::move(*tg));
  if (auto s = execute(ws, t, targets, {after}); !s) return s.error();
  made.keep();
  return record_applied(ws, p, t, f.backup_rel.empty() ? "" : (ws.root / f.backup_rel).string());
}

namespace {

// The symlink a run made at `f.rel` must still be that link (or gone).
Status check_link(Workspace& ws, const std::string& id, const FileChange& f, Force force) {
  auto d = open_parent(ws.root, f.rel, CreateDirs::no);
  if (!d) return d.error().code == Errc::conflict ? ok_status() : Status(d.error());
  std::string target(4096, '\0');
  ssize_t n = ::readlinkat(d->fd(), base_of(f.rel).c_str(), target.data(), target.size());
  if (n < 0 && errno == ENOENT) return ok_status();
  if (force == Force::no && (n < 0 || blob_id(target.substr(0, static_cast<size_t>(n))) != f.after.blob))
    return make_error(Errc::conflict,
                      fmt::format("cannot roll back {}: '{}' is no longer the symlink the run made", id, f.rel),
                      "pass --force to restore what the run replaced anyway (the symlink is removed)");
  return ok_status();
}

Status remove_link(Workspace& ws, const std::string& rel) {
  auto d = open_parent(ws.root, rel, CreateDirs::no);
  if (!d) return d.error().code == Errc::conflict ? ok_status() : Status(d.error());
  struct stat st;
  if (::fstatat(d->fd(), base_of(rel).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
      !(S_ISLNK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
    return ok_status();
  return unlink_at(*d, base_of(rel));
}

}  // namespace

bool writes_own_config(const Workspace& ws, const Record& r) {
  // A chain of rollbacks of rollbacks ends at the entry they undo; a chain
  // longer than any person makes by hand is no config write.
  const Record* at = &r;
  std::optional<Record> held;
  for (int depth = 0; depth < 64; ++depth) {
    if (at->kind == "config") return true;
    if (at->kind != "rollback" || at->rolls_back.empty()) return false;
    auto prev = ws.journal.load(at->rolls_back);
    if (!prev) return false;
    held = std::move(*prev);
    at = &*held;
  }
  return false;
}

Result<Outcome> rollback_entry(Workspace& ws, const std::string& id_arg, const std::string& decider, Force force,
                               CheckOnly check) {
  std::string id = id_arg;
  if (id == "last") {
    auto l = ws.journal.last();
    if (!l) return l.error();
    id = *l;
  }
  auto rec = ws.journal.load(id);
  if (!rec) return rec.error();
  KAI_TRY(ws.changelog.check_readable());
  // Only what kaicoder's own "always allow" wrote may put kaicoder.toml back.
  const Guard guard = writes_own_config(ws, *rec) ? Guard::own_config : Guard::tree;
  const auto now = ws.clock->now();
  std::vector<Target> targets;
  std::vector<std::optional<std::string>> after;
  Txn t;
  t.rec.kind = "rollback";
  t.rec.time = iso_utc(now);
  t.rec.rolls_back = id;
  // A run's symlinks and folders (k_mode_link, k_mode_dir): the links go
  // first, so that a folder the run replaced by a link comes back; the
  // folders it created go last, if they are empty by then.
  std::vector<std::string> links, dirs;
  std::vector<size_t> origin, deferred;  // rec->files index of each target; files opened once the links are gone
  auto behind_link = [&](const std::string& rel) {
    for (const auto& l : links)
      if (rel.starts_with(l + "/")) return true;
    return false;
  };
  {
    std::vector<std::string> rels;
    for (const FileChange& f : rec->files) rels.push_back(f.rel);
    KAI_TRY(folder_room(rels, fmt::format("the rollback of {}", id)));
  }
  MadeFolders made(ws);  // for files it brings back
  Folders folders(ws);   // each folder opened once, for its files and their backups
  auto add_target = [&](size_t i, bool compare) -> Status {
    const FileChange& f = rec->files[i];
    if (f.before.exists) made.add(f.rel);
    // The path as the sealed record holds it (check_stored). A run changes
    // the tree alone: a "~/" name in its record is a folder named '~' at the
    // root, never the owner's home.
    KAI_TRY(check_stored(ws, f.rel, guard, rec->kind == "run" ? Home::no : Home::yes));
    // Before the question each file is read and compared, to say what is
    // wrong before the person is asked. After the answer it is judged by
    // what a stat tells, and its bytes are read once, where its backup is
    // linked: the file's name must hold what the entry wrote when it is
    // moved aside, or nothing is rolled back (take_backup). --force, and a
    // file recorded behind a link the run made, read it as it is.
    const bool at_backup = check == CheckOnly::no && compare && force == Force::no;
    auto tg = open_stored(ws, folders, f.rel, f.before.exists ? CreateDirs::yes : CreateDirs::no,
                          at_backup ? Read::stat : Read::or_hash);
    if (!tg) return tg.error();
    if (at_backup && tg->current.exists && f.after.exists) {
      tg->current.blob = f.after.blob;
      tg->check_at_backup = true;
    }
    hash_once(tg->current);  // compared here, recorded as its `before` below: hashed once
    if (compare && !same(f.after, tg->current) && force == Force::no)
      return changed_since(ws, id, f.rel, tg->current.exists);
    if (f.before.exists && f.backup_rel.empty() && rec->kind == "run") {
      // A run's files have no backups beside them: their bytes before the
      // run are in the snapshot store.
      auto b = snapshots_of(ws).blob(id, f.before.blob);
      if (!b)
        return make_error(b.error().code, fmt::format("cannot roll back {}: {}", id, b.error().message),
                          b.error().hint);
      after.push_back(std::move(*b));
    } else if (f.before.exists) {
      auto b = read_backup(ws, f, &folders);
      if (!b || !b->exists || !b->regular || blob_id(b->bytes) != f.backup_blob)
        return make_error(Errc::conflict,
                          fmt::format("cannot roll back {}: backup '{}' is {}", id, f.backup_rel,
                                      !b           ? b.error().message
                                      : !b->exists ? "missing"
                                                   : "changed since it was taken"),
                          "kaicoder restores only a backup whose bytes it recorded; restore by hand if you trust it");
      after.push_back(std::move(b->bytes));
    } else {
      after.push_back(std::nullopt);
    }
    targets.push_back(std::move(*tg));
    origin.push_back(i);
    return ok_status();
  };
  // Folders the run removed, replaced or changed the mode of: made again
  // (their files come back below) and given their mode back, last.
  std::vector<std::pair<std::string, unsigned>> folder_modes;
  auto is_folder = [](const FileSide& s) { return s.exists && (s.mode & 0170000) == k_mode_dir; };
  auto is_special = [](const FileSide& s) {
    return s.exists && ((s.mode & 0170000) == k_mode_fifo || (s.mode & 0170000) == k_mode_socket);
  };
  // The links first: a file recorded before the link that replaced its
  // folder is opened once the link is gone.
  for (const FileChange& f : rec->files)
    if (f.after.mode == k_mode_link || is_special(f.after)) {
      if (f.after.mode == k_mode_link) KAI_TRY(check_link(ws, id, f, force));
      links.push_back(f.rel);
    }
  for (size_t i = 0; i < rec->files.size(); ++i) {
    const FileChange& f = rec->files[i];
    if (is_folder(f.before)) {
      folder_modes.emplace_back(f.rel, f.before.mode & 07777);
    } else if (f.after.mode == k_mode_dir) {
      dirs.push_back(f.rel);
    } else if (f.after.mode == k_mode_link || is_special(f.after)) {
      if (f.before.exists) deferred.push_back(i);
    } else if (is_special(f.before) || is_folder(f.after)) {
      continue;  // a FIFO or socket the run removed is not made again; a folder it made is in `dirs`
    } else if (behind_link(f.rel)) {
      deferred.push_back(i);
    } else {
      KAI_TRY(add_target(i, true));
    }
  }
  if (targets.empty() && links.empty() && dirs.empty() && folder_modes.empty())
    return make_error(Errc::conflict, fmt::format("entry {} changed no file", id));
  if (check == CheckOnly::yes) return Outcome{};
  for (const auto& l : links) KAI_TRY(remove_link(ws, l));
  // The folders the files below need, shallowest first.
  std::sort(folder_modes.begin(), folder_modes.end());
  for (const auto& [rel, mode] : folder_modes) {
    if (rel.empty()) continue;
    auto d = open_parent(ws.root, rel, CreateDirs::yes);
    if (!d) continue;
    (void)::mkdirat(d->fd(), base_of(rel).c_str(), 0700);
  }
  for (size_t i : deferred) KAI_TRY(add_target(i, false));
  auto fresh = fresh_txn_id(ws, now, targets);
  if (!fresh) return fresh.error();
  t.rec.id = std::move(*fresh);
  for (size_t i = 0; i < targets.size(); ++i) {
    const FileChange& orig = rec->files[origin[i]];
    FileChange f;
    f.rel = targets[i].rel;
    f.before = side_of(targets[i].current);
    f.after = orig.before;
    f.after.mode &= ~06000u;  // never a set-user-ID or set-group-ID file back
    if (targets[i].current.exists) {
      // A file the entry created is kept in the state dir, not beside it:
      // the folders the entry made then go with it.
      f.backup_rel = f.after.exists ? dir_of(f.rel) + backup_name(targets[i].name, t.rec.id)
                                    : kept_backup(ws, t.rec.id, f.rel);
      f.backup_blob = f.before.blob;
    }
    t.rec.files.push_back(f);
  }
  for (const auto& d : made.folders()) t.rec.files.push_back(made_folder(d));
  t.entry = make_entry(ws, t, "rollback", "rollback");
  t.entry.summary = fmt::format("rolled back {}", id);
  t.entry.why = force == Force::yes ? fmt::format("undo {} (forced)", id) : fmt::format("undo {}", id);
  t.entry.approver = decider;
  // Every record in a chain of rollbacks carries the proposal it began
  // with: undoing a rollback applies that proposal again.
  t.rec.proposal = rec->proposal;
  if (rec->proposal > 0) {
    t.proposal = rec->proposal;
    t.done_state = rec->kind == "rollback" ? State::applied : State::rolled_back;
  }
  // Many files (a changeset undone): written first, synced once.
  const Durability how = targets.size() > 1 ? Durability::batched : Durability::each;
  if (auto s = execute(ws, t, targets, after, how); !s) return s.error();
  made.keep();
  std::sort(dirs.rbegin(), dirs.rend());  // the deepest first
  for (const auto& d : dirs) remove_empty_dir(ws, d);
  // Folder modes as they were (never a set-group-ID or sticky bit the run
  // may have added: the recorded mode is the one before the run).
  for (auto it = folder_modes.rbegin(); it != folder_modes.rend(); ++it) {
    if (it->first.empty()) {
      (void)::chmod(ws.root.c_str(), it->second);
      continue;
    }
    auto d = open_parent(ws.root, it->first, CreateDirs::no);
    struct stat st {};
    if (!d || ::fstatat(d->fd(), base_of(it->first).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
      continue;
    (void)::fchmodat(d->fd(), base_of(it->first).c_str(), it->second, 0);
  }
  // The proposal as saved now (a notifier is told its new state), read
  // only when a notifier is set: a changeset's record is hundreds of KB.
  if (t.proposal > 0 && notify_wanted(ws))
    if (auto q = ws.store.load(t.proposal, Store::Payloads::none)) queue_notify(ws, *q, "rolled-back");
  bool backup = !t.rec.files.empty() && !t.rec.files[0].backup_rel.empty();
  return Outcome{t.rec.id, backup ? abs_path(ws, t.rec.files[0].backup_rel).string() : "", false, t.entry};
}

}  // namespace kai
