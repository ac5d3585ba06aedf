#include "lib/diff.hpp"

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

#include <dtl/dtl.hpp>
#include <fmt/format.h>

#include "lib/git.hpp"
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

// ---- intra-line highlighting ------------------------------------------------

namespace {

// A line this long is not read word by word; highlighting it whole is honest.
constexpr size_t k_intraline_max_bytes = 10000;
// dtl's O((N+M)·D) on what is left after trimming the common ends stays
// within milliseconds below this many tokens.
constexpr size_t k_intraline_max_tokens = 4000;

using Tokens = std::vector<std::string_view>;

enum class TokenClass { word, space, punct };

// Bytes >= 0x80 count as word bytes so a UTF-8 character is never split.
TokenClass token_class(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')
    return TokenClass::word;
  if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f') return TokenClass::space;
  return TokenClass::punct;
}

// Words, runs of whitespace and runs of punctuation.
Tokens tokenize(std::string_view s) {
  Tokens out;
  size_t i = 0;
  while (i < s.size()) {
    const TokenClass c = token_class(s[i]);
    size_t j = i + 1;
    while (j < s.size() && token_class(s[j]) == c) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// A changed stretch: [old_begin, old_end) in the old line against
// [new_begin, new_end) in the new one (token indices, later bytes).
struct Region {
  size_t old_begin = 0, old_end = 0, new_begin = 0, new_end = 0;
};

// Token-index regions that differ between a and b, from dtl's edit script.
std::vector<Region> token_regions(const Tokens& a, const Tokens& b) {
  dtl::Diff<std::string_view, Tokens> diff(a, b);
  diff.compose();
  std::vector<Region> out;
  std::optional<Region> open;
  size_t ia = 0, ib = 0;
  auto close = [&] {
    if (!open) return;
    open->old_end = ia;
    open->new_end = ib;
    out.push_back(*open);
    open.reset();
  };
  for (const auto& elem : diff.getSes().getSequence()) {
    if (elem.second.type == dtl::SES_COMMON) {
      close();
      ++ia, ++ib;
      continue;
    }
    if (!open) open = Region{ia, ia, ib, ib};
    if (elem.second.type == dtl::SES_DELETE)
      ++ia;
    else
      ++ib;
  }
  close();
  return out;
}

size_t byte_at(std::string_view line, const Tokens& t, size_t i) {
  return i < t.size() ? static_cast<size_t>(t[i].data() - line.data()) : line.size();
}

bool continues_char(std::string_view s, size_t i, size_t end) {
  return i < end && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80;
}

// Narrow a byte region to what differs, so "count" → "counts" marks only
// "s", without cutting a UTF-8 character in two. Words that merely share a
// letter ("alpha" → "omega") stay whole: a lone unmarked "a" is noise.
void narrow(std::string_view a, std::string_view b, Region& r) {
  const size_t shorter = std::min(r.old_end - r.old_begin, r.new_end - r.new_begin);
  size_t k = 0;
  while (r.old_begin + k < r.old_end && r.new_begin + k < r.new_end && a[r.old_begin + k] == b[r.new_begin + k]) ++k;
  while (k > 0 && (continues_char(a, r.old_begin + k, r.old_end) || continues_char(b, r.new_begin + k, r.new_end))) --k;
  r.old_begin += k;
  r.new_begin += k;
  size_t t = 0;
  while (r.old_end - t > r.old_begin && r.new_end - t > r.new_begin && a[r.old_end - t - 1] == b[r.new_end - t - 1])
    ++t;
  while (t > 0 && (continues_char(a, r.old_end - t, r.old_end) || continues_char(b, r.new_end - t, r.new_end))) --t;
  if (2 * (k + t) < shorter) {
    r.old_begin -= k;
    r.new_begin -= k;
    return;
  }
  r.old_end -= t;
  r.new_end -= t;
}

}  // namespace

IntraLine intraline(std::string_view old_line, std::string_view new_line) {
  IntraLine out;
  if (old_line == new_line) return out;
  if (old_line.size() > k_intraline_max_bytes || new_line.size() > k_intraline_max_bytes) {
    if (!old_line.empty()) out.removed.push_back({0, old_line.size()});
    if (!new_line.empty()) out.added.push_back({0, new_line.size()});
    return out;
  }
  const Tokens a = tokenize(old_line), b = tokenize(new_line);
  // Common ends cost dtl nothing to skip and usually are most of the line.
  size_t pre = 0, suf = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre]) ++pre;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
  std::vector<Region> regions;
  if ((a.size() - pre - suf) + (b.size() - pre - suf) > k_intraline_max_tokens) {
    regions.push_back({0, a.size() - pre - suf, 0, b.size() - pre - suf});
  } else {
    regions =
        token_regions(Tokens(a.begin() + static_cast<std::ptrdiff_t>(pre), a.end() - static_cast<std::ptrdiff_t>(suf)),
                      Tokens(b.begin() + static_cast<std::ptrdiff_t>(pre), b.end() - static_cast<std::ptrdiff_t>(suf)));
  }
  for (Region r : regions) {
    Region bytes{byte_at(old_line, a, pre + r.old_begin), byte_at(old_line, a, pre + r.old_end),
                 byte_at(new_line, b, pre + r.new_begin), byte_at(new_line, b, pre + r.new_end)};
    narrow(old_line, new_line, bytes);
    if (bytes.old_begin < bytes.old_end) out.removed.push_back({bytes.old_begin, bytes.old_end});
    if (bytes.new_begin < bytes.new_end) out.added.push_back({bytes.new_begin, bytes.new_end});
  }
  return out;
}

