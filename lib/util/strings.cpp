#include "lib/util/strings.hpp"

#include <algorithm>

namespace kai {

std::string_view trim_left(std::string_view s, std::string_view chars) {
  size_t b = s.find_first_not_of(chars);
  return b == std::string_view::npos ? std::string_view() : s.substr(b);
}

std::string_view trim_right(std::string_view s, std::string_view chars) {
  size_t e = s.find_last_not_of(chars);
  return e == std::string_view::npos ? std::string_view() : s.substr(0, e + 1);
}

std::string_view trim(std::string_view s, std::string_view chars) { return trim_right(trim_left(s, chars), chars); }

std::vector<std::string_view> split(std::string_view s, std::string_view sep) {
  std::vector<std::string_view> out;
  split_into(s, sep, out);
  return out;
}

void split_into(std::string_view s, std::string_view sep, std::vector<std::string_view>& out) {
  out.clear();
  size_t start = 0;
  for (;;) {
    size_t end = sep.empty() ? std::string_view::npos : s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      return;
    }
    out.push_back(s.substr(start, end - start));
    start = end + sep.size();
  }
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool is_generated_dir(std::string_view name) {
  return name == "node_modules" || name == "target" || name == "dist" || name == "build";
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment over three rows: words here are short.
  std::vector<size_t> two(b.size() + 1), one(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) one[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[b.size()];
}

std::vector<std::string> closest_words(std::string_view word, const std::vector<std::string>& candidates) {
  std::vector<std::string> out;
  if (word.empty()) return out;
  size_t best = std::string_view::npos;
  for (const auto& c : candidates) best = std::min(best, edit_distance(word, c));
  if (best <= 2 && best * 2 < word.size())
    for (const auto& c : candidates)
      if (edit_distance(word, c) == best) out.push_back(c);
  if (out.empty())
    for (const auto& c : candidates)
      if (c.size() > word.size() && std::string_view(c).starts_with(word)) out.push_back(c);
  return out;
}

std::string count_of(size_t n, std::string_view singular, std::string_view plural) {
  std::string s = std::to_string(n) + " ";
  if (n == 1) return s.append(singular);
  if (!plural.empty()) return s.append(plural);
  return s.append(singular).append("s");
}

std::string lower_hex(std::string_view bytes) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out(2 * bytes.size(), '0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = k_hex[b >> 4];
    out[2 * i + 1] = k_hex[b & 0xf];
  }
  return out;
}

}  // namespace kai
