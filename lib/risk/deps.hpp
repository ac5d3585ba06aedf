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
//
// Tracked files are written by whoever committed them, so every scanner is
// linear in its text and bounded: a name longer than k_max_name bytes is
// dropped, a file yields at most k_max_names names (the rest are not
// resolved, as for a blob too big to scan), Rust `use` trees are expanded
// k_max_use_depth levels deep (deeper ones count as their prefix), and each
// name is resolved with a bounded number of lookups. What a whole scan may
// spend is a ScanBudget; once it runs out, the file being scanned has no
// complete answer and the caller stops.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kai {

constexpr size_t k_max_name = 4096;     // bytes: PATH_MAX; longer is no file name
constexpr size_t k_max_names = 16384;   // import names kept from one file
constexpr size_t k_max_use_depth = 32;  // nesting of one Rust use tree

// What one whole scan may spend, shared by every file it reads. Scanners
// and resolvers charge their work; once a limit is reached spent() is true
// and why() names it. The deadline is a callback so that lib/ never reads
// the clock itself (lib/risk.cpp builds it from the injected Clock); it is
// asked every few thousand steps.
class ScanBudget {
public:
  struct Limits {
    size_t bytes = size_t{256} << 20;  // text read and scanned
    size_t steps = 100'000'000;        // names found and candidate paths tried
    size_t edges = 20'000'000;         // dependencies kept
  };
  ScanBudget() = default;
  explicit ScanBudget(Limits limits, std::function<bool()> past_deadline = {})
      : m_limits(limits), m_past_deadline(std::move(past_deadline)) {}
  // Each returns false once the budget is spent.
  bool bytes(size_t n);
  bool step(size_t n = 1);
  bool edges(size_t n);
  // Asks the deadline now.
  bool check_time();
  bool spent() const { return !m_why.empty(); }
  // "time", "bytes scanned", "lookups" or "dependencies"; empty while not spent.
  const std::string& why() const { return m_why; }
  size_t bytes_used() const { return m_bytes; }

private:
  Limits m_limits;
  std::function<bool()> m_past_deadline;
  size_t m_bytes = 0, m_steps = 0, m_edges = 0, m_since_check = 0;
  std::string m_why;
};

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
  // Indices of the files whose last path component is `name`.
  const std::vector<uint32_t>& named(std::string_view name) const;
  // Whether some tracked file lies (at any depth) below folder `dir`.
  bool has_dir(std::string_view dir) const { return m_all_dirs.count(dir) > 0; }

private:
  std::vector<std::string> m_paths;
  std::unordered_map<std::string_view, uint32_t> m_index;
  std::unordered_map<std::string_view, std::vector<uint32_t>> m_dirs, m_names;
  std::unordered_set<std::string_view> m_all_dirs;
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
// sorted, without duplicates, never `path` itself. Charged to `budget`;
// when it is spent() afterwards, the answer is incomplete.
std::vector<uint32_t> dependencies(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path,
                                   std::string_view text, ScanBudget& budget);
// The same with a budget of its own (the default limits, no deadline).
std::vector<uint32_t> dependencies(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path,
                                   std::string_view text);

}  // namespace kai