// ---- colour -----------------------------------------------------------------

namespace {

constexpr std::string_view k_bold = "\x1b[1m", k_cyan = "\x1b[36m", k_red = "\x1b[31m", k_green = "\x1b[32m",
                           k_reverse = "\x1b[7m", k_no_reverse = "\x1b[27m", k_reset = "\x1b[0m";

enum class LineKind { plain, header, hunk_header, context, removed, added, marker };

struct DiffLine {
  std::string_view body;  // without its "\n"
  bool newline = false;
  LineKind kind = LineKind::plain;
};

bool starts_with_any(std::string_view s, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [s](std::string_view p) { return s.substr(0, p.size()) == p; });
}

bool header_line(std::string_view s) {
  return starts_with_any(
      s, {"diff ", "index ", "--- ", "+++ ", "new file mode ", "deleted file mode ", "old mode ", "new mode ",
          "similarity index ", "dissimilarity index ", "rename ", "copy ", "Binary file"});
}

// "-12,3" or "+7": the line count of one side of a hunk header.
bool parse_range(std::string_view& s, char sign, long& count) {
  if (s.empty() || s[0] != sign) return false;
  s.remove_prefix(1);
  const size_t end = s.find_first_not_of("0123456789,");
  const std::string_view range = s.substr(0, end);
  s.remove_prefix(range.size());
  const size_t comma = range.find(',');
  if (range.empty() || comma == 0) return false;
  count = comma == std::string_view::npos ? 1 : std::strtol(std::string(range.substr(comma + 1)).c_str(), nullptr, 10);
  return true;
}

bool parse_hunk_header(std::string_view s, long& old_n, long& new_n) {
  if (s.substr(0, 3) != "@@ ") return false;
  s.remove_prefix(3);
  if (!parse_range(s, '-', old_n) || s.substr(0, 1) != " ") return false;
  s.remove_prefix(1);
  return parse_range(s, '+', new_n) && s.substr(0, 3) == " @@";
}

// The hunk header's counts say where a hunk ends, so a removed line that
// reads "--- x" is not taken for a file header. Unparsable hunks fall back
// to "lines starting with ' ', '-', '+' or '\'".
std::vector<DiffLine> classify(std::string_view text) {
  std::vector<DiffLine> lines;
  bool in_hunk = false, counted = false;
  long old_left = 0, new_left = 0;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    DiffLine l;
    l.body = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    l.newline = nl != std::string_view::npos;
    at = l.newline ? nl + 1 : text.size();
    const char c = l.body.empty() ? ' ' : l.body[0];
    if (in_hunk && (c == ' ' || c == '-' || c == '+' || c == '\\')) {
      l.kind = c == '-'   ? LineKind::removed
               : c == '+' ? LineKind::added
               : c == ' ' ? LineKind::context
                          : LineKind::marker;
      if (counted && c != '\\') {
        old_left -= c == '+' ? 0 : 1;
        new_left -= c == '-' ? 0 : 1;
        in_hunk = old_left > 0 || new_left > 0;
      }
    } else if (l.body.substr(0, 3) == "@@ ") {
      l.kind = LineKind::hunk_header;
      counted = parse_hunk_header(l.body, old_left, new_left);
      in_hunk = !counted || old_left > 0 || new_left > 0;
    } else {
      in_hunk = false;
      l.kind = l.body.substr(0, 2) == "\\ " ? LineKind::marker
               : header_line(l.body)        ? LineKind::header
                                            : LineKind::plain;
    }
    lines.push_back(l);
  }
  return lines;
}

