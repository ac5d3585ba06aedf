#pragma once
// The walk every command makes of root for its secret files (by name: .env,
// keys, credentials, deny_read), whose values then feed the redactor
// (lib/config/workspace), and the cache that makes it cost a stat per folder
// while the tree stays as it was.
//
// The cache holds, for each folder the walk read, its stat data (StatKey)
// and what the walk found in it, in the order read: the folders it entered
// and the secret files' names. Never a secret file's bytes: those are read
// on every command (at most 256 files), so a changed value is always seen.
// A folder whose stat data are those of the cache is not read again; any
// entry added, removed or renamed in it changes its mtime and ctime, and no
// user can set a ctime, so an unchanged folder has the names it had. A
// folder changed within k_racy_ns before the walk that wrote the cache
// began is read again (its times could stay the same across a second
// change), like git's racy-git rule.
//
// It lives in the owner's folder (<owner_dir>/walk-cache/<MAC of root and
// store>), out of reach of the tree and the state dir, and is sealed with the
// owner's key over kaicoder's version, the guardrails that decide what is
// entered and what is secret, and every folder's entry. A cache that does not
// verify, or was written by another version or under other guardrails, is
// not used: the walk reads every folder, as without a cache. Read-only
// commands refresh it there too (they write nothing in the tree); a failure
// to write it is silent, the walk's result stands. Writing one also keeps
// the folder bounded: a crash's old temp files go, and past 64 caches the
// least recently written (another root then walks in full once).
//
// Usage: SecretWalk w = walk_secret_files(root, guards, sealer, owner_dir, &listed, now_ns());
//        for (auto& rel : w.files) ... read each (beneath root, never following a symlink)

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lib/paths/paths.hpp"
#include "lib/store/mac.hpp"
#include "lib/util/stat.hpp"

namespace kai {

struct SecretWalk {
  std::vector<std::string> files;  // root-relative secret files, in walk order, at most k_secret_walk_files
  size_t folders_read = 0;         // listed from disk
  size_t folders_kept = 0;         // taken from the cache, not read
  bool cache_used = false;         // a cache verified for this root, version and guardrails
  bool cache_written = false;
};

// The walk's bounds: names looked at (folders and symlinks included), and
// secret files found, after which it stops; a walk cut short by either
// writes no cache.
inline constexpr size_t k_secret_walk_entries = 200000, k_secret_walk_files = 256;

// Where the cache of `sealer`'s root lives; empty when the sealer has no key.
std::filesystem::path secret_walk_cache(const Sealer& sealer, const std::filesystem::path& owner_dir);

// Walks root (skipping what walk_skips(g) names, never following a symlink)
// for the files ReadCheck(g) refuses. With a usable `sealer`, folders are
// taken from the cache where their stat data match and written back there
// when any was read. `now`: the wall clock (ns) before the walk, for the racy
// window. With `listed`, each folder read to its end is handed over as
// walk_tree does (ListedFolders, for the snapshot before a run).
SecretWalk walk_secret_files(const std::filesystem::path& root, const Guardrails& g, const Sealer& sealer,
                             const std::filesystem::path& owner_dir, ListedFolders* listed, uint64_t now);

}  // namespace kai
