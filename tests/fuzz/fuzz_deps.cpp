// libFuzzer target for the import scanners (lib/risk/deps.hpp). Built and run by
// tests/fuzz/run.sh. The first byte picks the language, the rest is the
// text of a tracked file. Besides crashes, leaks, undefined behaviour and
// hangs, it checks what the blast radius relies on:
//   - the dependencies are tracked files, sorted, unique, never the file itself;
//   - names are bounded (k_max_names of at most k_max_name bytes);
//   - the work is linear: a budget of a few lookups per input byte is
//     never spent.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/risk/deps.hpp"

namespace {

// A small tree with a file of every language, nested folders, include/ and
// src/ layouts, a Rust crate, a Python package and a Go module.
const std::vector<std::string>& tracked() {
  static const std::vector<std::string> t = {
      "a/b/c/x.c",    "a/b/include/h.h", "a/h.h",    "include/a.h",  "src/lib.rs",         "src/a.rs",    "src/a/b.rs",
      "src/a/mod.rs", "web/app.ts",      "web/x.ts", "web/index.js", "py/pkg/__init__.py", "py/pkg/m.py", "py/main.py",
      "go.mod",       "main.go",         "pkg/p.go", "pkg/q.go",     "src/main.rs"};
  return t;
}

const char* const k_paths[] = {"a/b/c/x.c", "web/app.ts", "py/main.py", "src/a.rs", "main.go", "src/main.rs"};
const kai::Lang k_langs[] = {kai::Lang::c,    kai::Lang::js, kai::Lang::python,
                             kai::Lang::rust, kai::Lang::go, kai::Lang::rust};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t pick = data[0] % std::size(k_paths);
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  static const kai::FileSet files{tracked()};
  static const std::vector<kai::GoModule> mods = {{"", "example.com/m"}};

  auto names = kai::import_names(k_langs[pick], text);
  if (names.size() > kai::k_max_names) __builtin_trap();
  for (const auto& n : names)
    if (n.empty() || n.size() > kai::k_max_name) __builtin_trap();

  kai::ScanBudget::Limits l;
  l.bytes = text.size() + 1;
  l.steps = 64 * text.size() + 4096;
  kai::ScanBudget budget{l};
  const std::string path = k_paths[pick];
  auto deps = kai::dependencies(files, mods, path, text, budget);
  if (budget.spent()) __builtin_trap();
  if (!std::is_sorted(deps.begin(), deps.end()) || std::adjacent_find(deps.begin(), deps.end()) != deps.end())
    __builtin_trap();
  for (uint32_t d : deps)
    if (d >= files.paths().size() || files.paths()[d] == path) __builtin_trap();
  return 0;
}
