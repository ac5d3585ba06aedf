#pragma once
// Snapshots of the root's working tree, for undoing shell runs (SPEC §5).
//
// kaicoder keeps its own bare repository at <state>/snapshots.git. A
// snapshot is a git tree object of every tracked and untracked-but-not-ignored
// file under root, one tree object per folder written as the walk leaves it, into that
// repository only: the user's index, refs, stash and object store are read,
// never written.
//
// What is in it: every file git tracks (whatever the index flags say:
// assume-unchanged and skip-worktree entries are read like any other, and an
// index the run rewrote cannot hide a file, because a file the previous
// snapshot held is always looked at again), and every untracked file the
// user's ignore rules do not ignore. kaicoder walks the tree itself; it never
// asks the user's index whether a file changed.
//
// Speed: kaicoder keeps its own stat cache beside the store
// (snapshots.git/kaicoder-stat-cache: size, mtime and ctime in ns, inode and
// mode of every file with the blob id kaicoder computed from its bytes). A
// file whose stat data matches is not read again; any other is read as a
// stream and hashed. The user's index blob ids are never reused: a run can
// write .git/index, so its stat data proves nothing. A file changed within
// a second of a snapshot is not cached (the clock's tick could hide a
// second change), and ctime cannot be set back by a process, so `touch -r`
// after a same-size rewrite does not hide it either. The cache lives in the
// state folder, which runs cannot write under the `full` sandbox; and one
// SnapshotStore object keeps the cache it last wrote in memory and uses that
// for its next snapshot, so the run between a run's two snapshots cannot
// plant entries in it, and a cache file changed behind its back is written
// again. Blobs already in the
// user's object store are not copied (the store reads it as an in-process
// alternate); keep() copies into kaicoder's store the trees of the snapshot
// it keeps and the blobs a rollback can need, so a `git gc` in the user's
// repository can never break a rollback.
//
// Not in the tree but seen (stat data only), so that a run's entry can say
// what happened to them: files over k_snapshot_max_bytes ("not snapshotted:
// too large"), the guarded files (kaicoder's config and backups, secret
// files, git's config, hooks, info/, commondir, alternates) and the files
// inside ignored trees, counted per tree. Folders are listed too, so a
// rollback can remove the empty folders a run created.
//
// Never in a snapshot: .git/, the state dir, the changelog, kaicoder's
// config, kaicoder's backups, secret files (they are never copied anywhere)
// and nested repositories and submodules.
//
// Usage (the caller holds the store lock for every call):
//   SnapshotStore s{ws.store.dir() / "snapshots.git", ws.root, ws.guards};
//   auto before = s.take();  s.hold(*before, "12");   … the run, lock released …
//   auto after = s.take();   auto changes = s.diff(*before, *after);
//   s.keep(*before, *changes, rollback_id, "12", keep_count);
//   later: s.blob(rollback_id, blob_id) gives a before-side's bytes back.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lib/store/journal.hpp"
#include "lib/paths/paths.hpp"
#include "lib/result.hpp"
#include "lib/util/stat.hpp"

struct stat;

namespace kai {

// Files bigger than this are not snapshotted (stat data only).
inline constexpr uint64_t k_snapshot_max_bytes = 100ull << 20;
// Journal modes of what is not a regular file: a folder a run created, a
// symlink it created (blob = the id of its target text).
inline constexpr unsigned k_mode_dir = 040000, k_mode_link = 0120000;
// A run's FIFOs and sockets in its journal record (lib/gate/run_effects.cpp).
inline constexpr unsigned k_mode_fifo = 010000, k_mode_socket = 0140000;

struct Snapshot {
  std::string tree;      // hex id of the tree object in snapshots.git
  size_t files = 0;      // files in it
  size_t hashed = 0;     // of those, read and hashed (the rest matched kaicoder's stat cache)
  size_t unstatted = 0;  // of those, taken from the last snapshot unstatted: the watch saw nothing touch them
  bool git = false;      // root is (inside) a git work tree
  // Seen, not stored (root-relative paths):
  std::map<std::string, StatKey> large;    // files over k_snapshot_max_bytes
  std::map<std::string, StatKey> guarded;  // guarded files (see above)
  std::map<std::string, StatKey> ignored;  // files in ignored trees
  std::set<std::string> ignored_tops;      // the ignored trees ("build/") and single ignored files
  std::set<std::string> uncounted;         // ignored trees too big to list
  std::set<std::string> dirs;              // folders (not ignored ones)
  std::set<std::string> unwalked;          // folders not entered: guarded ones and nested repositories
  std::map<std::string, unsigned> setid;   // files with a set-user-ID or set-group-ID bit, and their mode (ignored ones too)
};

// One path that differs between two snapshots.
struct TreeChange {
  std::string rel;  // root-relative
  FileSide before, after;
  bool regular = true;  // both sides regular files (or absent)
  // A rollback can undo it: the side before is a regular file or absent (the
  // side after may be a symlink or a folder the run created, which a
  // rollback removes). kaicoder never creates a symlink.
  bool undoable = true;
};

struct StatCache;
class SnapshotWatch;


class SnapshotStore {
public:
  SnapshotStore(std::filesystem::path dir, std::filesystem::path root, Guardrails guards)
      : m_dir(std::move(dir)), m_root(std::move(root)), m_guards(std::move(guards)) {}

