#include "lib/paths/beneath.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "lib/util/fault.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/git.hpp"

namespace kai {
namespace fs = std::filesystem;

Dir::Dir(int fd) {
  if (fd >= 0) m_held = std::make_shared<Held>(fd);
}

Dir::Held::~Held() { ::close(fd); }

namespace {

bool valid_name(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.size() <= k_name_max &&
         name.find('/') == std::string_view::npos && name.find('\0') == std::string_view::npos;
}

Error bad_name(std::string_view name) {
  return make_error(Errc::usage, fmt::format("'{}' is not a single file name", name));
}

// Root-relative components. resolve() hands over normal paths, but this
// layer is the last line, so it re-checks rather than trusts: an absolute
// path or a `..` would be the whole escape in the fallback walk.
Result<std::vector<std::string>> split_rel(std::string_view rel) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t slash = rel.find('/', start);
    if (slash == std::string_view::npos) slash = rel.size();
    std::string_view part = rel.substr(start, slash - start);
    if (!valid_name(part))
      return make_error(Errc::denied, fmt::format("'{}' is not a plain path beneath the root", rel));
    parts.emplace_back(part);
    start = slash + 1;
  }
  return parts;
}

std::string joined(const std::vector<std::string>& parts, size_t count) {
  std::string out;
  for (size_t i = 0; i < count; ++i) out += (i ? "/" : "") + parts[i];
  return out;
}

Result<Dir> open_root(const fs::path& root) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return make_error(Errc::io, fmt::format("cannot open the root '{}': {}", root.string(), errno_text(err)));
  }
  return Dir(fd);
}

using Mount = Dir::Mount;

// One statx of an open descriptor: its stat data and the mount it lies on
// (the mount id where the kernel gives it). False, errno set, when neither
// statx nor fstat answers.
bool stat_open(int fd, struct stat& st, Mount& m) {
  constexpr unsigned k_need = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_INO | STATX_SIZE;
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_MNT_ID, &sx) == 0 &&
      (sx.stx_mask & k_need) == k_need) {
    st = {};
    st.st_dev = ::makedev(sx.stx_dev_major, sx.stx_dev_minor);
    st.st_ino = sx.stx_ino;
    st.st_mode = sx.stx_mode;
    st.st_nlink = sx.stx_nlink;
    st.st_uid = sx.stx_uid;
    st.st_gid = sx.stx_gid;
    st.st_size = static_cast<off_t>(sx.stx_size);
    m = {st.st_dev, sx.stx_mnt_id, (sx.stx_mask & STATX_MNT_ID) != 0};
    return true;
  }
  if (::fstat(fd, &st) != 0) return false;
  m = {st.st_dev, 0, false};
  return true;
}

Mount mount_of(int fd) {
  struct stat st {};
  Mount m;
  if (!stat_open(fd, st, m)) m = {};
  return m;
}

}  // namespace

const Dir::Mount& Dir::mount() const {
  static const Mount none{};
  if (!m_held) return none;
  if (!m_held->mount_known) {
    m_held->mount = mount_of(m_held->fd);
    m_held->mount_known = true;
  }
  return m_held->mount;
}

