#pragma once
// What was parsed and checked last from a file's exact bytes, kept so that
// the same bytes read again are not parsed and checked again: a record is
// loaded before a question, after the answer and as it applies, and a
// changeset's runs to hundreds of kilobytes. The file is still read each
// time; any byte changed since misses. Its owner starts a new one whenever
// what the check depends on changes (a new sealer). Safe to share between
// threads (MCP calls run side by side).
//
// Usage: LastRead<int, Parsed> last;
//        if (auto hit = last.find(id, bytes)) return *hit;
//        Parsed p = ...;               // parsed and checked
//        last.keep(id, std::move(bytes), p);

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kai {

template <typename Key, typename T>
class LastRead {
public:
  // A copy of what was kept for `key` from exactly `bytes`, or nothing.
  std::optional<T> find(const Key& key, std::string_view bytes) const {
    std::lock_guard<std::mutex> hold(m_mutex);
    if (!m_held || m_key != key || m_bytes != bytes) return std::nullopt;
    return m_value;
  }
  // `value`, parsed and checked from `bytes`, kept for `key` in place of
  // what was kept before. Only what verified is kept.
  void keep(Key key, std::string bytes, T value) {
    std::lock_guard<std::mutex> hold(m_mutex);
    m_held = true;
    m_key = std::move(key);
    m_bytes = std::move(bytes);
    m_value = std::move(value);
  }

private:
  mutable std::mutex m_mutex;
  bool m_held = false;
  Key m_key{};
  std::string m_bytes;
  T m_value{};
};

}  // namespace kai
