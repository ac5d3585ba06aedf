#pragma once
// The git side of the snapshot store (lib/run/snapshot.hpp): opening it with the
// user's object store as an in-process alternate, writing files and tree
// objects into it, its refs, and copying and pruning its objects. Internal
// to the snapshot files (snapshot*.cpp).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <git2.h>

#include "lib/util/git_tree.hpp"
#include "lib/result.hpp"
#include "lib/run/snapshot.hpp"

struct stat;

namespace kai {

using OdbPtr = GitOwned<git_odb, git_odb_free>;

inline constexpr const char* k_refs = "refs/kaicoder/";
inline constexpr const char* k_pending = "refs/kaicoder/pending/";

Result<git_oid> oid_of(const std::string& text);

// The store, with the user's object store (if any) as an in-process
// alternate, and where the user's work tree lies relative to root.
struct Handles {
  RepoPtr snap, user;
  std::filesystem::path base;  // the user's work tree, or root when there is none
  std::string prefix;          // root relative to base: "" or "sub/dir/"
};

enum class Create { no, yes };

// not_found when there is no store and `create` is no.
Result<Handles> open_handles(const std::filesystem::path& dir, const std::filesystem::path& root, Create create);

// kaicoder's own objects only, without the user's alternate.
Result<OdbPtr> open_pure(const std::filesystem::path& dir);

// One entry of a tree object being written.
struct TreeItem {
  std::string key;  // the name, with '/' after a folder's: git's sort order
  uint32_t mode;
  git_oid id;
  bool operator==(const TreeItem& o) const { return mode == o.mode && git_oid_equal(&id, &o.id) && key == o.key; }
};

// The tree object of `entries` (any order: sorted here), written into `odb`.
Status write_tree(git_odb* odb, std::vector<TreeItem>& entries, git_oid& out);
// Sorts `entries` as a tree object lists them.
void sort_tree(std::vector<TreeItem>& entries);

// Reads the regular file `name` in folder `dirfd` (root-relative `rel`,
// stat'ed as `st`) as a stream, and stores it in `odb` unless it is there
// already: its id in `id`, and `stable` when it did not change while read.
// not_found when it is gone, was swapped for something else, or cannot be
// opened; io when reading it fails.
Status store_regular(git_odb* odb, int dirfd, const char* name, const std::string& rel, const struct stat& st,
                     git_oid& id, bool& stable);

// The kept snapshots' names (sorted oldest first) or, with `pending`, the
// pending refs' full names.
Result<std::vector<std::string>> ref_names(git_repository* snap, bool pending);

Status copy_object(git_odb* full, git_odb* pure, const git_oid& id);
// Copy tree `id` and its subtrees into `pure` (kaicoder's own objects only).
// Children are written before their parent, so a tree already there has all
// of its subtrees too.
Status copy_tree(git_repository* snap, git_odb* full, git_odb* pure, const git_oid& id);

// Remove the loose objects no snapshot ref, and no entry of the stat cache,
// reaches. Caller holds the store lock, which every writer of the store
// holds too.
Status collect_garbage(const std::filesystem::path& dir, const std::filesystem::path& root, const Guardrails& guards,
                       git_repository* snap, git_odb* pure);

}  // namespace kai