namespace {

bool same_mount(const Mount& a, const Mount& b) { return a.dev == b.dev && (!a.has_id || !b.has_id || a.id == b.id); }

Error crosses_mount(std::string_view rel, std::string_view upto) {
  return make_error(Errc::denied, fmt::format("'{}' crosses the mount point '{}'; kaicoder never reads or writes "
                                              "across a mount inside the root",
                                              rel, upto));
}

// openat2 in one call; -1 with errno set when it fails or the kernel lacks it.
// No symlink at all is followed, not even one that stays beneath root:
// resolve() already spelled the path without symlinks, so one found now was
// planted since, and could point at .git/ or the state dir. Nor is a mount
// point crossed: a bind mount inside root leads outside it.
int openat2_dir(int dirfd, const std::string& path) {
  struct open_how how {};
  how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  for (int attempt = 0; attempt < 4; ++attempt) {
    long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    if (errno != EAGAIN && errno != EINTR) break;  // EAGAIN: a rename raced the lookup
  }
  return -1;
}

// Why `name` in `dirfd` could not be opened as a folder, naming the rule.
Error walk_error(int err, int dirfd, const std::string& name, std::string_view rel, const std::string& upto) {
  struct stat st {};
  bool is_link = ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
  if (err == ELOOP || is_link)
    return make_error(Errc::denied,
                      fmt::format("'{}' leads through the symlink '{}', which kaicoder never follows", rel, upto));
  if (err == ENOTDIR) return make_error(Errc::usage, fmt::format("'{}': '{}' is not a folder", rel, upto));
  if (err == ENOENT) return make_error(Errc::conflict, fmt::format("'{}': the folder '{}' does not exist", rel, upto));
  return make_error(Errc::io, fmt::format("cannot open the folder '{}': {}", upto, errno_text(err)));
}

// One component at a time with O_NOFOLLOW, creating what is missing when
// asked. Each step starts from the descriptor of the folder before it, so no
// path is ever re-resolved from the top, and each must lie on root's mount.
Result<Dir> walk(Dir cur, const std::vector<std::string>& parts, std::string_view rel, CreateDirs create) {
  constexpr int k_flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  const Mount root_mount = cur.mount();
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& name = parts[i];
    int fd = ::openat(cur.fd(), name.c_str(), k_flags);
    if (fd < 0 && errno == ENOENT && create == CreateDirs::yes) {
      if (::mkdirat(cur.fd(), name.c_str(), 0755) != 0 && errno != EEXIST) {
        int err = errno;
        return make_error(Errc::io,
                          fmt::format("cannot create the folder '{}': {}", joined(parts, i + 1), errno_text(err)));
      }
      // The new entry must survive a crash before anything is written in it.
      ::fsync(cur.fd());
      // EEXIST may be a symlink planted in between; O_NOFOLLOW catches it.
      fd = ::openat(cur.fd(), name.c_str(), k_flags);
    }
    if (fd < 0) {
      int err = errno;
      return walk_error(err, cur.fd(), name, rel, joined(parts, i + 1));
    }
    cur = Dir(fd);
    if (!same_mount(cur.mount(), root_mount)) return crosses_mount(rel, joined(parts, i + 1));
  }
  return cur;
}

Result<Dir> open_parent_impl(const fs::path& root, std::string_view rel, CreateDirs create, bool use_openat2) {
  auto parts = split_rel(rel);
  if (!parts) return parts.error();
  auto top = open_root(root);
  if (!top) return top.error();
  if (parts->size() == 1) return top;
  if (use_openat2) {
    int fd = openat2_dir(top->fd(), joined(*parts, parts->size() - 1));
    if (fd >= 0) return Dir(fd);
    if (errno == EXDEV) return crosses_mount(rel, joined(*parts, parts->size() - 1));
    // Any failure (no openat2, a missing folder to create, a symlink) goes
    // to the walk, which is as strict and can say which component failed.
  }
  return walk(std::move(*top), *parts, rel, create);
}

Status sync_dir(const Dir& dir, std::string_view what) {
  if (::fsync(dir.fd()) != 0)
    return make_error(Errc::io, fmt::format("cannot sync the folder of '{}': {}", what, errno_text(errno)));
  return ok_status();
}

// Write, fsync and close `fd`; the caller unlinks `name` on failure.
Status fill(int fd, std::string_view name, std::span<const std::string_view> pieces, mode_t mode, Sync sync) {
  bool ok = ::fchmod(fd, mode & 07777) == 0 && write_all(fd, pieces) && (sync == Sync::later || ::fsync(fd) == 0);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) return make_error(Errc::io, fmt::format("cannot write '{}': {}", name, errno_text(err)));
  return ok_status();
}

// `.NAME.kaicoder-tmp-HEX`, shortened so that it still fits NAME_MAX.
std::string temp_name(std::string_view name, uint64_t salt) {
  std::string suffix = fmt::format(".kaicoder-tmp-{:016x}", salt);
  size_t room = k_name_max - 1 - suffix.size();
  return fmt::format(".{}{}", name.substr(0, room), suffix);
}

}  // namespace

