// libFuzzer target for whole MCP sessions (lib/mcp/dispatch, lib/mcp/server,
// lib/util/json_bounded). Built and run by tests/fuzz/run.sh. Each input is a
// session: its lines are fed, in order, to one Dispatcher over one Server,
// as `kaicoder mcp` feeds what it reads on stdin; tools/call goes to a
// stand-in for kaicoder's tools that answers at once (or, for the tool
// "wait", waits a little as wait_for_decision does, so that cancellation and
// the end of input meet a call in flight). Then one more line, a ping, ends
// the session. Besides crashes, leaks, undefined behaviour and hangs, it
// checks what a client relies on:
//   - every message sent is a JSON-RPC 2.0 response (or, for a batch, an
//     array of them) with an id and exactly one of result and error;
//   - an error's code is one of the five JSON-RPC codes the server uses;
//   - whatever came before, the final ping is answered: no line ends the
//     session.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "lib/mcp/dispatch.hpp"
#include "lib/mcp/server.hpp"

namespace {

using kai::mcp::json;

std::variant<kai::mcp::ToolOutcome, kai::mcp::RpcError> stand_in(const kai::mcp::ServeOptions&,
                                                                 const kai::mcp::ToolCall& call,
                                                                 const kai::mcp::Door& door) {
  if (call.name == "wait") {
    for (int i = 0; i < 3; ++i) {
      if ((door.cancelled && door.cancelled()) || (door.gone && door.gone())) break;
      if (door.sleep) door.sleep(std::chrono::milliseconds(1));
    }
    return kai::mcp::ToolOutcome{{{"ok", true}}, false};
  }
  if (call.name == "read_file") return kai::mcp::ToolOutcome{{{"ok", true}, {"args", call.arguments}}, false};
  return kai::mcp::RpcError{kai::mcp::k_invalid_params, "unknown tool: " + call.name, nullptr};
}

bool is_response(const json& m) {
  if (!m.is_object() || !m.contains("jsonrpc") || m["jsonrpc"] != "2.0" || !m.contains("id")) return false;
  const json& id = m["id"];
  if (!id.is_null() && !id.is_string() && !id.is_number_integer()) return false;
  if (m.contains("result") == m.contains("error")) return false;
  if (m.contains("error")) {
    const json& e = m["error"];
    if (!e.is_object() || !e.contains("code") || !e["code"].is_number_integer() || !e.contains("message") ||
        !e["message"].is_string())
      return false;
    const auto code = e["code"].get<long long>();
    if (code != kai::mcp::k_parse_error && code != kai::mcp::k_invalid_request &&
        code != kai::mcp::k_method_not_found && code != kai::mcp::k_invalid_params &&
        code != kai::mcp::k_internal_error)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::mutex mutex;
  std::vector<json> sent;
  kai::mcp::Server srv(stand_in, {"/nonexistent", ""}, "0.0.0-fuzz");
  {
    kai::mcp::Dispatcher d(
        srv,
        [&](const json& m) {
          std::lock_guard<std::mutex> g(mutex);
          sent.push_back(m);
        },
        size_t{1} << 20);
    for (size_t at = 0; at <= input.size();) {
      size_t nl = input.find('\n', at);
      if (nl == std::string_view::npos) nl = input.size();
      d.feed(input.substr(at, nl - at));
      at = nl + 1;
    }
    d.feed(R"({"jsonrpc":"2.0","id":"fuzz-final-ping","method":"ping"})");
    d.finish();
  }
  bool pinged = false;
  for (const json& m : sent) {
    if (m.is_array()) {
      if (m.empty()) __builtin_trap();
      for (const json& one : m)
        if (!is_response(one)) __builtin_trap();
      continue;
    }
    // Progress notifications are the one kind of message that is not a response.
    if (m.is_object() && m.contains("method") && m["method"] == "notifications/progress") continue;
    if (!is_response(m)) __builtin_trap();
    if (m["id"] == "fuzz-final-ping" && m.contains("result")) pinged = true;
  }
  if (!pinged) __builtin_trap();
  return 0;
}
