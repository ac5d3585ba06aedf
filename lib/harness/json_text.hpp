#pragma once
// Harness settings files edited as text, so that an edit keeps every key,
// every comment and the owner's layout: `.claude/settings.json`,
// `.gemini/settings.json` and the others are JSON that people annotate
// (`//` and `/* */` comments, trailing commas), which a parse-and-dump would
// lose. Only what is asked is inserted or replaced; the rest of the text is
// left byte for byte.
//
//   auto t = JsonText::parse(existing);         // "" is an empty object
//   t->append({"permissions", "deny"}, "Write");
//   t->set({"mcpServers", "kaicoder"}, server);
//   std::string out = t->text();

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/result.hpp"

namespace kai::harness {

using JsonPath = std::vector<std::string>;

class JsonText {
public:
  // Errc::usage naming line and column when `text` is not JSON (comments
  // and trailing commas allowed) or its top is not an object. Empty or
  // blank text is an empty object.
  static Result<JsonText> parse(std::string text);

  const std::string& text() const { return m_text; }
  // The document as a value (comments dropped), for checking what it holds.
  const nlohmann::json& value() const { return m_value; }

  // Set the member at `path` to `v`, creating the objects on the way.
  // Errc::conflict when something on the way is not an object.
  Status set(const JsonPath& path, const nlohmann::json& v);
  // Append `v` to the array at `path`, creating it (and the objects on the
  // way). Errc::conflict when it exists and is not an array.
  Status append(const JsonPath& path, const nlohmann::json& v);
  // Remove every item of the array at `path` for which `drop` is true,
  // with its comma; nothing when there is no array there.
  Status remove_items(const JsonPath& path, const std::function<bool(const nlohmann::json&)>& drop);

private:
  explicit JsonText(std::string text) : m_text(std::move(text)) {}
  Status reparse();
  std::string m_text;
  nlohmann::json m_value;
};

// The value at `path` in `j`, or null when any step is missing.
const nlohmann::json* json_at(const nlohmann::json& j, const JsonPath& path);

}  // namespace kai::harness
