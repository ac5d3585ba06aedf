#pragma once
// Unified diffs of a proposal's before/after bytes. Line diffs come from
// libgit2's xdiff (git_patch_from_buffers, Myers, never GIT_DIFF_MINIMAL):
// they match `git diff` and `git apply --check` accepts them. dtl is used only
// for intra-line highlighting, where each input is one line.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"
#include "lib/util/progress.hpp"

namespace kai {

struct DiffOptions {
  unsigned context = 3;
  // Past these a person cannot review the whole diff: `text` holds the first
  // hunks only and `truncated` is set (the caller says how to see all).
  size_t max_changed_lines = 2000;
  size_t max_line_length = 10000;
  bool full = false;  // ignore the limits above
};

// One file's share of a diff of many files (a changeset): which change it
// is, where its text lies in FileDiff::text, and how much of it is shown.
struct DiffPart {
  size_t change = 0;              // index into the proposal's changes
  size_t offset = 0, length = 0;  // its text within FileDiff::text (empty when not shown)
  bool shown = true;              // false: past the display limit, none of it is in the text
  bool truncated = false;         // only its first hunks are in the text
  size_t added = 0, removed = 0, hunks = 0;
  size_t shown_changed = 0, shown_hunks = 0;
};

struct FileDiff {
  bool binary = false;     // never diffed as text: `text` says so with sizes and blob ids
  bool truncated = false;  // `text` holds only the first hunks
  std::string text;        // git-style unified diff: diff --git / --- a/ / +++ b/ / @@ hunks
  size_t added = 0;
  size_t removed = 0;
  size_t hunks = 0;
  // What `text` shows: all of added + removed and of hunks unless truncated.
  size_t shown_changed = 0, shown_hunks = 0;
  size_t old_size = 0, new_size = 0;
  std::string old_blob, new_blob;  // blob ids; empty when that side is absent
  // A changeset's diff: one part per file, in order (empty for one file).
  std::vector<DiffPart> parts;
};

// Diff `before` → `after` of root-relative `rel_path`. nullopt on a side
// means the file does not exist there (creation or deletion): headers use
// /dev/null and "new file mode"/"deleted file mode" so `git apply` accepts
// it. `mode` is the file's permission bits for those headers. CRLF and a
// missing final newline ("\ No newline at end of file") are preserved.
// Equal sides give an empty `text` and zero counts. Binary sides give one
// line: "Binary file P differs|created|deleted (sizes, blob ids)".
// When `truncated`, `text` ends after the first hunks (about
// max_changed_lines/4 changed lines, at least part of one hunk); a hunk cut
// short gets a header recounted for the lines shown, and lines longer than
// max_line_length are shortened with a "[… N more bytes]" note, so such a
// text is for reading only. Errors: Errc::io when libgit2 fails. No disk
// access.
Result<FileDiff> diff_buffers(std::string_view rel_path, std::optional<std::string_view> before,
                              std::optional<std::string_view> after, unsigned mode, const DiffOptions& opts);

// Byte ranges [begin, end) that differ between one removed and one added
// line (dtl on words, whitespace runs and punctuation runs; each changed
// stretch is then narrowed to the bytes that differ when the two sides share
// most of it), for highlighting. Lines over 10,000 bytes are one span each.
struct Span {
  size_t begin = 0, end = 0;
};
struct IntraLine {
  std::vector<Span> removed;  // in old_line
  std::vector<Span> added;    // in new_line
};
IntraLine intraline(std::string_view old_line, std::string_view new_line);

// For each line of `diff_text` (split at "\n"), the spans colorize_diff
// reverses, indexing the line's text after its +/-; empty for most lines.
// For a door that draws the diff its own way (the review page).
std::vector<std::vector<Span>> intraline_spans(std::string_view diff_text);

// The diff text with ANSI colours: headers bold, hunks cyan, -/+ lines red/green,
// and within paired -/+ lines the changed spans in reverse video. Only
// escape sequences are added: stripping them gives `diff_text` back. Escape
// sequences already inside the text (from file contents) pass through as
// they are; making them visible is the caller's job. Highlighting a large
// diff takes a while; `progress` (may be empty) hears how many lines are done.
std::string colorize_diff(std::string_view diff_text, const Progress& progress = {});

}  // namespace kai
