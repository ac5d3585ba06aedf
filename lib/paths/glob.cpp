#include "lib/paths/glob.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "lib/util/strings.hpp"

namespace kai {
namespace {

// Matches one bracket expression starting at pat[pi] == '['. Sets `end` to the
// index after the closing ']'; returns false with end == npos when the class
// is unterminated, in which case the caller treats '[' as a literal.
bool match_class(std::string_view pat, size_t pi, char c, size_t& end) {
  size_t i = pi + 1;
  bool negate = i < pat.size() && (pat[i] == '!' || pat[i] == '^');
  if (negate) ++i;
  bool hit = false;
  bool first = true;
  while (i < pat.size() && (pat[i] != ']' || first)) {
    first = false;
    char lo = pat[i];
    if (lo == '\\' && i + 1 < pat.size()) lo = pat[++i];
    char hi = lo;
    if (i + 2 < pat.size() && pat[i + 1] == '-' && pat[i + 2] != ']') {
      hi = pat[i + 2];
      if (hi == '\\' && i + 3 < pat.size()) hi = pat[++i + 2];
      i += 2;
    }
    if (static_cast<unsigned char>(lo) <= static_cast<unsigned char>(c) &&
        static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi))
      hit = true;
    ++i;
  }
  if (i >= pat.size()) {
    end = std::string_view::npos;
    return false;
  }
  end = i + 1;
  return hit != negate;
}

// One path component against one pattern segment: `*` any run, `?` any one
// byte, `[...]` a class, `\x` a literal x. Nothing here can see a '/'.
// Backtracking only to the last '*' keeps this linear in practice.
bool match_name(std::string_view pat, std::string_view name) {
  size_t pi = 0, ni = 0;
  size_t star_pi = std::string_view::npos, star_ni = 0;
  while (ni < name.size()) {
    if (pi < pat.size()) {
      char p = pat[pi];
      if (p == '*') {
        while (pi < pat.size() && pat[pi] == '*') ++pi;  // `**` inside a name is `*`
        star_pi = pi;
        star_ni = ni;
        continue;
      }
      if (p == '?') {
        ++pi, ++ni;
        continue;
      }
      if (p == '[') {
        size_t end = 0;
        bool hit = match_class(pat, pi, name[ni], end);
        if (end != std::string_view::npos) {
          if (hit) {
            pi = end, ++ni;
            continue;
          }
        } else if (name[ni] == '[') {
          ++pi, ++ni;
          continue;
        }
      } else {
        if (p == '\\' && pi + 1 < pat.size()) p = pat[++pi];
        if (p == name[ni]) {
          ++pi, ++ni;
          continue;
        }
      }
    }
    if (star_pi == std::string_view::npos) return false;
    pi = star_pi;
    ni = ++star_ni;
  }
  while (pi < pat.size() && pat[pi] == '*') ++pi;
  return pi == pat.size();
}

// Anchored match of pattern segments against exactly the path components
// [si, end). `**` as a whole segment spans zero or more components, except a
// trailing one, which (as in gitignore) needs at least one: `docs/**` is what
// lies inside docs, not docs itself.
bool match_segments(const std::vector<std::string_view>& pat, size_t pi, const std::vector<std::string_view>& path,
                    size_t si, size_t end) {
  if (pi == pat.size()) return si == end;
  if (pat[pi] == "**") {
    size_t min = pi + 1 == pat.size() ? 1 : 0;
    for (size_t j = si + min; j <= end; ++j)
      if (match_segments(pat, pi + 1, path, j, end)) return true;
    return false;
  }
  if (si == end || !match_name(pat[pi], path[si])) return false;
  return match_segments(pat, pi + 1, path, si + 1, end);
}

// A pattern's text with its leading and trailing '/' taken off, and what
// they said; empty text matches nothing.
struct ParsedGlob {
  std::string_view text;
  bool dir_only = false, anchored = false;
};

ParsedGlob parse_glob(std::string_view pattern) {
  ParsedGlob p;
  while (pattern.size() > 1 && pattern.back() == '/') {
    pattern.remove_suffix(1);
    p.dir_only = true;
  }
  p.anchored = pattern.find('/') != std::string_view::npos;
  if (!pattern.empty() && pattern.front() == '/') pattern.remove_prefix(1);
  p.text = pattern;
  return p;
}

// `pattern` (parsed; `segs` its text split, for an anchored one) against
// the components of a path.
bool match_parsed(const ParsedGlob& p, const std::vector<std::string_view>& segs,
                  const std::vector<std::string_view>& path) {
  // A folder pattern can only name a proper ancestor of the path, since the
  // last component is the file itself; any other pattern may also name the
  // path itself. Either way a match on an ancestor covers everything below.
  size_t limit = p.dir_only ? path.size() - 1 : path.size();
  if (!p.anchored) {
    for (size_t i = 0; i < limit; ++i)
      if (match_name(p.text, path[i])) return true;
    return false;
  }
  for (size_t end = 1; end <= limit; ++end)
    if (match_segments(segs, 0, path, 0, end)) return true;
  return false;
}

std::string_view without_leading_slashes(std::string_view rel_path) {
  while (!rel_path.empty() && rel_path.front() == '/') rel_path.remove_prefix(1);
  return rel_path;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view rel_path) {
  if (pattern.empty() || rel_path.empty()) return false;
  ParsedGlob p = parse_glob(pattern);
  if (p.text.empty()) return false;
  std::vector<std::string_view> path = split(without_leading_slashes(rel_path), "/");
  return match_parsed(p, p.anchored ? split(p.text, "/") : std::vector<std::string_view>{}, path);
}

GlobSet::GlobSet(const std::vector<std::string_view>& patterns) {
  for (std::string_view pattern : patterns) {
    if (pattern.empty()) continue;
    ParsedGlob p = parse_glob(pattern);
    if (p.text.empty()) continue;
    // The head ends at the first wildcard or escape. The tail is what
    // follows a last `*` or `?`; after a class (`]`) or an escape there is
    // none, as the text between is not literal.
    const size_t first = p.text.find_first_of("*?[\\"), last = p.text.find_last_of("*?[]\\");
    const bool literal = first == std::string_view::npos;
    std::string_view head = literal ? p.text : p.text.substr(0, first), tail = literal ? p.text : std::string_view();
    if (!literal && (p.text[last] == '*' || p.text[last] == '?')) tail = p.text.substr(last + 1);
    m_patterns.push_back(Pattern{p.text, p.anchored ? split(p.text, "/") : std::vector<std::string_view>{}, p.dir_only,
                                 p.anchored, head, tail, literal});
    if (p.dir_only) continue;
    // name_any() matches an anchored pattern against the whole path: its
    // last segment against the last name, unless that segment is "**".
    std::string_view name_head = head, name_tail = tail;
    if (p.anchored) {
      const std::string_view seg = m_patterns.back().segs.back();
      const size_t f = seg.find_first_of("*?[\\"), l = seg.find_last_of("*?[]\\");
      name_head = f == std::string_view::npos ? seg : seg.substr(0, f);
      name_tail = f == std::string_view::npos || (seg[l] != '*' && seg[l] != '?') ? std::string_view() : seg.substr(l + 1);
      if (seg == "**") name_head = name_tail = {};
    }
    const auto at = static_cast<uint32_t>(m_patterns.size() - 1);
    if (!name_head.empty())
      m_by_first[static_cast<unsigned char>(name_head.front())].push_back(at);
    else if (!name_tail.empty())
      m_by_last[static_cast<unsigned char>(name_tail.back())].push_back(at);
    else
      m_always.push_back(at);
  }
}

bool GlobSet::name_matches(const Pattern& x, std::string_view name) {
  if (x.literal) return name == x.text;
  if (name.size() < x.head.size() + x.tail.size() || !name.starts_with(x.head) || !name.ends_with(x.tail)) return false;
  return match_name(x.text, name);
}

bool GlobSet::any(std::string_view rel_path) const {
  if (rel_path.empty()) return false;
  std::vector<std::string_view> path = split(without_leading_slashes(rel_path), "/");
  return folder_any(path) || name_any(path);
}

bool GlobSet::any(std::string_view rel_path, FolderMemo& memo) const {
  if (rel_path.empty()) return false;
  rel_path = without_leading_slashes(rel_path);
  std::vector<std::string_view>& path = memo.path;
  split_into(rel_path, "/", path);
  const size_t folders = path.size() - 1;
  // What the path's folders share with the last path's stands; the rest is
  // worked out one folder at a time, each from the one above it.
  size_t same = 0;
  while (same < folders && same < memo.folders.size() && memo.folders[same] == path[same]) ++same;
  memo.folders.resize(same);
  memo.hit.resize(same);
  for (size_t k = same; k < folders; ++k) {
    memo.folders.emplace_back(path[k]);
    memo.hit.push_back((k > 0 && memo.hit[k - 1]) || folder_at(path, k + 1));
  }
  return (folders > 0 && memo.hit[folders - 1]) || name_any(path);
}

bool GlobSet::folder_at(const std::vector<std::string_view>& path, size_t end) const {
  for (const Pattern& x : m_patterns)
    if (!x.anchored ? name_matches(x, path[end - 1]) : match_segments(x.segs, 0, path, 0, end)) return true;
  return false;
}

// As match_parsed() with the limit cut to the folders (n - 1 components):
// what matches there matches whatever the last component is.
bool GlobSet::folder_any(const std::vector<std::string_view>& path) const {
  for (size_t end = 1; end < path.size(); ++end)
    if (folder_at(path, end)) return true;
  return false;
}

// The rest of match_parsed(): a pattern that is not for folders only, on
// the whole path (the last component for one that is not anchored).
bool GlobSet::name_any(const std::vector<std::string_view>& path) const {
  const std::string_view name = path.back();
  auto matches = [&](uint32_t i) {
    const Pattern& x = m_patterns[i];
    return !x.anchored ? name_matches(x, name) : match_segments(x.segs, 0, path, 0, path.size());
  };
  // A pattern with a literal head matches only names that start with it,
  // one with only a literal tail only names that end with it.
  if (std::any_of(m_always.begin(), m_always.end(), matches)) return true;
  if (name.empty()) return false;
  const auto& first = m_by_first[static_cast<unsigned char>(name.front())];
  const auto& last = m_by_last[static_cast<unsigned char>(name.back())];
  return std::any_of(first.begin(), first.end(), matches) || std::any_of(last.begin(), last.end(), matches);
}

Status validate_glob(std::string_view pattern) {
  auto bad = [&](std::string_view why) {
    std::string shown(pattern);
    for (char& c : shown)
      if (c == '\0') c = '?';
    return make_error(Errc::usage, fmt::format("invalid glob '{}': {}", shown, why));
  };
  if (pattern.empty()) return make_error(Errc::usage, "invalid glob: pattern is empty");
  if (pattern.find('\0') != std::string_view::npos) return bad("contains a NUL byte");
  if (pattern.find_first_not_of('/') == std::string_view::npos) return bad("matches nothing");
  if (pattern.back() == '\\' && (pattern.size() < 2 || pattern[pattern.size() - 2] != '\\'))
    return bad("ends in a lone '\\'");

  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      ++i;
      continue;
    }
    if (pattern[i] != '[') continue;
    size_t end = 0;
    match_class(pattern, i, 'a', end);
    if (end == std::string_view::npos) return bad("'[' has no closing ']'");
    if (pattern.substr(i, end - i).find('/') != std::string_view::npos) return bad("'[...]' cannot contain '/'");
    i = end - 1;
  }

  // Paths are compared after normalisation, so `.`, `..` and empty segments
  // would silently never match; a deny list must not quietly do nothing.
  std::string_view body = pattern;
  if (body.front() == '/') body.remove_prefix(1);
  while (!body.empty() && body.back() == '/') body.remove_suffix(1);
  for (std::string_view seg : split(body, "/")) {
    if (seg == "..") return bad("'..' cannot appear in a pattern");
    if (seg == ".") return bad("'.' cannot appear in a pattern");
    if (seg.empty()) return bad("empty folder name ('//')");
  }
  return ok_status();
}

}  // namespace kai
