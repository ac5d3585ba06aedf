#pragma once
// The source tree the tests were built from, for the tests that read it
// (the layout and documentation checks).

#include <filesystem>

#include <catch2/catch.hpp>

namespace kai::test {

// <src>, found from this header's own path (<src>/tests/support/source_tree.hpp).
inline std::filesystem::path source_dir() {
  std::filesystem::path self = __FILE__;
  if (self.is_relative()) self = std::filesystem::current_path() / self;
  std::filesystem::path dir = self.lexically_normal().parent_path().parent_path().parent_path();
  if (!std::filesystem::exists(dir / "lib" / "result.hpp") || !std::filesystem::exists(dir / "cmd" / "main.cpp"))
    FAIL("cannot find the source tree from " << self);
  return dir;
}

}  // namespace kai::test
