#pragma once
// Which files changed while a run went on, from the kernel: a fanotify mark
// on the whole file system that holds root, so that the snapshot after a
// run need not stat the files nothing touched (lib/snapshot.hpp).
//
// The mark sees every open, write, close after writing, change of mode or
// owner, link count and entry added, removed or renamed, on that file
// system, through any mount and any hard link, by any process; each event
// names the inode it touched and the folder it happened in. kaicoder keeps
// the inode numbers. A file whose inode is not among them, in a folder that
// is not among them either and is still the same folder, is what it was.
// Opens by kaicoder's own process (the snapshot reading files) are not kept.
//
// A watch proves nothing, and the snapshot walks the whole tree, when the
// mark could not be placed (it needs CAP_SYS_ADMIN: kaicoder runs as root),
// the file system's file handles are not the inode-number kind this reads
// (ext4, ext2/3, xfs with 32-bit inodes), the kernel's queue overflowed, or
// any event could not be read, or more than a million inodes were named.
//
//   auto w = SnapshotWatch::start(root);   // before the first snapshot
//   store.take({}, w.get());  … the run …  store.take({}, w.get());

#include <cstdint>
#include <filesystem>
#include <memory>
#include <unordered_set>

namespace kai {

class SnapshotWatch {
public:
  // Null when the mark cannot be placed or the file system's handles are
  // of another kind.
  static std::unique_ptr<SnapshotWatch> start(const std::filesystem::path& root);
  SnapshotWatch(const SnapshotWatch&) = delete;
  SnapshotWatch& operator=(const SnapshotWatch&) = delete;
  ~SnapshotWatch();

  // Reads every event queued so far. false from then on once the watch
  // proves nothing (overflow, an event it cannot read).
  bool drain();
  // Whether an event named inode `ino` since the watch started.
  bool touched(uint64_t ino) const { return m_inos.count(ino) > 0; }
  // The file system's device number: a folder or file on another proves nothing.
  uint64_t dev() const { return m_dev; }
  bool sound() const { return !m_broken; }

private:
  SnapshotWatch() = default;
  int m_fd = -1;
  uint64_t m_dev = 0;
  int m_fsid[2] = {0, 0};
  bool m_broken = false;
  std::unordered_set<uint64_t> m_inos;
};

}  // namespace kai
