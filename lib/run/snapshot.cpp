// The snapshot store itself: its refs (pending snapshots of runs in flight,
// kept ones named by rollback id), keep() with retention, and the blobs a
// rollback reads back. Taking a snapshot is lib/run/snapshot_walk.cpp, comparing
// two lib/run/snapshot_diff.cpp.

#include "lib/run/snapshot.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <git2.h>

#include "lib/paths/beneath.hpp"
#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/git.hpp"
#include "lib/run/snapshot_cache.hpp"
#include "lib/run/snapshot_objects.hpp"
#include "lib/config/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

SnapshotStore snapshots_of(const Workspace& ws) { return {ws.store.dir() / "snapshots.git", ws.root, ws.guards}; }

bool SnapshotStore::exists() const {
  std::error_code ec;
  return fs::exists(m_dir / "HEAD", ec);
}

Status SnapshotStore::hold(const Snapshot& s, const std::string& tag) const {
  auto h = open_handles(m_dir, m_root, Create::yes);
  if (!h) return h.error();
  auto id = oid_of(s.tree);
  if (!id) return id.error();
  git_reference* ref = nullptr;
  KAI_TRY(git_check(git_reference_create(&ref, h->snap.get(), (k_pending + tag).c_str(), &*id, 1, "run in flight"),
                    "keeping the snapshot"));
  RefPtr own(ref);
  return ok_status();
}

Status SnapshotStore::release(const std::string& tag) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return ok_status();
  int rc = git_reference_remove(h->snap.get(), (k_pending + tag).c_str());
  return rc == GIT_ENOTFOUND ? ok_status() : git_check(rc, "dropping a pending snapshot");
}

Status SnapshotStore::keep(const Snapshot& before, const std::vector<TreeChange>& changes, const std::string& name,
                           const std::string& tag, long keep_count) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  git_repository* snap = h->snap.get();
  git_odb* full = nullptr;
  KAI_TRY(git_check(git_repository_odb(&full, snap), "opening the snapshot objects"));
  OdbPtr own_full(full);
  auto pure = open_pure(m_dir);
  if (!pure) return pure.error();
  auto tree = oid_of(before.tree);
  if (!tree) return tree.error();
  KAI_TRY(copy_tree(snap, full, pure->get(), *tree));
  for (const auto& c : changes) {
    if (!c.before.exists || !c.undoable || c.before.mode == k_mode_link) continue;
    auto id = oid_of(c.before.blob);
    if (!id) return id.error();
    if (auto copied = copy_object(full, pure->get(), *id); !copied) {
      // A blob the stat cache named is gone (pruned from the user's
      // objects): read every file again next time.
      std::error_code ec;
      fs::remove(m_dir / k_cache_name, ec);
      m_cache.reset();
      return copied;
    }
  }
  git_reference* ref = nullptr;
  KAI_TRY(git_check(git_reference_create(&ref, snap, (k_refs + name).c_str(), &*tree, 1, "run snapshot"),
                    "keeping the snapshot"));
  RefPtr own_ref(ref);
  if (int rc = git_reference_remove(snap, (k_pending + tag).c_str()); rc != GIT_ENOTFOUND)
    KAI_TRY(git_check(rc, "dropping the pending snapshot"));
  auto names = ref_names(snap, false);
  if (!names) return names.error();
  for (size_t i = 0; keep_count >= 0 && names->size() - i > static_cast<size_t>(keep_count); ++i)
    KAI_TRY(git_check(git_reference_remove(snap, (k_refs + (*names)[i]).c_str()), "pruning an old snapshot"));
  return collect_garbage(m_dir, m_root, m_guards, snap, pure->get());
}

