#pragma once
// Unified diffs as `git diff` writes them, and plain `diff -u` output, parsed
// into a Changeset (lib/patch.hpp).
//
// Git sections (`diff --git a/X b/Y`) take the extended headers `old mode`,
// `new mode`, `new file mode`, `deleted file mode`, `similarity index`,
// `dissimilarity index`, `rename from/to`, `copy from/to` and `index`, then
// `--- a/X` / `+++ b/Y` (either may be /dev/null) and `@@ -l,s +l,s @@`
// hunks with ` `, `-`, `+` lines and `\ No newline at end of file`. Names
// lose their first component, as `git apply -p1` strips it; C-quoted names
// ("a/sp\303\244ce \"x\"") are unquoted. Plain sections (`--- X` / `+++ Y`
// with no git header) lose their first component when they read a/… and b/…
// (or when only that makes the two names agree). Text outside sections (a
// mail, a commit message, `diff -u` command lines) is skipped, as git apply
// skips it.
//
// Refused: binary patches (`GIT binary patch`, `Binary files … differ`) with
// Errc::usage; symlinks (mode 120000) and submodules (160000) with
// Errc::denied; each naming the file.

#include <string_view>

#include "lib/patch/patch.hpp"

namespace kai {

// Errors: see parse_patch in lib/patch.hpp. Reads nothing but `text`.
Result<Changeset> parse_unified(std::string_view text, const PatchLimits& limits = {});

}  // namespace kai
