#include "lib/util/fs.hpp"
#include "lib/util/stack.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fmt/format.h>

namespace kai {
namespace fs = std::filesystem;

std::string errno_text(int err) { return std::strerror(err); }

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool write_all(int fd, std::span<const std::string_view> pieces) {
  std::vector<struct iovec> iov;
  iov.reserve(std::min<size_t>(pieces.size(), IOV_MAX));
  size_t next = 0;  // the first piece not yet in iov
  while (next < pieces.size() || !iov.empty()) {
    while (next < pieces.size() && iov.size() < IOV_MAX) {
      const std::string_view p = pieces[next++];
      if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
    }
    if (iov.empty()) break;
    ssize_t n = ::writev(fd, iov.data(), static_cast<int>(iov.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    // Drop what was written; a piece written in part keeps its rest.
    size_t done = static_cast<size_t>(n), gone = 0;
    while (gone < iov.size() && done >= iov[gone].iov_len) done -= iov[gone++].iov_len;
    iov.erase(iov.begin(), iov.begin() + static_cast<std::ptrdiff_t>(gone));
    if (!iov.empty() && done > 0) {
      iov.front().iov_base = static_cast<char*>(iov.front().iov_base) + done;
      iov.front().iov_len -= done;
    }
  }
  return true;
}

Result<std::string> read_all(int fd, size_t max, const struct stat* known) {
  std::string out;
  // A regular file says its size: the bytes are read straight into a buffer
  // that already holds them (and one more, to see the end or a file that
  // grew), not into one that is copied each time it doubles.
  struct stat st {};
  if (known)
    st = *known;
  else if (::fstat(fd, &st) != 0)
    st = {};
  const bool regular = S_ISREG(st.st_mode);
  size_t room = 65536;
  if (regular && st.st_size > 0) room = std::min(static_cast<size_t>(st.st_size), max) + 1;
  size_t used = 0;
  while (used <= max) {
    if (out.size() == used) out.resize(std::min(std::max(used + room, 2 * used), max + 1));
    const size_t asked = out.size() - used;
    ssize_t n = ::read(fd, out.data() + used, asked);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(Errc::io, fmt::format("cannot read: {}", errno_text(errno)));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
    // A regular file that gave exactly the size it said it had, and less
    // than was asked for, is at its end: no second read to be told so.
    // Anything else (a file that grew or shrank, one that reports no size,
    // a short read elsewhere) reads on to the end as before.
    if (regular && st.st_size > 0 && used == static_cast<size_t>(st.st_size) && static_cast<size_t>(n) < asked) break;
  }
  out.resize(used);
  return out;
}

Result<std::string> read_file(const fs::path& p, size_t max) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Errc c = errno == ENOENT ? Errc::not_found : Errc::io;
    return make_error(c, fmt::format("cannot read '{}': {}", p.string(), errno_text(errno)));
  }
  auto r = read_all(fd, max);
  ::close(fd);
  if (!r) return make_error(Errc::io, fmt::format("cannot read '{}': {}", p.string(), r.error().message));
  return r;
}

std::optional<fs::path> nearest_holding(const fs::path& start, const fs::path& name) {
  std::error_code ec;
  for (fs::path d = start;; d = d.parent_path()) {
    if (fs::symlink_status(d / name, ec).type() != fs::file_type::not_found) return d;
    if (d == d.parent_path()) return std::nullopt;
  }
}

// fsync(2) of a folder, or syncfs(2) of the file system that holds it.
static Status sync_folder(const fs::path& dir, bool whole_file_system) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot open folder '{}': {}", dir.string(), errno_text(errno)));
  int rc = whole_file_system ? ::syncfs(fd) : ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return make_error(Errc::io, fmt::format("cannot sync folder '{}': {}", dir.string(), errno_text(err)));
  return ok_status();
}

Status fsync_dir(const fs::path& dir) { return sync_folder(dir, false); }
Status sync_file_system(const fs::path& dir) { return sync_folder(dir, true); }

Status make_dirs(const fs::path& dir, mode_t mode) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(Errc::io, fmt::format("cannot create folder '{}': {}", dir.string(), ec.message()));
  ::chmod(dir.c_str(), mode);
  return ok_status();
}

static Status write_fd(int fd, const fs::path& p, std::span<const std::string_view> pieces, bool sync = true) {
  if (!write_all(fd, pieces) || (sync && ::fsync(fd) != 0)) {
    int err = errno;
    ::close(fd);
    return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(err)));
  }
  if (::close(fd) != 0)
    return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(errno)));
  return ok_status();
}

