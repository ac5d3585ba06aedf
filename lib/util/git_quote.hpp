#pragma once
// git's C-style quoting of paths (core.quotePath), as diff headers carry
// them: a path holding a control character, '"', '\\' or a non-ASCII byte
// is written between double quotes with C escapes and octal bytes
// ("sp\303\244ce \"x\""); any other path is written as it is. lib/diff
// quotes, lib/patch/patch_unified reads them back.

#include <string>
#include <string_view>

#include "lib/result.hpp"

namespace kai {

// `prefix` + `path` ("a/", "b/" or ""), quoted when git would quote it.
std::string quote_c_style(std::string_view prefix, std::string_view path);

// `s` unquoted (the opening '"' at s[0]); `end` is set past the closing
// quote. Errc::usage when the quoting is malformed: no closing quote, an
// unknown escape, an octal byte above \377.
Result<std::string> unquote_c_style(std::string_view s, size_t& end);

}  // namespace kai
