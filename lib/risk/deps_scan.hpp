#pragma once
// What the import scanners of lib/risk/deps share: path folding, the ranked
// lookup of a name in the tracked files, line walking, and the scanners that
// live in a file of their own (Rust and Go, lib/risk/deps_rust_go.cpp). Private to
// the deps room; the public interface is lib/risk/deps.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lib/risk/deps.hpp"

namespace kai::deps_scan {

using Names = std::vector<std::string>;

constexpr std::string_view k_blank = " \t\r\n\f\v";

inline bool ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}
inline bool space(char c) { return k_blank.find(c) != std::string_view::npos; }

inline std::string_view dir_of(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : path.substr(0, slash);
}

inline std::string_view file_name(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `rel` from folder `dir`, with "." and ".." folded; nullopt when it climbs
// out of the repository.
std::optional<std::string> join(std::string_view dir, std::string_view rel);

// The folder itself, then each folder above it up to the top ("").
std::vector<std::string_view> ancestors(std::string_view dir);

// The names one file imports, bounded (see k_max_name, k_max_names).
void add_name(Names& out, std::string_view name);

// A relative name with "." and ".." folded: `up` folders to climb first,
// then `rest`. "a/../../b" is up 1, rest "b".
struct Folded {
  size_t up = 0;
  std::string rest;
};
Folded fold(std::string_view rel);

// `dir` without its last `up` folders; nullopt when it has fewer.
std::optional<std::string_view> climb(std::string_view dir, size_t up);

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

  Hit find(const FileSet& files, std::string_view rest, ScanBudget& budget) const;

private:
  std::vector<std::optional<std::string>> m_dirs;
  mutable std::unordered_map<std::string_view, size_t> m_rank;
};

// Calls `line` with each line of `text` and the offset where it ends.
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
bool eat_word(std::string_view& s, std::string_view word);

// ---- Rust and Go (lib/risk/deps_rust_go.cpp) ----
Names rust_imports(std::string_view text, ScanBudget& budget);
void resolve_rust(const FileSet& files, std::string_view path, const Names& names, std::vector<uint32_t>& out,
                  ScanBudget& budget);
Names go_imports(std::string_view text);
void resolve_go(const FileSet& files, const std::vector<GoModule>& mods, std::string_view path, const Names& names,
                std::vector<uint32_t>& out, ScanBudget& budget);

}  // namespace kai::deps_scan
