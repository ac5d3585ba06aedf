#pragma once
// The MCP tools of `kaicoder mcp` as plain calls: a parsed tools/call in,
// the result as data out. No transport here (cmd/mcp.cpp reads stdin and
// writes stdout), so the same handlers serve any door — the stdio server, a
// hook adapter that stages a write, a review page — and are unit-tested
// without a process.
//
//   ToolCall c{"propose_edit", {{"path", "a.txt"}, {"old_text", "x"}, {"new_text", "y"}, {"why", "fix"}}};
//   auto r = call_tool(ws, opts, c, door);   // ToolOutcome, or RpcError for a bad call
//   json result = tool_result(std::get<ToolOutcome>(r), /*structured=*/true);
//
// Mutating tools only stage: each returns its proposal id at once, and a
// person decides at a terminal (`kaicoder approve N`). In a process of the
// agent user (two-user mode) they write the spool instead and return a
// ticket, which proposal_status and wait_for_decision take as they take an
// id (lib/mcp/spooled). In team mode (kaicoder-team(7)) `publish` also
// publishes the proposal to the team remote, as propose --publish does, and
// wait_for_decision on a published proposal fetches a person's signed
// decision, checks it against the base commit's allowed signers and carries
// it out, as kaicoder wait does (lib/team). No tool approves, rejects,
// applies what no person decided, or rolls back, and the tool set is fixed:
// nothing in a config or a request adds one.

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "lib/result.hpp"

namespace kai {
class Workspace;
struct Proposal;
struct CapturedOutput;
}  // namespace kai

namespace kai::mcp {

using json = nlohmann::json;

// JSON-RPC 2.0 error codes.
constexpr int k_parse_error = -32700;
constexpr int k_invalid_request = -32600;
constexpr int k_method_not_found = -32601;
constexpr int k_invalid_params = -32602;
constexpr int k_internal_error = -32603;

// A protocol error: the call itself is wrong (an unknown tool, arguments
// that do not match the tool's input schema). `data` may carry kaicoder's
// error object.
struct RpcError {
  int code = k_invalid_params;
  std::string message;
  json data;  // null when there is nothing more to say
};

// What the server was started with; the same for every call.
struct ServeOptions {
  std::filesystem::path cwd;  // relative paths resolve from here (the root)
  std::string agent;          // recorded as proposed-by; default "mcp"
};

// How a tool that waits talks to its door while it blocks.
struct Door {
  // A notification to the client now (notifications/progress).
  std::function<void(const json&)> notify;
  // True once the client cancelled the request: a wait ends without
  // deciding anything, and the request gets no answer.
  std::function<bool()> cancelled;
  // True once the client went away (end of input): a wait ends at once,
  // deciding nothing; the answer is still sent, to whoever still reads.
  std::function<bool()> gone;
  // How a wait pauses between polls; unset: it sleeps. The server sets it
  // to let go of the workspace meanwhile, so other calls run beside a wait.
  std::function<void(std::chrono::milliseconds)> sleep;
};

struct ToolCall {
  std::string name;
  json arguments = json::object();
  json progress_token;  // null when the call carried none
};

// A tool's answer. is_error for business outcomes the agent must act on
// (denied, rejected, expired, conflict): `structured` then holds
// {"ok": false, "error": {code, kind, message, hint}, …}.
struct ToolOutcome {
  json structured;
  bool is_error = false;
};

// The tools as tools/list shows them: name, title, description,
// inputSchema, annotations and (when `with_output_schema`) outputSchema.
json tool_definitions(bool with_output_schema);

// Run one tool call. RpcError for an unknown tool or arguments that do not
// fit its input schema; everything else is a ToolOutcome. Strings in the
// outcome are redacted with the workspace's redactor.
std::variant<ToolOutcome, RpcError> call_tool(Workspace& ws, const ServeOptions& opts, const ToolCall& call,
                                              const Door& door = {});

// A CallToolResult: content (one text block holding the JSON), isError, and
// structuredContent when `structured`.
json tool_result(const ToolOutcome& o, bool structured);

// The longest wait_for_decision may block in one call, and its default.
constexpr long k_wait_max_s = 600;
constexpr long k_wait_default_s = 45;  // under the 60 s some clients allow a tool call by default

// What a proposal's status means to the agent, as proposal_status and
// wait_for_decision answer: `expired` when it is past its timeout, `ran`
// a run's captured output once it ran. For the owner's side and the agent
// side (lib/mcp/spooled) alike.
ToolOutcome decided_outcome(const Proposal& p, bool expired, const CapturedOutput* ran);
// A business outcome: {"ok": false, "error": {…}} with `extra`'s fields, isError.
ToolOutcome tool_failure(const Error& e, json extra = json::object());

// Check `args` against the subset of JSON Schema the tools use (object,
// properties of type string / integer / boolean / array of strings,
// required, enum, minimum, maximum, minLength, additionalProperties false).
// The message names the first field that does not fit.
Status check_arguments(const json& schema, const json& args);

}  // namespace kai::mcp