  // Snapshot the working tree (creating the store on first use). `progress`,
  // when given, is called with the number of files done so far, now and then.
  // io/git errors name what failed; a file that vanishes meanwhile is skipped.
  // With `watch` (lib/run/snapshot_watch.hpp, started before the snapshot
  // before a run): the snapshot after the run stats only the files and
  // folders the kernel saw touched since, when the watch proves the rest
  // unchanged (Snapshot::unstatted says how many it took on its word), and
  // walks the whole tree otherwise.
  Result<Snapshot> take(const std::function<void(size_t)>& progress = {}, SnapshotWatch* watch = nullptr) const;

  // Keep `s` alive while a run is in flight, under refs/kaicoder/pending/<tag>.
  Status hold(const Snapshot& s, const std::string& tag) const;

  // Files created, changed (bytes or executable bit) or deleted from `a` to
  // `b`, sorted by path. Modes are permission bits; for files present now
  // they are the real bits on disk, so a rollback keeps them exactly.
  // Folders created (after.mode k_mode_dir) and symlinks created (after.mode
  // k_mode_link) are listed too. Set-user-ID and set-group-ID bits are never
  // part of a side's mode; a file that gained one is listed even when its
  // bytes did not change (both sides the same blob). A file that crossed k_snapshot_max_bytes, or that
  // only entered the index from an ignored tree, is left out (notes() says it).
  Result<std::vector<TreeChange>> diff(const Snapshot& a, const Snapshot& b) const;

  // Keep `before` as the snapshot named `name` (a rollback id): copy its trees
  // and the before-side blobs of `changes` into the store, point
  // refs/kaicoder/<name> at it, drop the pending ref `tag`, then prune the
  // oldest snapshots beyond `keep_count` and the objects only they used.
  Status keep(const Snapshot& before, const std::vector<TreeChange>& changes, const std::string& name,
              const std::string& tag, long keep_count) const;

  // Keep the bytes of `blobs` and of the regular files at `files` (root-
  // relative, opened beneath root, each read as a stream in constant
  // memory, one at a time) under the
  // name `name` (a rollback id), as one tree object of them, so that
  // blob(name, id) gives each back (the before-sides of a run's effects
  // landed from its upper folder, which no snapshot holds); a snapshot
  // already kept under that name stays kept with them. Then prune as keep()
  // does. Gives the blob ids of `files`, in order: the caller checks each is
  // the one it compared (a file that changed in between is not what it saw).
  Result<std::vector<std::string>> keep_blobs(const std::string& name, const std::vector<std::string>& blobs,
                                              const std::vector<std::string>& files, long keep_count) const;

  // Takes the folders of `listed` whose stat data lies out of the racy
  // window of their reading (a second before `read_after`) as the names of
  // the next snapshot's folders, each while the folder's stat data stays
  // the same. `listed` is left empty.
  void seed(ListedFolders& listed) const;

  // Drop a pending ref (a run that failed to start, or changed nothing).
  Status release(const std::string& tag) const;
  // Tags of the pending refs (runs in flight, or whose process died).
  Result<std::vector<std::string>> pending() const;

  // The bytes of blob `id` kept with snapshot `name`. not_found when the
  // snapshot was pruned; conflict when the blob is missing or corrupt.
  Result<std::string> blob(const std::string& name, const std::string& id) const;

  // The bytes of blob `id` wherever the store can read it (its own
  // objects or the user's, as a snapshot in flight has them). conflict when
  // it is missing or damaged.
  Result<std::string> bytes_of(const std::string& id) const;

  // Names of the kept snapshots, oldest first (pending ones not included).
  // An absent store has none.
  Result<std::vector<std::string>> names() const;

  bool exists() const;
  const std::filesystem::path& dir() const { return m_dir; }

private:
  std::filesystem::path m_dir, m_root;
  Guardrails m_guards;
  mutable std::shared_ptr<StatCache> m_cache;  // kaicoder's stat cache, as this store last left it
};

// What an entry must say beyond the files diff() lists: guarded files that
// changed ("GUARDED FILE CHANGED: kaicoder.toml"), changes in ignored trees
// as counts ("build/: 12 files changed (ignored, not restorable)"), and files
// not snapshotted because of their size.
std::vector<std::string> snapshot_notes(const Snapshot& a, const Snapshot& b);

// After a run: takes the set-user-ID and set-group-ID bits off every file
// under `root` that has one in `after` and did not have it (with the same
// mode) in `before`, ignored trees included (the kernel refuses the bits to
// every sandboxed run; an older kernel, or `[run] sandbox = "none"`, may
// not). One line per file for the run's entry: "SET-ID BIT STRIPPED:
// build/helper (mode 4755, now 0755)", or why it could not be.
std::vector<std::string> strip_set_id(const std::filesystem::path& root, const Snapshot& before,
                                      const Snapshot& after);

class Workspace;
// The store of `ws`: <state>/snapshots.git.
SnapshotStore snapshots_of(const Workspace& ws);

}  // namespace kai
