#pragma once
// The JSON every door shares: `kaicoder --json` (cmd/), the MCP tools
// (lib/mcp), and later the hook adapters and the review page. One error
// object, one shape for a diff, a changelog entry and an applied outcome, so
// an agent reads the same fields whichever way it came in.
//
//   error_object(make_error(Errc::denied, "…", "…"))
//     → {"code": 3, "kind": "denied", "message": "…", "hint": "…"}

#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "lib/result.hpp"

namespace kai {

class Redactor;
struct FileDiff;
struct Entry;
struct Outcome;

// usage, denied, rejected, timeout, conflict, not_found, pending; "error" for io.
std::string_view errc_kind(Errc c);
// The exit code an Errc stands for (SPEC §3).
inline int errc_code(Errc c) { return static_cast<int>(c); }

// {"code", "kind", "message", "hint"}
nlohmann::json error_object(const Error& e);

// What the diff holds, without its text: {"binary", "truncated", "added",
// "removed", "hunks", "old_blob", "new_blob", "old_size", "new_size"}. The
// text goes once, as the envelope's top-level "diff".
nlohmann::json diff_object(const FileDiff& d);
nlohmann::json entry_object(const Entry& e);
nlohmann::json outcome_object(const Outcome& o);

// Every string inside `j` with the secrets `r` knows replaced (JSON escaping
// would hide a value from a text search, so this happens before dumping).
nlohmann::json redacted_json(nlohmann::json j, const Redactor& r);

}  // namespace kai
