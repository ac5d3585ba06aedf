#include "lib/diff/diff.hpp"

#include <git2.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lib/util/git.hpp"
#include "lib/util/git_quote.hpp"

namespace kai {
namespace {

// git calls a buffer binary when its first 8000 bytes hold a NUL (xdiff's
// buffer_is_binary). Deciding it the same way keeps us in step with `git diff`.
constexpr size_t k_binary_probe = 8000;

bool is_binary(std::optional<std::string_view> side) {
  return side && side->substr(0, k_binary_probe).find('\0') != std::string_view::npos;
}

std::string short_id(const std::string& blob) { return blob.substr(0, 7); }

// Only the executable bit survives into a git tree entry.
unsigned git_file_mode(unsigned mode) { return (mode & 0111) != 0 ? 0100755 : 0100644; }

void append_headers(std::string& out, std::string_view path, const FileDiff& d, unsigned mode) {
  const bool has_old = !d.old_blob.empty(), has_new = !d.new_blob.empty();
  const std::string a = quote_c_style("a/", path), b = quote_c_style("b/", path);
  auto it = std::back_inserter(out);
  fmt::format_to(it, "diff --git {} {}\n", a, b);
  if (!has_old)
    fmt::format_to(it, "new file mode {:o}\nindex 0000000..{}\n", git_file_mode(mode), short_id(d.new_blob));
  else if (!has_new)
    fmt::format_to(it, "deleted file mode {:o}\nindex {}..0000000\n", git_file_mode(mode), short_id(d.old_blob));
  else
    fmt::format_to(it, "index {}..{} {:o}\n", short_id(d.old_blob), short_id(d.new_blob), git_file_mode(mode));
  // Creating or deleting an empty file has no hunks, and git then writes no
  // ---/+++ lines either; `git apply` expects exactly that.
  if (d.hunks == 0) return;
  // A trailing tab after a name with spaces lets patch(1) find where it ends.
  const char* tab = path.find(' ') != std::string_view::npos ? "\t" : "";
  fmt::format_to(it, "--- {}{}\n", has_old ? a : "/dev/null", has_old ? tab : "");
  fmt::format_to(it, "+++ {}{}\n", has_new ? b : "/dev/null", has_new ? tab : "");
}

std::string binary_summary(std::string_view path, const FileDiff& d) {
  const std::string name = quote_c_style("", path);
  if (d.old_blob.empty())
    return fmt::format("Binary file {} created ({} bytes, blob {})\n", name, d.new_size, short_id(d.new_blob));
  if (d.new_blob.empty())
    return fmt::format("Binary file {} deleted ({} bytes, blob {})\n", name, d.old_size, short_id(d.old_blob));
  return fmt::format("Binary file {} differs ({} → {} bytes, blob {} → {})\n", name, d.old_size, d.new_size,
                     short_id(d.old_blob), short_id(d.new_blob));
}

using PatchPtr = GitOwned<git_patch, git_patch_free>;

Result<PatchPtr> make_patch(std::string_view path, std::optional<std::string_view> before,
                            std::optional<std::string_view> after, unsigned context) {
  git_diff_options o;
  KAI_TRY(git_check(git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION), "initialising diff options"));
  // Binary was already decided above, as git decides it; FORCE_TEXT stops
  // libgit2 from deciding again. The indent heuristic is git's default since
  // 2.14: with it hunks slide to the same lines `git diff` puts them on.
  o.flags = GIT_DIFF_FORCE_TEXT | GIT_DIFF_INDENT_HEURISTIC;
  o.context_lines = static_cast<uint32_t>(context);
  o.interhunk_lines = 0;
  const std::string p(path);
  git_patch* raw = nullptr;
  const int rc = git_patch_from_buffers(&raw, before ? before->data() : nullptr, before ? before->size() : 0, p.c_str(),
                                        after ? after->data() : nullptr, after ? after->size() : 0, p.c_str(), &o);
  PatchPtr patch(raw);
  KAI_TRY(git_check(rc, "diffing"));
  return patch;
}

// The hex id libgit2 found for `bytes`, or their hash when it left none.
std::string id_or_hash(const git_oid& id, std::string_view bytes) {
  if (git_oid_is_zero(&id)) return blob_id(bytes);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &id);
  return hex;
}

bool is_body_line(char origin) {
  return origin == GIT_DIFF_LINE_CONTEXT || origin == GIT_DIFF_LINE_ADDITION || origin == GIT_DIFF_LINE_DELETION;
}
bool is_changed(char origin) { return origin == GIT_DIFF_LINE_ADDITION || origin == GIT_DIFF_LINE_DELETION; }

