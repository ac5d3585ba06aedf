#pragma once
// [validate] (SPEC §8): glob = command pairs run at propose time against the
// content a proposal would write, never against the live file.
//
// For each glob that matches the proposal's path, the proposed bytes are
// written to a private folder (<state>/scratch/validate-XXXXXX/, mode 0700) at the
// file's root-relative path; `{file}` in the command becomes that copy's
// absolute path, shell-quoted; the command runs with /bin/sh -c from root
// (so a script named relative to root is found), with a time limit ([run]
// validate_timeout), no terminal, TMPDIR inside the private folder and —
// with [run] sandbox = "landlock" — writes confined to the private folder.
// The folder is removed afterwards.
//
// A command that does not name {file} (`cargo check`) would check the live
// tree, which does not hold the proposed content: it is not run, and its
// check says so ("not-run"), so a result never claims more than was checked.

#include <optional>
#include <string>
#include <string_view>

#include "lib/store/proposal.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

// Run every matching [validate] command against `proposed` (nullopt for a
// delete: nothing to validate). Never fails: a command that cannot run, or a
// private copy that cannot be made, is a check with status "not-run" and the
// reason as its output. Disk effects: the private folder, removed again.
Validation validate_content(const Workspace& ws, const std::string& rel_path, std::optional<std::string_view> proposed);

// `command` with every "{file}" replaced by `path`, shell-quoted.
std::string substitute_file(std::string_view command, const std::string& path);
bool names_file(std::string_view command);

}  // namespace kai
