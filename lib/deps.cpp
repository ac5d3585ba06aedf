#include "lib/deps.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "lib/util/strings.hpp"

namespace kai {
namespace {

using Names = std::vector<std::string>;

bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}
constexpr std::string_view k_blank = " \t\r\n\f\v";
bool space(char c) { return k_blank.find(c) != std::string_view::npos; }

std::string_view dir_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `rel` from folder `dir`, with "." and ".." folded; nullopt when it climbs
// out of the repository.
std::optional<std::string> join(std::string_view dir, std::string_view rel) {
  std::vector<std::string_view> parts;
  auto push = [&](std::string_view s) -> bool {
    for (std::string_view part : split(s, "/")) {
      if (part == "..") {
        if (parts.empty()) return false;
        parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
    }
    return true;
  };
  if (!push(dir) || !push(rel)) return std::nullopt;
  std::string out;
  for (auto p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

// The folder itself, then each folder above it up to the top ("").
std::vector<std::string_view> ancestors(std::string_view dir) {
  std::vector<std::string_view> out{dir};
  while (!dir.empty()) {
    dir = dir_of(dir);
    out.push_back(dir);
  }
  return out;
}

// The names one file imports, bounded (see k_max_name, k_max_names).
void add_name(Names& out, std::string_view name) {
  if (out.size() < k_max_names && !name.empty() && name.size() <= k_max_name) out.emplace_back(name);
}

// A relative name with "." and ".." folded: `up` folders to climb first,
// then `rest`. "a/../../b" is up 1, rest "b".
struct Folded {
  size_t up = 0;
  std::string rest;
};

Folded fold(std::string_view rel) {
  Folded f;
  std::vector<std::string_view> parts;
  for (std::string_view part : split(rel, "/")) {
    if (part == "..") {
      if (parts.empty()) ++f.up;
      else parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
  }
  for (auto p : parts) {
    if (!f.rest.empty()) f.rest += '/';
    f.rest += p;
  }
  return f;
}

// `dir` without its last `up` folders; nullopt when it has fewer.
std::optional<std::string_view> climb(std::string_view dir, size_t up) {
  for (; up > 0; --up) {
    if (dir.empty()) return std::nullopt;
    dir = dir_of(dir);
  }
  return dir;
}

// Folders a name may be found in, best first (a missing one keeps its rank).
// find() returns the best-ranked tracked file DIR/REST: it tries each folder
// or each tracked file with REST's last component, whichever are fewer, so
// a deep file with many names costs lookups per name, not per folder.
class Ranked {
public:
  explicit Ranked(std::vector<std::optional<std::string>> dirs) : m_dirs(std::move(dirs)) {}

  struct Hit {
    size_t rank = 0;
    long file = -1;
  };

  Hit find(const FileSet& files, std::string_view rest, ScanBudget& budget) const {
    Hit best;
    if (rest.empty()) return best;
    const auto& cands = files.named(file_name(rest));
    if (cands.empty()) return best;
    if (m_dirs.size() <= cands.size()) {
      std::string cand;
      for (size_t r = 0; r < m_dirs.size(); ++r) {
        if (!budget.step()) break;
        if (!m_dirs[r]) continue;
        cand = m_dirs[r]->empty() ? std::string(rest) : *m_dirs[r] + "/" + std::string(rest);
        if (long hit = files.find(cand); hit >= 0) return {r, hit};
      }
      return best;
    }
    if (m_rank.empty())
      for (size_t r = m_dirs.size(); r-- > 0;)
        if (m_dirs[r]) m_rank[*m_dirs[r]] = r;  // the best rank is written last
    for (uint32_t i : cands) {
      if (!budget.step()) break;
      std::string_view p = files.paths()[i];
      if (!p.ends_with(rest)) continue;
      std::string_view dir;
      if (p.size() > rest.size()) {
        if (p[p.size() - rest.size() - 1] != '/') continue;
        dir = p.substr(0, p.size() - rest.size() - 1);
      }
      auto it = m_rank.find(dir);
      if (it != m_rank.end() && (best.file < 0 || it->second < best.rank)) best = {it->second, static_cast<long>(i)};
    }
    return best;
  }

private:
  std::vector<std::optional<std::string>> m_dirs;
  mutable std::unordered_map<std::string_view, size_t> m_rank;
};

// Calls `line` with each line of `text`.
template <typename F>
void each_line(std::string_view text, F&& line) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    line(text.substr(start, end - start), end);
    start = end + 1;
  }
}

// Strips `word` and the blanks after it when `s` starts with it as a whole word.
bool eat_word(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word || (s.size() > word.size() && ident_char(s[word.size()]))) return false;
  s = trim_left(s.substr(word.size()), k_blank);
  return true;
}

// ---- C and C++ ---------------------------------------------------------

Names c_includes(std::string_view text) {
  Names out;
  each_line(text, [&](std::string_view l, size_t) {
    l = trim_left(l, k_blank);
    if (l.empty() || l.front() != '#') return;
    l = trim_left(l.substr(1), k_blank);
    if (!eat_word(l, "include") && !eat_word(l, "import")) return;
    if (l.empty() || (l.front() != '"' && l.front() != '<')) return;
    size_t end = l.find(l.front() == '"' ? '"' : '>', 1);
    if (end != std::string_view::npos && end > 1) add_name(out, l.substr(1, end - 1));
  });
  return out;
}

// The including file's folder and every folder above it, each also with
// include/ and src/: the layouts -I flags usually point at.
void resolve_c(const FileSet& files, std::string_view path, const Names& names, std::vector<uint32_t>& out,
               ScanBudget& budget) {
  std::vector<std::optional<std::string>> bases;
  for (auto d : ancestors(dir_of(path)))
    for (std::string_view sub : {"", "include", "src"}) bases.push_back(join(d, sub));
  // "../x.h" climbs from each of those folders: one ranked list per climb.
  std::unordered_map<size_t, Ranked> by_climb;
  for (const auto& name : names) {
    if (!budget.step()) return;
    const Folded f = fold(name);
    auto it = by_climb.find(f.up);
    if (it == by_climb.end()) {
      if (!budget.step(bases.size())) return;
      std::vector<std::optional<std::string>> climbed;
      for (const auto& b : bases) {
        auto c = b ? climb(*b, f.up) : std::nullopt;
        climbed.push_back(c ? std::optional<std::string>(std::string(*c)) : std::nullopt);
      }
      it = by_climb.emplace(f.up, Ranked(std::move(climbed))).first;
    }
    if (auto hit = it->second.find(files, f.rest, budget); hit.file >= 0) out.push_back(static_cast<uint32_t>(hit.file));
  }
}

// ---- JavaScript and TypeScript -----------------------------------------

// `from 'x'`, `import 'x'`, `import('x')`, `require('x')`: the keyword, then
// an optional parenthesis, then a string literal without interpolation.
Names js_imports(std::string_view text) {
  Names out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != 'f' && c != 'i' && c != 'r') continue;
    if (i > 0 && (ident_char(text[i - 1]) || text[i - 1] == '.')) continue;
    std::string_view rest = text.substr(i);
    if (!eat_word(rest, "from") && !eat_word(rest, "import") && !eat_word(rest, "require")) continue;
    if (!rest.empty() && rest.front() == '(') rest = trim_left(rest.substr(1), k_blank);
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"' && rest.front() != '`')) continue;
    // A name never spans lines: the closing quote is looked for on this line
    // only, so a thousand unclosed quotes cost one pass, not a thousand.
    const char quote[] = {rest.front(), '\n', '\0'};
    size_t end = rest.find_first_of(quote, 1);
    if (end == std::string_view::npos || end == 1 || rest[end] == '\n') continue;
    std::string_view name = rest.substr(1, end - 1);
    if (name.find("${") == std::string_view::npos) add_name(out, name);
  }
  return out;
}

