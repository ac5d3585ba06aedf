#pragma once
// The changeset model: what a multi-file patch asks for, parsed from a
// unified diff (lib/patch/patch_unified.hpp) or a `*** Begin Patch` envelope
// (lib/patch/patch_envelope.hpp), and the pure applier that computes the resulting
// bytes and mode of every file from the current ones. Nothing here touches
// the disk: the caller reads files through a callback, confines every path
// (FileOp::path, FileOp::to) with lib/paths.hpp, and writes the results.
//
//   Result<Changeset> cs = parse_patch(text, limits);   // either format
//   Status st = apply_changeset(*cs, read_current, limits);
//   for (const FileOp& op : cs->ops) ... op.before, op.after, op.after_mode
//
// Paths in a parsed changeset are root-relative, '/'-separated and canonical
// (no empty, '.' or '..' component, not absolute), so one file has one
// spelling and "touched twice" is a string comparison.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

enum class FileOpKind {
  edit,    // hunks on an existing file (and perhaps a mode change)
  write,   // `content` replaces an existing file (not produced by the parsers)
  create,  // a new file holding `content`
  remove,  // delete an existing file ("delete" in messages)
  rename,  // `path` moves to `to`, perhaps with hunks and a mode change
  copy,    // a new file `to` from the current bytes of `path` (left as it is), perhaps with hunks
  mode,    // only the mode changes
};
std::string_view op_kind_name(FileOpKind k);

enum class PatchFormat { unified, envelope };

struct HunkLine {
  char tag = ' ';    // ' ' context, '-' removed, '+' added
  std::string text;  // unified: the line with its ending ("\n", "\r\n", or none before
                     // "\ No newline at end of file"); envelope: without its ending
};

struct Hunk {
  // Unified: the stated ranges of `@@ -old_start,old_count +new_start,new_count @@`.
  size_t old_start = 0, old_count = 0, new_start = 0, new_count = 0;
  // Envelope: the `@@ text` anchors before the lines, in order; `*** End of File`.
  std::vector<std::string> anchors;
  bool at_eof = false;
  std::vector<HunkLine> lines;
  size_t patch_line = 0;  // 1-based line of the patch where the hunk starts
  std::string header;     // how messages name it: "@@ -3,4 +3,5 @@" or "@@ anchor"
};

// Modes are git's: 0100644 (regular) or 0100755 (executable). The parsers
// refuse symlinks (0120000) and submodules (0160000).
inline constexpr unsigned k_mode_regular = 0100644;
inline constexpr unsigned k_mode_executable = 0100755;

struct FileOp {
  FileOpKind kind = FileOpKind::edit;
  PatchFormat format = PatchFormat::unified;
  std::string path;                  // the file read (the one created, for create)
  std::string to;                    // rename, copy: the new path
  std::optional<unsigned> old_mode;  // as the patch states it, when it does
  std::optional<unsigned> new_mode;  // set: the file ends with this mode
  std::vector<Hunk> hunks;           // edit, rename, copy; unified remove: must empty the file
  std::string content;               // create, write
  size_t patch_line = 0;             // where the file's section starts in the patch

  // Filled by apply_changeset.
  std::optional<std::string> before;  // current bytes of `path`; nullopt for create
  unsigned before_mode = 0;           // permission bits of `path` (0 for create)
  std::optional<std::string> after;   // bytes of the result (at `to` for rename and copy); nullopt for remove
  unsigned after_mode = 0;            // permission bits of the result: a create gets 0644 or 0755; a
                                      // new executable mode adds x where r is set (0644 -> 0755, 0600 -> 0700),
                                      // a new regular mode clears every x; otherwise before_mode

  // Where the result lives: `to` for rename and copy, else `path`.
  const std::string& target() const { return (kind == FileOpKind::rename || kind == FileOpKind::copy) ? to : path; }
};

struct Changeset {
  PatchFormat format = PatchFormat::unified;
  std::vector<FileOp> ops;  // in patch order
};

struct PatchLimits {
  size_t max_patch_bytes = size_t{64} << 20;
  size_t max_files = 10000;
  size_t max_line_bytes = size_t{1} << 20;  // one line of the patch
  size_t max_path_bytes = 4095;
  // Line comparisons spent placing hunks, for the whole changeset: hostile
  // input (thousands of equal lines, a hunk that matches nowhere) is
  // refused instead of taking quadratic time.
  uint64_t max_match_steps = uint64_t{1} << 26;
};

// Parse either format: an envelope when the first non-blank line is
// `*** Begin Patch`, else a unified diff. Errors: Errc::usage for a patch
// that is malformed, too large, empty, or in a form kaicoder does not take
// (binary patches), naming the patch line and the file; Errc::denied for a
// symlink or submodule, or a path that is absolute or has a '..' component.
Result<Changeset> parse_patch(std::string_view text, const PatchLimits& limits = {});

// What a path holds now: its bytes and permission bits (st_mode & 07777),
// or nullopt when nothing is there. An error stops the apply and is returned.
struct CurrentFile {
  std::string bytes;
  unsigned mode = 0644;
};
using ReadCurrent = std::function<Result<std::optional<CurrentFile>>(const std::string& path)>;

// Compute every op's before/after bytes and modes from `read` (called once
// per path the changeset reads or creates). Unified hunks are placed as
// `git apply` places them: every context and removed line must match
// byte for byte (CR and all), no fuzz, each hunk searched outward from its
// stated line (nearest first, later lines first on a tie), in order after the
// previous one; a hunk starting at line 1 must match at the start, one
// without trailing context at the end. Envelope hunks follow the envelope's
// rules (see lib/patch/patch_envelope.hpp). Errors: Errc::conflict naming the file
// and the hunk that does not apply, a path touched twice, a create or the
// target of a rename or copy that already exists, an edit, delete, rename or
// mode change of a missing file, a unified delete whose hunks do not empty
// the file, and placement that costs more than limits.max_match_steps. A
// mode the patch states for the old side is not checked (git apply only
// warns); a new mode sets or clears the executable bits (see after_mode). A
// copy reads the current bytes of its source, as git apply does, even when
// another op of the same changeset changes that source.
Status apply_changeset(Changeset& cs, const ReadCurrent& read, const PatchLimits& limits = {});

// Helpers shared by the two parsers.
namespace patch_detail {

// One line of `text` starting at `pos`, with its "\n" (none at the end).
std::string_view next_line(std::string_view text, size_t& pos);

// Refuse a path that is not canonical and root-relative (see above), naming
// it and the patch line.
Status check_patch_path(std::string_view path, size_t line, const PatchLimits& limits);

// A message-safe rendering of a path: hidden characters made visible.
std::string shown(std::string_view path);

}  // namespace patch_detail

}  // namespace kai
