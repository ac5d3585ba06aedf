#include "lib/util/time.hpp"

#include <cstdio>
#include <ctime>

namespace kai {

static std::tm utc_tm(TimePoint t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm;
}

std::string compact_utc(TimePoint t) {
  std::tm tm = utc_tm(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string iso_utc(TimePoint t) {
  std::tm tm = utc_tm(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool parse_iso_utc(const std::string& s, TimePoint& out) {
  std::tm tm{};
  char z = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec, &z) != 7 ||
      z != 'Z')
    return false;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  out = std::chrono::system_clock::from_time_t(timegm(&tm));
  return true;
}

int64_t unix_seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string seconds_text(std::chrono::milliseconds d) {
  const auto ms = d.count();
  std::string out = std::to_string(ms / 1000);
  if (long long frac = ms % 1000; frac != 0) {
    char digits[4] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                      static_cast<char>('0' + frac % 10), '\0'};
    std::string f = digits;
    while (f.back() == '0') f.pop_back();
    out += '.' + f;
  }
  return out;
}

}  // namespace kai
