#pragma once
// Crash-test hooks. In builds configured with KAICODER_FAULTS, reaching the
// armed point kills the process with SIGKILL, so tests can prove that every
// step of an apply is recoverable. In every other build these compile to nothing.

#include <string>

namespace kai {

#ifdef KAICODER_FAULTS
void arm_fault(const std::string& spec);  // "point" or "point:N" (the Nth time it is reached)
void fault_point(const char* name);
#else
inline void arm_fault(const std::string&) {}
inline void fault_point(const char*) {}
#endif

}  // namespace kai
