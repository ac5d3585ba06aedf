#include "lib/util/json_bounded.hpp"

namespace kai {

bool json_nesting_within(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character, whatever it is
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        if (++depth > max_depth) return false;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return true;
}

BoundedJson parse_bounded_json(std::string_view text, size_t max_depth) {
  BoundedJson out;
  if (!json_nesting_within(text, max_depth)) {
    out.status = JsonStatus::too_deep;
    return out;
  }
  // JSON never holds a raw NUL; a parser that stopped at one would read
  // less than was sent.
  if (text.find('\0') != std::string_view::npos) return out;
  out.value = nlohmann::json::parse(text, nullptr, false);
  if (!out.value.is_discarded()) out.status = JsonStatus::ok;
  return out;
}

}  // namespace kai
