#pragma once
// kaicoder doctor's checks of what kaicoder keeps: the state dir and its
// lock, the key that seals the records, the changelog, backups, proposals
// and the intents of interrupted changes. lib/doctor runs them among its
// checks of the root, git, the sandbox and the install.

#include <string>
#include <utility>
#include <vector>

#include "lib/doctor/doctor.hpp"
#include "lib/util/progress.hpp"
#include "lib/config/workspace.hpp"

namespace kai::doctor {

using Checks = std::vector<Check>;

inline void add(Checks& out, std::string name, Level l, std::string detail, std::string fix = {}) {
  out.push_back({std::move(name), l, std::move(detail), std::move(fix)});
}

void check_state_dir(Workspace& ws, Checks& out);
void check_key(Workspace& ws, Checks& out);
void check_changelog(Workspace& ws, Checks& out);
// Backups named by journal records, and backup files nobody names (a walk
// over the tree, told to `progress`).
void check_backups(Workspace& ws, const Progress& progress, Checks& out);
void check_proposals(Workspace& ws, bool full, Checks& out);
void check_intents(Workspace& ws, Checks& out);

}  // namespace kai::doctor
