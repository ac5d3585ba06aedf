#pragma once
// Crash-test hooks. In builds configured with KAICODER_FAULTS, reaching the
// armed point kills the process with SIGKILL, so tests can prove that every
// step of an apply is recoverable; or, armed as "enospc:point:N", the Nth
// time a write point is reached it fails as a full disk would, so tests can
// prove that every write of a transaction is undone. In every other build
// these compile to nothing.

#include <string>

namespace kai {

#ifdef KAICODER_FAULTS
// "point" or "point:N" (killed the Nth time it is reached), or
// "enospc:point:N" (the Nth write at `point` fails with ENOSPC), or
// "enospc:point:N+" (the Nth and every later one: a disk that stays full).
void arm_fault(const std::string& spec);
void fault_point(const char* name);
// 0, or the errno the armed write at `name` fails with.
int fault_errno(const char* name);
#else
inline void arm_fault(const std::string&) {}
inline void fault_point(const char*) {}
inline int fault_errno(const char*) { return 0; }
#endif

}  // namespace kai
