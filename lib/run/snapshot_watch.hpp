#pragma once
// Which files changed while a run went on, from the kernel, so that the
// snapshot after a run need not stat the files nothing touched
// (lib/run/snapshot.hpp). Two kinds of watch, the first that can be placed:
//
// file_system  a fanotify mark on the whole file system that holds root
//              (it needs CAP_SYS_ADMIN: kaicoder runs as root). It sees
//              every open, write, close after writing, change of mode or
//              owner, link count and entry added, removed or renamed, on
//              that file system, through any mount and any hard link, by
//              any process; each event names the inode it touched and the
//              folder it happened in. Opens by kaicoder's own process (the
//              snapshot reading files) are not kept. The file system's file
//              handles must be the inode-number kind this reads (ext4,
//              ext2/3, xfs with 32-bit inodes).
// folders      an inotify watch on each folder the first snapshot walks
//              (any user, any file system), placed once the walk has stat'ed
//              and read the folder's files, so that its own reads are not
//              events (inotify does not say whose an event is). A folder's
//              watch sees every open, write, close after writing, change of
//              mode and entry added, removed or renamed, made through a path
//              in that folder, by any process, through any mount, from then
//              on. So it vouches for what a run does (no run is going while
//              the first snapshot walks), not for a write by another process
//              in the instant between the walk's stat of a file and the
//              watch. What it cannot see is a write through a second name in
//              another folder: it vouches for no file that had a second name
//              when the first snapshot stat'ed it, and it is sound only while
//              the processes between the two snapshots can make no new one:
//              every sandboxed run refuses link() and linkat()
//              (LandlockRuleset::enforce), and runs under sandbox "none" are
//              not watched at all (lib/gate/runs.cpp).
//
// A folder or file the watch does not vouch for is stat'ed. A watch proves
// nothing, and the snapshot walks the whole tree, when the kernel's queue
// overflowed, any event could not be read, or more than a million inodes or
// names were touched.
//
//   auto w = SnapshotWatch::start(root);   // before the first snapshot
//   store.take({}, w.get());  … the run …  store.take({}, w.get());

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

struct stat;

namespace kai {

class SnapshotWatch {
public:
  enum class Kind { file_system, folders };
  // The first kind that can be placed, from `want` on (folders: only that
  // one); null when none can.
  static std::unique_ptr<SnapshotWatch> start(const std::filesystem::path& root, Kind want = Kind::file_system);
  SnapshotWatch(const SnapshotWatch&) = delete;
  SnapshotWatch& operator=(const SnapshotWatch&) = delete;
  ~SnapshotWatch();

  Kind kind() const { return m_kind; }
  // Each watch has its own number, never reused within a process.
  uint64_t serial() const { return m_serial; }
  // A walk has stat'ed and read the entries of the folder `dirfd` (inode
  // `ino`): the folders kind watches it from now on (a folder it could not
  // watch is never vouched for).
  void enter(int dirfd, uint64_t ino);
  // The file `ino` has a second name somewhere: the folders kind never
  // vouches for it.
  void aliased(uint64_t ino);

  // Reads every event queued so far. false from then on once the watch
  // proves nothing (overflow, an event it cannot read).
  bool drain();
  // Whether no event touched the folder `ino` (an entry added, removed or
  // renamed in it, the folder itself moved or removed) since it was entered.
  bool quiet_folder(uint64_t ino) const;
  // Whether no event touched the file `ino`, named `name` in the quiet
  // folder `dir`, since the walk that entered the folder stat'ed it.
  bool quiet_file(uint64_t dir, std::string_view name, uint64_t ino) const;
  // The file system's device number: a folder or file on another proves nothing.
  uint64_t dev() const { return m_dev; }
  bool sound() const { return !m_broken; }

private:
  SnapshotWatch() = default;
  static int start_fanotify(const std::filesystem::path& root, const struct stat& st);
  // Each takes the events of one read; false when one cannot be read.
  bool take_fanotify(const char* p, const char* end);
  bool take_inotify(const char* p, const char* end);
  Kind m_kind = Kind::file_system;
  uint64_t m_serial = 0;
  int m_fd = -1;
  uint64_t m_dev = 0;
  int m_fsid[2] = {0, 0};
  bool m_broken = false;
  std::unordered_set<uint64_t> m_inos;  // file_system: inodes touched; folders: folders touched
  // folders: each watch's folder inode, the folders watched, the files
  // with a second name, and the names touched, by folder inode.
  std::unordered_map<int, uint64_t> m_wd_dir;
  std::unordered_set<uint64_t> m_watched, m_aliased;
  std::unordered_map<uint64_t, std::unordered_set<std::string>> m_names;
  size_t m_named = 0;
};

}  // namespace kai
