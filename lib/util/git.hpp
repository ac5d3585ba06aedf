#pragma once
// The one place lib/ talks to libgit2 for object ids. Every libgit2 return
// code goes through git_check(), which reads git_error_last().

#include <filesystem>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

// Initialises libgit2 once per process (idempotent, thread-safe).
void git_init_once();

// The git blob id (hex SHA-1 of "blob <len>\0<bytes>") of `bytes`, exactly what
// `git hash-object` prints. Used to bind bases, backups and approvals to bytes.
std::string blob_id(std::string_view bytes);

// The same id for the regular file open at `fd`, read from its start in
// bounded chunks: a file of any size is hashed in constant memory.
// Errc::conflict when the file's size changes while it is read.
Result<std::string> blob_id_of_fd(int fd);

// Owns a libgit2 object: GitOwned<git_tree, git_tree_free>.
template <typename T, void (*F)(T*)>
struct GitDeleter {
  void operator()(T* p) const { F(p); }
};
template <typename T, void (*F)(T*)>
using GitOwned = std::unique_ptr<T, GitDeleter<T, F>>;

// The entries of git's index at the top of a work tree, sorted by path
// (bytes), with their stage (0, or 1 to 3 for a conflict). One process reads an index once per change of the file and
// shares it (index_entries): git writes a new index beside the old one and
// renames it over, so a changed index has new stat data (inode, ctime), and
// a command that asks several times (the approval's check of names, the
// overlay's check of owners, the effects' tracked paths) pays one read and
// one checksum, not one for each question.
struct IndexEntries {
  struct Entry {
    std::string path;
    uint32_t mode = 0, uid = 0, gid = 0;
    int stage = 0;
  };
  std::vector<Entry> entries;
  // `rel` is an entry of stage 0, or a folder with an entry below it.
  bool tracked(std::string_view rel) const;
};

// The index of the work tree whose top is `root`, read now or shared from
// an earlier read of the same file (same stat data): no entries when `root`
// is not the top of a git work tree; io when its index cannot be read.
Result<std::shared_ptr<const IndexEntries>> index_entries(const std::filesystem::path& root);

// The paths git's index at `root` names (stage 0), as their bytes: empty
// when `root` is not the top of a git work tree; io when its index cannot
// be read.
Result<std::vector<std::string>> tracked_paths(const std::filesystem::path& root);

// Turn a libgit2 return code into a Status naming `what` failed.
Status git_check(int rc, std::string_view what);

}  // namespace kai
