#pragma once
// The small string helpers every room uses, once. Prefixes and suffixes are
// std::string_view's own starts_with and ends_with.

#include <string>
#include <string_view>
#include <vector>

namespace kai {

// `s` without the characters of `chars` at its start, its end, or both.
std::string_view trim_left(std::string_view s, std::string_view chars = " \t");
std::string_view trim_right(std::string_view s, std::string_view chars = " \t");
std::string_view trim(std::string_view s, std::string_view chars = " \t");

// The pieces of `s` between each `sep`, empty ones included: "a//b" on "/"
// is "a", "", "b"; "" is one empty piece.
std::vector<std::string_view> split(std::string_view s, std::string_view sep);

// `s` with ASCII letters lowered; other bytes (UTF-8 included) unchanged.
std::string ascii_lower(std::string_view s);

// A folder of generated or downloaded files by its name: node_modules,
// target, dist, build. kaicoder never writes under one (lib/paths), a run
// may (lib/gate/runs), the walks over the tree pass them by (lib/paths
// walk_skips), and the shell checker counts them among the folders a build
// recreates.
bool is_generated_dir(std::string_view name);

}  // namespace kai
