#pragma once
// Progress of long work. lib/ reports it through a callback; cmd/ turns the
// calls into one updating line on a terminal (cmd/progress.hpp).
//
//   void scan(..., const Progress& progress) {
//     for (size_t i = 0; i < n; ++i) {
//       if (progress) progress("scanning", i, n);  // total 0 = not known
//       ...
//     }
//     if (progress) progress("", 0, 0);  // done: the line is cleared
//   }

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace kai {

using Progress = std::function<void(std::string_view what, size_t done, size_t total)>;

// When an update is worth drawing: nothing before `delay` has passed since
// `start` (work that ends quickly shows no line at all), then at most one
// update per `interval`. It never reads the clock; the caller passes it in.
class ProgressThrottle {
public:
  using TimePoint = std::chrono::steady_clock::time_point;
  explicit ProgressThrottle(TimePoint start, std::chrono::milliseconds delay = std::chrono::milliseconds(250),
                            std::chrono::milliseconds interval = std::chrono::milliseconds(100))
      : m_next(start + delay), m_interval(interval) {}
  // True (and the next slot moves on) when an update at `now` should be drawn.
  bool due(TimePoint now);

private:
  TimePoint m_next;
  std::chrono::milliseconds m_interval;
};

// "checking backups  120/400 (30%)", or "looking for files  2048" when the
// total is not known, cut to at most `width` bytes.
std::string progress_text(std::string_view what, size_t done, size_t total, size_t width);

}  // namespace kai
