#pragma once
// Which files of the tree a command runs as code, read from the leaves the
// shell checker found: a script named by its path (`./build.sh`,
// `tools/run`), a script handed to an interpreter (`python3 tools/gen.py`,
// `bash x.sh`, `node a.js`, `. env.sh`), a module run with `python -m`, and
// the makefile `make` reads (`-f`, `-C` followed). A policy rule bound to
// these files' blob ids (SPEC §4 "always allow"; lib/policy) stops matching
// once one of them changes, so an agent cannot rewrite a script it was
// allowed to run and run it unasked. Commands that run the tree's code in
// other ways (`cargo test`, `npm test`, a file a script sources) name no
// file here: a rule for them binds none.

#include <string>
#include <vector>

#include "lib/config/config.hpp"
#include "lib/shell/shell.hpp"

namespace kai {

class Workspace;

// The root-relative files `leaves` run as code when started in root-relative
// folder `cwd_rel`, sorted by path, each with its blob id now ("" when it is
// missing, not a regular file or unreadable). Paths outside root are not
// the tree's and are left out.
FileBlobs tree_scripts(const Workspace& ws, const std::vector<Leaf>& leaves, const std::string& cwd_rel);

}  // namespace kai
