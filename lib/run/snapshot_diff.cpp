// What changed between two snapshots: SnapshotStore::diff (the files a
// rollback undoes) and snapshot_notes (what an entry says beyond them).

#include "lib/run/snapshot.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <git2.h>

#include "lib/paths/beneath.hpp"
#include "lib/run/snapshot_objects.hpp"
#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"

namespace kai {

namespace {

unsigned perm_of(uint32_t git_mode) { return git_mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755u : 0644u; }

FileSide side_of(const git_diff_file& f, bool exists) {
  if (!exists) return {};
  return {true, hex(f.id), perm_of(f.mode)};
}

}  // namespace

std::vector<std::string> snapshot_notes(const Snapshot& a, const Snapshot& b) {
  std::vector<std::string> out;
  auto changed = [](const std::map<std::string, StatKey>& x, const std::map<std::string, StatKey>& y) {
    std::vector<std::pair<std::string, const char*>> d;
    for (const auto& [rel, k] : y) {
      auto o = x.find(rel);
      if (o == x.end())
        d.emplace_back(rel, "created");
      else if (!(o->second == k))
        d.emplace_back(rel, "changed");
    }
    for (const auto& [rel, k] : x)
      if (!y.count(rel)) d.emplace_back(rel, "deleted");
    std::sort(d.begin(), d.end());
    return d;
  };
  for (const auto& [rel, how] : changed(a.guarded, b.guarded))
    out.push_back(fmt::format("GUARDED FILE {}: {}",
                              how == std::string_view("changed")   ? "CHANGED"
                              : how == std::string_view("created") ? "CREATED"
                                                                   : "DELETED",
                              rel));
  for (const auto& [rel, how] : changed(a.large, b.large)) {
    auto k = b.large.count(rel) ? b.large.at(rel) : a.large.at(rel);
    out.push_back(fmt::format("{} {}, not snapshotted: too large ({:.1f} MiB, limit {} MiB)", rel, how,
                              static_cast<double>(k.size) / (1 << 20), k_snapshot_max_bytes >> 20));
  }
  // Ignored changes, counted per ignored tree (a single ignored file counts under its folder).
  std::map<std::string, size_t> counts;
  std::set<std::string> tops = a.ignored_tops;
  tops.insert(b.ignored_tops.begin(), b.ignored_tops.end());
  for (const auto& [rel, how] : changed(a.ignored, b.ignored)) {
    std::string label;
    for (const auto& t : tops)
      if (t.ends_with("/") && rel.starts_with(t)) label = t;
    if (label.empty()) label = rel.find('/') == std::string::npos ? "./" : rel.substr(0, rel.rfind('/') + 1);
    ++counts[label];
  }
  for (const auto& [label, n] : counts)
    out.push_back(fmt::format("{}: {} file{} changed (ignored, not restorable)", label, n, n == 1 ? "" : "s"));
  std::set<std::string> uncounted = a.uncounted;
  uncounted.insert(b.uncounted.begin(), b.uncounted.end());
  for (const auto& t : uncounted) out.push_back(fmt::format("{}: too many ignored files to count", t));
  return out;
}

namespace {

// The bits taken off the regular file `rel` beneath `root`, never through a
// symlink; the errno when that failed.
int strip_one(const std::filesystem::path& root, const std::string& rel, unsigned& now) {
  auto dir = open_parent(root, rel, CreateDirs::no);
  if (!dir) return ENOENT;
  const std::string name = rel.substr(rel.rfind('/') + 1);
  Fd fd(::openat(dir->fd(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EINVAL;
  now = st.st_mode & 07777 & ~06000u;
  if ((st.st_mode & 06000) == 0) return 0;
  // chmod through the descriptor: a name swapped meanwhile is not followed.
  const std::string self = "/proc/self/fd/" + std::to_string(fd.get());
  if (::chmod(self.c_str(), now) == 0) return 0;
  Fd rw(::openat(dir->fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (rw.get() < 0) return errno;
  struct stat again {};
  if (::fstat(rw.get(), &again) != 0 || again.st_ino != st.st_ino || again.st_dev != st.st_dev) return EAGAIN;
  return ::fchmod(rw.get(), now) == 0 ? 0 : errno;
}

}  // namespace

std::vector<std::string> strip_set_id(const std::filesystem::path& root, const Snapshot& before,
                                      const Snapshot& after) {
  std::vector<std::string> out;
  for (const auto& [rel, mode] : after.setid) {
    if (auto was = before.setid.find(rel); was != before.setid.end() && was->second == mode) continue;
    unsigned now = mode & 0777;
    int err = strip_one(root, rel, now);
    if (err == ENOENT) continue;  // gone since
    out.push_back(err == 0 ? fmt::format("SET-ID BIT STRIPPED: {} (mode {:04o}, now {:04o})", rel, mode, now)
                           : fmt::format("SET-ID BIT on {} (mode {:04o}) could NOT be stripped: {}", rel, mode,
                                         errno_text(err)));
  }
  return out;
}

Result<std::vector<TreeChange>> SnapshotStore::diff(const Snapshot& a, const Snapshot& b) const {
  // The common case of a run that changed nothing: no tree to read.
  if (a.tree == b.tree && a.dirs == b.dirs && a.setid == b.setid) return std::vector<TreeChange>{};
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  git_repository* snap = h->snap.get();
  auto ia = oid_of(a.tree);
  auto ib = oid_of(b.tree);
  if (!ia) return ia.error();
  if (!ib) return ib.error();
  git_tree *ta = nullptr, *tb = nullptr;
  KAI_TRY(git_check(git_tree_lookup(&ta, snap, &*ia), "reading the snapshot before the run"));
  TreePtr own_a(ta);
  KAI_TRY(git_check(git_tree_lookup(&tb, snap, &*ib), "reading the snapshot after the run"));
  TreePtr own_b(tb);
  git_diff_options o = GIT_DIFF_OPTIONS_INIT;
  o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* d = nullptr;
  KAI_TRY(git_check(git_diff_tree_to_tree(&d, snap, ta, tb, &o), "comparing snapshots"));
  DiffPtr own_d(d);
  std::vector<TreeChange> out;
  for (size_t i = 0, n = git_diff_num_deltas(d); i < n; ++i) {
    const git_diff_delta* delta = git_diff_get_delta(d, i);
    TreeChange c;
    bool had = delta->status != GIT_DELTA_ADDED, has = delta->status != GIT_DELTA_DELETED;
    c.rel = has ? delta->new_file.path : delta->old_file.path;
    // Crossed the size limit, or entered the index from an ignored tree:
    // snapshot_notes() says it; a rollback must not delete or resurrect it.
    if ((!has && b.large.count(c.rel)) || (!had && (a.large.count(c.rel) || a.ignored.count(c.rel)))) continue;
    c.before = side_of(delta->old_file, had);
    c.after = side_of(delta->new_file, has);
    bool link_before = had && delta->old_file.mode == GIT_FILEMODE_LINK;
    bool link_after = has && delta->new_file.mode == GIT_FILEMODE_LINK;
    if (link_before) c.before.mode = k_mode_link;
    if (link_after) c.after.mode = k_mode_link;
    c.regular = !link_before && !link_after;
    c.undoable = !link_before;
    // Git keeps only the executable bit; the disk has the rest (0600, 0750…),
    // less the set-user-ID and set-group-ID bits, which no restore brings back.
    struct stat st;
    if (has && !link_after && ::lstat((m_root / c.rel).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ((st.st_mode & S_IXUSR) != 0) == (c.after.mode == 0755u)) {
      c.after.mode = st.st_mode & 0777;
      if (had && delta->old_file.mode == delta->new_file.mode) c.before.mode = c.after.mode;
    }
    out.push_back(std::move(c));
  }
  // A set-user-ID or set-group-ID bit the run set on a file it did not
  // otherwise change: the rollback rewrites the file without it.
  for (const auto& [rel, mode] : b.setid) {
    auto was = a.setid.find(rel);
    if ((was != a.setid.end() && was->second == mode) ||
        std::any_of(out.begin(), out.end(), [&name = rel](const TreeChange& c) { return c.rel == name; }))
      continue;
    git_tree_entry* e = nullptr;
    if (git_tree_entry_bypath(&e, tb, rel.c_str()) != 0) continue;
    EntryPtr own_e(e);
    TreeChange c;
    c.rel = rel;
    c.before = {true, hex(*git_tree_entry_id(e)), mode & 0777};
    c.after = c.before;
    out.push_back(std::move(c));
  }
  for (const auto& dir : b.dirs)
    if (!a.dirs.count(dir)) {
      TreeChange c;
      c.rel = dir;
      c.after = {true, "", k_mode_dir};
      c.regular = false;
      out.push_back(std::move(c));
    }
  std::sort(out.begin(), out.end(), [](const TreeChange& x, const TreeChange& y) { return x.rel < y.rel; });
  return out;
}

}  // namespace kai
