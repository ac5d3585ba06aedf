#pragma once
// The small string helpers every room uses, once. Prefixes and suffixes are
// std::string_view's own starts_with and ends_with.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kai {

// `s` without the characters of `chars` at its start, its end, or both.
std::string_view trim_left(std::string_view s, std::string_view chars = " \t");
std::string_view trim_right(std::string_view s, std::string_view chars = " \t");
std::string_view trim(std::string_view s, std::string_view chars = " \t");

// The pieces of `s` between each `sep`, empty ones included: "a//b" on "/"
// is "a", "", "b"; "" is one empty piece.
std::vector<std::string_view> split(std::string_view s, std::string_view sep);
// The same into `out`, cleared first: a caller that splits many strings
// keeps one vector's room.
void split_into(std::string_view s, std::string_view sep, std::vector<std::string_view>& out);

// `s` with ASCII letters lowered; other bytes (UTF-8 included) unchanged.
std::string ascii_lower(std::string_view s);

// `bytes` as lowercase hex, two digits a byte (a digest, a MAC).
std::string lower_hex(std::string_view bytes);

// A folder of generated or downloaded files by its name: node_modules,
// target, dist, build. kaicoder never writes under one (lib/paths), a run
// may (lib/gate/runs), the walks over the tree pass them by (lib/paths
// walk_skips), and the shell checker counts them among the folders a build
// recreates.
bool is_generated_dir(std::string_view name);

// How many single-character edits (insert, delete, replace, or swap of two
// neighbours) turn `a` into `b`: "lsit" is 1 from "list".
size_t edit_distance(std::string_view a, std::string_view b);

// The `candidates` closest to `word`, for "did you mean": those at the
// smallest edit distance when it is small for the word's length (at most
// 2, and less than half the word), else those `word` is a prefix of; empty
// when nothing is close. In the candidates' order.
std::vector<std::string> closest_words(std::string_view word, const std::vector<std::string>& candidates);

// "1 line", "2 lines": `n` and the noun, plural unless n is 1.
std::string count_of(size_t n, std::string_view singular, std::string_view plural = {});

// `s` as a number of type T, the whole of it (no blank, nothing after it);
// nullopt otherwise, or when it does not fit.
template <typename T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace kai
