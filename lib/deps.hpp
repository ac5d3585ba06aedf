#pragma once
// Import scanners for the blast radius (lib/risk.hpp): which tracked files
// one source file depends on, per language. Text in, file indices out; no
// I/O here, so every scanner is tested on strings.
//
// Usage: FileSet files{tracked_paths};
//        auto mods = go_modules(files, read_go_mod);
//        std::vector<uint32_t> d = dependencies(files, mods, "src/a.c", text);
//
// Every scanner is a best-effort lexical scan, not a parser: it finds the
// usual spellings of an import with a literal name and resolves it to a file
// that is in the set. Names that resolve to nothing tracked (system headers,
// packages, the standard library) are dropped. Comments are not skipped, so
// a commented-out import still counts: the scan errs towards "depends".

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kai {

enum class Lang { other, c, js, python, rust, go };

// By extension: .c .h .cpp .hpp … → c; .js .ts .tsx .jsx .mjs .cjs → js;
// .py → python; .rs → rust; .go → go.
Lang language_of(std::string_view path);

// The tracked files of one repository, repository-relative with '/'.
class FileSet {
public:
  explicit FileSet(std::vector<std::string> paths);
  const std::vector<std::string>& paths() const { return m_paths; }
  // Index of an exact path; -1 when it is not in the set.
  long find(std::string_view path) const;
  // Indices of the files directly inside `dir` ("" = top level).
  const std::vector<uint32_t>& in_dir(std::string_view dir) const;

private:
  std::vector<std::string> m_paths;
  std::unordered_map<std::string_view, uint32_t> m_index;
  std::unordered_map<std::string_view, std::vector<uint32_t>> m_dirs;
};

// One Go module: the folder of its go.mod and its `module` path.
struct GoModule {
  std::string dir, path;
};

// The `module` line of a go.mod; empty when there is none.
std::string go_module_path(std::string_view go_mod);

// Every tracked go.mod whose text `read` returns, longest folder first (so
// the innermost module wins for a nested one).
std::vector<GoModule> go_modules(const FileSet& files, const std::function<std::string(uint32_t)>& read);

// The raw names `text` imports, as written (for tests and diagnostics).
std::vector<std::string> import_names(Lang lang, std::string_view text);

// The tracked files that the file at `path`, holding `text`, depends on:
// sorted, without duplicates, never `path` itself.
std::vector<uint32_t> dependencies(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path,
                                   std::string_view text);

}  // namespace kai
