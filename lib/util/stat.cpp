#include "lib/util/stat.hpp"

#include <ctime>
#include <sys/stat.h>

namespace kai {

StatKey key_of(const struct stat& st) {
  auto ns = [](const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
  };
  return {static_cast<uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim), static_cast<uint64_t>(st.st_ino),
          static_cast<uint32_t>(st.st_mode)};
}

uint64_t now_ns() {
  timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace kai
