// Intra-line highlighting and colour for a unified diff's text: which
// bytes of a removed and an added line differ, and the escape sequences a
// terminal shows them with (lib/diff.hpp).

#include "lib/diff/diff.hpp"

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <dtl/dtl.hpp>

namespace kai {

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
