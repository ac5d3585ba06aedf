#pragma once
// What a harness may read with its own tools once kaicoder is its only
// writer: files inside root that an agent may read through any door
// (lib/reader check_agent_read), folders inside root, and searches (Claude
// Code's Grep and Glob, Gemini CLI's grep_search/search_file_content and
// glob, Codex's and Cursor's Grep and Glob) that can reach no such file.
// Reads only; decides, never reads a file's bytes.
//
// A search is judged by what the harness will really run, not by what the
// payload seems to say (man kaicoder-hook, SEARCHES, says which version of
// each harness this mirrors and where that was read):
//  - the glob is taken as every harness would take it: whole (Gemini CLI
//    gives ripgrep, git grep, grep --include or its glob library the one
//    string) and split on whitespace and commas (Claude Code splits Grep's
//    `glob` into one ripgrep --glob per piece; no piece left is no --glob,
//    so every file);
//  - each piece is matched as ripgrep matches an override glob (gitignore
//    rules, relative to ripgrep's working folder, which kaicoder cannot see:
//    so relative to every folder above the file), and as git grep and
//    `grep --include` match a pathspec (a `*` that crosses '/', a folder
//    that names everything below it, relative to the search folder); a file
//    any of these reaches must be one check_agent_read allows;
//  - a piece kaicoder cannot mirror exactly is denied: braces, brackets,
//    backslashes, a leading '!', '/' or ':' (exclusion, anchoring, git
//    pathspec magic), '..', control or non-ASCII characters;
//  - hidden files are searched (Claude Code passes --hidden) and ignore
//    files are not honoured (they only narrow); version-control folders are
//    left out only where the harness leaves them out (Claude Code's Grep:
//    --glob '!.git' and the like, unless a piece could match the folder).

#include <filesystem>
#include <string>
#include <string_view>

#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai::harness {

// Errc::denied when `path`, as a harness sent it, holds what a harness may
// rewrite before it opens the file and kaicoder would not: leading or
// trailing whitespace (Claude Code trims), a leading '~' (home), '$'
// (a variable), a backslash, a control character (NUL, newline), a name
// ending in '.' or ' ' (Windows drops them), a trailing '/' on a file, and
// non-ASCII text outside the ranges that Unicode normalisation (NFC, which
// Claude Code applies) leaves as they are. `what` names it in the message.
Status check_harness_path(std::string_view path, std::string_view what, bool folder = false);

// Errc::denied naming the rule: outside root (lexically or through a
// symlink), check_agent_read. `path` is absolute or relative to `cwd`.
Status check_read_path(const Workspace& ws, const std::filesystem::path& cwd, const std::string& path);

// The same for a folder whose names (not contents) are listed.
Status check_list_path(const Workspace& ws, const std::filesystem::path& cwd, const std::string& dir);

struct Search {
  std::string dir;         // the folder (or file) searched; "" = cwd
  std::string glob;        // the files it looks at, as the harness sent it; "" = every file
  bool skips_vcs = false;  // the harness leaves .git, .svn, .hg, .bzr, .jj and .sl out unless a glob names them
};

// ok only when every file the search could reach (see above) is one
// check_agent_read allows: the folder is walked (at most `max_entries`
// entries, without following symlinks; a symlink it meets must stay inside
// root and lead to nothing refused, and one to a folder is walked too).
Status check_search(const Workspace& ws, const std::filesystem::path& cwd, const Search& s,
                    size_t max_entries = 200000);

}  // namespace kai::harness
