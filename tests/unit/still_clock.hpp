#pragma once
// A clock that says what it is told: 2026-07-09T14:15:30Z until a case moves
// it (`clock.t += 301s`).

#include <chrono>

#include "lib/util/time.hpp"

namespace kai::test {

struct StillClock : Clock {
  TimePoint t = std::chrono::system_clock::from_time_t(1783606530);  // 2026-07-09T14:15:30Z
  TimePoint now() const override { return t; }
};

}  // namespace kai::test
