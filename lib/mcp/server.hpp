#pragma once
// The Model Context Protocol over JSON-RPC 2.0, without a transport: one
// parsed message in, the response to send (if any) out. cmd/mcp.cpp owns
// the stdin/stdout loop; a test drives this class directly.
//
//   Server srv(ws, {root, "agent"}, "0.1.0");
//   auto msg = parse_message(line);                  // or the error response to send
//   if (Server::blocks(msg)) …run it beside the reading loop…
//   if (auto reply = srv.handle(msg, door)) send(*reply);
//
// Handshake: initialize (the client's protocol version when this server
// speaks it, else the newest it speaks), notifications/initialized, ping.
// Then tools/list and tools/call (lib/mcp/tools). The root is the one the
// workspace was opened on; nothing a client sends changes it.

#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "lib/mcp/tools.hpp"

namespace kai::mcp {

// The protocol versions this server speaks, oldest first.
std::span<const std::string_view> protocol_versions();
// `asked` when spoken here, else the newest.
std::string_view negotiate_version(std::string_view asked);
// Whether tool results carry structuredContent and tools an outputSchema
// (every version after 2024-11-05).
bool has_structured_content(std::string_view version);

// A JSON-RPC error response (id null when the request's id is unknown).
json error_response(const json& id, int code, const std::string& message, const json& data = nullptr);

// One line of the stream: the message, or the error response to send —
// -32700 for a line that is not JSON or nests deeper than
// k_json_max_depth (lib/util/json_bounded: refused before it is parsed),
// -32600 for JSON that is not a JSON-RPC 2.0 message: not an object,
// "jsonrpc" other than the string "2.0", an id that is not a string or an
// integer (null included), a method that is not a string, params that are
// not an object or an array, neither a method nor a result or error. The
// error carries the message's id when that id is of a valid type.
struct Parsed {
  std::optional<json> message;
  std::optional<json> error_reply;
};
Parsed parse_message(std::string_view line);
// The same check on one message already parsed (an element of a batch).
Parsed check_message(json j);

// The protocol version that has JSON-RPC batches (arrays of messages);
// they were dropped again in the next one.
inline constexpr std::string_view k_batch_version = "2025-03-26";

// What runs a tools/call: kaicoder's tools over a workspace (call_tool),
// or, for the session fuzzer, anything that answers as they do.
using ToolRunner = std::function<std::variant<ToolOutcome, RpcError>(const ServeOptions&, const ToolCall&, const Door&)>;

class Server {
public:
  // kaicoder's tools over `ws` (defined beside them, in lib/mcp/tools.cpp).
  Server(Workspace& ws, ServeOptions opts, std::string server_version);
  Server(ToolRunner tools, ServeOptions opts, std::string server_version);

  // Answer one message. No reply for notifications, for responses the
  // client sends, and for a tool call that was cancelled while it ran.
  // `door` serves a tools/call that waits (progress, cancellation).
  // Thread use: any number of threads may call handle() at once. The
  // workspace (its store, journal, redactor, notify queue) is not
  // thread-safe, so tool calls take turns on it: each holds it while it
  // runs, and a wait_for_decision lets go of it between its polls, so a
  // read or a proposal is answered while a wait blocks.
  std::optional<json> handle(const json& msg, const Door& door = {});

  // A request that may block for long (tools/call): a door runs it beside
  // its reading loop, so that ping and cancellation are still read.
  static bool blocks(const json& msg);
  // The id of the request a notifications/cancelled names, if it is one.
  static std::optional<json> cancelled_id(const json& msg);

  // The version agreed in initialize ("" before it).
  std::string version() const;

private:
  json initialize(const json& params);

  ToolRunner m_tools;
  ServeOptions m_opts;
  std::string m_server_version;
  mutable std::mutex m_mutex;  // m_version and m_opts.agent: set by initialize, read by tool calls
  std::string m_version;
  std::mutex m_ws_mutex;  // the workspace behind m_tools: one tool call at a time, a wait only while it polls
};

}  // namespace kai::mcp
