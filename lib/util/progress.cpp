#include "lib/util/progress.hpp"

#include <fmt/format.h>

namespace kai {

bool ProgressThrottle::due(TimePoint now) {
  if (now < m_next) return false;
  m_next = now + m_interval;
  return true;
}

std::string progress_text(std::string_view what, size_t done, size_t total, size_t width) {
  std::string s = total == 0
                      ? fmt::format("{}  {}", what, done)
                      : fmt::format("{}  {}/{} ({}%)", what, done, total, done >= total ? 100 : done * 100 / total);
  if (s.size() > width) s.resize(width);
  return s;
}

}  // namespace kai
