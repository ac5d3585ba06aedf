#include "lib/harness/access.hpp"

#include <set>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "lib/paths/glob.hpp"
#include "lib/paths/paths.hpp"
#include "lib/gate/reader.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai::harness {
namespace fs = std::filesystem;

namespace {

Status check_file(const Workspace& ws, const RootPath& rp) { return check_agent_read(ws, rp); }

// The folder a search or listing starts from, root itself allowed.
Result<RootPath> resolve_folder(const Workspace& ws, const fs::path& cwd, const std::string& dir) {
  fs::path p = dir.empty() ? cwd : fs::path(dir).is_absolute() ? fs::path(dir) : cwd / dir;
  p = p.lexically_normal();
  if (p.has_filename() == false && p != p.root_path()) p = p.parent_path();
  if (p == ws.root) return RootPath{"", ws.root};
  return resolve(ws.root, cwd, p.string());
}

Error unmirrored(std::string_view what, std::string_view text, std::string_view why) {
  return make_error(Errc::denied,
                    fmt::format("kaicoder cannot mirror how the harness would take the {} '{}': {}", what,
                                make_visible(text, Allow::nothing), why),
                    "give a plain relative name or pattern, or read through kaicoder's read_file tool");
}

// The next code point of valid UTF-8 at `s[i]`, advancing `i`; -1 when the
// bytes are not UTF-8 (overlong, surrogates and beyond U+10FFFF included).
long next_code_point(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  int extra = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : -1;
  if (extra < 0 || i + static_cast<size_t>(extra) >= s.size()) return -1;
  long cp = extra == 0 ? b : b & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const auto c = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if ((c & 0xC0) != 0x80) return -1;
    cp = (cp << 6) | (c & 0x3F);
  }
  static constexpr long k_min[] = {0, 0x80, 0x800, 0x10000};
  if (cp < k_min[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  i += static_cast<size_t>(extra) + 1;
  return cp;
}

// Code points that NFC leaves alone wherever they stand and that no
// harness trims: Latin-1 letters to IPA (U+00A1–U+02FF), kana, CJK
// ideographs and Hangul syllables. Combining marks, compatibility
// characters and spaces (U+00A0, U+2000…, U+3000, U+FEFF) are not here.
bool stable_code_point(long cp) {
  return (cp >= 0xA1 && cp <= 0x2FF) || (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA) ||
         (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7A3);
}

// A text that only ASCII letters, digits and plain punctuation, and stable
// code points, make up; `why` says what else it holds.
bool plain_text(std::string_view s, std::string& why) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      why = c == 0 ? "it holds a NUL byte" : fmt::format("it holds the control character 0x{:02x}", c);
      return false;
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    const long cp = next_code_point(s, i);
    if (cp < 0) {
      why = "it is not UTF-8";
      return false;
    }
    if (!stable_code_point(cp)) {
      why = fmt::format("it holds U+{:04X}, which the harness may normalise or trim", cp);
      return false;
    }
  }
  return true;
}

constexpr std::string_view k_vcs_folders[] = {".git", ".svn", ".hg", ".bzr", ".jj", ".sl"};

bool is_vcs_folder(std::string_view name) {
  for (auto v : k_vcs_folders)
    if (name == v) return true;
  return false;
}

// fnmatch without FNM_PATHNAME, as git pathspecs and `grep --include`
// match: `*` any run (a '/' included), `?` any one byte; the pieces
// given here hold no class and no escape.
bool loose_match(std::string_view pat, std::string_view text) {
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < text.size()) {
    if (pi < pat.size() && (pat[pi] == '?' || pat[pi] == text[ti])) {
      ++pi, ++ti;
    } else if (pi < pat.size() && pat[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < pat.size() && pat[pi] == '*') ++pi;
  return pi == pat.size();
}

std::string join(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i == from ? "" : "/") + parts[i];
  return out;
}

// The pieces a search's glob may become, checked; `all` when no piece is
// left, which every harness takes as every file.
struct Pieces {
  std::vector<std::string> list;
  bool all = false;
};