void append_with_spans(std::string& out, std::string_view s, const std::vector<Span>& spans) {
  size_t at = 0;
  for (const Span& sp : spans) {
    if (sp.begin < at || sp.end > s.size() || sp.begin >= sp.end) continue;
    out.append(s.substr(at, sp.begin - at));
    out.append(k_reverse);
    out.append(s.substr(sp.begin, sp.end - sp.begin));
    out.append(k_no_reverse);
    at = sp.end;
  }
  out.append(s.substr(at));
}

void append_colored(std::string& out, const DiffLine& l, const std::vector<Span>& spans) {
  switch (l.kind) {
    case LineKind::header: out.append(k_bold).append(l.body).append(k_reset); break;
    case LineKind::hunk_header: out.append(k_cyan).append(l.body).append(k_reset); break;
    case LineKind::removed:
    case LineKind::added:
      out.append(l.kind == LineKind::removed ? k_red : k_green).append(l.body.substr(0, 1));
      append_with_spans(out, l.body.substr(1), spans);
      out.append(k_reset);
      break;
    default: out.append(l.body);
  }
  if (l.newline) out += '\n';
}

// What intraline() compares: the line after its +/- and before a CR.
std::string_view compared_text(const DiffLine& l) {
  std::string_view s = l.body.substr(1);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

size_t covered(const std::vector<Span>& spans) {
  size_t n = 0;
  for (const Span& sp : spans) n += sp.end - sp.begin;
  return n;
}

// A run of removed lines followed by as many added lines: the i-th removed
// and the i-th added are taken as one edited line. Fills `spans` (indexed
// from `first`) and returns the index after the run.
size_t change_block_spans(const std::vector<DiffLine>& lines, size_t first, std::vector<std::vector<Span>>& spans) {
  std::vector<size_t> removed, added;
  size_t end = first;
  for (; end < lines.size() && (lines[end].kind == LineKind::removed || lines[end].kind == LineKind::marker); ++end)
    if (lines[end].kind == LineKind::removed) removed.push_back(end);
  for (; end < lines.size() && (lines[end].kind == LineKind::added || lines[end].kind == LineKind::marker); ++end)
    if (lines[end].kind == LineKind::added) added.push_back(end);
  spans.assign(end - first, {});
  for (size_t k = 0; removed.size() == added.size() && k < removed.size(); ++k) {
    const std::string_view a = compared_text(lines[removed[k]]), b = compared_text(lines[added[k]]);
    IntraLine il = intraline(a, b);
    // Everything changed on both sides: highlighting would add nothing.
    if (covered(il.removed) == a.size() && covered(il.added) == b.size()) continue;
    spans[removed[k] - first] = std::move(il.removed);
    spans[added[k] - first] = std::move(il.added);
  }
  return end;
}

size_t append_change_block(std::string& out, const std::vector<DiffLine>& lines, size_t first) {
  std::vector<std::vector<Span>> spans;
  const size_t end = change_block_spans(lines, first, spans);
  for (size_t i = first; i < end; ++i) append_colored(out, lines[i], spans[i - first]);
  return end;
}

}  // namespace

std::vector<std::vector<Span>> intraline_spans(std::string_view diff_text) {
  const std::vector<DiffLine> lines = classify(diff_text);
  std::vector<std::vector<Span>> out(lines.size());
  for (size_t i = 0; i < lines.size();) {
    if (lines[i].kind != LineKind::removed) {
      ++i;
      continue;
    }
    std::vector<std::vector<Span>> block;
    const size_t end = change_block_spans(lines, i, block);
    for (size_t k = i; k < end; ++k) out[k] = std::move(block[k - i]);
    i = end;
  }
  return out;
}

std::string colorize_diff(std::string_view diff_text, const Progress& progress) {
  const std::vector<DiffLine> lines = classify(diff_text);
  std::string out;
  out.reserve(diff_text.size() + lines.size() * 10);
  const std::vector<Span> none;
  for (size_t i = 0; i < lines.size();) {
    if (progress) progress("highlighting the diff", i, lines.size());
    if (lines[i].kind == LineKind::removed) {
      i = append_change_block(out, lines, i);
      continue;
    }
    append_colored(out, lines[i], none);
    ++i;
  }
  if (progress) progress("", 0, 0);
  return out;
}

}  // namespace kai
