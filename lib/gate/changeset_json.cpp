// A changeset as --json-input gives it (lib/gate/changeset.hpp): {"changes":
// [...], "why", "agent", "summary"}, each change checked field by field.

#include "lib/gate/changeset.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/util/json_bounded.hpp"
#include "lib/util/text.hpp"

namespace kai {
using json = nlohmann::json;

bool is_changeset_json(std::string_view text) {
  json j = parse_bounded_json(text).value;
  return j.is_object() && j.contains("changes");
}

namespace {

Error bad_change(size_t i, std::string_view what) {
  return make_error(Errc::usage, fmt::format("--json-input: changes[{}]: {}", i, what),
                    "see kaicoder-propose(1), JSON INPUT, for the fields of each change");
}

// "0755", "755", "100755", 755 (read as octal digits): 0644 or 0755.
std::optional<unsigned> parse_mode(const json& v) {
  std::string s = v.is_string()            ? v.get<std::string>()
                  : v.is_number_unsigned() ? std::to_string(v.get<unsigned>())
                                           : "";
  if (s.size() > 3 && (s.starts_with("100") || s.starts_with("0"))) s = s.substr(s.size() - 3);
  if (s == "755") return 0755u;
  if (s == "644") return 0644u;
  return std::nullopt;
}

Result<ChangeRequest> change_from(const json& c, size_t i) {
  if (!c.is_object()) return bad_change(i, "each change is an object");
  static const char* k_known[] = {"op",      "path",           "target", "replacement", "replace_all",
                                  "content", "content_base64", "to",     "mode"};
  ChangeRequest r;
  for (const auto& [key, v] : c.items()) {
    if (std::find_if(std::begin(k_known), std::end(k_known), [&name = key](const char* k) { return name == k; }) ==
        std::end(k_known))
      return bad_change(i, fmt::format("unknown field '{}'", key));
    if (v.is_null()) continue;
    if (key == "replace_all") {
      if (!v.is_boolean()) return bad_change(i, "'replace_all' must be true or false");
      r.replace_all = v.get<bool>();
    } else if (key == "mode") {
      r.mode = parse_mode(v);
      if (!r.mode) return bad_change(i, "'mode' must be \"0644\" or \"0755\"");
    } else if (!v.is_string()) {
      return bad_change(i, fmt::format("'{}' must be a string", key));
    } else if (key == "content_base64") {
      if (r.content) return bad_change(i, "give 'content' or 'content_base64', not both");
      r.content = base64_decode(v.get<std::string>());
      if (!r.content) return bad_change(i, "'content_base64' is not base64");
    } else {
      std::string s = v.get<std::string>();
      if (key == "op")
        r.op = s;
      else if (key == "path")
        r.path = s;
      else if (key == "to")
        r.to = s;
      else if (key == "target")
        r.target = s;
      else if (key == "replacement")
        r.replacement = s;
      else {
        if (r.content) return bad_change(i, "give 'content' or 'content_base64', not both");
        r.content = s;
      }
    }
  }
  if (r.path.empty()) return bad_change(i, "no 'path'");
  const bool edit = r.op == "edit", write = r.op == "write", rename = r.op == "rename", mode = r.op == "mode";
  if (!edit && !write && !rename && !mode && r.op != "delete")
    return bad_change(i, r.op.empty() ? std::string("no 'op'") : fmt::format("unknown op '{}'", r.op));
  if (edit != (r.target.has_value() || r.replacement.has_value()) || (edit && (!r.target || !r.replacement)))
    return bad_change(i, "'target' and 'replacement' go together, with op edit");
  if (edit && r.target->empty()) return bad_change(i, "'target' is empty");
  if (r.replace_all && !edit) return bad_change(i, "'replace_all' goes with op edit");
  if (write != r.content.has_value()) return bad_change(i, "'content' (or 'content_base64') goes with op write");
  if (rename != !r.to.empty()) return bad_change(i, "'to' goes with op rename");
  if (mode && !r.mode) return bad_change(i, "op mode needs 'mode'");
  if (r.op == "delete" && r.mode) return bad_change(i, "'mode' does not go with op delete");
  return r;
}

}  // namespace

Result<ChangesetRequest> changeset_from_json(std::string_view text) {
  json j = parse_bounded_json(text).value;  // discarded when not JSON or nested too deep
  if (j.is_discarded() || !j.is_object())
    return make_error(Errc::usage, "--json-input expects one JSON object on stdin",
                      R"(send {"changes": [{"op": "edit", "path": …, "target": …, "replacement": …}, …], "why": …})");
  ChangesetRequest r;
  for (const auto& [key, v] : j.items()) {
    if (key == "changes") {
      if (!v.is_array() || v.empty())
        return make_error(Errc::usage, "--json-input: 'changes' must be a list of changes");
      for (size_t i = 0; i < v.size(); ++i) {
        auto c = change_from(v[i], i);
        if (!c) return c.error();
        r.changes.push_back(std::move(*c));
      }
    } else if (key == "why" || key == "agent" || key == "summary") {
      if (v.is_null()) continue;
      if (!v.is_string()) return make_error(Errc::usage, fmt::format("--json-input: '{}' must be a string", key));
      (key == "why" ? r.why : key == "agent" ? r.agent : r.summary) = v.get<std::string>();
    } else {
      return make_error(Errc::usage, fmt::format("--json-input: unknown field '{}'", key),
                        "a changeset takes \"changes\", \"why\", \"agent\" and \"summary\"");
    }
  }
  return r;
}

}  // namespace kai
