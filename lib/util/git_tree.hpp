#pragma once
// Reading commits, trees and blobs with libgit2, for the code that compares
// git states (lib/certify, lib/certify/manifest): owning pointers, a revision
// resolved to a commit, one path's entry in a tree, a blob's bytes.
// Only reads; never touches the index, refs or work tree.

#include <cstdint>
#include <optional>
#include <string>

#include <git2.h>

#include "lib/util/git.hpp"
#include "lib/result.hpp"

namespace kai {

using RepoPtr = GitOwned<git_repository, git_repository_free>;
using ObjectPtr = GitOwned<git_object, git_object_free>;
using CommitPtr = GitOwned<git_commit, git_commit_free>;
using TreePtr = GitOwned<git_tree, git_tree_free>;
using EntryPtr = GitOwned<git_tree_entry, git_tree_entry_free>;
using BlobPtr = GitOwned<git_blob, git_blob_free>;
using DiffPtr = GitOwned<git_diff, git_diff_free>;
using WalkPtr = GitOwned<git_revwalk, git_revwalk_free>;
using RefPtr = GitOwned<git_reference, git_reference_free>;
using IndexPtr = GitOwned<git_index, git_index_free>;
using OdbPtr = GitOwned<git_odb, git_odb_free>;
using OdbObjectPtr = GitOwned<git_odb_object, git_odb_object_free>;

// Full hex id.
std::string hex(const git_oid& id);

// The state of one path in one tree: its blob (or commit, for a submodule)
// and git file mode.
struct TreeEntry {
  git_oid id;
  uint32_t mode;
  bool operator==(const TreeEntry& o) const { return mode == o.mode && git_oid_equal(&id, &o.id); }
};

// nullopt when `path` is absent from `tree` (or is a folder there).
std::optional<TreeEntry> entry_at(git_tree* tree, const std::string& path);

// What kaicoder inflates of one object at most, by the size its header
// records (read without inflating it): a commit or a tree past these is
// refused (Errc::conflict), as a remote's hostile object. No repository
// people keep holds one: a 64 MiB tree lists over a million names.
inline constexpr size_t k_commit_max_object = 16u << 20;
inline constexpr size_t k_tree_max_object = 64u << 20;
// Errc::conflict when object `id` is larger than `max` bytes by its header;
// Errc::io when its header cannot be read.
Status object_within(git_repository* repo, const git_oid& id, size_t max, const std::string& what);

// Bytes of the regular file at `path` in `tree`; nullopt when there is none
// (a symlink or submodule there is none). Errc::io when the blob is unreadable;
// Errc::conflict when it is larger than `max` bytes (by its header, before
// its bytes are read).
Result<std::optional<std::string>> blob_at(git_repository* repo, git_tree* tree, const std::string& path,
                                           size_t max = SIZE_MAX);

// `rev` (a commit, tag, branch or any git revision) peeled to a commit.
// Errc::usage when it does not resolve; the hint mentions shallow checkouts.
Result<CommitPtr> resolve_commit(git_repository* repo, const std::string& rev);
// The same error for a revision that does not resolve.
Error unresolved(git_repository* repo, const std::string& rev);
// The commit with id `id`; Errc::usage (`what` does not resolve) when
// missing, Errc::conflict when over k_commit_max_object.
Result<CommitPtr> lookup_commit(git_repository* repo, const git_oid& id, const std::string& what);
// Its tree; Errc::conflict when over k_tree_max_object.
Result<TreePtr> tree_of(git_commit* c);

}  // namespace kai