// A line's text without its "\n" or "\r\n".
std::string_view line_body(const git_diff_line& line) {
  std::string_view s(line.content, line.content_len);
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

// Everything about the whole patch, read in one pass over libgit2's line
// records (pointers into the inputs: nothing is copied).
struct Scan {
  size_t added = 0, removed = 0, hunks = 0;
  size_t longest = 0;     // longest line shown, without its line ending
  size_t text_bytes = 0;  // size of the hunks when rendered in full
};

Result<Scan> scan_patch(git_patch* patch) {
  Scan s;
  s.hunks = git_patch_num_hunks(patch);
  for (size_t h = 0; h < s.hunks; ++h) {
    const git_diff_hunk* hunk = nullptr;
    size_t lines = 0;
    KAI_TRY(git_check(git_patch_get_hunk(&hunk, &lines, patch, h), "reading a hunk"));
    s.text_bytes += hunk->header_len + 1;
    for (size_t i = 0; i < lines; ++i) {
      const git_diff_line* line = nullptr;
      KAI_TRY(git_check(git_patch_get_line_in_hunk(&line, patch, h, i), "reading a diff line"));
      s.text_bytes += line->content_len + 1;
      if (line->origin == GIT_DIFF_LINE_ADDITION) ++s.added;
      if (line->origin == GIT_DIFF_LINE_DELETION) ++s.removed;
      if (is_body_line(line->origin)) s.longest = std::max(s.longest, line_body(*line).size());
    }
  }
  return s;
}

// How much of the patch goes into `text`.
struct Window {
  size_t budget = SIZE_MAX;  // changed lines
  size_t clip = 0;           // shorten lines longer than this; 0 = never
  size_t context = 3;        // unchanged lines after a shortened hunk
};

// Cut at most `n` bytes off the front of `s` without splitting a UTF-8 character.
size_t utf8_floor(std::string_view s, size_t n) {
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

void append_line(std::string& out, const git_diff_line& line, size_t clip) {
  // The "\ No newline at end of file" records carry their own leading "\n".
  if (is_body_line(line.origin)) out += line.origin;
  const std::string_view content(line.content, line.content_len);
  const std::string_view body = line_body(line);
  if (clip == 0 || body.size() <= clip || !is_body_line(line.origin)) {
    out.append(content);
    return;
  }
  // Only in a truncated diff, which is for reading, not for applying: a
  // minified megabyte line would bury everything else on the screen.
  const size_t keep = utf8_floor(body, clip);
  out.append(body.substr(0, keep));
  fmt::format_to(std::back_inserter(out), " [… {} more bytes]", body.size() - keep);
  if (content.back() == '\n') out += '\n';
}

Status append_lines(std::string& out, git_patch* patch, size_t h, size_t count, size_t clip) {
  for (size_t i = 0; i < count; ++i) {
    const git_diff_line* line = nullptr;
    KAI_TRY(git_check(git_patch_get_line_in_hunk(&line, patch, h, i), "reading a diff line"));
    append_line(out, *line, clip);
  }
  return ok_status();
}

void append_hunk_header(std::string& out, const git_diff_hunk& hunk) {
  out.append(hunk.header, hunk.header_len);
  // libgit2 cuts a long function-context header at 127 bytes, newline included.
  if (hunk.header_len == 0 || hunk.header[hunk.header_len - 1] != '\n') out += '\n';
}

Result<size_t> count_changed(git_patch* patch, size_t h, size_t lines) {
  size_t n = 0;
  for (size_t i = 0; i < lines; ++i) {
    const git_diff_line* line = nullptr;
    KAI_TRY(git_check(git_patch_get_line_in_hunk(&line, patch, h, i), "reading a diff line"));
    if (is_changed(line->origin)) ++n;
  }
  return n;
}

// git's range syntax: ",1" is left out, and an empty range names the line
// before it.
std::string hunk_range(int start, size_t count, int whole_count) {
  if (count == 1) return std::to_string(start);
  return fmt::format("{},{}", count == 0 && whole_count != 0 ? start - 1 : start, count);
}

// Where a shortened hunk ends: its first `keep` lines, which hold `changed`
// changed lines and span old_n/new_n lines of the two sides.
struct Cut {
  size_t keep = 0, changed = 0, old_n = 0, new_n = 0;
  void take(char origin) {
    ++keep;
    if (!is_body_line(origin)) return;
    if (origin != GIT_DIFF_LINE_ADDITION) ++old_n;
    if (origin != GIT_DIFF_LINE_DELETION) ++new_n;
    if (is_changed(origin)) ++changed;
  }
};

// How much of a hunk to show with at most `allow` changed lines. Ending
// between two runs of changes keeps a removal beside its replacement, so
// that wins when it shows at least half of what is allowed. Up to `context`
// unchanged lines follow, as at the end of any hunk; `git apply` would
// otherwise pin a hunk without trailing context to the end of the file.
Result<Cut> find_cut(git_patch* patch, size_t h, size_t lines, size_t allow, size_t context) {
  Cut at, between;
  bool in_run = false;
  const git_diff_line* line = nullptr;
  for (; at.keep < lines; at.take(line->origin)) {
    KAI_TRY(git_check(git_patch_get_line_in_hunk(&line, patch, h, at.keep), "reading a diff line"));
    if (line->origin == GIT_DIFF_LINE_CONTEXT && in_run) between = at;
    if (line->origin == GIT_DIFF_LINE_CONTEXT) in_run = false;
    if (is_changed(line->origin) && at.changed == allow) break;
    if (is_changed(line->origin)) in_run = true;
  }
  Cut cut = between.changed * 2 >= allow ? between : at;
  for (size_t shown = 0; cut.keep < lines; cut.take(line->origin)) {
    KAI_TRY(git_check(git_patch_get_line_in_hunk(&line, patch, h, cut.keep), "reading a diff line"));
    if (is_changed(line->origin) || (line->origin == GIT_DIFF_LINE_CONTEXT && shown++ == context)) break;
  }
  return cut;
}

// The first lines of a hunk too big for the window, under a header recounted
// for them, so what is shown is itself a well-formed hunk.
Result<size_t> append_hunk_prefix(std::string& out, git_patch* patch, size_t h, const git_diff_hunk& hunk, size_t lines,
                                  size_t allow, const Window& w) {
  Result<Cut> cut = find_cut(patch, h, lines, allow, w.context);
  if (!cut) return cut.error();
  const std::string_view header(hunk.header, hunk.header_len);
  const size_t close = header.find("@@", 2);
  const std::string_view rest = close == std::string_view::npos ? "\n" : header.substr(close + 2);
  fmt::format_to(std::back_inserter(out), "@@ -{} +{} @@{}", hunk_range(hunk.old_start, cut->old_n, hunk.old_lines),
                 hunk_range(hunk.new_start, cut->new_n, hunk.new_lines), rest);
  if (out.back() != '\n') out += '\n';
  KAI_TRY(append_lines(out, patch, h, cut->keep, w.clip));
  return cut->changed;
}

// Appends the hunks that fit the window; returns how many changed lines
// and hunks (a cut one included) it showed.
Result<std::pair<size_t, size_t>> append_hunks(std::string& out, git_patch* patch, const Window& w) {
  size_t used = 0;
  const size_t hunks = git_patch_num_hunks(patch);
  for (size_t h = 0; h < hunks; ++h) {
    const git_diff_hunk* hunk = nullptr;
    size_t lines = 0;
    KAI_TRY(git_check(git_patch_get_hunk(&hunk, &lines, patch, h), "reading a hunk"));
    size_t changed = 0;
    if (w.budget != SIZE_MAX) {
      Result<size_t> n = count_changed(patch, h, lines);
      if (!n) return n.error();
      changed = *n;
    }
    if (h > 0 && used + changed > w.budget) return std::pair{used, h};
    if (used + changed > w.budget) {
      Result<size_t> kept = append_hunk_prefix(out, patch, h, *hunk, lines, w.budget - used, w);
      if (!kept) return kept.error();
      return std::pair{used + *kept, h + 1};
    }
    append_hunk_header(out, *hunk);
    KAI_TRY(append_lines(out, patch, h, lines, w.clip));
    used += changed;
  }
  return std::pair{used, hunks};
}

}  // namespace

Result<FileDiff> diff_buffers(std::string_view rel_path, std::optional<std::string_view> before,
                              std::optional<std::string_view> after, unsigned mode, const DiffOptions& opts) {
  git_init_once();
  FileDiff d;
  if (before) d.old_size = before->size();
  if (after) d.new_size = after->size();
  // Bytes, not ids, decide "unchanged": equal ids must never hide a change.
  const bool unchanged = before.has_value() == after.has_value() && (!before || *before == *after);
  if (unchanged || is_binary(before) || is_binary(after)) {
    if (before) d.old_blob = blob_id(*before);
    if (after) d.new_blob = blob_id(*after);
    if (unchanged) return d;
    d.binary = true;
    d.text = binary_summary(rel_path, d);
    return d;
  }
  Result<PatchPtr> patch = make_patch(rel_path, before, after, opts.context);
  if (!patch) return patch.error();
  // libgit2 hashed both sides to build the patch: a large file is not hashed twice.
  const git_diff_delta* delta = git_patch_get_delta(patch->get());
  if (before) d.old_blob = delta ? id_or_hash(delta->old_file.id, *before) : blob_id(*before);
  if (after) d.new_blob = delta ? id_or_hash(delta->new_file.id, *after) : blob_id(*after);
  Result<Scan> scan = scan_patch(patch->get());
  if (!scan) return scan.error();
  d.added = scan->added;
  d.removed = scan->removed;
  d.hunks = scan->hunks;
  d.truncated = !opts.full && (d.added + d.removed > opts.max_changed_lines || scan->longest > opts.max_line_length);
  Window w;
  if (d.truncated) {
    w.budget = std::max<size_t>(1, opts.max_changed_lines / 4);
    w.clip = std::max<size_t>(1, opts.max_line_length);
    w.context = opts.context;
  }
  d.text.reserve(d.truncated ? 64 * 1024 : scan->text_bytes + 512);
  append_headers(d.text, rel_path, d, mode);
  Result<std::pair<size_t, size_t>> shown = append_hunks(d.text, patch->get(), w);
  if (!shown) return shown.error();
  d.shown_changed = d.truncated ? shown->first : d.added + d.removed;
  d.shown_hunks = shown->second;
  return d;
}

}  // namespace kai
