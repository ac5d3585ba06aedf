#include "lib/gate/txn.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/gate/apply.hpp"
#include "lib/util/git.hpp"
#include "lib/run/hooks.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace txn {

namespace {
constexpr std::string_view k_home = "~/";
// The user-level settings files `kaicoder integrate --user` writes
// (lib/harness/integrate), and nothing else in the owner's home.
constexpr std::string_view k_user_settings[] = {
    "~/.claude.json",          "~/.claude/settings.json", "~/.codex/config.toml", "~/.codex/hooks.json",
    "~/.gemini/settings.json", "~/.cursor/mcp.json",      "~/.cursor/hooks.json"};
}  // namespace

bool user_settings_file(std::string_view rel) {
  for (std::string_view f : k_user_settings)
    if (rel == f || (f.starts_with(rel) && f.size() > rel.size() && f[rel.size()] == '/' && rel.size() > k_home.size()))
      return true;
  return false;
}

Result<Place> place_of(const Workspace& ws, const std::string& rel) {
  if (!rel.starts_with(k_home)) return Place{ws.root, rel};
  if (!user_settings_file(rel))
    return make_error(Errc::denied, fmt::format("'{}' is outside root and not a harness's user settings file", rel),
                      "kaicoder writes outside root only the user-level settings kaicoder integrate --user wires");
  if (ws.home.empty() || !ws.home.is_absolute())
    return make_error(Errc::denied, fmt::format("cannot write '{}': the owner's home is unknown", rel));
  return Place{ws.home, rel.substr(k_home.size())};
}

fs::path abs_path(const Workspace& ws, const std::string& rel) {
  return rel.starts_with(k_home) ? ws.home / rel.substr(k_home.size()) : ws.root / rel;
}

namespace {
// The folder holding a transaction's file `rel`, wherever it lives.
Result<Dir> parent_of(const Workspace& ws, const std::string& rel, CreateDirs create) {
  auto pl = place_of(ws, rel);
  if (!pl) return pl.error();
  return open_parent(pl->base, pl->rel, create);
}
}  // namespace

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
bool same(const FileSide& a, const FileState& s, bool with_mode) {
  if (a.exists != s.exists) return false;
  if (!s.exists) return true;
  return a.blob == blob_id(s.bytes) && (!with_mode || (s.mode & 07777u) == (a.mode & 07777u));
}
bool mode_matters(const FileChange& f) {
  return f.before.exists && f.after.exists && (f.before.mode & 07777u) != (f.after.mode & 07777u);
}

Result<Target> open_target(Workspace& ws, const std::string& rel, CreateDirs create, Guard guard) {
  std::string r = rel;
  if (!rel.starts_with(k_home)) {
    auto rp = resolve(ws.root, ws.root, rel);
    if (!rp) return rp.error();
    if (guard != Guard::own_config || rp->rel != k_root_config) KAI_TRY(check_write(ws.guards, *rp));
    r = rp->rel;
  }
  auto d = parent_of(ws, r, create);
  if (!d) return d.error();
  Target t{r, base_of(r), std::move(*d), {}};
  auto st = read_at(t.dir, t.name);
  if (!st) return st.error();
  if (st->exists && !st->regular)
    return make_error(Errc::denied, fmt::format("'{}' is not a regular file", rel),
                      "kaicoder changes regular files only");
  if (st->exists) KAI_TRY(check_links(ws.guards, rel, st->nlink));
  t.current = std::move(*st);
  return t;
}

FileChange change_of(const Target& tg, const std::optional<std::string>& after, unsigned mode, const std::string& id) {
  FileChange f;
  f.rel = tg.rel;
  f.before = side_of(tg.current);
  f.after = after ? FileSide{true, blob_id(*after), mode} : FileSide{};
  if (tg.current.exists) {
    f.backup_rel = dir_of(tg.rel) + backup_name(tg.name, id);
    f.backup_blob = f.before.blob;
  }
  return f;
}

FileChange made_folder(const std::string& rel) { return {rel, FileSide{}, FileSide{true, "", k_mode_dir}, "", ""}; }

Result<std::string> fresh_txn_id(Workspace& ws, TimePoint t, const std::vector<Target>& targets) {
  return ws.journal.fresh_id(t, [&](const std::string& cand) -> Result<bool> {
    for (const auto& tg : targets) {
      auto taken = backup_taken(tg.dir, tg.name, cand);
      if (!taken || *taken) return taken;
    }
    return Result<bool>(false);
  });
}

// ----- the transaction record ------------------------------------------------

