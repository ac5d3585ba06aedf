#pragma once
// The one owner of a file descriptor: closed when it goes out of scope.

#include <unistd.h>
#include <utility>

namespace kai {

class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(Fd&& o) noexcept : m_fd(std::exchange(o.m_fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset(std::exchange(o.m_fd, -1));
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return m_fd; }
  void reset(int fd = -1) {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = fd;
  }

private:
  int m_fd = -1;
};

}  // namespace kai
