#pragma once
// kaicoder's stat cache for snapshots (lib/run/snapshot.hpp says what it proves
// and why it can be trusted): the file snapshots.git/kaicoder-stat-cache, and
// the in-memory state one SnapshotStore keeps between its snapshots. Internal
// to the snapshot files (snapshot*.cpp).
//
//   StatCache c;  c.load(dir / k_cache_name, cache_head(root, guards));
//   … a walk builds the new entries in walk order …
//   save_cache(dir / k_cache_name, cache_head(root, guards), c.order);

#include <cstdint>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <git2.h>

#include "lib/result.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/run/snapshot_objects.hpp"

struct stat;

namespace kai {

inline constexpr const char* k_cache_name = "kaicoder-stat-cache";

// What kaicoder knows of one file from its last snapshot.
struct Cached {
  StatKey st;
  git_oid id;
  uint32_t git_mode = 0;
  bool usable = true;  // false: seen in the racy window; the path counts as known, its id is read again
};
using Cache = std::unordered_map<std::string, Cached>;

struct StatCache {
  bool loaded = false;
  Cache files;
  // The files in the order the last walk met them (a walk of an unchanged
  // tree meets them in the same order, so each lookup is a comparison).
  std::vector<const Cache::value_type*> order;
  std::unordered_set<std::string> dirs;  // the folders of the last snapshot
  // Each folder's names as the last walk read them, by root-relative prefix
  // ("" or "a/b/"), with the folder's stat data read before: while that
  // stays the same (any entry added, removed or renamed changes a folder's
  // ctime, which no one can set back) the names are the same, and a walk
  // need not read the folder again. In memory only, like `order`; the first
  // walk of a run gets them from the scan that came before it
  // (SnapshotStore::seed). Kept with them: the folder's tree as the last walk
  // wrote it, its items sorted and its id. A walk whose items are the same
  // (name, mode and id, compared whole) takes that id, while the store still
  // holds the tree, instead of hashing it again.
  struct Listing {
    StatKey key;
    std::vector<std::string> names;
    std::vector<TreeItem> items;
    git_oid tree{};
  };
  std::unordered_map<std::string, Listing> listings;
  StatKey on_disk;  // the cache file as this object last wrote or read it
  // The watch that saw everything since this cache's walk began (it was
  // started before, held sound, and every file and folder stat'ed was on
  // its file system), by its serial: the next walk may take its word.
  // 0: walk it all.
  uint64_t armed = 0;

  // Reads the cache file (an unreadable or foreign one gives an empty
  // cache), the folders its paths lie in, and its stat data; `loaded` then.
  void load(const std::filesystem::path& file, const std::string& head);
};

// The cache file's first lines: what it is, and the root and guardrails it
// was taken under (what a snapshot leaves out depends on them).
std::string cache_head(const std::filesystem::path& root, const Guardrails& g);

// The entries of the cache file `file` whose head is `head`, and with
// `order`, their order in the file. Anything unexpected: no entry at all.
Cache load_cache(const std::filesystem::path& file, const std::string& head,
                 std::vector<const Cache::value_type*>* order = nullptr);

// Writes `order`'s entries after `head`, in that order (which load_cache()
// keeps), replacing the file atomically.
Status save_cache(const std::filesystem::path& file, const std::string& head,
                  const std::vector<const Cache::value_type*>& order);

}  // namespace kai
