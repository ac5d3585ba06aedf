#pragma once
// kaicoder's version, the one of project() in CMakeLists.txt. It is defined
// in one generated source file (lib/version.cpp.in), so a new version
// rebuilds that file only.

#include <string_view>

namespace kai {

std::string_view version();

}  // namespace kai
