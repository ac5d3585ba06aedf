#pragma once
// The stat data kaicoder compares a file or folder by when it does not read
// it, and the folder listings a walk of root hands to the next walk (the
// secret-file scan every command makes, then the snapshot before a run).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

struct stat;

namespace kai {

// What kaicoder compares a file by when it does not read it.
struct StatKey {
  uint64_t size = 0, mtime_ns = 0, ctime_ns = 0, ino = 0;
  uint32_t mode = 0;
  bool operator==(const StatKey&) const = default;
};

// The stat data kaicoder keeps of a file or folder.
StatKey key_of(const struct stat& st);
// The wall clock in ns, to tell the stat data of the racy window: a change
// within a second of a reading could leave a file's times as they were.
uint64_t now_ns();
inline constexpr uint64_t k_racy_ns = 1000000000ull;
// Where the racy window of a reading that began at `began` (now_ns) starts.
inline uint64_t racy_from(uint64_t began) { return began - std::min(began, k_racy_ns); }
// Whether `k` was last changed, in its bytes or its attributes, before
// `racy` (racy_from): only then may what was read of it be kept or vouched for.
inline bool settled_before(const StatKey& k, uint64_t racy) { return std::max(k.mtime_ns, k.ctime_ns) < racy; }

// Each folder's names as a walk of root read them before a snapshot (the
// secret-file scan every command makes, lib/config/secret_walk), with the folder's
// stat data read before its names: the snapshot before a run takes a
// folder's names from here, rather than reading it again, while its stat
// data is still the same (lib/run/snapshot_cache.hpp, StatCache::Listing).
struct ListedFolders {
  uint64_t read_after = 0;  // the wall clock (ns) before the walk began
  struct Folder {
    std::string prefix;  // "" or "a/b/"
    StatKey key;
    std::vector<std::string> names;  // all but "." and ".."
  };
  std::vector<Folder> folders;
};

}  // namespace kai
