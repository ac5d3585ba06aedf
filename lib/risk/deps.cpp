#include "lib/risk/deps.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "lib/risk/deps_scan.hpp"
#include "lib/util/strings.hpp"

namespace kai {
using namespace deps_scan;
namespace {

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
    if (auto hit = it->second.find(files, f.rest, budget); hit.file >= 0)
      out.push_back(static_cast<uint32_t>(hit.file));
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

}  // namespace

Lang language_of(std::string_view path) {
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return Lang::other;
  std::string_view e = path.substr(dot + 1);
  for (std::string_view c :
       {"c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "inl", "tcc", "m", "mm"})
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
