#include "lib/util/fault.hpp"

#ifdef KAICODER_FAULTS
#include <csignal>
#include <cstdlib>

namespace kai {
namespace {
std::string g_point;
int g_countdown = 1;
}  // namespace

void arm_fault(const std::string& spec) {
  auto colon = spec.find(':');
  g_point = spec.substr(0, colon);
  g_countdown = colon == std::string::npos ? 1 : std::atoi(spec.c_str() + colon + 1);
}

void fault_point(const char* name) {
  if (!g_point.empty() && g_point == name && --g_countdown == 0) std::raise(SIGKILL);
}

}  // namespace kai
#endif
