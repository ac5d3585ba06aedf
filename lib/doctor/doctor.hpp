#pragma once
// `kaicoder doctor`: every check a person needs to trust the store, each
// with a verdict and, when not ok, what to do. Doctor never refuses to run:
// a broken config, a corrupt record or a half-done apply is something to
// report, not a reason to fail closed.

#include <filesystem>
#include <string>
#include <vector>

#include "lib/util/progress.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

enum class Level { ok, warn, fail };
std::string_view to_string(Level l);

struct Check {
  std::string name;
  Level level = Level::ok;
  std::string detail;  // one line
  std::string fix;     // what to do, for warn and fail
};

struct DoctorInput {
  Env env;
  const Clock* clock = nullptr;
  std::vector<std::filesystem::path> man_dirs;          // where kaicoder.1 may be installed
  std::vector<std::filesystem::path> completion_files;  // installed completion files to look for
  Progress progress;  // told about the backup scan, which walks the whole tree; may be empty
  // Read every record. Otherwise an archive bucket nothing touched since
  // doctor last read it whole, and found in order, is not read again
  // (lib/store/store.hpp Store::audit, Depth::changed).
  bool full = false;
};

// Runs every check. Never fails; problems are Checks with Level::fail.
std::vector<Check> run_doctor(const DoctorInput& in);

}  // namespace kai
