#include "lib/util/strings.hpp"

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
  size_t start = 0;
  for (;;) {
    size_t end = sep.empty() ? std::string_view::npos : s.find(sep, start);
    if (end == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
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

}  // namespace kai
