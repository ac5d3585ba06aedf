#pragma once
// What the snapshot tests read from a diff between two snapshots.

#include <string>
#include <vector>

#include "lib/run/snapshot.hpp"

namespace kai::test {

// The paths of `d`, in order.
inline std::vector<std::string> paths_of(const std::vector<kai::TreeChange>& d) {
  std::vector<std::string> out;
  for (const auto& c : d) out.push_back(c.rel);
  return out;
}

}  // namespace kai::test