constexpr std::array<std::string_view, 8> k_js_ext = {".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"};

void resolve_js(const FileSet& files, std::string_view path, const Names& names, std::vector<uint32_t>& out,
                ScanBudget& budget) {
  for (const auto& name : names) {
    if (!budget.step(24)) return;
    // Bare names are packages; only relative names can be tracked files.
    if (name.rfind("./", 0) != 0 && name.rfind("../", 0) != 0 && name != "." && name != "..") continue;
    auto base = join(dir_of(path), name);
    if (!base) continue;
    std::vector<std::string> cands{*base};
    for (auto e : k_js_ext) cands.push_back(*base + std::string(e));
    for (auto e : k_js_ext) cands.push_back(*base + "/index" + std::string(e));
    // TypeScript sources import their compiled names: './x.js' is x.ts.
    for (std::string_view js : {".js", ".jsx", ".mjs", ".cjs"})
      if (base->ends_with(js)) {
        std::string stem = base->substr(0, base->size() - js.size());
        for (std::string_view ts : {".ts", ".tsx", ".mts", ".cts"}) cands.push_back(stem + std::string(ts));
      }
    for (const auto& cnd : cands)
      if (long hit = files.find(cnd); hit >= 0) {
        out.push_back(static_cast<uint32_t>(hit));
        break;
      }
  }
}

