#pragma once
// `kaicoder init`: a config from the documented example, the state folder,
// .gitignore lines for the state folder and backups, and the new root in the
// owner's list of trusted roots (lib/config/trust). cmd/init asks the person at the
// terminal between init_target() and init_tree().

#include <filesystem>
#include <string>
#include <vector>

#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

struct InitResult {
  std::filesystem::path root, config;
  std::vector<std::string> gitignore_added;
};

// The folder init would make a root, canonical: `--root DIR`, else the
// nearest folder upward that already has a kaicoder.toml, else the top of the
// enclosing git work tree, else the working directory. Errc::usage for a
// --root that is not a folder or a --config (init always writes
// <root>/kaicoder.toml; --config only restricts), Errc::denied for `/`,
// Errc::conflict when the folder already has a kaicoder.toml (never
// overwritten; `kaicoder trust` is the way to trust one).
Result<std::filesystem::path> init_target(const Env& env);

// Make `root` (from init_target) a trusted root: kaicoder.toml, .kaicoder/,
// .gitignore, then the owner's trusted-roots entry with `now_iso`.
// Errc::conflict when kaicoder.toml appeared meanwhile.
Result<InitResult> init_tree(const Env& env, const std::filesystem::path& root, std::string_view now_iso);

}  // namespace kai
