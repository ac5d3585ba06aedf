// Applying an approved changeset: one transaction over all its files.

#include <algorithm>
#include <cerrno>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/gate/changeset.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/git.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/gate/txn.hpp"

namespace kai {
namespace fs = std::filesystem;
using namespace txn;

namespace {

Error stale(const Proposal& p, const std::string& rel, std::string_view what) {
  return make_error(Errc::conflict,
                    fmt::format("'{}' {} since proposal {} was made (stale base): nothing of the changeset was applied",
                                rel, what, p.id),
                    "propose the changeset again against the files as they are now");
}

// `rel`'s stat data now (there or not, its mode), without reading it or
// creating anything: not there when its folder is missing. A symlink is
// refused as read_at() refuses it.
Result<FileState> stat_now(Folders& folders, const std::string& rel) {
  auto d = folders.parent(rel, CreateDirs::no);
  if (!d) {
    if (d.error().code == Errc::conflict) return FileState{};
    return d.error();
  }
  FileState out;
  struct stat st {};
  if (::fstatat(d->fd(), base_of(rel).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return out;
    return make_error(Errc::io, fmt::format("cannot inspect '{}': {}", rel, errno_text(errno)));
  }
  if (S_ISLNK(st.st_mode))
    return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", rel));
  out.exists = true;
  out.regular = S_ISREG(st.st_mode);
  out.mode = st.st_mode & 07777;
  out.nlink = st.st_nlink;
  return out;
}

// Every file of `p` as it was at propose, by what a stat tells (there or
// not, its mode), before any folder is made and without reading a byte;
// its content is read and hashed once, from the backup the transaction
// links before any file changes (take_backup). Each path is checked against the guardrails
// as the sealed record holds it (check_stored): resolved when it was
// proposed; its folder, opened here, refuses a symlink or mount planted
// since.
Status check_bases(Workspace& ws, Folders& folders, const Proposal& p) {
  for (const Change& c : p.changes) {
    KAI_TRY(check_stored(ws, c.path));
    auto cur = stat_now(folders, c.path);
    if (!cur) return cur.error();
    if (c.base.exists != cur->exists) return stale(p, c.path, !c.base.exists ? "was created" : "was removed");
    if (cur->exists && (cur->mode & 07777u) != (c.base.mode & 07777u)) return stale(p, c.path, "changed");
    if (c.op == "rename") {
      KAI_TRY(check_stored(ws, c.to));
      auto there = stat_now(folders, c.to);
      if (!there) return there.error();
      if (there->exists) return stale(p, c.to, "was created");
    }
  }
  return ok_status();
}

}  // namespace

Result<Outcome> apply_changeset_proposal(Workspace& ws, Proposal& p, const std::string& approver, bool forced) {
  {
    std::vector<std::string> rels;
    for (const Change& c : p.changes) {
      rels.push_back(c.path);
      if (c.op == "rename") rels.push_back(c.to);
    }
    KAI_TRY(folder_room(rels, fmt::format("proposal {}", p.id)));
  }
  Folders folders(ws);
  KAI_TRY(check_bases(ws, folders, p));
  const auto now = ws.clock->now();
  // What each file becomes, in the order of the record's file entries.
  struct Step {
    std::string rel;
    std::optional<std::string> after;
    unsigned after_mode = 0644;
    FileSide base;  // what the file must still be when it is opened
  };
  std::vector<Step> steps;
  MadeFolders made(ws);            // folders created for new files
  std::set<std::string> emptied;  // folders of removed files, perhaps empty afterwards
  for (const Change& c : p.changes) {
    const bool moves = c.op == "rename";
    const FileSide base{c.base.exists, c.base.blob, c.base.mode};
    if (c.op == "delete" || moves) {
      steps.push_back({c.path, std::nullopt, 0, base});
      for (std::string d = dir_of(c.path); !d.empty(); d = dir_of(d.substr(0, d.size() - 1)))
        emptied.insert(d.substr(0, d.size() - 1));
    } else {
      steps.push_back({c.path, c.after, c.after_mode, base});
    }
    if (moves) steps.push_back({c.to, c.after, c.after_mode, FileSide{}});
    if (c.op == "create" || moves) made.add(moves ? c.to : c.path);
  }
  std::vector<Target> targets;
  std::vector<std::optional<std::string>> after;
  for (Step& s : steps) {
    auto tg = open_stored(ws, folders, s.rel, s.after ? CreateDirs::yes : CreateDirs::no, Read::stat);
    if (!tg) return tg.error();
    // Still there or not, and of the mode shown, by what a stat tells. Its
    // bytes are read once, where the backup takes them: the file's name
    // must hold those shown when it is linked, or nothing is applied.
    if (tg->current.exists) {
      tg->current.blob = s.base.blob;
      tg->check_at_backup = true;
    }
    if (!same(s.base, tg->current, true)) return stale(p, s.rel, "changed");
    targets.push_back(std::move(*tg));
    after.push_back(std::move(s.after));
  }
  Txn t;
  t.rec.kind = "changeset";
  t.rec.time = iso_utc(now);
  t.rec.proposal = p.id;
  t.proposal = p.id;
  t.live = &p;  // loaded sealed, or saved, under the lock: its status is not read again
  auto fresh = fresh_txn_id(ws, now, targets);
  if (!fresh) return fresh.error();
  t.rec.id = std::move(*fresh);
  for (size_t i = 0; i < targets.size(); ++i)
    t.rec.files.push_back(change_of(targets[i], after[i], steps[i].after_mode, t.rec.id));
  // Folders made for new files are recorded: a rollback removes them again.
  for (const auto& d : made.folders()) t.rec.files.push_back(made_folder(d));
  t.entry = make_entry(ws, t, "changeset", std::string(action_name(Kind::changeset)));
  describe_apply(ws, t.entry, p, approver, forced);
  KAI_TRY(execute(ws, t, targets, after, Durability::batched));
  made.keep();
  // As git apply does: a folder the changeset leaves empty goes. A rollback
  // brings it back with the files it restores.
  for (auto it = emptied.rbegin(); it != emptied.rend(); ++it) remove_empty_dir(ws, *it);
  return record_applied(ws, p, t, t.entry.backup);
}

}  // namespace kai
