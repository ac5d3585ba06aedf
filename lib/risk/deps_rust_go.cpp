// The Rust and Go import scanners of lib/risk/deps.

#include <algorithm>

#include "lib/risk/deps_scan.hpp"
#include "lib/util/strings.hpp"

namespace kai::deps_scan {

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
      if (stop > 0 && trim_left(l.substr(stop), k_blank).substr(0, 1) == ";")
        add_name(out, "mod:" + std::string(l.substr(0, stop)));
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
    if (long hit = files.find(at + ".rs"); hit >= 0)
      best = hit;
    else if (long sub = files.find(at + "/mod.rs"); sub >= 0)
      best = sub;
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
      if (first == "crate" && crate_file >= 0)
        hit = rust_path(files, crate_dir, seg, crate_file, budget);
      else if (first == "self")
        hit = rust_path(files, mod_dir, seg, -1, budget);
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

}  // namespace kai::deps_scan
