#include "lib/gate/txn.hpp"

#include <algorithm>
#include <cerrno>
#include <set>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/gate/apply.hpp"
#include "lib/util/git.hpp"
#include "lib/run/hooks.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json_bounded.hpp"

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

std::string temp_name(const std::string& name, const std::string& id) {
  const std::string suffix = ".kaicoder-tmp-" + id;
  return "." + name.substr(0, std::min(name.size(), k_name_max - 1 - suffix.size())) + suffix;
}

std::string kept_dir(const Workspace& ws, const std::string& id) { return ws.guards.state_dir + "/kept/" + id; }
std::string kept_backup(const Workspace& ws, const std::string& id, const std::string& rel) {
  return kept_dir(ws, id) + "/" + blob_id(rel);
}

namespace {
// Whether anything (file, folder, symlink) holds `name` in `dir`. Any error
// but "no such name" (a name too long, say) is an error, never "taken":
// counting it as taken made the search for a free name endless.
Result<bool> name_taken(const Dir& dir, const std::string& name) {
  struct stat st {};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
  if (errno == ENOENT) return false;
  return make_error(Errc::io, fmt::format("cannot use the name '{}': {}", name, errno_text(errno)));
}
}  // namespace

// Whether anything holds the backup name (or the temp name) for `id` beside `name`.
Result<bool> backup_taken(const Dir& dir, const std::string& name, const std::string& id) {
  auto bak = name_taken(dir, backup_name(name, id));
  if (!bak || *bak) return bak;
  return name_taken(dir, temp_name(name, id));
}

namespace {
// The folder of f's backup: the file's own (a backup beside it, also for a
// user settings file outside root, whose backup name is no settings file
// of its own), or the state dir's kept/ folder.
Result<Dir> backup_parent(const Workspace& ws, const FileChange& f, CreateDirs create) {
  return parent_of(ws, dir_of(f.backup_rel) == dir_of(f.rel) ? f.rel : f.backup_rel, create);
}
}  // namespace

Result<FileState> read_backup(const Workspace& ws, const FileChange& f, Folders* folders) {
  auto d = !folders ? backup_parent(ws, f, CreateDirs::no)
                    : folders->parent(dir_of(f.backup_rel) == dir_of(f.rel) ? f.rel : f.backup_rel, CreateDirs::no);
  if (!d) {
    if (d.error().code == Errc::conflict) return FileState{};  // its folder is gone
    return d.error();
  }
  return read_at(*d, base_of(f.backup_rel));
}

namespace {
std::string blob_of(const FileState& s) { return s.hashed || !s.blob.empty() ? s.blob : blob_id(s.bytes); }
}  // namespace

void hash_once(FileState& s) {
  if (s.exists && s.regular && !s.hashed && s.blob.empty()) s.blob = blob_id(s.bytes);
}

FileSide side_of(const FileState& s) { return {s.exists, s.exists ? blob_of(s) : std::string{}, s.mode}; }
bool same(const FileSide& a, const FileState& s, bool with_mode) {
  if (a.exists != s.exists) return false;
  if (!s.exists) return true;
  return a.blob == blob_of(s) && (!with_mode || (s.mode & 07777u) == (a.mode & 07777u));
}
bool mode_matters(const FileChange& f) {
  return f.before.exists && f.after.exists && (f.before.mode & 07777u) != (f.after.mode & 07777u);
}

namespace {
// `rel` resolved beneath root with the guardrails checked (a "~/" name, the
// owner's home, only where `home` says so: then by name, place_of).
Result<std::string> target_rel(Workspace& ws, const std::string& rel, Guard guard, Home home) {
  if (rel.starts_with(k_home) && home == Home::yes) return rel;
  auto rp = resolve(ws.root, ws.root, rel);
  if (!rp) return rp.error();
  if (guard != Guard::own_config || rp->rel != k_root_config) KAI_TRY(check_write(ws.guards, *rp));
  return std::move(rp->rel);
}

}  // namespace

