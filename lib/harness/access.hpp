#pragma once
// What a harness may read with its own tools once kaicoder is its only
// writer: files inside root that `kaicoder read` would show, folders inside
// root, and searches (Claude Code's Grep and Glob, Gemini's glob and
// search_file_content) that can reach no secret file, nothing kaicoder keeps
// for itself and nothing outside root. Reads only; decides, never reads a
// file's bytes.

#include <filesystem>
#include <string>

#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai::harness {

// Errc::denied naming the rule: outside root (lexically or through a
// symlink), a secret or deny_read file, kaicoder's state folder, a policy
// `read` deny. `path` is absolute or relative to `cwd`.
Status check_read_path(const Workspace& ws, const std::filesystem::path& cwd, const std::string& path);

// The same for a folder whose names (not contents) are listed.
Status check_list_path(const Workspace& ws, const std::filesystem::path& cwd, const std::string& dir);

// A search below folder `dir` ("" = `cwd`) over the files `glob` names
// ("" = every file; gitignore-style, relative to `dir`). ok only when every
// file it could reach is one check_read_path allows and lies outside the
// state folder and .git/: the folder is walked (at most `max_entries`
// entries, without following symlinks; a symlink it meets must stay inside
// root and lead to nothing refused). A glob kaicoder cannot judge exactly —
// absolute, with `..`, braces or a leading `!` — is denied.
Status check_search(const Workspace& ws, const std::filesystem::path& cwd, const std::string& dir,
                    const std::string& glob, size_t max_entries = 200000);

}  // namespace kai::harness