// ---- Python -------------------------------------------------------------

// `import a.b, c as d` → "a.b", "c"; `from .x import y, z` → ".x:y", ".x:z"
// (the names may be submodules); parenthesised lists may span lines.
Names py_imports(std::string_view text) {
  Names out;
  size_t skip_to = 0;
  each_line(text, [&](std::string_view l, size_t line_end) {
    if (line_end < skip_to) return;
    l = trim_left(l, k_blank);
    auto names_of = [](std::string_view list) {
      Names n;
      for (std::string_view item : split(list, ",")) {
        item = trim_left(item, k_blank);
        size_t stop = 0;
        while (stop < item.size() && (ident_char(item[stop]) || item[stop] == '.')) ++stop;
        if (stop > 0) add_name(n, item.substr(0, stop));
      }
      return n;
    };
    auto cut = [](std::string_view s) { return s.substr(0, std::min(s.find('#'), s.find(';'))); };
    if (eat_word(l, "import")) {
      for (auto& m : names_of(cut(l))) add_name(out, m);
    } else if (eat_word(l, "from")) {
      size_t stop = 0;
      while (stop < l.size() && (ident_char(l[stop]) || l[stop] == '.')) ++stop;
      std::string module(l.substr(0, stop));
      std::string_view rest = trim_left(l.substr(stop), k_blank);
      if (module.empty() || !eat_word(rest, "import")) return;
      std::string_view list = cut(rest);
      if (!rest.empty() && rest.front() == '(') {
        // The list runs to the closing parenthesis, possibly lines below.
        size_t open = static_cast<size_t>(rest.data() - text.data());
        size_t close = text.find(')', open);
        if (close == std::string_view::npos) close = text.size();
        list = text.substr(open + 1, close - open - 1);
        skip_to = close;
      }
      std::string listed;
      each_line(list, [&](std::string_view part, size_t) { listed += std::string(cut(part)) + ","; });
      for (auto& n : names_of(listed)) add_name(out, module + ":" + n);
    }
  });
  return out;
}

// a.b → a/b.py or a/b/__init__.py below `base`.
long py_module(const FileSet& files, std::string_view base, std::string_view dotted) {
  std::string rel(dotted);
  std::replace(rel.begin(), rel.end(), '.', '/');
  auto p = join(base, rel);
  if (!p) return -1;
  if (dotted.empty()) return files.find(p->empty() ? "__init__.py" : *p + "/__init__.py");  // the package itself
  for (std::string_view suffix : {".py", "/__init__.py", ".pyi"}) {
    if (long hit = files.find(*p + std::string(suffix)); hit >= 0) return hit;
  }
  return -1;
}