Status check_stored(Workspace& ws, const std::string& rel, Guard guard, Home home) {
  if (rel.starts_with(k_home) && home == Home::yes) return ok_status();
  if (guard == Guard::own_config && rel == k_root_config) return ok_status();
  return check_write(ws.guards, RootPath{rel, ws.root / rel});
}

Status folder_room(const std::vector<std::string>& rels, std::string_view what) {
  std::set<std::string> folders;
  for (const auto& r : rels) folders.insert(dir_of(r));
  const DescriptorRoom room = room_for_descriptors(folders.size());
  if (room.enough) return ok_status();
  return make_error(Errc::io,
                    fmt::format("{} touches files in {} folders, and this process may hold only {} open files: it "
                                "would run out of them part-way; nothing was changed",
                                what, folders.size(), room.limit),
                    "raise the limit on open files (ulimit -n; its hard limit is set by root, or a service's "
                    "LimitNOFILE), or make the change in parts");
}

Folders::Folders(const Workspace& ws)
    : m_ws(ws), m_keep_max(static_cast<size_t>(std::min<uint64_t>(k_keep_max, open_file_limit() / 4))) {}

Result<Dir> Folders::parent(const std::string& rel, CreateDirs create) {
  const std::string key = dir_of(rel);
  if (auto it = m_open.find(key); it != m_open.end()) return it->second.share();
  auto d = parent_of(m_ws, rel, create);
  if (!d) return d.error();
  if (m_open.size() < m_keep_max) m_open.emplace(key, d->share());
  return d;
}

namespace {
Result<Target> open_checked(Workspace& ws, Folders& folders, const std::string& rel, const std::string& checked_rel,
                            CreateDirs create, Read read) {
  auto d = folders.parent(checked_rel, create);
  if (!d) return d.error();
  Target t{checked_rel, base_of(checked_rel), std::move(*d), {}};
  auto st = read == Read::whole  ? read_at(t.dir, t.name)
            : read == Read::stat ? stat_at(t.dir, t.name)
                                 : read_or_hash_at(t.dir, t.name, k_whole_max);
  if (!st) return st.error();
  if (st->exists && !st->regular)
    return make_error(Errc::denied, fmt::format("'{}' is not a regular file", rel),
                      "kaicoder changes regular files only");
  if (st->exists) KAI_TRY(check_links(ws.guards, rel, st->nlink));
  t.current = std::move(*st);
  return t;
}

}  // namespace

Result<Target> open_stored(Workspace& ws, Folders& folders, const std::string& rel, CreateDirs create, Read read) {
  return open_checked(ws, folders, rel, rel, create, read);
}

Result<Target> open_target(Workspace& ws, Folders& folders, const std::string& rel, CreateDirs create, Guard guard,
                           Read read, Home home) {
  auto r = target_rel(ws, rel, guard, home);
  if (!r) return r.error();
  return open_checked(ws, folders, rel, *r, create, read);
}

Result<Target> open_target(Workspace& ws, const std::string& rel, CreateDirs create, Guard guard, Read read,
                           Home home) {
  Folders once(ws);
  return open_target(ws, once, rel, create, guard, read, home);
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

void MadeFolders::add(const std::string& rel) {
  if (rel.starts_with(k_home)) return;
  for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
    std::error_code ec;
    std::string dir = rel.substr(0, slash);
    if (m_there.contains(dir) || std::find(m_made.begin(), m_made.end(), dir) != m_made.end()) continue;
    if (fs::symlink_status(m_ws.root / dir, ec).type() == fs::file_type::not_found)
      m_made.push_back(dir);
    else
      m_there.insert(std::move(dir));
  }
}

MadeFolders::~MadeFolders() {
  if (m_keep) return;
  std::vector<std::string> deepest_first = m_made;
  std::sort(deepest_first.rbegin(), deepest_first.rend());
  for (const auto& d : deepest_first) remove_empty_dir(m_ws, d);
}

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

