// timed OUT CMD [ARG...]: runs CMD and writes to OUT one line, "user system
// wall", in seconds to the microsecond: the user and system time of CMD and
// of every process it waited for (getrusage's children, as /usr/bin/time
// counts them, which prints only hundredths), and the wall time from just
// before the fork to just after the wait. Exits as CMD did (128 + the
// signal that ended it); 127 when it cannot run CMD.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>

namespace {
double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: timed OUT CMD [ARG...]\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("timed: fork");
    return 127;
  }
  if (pid == 0) {
    ::execvp(argv[2], argv + 2);
    std::perror("timed: exec");
    ::_exit(127);
  }
  int status = 0;
  rusage ru{};
  while (::wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) {
      std::perror("timed: wait");
      return 127;
    }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // wait4's rusage is the child's and its waited-for descendants'.
  FILE* out = std::fopen(argv[1], "w");
  if (!out || std::fprintf(out, "%.6f %.6f %.6f\n", seconds(ru.ru_utime), seconds(ru.ru_stime), wall) < 0 ||
      std::fclose(out) != 0) {
    std::perror("timed: write");
    return 127;
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
