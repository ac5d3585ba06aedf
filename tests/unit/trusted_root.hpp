#pragma once
// Unit tests open a Workspace the way kaicoder does, so its root must be one
// the owner trusted: this records `root` (with its kaicoder.toml, written
// empty when there is none) in the owner folder `owner_dir`, exactly as
// `kaicoder init` and `kaicoder trust` do after the owner said yes.

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "lib/config/trust.hpp"
#include "lib/util/fs.hpp"

namespace kai::test {

inline void trust_for_test(const std::filesystem::path& root, const std::filesystem::path& owner_dir) {
  const auto cfg = root / "kaicoder.toml";
  if (!std::filesystem::exists(cfg)) std::ofstream(cfg).flush();
  auto bytes = kai::read_file(cfg);
  REQUIRE(bytes);
  REQUIRE(kai::TrustList(owner_dir).record(std::filesystem::canonical(root), *bytes, "2026-07-09T14:15:30Z"));
}

}  // namespace kai::test