namespace {

bool is_dir_entry(const FileChange& f) { return f.after.mode == k_mode_dir; }

json side_json(const FileSide& s) { return {{"exists", s.exists}, {"blob", s.blob}, {"mode", s.mode}}; }
FileSide side_from(const json& j) { return {j.value("exists", false), j.value("blob", ""), j.value("mode", 0644u)}; }

json txn_json(const Txn& t) {
  json files = json::array();
  for (const auto& f : t.rec.files)
    files.push_back({{"path", f.rel},
                     {"before", side_json(f.before)},
                     {"after", side_json(f.after)},
                     {"backup", f.backup_rel},
                     {"backup_blob", f.backup_blob}});
  const Entry& e = t.entry;
  return {{"id", t.rec.id},
          {"kind", t.rec.kind},
          {"time", t.rec.time},
          {"proposal", t.proposal},
          {"done_state", to_string(t.done_state)},
          {"record_proposal", t.rec.proposal},
          {"rolls_back", t.rec.rolls_back},
          {"files", files},
          {"entry",
           {{"time", e.time},
            {"kind", e.kind},
            {"rollback_id", e.rollback_id},
            {"files", e.files},
            {"action", e.action},
            {"summary", e.summary},
            {"why", e.why},
            {"backup", e.backup},
            {"approver", e.approver},
            {"result", e.result},
            {"rollback", e.rollback}}}};
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
                           side_from(f.value("after", json::object())), f.value("backup", ""),
                           f.value("backup_blob", "")});
  json e = j.value("entry", json::object());
  t.entry = {e.value("time", ""),        e.value("kind", ""),
             e.value("rollback_id", ""), e.value("files", std::vector<std::string>{}),
             e.value("action", ""),      e.value("summary", ""),
             e.value("why", ""),         e.value("backup", ""),
             e.value("approver", ""),    e.value("result", ""),
             e.value("rollback", ""),    0};
  if (t.rec.id.empty() || t.rec.files.empty()) return std::nullopt;
  return t;
}

fs::path intent_path(const Workspace& ws, const std::string& id) { return ws.store.dir() / "intents" / (id + ".json"); }

// An intent is sealed like every record (lib/store/mac), bound to its rollback id,
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
    if (f.rel.starts_with(k_home)) {
      auto pl = place_of(ws, f.rel);  // a user settings file, by name
      if (!pl) return pl.error();
    } else {
      auto rp = resolve(ws.root, ws.root, f.rel);
      if (!rp) return rp.error();
      if (rp->rel != f.rel)
        return make_error(Errc::denied, fmt::format("it names '{}' in a form kaicoder never writes", f.rel));
      KAI_TRY(check_write(ws.guards, *rp));
    }
    if (!f.backup_rel.empty() && f.backup_rel != dir_of(f.rel) + backup_name(base_of(f.rel), t->rec.id))
      return make_error(Errc::denied,
                        fmt::format("it names '{}', which is not the backup of '{}'", f.backup_rel, f.rel));
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
  // An apply happens once (lib/store/mac, Sealer::spend); losing the note only
  // loses that guard, so it never fails the change that already landed.
  if (t.proposal > 0 && t.rec.kind != "rollback" && t.rec.kind != "run")
    (void)ws.sealer.spend("apply", std::to_string(t.proposal));
  std::error_code ec;
  fs::remove(intent_path(ws, t.rec.id), ec);
  return ok_status();
}

// A backup the crash cut short is provably kaicoder's own leftover: the
// sealed intent names it (its name holds this transaction's fresh id), no
// journal record refers to it, the file it backs up still holds the bytes
// it was copying, and it holds none of them or only their beginning.
bool partial_backup(Workspace& ws, const Txn& t, const std::string& bytes, const FileState& cur, const FileChange& f) {
  if (ws.journal.has(t.rec.id) || !same(f.before, cur)) return false;
  return bytes.empty() || std::string_view(cur.bytes).substr(0, bytes.size()) == bytes;
}

// Undo whatever part of `t` reached the tree: files that already hold their
// new bytes (and mode) get their old ones back from this transaction's
// backup (or are removed when they did not exist); then this transaction's
// backups go, and the folders it created, when empty.
Status undo(Workspace& ws, const Txn& t) {
  std::vector<std::string> made;
  for (const auto& f : t.rec.files) {
    if (is_dir_entry(f)) {
      if (!f.before.exists) made.push_back(f.rel);
      continue;
    }
    auto d = parent_of(ws, f.rel, CreateDirs::no);
    if (!d) continue;  // its folder never appeared: nothing of this file landed
    auto cur = read_at(*d, base_of(f.rel));
    if (!cur) return cur.error();
    std::optional<FileState> backup;
    bool leftover = false;  // a backup cut short by the crash
    if (!f.backup_rel.empty()) {
      auto b = read_at(*d, base_of(f.backup_rel));
      if (b && b->exists && b->regular && blob_id(b->bytes) == f.backup_blob)
        backup = std::move(*b);
      else if (b && b->exists && b->regular)
        leftover = partial_backup(ws, t, b->bytes, *cur, f);
    }
    const bool mm = mode_matters(f);
    if (same(f.after, *cur, mm) && !same(f.before, *cur, mm)) {
      if (f.before.exists && !backup)
        return make_error(Errc::io,
                          fmt::format("cannot undo the interrupted change to '{}': its backup is gone", f.rel));
      KAI_TRY(f.before.exists ? replace_at(*d, base_of(f.rel), backup->bytes, f.before.mode)
                              : unlink_at(*d, base_of(f.rel)));
    }
    if (backup || leftover) KAI_TRY(unlink_at(*d, base_of(f.backup_rel)));
  }
  std::sort(made.rbegin(), made.rend());  // the deepest first
  for (const auto& dir : made) remove_empty_dir(ws, dir);
  std::error_code ec;
  fs::remove(intent_path(ws, t.rec.id), ec);
  return ok_status();
}