Result<Pieces> pieces_of(const std::string& glob) {
  Pieces p;
  if (glob.empty()) {
    p.all = true;
    return p;
  }
  std::string why;
  if (!plain_text(glob, why)) return unmirrored("pattern", glob, why);
  std::set<std::string> seen{glob};
  std::string cur;
  for (char c : glob + " ") {
    if (c == ' ' || c == ',' || c == '\t') {
      if (!cur.empty()) seen.insert(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  // Claude Code drops empty pieces: a glob of only separators is no --glob.
  if (glob.find_first_not_of(" ,\t") == std::string::npos) p.all = true;
  for (const std::string& piece : seen) {
    if (piece.find_first_not_of(" ,\t") == std::string::npos) continue;
    if (piece.find_first_of("{}[]\\") != std::string::npos)
      return unmirrored("pattern", piece, "braces, brackets and backslashes mean different things to each search");
    if (piece.front() == '!' || piece.front() == '/' || piece.front() == ':')
      return unmirrored("pattern", piece,
                        "a leading '!', '/' or ':' excludes, anchors or is git pathspec magic, depending on the search");
    for (std::string_view part : split(piece, "/"))
      if (part == "..") return unmirrored("pattern", piece, "'..' leaves the folder searched");
    p.list.push_back(piece);
  }
  return p;
}

// Whether a search with `pieces` below `top` (absolute, components
// `top_depth` deep) can reach the file or folder with absolute components
// `parts`.
bool reached(const Pieces& pieces, const std::vector<std::string>& parts, size_t top_depth) {
  if (pieces.all) return true;
  for (const std::string& piece : pieces.list) {
    // ripgrep: relative to any folder above (its working folder, unknown here).
    for (size_t from = 0; from < parts.size(); ++from)
      if (glob_match(piece, join(parts, from, parts.size()))) return true;
    // git grep, grep --include, a glob library: relative to the search
    // folder, a '*' crossing '/', and a folder naming what lies below it.
    for (size_t from = top_depth; from < parts.size(); ++from)
      for (size_t to = from + 1; to <= parts.size(); ++to)
        if (loose_match(piece, join(parts, from, to))) return true;
  }
  return false;
}

std::vector<std::string> components(const fs::path& abs) {
  std::vector<std::string> out;
  for (const auto& c : abs.relative_path()) out.push_back(c.string());
  return out;
}

}  // namespace

Status check_harness_path(std::string_view path, std::string_view what, bool folder) {
  std::string why;
  if (!plain_text(path, why)) return unmirrored(what, path, why);
  if (!path.empty() && (path.front() == ' ' || path.back() == ' '))
    return unmirrored(what, path, "it starts or ends with a space, which the harness trims");
  if (path.starts_with('~')) return unmirrored(what, path, "a leading '~' is the home folder to the harness");
  if (path.find('$') != std::string_view::npos)
    return unmirrored(what, path, "'$' may name a variable the harness expands");
  if (path.find('\\') != std::string_view::npos)
    return unmirrored(what, path, "a backslash is a folder separator to some harnesses");
  for (std::string_view part : split(path, "/"))
    if (part != "." && part != ".." && (part.ends_with('.') || part.ends_with(' ')))
      return unmirrored(what, path, "a name ending in '.' or ' ' loses it on some systems");
  if (!folder && path.size() > 1 && path.back() == '/')
    return unmirrored(what, path, "a file's path does not end in '/'");
  return ok_status();
}

Status check_read_path(const Workspace& ws, const fs::path& cwd, const std::string& path) {
  KAI_TRY(check_harness_path(path, "path"));
  auto rp = resolve(ws.root, cwd, path);
  if (!rp) return rp.error();
  return check_file(ws, *rp);
}

Status check_list_path(const Workspace& ws, const fs::path& cwd, const std::string& dir) {
  KAI_TRY(check_harness_path(dir, "folder", true));
  auto rp = resolve_folder(ws, cwd, dir);
  if (!rp) return rp.error();
  if (rp->rel.empty()) return ok_status();
  return check_file(ws, *rp);
}

Status check_search(const Workspace& ws, const fs::path& cwd, const Search& s, size_t max_entries) {
  KAI_TRY(check_harness_path(s.dir, "folder", true));
  auto top = resolve_folder(ws, cwd, s.dir);
  if (!top) return top.error();
  if (!top->rel.empty()) KAI_TRY(check_file(ws, *top));
  auto pieces = pieces_of(s.glob);
  if (!pieces) return pieces.error();
  std::error_code ec;
  auto st = fs::symlink_status(top->abs, ec);
  if (ec) return make_error(Errc::denied, fmt::format("cannot look at '{}': {}", top->rel, ec.message()));
  if (fs::is_regular_file(st)) return ok_status();  // the one file, checked above, whatever the glob
  const size_t top_depth = components(top->abs).size();
  std::vector<fs::path> folders{top->abs};  // still to walk
  std::set<fs::path> walked;                // folders reached through a symlink as well
  size_t seen = 0;
  while (!folders.empty()) {
    fs::path d = std::move(folders.back());
    folders.pop_back();
    if (!walked.insert(fs::weakly_canonical(d, ec)).second) continue;
    for (fs::directory_iterator it(d, fs::directory_options::none, ec), end; !ec && it != end; it.increment(ec)) {
      if (++seen > max_entries)
        return make_error(
            Errc::denied,
            fmt::format("more than {} entries to check below '{}'", max_entries, top->rel.empty() ? "." : top->rel),
            "search a smaller folder, or narrow the search with a glob");
      const fs::path& p = it->path();
      const std::string rel = p.lexically_relative(ws.root).generic_string();
      auto ps = it->symlink_status(ec);
      if (ec) break;
      if (fs::is_symlink(ps)) {
        fs::path target = fs::weakly_canonical(p, ec);
        if (ec) break;
        auto trel = target.lexically_relative(ws.root);
        if (trel.empty() || *trel.begin() == "..")
          return make_error(Errc::denied, fmt::format("'{}' is a symlink that leads out of root", rel));
        const std::string t = trel.generic_string();
        if (t != ".") KAI_TRY(check_file(ws, RootPath{t, target}));
        // A search that follows links walks what it leads to as well.
        if (fs::is_directory(fs::status(target, ec))) folders.push_back(target);
        ec.clear();
        continue;
      }
      const std::vector<std::string> parts = components(p);
      if (fs::is_directory(ps)) {
        // Left out, as the harness leaves it out, unless a piece could name it.
        if (s.skips_vcs && is_vcs_folder(p.filename().string()) &&
            (pieces->all || !reached(*pieces, parts, top_depth)))
          continue;
        folders.push_back(p);
        continue;
      }
      if (!reached(*pieces, parts, top_depth)) continue;
      KAI_TRY(check_file(ws, RootPath{rel, p}));
    }
    if (ec) return make_error(Errc::denied, fmt::format("cannot walk '{}': {}", d.string(), ec.message()));
  }
  return ok_status();
}

}  // namespace kai::harness