void resolve_py(const FileSet& files, std::string_view path, const Names& names, std::vector<uint32_t>& out,
                ScanBudget& budget) {
  // sys.path holds the script's folder; projects also run from a folder
  // above it or from src/.
  std::vector<std::optional<std::string>> bases;
  for (auto d : ancestors(dir_of(path))) {
    bases.emplace_back(std::string(d));
    bases.push_back(join(d, "src"));
  }
  const Ranked absolute{std::move(bases)};
  for (const auto& spec : names) {
    if (!budget.step()) return;
    size_t colon = spec.find(':');
    std::string module = spec.substr(0, colon);
    std::string name = colon == std::string::npos ? "" : spec.substr(colon + 1);
    long hit = -1;
    if (module.front() == '.') {
      size_t dots = module.find_first_not_of('.');
      if (dots == std::string::npos) dots = module.size();
      std::string up;
      for (size_t k = 1; k < dots; ++k) up += "../";
      auto b = join(dir_of(path), up);
      if (!b || !budget.step(6)) continue;
      module = module.substr(dots);
      if (!name.empty() && name != "*") hit = py_module(files, *b, module.empty() ? name : module + "." + name);
      if (hit < 0) hit = py_module(files, *b, module);
    } else {
      // The first folder with a hit wins; in it, the imported name as a
      // submodule before the module itself, each as .py, /__init__.py, .pyi.
      std::vector<std::string> dotted;
      if (!name.empty() && name != "*") dotted.push_back(module + "." + name);
      dotted.push_back(module);
      Ranked::Hit best;
      for (const auto& d : dotted) {
        std::string rel = d;
        std::replace(rel.begin(), rel.end(), '.', '/');
        const std::string stem = fold(rel).rest;
        if (stem.empty()) continue;
        for (std::string_view suffix : {".py", "/__init__.py", ".pyi"}) {
          auto h = absolute.find(files, stem + std::string(suffix), budget);
          if (h.file >= 0 && (best.file < 0 || h.rank < best.rank)) best = h;
        }
      }
      hit = best.file;
    }
    if (hit >= 0) out.push_back(static_cast<uint32_t>(hit));
  }
}

// ---- Rust ---------------------------------------------------------------

// "crate::a::{b, c::d as e}" → "crate::a::b", "crate::a::c::d". One pass:
// `prefix` holds the path being read, blanks removed (each open brace marks
// where its items start), so no text is copied per level and each leaf
// costs at most k_max_name bytes. A path that long is cut at a "::" below
// it (a longer one names no file, and resolving takes the longest prefix
// anyway); a tree nested deeper than k_max_use_depth counts as the path
// down to that level.
void expand_use(std::string_view s, Names& out, ScanBudget& budget) {
  std::string prefix;
  std::vector<size_t> marks;  // prefix size at each open brace
  bool consumed = false;      // the current item was a group, already expanded
  bool alias = false;         // past " as ": the rest of the item is a new name
  size_t skip = 0;            // braces open below the depth limit
  auto item_start = [&] { return marks.empty() ? size_t{0} : marks.back(); };
  auto emit = [&] {
    if (out.size() >= k_max_names || !budget.step()) return;
    std::string_view path = prefix;
    if (path.size() >= k_max_name) path = path.substr(0, std::min(path.rfind("::"), path.size()));
    while (path.size() >= 2 && path.substr(path.size() - 2) == "::") path.remove_suffix(2);
    add_name(out, path);
  };
  auto leaf = [&] {
    if (!consumed && prefix.size() > item_start()) emit();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (skip > 0) {
      skip += c == '{';
      skip -= c == '}';
      continue;
    }
    if (alias && c != ',' && c != '{' && c != '}') continue;
    if (space(c)) {
      if (s.substr(i, 4) == " as " && prefix.size() > item_start()) alias = true;
      continue;
    }
    if (c == '{') {
      alias = false;
      if (marks.size() >= k_max_use_depth) {
        emit();
        skip = 1;
        consumed = true;
        continue;
      }
      marks.push_back(prefix.size());
      consumed = false;
    } else if (c == ',' && !marks.empty()) {
      leaf();
      prefix.resize(item_start());
      consumed = alias = false;
    } else if (c == '}') {
      if (marks.empty()) break;  // unbalanced: the statement ends here
      leaf();
      prefix.resize(marks.back());
      marks.pop_back();
      consumed = true;  // the group stood for the whole item around it
      alias = false;
    } else if (prefix.size() < k_max_name) {
      prefix += c;
    }
  }
  if (marks.empty()) leaf();
}

