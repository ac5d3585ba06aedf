#pragma once
// File operations confined beneath root. Every component is opened from the
// root's descriptor without following any symlink or crossing a mount point
// (openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|
// RESOLVE_NO_XDEV where the kernel has it, else a walk with O_NOFOLLOW that
// compares each folder's mount with root's), so a symlink or bind mount
// planted or swapped in after resolve() checked the path cannot redirect a
// read or a write. `rel` is what resolve() returns, which never contains a
// symlink.
//
// Usage: Dir d = open_parent(root, rel, CreateDirs::no); read_at(d, name);
//        write_exclusive_at(d, backup, bytes); replace_at(d, name, new, mode);

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "lib/result.hpp"

namespace kai {

enum class CreateDirs { no, yes };

// An open folder. Closed when the last Dir that holds it goes; share()
// hands out another Dir of the same descriptor, so that every file of one
// transaction in a folder uses the folder opened once (one descriptor a
// folder, not a file: thousands of files stay within the open-file limit).
class Dir {
public:
  Dir() = default;
  explicit Dir(int fd);
  Dir(Dir&&) noexcept = default;
  Dir& operator=(Dir&&) noexcept = default;
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  ~Dir() = default;
  int fd() const { return m_held ? m_held->fd : -1; }
  Dir share() const {
    Dir d;
    d.m_held = m_held;
    return d;
  }

  // The mount the folder lies on: its device and, where the kernel says
  // (statx STATX_MNT_ID, Linux 5.8), its mount id, which also tells a bind
  // mount of the same file system apart. Asked of the kernel once per
  // descriptor: an open descriptor never moves to another mount.
  struct Mount {
    dev_t dev = 0;
    uint64_t id = 0;
    bool has_id = false;
  };
  const Mount& mount() const;

private:
  struct Held {
    explicit Held(int f) : fd(f) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();
    int fd;
    Mount mount;
    bool mount_known = false;
  };
  std::shared_ptr<Held> m_held;
};

struct FileState {
  bool exists = false;
  bool regular = false;  // false for folders, fifos, devices
  std::string bytes;     // whole content when regular (and not hashed)
  bool hashed = false;   // read_or_hash_at: too large to read, `blob` holds its id
  std::string blob;      // the git blob id when hashed
  mode_t mode = 0644;    // permission bits
  nlink_t nlink = 0;
};

// The folder holding `rel` (root-relative), opened beneath `root`.
// Errc::denied when a component leaves root or is a symlink to outside.
// Errc::conflict when a folder is missing and `create` is no; Errc::usage
// when a component is not a folder. With CreateDirs::yes, missing folders are
// created (mode 0755 less umask) one at a time, each beneath the last.
Result<Dir> open_parent(const std::filesystem::path& root, std::string_view rel, CreateDirs create);

// open_parent without trying openat2: the component-by-component walk that
// kernels before Linux 5.6 get. Exposed so tests can cover it on any kernel.
Result<Dir> open_parent_walk(const std::filesystem::path& root, std::string_view rel, CreateDirs create);

// State of `name` in `dir`, never following a symlink: a symlink yields
// Errc::denied; a missing file yields exists == false.
Result<FileState> read_at(const Dir& dir, std::string_view name, size_t max = SIZE_MAX - 1);

// read_at, but a regular file larger than `whole_max` bytes is hashed as a
// stream instead of read: `hashed` is set, `blob` holds its git blob id and
// `bytes` stays empty. For the callers that only compare and move a file
// (a rollback), so a file of any size costs constant memory.
Result<FileState> read_or_hash_at(const Dir& dir, std::string_view name, size_t whole_max);
// What a stat of `name` tells (there or not, regular or not, its mode and
// links), read_at()'s refusals of a symlink and a bad name included; no
// byte is read.
Result<FileState> stat_at(const Dir& dir, std::string_view name);

// When the writes below reach the disk: now (the file and its folder are
// fsynced before the call returns), or later (nothing is synced: the caller
// syncs the whole batch at once, lib/util/fs.hpp sync_file_system).
enum class Sync { now, later };

// Create `name` exclusively (O_CREAT|O_EXCL|O_NOFOLLOW), write, fsync.
// Errc::conflict when the name exists (file, symlink or anything else).
Status write_exclusive_at(const Dir& dir, std::string_view name, std::string_view data, mode_t mode,
                          Sync sync = Sync::now);

// Atomic replace: temp in `dir`, write, fsync, chmod to `mode`, renameat over
// `name`, fsync `dir`. The old file is wholly there or wholly replaced.
Status replace_at(const Dir& dir, std::string_view name, std::string_view data, mode_t mode, Sync sync = Sync::now);
// The same with the new bytes given as pieces, written one after another:
// a file rewritten around an insertion is never copied whole first.
Status replace_at(const Dir& dir, std::string_view name, std::span<const std::string_view> pieces, mode_t mode,
                  Sync sync = Sync::now);

// unlinkat + fsync dir. Missing is not an error.
Status unlink_at(const Dir& dir, std::string_view name, Sync sync = Sync::now);

// A second name `to` in `to_dir` for the regular file `from` in `from_dir`
// (link(2), never following a symlink): the same bytes, no new space.
// Errc::conflict when `to` exists; Errc::usage when the file system or the
// file cannot take another link (no hard links there, too many links, not
// ours to link): the caller copies instead; Errc::io otherwise.
Status link_at(const Dir& from_dir, std::string_view from, const Dir& to_dir, std::string_view to,
               Sync sync = Sync::now);

// renameat from `from_dir`/`from` over `to_dir`/`to` (both on one file
// system), then fsync both folders: `to` is wholly the old file or wholly
// `from`. Needs no new space.
Status rename_at(const Dir& from_dir, std::string_view from, const Dir& to_dir, std::string_view to,
                 Sync sync = Sync::now);

// Set the permission bits of the regular file `name` (opened without
// following a symlink). Errc::denied for a symlink; Errc::conflict when it
// is not a regular file.
Status chmod_at(const Dir& dir, std::string_view name, mode_t mode);

// The bytes of a file kaicoder keeps under a root (the changelog and its
// archives, records under the state dir), held to the rules of user files:
// `path` is absolute beneath a canonical root, so any symlink on the way was
// planted and is refused (openat2 RESOLVE_NO_SYMLINKS, else a walk from `/`
// with O_NOFOLLOW), and so is anything but a regular file with one link
// (denied). not_found when it is missing; io otherwise, and for a file of
// more than `max` bytes (none of it is kept).
Result<std::string> read_owned(const std::filesystem::path& path, size_t max = SIZE_MAX - 1);
// ok when read_owned() would read `path`, found without reading it: its
// errors, but for the size.
Status check_owned(const std::filesystem::path& path);

// Atomic replace (replace_at) of such a file, its folder opened the same
// way: a symlinked folder on the way is refused (denied), never written into.
Status write_owned(const std::filesystem::path& path, std::string_view data, mode_t mode = 0644);
Status write_owned(const std::filesystem::path& path, std::span<const std::string_view> pieces, mode_t mode = 0644);

}  // namespace kai
