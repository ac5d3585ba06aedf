#pragma once
// gitignore-style patterns over root-relative paths ('/'-separated, no
// leading slash): `*.sh`, `src/**`, `/top-only`, `node_modules/`, `**/x`,
// `[abc]`, `?`. Used by the never-write/never-read lists, [paths] and policy.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

// gitignore semantics:
// - a pattern without '/' (other than a trailing one) matches the basename of
//   the path or of any of its parent folders (`*.env` matches `a/b.env`,
//   `node_modules/` matches `x/node_modules/y.js`);
// - a pattern with a '/' in it (leading or middle) is anchored at root;
// - a trailing '/' matches folders only, i.e. any path below such a folder;
// - `**` matches any number of folders; `*` and `?` never match '/'.
// A path matching a folder pattern also matches when it lies beneath it.
bool glob_match(std::string_view pattern, std::string_view rel_path);

// The same test for many paths against one fixed list of patterns: each
// pattern is taken apart once, and each path once per call, where calling
// glob_match for every pattern splits the path again each time.
// any(p) == (glob_match(x, p) for some x in the list). The set keeps views
// of the patterns: they must outlive it.
class GlobSet {
public:
  explicit GlobSet(const std::vector<std::string_view>& patterns);
  bool any(std::string_view rel_path) const;

  // any(), for the paths a walk meets folder after folder: what the path's
  // folders match is worked out once for each folder, not once for each
  // path, and kept in `memo` (one per walk): for each folder above the last
  // path's, whether a pattern matched it or a folder above it. A path of
  // another folder reuses what its folders share with the last one, so a
  // walk's work stays linear in the depth, however deep the tree.
  struct FolderMemo {
    std::vector<std::string> folders;  // the last path's folders' names, top first
    std::vector<char> hit;             // hit[k]: a pattern matches one of folders[0..k]
    std::vector<std::string_view> path;  // the path being asked about, split (kept to spare an allocation)
  };
  bool any(std::string_view rel_path, FolderMemo& memo) const;

private:
  // any() == folder_any() || name_any(), for a path of n components whose
  // first n - 1 are its folders: the patterns that match one of the
  // folders, and those that match the whole path.
  bool folder_any(const std::vector<std::string_view>& path) const;
  // A pattern matches the folder of `path` made of its first `end` components.
  bool folder_at(const std::vector<std::string_view>& path, size_t end) const;
  bool name_any(const std::vector<std::string_view>& path) const;
  struct Pattern {
    std::string_view text;               // without leading and trailing '/'
    std::vector<std::string_view> segs;  // anchored patterns: text split on '/'
    bool dir_only = false, anchored = false;
    // Literal text every match starts and ends with (the whole text when
    // it has no wildcard): a name that does not start and end with them
    // cannot match, which is most names for most patterns.
    std::string_view head, tail;
    bool literal = false;  // no wildcard at all: only the name itself matches
  };
  // match_name(x.text, name) for an unanchored pattern, its head and tail first.
  static bool name_matches(const Pattern& x, std::string_view name);
  std::vector<Pattern> m_patterns;
  // name_any()'s patterns (not for folders only) by what a name must have
  // to match one: those with a literal head by its first byte, those with
  // none but a literal tail by its last byte (for an anchored pattern, the
  // head and tail of its last segment); the rest (all wildcard, or ending
  // in **) always. Most names meet one or two patterns, not all.
  std::array<std::vector<uint32_t>, 256> m_by_first, m_by_last;
  std::vector<uint32_t> m_always;
};

// usage error naming what is wrong (empty, NUL, unbalanced '[', '/' inside
// '[...]', a trailing lone '\', and '..', '.' or empty folder names, which
// could never match a normalised path and would quietly protect nothing).
// `\x` matches a literal x; an unterminated '[' given to glob_match anyway
// is a literal '['.
Status validate_glob(std::string_view pattern);

}  // namespace kai
