#pragma once
// Hostile tracked files for the import scanners (lib/risk/deps.hpp): inputs
// that made the scan super-linear before it was bounded. Used by
// bench/deps_driver.cpp (full size, timed) and tests/unit/test_deps.cpp
// (small, checked for the right edges).

#include <string>
#include <vector>

namespace kai::bench {

struct HostileFile {
  std::string path, text;
  std::vector<std::string> tracked;   // the repository's files, `path` among them
  std::vector<std::string> expected;  // the edges a correct scan finds
};

inline std::string deep_dir(int levels) {
  std::string d;
  for (int i = 0; i < levels; ++i) d += i ? "/d" : "d";
  return d;
}

// use a::{a::{a::{… b …}}}; about `bytes` long.
inline HostileFile rust_nested(size_t bytes) {
  HostileFile f{"src/main.rs", "use ", {"src/main.rs", "src/a.rs", "src/a/a.rs", "src/b.rs"}, {"src/a/a.rs"}};
  const size_t levels = bytes / 5;
  f.text.reserve(levels * 5 + 16);
  for (size_t i = 0; i < levels; ++i) f.text += "a::{";
  f.text += "b";
  f.text.append(levels, '}');
  f.text += ";\n";
  return f;
}

// use crate::a::a::a::…::a; about `bytes` long.
inline HostileFile rust_chain(size_t bytes) {
  HostileFile f{"src/main.rs", "use crate", {"src/main.rs", "src/a.rs", "src/a/a.rs"}, {"src/a/a.rs"}};
  while (f.text.size() < bytes) f.text += "::a";
  f.text += ";\n";
  return f;
}

// #include "hN.h" lines, about `bytes` of them, in a file `levels` folders
// deep; three of the names are tracked at different depths.
inline HostileFile c_includes(size_t bytes, int levels = 300) {
  const std::string dir = deep_dir(levels);
  HostileFile f{dir + "/x.c", "", {}, {}};
  f.tracked = {f.path, "include/h1.h", dir + "/h2.h", "d/d/src/h3.h"};
  f.expected = {"d/d/src/h3.h", dir + "/h2.h", "include/h1.h"};
  for (int i = 1; f.text.size() < bytes || i <= 3; ++i) f.text += "#include \"h" + std::to_string(i) + ".h\"\n";
  return f;
}

}  // namespace kai::bench