Result<Dir> open_parent(const fs::path& root, std::string_view rel, CreateDirs create) {
  return open_parent_impl(root, rel, create, true);
}

Result<Dir> open_parent_walk(const fs::path& root, std::string_view rel, CreateDirs create) {
  return open_parent_impl(root, rel, create, false);
}

namespace {
// What a stat of `name` tells, into `out`; `st` its stat data.
Status stat_name(const Dir& dir, const std::string& name, FileState& out, struct stat& st) {
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return ok_status();
    return make_error(Errc::io, fmt::format("cannot inspect '{}': {}", name, errno_text(errno)));
  }
  if (S_ISLNK(st.st_mode))
    return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", name));
  out.exists = true;
  out.regular = S_ISREG(st.st_mode);
  out.mode = st.st_mode & 07777;
  out.nlink = st.st_nlink;
  return ok_status();
}

Result<FileState> read_or_hash(const Dir& dir, std::string_view name_in, size_t max, size_t whole_max) {
  if (!valid_name(name_in)) return bad_name(name_in);
  std::string name(name_in);
  FileState out;
  struct stat st {};
  KAI_TRY(stat_name(dir, name, out, st));
  if (!out.regular) return out;
  out.regular = false;  // until it is opened and found so

  // O_NONBLOCK: if a fifo is swapped in after the fstatat, the open must not hang.
  int fd = ::openat(dir.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP)
      return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", name));
    return make_error(Errc::io, fmt::format("cannot read '{}': {}", name, errno_text(errno)));
  }
  struct stat opened {};
  Mount on;
  if (!stat_open(fd, opened, on) || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino ||
      !S_ISREG(opened.st_mode)) {
    ::close(fd);
    return make_error(Errc::conflict, fmt::format("'{}' changed while it was being read", name));
  }
  // A file bind-mounted over a name inside root is someone else's file.
  if (!same_mount(on, dir.mount())) {
    ::close(fd);
    return crosses_mount(name, name);
  }
  out.regular = true;
  out.mode = opened.st_mode & 07777;
  out.nlink = opened.st_nlink;
  if (static_cast<uint64_t>(opened.st_size) > whole_max) {
    auto id = blob_id_of_fd(fd);
    ::close(fd);
    if (!id) return make_error(id.error().code, fmt::format("cannot read '{}': {}", name, id.error().message));
    out.hashed = true;
    out.blob = std::move(*id);
    return out;
  }
  auto bytes = read_all(fd, max, &opened);
  ::close(fd);
  if (!bytes) return make_error(Errc::io, fmt::format("cannot read '{}': {}", name, bytes.error().message));
  out.bytes = std::move(*bytes);
  return out;
}
}  // namespace

Result<FileState> stat_at(const Dir& dir, std::string_view name_in) {
  if (!valid_name(name_in)) return bad_name(name_in);
  FileState out;
  struct stat st {};
  KAI_TRY(stat_name(dir, std::string(name_in), out, st));
  return out;
}

Result<FileState> read_at(const Dir& dir, std::string_view name, size_t max) {
  return read_or_hash(dir, name, max, SIZE_MAX);
}

Result<FileState> read_or_hash_at(const Dir& dir, std::string_view name, size_t whole_max) {
  return read_or_hash(dir, name, SIZE_MAX - 1, whole_max);
}

