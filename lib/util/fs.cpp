#include "lib/util/fs.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
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

Result<std::string> read_all(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(Errc::io, fmt::format("cannot read: {}", errno_text(errno)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> read_file(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    Errc c = errno == ENOENT ? Errc::not_found : Errc::io;
    return make_error(c, fmt::format("cannot read '{}': {}", p.string(), errno_text(errno)));
  }
  auto r = read_all(fd);
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

Status fsync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot open folder '{}': {}", dir.string(), errno_text(errno)));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return make_error(Errc::io, fmt::format("cannot sync folder '{}': {}", dir.string(), errno_text(err)));
  return ok_status();
}

Status make_dirs(const fs::path& dir, mode_t mode) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(Errc::io, fmt::format("cannot create folder '{}': {}", dir.string(), ec.message()));
  ::chmod(dir.c_str(), mode);
  return ok_status();
}

static Status write_fd(int fd, const fs::path& p, std::string_view data) {
  if (!write_all(fd, data) || ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(err)));
  }
  if (::close(fd) != 0) return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(errno)));
  return ok_status();
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

Status write_file_atomic(const fs::path& p, std::string_view data, mode_t mode) {
  fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  fs::path tmp;
  int fd = -1;
  for (int i = 0; i < 16 && fd < 0; ++i) {
    tmp = dir / fmt::format(".{}.kaicoder-tmp-{:x}", p.filename().string(), rng());
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot write '{}': {}", p.string(), errno_text(errno)));
  ::fchmod(fd, mode);
  if (auto s = write_fd(fd, tmp, data); !s) {
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
    return make_error(Errc::io, fmt::format("cannot make a private folder under '{}': {}", parent.string(), errno_text(errno)));
  return PrivateTempDir(fs::path(tmpl));
}

PrivateTempDir::~PrivateTempDir() {
  if (m_path.empty()) return;
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

}  // namespace kai