json txn_json(const Txn& t) {
  const Entry& e = t.entry;
  json j = {{"id", t.rec.id},
            {"kind", t.rec.kind},
            {"time", t.rec.time},
            {"proposal", t.proposal},
            {"done_state", to_string(t.done_state)},
            {"record_proposal", t.rec.proposal},
            {"rolls_back", t.rec.rolls_back},
            {"files", files_json(t.rec.files)},
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
  if (t.was)
    j["was"] = {{"state", t.was->state},   {"rollback_id", t.was->rollback_id},
                {"backup", t.was->backup}, {"result", t.was->result},
                {"outcome_code", t.was->outcome_code}};
  return j;
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
  t.rec.files = files_from(j);
  json e = j.value("entry", json::object());
  t.entry = {e.value("time", ""),        e.value("kind", ""),
             e.value("rollback_id", ""), e.value("files", std::vector<std::string>{}),
             e.value("action", ""),      e.value("summary", ""),
             e.value("why", ""),         e.value("backup", ""),
             e.value("approver", ""),    e.value("result", ""),
             e.value("rollback", ""),    0};
  if (j.contains("was") && j["was"].is_object()) {
    const json& w = j["was"];
    t.was = Txn::Before{w.value("state", ""), w.value("rollback_id", ""), w.value("backup", ""),
                        w.value("result", ""), w.value("outcome_code", 0)};
  }
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
  return write_file_atomic(intent_path(ws, t.rec.id), j.dump() + "\n", 0600);  // compact, as sealed
}

// The intent in `text`, named `name`: the transaction when it parses, its
// seal verifies and every file it names passes the guardrails again; else
// why it must not be obeyed.
Result<Txn> read_intent(Workspace& ws, const std::string& name, const std::string& text) {
  json j = parse_bounded_json(text).value;
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
    if (!f.backup_rel.empty() && f.backup_rel != dir_of(f.rel) + backup_name(base_of(f.rel), t->rec.id) &&
        f.backup_rel != kept_backup(ws, t->rec.id, f.rel))
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

// A write of the transaction. In test builds (lib/util/fault) one of them
// can be made to fail as a full disk would; elsewhere this is nothing.
Status injected(const std::string& what) {
  if (int err = fault_errno("txn-write"))
    return make_error(Errc::io, fmt::format("cannot write {}: {}", what, errno_text(err)));
  return ok_status();
}

// What the proposal's status was before `t`, so that an undo can put it back.
// t.live when it is the proposal of `t` and sealed, else null.
const Proposal* held_live(const Txn& t) {
  return t.live && t.live->id == t.proposal && t.live->sealed == SealCheck::ok ? t.live : nullptr;
}

void remember_status(Workspace& ws, Txn& t) {
  if (t.proposal <= 0 || t.was) return;
  auto before = [&t](const Proposal& p) {
    t.was = Txn::Before{std::string(to_string(p.state)), p.rollback_id, p.backup, p.result, p.outcome_code};
  };
  if (const Proposal* live = held_live(t)) return before(*live);
  auto p = ws.store.load(t.proposal, Store::Payloads::none);
  if (p && p->sealed == SealCheck::ok) before(*p);
}

// The proposal's status once `t` is done (`done`) or undone (!done).
Status record_status(Workspace& ws, const Txn& t, bool done) {
  if (t.proposal <= 0) return ok_status();
  // Done: from the record the caller holds under the lock. Undone (or
  // recovered): as the store has it now, which may be the done one.
  const Proposal* live = done ? held_live(t) : nullptr;
  auto p = live ? Result<Proposal>(*live) : ws.store.load(t.proposal, Store::Payloads::none);
  // Saved as a record loaded without its payloads is: with the payload
  // digest it was sealed with (the payloads did not change under the lock).
  if (live) p->payloads_loaded = false;
  // A record that does not verify is left as it is, never sealed anew.
  if (!p || p->sealed != SealCheck::ok) return ok_status();
  if (!done) {
    // Only a status this transaction wrote is put back.
    if (!t.was || p->state != t.done_state || to_string(p->state) == t.was->state) return ok_status();
    if (t.done_state == State::applied && p->rollback_id != t.rec.id) return ok_status();
    p->state = parse_state(t.was->state).value_or(p->state);
    p->rollback_id = t.was->rollback_id;
    p->backup = t.was->backup;
    p->result = t.was->result;
    p->outcome_code = t.was->outcome_code;
    return ws.store.save(*p);
  }
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
  return ws.store.save(*p);
}

// The steps after the tree holds the new bytes. Each is idempotent, so
// recover() can run them again after a crash at any point. The change
// counts once the changelog holds its entry, the last of them that can
// fail: everything before it is undone with the tree when one fails.
Status finish(Workspace& ws, const Txn& t) {
  if (!ws.journal.has(t.rec.id)) {
    KAI_TRY(injected("the journal record"));
    KAI_TRY(ws.journal.write_record(t.rec));
  }
  fault_point("after-journal");
  KAI_TRY(injected("the journal's pointers"));
  KAI_TRY(ws.journal.point_to(t.rec));
  KAI_TRY(injected(fmt::format("the status of proposal {}", t.proposal)));
  KAI_TRY(record_status(ws, t, true));
  fault_point("after-status");
  // Logged already when finished again; read once to tell and to add.
  KAI_TRY(ws.changelog.prepend_once(t.entry, [] { return injected("the changelog"); }));
  fault_point("after-changelog");
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
// (Backups are hard links, whole at once; a copy is made only where the
// file system takes no link.)
bool partial_backup(Workspace& ws, const Txn& t, const std::string& bytes, const FileState& cur, const FileChange& f) {
  if (ws.journal.has(t.rec.id) || !same(f.before, cur)) return false;
  return bytes.empty() || std::string_view(cur.bytes).substr(0, bytes.size()) == bytes;
}

// The file of `f` and its backup, as they are now.
struct OnDisk {
  Dir dir, backup_dir;
  FileState cur;
  std::optional<FileState> backup;  // this transaction's backup, its bytes as recorded
  bool leftover = false;            // a backup the crash cut short
};

// nullopt when the file's folder is gone (nothing of it landed).
Result<std::optional<OnDisk>> on_disk(Workspace& ws, const Txn& t, const FileChange& f) {
  auto d = parent_of(ws, f.rel, CreateDirs::no);
  if (!d) return std::optional<OnDisk>();
  OnDisk o;
  o.dir = std::move(*d);
  auto cur = read_at(o.dir, base_of(f.rel));
  if (!cur) return cur.error();
  o.cur = std::move(*cur);
  if (!f.backup_rel.empty()) {
    if (auto bd = backup_parent(ws, f, CreateDirs::no)) {
      o.backup_dir = std::move(*bd);
      auto b = read_at(o.backup_dir, base_of(f.backup_rel));
      if (b && b->exists && b->regular && blob_id(b->bytes) == f.backup_blob)
        o.backup = std::move(*b);
      else if (b && b->exists && b->regular)
        o.leftover = partial_backup(ws, t, b->bytes, o.cur, f);
    }
  }
  return std::optional<OnDisk>(std::move(o));
}

// Undo whatever part of `t` reached the tree: files that already hold their
// new bytes (and mode) get their old ones back by renaming this
// transaction's backup over them (or are removed when they did not exist);
// then this transaction's temps and backups go, and the folders it created,
// when empty; the journal record it may have written, and the status. Needs
// no new space: every step is a rename or an unlink (a mode put back).
// Returns how many files were put back.
Result<int> undo(Workspace& ws, const Txn& t) {
  int restored = 0;
  std::vector<std::string> made;
  for (const auto& f : t.rec.files) {
    if (is_dir_entry(f)) {
      if (!f.before.exists) made.push_back(f.rel);
      continue;
    }
    auto got = on_disk(ws, t, f);
    if (!got) return got.error();
    if (!*got) continue;  // its folder never appeared: nothing of this file landed
    OnDisk& o = **got;
    const std::string name = base_of(f.rel);
    if (f.after.exists) KAI_TRY(unlink_at(o.dir, temp_name(name, t.rec.id), Sync::later));
    const bool mm = mode_matters(f);
    if (same(f.after, o.cur, mm) && !same(f.before, o.cur, mm)) {
      if (f.before.exists) {
        if (!o.backup)
          return make_error(Errc::io, fmt::format("cannot undo the change to '{}': its backup is gone", f.rel));
        KAI_TRY(rename_at(o.backup_dir, base_of(f.backup_rel), o.dir, name));
        KAI_TRY(chmod_at(o.dir, name, f.before.mode));
        o.backup.reset();
      } else {
        KAI_TRY(unlink_at(o.dir, name));
      }
      ++restored;
    }
    if (o.backup || o.leftover) KAI_TRY(unlink_at(o.backup_dir, base_of(f.backup_rel)));
  }
  std::sort(made.rbegin(), made.rend());  // the deepest first
  for (const auto& dir : made) remove_empty_dir(ws, dir);
  remove_empty_dir(ws, kept_dir(ws, t.rec.id));
  KAI_TRY(ws.journal.remove(t.rec.id));
  KAI_TRY(record_status(ws, t, false));
  std::error_code ec;
  fs::remove(intent_path(ws, t.rec.id), ec);
  return restored;
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

// Temps a crash left beside the files of `t` (their renames never came).
void drop_temps(Workspace& ws, const Txn& t) {
  for (const auto& f : t.rec.files)
    if (!is_dir_entry(f) && f.after.exists)
      if (auto d = parent_of(ws, f.rel, CreateDirs::no)) (void)unlink_at(*d, temp_name(base_of(f.rel), t.rec.id));
}

// ----- room to record a change ----------------------------------------------

fs::path reserve_path(const Workspace& ws) { return ws.store.dir() / "reserve"; }

void release_reserve(const Workspace& ws) { ::unlink(reserve_path(ws).c_str()); }

uint64_t size_of_file(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && st.st_size > 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Room for what is written after the tree: the journal record and its
// pointers, the proposal's status, the changelog (rewritten whole, an
// archive split off when it rotates). Each file takes whole blocks.
uint64_t bookkeeping_bytes(const Workspace& ws, const Txn& t, uint64_t intent_bytes, uint64_t block) {
  auto blocks = [block](uint64_t n) { return (n + block - 1) / block * block; };
  uint64_t need = blocks(intent_bytes);                        // the journal record: about the intent
  need += (t.rec.files.size() + 2) * block;                    // a pointer per file, LAST
  need += 2 * blocks(size_of_file(ws.changelog.path())) + blocks(format_entry(t.entry).size());
  if (t.proposal > 0) need += 2 * blocks(size_of_file(ws.store.folder(t.proposal) / "meta.json"));
  return need + 16 * block;  // and a margin
}

// Take the room for recording the change before the tree is touched, as a
// file of that size in the state dir (fallocate), given back just before
// it is needed; where the file system cannot allocate ahead, its free space
// must cover it. io naming both sizes when the room is not there.
Status reserve(Workspace& ws, const Txn& t, uint64_t intent_bytes) {
  const fs::path at = reserve_path(ws);
  struct statvfs vfs {};
  const bool known = ::statvfs(ws.store.dir().c_str(), &vfs) == 0;
  const uint64_t block = known && vfs.f_bsize > 0 ? vfs.f_bsize : 4096;
  const uint64_t need = bookkeeping_bytes(ws, t, intent_bytes, block);
  const uint64_t free_now = known ? static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize : 0;
  auto no_room = [&]() {
    return make_error(Errc::io,
                      fmt::format("not enough free space to record the change: {} needs about {} KiB on the file "
                                  "system of {}, {} KiB are free",
                                  t.rec.id, (need + 1023) / 1024, ws.store.dir().string(), free_now / 1024),
                      "free some space there, then try again");
  };
  if (int err = fault_errno("txn-write"))
    return make_error(Errc::io, fmt::format("cannot reserve room to record the change: {}", errno_text(err)));
  int fd = ::open(at.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ENOSPC || errno == EDQUOT) return no_room();
    return make_error(Errc::io, fmt::format("cannot create '{}': {}", at.string(), errno_text(errno)));
  }
  int err = ::fallocate(fd, 0, 0, static_cast<off_t>(need)) == 0 ? 0 : errno;
  ::close(fd);
  if (err == 0) return ok_status();
  release_reserve(ws);
  if (err == ENOSPC || err == EDQUOT) return no_room();
  if (err == EOPNOTSUPP || err == ENOSYS || err == EINVAL) return !known || free_now >= need ? ok_status() : no_room();
  return make_error(Errc::io, fmt::format("cannot reserve room in '{}': {}", at.string(), errno_text(err)));
}

Error changed_since_shown(Workspace& ws, const Txn& t, const FileChange& f) {
  if (t.rec.kind == "rollback") return changed_since(ws, t.rec.rolls_back, f.rel, true);
  return make_error(Errc::conflict,
                    fmt::format("'{}' changed since it was shown (stale base)", f.rel),
                    "propose the change again against the file as it is now");
}

}  // namespace

Error changed_since(Workspace& ws, const std::string& id, const std::string& rel, bool exists) {
  std::string later = ws.journal.latest_for(rel);
  std::string what = later != id && !later.empty() ? fmt::format("'{}' was changed by a later entry {}", rel, later)
                                                   : fmt::format("'{}' was changed by hand since {} ({})", rel, id,
                                                                 exists ? "its content differs" : "it was removed");
  std::string hint =
      later != id && !later.empty()
          ? fmt::format("roll back {} first, or pass --force to overwrite it (a backup of it is kept)", later)
          : "pass --force to overwrite it (a backup of its current content is kept)";
  return make_error(Errc::conflict, fmt::format("cannot roll back {}: {}", id, what), hint);
}

namespace {

Error too_large_to_copy(const FileChange& f) {
  return make_error(Errc::io,
                    fmt::format("cannot keep '{}': its file system takes no second name for a file, and it is too "
                                "large to copy",
                                f.rel),
                    "move it aside by hand, then try again");
}

// The backup of `tg`: a second name for the file as it is (link(2), no new
// space), beside it or, for a file the transaction removes that it keeps in
// the state dir, there; a copy where the file system takes no link. The
// name must still hold the bytes that were read and checked.
Status take_backup(Workspace& ws, const Txn& t, const Target& tg, const FileChange& f, Sync sync) {
  const bool beside = dir_of(f.backup_rel) == dir_of(f.rel);
  Dir kept;
  if (!beside) {
    auto d = backup_parent(ws, f, CreateDirs::yes);
    if (!d) return d.error();
    kept = std::move(*d);
  }
  const Dir& bd = beside ? tg.dir : kept;
  const std::string bname = base_of(f.backup_rel);
  Status s = link_at(tg.dir, tg.name, bd, bname, sync);
  if (!s && s.error().code == Errc::usage) {
    if (tg.check_at_backup) {
      // No second name: a copy, of the bytes read and checked now.
      auto now = read_or_hash_at(tg.dir, tg.name, k_whole_max);
      if (!now) return now.error();
      if (!now->regular || blob_of(*now) != f.before.blob) return changed_since_shown(ws, t, f);
      if (now->hashed) return too_large_to_copy(f);
      return write_exclusive_at(bd, bname, now->bytes, tg.current.mode & ~mode_t{06000}, sync);
    }
    if (tg.current.hashed) return too_large_to_copy(f);
    return write_exclusive_at(bd, bname, tg.current.bytes, tg.current.mode & ~mode_t{06000}, sync);
  }
  if (!s) return s;
  if (tg.check_at_backup) {
    // The backup is a second name for what the file's name held when it was
    // linked: the bytes the file is replaced from must be those shown.
    // Hashed as a stream past k_whole_max: a rollback may meet a file of
    // any size a run left.
    auto b = read_or_hash_at(bd, bname, k_whole_max);
    if (b && b->regular && blob_of(*b) == f.before.blob) return ok_status();
    (void)unlink_at(bd, bname, Sync::later);
    if (!b) return b.error();
    return changed_since_shown(ws, t, f);
  }
  auto b = tg.current.hashed ? read_or_hash_at(bd, bname, k_whole_max) : read_at(bd, bname);
  if (!b || !b->regular || b->hashed != tg.current.hashed || b->bytes != tg.current.bytes ||
      (tg.current.hashed && b->blob != tg.current.blob)) {
    (void)unlink_at(bd, bname, Sync::later);
    return make_error(Errc::conflict, fmt::format("'{}' changed while it was being written", f.rel),
                      "look at what else writes it, then try again");
  }
  return ok_status();
}

// A linked backup is the old file itself: once it no longer has the file's
// name, it loses any set-user-ID or set-group-ID bit, as a copy would.
void strip_set_id(Workspace& ws, const Target& tg, const FileChange& f) {
  if (f.backup_rel.empty() || (f.before.mode & 06000) == 0) return;
  if (dir_of(f.backup_rel) == dir_of(f.rel))
    (void)chmod_at(tg.dir, base_of(f.backup_rel), f.before.mode & 07777 & ~06000u);
  else if (auto d = backup_parent(ws, f, CreateDirs::no))
    (void)chmod_at(*d, base_of(f.backup_rel), f.before.mode & 07777 & ~06000u);
}

std::string files_word(int n) { return n == 1 ? "1 file was" : fmt::format("{} files were", n); }

// A failure before the change counted: undo it, and say what happened.
Error abandon(Workspace& ws, const Txn& t, const Error& e) {
  release_reserve(ws);
  auto undone = undo(ws, t);
  if (!undone)
    return make_error(e.code, fmt::format("{}; undoing it failed too: {}", e.message, undone.error().message),
                      "the next kaicoder command that writes finishes or undoes it; kaicoder doctor names it");
  std::string what = *undone > 0 ? fmt::format("nothing changed; {} restored", files_word(*undone)) : "nothing changed";
  return make_error(e.code, fmt::format("{}: {}", e.message, what),
                    e.hint.empty() ? "the files are as they were; fix the cause, then try again" : e.hint);
}

}  // namespace

Status reserve_room(Workspace& ws, const Txn& t, uint64_t intent_bytes) { return reserve(ws, t, intent_bytes); }

void release_room(const Workspace& ws) { release_reserve(ws); }

Status execute(Workspace& ws, Txn& t, std::vector<Target>& targets,
               const std::vector<std::optional<std::string>>& after, Durability durability) {
  const Sync sync = durability == Durability::each ? Sync::now : Sync::later;
  remember_status(ws, t);
  // Undone even here: the intent may be half written, or its temp left.
  if (auto s = injected("the intent"); !s) return abandon(ws, t, s.error());
  if (auto s = write_intent(ws, t); !s) return abandon(ws, t, s.error());
  fault_point("after-intent");
  if (auto r = reserve(ws, t, size_of_file(intent_path(ws, t.rec.id))); !r) return abandon(ws, t, r.error());
  // 1. Every new file's bytes, in a temp file beside it: all the room the
  // tree needs is taken before any file changes.
  size_t i = 0;
  for (const FileChange& f : t.rec.files) {
    if (is_dir_entry(f)) continue;
    const Target& tg = targets[i];
    const std::optional<std::string>& next = after[i++];
    if (!next) continue;
    Status s = injected(fmt::format("'{}'", f.rel));
    if (s) s = write_exclusive_at(tg.dir, temp_name(tg.name, t.rec.id), *next, f.after.mode, sync);
    if (!s) return abandon(ws, t, s.error());
    fault_point("after-temp");
  }
  // 2. The backups: each a second name for the file as it is.
  i = 0;
  for (const FileChange& f : t.rec.files) {
    if (is_dir_entry(f)) continue;
    const Target& tg = targets[i++];
    if (!f.backup_rel.empty()) {
      Status s = injected(fmt::format("the backup of '{}'", f.rel));
      if (s) s = take_backup(ws, t, tg, f, sync);
      if (!s) return abandon(ws, t, s.error());
    }
    fault_point("after-backup");  // each file's turn, a new file's too
  }
  // Batched: every new file and backup reaches the disk before any name changes.
  if (durability == Durability::batched)
    if (auto s = sync_file_system(ws.root); !s) return abandon(ws, t, s.error());
  // 3. Each file replaced by renaming its temp over it, or removed.
  i = 0;
  for (const FileChange& f : t.rec.files) {
    if (is_dir_entry(f)) continue;
    const Target& tg = targets[i];
    const bool replace = after[i++].has_value();
    Status s = injected(fmt::format("'{}'", f.rel));
    if (s) s = replace ? rename_at(tg.dir, temp_name(tg.name, t.rec.id), tg.dir, tg.name, sync) : unlink_at(tg.dir, tg.name, sync);
    if (!s) return abandon(ws, t, s.error());
    strip_set_id(ws, tg, f);
    fault_point("after-replace");
  }
  // Batched: the tree reaches the disk before the journal says it changed.
  if (durability == Durability::batched)
    if (auto s = sync_file_system(ws.root); !s) return abandon(ws, t, s.error());
  release_reserve(ws);
  if (auto s = finish(ws, t); !s) {
    auto logged = ws.changelog.live_contains(t.rec.id);
    if (logged && !*logged) return abandon(ws, t, s.error());
    return make_error(s.error().code,
                      fmt::format("{}: the change is made and logged (entry {}), but recording it is not finished",
                                  s.error().message, t.rec.id),
                      "the next kaicoder command that writes finishes it");
  }
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
  // A team proposal's entry names the commit it was published as and the
  // signed decision that approved it (kaicoder-team(7)).
  if (p.team.published() && !p.team.decision.empty())
    e.result = fmt::format("{} (team: proposal commit {}, decision {})", e.result.empty() ? "ok" : e.result,
                           p.team.commit, p.team.decision);
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
      if (f.rel.empty() || f.after.mode == k_mode_dir) continue;
      auto got = on_disk(ws, *t, f);
      if (got && *got && (*got)->leftover) info.cut_backups.push_back(f.backup_rel);
      if (got && *got && f.after.exists) {
        const std::string tmp = temp_name(base_of(f.rel), t->rec.id);
        if (auto tf = read_at((*got)->dir, tmp, 0); tf && tf->exists) info.temps.push_back(dir_of(f.rel) + tmp);
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

namespace {
std::string intent_what(const Txn& t) {
  return t.proposal > 0 ? fmt::format("proposal {} (entry {})", t.proposal, t.rec.id)
                        : fmt::format("entry {}", t.rec.id);
}
}  // namespace

Result<int> recover(Workspace& ws) {
  std::vector<fs::path> found = intent_files(ws);
  release_reserve(ws);  // a command killed while it held room for its records
  if (!found.empty()) KAI_TRY(ws.sealer.usable());  // without the key nothing can be told apart
  for (const auto& path : found) {
    auto text = read_owned(path);
    if (!text) return text.error();
    auto t = read_intent(ws, path.stem().string(), *text);
    if (!t) {
      // Forged, copied, stale or corrupt: never obeyed, kept for a person.
      KAI_TRY(quarantine(ws, path, t.error().message));
      ws.notices.push_back(fmt::format("set aside the interrupted change {}, not written by kaicoder: {}",
                                       path.filename().string(), t.error().message));
      continue;
    }
    // Once the changelog holds its entry a change counts: it is finished,
    // never undone. Before that it is finished when every file holds its new
    // bytes and that can be recorded, and undone otherwise.
    auto logged = ws.changelog.live_contains(t->rec.id);
    if (!logged) return logged.error();
    if (*logged || landed(ws, *t)) {
      drop_temps(ws, *t);
      Status done = finish(ws, *t);
      if (done) {
        ws.notices.push_back(fmt::format("finished the interrupted change of {}", intent_what(*t)));
        continue;
      }
      auto now_logged = ws.changelog.live_contains(t->rec.id);
      if (!now_logged || *now_logged) return done.error();
    }
    auto undone = undo(ws, *t);
    if (!undone) return undone.error();
    ws.notices.push_back(fmt::format("undid the interrupted change of {}: nothing of it remains{}", intent_what(*t),
                                     *undone > 0 ? fmt::format("; {} restored", files_word(*undone)) : ""));
  }
  return static_cast<int>(found.size());
}

}  // namespace kai