static Status write_fd(int fd, const fs::path& p, std::string_view data, bool sync = true) {
  return write_fd(fd, p, std::span<const std::string_view>(&data, 1), sync);
}

Status write_file_exclusive(const fs::path& p, std::string_view data, mode_t mode) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    Errc c = errno == EEXIST ? Errc::conflict : Errc::io;
    return make_error(c, fmt::format("cannot create '{}': {}", p.string(), errno_text(errno)));
  }
  ::fchmod(fd, mode);
  return write_fd(fd, p, data);
}

// A fresh temp file beside `p` (mode `mode`), its name in `tmp`; -1 on error.
static int open_temp_beside(const fs::path& p, mode_t mode, fs::path& tmp) {
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  int fd = -1;
  for (int i = 0; i < 16 && fd < 0; ++i) {
    tmp = dir / fmt::format(".{}.kaicoder-tmp-{:x}", p.filename().string(), rng());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd >= 0) ::fchmod(fd, mode);
  return fd;
}

Status write_files_atomic(const std::vector<std::pair<fs::path, std::string>>& files, mode_t mode) {
  if (files.empty()) return ok_status();
  std::vector<fs::path> tmps;
  auto drop_from = [&tmps](size_t i) {
    for (; i < tmps.size(); ++i) ::unlink(tmps[i].c_str());
  };
  for (const auto& [p, data] : files) {
    fs::path tmp;
    int fd = open_temp_beside(p, mode, tmp);
    if (fd < 0) {
      int err = errno;
      drop_from(0);
      return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(err)));
    }
    tmps.push_back(tmp);
    if (auto s = write_fd(fd, tmp, data, false); !s) {
      drop_from(0);
      return s;
    }
  }
  const fs::path dir = files.front().first.parent_path().empty() ? fs::path(".") : files.front().first.parent_path();
  if (auto s = sync_folder(dir, true); !s) {  // every new file on disk before any of them replaces an old one
    drop_from(0);
    return s;
  }
  for (size_t i = 0; i < files.size(); ++i)
    if (::rename(tmps[i].c_str(), files[i].first.c_str()) != 0) {
      int err = errno;
      drop_from(i);
      return make_error(Errc::io, fmt::format("cannot replace '{}': {}", files[i].first.string(), errno_text(err)));
    }
  return sync_folder(dir, true);  // and the renames
}

uint64_t open_file_limit() {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return static_cast<uint64_t>(lim.rlim_cur);
}

DescriptorRoom room_for_descriptors(size_t n) {
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return {true, 0};  // unknown: the opens will tell
  const rlim_t want = static_cast<rlim_t>(n) + k_descriptor_margin;
  if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= want) return {true, static_cast<uint64_t>(lim.rlim_cur)};
  const bool enough = lim.rlim_max == RLIM_INFINITY || lim.rlim_max >= want;
  struct rlimit raised = lim;
  raised.rlim_cur = enough ? want : lim.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &raised) != 0) return {false, static_cast<uint64_t>(lim.rlim_cur)};
  return {enough, static_cast<uint64_t>(raised.rlim_cur)};
}

namespace {
// `p` opened for writing (`flags` besides O_NOFOLLOW, O_NONBLOCK and
// O_CLOEXEC) when it is a plain file of this user with one name: its
// descriptor, its stat data in `opened`; -1 when there is no such file
// there. Opened first and judged by what was opened: no name looked at
// twice. Nothing is written until the descriptor is known to be a regular
// file of this user with one name. O_NONBLOCK: a FIFO there must not hang
// the open (without a reader it fails with ENXIO; with one, fstat tells
// it). An open for writing has no effect of its own on a regular file (no
// O_TRUNC), and a device node is nothing an unprivileged process can make.
Result<int> open_own_plain(const fs::path& p, int flags, struct stat& opened) {
  int fd = ::open(p.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ELOOP || errno == ENXIO || errno == EISDIR || errno == EACCES ||
        errno == EPERM || errno == ETXTBSY)
      return -1;
    return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(errno)));
  }
  if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_nlink != 1 ||
      opened.st_uid != ::geteuid()) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// `fd` closed after a write that went as `ok` says: true, or the error
// (errno of the write, or of the close).
Result<bool> closed_after(int fd, bool ok, const fs::path& p) {
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(err)));
  return true;
}
}  // namespace

