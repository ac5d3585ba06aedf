#include "lib/util/lock.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/util/fs.hpp"

namespace kai {

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    release();
    m_fd = o.m_fd;
    o.m_fd = -1;
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (m_fd >= 0) {
    ::flock(m_fd, LOCK_UN);
    ::close(m_fd);
    m_fd = -1;
  }
}

static Result<FileLock> lock_with(const std::filesystem::path& p, int how, FileLock (*make)(int)) {
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot open lock '{}': {}", p.string(), errno_text(errno)));
  while (::flock(fd, how) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return make_error(Errc::conflict, fmt::format("'{}' is held by another kaicoder process", p.string()));
    return make_error(Errc::io, fmt::format("cannot lock '{}': {}", p.string(), errno_text(err)));
  }
  return make(fd);
}

Result<FileLock> FileLock::acquire(const std::filesystem::path& p) {
  return lock_with(p, LOCK_EX, [](int fd) { return FileLock(fd); });
}

Result<FileLock> FileLock::try_acquire(const std::filesystem::path& p) {
  return lock_with(p, LOCK_EX | LOCK_NB, [](int fd) { return FileLock(fd); });
}

}  // namespace kai