// `mod x;` → "mod:x"; `use crate::a::b;` → "crate::a::b" (also super::, self::).
Names rust_imports(std::string_view text, ScanBudget& budget) {
  Names out;
  size_t skip_to = 0;
  each_line(text, [&](std::string_view l, size_t line_end) {
    if (line_end < skip_to) return;  // inside a use statement already read
    l = trim_left(l, k_blank);
    if (eat_word(l, "pub") && !l.empty() && l.front() == '(') l = trim_left(l.substr(l.find(')') + 1), k_blank);
    if (eat_word(l, "mod")) {
      size_t stop = 0;
      while (stop < l.size() && ident_char(l[stop])) ++stop;
      if (stop > 0 && trim_left(l.substr(stop), k_blank).substr(0, 1) == ";") add_name(out, "mod:" + std::string(l.substr(0, stop)));
    } else if (eat_word(l, "use")) {
      // A use statement may run over several lines up to its semicolon.
      size_t at = static_cast<size_t>(l.data() - text.data());
      size_t semi = text.find(';', at);
      if (semi == std::string_view::npos) {
        skip_to = text.size();  // no statement ends below: nothing more to find
        return;
      }
      skip_to = semi;
      expand_use(text.substr(at, semi - at), out, budget);
    }
  });
  return out;
}

bool rust_root_file(std::string_view name) { return name == "mod.rs" || name == "lib.rs" || name == "main.rs"; }

// The folder that holds the submodules of the module in `path`.
std::string rust_module_dir(std::string_view path) {
  std::string_view name = file_name(path);
  if (rust_root_file(name)) return std::string(dir_of(path));
  std::string stem(path.substr(0, path.size() - 3));  // without ".rs"
  return stem;
}

long rust_module_file(const FileSet& files, std::string_view dir, std::string_view mod) {
  auto base = join(dir, mod);
  if (!base) return -1;
  if (long hit = files.find(*base + ".rs"); hit >= 0) return hit;
  return files.find(*base + "/mod.rs");
}

// The longest prefix of `segments` below `dir` that names a module file,
// else `fallback`. Walks down from the shortest prefix and stops at the
// first one that is no tracked folder: a longer one cannot name a file.
long rust_path(const FileSet& files, std::string_view dir, const std::vector<std::string>& segments, long fallback,
               ScanBudget& budget) {
  long best = fallback;
  std::string at(dir);
  for (const auto& seg : segments) {
    if (seg.empty() || seg == "." || seg == ".." || seg.find('/') != std::string::npos || !budget.step()) break;
    if (!at.empty()) at += '/';
    at += seg;
    if (long hit = files.find(at + ".rs"); hit >= 0) best = hit;
    else if (long sub = files.find(at + "/mod.rs"); sub >= 0) best = sub;
    if (!files.has_dir(at)) break;
  }
  return best;
}

void resolve_rust(const FileSet& files, std::string_view path, const Names& names, std::vector<uint32_t>& out,
                  ScanBudget& budget) {
  const std::string mod_dir = rust_module_dir(path);
  // The crate root: the nearest folder above with a tracked lib.rs or main.rs.
  std::string crate_dir;
  long crate_file = -1;
  for (auto d : ancestors(dir_of(path))) {
    for (std::string_view f : {"lib.rs", "main.rs"})
      if (auto cand = join(d, f); cand && (crate_file = files.find(*cand)) >= 0) break;
    if (crate_file >= 0) {
      crate_dir = std::string(d);
      break;
    }
  }
  for (const auto& spec : names) {
    if (!budget.step()) return;
    long hit = -1;
    if (spec.rfind("mod:", 0) == 0) {
      hit = rust_module_file(files, mod_dir, spec.substr(4));
    } else {
      std::vector<std::string> seg;
      for (std::string_view part : split(spec, "::")) seg.emplace_back(part);
      std::string first = seg.front();
      seg.erase(seg.begin());
      if (first == "crate" && crate_file >= 0) hit = rust_path(files, crate_dir, seg, crate_file, budget);
      else if (first == "self") hit = rust_path(files, mod_dir, seg, -1, budget);
      else if (first == "super") {
        // The parent module's submodules live in `parent`; the parent itself
        // is parent.rs, parent/mod.rs, or the crate root.
        std::string parent(dir_of(path));
        if (rust_root_file(file_name(path))) parent = std::string(dir_of(parent));
        long parent_file = parent == crate_dir ? crate_file : files.find(parent + ".rs");
        if (parent_file < 0) parent_file = files.find(parent + "/mod.rs");
        hit = rust_path(files, parent, seg, parent_file, budget);
      } else if (crate_file >= 0) {
        // 2015-edition paths name the crate's own modules without `crate::`.
        seg.insert(seg.begin(), first);
        hit = rust_path(files, crate_dir, seg, -1, budget);
      }
    }
    if (hit >= 0) out.push_back(static_cast<uint32_t>(hit));
  }
}