Status write_exclusive_at(const Dir& dir, std::string_view name_in, std::string_view data, mode_t mode, Sync sync) {
  if (!valid_name(name_in)) return bad_name(name_in);
  std::string name(name_in);
  int fd = ::openat(dir.fd(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
  if (fd < 0) {
    if (errno == EEXIST) return make_error(Errc::conflict, fmt::format("'{}' already exists", name));
    return make_error(Errc::io, fmt::format("cannot create '{}': {}", name, errno_text(errno)));
  }
  fault_point("after-exclusive-create");  // a crash here leaves an empty file (backups: see apply's recovery)
  if (auto s = fill(fd, name, std::span<const std::string_view>(&data, 1), mode, sync); !s) {
    ::unlinkat(dir.fd(), name.c_str(), 0);  // no half-written file left behind
    return s;
  }
  return sync == Sync::now ? sync_dir(dir, name) : ok_status();
}

Status replace_at(const Dir& dir, std::string_view name_in, std::string_view data, mode_t mode, Sync sync) {
  return replace_at(dir, name_in, std::span<const std::string_view>(&data, 1), mode, sync);
}

Status replace_at(const Dir& dir, std::string_view name_in, std::span<const std::string_view> pieces, mode_t mode,
                  Sync sync) {
  if (!valid_name(name_in)) return bad_name(name_in);
  std::string name(name_in);
  struct stat st {};
  if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    // rename() would not follow a symlink either; refusing keeps the rule
    // the same everywhere and tells the caller something is off.
    if (S_ISLNK(st.st_mode))
      return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", name));
    if (S_ISDIR(st.st_mode)) return make_error(Errc::conflict, fmt::format("'{}' is a folder", name));
  }
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    tmp = temp_name(name, rng());
    fd = ::openat(dir.fd(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    return make_error(Errc::io, fmt::format("cannot create a temp file for '{}': {}", name, errno_text(errno)));
  if (auto s = fill(fd, name, pieces, mode, sync); !s) {
    ::unlinkat(dir.fd(), tmp.c_str(), 0);
    return s;
  }
  if (::renameat(dir.fd(), tmp.c_str(), dir.fd(), name.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dir.fd(), tmp.c_str(), 0);
    return make_error(Errc::io, fmt::format("cannot replace '{}': {}", name, errno_text(err)));
  }
  return sync == Sync::now ? sync_dir(dir, name) : ok_status();
}

namespace {

// `path` opened with `flags` without following a symlink anywhere on the
// way: openat2 RESOLVE_NO_SYMLINKS, else the walk by hand. -1 and errno.
int open_no_symlinks(const fs::path& path, int flags) {
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long got = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
  if (got >= 0 || (errno != ENOSYS && errno != EPERM && errno != EINVAL)) return static_cast<int>(got);
  // No openat2: one component at a time.
  Dir cur(::open(path.is_absolute() ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  int fd = cur.fd();
  std::vector<std::string> parts;
  for (const auto& c : path.relative_path()) parts.push_back(c.string());
  for (size_t i = 0; fd >= 0 && i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    fd = ::openat(cur.fd(), parts[i].c_str(), last ? flags : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && !last) cur = Dir(fd);
  }
  return fd;
}

Error owned_open_error(int err, const fs::path& path) {
  if (err == ENOENT) return make_error(Errc::not_found, fmt::format("'{}' does not exist", path.string()));
  if (err == ELOOP || err == ENOTDIR || err == EXDEV)
    return make_error(Errc::denied,
                      fmt::format("'{}' is or leads through a symlink, which kaicoder never follows", path.string()),
                      "put the real file back in its place");
  return make_error(Errc::io, fmt::format("cannot open '{}': {}", path.string(), errno_text(err)));
}

}  // namespace

Status write_owned(const fs::path& path, std::string_view data, mode_t mode) {
  return write_owned(path, std::span<const std::string_view>(&data, 1), mode);
}

Status write_owned(const fs::path& path, std::span<const std::string_view> pieces, mode_t mode) {
  int fd = open_no_symlinks(path.parent_path(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return owned_open_error(errno, path.parent_path());
  return replace_at(Dir(fd), path.filename().string(), pieces, mode);
}

namespace {
// `path` opened as read_owned() opens it, and its stat data: a regular file
// with one name, reached through no symlink.
Result<Dir> open_owned(const fs::path& path, struct stat& st) {
  int got = open_no_symlinks(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (got < 0) return owned_open_error(errno, path);
  Dir file(got);  // closes it
  if (::fstat(file.fd(), &st) != 0)
    return make_error(Errc::io, fmt::format("cannot inspect '{}': {}", path.string(), errno_text(errno)));
  if (!S_ISREG(st.st_mode)) return make_error(Errc::denied, fmt::format("'{}' is not a regular file", path.string()));
  if (st.st_nlink > 1)
    return make_error(
        Errc::denied,
        fmt::format("'{}' has {} hard links; kaicoder's own files have one name", path.string(), st.st_nlink),
        "replace it by a copy of itself");
  return file;
}
}  // namespace

Status check_owned(const fs::path& path) {
  struct stat st {};
  auto file = open_owned(path, st);
  if (!file) return file.error();
  return ok_status();
}

Result<std::string> read_owned(const fs::path& path, size_t max) {
  struct stat st {};
  auto file = open_owned(path, st);
  if (!file) return file.error();
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > max)
    return make_error(Errc::io, fmt::format("'{}' is larger than {} bytes", path.string(), max));
  auto bytes = read_all(file->fd(), max, &st);
  if (!bytes) return make_error(Errc::io, fmt::format("cannot read '{}': {}", path.string(), bytes.error().message));
  if (bytes->size() > max) return make_error(Errc::io, fmt::format("'{}' is larger than {} bytes", path.string(), max));
  return bytes;
}

Status unlink_at(const Dir& dir, std::string_view name_in, Sync sync) {
  if (!valid_name(name_in)) return bad_name(name_in);
  std::string name(name_in);
  if (::unlinkat(dir.fd(), name.c_str(), 0) != 0) {
    int err = errno;
    if (err == ENOENT) return ok_status();
    if (err == EISDIR || err == EPERM) {
      struct stat st {};
      if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
        return make_error(Errc::conflict, fmt::format("'{}' is a folder", name));
    }
    return make_error(Errc::io, fmt::format("cannot delete '{}': {}", name, errno_text(err)));
  }
  return sync == Sync::now ? sync_dir(dir, name) : ok_status();
}

Status link_at(const Dir& from_dir, std::string_view from_in, const Dir& to_dir, std::string_view to_in, Sync sync) {
  if (!valid_name(from_in)) return bad_name(from_in);
  if (!valid_name(to_in)) return bad_name(to_in);
  const std::string from(from_in), to(to_in);
  if (::linkat(from_dir.fd(), from.c_str(), to_dir.fd(), to.c_str(), 0) != 0) {
    const int err = errno;
    if (err == EEXIST) return make_error(Errc::conflict, fmt::format("'{}' already exists", to));
    if (err == EPERM || err == EMLINK || err == EXDEV || err == EOPNOTSUPP || err == ENOSYS)
      return make_error(Errc::usage, fmt::format("cannot link '{}' as '{}': {}", from, to, errno_text(err)));
    return make_error(Errc::io, fmt::format("cannot link '{}' as '{}': {}", from, to, errno_text(err)));
  }
  return sync == Sync::now ? sync_dir(to_dir, to) : ok_status();
}

Status rename_at(const Dir& from_dir, std::string_view from_in, const Dir& to_dir, std::string_view to_in, Sync sync) {
  if (!valid_name(from_in)) return bad_name(from_in);
  if (!valid_name(to_in)) return bad_name(to_in);
  const std::string from(from_in), to(to_in);
  if (::renameat(from_dir.fd(), from.c_str(), to_dir.fd(), to.c_str()) != 0)
    return make_error(Errc::io, fmt::format("cannot rename '{}' to '{}': {}", from, to, errno_text(errno)));
  if (sync == Sync::later) return ok_status();
  KAI_TRY(sync_dir(to_dir, to));
  return sync_dir(from_dir, from);
}

Status chmod_at(const Dir& dir, std::string_view name_in, mode_t mode) {
  if (!valid_name(name_in)) return bad_name(name_in);
  const std::string name(name_in);
  int fd = ::openat(dir.fd(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP)
      return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", name));
    return make_error(Errc::io, fmt::format("cannot open '{}': {}", name, errno_text(errno)));
  }
  Dir file(fd);  // closes it
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(Errc::conflict, fmt::format("'{}' is not a regular file", name));
  if ((st.st_mode & 07777) != (mode & 07777) && ::fchmod(fd, mode & 07777) != 0)
    return make_error(Errc::io, fmt::format("cannot set the mode of '{}': {}", name, errno_text(errno)));
  return ok_status();
}

}  // namespace kai
