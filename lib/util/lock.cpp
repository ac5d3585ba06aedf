#include "lib/util/lock.hpp"

#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
  if (fd < 0) {
    const int err = errno;
    // A read-only mount, or a folder this user cannot write: nothing that
    // changes anything can run until it can; the reads still answer.
    const bool unwritable = err == EROFS || err == EACCES || err == EPERM || err == ENOSPC || err == EDQUOT;
    return make_error(Errc::io, fmt::format("cannot open lock '{}': {}", p.string(), errno_text(err)),
                      unwritable ? "nothing was changed; make the state dir writable (kaicoder doctor checks it), "
                                   "then try again; list, show and log still answer"
                                 : "");
  }
  while (::flock(fd, how) != 0) {
    if (errno == EINTR) continue;
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return make_error(Errc::conflict, fmt::format("'{}' is held by another kaicoder process", p.string()));
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

std::optional<pid_t> lock_holder(const std::filesystem::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return std::nullopt;
  // Lines look like "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a
  // lock someone waits for adds "->" after the number.
  const std::string dev = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev), st.st_ino);
  std::ifstream in("/proc/locks");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string num, type, mode, rw, where;
    long pid = 0;
    if (!(f >> num >> type) || type == "->" || !(f >> mode >> rw >> pid >> where)) continue;
    if (type == "FLOCK" && where == dev && pid > 0) return static_cast<pid_t>(pid);
  }
  return std::nullopt;
}

}  // namespace kai
