#pragma once
// Snapshots of the root's working tree, for undoing shell runs (SPEC §5).
//
// kaicoder keeps its own bare repository at <state>/snapshots.git. A
// snapshot is a git tree object of every tracked and untracked-but-not-ignored
// file under root, built in an in-memory index and written into that
// repository only: the user's index, refs, stash and object store are read,
// never written.
//
// Speed: in a git work tree the user's index says which tracked files still
// match their blob (git_status, read-only); those blob ids are reused without
// reading the file, and the user's object store is added as an in-process
// alternate, so only changed and untracked files are read and hashed. Nothing
// on disk points at the user's objects: keep() copies into kaicoder's store
// the trees of the snapshot it keeps and the blobs a rollback can need (the
// before-side of every file the run changed or deleted), so a `git gc` in
// the user's repository can never break a rollback.
// Outside a git work tree every file is read (no ignore rules apply there
// beyond kaicoder's own exclusions).
//
// Never in a snapshot: .git/, the state dir, the changelog, kaicoder's
// config, kaicoder's backups, secret files (they are never copied anywhere)
// and submodules. A run's changes to those are therefore not recorded.
//
// Usage (the caller holds the store lock for every call):
//   SnapshotStore s{ws.store.dir() / "snapshots.git", ws.root, ws.guards};
//   auto before = s.take();  s.hold(*before, "12");   … the run, lock released …
//   auto after = s.take();   auto changes = s.diff(*before, *after);
//   s.keep(*before, *changes, rollback_id, "12", keep_count);
//   later: s.blob(rollback_id, blob_id) gives a before-side's bytes back.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "lib/journal.hpp"
#include "lib/paths.hpp"
#include "lib/result.hpp"

namespace kai {

struct Snapshot {
  std::string tree;   // hex id of the tree object in snapshots.git
  size_t files = 0;   // files in it
  size_t hashed = 0;  // of those, read and hashed (the rest reused from the user's index)
  bool git = false;   // root is (inside) a git work tree
};

// One file that differs between two snapshots.
struct TreeChange {
  std::string rel;      // root-relative
  FileSide before, after;
  bool regular = true;  // false when a side is a symlink: kaicoder restores regular files only
};

class SnapshotStore {
public:
  SnapshotStore(std::filesystem::path dir, std::filesystem::path root, Guardrails guards)
      : m_dir(std::move(dir)), m_root(std::move(root)), m_guards(std::move(guards)) {}

  // Snapshot the working tree (creating the store on first use). `progress`,
  // when given, is called with the number of files done so far, now and then.
  // io/git errors name what failed; a file that vanishes meanwhile is skipped.
  Result<Snapshot> take(const std::function<void(size_t)>& progress = {}) const;

  // Keep `s` alive while a run is in flight, under refs/kaicoder/pending/<tag>.
  Status hold(const Snapshot& s, const std::string& tag) const;

  // Files created, changed (bytes or executable bit) or deleted from `a` to
  // `b`, sorted by path. Modes are permission bits; for files present now
  // they are the real bits on disk, so a rollback keeps them exactly.
  Result<std::vector<TreeChange>> diff(const Snapshot& a, const Snapshot& b) const;

  // Keep `before` as the snapshot named `name` (a rollback id): copy its trees
  // and the before-side blobs of `changes` into the store, point
  // refs/kaicoder/<name> at it, drop the pending ref `tag`, then prune the
  // oldest snapshots beyond `keep_count` and the objects only they used.
  Status keep(const Snapshot& before, const std::vector<TreeChange>& changes, const std::string& name,
              const std::string& tag, long keep_count) const;

  // Drop a pending ref (a run that failed to start, or changed nothing).
  Status release(const std::string& tag) const;
  // Tags of the pending refs (runs in flight, or whose process died).
  Result<std::vector<std::string>> pending() const;

  // The bytes of blob `id` kept with snapshot `name`. not_found when the
  // snapshot was pruned; conflict when the blob is missing or corrupt.
  Result<std::string> blob(const std::string& name, const std::string& id) const;

  // Names of the kept snapshots, oldest first (pending ones not included).
  // An absent store has none.
  Result<std::vector<std::string>> names() const;

  bool exists() const;
  const std::filesystem::path& dir() const { return m_dir; }

private:
  std::filesystem::path m_dir, m_root;
  Guardrails m_guards;
};

class Workspace;
// The store of `ws`: <state>/snapshots.git.
SnapshotStore snapshots_of(const Workspace& ws);

}  // namespace kai
