#pragma once
// JSON from a hostile writer (an MCP line, a hook payload, a request on
// stdin), parsed only when its nesting is bounded. nlohmann::json copies,
// compares and dumps a value recursively, so a line of a million '[' that
// parsed would end the process on its first copy: the text is scanned
// first (brackets outside strings counted, nothing allocated), and a text
// nested deeper than the bound is refused before the parser sees it.
//
//   auto p = parse_bounded_json(line);
//   if (p.status == JsonStatus::too_deep) … refuse, naming the bound
//   else if (p.status == JsonStatus::not_json) … refuse as not JSON
//   else use p.value

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kai {

// How deep a message kaicoder reads may nest arrays and objects. Every
// message of every door nests less than a dozen levels.
inline constexpr size_t k_json_max_depth = 64;

enum class JsonStatus { ok, not_json, too_deep };

struct BoundedJson {
  JsonStatus status = JsonStatus::not_json;
  nlohmann::json value = nlohmann::json(nlohmann::json::value_t::discarded);  // discarded unless ok
};

// Whether `text` nests arrays and objects at most `max_depth` deep,
// counting brackets outside JSON strings. Says nothing else about the text.
bool json_nesting_within(std::string_view text, size_t max_depth = k_json_max_depth);

// `text` parsed (no comments, no exceptions) when it nests at most
// `max_depth` deep. A NUL byte anywhere is not JSON.
BoundedJson parse_bounded_json(std::string_view text, size_t max_depth = k_json_max_depth);

}  // namespace kai