bool landed(Workspace& ws, const Txn& t) {
  for (const auto& f : t.rec.files) {
    if (is_dir_entry(f)) continue;
    auto d = parent_of(ws, f.rel, CreateDirs::no);
    if (!d) return !f.after.exists;  // a file removed with its folder
    auto cur = read_at(*d, base_of(f.rel));
    if (!cur || !same(f.after, *cur, mode_matters(f))) return false;
  }
  return true;
}

}  // namespace

Status execute(Workspace& ws, Txn& t, std::vector<Target>& targets,
               const std::vector<std::optional<std::string>>& after, Durability durability) {
  const Sync sync = durability == Durability::each ? Sync::now : Sync::later;
  KAI_TRY(write_intent(ws, t));
  fault_point("after-intent");
  size_t i = 0;
  for (const FileChange& f : t.rec.files) {
    if (is_dir_entry(f)) continue;
    Target& tg = targets[i];
    const std::optional<std::string>& next = after[i];
    ++i;
    Status s = f.backup_rel.empty() ? ok_status()
                                    : write_exclusive_at(tg.dir, base_of(f.backup_rel), tg.current.bytes,
                                                         tg.current.mode & ~mode_t{06000}, sync);
    fault_point("after-backup");
    if (s) s = next ? replace_at(tg.dir, tg.name, *next, f.after.mode, sync) : unlink_at(tg.dir, tg.name, sync);
    if (!s) {
      (void)undo(ws, t);
      return s;
    }
    fault_point("after-replace");
  }
  // Batched: every backup and new file reaches the disk before the journal
  // says the change happened.
  if (durability == Durability::batched) {
    if (auto s = sync_file_system(ws.root); !s) {
      (void)undo(ws, t);
      return s;
    }
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
  size_t n = 0;
  for (const auto& f : t.rec.files) n += !is_dir_entry(f);
  for (const auto& f : t.rec.files) {
    if (is_dir_entry(f)) continue;
    e.files.push_back(abs_path(ws, f.rel).string());
    // Several files: a backup for each, in the same order ("—" for a new one).
    if (!f.backup_rel.empty())
      backups.push_back(abs_path(ws, f.backup_rel).string());
    else if (n > 1)
      backups.push_back(or_none(""));  // keeps the list in line with the files
    // Whole root-relative paths: README.md alone could be any folder's.
    undo.push_back(f.before.exists ? fmt::format("restore {} \u2192 {}", f.backup_rel, f.rel)
                                   : fmt::format("delete {}", f.rel));
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  const bool any_backup =
      std::any_of(backups.begin(), backups.end(), [](const std::string& b) { return b != or_none(""); });
  e.backup = any_backup ? join(backups) : std::string();
  e.rollback = join(undo);
  return ws.redact(std::move(e));
}

void describe_apply(const Workspace& ws, Entry& e, const Proposal& p, const std::string& approver, bool forced) {
  e.summary = ws.redact(p.summary);
  e.why = ws.redact(p.why);
  e.approver = approver;
  if (forced) e.result = "ok (forced: validation failed)";
}

Outcome record_applied(Workspace& ws, Proposal& p, const Txn& t, std::string backup) {
  Outcome o{t.rec.id, std::move(backup), false, t.entry};
  p.state = State::applied;
  p.rollback_id = t.rec.id;
  p.backup = o.backup;
  p.result = t.entry.result;
  queue_notify(ws, p, "applied");
  return o;
}

void remove_empty_dir(Workspace& ws, const std::string& rel) {
  if (auto d = parent_of(ws, rel, CreateDirs::no)) (void)::unlinkat(d->fd(), base_of(rel).c_str(), AT_REMOVEDIR);
}

}  // namespace txn

using namespace txn;

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
      auto d = parent_of(ws, f.rel, CreateDirs::no);
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