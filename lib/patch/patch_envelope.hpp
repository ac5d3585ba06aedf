#pragma once
// The `*** Begin Patch` envelope that Codex-style agents write, parsed into a
// Changeset (lib/patch.hpp), and its hunks applied by its own rules.
//
//   *** Begin Patch
//   *** Add File: path            then the new file's lines, each prefixed '+'
//   *** Delete File: path
//   *** Update File: path
//   *** Move to: new/path         optional, right after Update File
//   @@ class Foo                  anchors: each a line to find, in order,
//   @@   def bar():               after the previous one
//    context / -removed / +added  lines (an empty line is empty context)
//   *** End of File               optional: the hunk ends the file
//   *** End Patch
//
// The first hunk of an Update File may omit its `@@` line; blank lines
// between hunks are skipped (inside a hunk an empty line is empty context).
// An Update File with `Move to` and no hunks is a plain rename. Marker lines
// may carry surrounding whitespace, and the whole envelope may be wrapped in
// a here-document (`<<'EOF'` … `EOF`), as agents sometimes send it.
//
// Placement: the search starts at the top of the file and, for each hunk in
// turn, after the previous hunk. Each anchor is the first line at or after
// the search position equal to the anchor (exactly, else ignoring trailing
// whitespace, else ignoring surrounding whitespace); the search moves past
// it. The hunk's context and removed lines must then appear, in order and
// consecutive, at the first place at or after the search position: exactly
// (line endings aside, so a CRLF file takes an LF patch), else ignoring
// trailing whitespace; with `*** End of File`, only at the end of the file.
// A hunk whose last line is empty context that matches nowhere is tried
// without it. A hunk with no context or removed lines is inserted right
// after its last anchor, or at the end of the file without one.
// Context lines keep the file's bytes; added lines take the file's line
// ending (that of its first line; "\n" for a file without one); a file
// whose last line is changed or added ends with a line ending. Add File
// content is its lines, each ended with "\n".

#include <cstdint>
#include <string>
#include <string_view>

#include "lib/patch/patch.hpp"

namespace kai {

// True when the first non-blank line of `text` is `*** Begin Patch` (after
// a here-document opener, if any).
bool looks_like_envelope(std::string_view text);

// Errors: see parse_patch in lib/patch.hpp. Reads nothing but `text`.
Result<Changeset> parse_envelope(std::string_view text, const PatchLimits& limits = {});

// The bytes of `before` after `op`'s envelope hunks, placed as above.
// Errc::conflict naming the file and hunk that does not apply; `steps`
// counts line comparisons against limits.max_match_steps.
Result<std::string> apply_envelope_hunks(const FileOp& op, std::string_view before, uint64_t& steps,
                                         const PatchLimits& limits);

}  // namespace kai