namespace {

// Writes the regular file open at `fd` into `odb` as a blob, in chunks.
Result<git_oid> write_blob_stream(git_odb* odb, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(Errc::io, "cannot keep a file's bytes: it is not a regular file");
  git_odb_stream* raw = nullptr;
  KAI_TRY(git_check(git_odb_open_wstream(&raw, odb, static_cast<git_object_size_t>(st.st_size), GIT_OBJECT_BLOB),
                    "keeping a file's bytes in the snapshot store"));
  GitOwned<git_odb_stream, git_odb_stream_free> stream(raw);
  std::string chunk(1 << 20, '\0');
  off_t at = 0;
  while (at < st.st_size) {
    ssize_t n = ::pread(fd, chunk.data(), std::min<size_t>(chunk.size(), static_cast<size_t>(st.st_size - at)), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return make_error(Errc::conflict, "a file changed while its bytes were being kept",
                        "look at what else writes it, then try again");
    KAI_TRY(git_check(git_odb_stream_write(stream.get(), chunk.data(), static_cast<size_t>(n)),
                      "keeping a file's bytes in the snapshot store"));
    at += n;
  }
  git_oid id;
  KAI_TRY(git_check(git_odb_stream_finalize_write(&id, stream.get()), "keeping a file's bytes in the snapshot store"));
  return id;
}

}  // namespace

Result<std::vector<std::string>> SnapshotStore::keep_blobs(const std::string& name,
                                                           const std::vector<std::string>& blobs,
                                                           const std::vector<std::string>& files, long keep_count) const {
  auto h = open_handles(m_dir, m_root, Create::yes);
  if (!h) return h.error();
  git_repository* snap = h->snap.get();
  auto pure = open_pure(m_dir);
  if (!pure) return pure.error();
  std::vector<TreeItem> items;
  std::set<std::string> seen;
  for (const std::string& bytes : blobs) {
    git_oid id;
    KAI_TRY(git_check(git_odb_write(&id, pure->get(), bytes.data(), bytes.size(), GIT_OBJECT_BLOB),
                      "keeping a file's bytes in the snapshot store"));
    std::string key = hex(id);
    if (seen.insert(key).second) items.push_back(TreeItem{key, GIT_FILEMODE_BLOB, id});
  }
  std::vector<std::string> ids;
  for (const std::string& rel : files) {
    auto d = open_parent(m_root, rel, CreateDirs::no);
    if (!d) return d.error();
    const auto slash = rel.rfind('/');
    const std::string leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
    Fd fd(::openat(d->fd(), leaf.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (fd.get() < 0)
      return make_error(Errc::conflict, fmt::format("cannot keep the bytes of '{}': {}", rel, errno_text(errno)),
                        "look at what else writes it, then try again");
    auto id = write_blob_stream(pure->get(), fd.get());
    if (!id) return id.error();
    std::string key = hex(*id);
    ids.push_back(key);
    if (seen.insert(key).second) items.push_back(TreeItem{key, GIT_FILEMODE_BLOB, *id});
  }
  // A snapshot kept under this name already (the run's tree before it) stays reachable.
  git_oid kept;
  if (git_reference_name_to_id(&kept, snap, (k_refs + name).c_str()) == 0)
    items.push_back(TreeItem{"snapshot/", GIT_FILEMODE_TREE, kept});
  git_oid tree;
  KAI_TRY(write_tree(pure->get(), items, tree));
  git_reference* ref = nullptr;
  KAI_TRY(git_check(git_reference_create(&ref, snap, (k_refs + name).c_str(), &tree, 1, "run effects"),
                    "keeping the bytes a run's effects replaced"));
  RefPtr own_ref(ref);
  auto names = ref_names(snap, false);
  if (!names) return names.error();
  for (size_t i = 0; keep_count >= 0 && names->size() - i > static_cast<size_t>(keep_count); ++i)
    if ((*names)[i] != name)
      KAI_TRY(git_check(git_reference_remove(snap, (k_refs + (*names)[i]).c_str()), "pruning an old snapshot"));
  KAI_TRY(collect_garbage(m_dir, m_root, m_guards, snap, pure->get()));
  return ids;
}

Result<std::string> SnapshotStore::blob(const std::string& name, const std::string& id) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return make_error(Errc::not_found, fmt::format("the snapshot of {} is gone (no snapshot store)", name));
  git_oid at;
  if (git_reference_name_to_id(&at, h->snap.get(), (k_refs + name).c_str()) != 0)
    return make_error(Errc::not_found, fmt::format("the snapshot of {} was pruned", name),
                      "[run] snapshots_keep in kaicoder.toml sets how many snapshots are kept");
  auto oid = oid_of(id);
  if (!oid) return oid.error();
  auto pure = open_pure(m_dir);
  if (!pure) return pure.error();
  git_odb_object* o = nullptr;
  int rc = git_odb_read(&o, pure->get(), &*oid);
  GitOwned<git_odb_object, git_odb_object_free> own(o);
  if (rc < 0 || git_odb_object_type(o) != GIT_OBJECT_BLOB)
    return make_error(Errc::conflict, fmt::format("blob {} of snapshot {} is missing or damaged", id, name),
                      "run 'kaicoder doctor'");
  std::string bytes(static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o));
  if (blob_id(bytes) != id)
    return make_error(Errc::conflict, fmt::format("blob {} of snapshot {} is damaged", id, name));
  return bytes;
}

Result<std::string> SnapshotStore::bytes_of(const std::string& id) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  auto oid = oid_of(id);
  if (!oid) return oid.error();
  git_odb* full = nullptr;
  KAI_TRY(git_check(git_repository_odb(&full, h->snap.get()), "opening the snapshot objects"));
  OdbPtr own_full(full);
  git_odb_object* o = nullptr;
  int rc = git_odb_read(&o, full, &*oid);
  GitOwned<git_odb_object, git_odb_object_free> own(o);
  if (rc < 0 || git_odb_object_type(o) != GIT_OBJECT_BLOB)
    return make_error(Errc::conflict, fmt::format("blob {} is missing from the snapshots", id));
  std::string bytes(static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o));
  if (blob_id(bytes) != id) return make_error(Errc::conflict, fmt::format("blob {} is damaged", id));
  return bytes;
}

Result<std::vector<std::string>> SnapshotStore::pending() const {
  if (!exists()) return std::vector<std::string>{};
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  auto refs = ref_names(h->snap.get(), true);
  if (!refs) return refs.error();
  for (auto& r : *refs) r = r.substr(std::strlen(k_pending));
  return refs;
}

Result<std::vector<std::string>> SnapshotStore::names() const {
  if (!exists()) return std::vector<std::string>{};
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  return ref_names(h->snap.get(), false);
}

}  // namespace kai
