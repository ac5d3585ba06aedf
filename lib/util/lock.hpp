#pragma once
// The store lock: an exclusive flock(2) on one file. The kernel drops it when
// the holder dies, so a killed process never leaves a stuck lock behind.

#include <filesystem>
#include <optional>
#include <sys/types.h>

#include "lib/result.hpp"

namespace kai {

class FileLock {
public:
  FileLock() = default;
  FileLock(FileLock&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
  FileLock& operator=(FileLock&& o) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  // Blocks until the lock is ours.
  static Result<FileLock> acquire(const std::filesystem::path& p);
  // Errc::conflict at once when somebody else holds it.
  static Result<FileLock> try_acquire(const std::filesystem::path& p);
  void release();
  bool held() const { return m_fd >= 0; }

private:
  explicit FileLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

// The process that took the flock on `p`, from /proc/locks (Linux), so a
// person can see who holds it; nullopt when it is free or cannot be told.
// For a lock handed down to children this is the one that took it.
std::optional<pid_t> lock_holder(const std::filesystem::path& p);

}  // namespace kai
