#pragma once
// Time stamps in the two forms the changelog uses. lib/ never reads the
// clock itself: callers pass a Clock, so tests can pin time.

#include <chrono>
#include <cstdint>
#include <string>

namespace kai {

using TimePoint = std::chrono::system_clock::time_point;

class Clock {
public:
  virtual ~Clock() = default;
  virtual TimePoint now() const { return std::chrono::system_clock::now(); }
};

// 20260709T142530Z — rollback ids and backup suffixes.
std::string compact_utc(TimePoint t);
// 2026-07-09T14:25:30Z — changelog headings and metadata.
std::string iso_utc(TimePoint t);
// Parses iso_utc() output; returns false when malformed.
bool parse_iso_utc(const std::string& s, TimePoint& out);
int64_t unix_seconds(TimePoint t);
// A duration in seconds as messages show it: "600", "0.25".
std::string seconds_text(std::chrono::milliseconds d);

}  // namespace kai
