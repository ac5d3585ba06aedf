#pragma once
// The review page's stylesheet and script, compiled into the binary: the
// page loads nothing from anywhere else.

#include <string_view>

namespace kai::web {

std::string_view stylesheet();
// Keeps pages current by polling /state.json (same origin). The page works
// without it: every list, view, approval and rejection is a plain link or form.
std::string_view script();

}  // namespace kai::web
