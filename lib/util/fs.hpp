#pragma once
// Plain file helpers with POSIX durability. They know nothing of roots or
// guardrails: callers that write inside the governed tree use lib/paths/beneath.hpp,
// which resolves every component without following symlinks.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "lib/result.hpp"

struct stat;

namespace kai {

// Longest name of one folder entry, in bytes: NAME_MAX on every file system
// kaicoder runs on.
inline constexpr size_t k_name_max = 255;

// Whole file as bytes. not_found when it does not exist, io otherwise.
// With `max`, reading stops after max + 1 bytes: a result longer than `max`
// says the file is too long, without reading the rest of it.
Result<std::string> read_file(const std::filesystem::path& p, size_t max = SIZE_MAX - 1);

// Replace `p` atomically: temp file in the same folder, fsync, rename, fsync
// the folder. `mode` is applied to the new file.
Status write_file_atomic(const std::filesystem::path& p, std::string_view data, mode_t mode = 0644);
// The same with the bytes given as pieces, written one after another.
Status write_file_atomic(const std::filesystem::path& p, std::span<const std::string_view> pieces,
                         mode_t mode = 0644);

// Many files replaced as write_file_atomic does, all on one file system,
// with two syncs of that file system in all instead of two per file (a
// thousand proposals expiring at once). Each file is replaced atomically;
// after a crash some may be replaced and others not.
Status write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string>>& files, mode_t mode = 0644);

// Room to hold `n` descriptors open at once besides a margin for
// everything else (k_descriptor_margin): when the soft limit on open files
// is lower, it is raised toward the hard limit (never past it), for the
// rest of the process. The one process setting lib/ changes: a transaction
// holds one open folder per folder it touches until it is done, and a
// changeset may touch thousands. `enough` false when even the hard limit is
// too low; `limit` is the soft limit after.
struct DescriptorRoom {
  bool enough = true;
  uint64_t limit = 0;
};
inline constexpr size_t k_descriptor_margin = 64;
DescriptorRoom room_for_descriptors(size_t n);
// The soft limit on open files now (UINT64_MAX when there is none).
uint64_t open_file_limit();

// A small file (at most k_in_place_max bytes: one disk sector) rewritten
// where it is, without a new inode: when `p` is a plain file of this user
// with one link, `data` goes over its first bytes in one write(2) and the
// file is cut to that length, its mode set to `mode`. A process killed at
// any point leaves it whole old or whole new (one write; any bytes past the
// new end count for nothing to a reader that stops at the content's own
// end); a machine that loses power mid-write may tear it, so its reader must
// take an unreadable one as unknown. Not synced: the caller syncs a batch
// (sync_file_system). false, with nothing written, when there is no such
// file there (missing, a symlink, a folder, a FIFO, another owner's, or one
// with more links): replace that one whole (write_file_atomic).
inline constexpr size_t k_in_place_max = 512;
Result<bool> overwrite_in_place(const std::filesystem::path& p, std::string_view data, mode_t mode = 0644);

// Lines added at the end of `p`, a file of lines (O_APPEND, one writev(2)
// for all of `pieces`, then fdatasync), when it is a plain file of this
// user with one link, never through a symlink. A last line that a crash cut
// short (the file does not end in a newline) is ended first, so the new
// lines start on their own; its reader takes that line for what it is. A
// file killed mid-append keeps its lines before, and at most a last line cut
// short. false, with nothing written, when there is no such file there
// (missing, a symlink, a folder, a FIFO, another owner's, or one with more
// links): write it whole (write_file_atomic).
Result<bool> append_lines_to(const std::filesystem::path& p, std::span<const std::string_view> pieces);

// Create `p` exclusively (O_EXCL|O_NOFOLLOW), write, fsync. conflict if it exists.
Status write_file_exclusive(const std::filesystem::path& p, std::string_view data, mode_t mode = 0644);

// Append with O_APPEND and fsync.
Status append_file(const std::filesystem::path& p, std::string_view data, mode_t mode = 0644);

Status fsync_dir(const std::filesystem::path& dir);
// syncfs(2) of the file system that holds `dir`: every write to it so far
// reaches the disk, in one call.
Status sync_file_system(const std::filesystem::path& dir);

// The nearest of `start` and its ancestors that holds an entry `name` (any
// type, a dangling symlink too), or nullopt. `start` should be canonical.
std::optional<std::filesystem::path> nearest_holding(const std::filesystem::path& start,
                                                     const std::filesystem::path& name);
Status make_dirs(const std::filesystem::path& dir, mode_t mode = 0755);

// write(2) until done, retrying on EINTR.
bool write_all(int fd, std::string_view data);
// The pieces one after another, as few writev(2) calls as the kernel takes
// (a file written from where its lines were read is thousands of pieces).
bool write_all(int fd, std::span<const std::string_view> pieces);
// read(2) until EOF, or until more than `max` bytes (max + 1) were read.
// `known`: the descriptor's stat data, when the caller has it already. A
// regular file that gave exactly the size it said it had, and less than
// was asked for (its size and one byte more), is at its end: no second
// read to be told so.
Result<std::string> read_all(int fd, size_t max = SIZE_MAX - 1, const struct stat* known = nullptr);

std::string errno_text(int err);

// Walks the tree under `root` depth first, each folder read once through a
// descriptor, entry types from the listing (a stat only where the file
// system gives none). Symlinks are neither followed nor reported; a folder
// is entered when `enter(name)` says so; every other entry (regular files,
// fifos, sockets, devices: `type` is its DT_* value) goes to `file`, with
// its root-relative path and its folder's descriptor, until `file` returns
// false. At most `max_entries` entries, folders and symlinks included, are
// looked at; folders that cannot be opened are skipped.
// With `listed`, each folder read to its end (not cut short by
// `max_entries` or `file`) is handed over too: its root-relative prefix
// ("" or "a/b/"), its stat data read before its first entry, and every name
// in it but "." and "..", in the order read.
using FolderListed =
    std::function<void(const std::string& prefix, const struct stat& before, std::vector<std::string>& names)>;

// One folder of such a walk: reads the folder `fd` (owned, closed at the
// end) entry by entry while `left` (counted down once per name but "." and
// "..") lasts, hands each entry to `each` with its folder's descriptor and
// its DT_* type (from the listing; a stat only where the file system gives
// none; an entry gone meanwhile is skipped) until `each` returns false, and
// puts every name read into `names` when given. `each` may read other
// folders the same way (they share `left`). Returns whether the folder was
// read to its end.
bool read_folder(int fd, size_t& left, const std::function<bool(int dirfd, const char* name, unsigned type)>& each,
                 std::vector<std::string>* names = nullptr);
void walk_tree(const std::filesystem::path& root, size_t max_entries,
               const std::function<bool(std::string_view)>& enter,
               const std::function<bool(const std::string& rel, int dirfd, const char* name, unsigned type)>& file,
               const FolderListed& listed = {});

// A folder only this user can enter (mkdtemp: mode 0700), made under
// `parent`, removed with everything in it when the object goes away. For
// handing bytes to a program that wants files.
class PrivateTempDir {
public:
  static Result<PrivateTempDir> make(const std::filesystem::path& parent, std::string_view prefix);
  PrivateTempDir(PrivateTempDir&& o) noexcept : m_path(std::move(o.m_path)) { o.m_path.clear(); }
  PrivateTempDir& operator=(PrivateTempDir&&) = delete;
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  ~PrivateTempDir();
  const std::filesystem::path& path() const { return m_path; }

private:
  explicit PrivateTempDir(std::filesystem::path p) : m_path(std::move(p)) {}
  std::filesystem::path m_path;
};

}  // namespace kai
