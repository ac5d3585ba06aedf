#include "lib/apply.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/beneath.hpp"
#include "lib/git.hpp"
#include "lib/hooks.hpp"
#include "lib/snapshot.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string dir_of(const std::string& rel) {
  auto slash = rel.rfind('/');
  return slash == std::string::npos ? std::string{} : rel.substr(0, slash + 1);
}
std::string base_of(const std::string& rel) {
  auto slash = rel.rfind('/');
  return slash == std::string::npos ? rel : rel.substr(slash + 1);
}
std::string backup_name(const std::string& name, const std::string& id) { return name + ".bak-kaicoder-" + id; }

// Whether anything (file, folder, symlink) holds the backup name for `id`
// beside `name`. Any error but "no such name" (a name too long, say) is an
// error, never "taken": counting it as taken made the search for a free
// name endless.
Result<bool> backup_taken(const Dir& dir, const std::string& name, const std::string& id) {
  const std::string bak = backup_name(name, id);
  struct stat st {};
  if (::fstatat(dir.fd(), bak.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
  if (errno == ENOENT) return false;
  return make_error(Errc::io, fmt::format("cannot use the backup name '{}': {}", bak, errno_text(errno)));
}

FileSide side_of(const FileState& s) { return {s.exists, s.exists ? blob_id(s.bytes) : std::string{}, s.mode}; }
bool same(const FileSide& a, const FileState& s) { return a.exists == s.exists && (!s.exists || a.blob == blob_id(s.bytes)); }

// One file of a transaction, opened beneath root.
struct Target {
  std::string rel, name;
  Dir dir;
  FileState current;
};

Result<Target> open_target(Workspace& ws, const std::string& rel, CreateDirs create) {
  auto rp = resolve(ws.root, ws.root, rel);
  if (!rp) return rp.error();
  KAI_TRY(check_write(ws.guards, *rp));
  auto d = open_parent(ws.root, rp->rel, create);
  if (!d) return d.error();
  Target t{rp->rel, base_of(rp->rel), std::move(*d), {}};
  auto st = read_at(t.dir, t.name);
  if (!st) return st.error();
  if (st->exists && !st->regular)
    return make_error(Errc::denied, fmt::format("'{}' is not a regular file", rel), "kaicoder changes regular files only");
  if (st->exists) KAI_TRY(check_links(ws.guards, rel, st->nlink));
  t.current = std::move(*st);
  return t;
}

// ----- the transaction record ------------------------------------------------

struct Txn {
  Record rec;
  Entry entry;
  int proposal = 0;        // proposal whose status follows the outcome
  State done_state = State::applied;
};

json side_json(const FileSide& s) { return {{"exists", s.exists}, {"blob", s.blob}, {"mode", s.mode}}; }
FileSide side_from(const json& j) { return {j.value("exists", false), j.value("blob", ""), j.value("mode", 0644u)}; }

json txn_json(const Txn& t) {
  json files = json::array();
  for (const auto& f : t.rec.files)
    files.push_back({{"path", f.rel}, {"before", side_json(f.before)}, {"after", side_json(f.after)},
                     {"backup", f.backup_rel}, {"backup_blob", f.backup_blob}});
  const Entry& e = t.entry;
  return {{"id", t.rec.id}, {"kind", t.rec.kind}, {"time", t.rec.time}, {"proposal", t.proposal},
          {"done_state", to_string(t.done_state)}, {"record_proposal", t.rec.proposal},
          {"rolls_back", t.rec.rolls_back}, {"files", files},
          {"entry", {{"time", e.time}, {"kind", e.kind}, {"rollback_id", e.rollback_id}, {"files", e.files},
                     {"action", e.action}, {"summary", e.summary}, {"why", e.why}, {"backup", e.backup},
                     {"approver", e.approver}, {"result", e.result}, {"rollback", e.rollback}}}};
}

std::optional<Txn> txn_from(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Txn t;
  t.rec.id = j.value("id", "");
  t.rec.kind = j.value("kind", "");
  t.rec.time = j.value("time", "");
  t.rec.proposal = j.value("record_proposal", 0);
  t.rec.rolls_back = j.value("rolls_back", "");
  t.proposal = j.value("proposal", 0);
  t.done_state = parse_state(j.value("done_state", "applied")).value_or(State::applied);
  for (const auto& f : j.value("files", json::array()))
    t.rec.files.push_back({f.value("path", ""), side_from(f.value("before", json::object())),
                           side_from(f.value("after", json::object())), f.value("backup", ""), f.value("backup_blob", "")});
  json e = j.value("entry", json::object());
  t.entry = {e.value("time", ""),   e.value("kind", ""),    e.value("rollback_id", ""),
             e.value("files", std::vector<std::string>{}), e.value("action", ""), e.value("summary", ""),
             e.value("why", ""),    e.value("backup", ""),  e.value("approver", ""),
             e.value("result", ""), e.value("rollback", ""), 0};
  if (t.rec.id.empty() || t.rec.files.empty()) return std::nullopt;
  return t;
}

fs::path intent_path(const Workspace& ws, const std::string& id) { return ws.store.dir() / "intents" / (id + ".json"); }

// An intent is sealed like every record (lib/mac), bound to its rollback id,
// which is also its file name.
Status write_intent(Workspace& ws, const Txn& t) {
  json j = txn_json(t);
  auto mac = ws.sealer.seal("intent", t.rec.id, j.dump());
  if (!mac) return mac.error();
  j["seal"] = *mac;
  KAI_TRY(make_dirs(ws.store.dir() / "intents", 0700));
  return write_file_atomic(intent_path(ws, t.rec.id), j.dump(2) + "\n", 0600);
}

// The intent in `text`, named `name`: the transaction when it parses, its
// seal verifies and every file it names passes the guardrails again; else
// why it must not be obeyed.
Result<Txn> read_intent(Workspace& ws, const std::string& name, const std::string& text) {
  json j = json::parse(text, nullptr, false);
  std::string mac = j.is_object() && j.contains("seal") && j["seal"].is_string() ? j["seal"].get<std::string>() : "";
  if (j.is_object()) j.erase("seal");
  auto t = txn_from(j);
  if (!t) return make_error(Errc::io, "it is not a well-formed intent");
  SealCheck verdict = t->rec.id != name ? SealCheck::bad : ws.sealer.check("intent", name, j.dump(), mac);
  if (verdict != SealCheck::ok) return seal_error(ws.sealer, verdict, "it", "");
  // Sealed, so kaicoder wrote it; the guardrails are checked again anyway,
  // as they are before every write: what was allowed then may not be now.
  for (const auto& f : t->rec.files) {
    auto rp = resolve(ws.root, ws.root, f.rel);
    if (!rp) return rp.error();
    if (rp->rel != f.rel) return make_error(Errc::denied, fmt::format("it names '{}' in a form kaicoder never writes", f.rel));
    KAI_TRY(check_write(ws.guards, *rp));
    if (!f.backup_rel.empty() && f.backup_rel != dir_of(f.rel) + backup_name(base_of(f.rel), t->rec.id))
      return make_error(Errc::denied, fmt::format("it names '{}', which is not the backup of '{}'", f.backup_rel, f.rel));
  }
  return std::move(*t);
}

// Move an intent that must not be obeyed out of the way, beside a note of why,
// for doctor to report and a person to look at. Never deleted.
Status quarantine(Workspace& ws, const fs::path& intent, const std::string& why) {
  const fs::path dir = ws.store.dir() / "quarantine";
  KAI_TRY(make_dirs(dir, 0700));
  const std::string base = "intent-" + intent.stem().string();
  for (int n = 1; n <= 1000; ++n) {
    fs::path to = dir / (n == 1 ? base : fmt::format("{}-{}", base, n));
    std::error_code ec;
    if (fs::exists(fs::symlink_status(to.string() + ".json", ec))) continue;
    KAI_TRY(write_file_atomic(to.string() + ".why", why + "\n", 0600));
    fs::rename(intent, to.string() + ".json", ec);
    if (ec) return make_error(Errc::io, fmt::format("cannot move '{}' aside: {}", intent.string(), ec.message()));
    return ok_status();
  }
  return make_error(Errc::io, fmt::format("cannot move '{}' aside: {} is full", intent.string(), dir.string()));
}

// The steps after the tree holds the new bytes. Each is idempotent, so
// recover() can run them again after a crash at any point.
Status finish(Workspace& ws, const Txn& t) {
  if (!ws.journal.has(t.rec.id)) KAI_TRY(ws.journal.write(t.rec));
  fault_point("after-journal");
  auto logged = ws.changelog.live_contains(t.rec.id);
  if (!logged) return logged.error();
  if (!*logged) KAI_TRY(ws.changelog.prepend(t.entry));
  fault_point("after-changelog");
  if (t.proposal > 0) {
    auto p = ws.store.load(t.proposal);
    // A record that does not verify is left as it is, never sealed anew.
    if (p && p->sealed == SealCheck::ok) {
      p->state = t.done_state;
      if (t.done_state == State::applied) {
        p->rollback_id = t.rec.id;
        p->backup = t.entry.backup;
        // A run keeps its own outcome (its exit code) when its files come back.
        if (p->kind != Kind::run) {
          p->result = t.entry.result;
          p->outcome_code = 0;
        }
      }
      KAI_TRY(ws.store.save(*p));
    }
  }
  fault_point("after-status");
  // An apply happens once (lib/mac, Sealer::spend); losing the note only
  // loses that guard, so it never fails the change that already landed.
  if (t.proposal > 0 && t.rec.kind != "rollback" && t.rec.kind != "run")
    (void)ws.sealer.spend("apply", std::to_string(t.proposal));
  std::error_code ec;
  fs::remove(intent_path(ws, t.rec.id), ec);
  return ok_status();
}

Status undo(Workspace& ws, const Txn& t);

// Run a transaction: `targets[i]` becomes `after[i]` (nullopt = removed).
// A failure before the tree holds every new file is undone at once; a
// failure after it leaves the intent for recover() to finish.
Status execute(Workspace& ws, Txn& t, std::vector<Target>& targets, const std::vector<std::optional<std::string>>& after) {
  KAI_TRY(write_intent(ws, t));
  fault_point("after-intent");
  for (size_t i = 0; i < targets.size(); ++i) {
    Target& tg = targets[i];
    const FileChange& f = t.rec.files[i];
    Status s = f.backup_rel.empty() ? ok_status()
                                    : write_exclusive_at(tg.dir, base_of(f.backup_rel), tg.current.bytes, tg.current.mode & ~mode_t{06000});
    fault_point("after-backup");
    if (s) s = after[i] ? replace_at(tg.dir, tg.name, *after[i], f.after.mode) : unlink_at(tg.dir, tg.name);
    if (!s) {
      (void)undo(ws, t);
      return s;
    }
    fault_point("after-replace");
  }
  if (auto s = finish(ws, t); !s)
    return make_error(s.error().code, s.error().message,
                      "the file holds the new content; the next kaicoder command finishes logging it");
  return ok_status();
}

Entry make_entry(const Workspace& ws, const Txn& t, const std::string& kind, const std::string& action) {
  Entry e;
  e.time = t.rec.time;
  e.kind = kind;
  e.rollback_id = t.rec.id;
  e.action = action;
  e.result = "ok";
  std::vector<std::string> backups, undo;
  for (const auto& f : t.rec.files) {
    e.files.push_back((ws.root / f.rel).string());
    if (!f.backup_rel.empty()) backups.push_back((ws.root / f.backup_rel).string());
    undo.push_back(f.before.exists ? fmt::format("restore {} \u2192 {}", base_of(f.backup_rel), base_of(f.rel))
                                   : fmt::format("delete {}", base_of(f.rel)));
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  e.backup = join(backups);
  e.rollback = join(undo);
  return ws.redact(std::move(e));
}

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
  for (size_t at = current.find(target); at != std::string_view::npos; at = current.find(target, at + 1)) hits.push_back(at);
  if (hits.empty())
    return make_error(Errc::conflict, fmt::format("target not found in '{}'", path),
                      "read the file again ('kaicoder read') and copy the exact text, whitespace included");
  if (hits.size() > 1)
    return make_error(Errc::conflict,
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
  if (p.state != State::approved && p.state != State::failed)
    return make_error(Errc::conflict, fmt::format("proposal {} is {}, not approved", p.id, to_string(p.state)),
                      p.state == State::pending ? "approve it first: kaicoder approve " + std::to_string(p.id) : "");
  // Before anything else in the record is believed: who approved it, the
  // digest, the state all come from a record that must be kaicoder's own.
  KAI_TRY(require_sealed(ws.store, p));
  if (p.approved_digest.empty())
    return make_error(Errc::conflict, fmt::format("proposal {} was never approved", p.id));
  KAI_TRY(ws.changelog.check_readable());  // before any file changes: the entry must be writable
  // A sealed record can still be an old copy put back: one that was applied
  // (and maybe rolled back since) is never applied again on its strength.
  // The owner's folder says so even when the journal was pruned by hand.
  std::string last = ws.journal.latest_for(p.path);
  auto rec = last.empty() ? Result<Record>(make_error(Errc::not_found, "")) : ws.journal.load(last);
  if (ws.sealer.spent("apply", std::to_string(p.id)) || (rec && rec->proposal == p.id))
    return make_error(Errc::conflict,
                      fmt::format("proposal {} was applied before{}", p.id, rec && rec->proposal == p.id ? " (entry " + last + ")" : ""),
                      "propose the change again to apply it once more");
  if (digest(p) != p.approved_digest)
    return fail(make_error(Errc::conflict, fmt::format("proposal {} was changed after it was approved", p.id),
                           "its staged files no longer match what the approver saw; propose it again"));
  if (auto v = validation_permits_apply(p, force); !v) return fail(v.error());
  const bool forced = force == Force::yes && p.validation.status == "failed";
  CreateDirs create = p.kind == Kind::write && !p.base.exists ? CreateDirs::yes : CreateDirs::no;
  auto tg = open_target(ws, p.path, create);
  if (!tg) return fail(tg.error());
  const FileState& cur = tg->current;
  std::optional<std::string> after;
  if (p.kind == Kind::edit) {
    if (!cur.exists) return fail(make_error(Errc::conflict, fmt::format("'{}' no longer exists", p.path)));
    auto r = apply_edit(cur.bytes, p.target, p.replacement, p.path);
    if (!r) return fail(r.error());
    after = std::move(*r);
  } else {
    if (!same(FileSide{p.base.exists, p.base.blob, p.base.mode}, cur))
      return fail(make_error(Errc::conflict, fmt::format("'{}' changed since proposal {} was made (stale base)", p.path, p.id),
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
  t.entry = make_entry(ws, t, t.rec.kind, std::string(action_name(p.kind)));
  t.entry.summary = ws.redact(p.summary);
  t.entry.why = ws.redact(p.why);
  t.entry.approver = approver;
  if (forced) t.entry.result = "ok (forced: validation failed)";
  std::vector<Target> targets;
  targets.push_back(std::move(*tg));
  if (auto s = execute(ws, t, targets, {after}); !s) return s.error();
  Outcome o{t.rec.id, f.backup_rel.empty() ? "" : (ws.root / f.backup_rel).string(), false, t.entry};
  p.state = State::applied;
  p.rollback_id = t.rec.id;
  p.backup = o.backup;
  p.result = t.entry.result;
  queue_notify(ws, p, "applied");
  return o;
}

namespace {

// A backup the crash cut short is provably kaicoder's own leftover: the
// sealed intent names it (its name holds this transaction's fresh id), no
// journal record refers to it, the file it backs up still holds the bytes
// it was copying, and it holds none of them or only their beginning.
bool partial_backup(Workspace& ws, const Txn& t, const std::string& bytes, const FileState& cur, const FileChange& f) {
  if (ws.journal.has(t.rec.id) || !same(f.before, cur)) return false;
  return bytes.empty() || std::string_view(cur.bytes).substr(0, bytes.size()) == bytes;
}

// Undo whatever part of `t` reached the tree: files that already hold their
// new bytes get their old bytes back from this transaction's backup (or are
// removed when they did not exist); then this transaction's backups go.
Status undo(Workspace& ws, const Txn& t) {
  for (const auto& f : t.rec.files) {
    auto d = open_parent(ws.root, f.rel, CreateDirs::no);
    if (!d) continue;  // its folder never appeared: nothing of this file landed
    auto cur = read_at(*d, base_of(f.rel));
    if (!cur) return cur.error();
    std::optional<FileState> backup;
    bool leftover = false;  // a backup cut short by the crash
    if (!f.backup_rel.empty()) {
      auto b = read_at(*d, base_of(f.backup_rel));
      if (b && b->exists && b->regular && blob_id(b->bytes) == f.backup_blob) backup = std::move(*b);
      else if (b && b->exists && b->regular) leftover = partial_backup(ws, t, b->bytes, *cur, f);
    }
    if (same(f.after, *cur) && !same(f.before, *cur)) {
      if (f.before.exists && !backup)
        return make_error(Errc::io, fmt::format("cannot undo the interrupted change to '{}': its backup is gone", f.rel));
      KAI_TRY(f.before.exists ? replace_at(*d, base_of(f.rel), backup->bytes, f.before.mode) : unlink_at(*d, base_of(f.rel)));
    }
    if (backup || leftover) KAI_TRY(unlink_at(*d, base_of(f.backup_rel)));
  }
  std::error_code ec;
  fs::remove(intent_path(ws, t.rec.id), ec);
  return ok_status();
}

bool landed(Workspace& ws, const Txn& t) {
  for (const auto& f : t.rec.files) {
    auto d = open_parent(ws.root, f.rel, CreateDirs::no);
    if (!d) return false;
    auto cur = read_at(*d, base_of(f.rel));
    if (!cur || !same(f.after, *cur)) return false;
  }
  return true;
}

// Why rolling back `f` of entry `id` would overwrite somebody else's work.
Error changed_since(Workspace& ws, const std::string& id, const FileChange& f, const FileState& cur) {
  std::string later = ws.journal.latest_for(f.rel);
  std::string what = later != id && !later.empty()
                         ? fmt::format("'{}' was changed by a later entry {}", f.rel, later)
                         : fmt::format("'{}' was changed by hand since {} ({})", f.rel, id,
                                       cur.exists ? "its content differs" : "it was removed");
  std::string hint = later != id && !later.empty()
                         ? fmt::format("roll back {} first, or pass --force to overwrite it (a backup of it is kept)", later)
                         : "pass --force to overwrite it (a backup of its current content is kept)";
  return make_error(Errc::conflict, fmt::format("cannot roll back {}: {}", id, what), hint);
}

// The symlink a run made at `f.rel` must still be that link (or gone).
Status check_link(Workspace& ws, const std::string& id, const FileChange& f, Force force) {
  auto d = open_parent(ws.root, f.rel, CreateDirs::no);
  if (!d) return d.error().code == Errc::conflict ? ok_status() : Status(d.error());
  std::string target(4096, '\0');
  ssize_t n = ::readlinkat(d->fd(), base_of(f.rel).c_str(), target.data(), target.size());
  if (n < 0 && errno == ENOENT) return ok_status();
  if (force == Force::no && (n < 0 || blob_id(target.substr(0, static_cast<size_t>(n))) != f.after.blob))
    return make_error(Errc::conflict, fmt::format("cannot roll back {}: '{}' is no longer the symlink the run made", id, f.rel),
                      "pass --force to restore what the run replaced anyway (the symlink is removed)");
  return ok_status();
}

Status remove_link(Workspace& ws, const std::string& rel) {
  auto d = open_parent(ws.root, rel, CreateDirs::no);
  if (!d) return d.error().code == Errc::conflict ? ok_status() : Status(d.error());
  struct stat st;
  if (::fstatat(d->fd(), base_of(rel).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) return ok_status();
  return unlink_at(*d, base_of(rel));
}

void remove_empty_dir(Workspace& ws, const std::string& rel) {
  if (auto d = open_parent(ws.root, rel, CreateDirs::no)) (void)::unlinkat(d->fd(), base_of(rel).c_str(), AT_REMOVEDIR);
}

}  // namespace

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
  auto add_target = [&](size_t i, bool compare) -> Status {
    const FileChange& f = rec->files[i];
    auto tg = open_target(ws, f.rel, f.before.exists ? CreateDirs::yes : CreateDirs::no);
    if (!tg) return tg.error();
    if (compare && !same(f.after, tg->current) && force == Force::no) return changed_since(ws, id, f, tg->current);
    if (f.before.exists && f.backup_rel.empty() && rec->kind == "run") {
      // A run's files have no backups beside them: their bytes before the
      // run are in the snapshot store.
      auto b = snapshots_of(ws).blob(id, f.before.blob);
      if (!b)
        return make_error(b.error().code, fmt::format("cannot roll back {}: {}", id, b.error().message), b.error().hint);
      after.push_back(std::move(*b));
    } else if (f.before.exists) {
      auto b = read_at(tg->dir, base_of(f.backup_rel));
      if (!b || !b->exists || !b->regular || blob_id(b->bytes) != f.backup_blob)
        return make_error(Errc::conflict,
                          fmt::format("cannot roll back {}: backup '{}' is {}", id, f.backup_rel,
                                      !b ? b.error().message : !b->exists ? "missing" : "changed since it was taken"),
                          "kaicoder restores only a backup whose bytes it recorded; restore by hand if you trust it");
      after.push_back(std::move(b->bytes));
    } else {
      after.push_back(std::nullopt);
    }
    targets.push_back(std::move(*tg));
    origin.push_back(i);
    return ok_status();
  };
  for (size_t i = 0; i < rec->files.size(); ++i) {
    const FileChange& f = rec->files[i];
    if (f.after.mode == k_mode_dir) {
      dirs.push_back(f.rel);
    } else if (f.after.mode == k_mode_link) {
      KAI_TRY(check_link(ws, id, f, force));
      links.push_back(f.rel);
      if (f.before.exists) deferred.push_back(i);
    } else if (behind_link(f.rel)) {
      deferred.push_back(i);
    } else {
      KAI_TRY(add_target(i, true));
    }
  }
  if (targets.empty() && links.empty() && dirs.empty()) return make_error(Errc::conflict, fmt::format("entry {} changed no file", id));
  if (check == CheckOnly::yes) return Outcome{};
  for (const auto& l : links) KAI_TRY(remove_link(ws, l));
  for (size_t i : deferred) KAI_TRY(add_target(i, false));
  auto fresh = ws.journal.fresh_id(now, [&](const std::string& cand) -> Result<bool> {
    for (const auto& tg : targets) {
      auto taken = backup_taken(tg.dir, tg.name, cand);
      if (!taken || *taken) return taken;
    }
    return Result<bool>(false);
  });
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
      f.backup_rel = dir_of(f.rel) + backup_name(targets[i].name, t.rec.id);
      f.backup_blob = f.before.blob;
    }
    t.rec.files.push_back(f);
  }
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
  if (auto s = execute(ws, t, targets, after); !s) return s.error();
  std::sort(dirs.rbegin(), dirs.rend());  // the deepest first
  for (const auto& d : dirs) remove_empty_dir(ws, d);
  if (t.proposal > 0)
    if (auto q = ws.store.load(t.proposal, Store::Payloads::none)) queue_notify(ws, *q, "rolled-back");
  bool backup = !t.rec.files.empty() && !t.rec.files[0].backup_rel.empty();
  return Outcome{t.rec.id, backup ? (ws.root / t.rec.files[0].backup_rel).string() : "", false, t.entry};
}

namespace {
std::vector<fs::path> intent_files(const Workspace& ws) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(ws.store.dir() / "intents", ec))
    if (e.path().extension() == ".json") found.push_back(e.path());
  std::sort(found.begin(), found.end());
  return found;
}
}  // namespace

std::vector<IntentInfo> inspect_intents(Workspace& ws) {
  std::vector<IntentInfo> out;
  for (const auto& path : intent_files(ws)) {
    IntentInfo info;
    info.name = path.stem().string();
    auto text = read_file(path);
    auto t = text ? read_intent(ws, info.name, *text) : Result<Txn>(text.error());
    if (!t) {
      info.refused = t.error().message;
      out.push_back(std::move(info));
      continue;
    }
    info.proposal = t->proposal;
    info.rollback_id = t->rec.id;
    for (const auto& f : t->rec.files) {
      if (f.backup_rel.empty()) continue;
      auto d = open_parent(ws.root, f.rel, CreateDirs::no);
      if (!d) continue;
      auto b = read_at(*d, base_of(f.backup_rel));
      auto cur = read_at(*d, base_of(f.rel));
      if (b && cur && b->exists && b->regular && blob_id(b->bytes) != f.backup_blob &&
          partial_backup(ws, *t, b->bytes, *cur, f))
        info.cut_backups.push_back(f.backup_rel);
    }
    out.push_back(std::move(info));
  }
  return out;
}

Result<int> recover(Workspace& ws) {
  std::vector<fs::path> found = intent_files(ws);
  if (!found.empty()) KAI_TRY(ws.sealer.usable());  // without the key nothing can be told apart
  for (const auto& path : found) {
    auto text = read_owned(path);
    if (!text) return text.error();
    auto t = read_intent(ws, path.stem().string(), *text);
    if (!t) {
      // Forged, copied, stale or corrupt: never obeyed, kept for a person.
      KAI_TRY(quarantine(ws, path, t.error().message));
      continue;
    }
    KAI_TRY(landed(ws, *t) ? finish(ws, *t) : undo(ws, *t));
  }
  return static_cast<int>(found.size());
}

}  // namespace kai
