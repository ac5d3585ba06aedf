#include "lib/util/fault.hpp"

#ifdef KAICODER_FAULTS
#include <cerrno>
#include <csignal>
#include <cstdlib>

namespace kai {
namespace {
std::string g_point;
int g_countdown = 1;
bool g_enospc = false;
bool g_from_then_on = false;  // "enospc:point:N+": the Nth write and every later one
}  // namespace

void arm_fault(const std::string& spec) {
  std::string rest = spec;
  g_enospc = rest.rfind("enospc:", 0) == 0;
  if (g_enospc) rest = rest.substr(7);
  g_from_then_on = g_enospc && !rest.empty() && rest.back() == '+';
  if (g_from_then_on) rest.pop_back();
  auto colon = rest.find(':');
  g_point = rest.substr(0, colon);
  g_countdown = colon == std::string::npos ? 1 : std::atoi(rest.c_str() + colon + 1);
}

void fault_point(const char* name) {
  if (!g_enospc && !g_point.empty() && g_point == name && --g_countdown == 0) std::raise(SIGKILL);
}

int fault_errno(const char* name) {
  if (!g_enospc || g_point.empty() || g_point != name) return 0;
  --g_countdown;
  if (g_countdown == 0 || (g_from_then_on && g_countdown < 0)) return ENOSPC;
  return 0;
}

}  // namespace kai
#endif