// ---- Go -----------------------------------------------------------------

Names go_imports(std::string_view text) {
  Names out;
  auto strings_in = [&](std::string_view s) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '"' && s[i] != '`') continue;
      size_t end = s.find(s[i], i + 1);
      if (end == std::string_view::npos) return;
      if (end > i + 1) add_name(out, s.substr(i + 1, end - i - 1));
      i = end;
    }
  };
  size_t skip_to = 0;
  each_line(text, [&](std::string_view l, size_t line_end) {
    if (line_end < skip_to) return;  // inside an import block already read
    l = trim_left(l, k_blank);
    if (!eat_word(l, "import")) return;
    if (!l.empty() && l.front() == '(') {
      size_t open = static_cast<size_t>(l.data() - text.data());
      size_t close = text.find(')', open);
      skip_to = close == std::string_view::npos ? text.size() : close;
      strings_in(text.substr(open, close == std::string_view::npos ? std::string_view::npos : close - open));
    } else {
      strings_in(l.substr(0, l.find("//")));
    }
  });
  return out;
}

void resolve_go(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path, const Names& names,
                std::vector<uint32_t>& out, ScanBudget& budget) {
  for (const auto& name : names) {
    if (!budget.step(1 + mods.size())) return;
    const GoModule* best = nullptr;
    for (const auto& m : mods)
      if ((name == m.path || name.rfind(m.path + "/", 0) == 0) && (!best || m.path.size() > best->path.size()))
        best = &m;
    if (!best) continue;
    auto dir = join(best->dir, std::string_view(name).substr(best->path.size()));
    if (!dir) continue;
    // A package is every non-test .go file of its folder.
    const auto& in_dir = files.in_dir(*dir);
    if (!budget.step(in_dir.size())) return;
    for (uint32_t i : in_dir) {
      std::string_view p = files.paths()[i];
      if (p.ends_with(".go") && !p.ends_with("_test.go") && p != path) out.push_back(i);
    }
  }
}

}  // namespace

