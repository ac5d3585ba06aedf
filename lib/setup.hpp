#pragma once
// `kaicoder init`: a config from the documented example, the state folder,
// and .gitignore lines for the state folder and backups.

#include <filesystem>
#include <string>
#include <vector>

#include "lib/result.hpp"
#include "lib/workspace.hpp"

namespace kai {

struct InitResult {
  std::filesystem::path root, config;
  std::vector<std::string> gitignore_added;
};

// Errc::conflict when a config already exists at the target (never overwritten).
Result<InitResult> init_tree(const Env& env);

}  // namespace kai