Result<bool> overwrite_in_place(const fs::path& p, std::string_view data, mode_t mode) {
  if (data.size() > k_in_place_max) return false;
  struct stat opened {};
  auto own = open_own_plain(p, O_WRONLY, opened);
  if (!own) return own.error();
  if (*own < 0) return false;
  const int fd = *own;
  const auto len = static_cast<off_t>(data.size());
  bool ok = ::pwrite(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()) &&
            (opened.st_size <= len || ::ftruncate(fd, len) == 0) &&
            ((opened.st_mode & 07777) == (mode & 07777) || ::fchmod(fd, mode & 07777) == 0);
  return closed_after(fd, ok, p);
}

Result<bool> append_lines_to(const fs::path& p, std::span<const std::string_view> pieces) {
  // Read too: its last byte says whether its last line was ended.
  struct stat opened {};
  auto own = open_own_plain(p, O_RDWR | O_APPEND, opened);
  if (!own) return own.error();
  if (*own < 0) return false;
  const int fd = *own;
  // Unknown (a read that fails) is taken as cut short: an empty line is no line.
  char last = '\n';
  if (opened.st_size > 0 && ::pread(fd, &last, 1, opened.st_size - 1) != 1) last = 0;
  bool ok = (last == '\n' || write_all(fd, std::string_view("\n"))) && write_all(fd, pieces) && ::fdatasync(fd) == 0;
  return closed_after(fd, ok, p);
}

Status write_file_atomic(const fs::path& p, std::string_view data, mode_t mode) {
  return write_file_atomic(p, std::span<const std::string_view>(&data, 1), mode);
}

Status write_file_atomic(const fs::path& p, std::span<const std::string_view> pieces, mode_t mode) {
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  fs::path tmp;
  int fd = open_temp_beside(p, mode, tmp);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(errno)));
  if (auto s = write_fd(fd, tmp, pieces); !s) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return make_error(Errc::io, fmt::format("cannot replace '{}': {}", p.string(), errno_text(err)));
  }
  return fsync_dir(dir);
}

Status append_file(const fs::path& p, std::string_view data, mode_t mode) {
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot append to '{}': {}", p.string(), errno_text(errno)));
  return write_fd(fd, p, data);
}

Result<PrivateTempDir> PrivateTempDir::make(const fs::path& parent, std::string_view prefix) {
  std::string tmpl = (parent / (std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    return make_error(Errc::io,
                      fmt::format("cannot make a private folder under '{}': {}", parent.string(), errno_text(errno)));
  return PrivateTempDir(fs::path(tmpl));
}

PrivateTempDir::~PrivateTempDir() {
  if (m_path.empty()) return;
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

namespace {

struct TreeWalk {
  size_t left;
  const std::function<bool(std::string_view)>& enter;
  const std::function<bool(const std::string&, int, const char*, unsigned)>& file;
  const FolderListed& listed;
  bool stopped = false;

  // `fd` (owned) is the folder at root-relative `prefix` ("" or "a/b/").
  void folder(int fd, const std::string& prefix) {
    struct stat before;
    const bool listing = listed && ::fstat(fd, &before) == 0;
    std::vector<std::string> names;
    const bool whole = read_folder(
        fd, left,
        [&](int dirfd, const char* name, unsigned type) {
          if (type == DT_LNK) return true;
          if (type == DT_DIR) {
            if (!enter(name)) return true;
            int sub = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) folder(sub, prefix + name + "/");
            return !stopped;
          }
          if (!file(prefix + name, dirfd, name, type)) stopped = true;
          return !stopped;
        },
        listing ? &names : nullptr);
    if (listing && whole) listed(prefix, before, names);
  }
};

}  // namespace

bool read_folder(int fd, size_t& left, const std::function<bool(int dirfd, const char* name, unsigned type)>& each,
                 std::vector<std::string>* names) {
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  bool whole = false;
  while (left > 0) {
    const dirent* e = ::readdir(d);
    if (!e) {
      whole = true;
      break;
    }
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (names) names->emplace_back(name);
    --left;
    unsigned type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      type = IFTODT(st.st_mode);
    }
    if (!each(::dirfd(d), e->d_name, type)) break;
  }
  ::closedir(d);
  return whole;
}

void walk_tree(const std::filesystem::path& root, size_t max_entries,
               const std::function<bool(std::string_view)>& enter,
               const std::function<bool(const std::string& rel, int dirfd, const char* name, unsigned type)>& file,
               const FolderListed& listed) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // The tree sets the depth of the recursion: on a stack of its own.
  if (fd >= 0) run_with_stack(k_walk_stack, [&] { TreeWalk{max_entries, enter, file, listed}.folder(fd, ""); });
}

}  // namespace kai