Lang language_of(std::string_view path) {
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return Lang::other;
  std::string_view e = path.substr(dot + 1);
  for (std::string_view c : {"c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "inl", "tcc", "m", "mm"})
    if (e == c) return Lang::c;
  for (std::string_view j : {"js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte"})
    if (e == j) return Lang::js;
  if (e == "py" || e == "pyi") return Lang::python;
  if (e == "rs") return Lang::rust;
  if (e == "go") return Lang::go;
  return Lang::other;
}

bool ScanBudget::bytes(size_t n) {
  m_bytes += n;
  if (m_bytes > m_limits.bytes && m_why.empty()) m_why = "bytes scanned";
  return step();
}

bool ScanBudget::step(size_t n) {
  m_steps += n;
  if (m_steps > m_limits.steps && m_why.empty()) m_why = "lookups";
  m_since_check += n;
  if (m_since_check >= 4096) check_time();
  return m_why.empty();
}

bool ScanBudget::edges(size_t n) {
  m_edges += n;
  if (m_edges > m_limits.edges && m_why.empty()) m_why = "dependencies";
  return m_why.empty();
}

bool ScanBudget::check_time() {
  m_since_check = 0;
  if (m_why.empty() && m_past_deadline && m_past_deadline()) m_why = "time";
  return m_why.empty();
}

FileSet::FileSet(std::vector<std::string> paths) : m_paths(std::move(paths)) {
  m_index.reserve(m_paths.size());
  for (uint32_t i = 0; i < m_paths.size(); ++i) {
    std::string_view p = m_paths[i];
    m_index.emplace(p, i);
    m_dirs[dir_of(p)].push_back(i);
    m_names[file_name(p)].push_back(i);
    // Each folder once: a deep tree costs its folders, not files × depth.
    for (std::string_view d = dir_of(p); !d.empty() && m_all_dirs.insert(d).second;) d = dir_of(d);
  }
}

long FileSet::find(std::string_view path) const {
  auto it = m_index.find(path);
  return it == m_index.end() ? -1 : static_cast<long>(it->second);
}

const std::vector<uint32_t>& FileSet::in_dir(std::string_view dir) const {
  static const std::vector<uint32_t> k_none;
  auto it = m_dirs.find(dir);
  return it == m_dirs.end() ? k_none : it->second;
}

const std::vector<uint32_t>& FileSet::named(std::string_view name) const {
  static const std::vector<uint32_t> k_none;
  auto it = m_names.find(name);
  return it == m_names.end() ? k_none : it->second;
}

std::string go_module_path(std::string_view go_mod) {
  std::string found;
  each_line(go_mod, [&](std::string_view l, size_t) {
    l = trim_left(l, k_blank);
    if (!found.empty() || !eat_word(l, "module")) return;
    l = l.substr(0, l.find("//"));
    l = trim_right(l, k_blank);
    if (l.size() >= 2 && (l.front() == '"' || l.front() == '`')) l = l.substr(1, l.size() - 2);
    found = std::string(l);
  });
  return found;
}

std::vector<GoModule> go_modules(const FileSet& files, const std::function<std::string(uint32_t)>& read) {
  std::vector<GoModule> mods;
  for (uint32_t i = 0; i < files.paths().size(); ++i) {
    std::string_view p = files.paths()[i];
    if (file_name(p) != "go.mod") continue;
    std::string m = go_module_path(read(i));
    if (!m.empty()) mods.push_back({std::string(dir_of(p)), m});
  }
  std::sort(mods.begin(), mods.end(), [](const GoModule& a, const GoModule& b) { return a.dir.size() > b.dir.size(); });
  return mods;
}

namespace {

Names scan_names(Lang lang, std::string_view text, ScanBudget& budget) {
  switch (lang) {
    case Lang::c: return c_includes(text);
    case Lang::js: return js_imports(text);
    case Lang::python: return py_imports(text);
    case Lang::rust: return rust_imports(text, budget);
    case Lang::go: return go_imports(text);
    case Lang::other: break;
  }
  return {};
}

}  // namespace

std::vector<std::string> import_names(Lang lang, std::string_view text) {
  ScanBudget budget;
  return scan_names(lang, text, budget);
}

std::vector<uint32_t> dependencies(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path,
                                   std::string_view text, ScanBudget& budget) {
  const Lang lang = language_of(path);
  if (!budget.bytes(text.size())) return {};
  Names names = scan_names(lang, text, budget);
  std::vector<uint32_t> out;
  if (names.empty() || !budget.step(names.size())) return out;
  // The same name twice resolves the same way: once is enough.
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  switch (lang) {
    case Lang::c: resolve_c(files, path, names, out, budget); break;
    case Lang::js: resolve_js(files, path, names, out, budget); break;
    case Lang::python: resolve_py(files, path, names, out, budget); break;
    case Lang::rust: resolve_rust(files, path, names, out, budget); break;
    case Lang::go: resolve_go(files, mods, path, names, out, budget); break;
    case Lang::other: break;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  long self = files.find(path);
  if (self >= 0) out.erase(std::remove(out.begin(), out.end(), static_cast<uint32_t>(self)), out.end());
  budget.edges(out.size());
  return out;
}

std::vector<uint32_t> dependencies(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path,
                                   std::string_view text) {
  ScanBudget budget;
  return dependencies(files, mods, path, text, budget);
}

}  // namespace kai
