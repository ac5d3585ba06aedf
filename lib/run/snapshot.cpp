// The snapshot store itself: its refs (pending snapshots of runs in flight,
// kept ones named by rollback id), keep() with retention, and the blobs a
// rollback reads back. Taking a snapshot is lib/run/snapshot_walk.cpp, comparing
// two lib/run/snapshot_diff.cpp.

#include "lib/run/snapshot.hpp"

#include <cstring>

#include <fmt/format.h>
#include <git2.h>

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
