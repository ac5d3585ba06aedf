#include "lib/mcp/server.hpp"

#include <array>
#include <thread>

namespace kai::mcp {
namespace {

constexpr std::array<std::string_view, 4> k_versions = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

constexpr const char* k_instructions =
    "kaicoder is the only way to change this project. Reads (read_file, list_dir) answer at once. Every change "
    "(propose_edit, propose_patch, write_file, delete_file, run_command) is staged as a proposal and returns its id "
    "at once; nothing is written until a person approves it at a terminal with `kaicoder approve N`. Call "
    "wait_for_decision with the id to learn the outcome (applied with a rollback id, rejected with a reason, "
    "expired). No tool can approve, reject, apply or roll back.";

json result_response(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

}  // namespace

std::span<const std::string_view> protocol_versions() { return k_versions; }

std::string_view negotiate_version(std::string_view asked) {
  for (auto v : k_versions)
    if (v == asked) return v;
  return k_versions.back();
}

bool has_structured_content(std::string_view version) { return version != k_versions.front(); }

json error_response(const json& id, int code, const std::string& message, const json& data) {
  json err = {{"code", code}, {"message", message}};
  if (!data.is_null()) err["data"] = data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(err)}};
}

Parsed parse_message(std::string_view line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded()) return {std::nullopt, error_response(nullptr, k_parse_error, "parse error: not JSON")};
  return check_message(std::move(j));
}

Parsed check_message(json j) {
  const bool id_ok = !j.is_object() || !j.contains("id") || j["id"].is_string() || j["id"].is_number_integer();
  if (!j.is_object() || j.value("jsonrpc", "") != "2.0" || !id_ok ||
      (j.contains("method") && !j["method"].is_string()) ||
      (!j.contains("method") && !j.contains("result") && !j.contains("error"))) {
    json id = j.is_object() && j.contains("id") && id_ok ? j["id"] : json(nullptr);
    return {std::nullopt, error_response(id, k_invalid_request, "invalid request: not a JSON-RPC 2.0 message")};
  }
  return {std::move(j), std::nullopt};
}

Server::Server(Workspace& ws, ServeOptions opts, std::string server_version)
    : m_ws(ws), m_opts(std::move(opts)), m_server_version(std::move(server_version)) {}

std::string Server::version() const {
  std::lock_guard<std::mutex> g(m_mutex);
  return m_version;
}

bool Server::blocks(const json& msg) { return msg.contains("id") && msg.value("method", "") == "tools/call"; }

std::optional<json> Server::cancelled_id(const json& msg) {
  if (msg.value("method", "") != "notifications/cancelled" || !msg.contains("params") || !msg["params"].is_object() ||
      !msg["params"].contains("requestId"))
    return std::nullopt;
  return msg["params"]["requestId"];
}

json Server::initialize(const json& params) {
  std::string asked = params.is_object() ? params.value("protocolVersion", "") : "";
  std::lock_guard<std::mutex> g(m_mutex);
  m_version = std::string(negotiate_version(asked));
  if (m_opts.agent.empty() && params.is_object() && params.contains("clientInfo") && params["clientInfo"].is_object())
    m_opts.agent = params["clientInfo"].value("name", "");
  return {{"protocolVersion", m_version},
          {"capabilities", {{"tools", {{"listChanged", false}}}}},
          {"serverInfo", {{"name", "kaicoder"}, {"title", "kaicoder"}, {"version", m_server_version}}},
          {"instructions", k_instructions}};
}

std::optional<json> Server::handle(const json& msg, const Door& door) {
  if (!msg.contains("method")) return std::nullopt;  // a response to us: we send no requests
  const std::string method = msg["method"].get<std::string>();
  if (!msg.contains("id")) return std::nullopt;  // notifications: initialized, cancelled, …
  const json& id = msg["id"];
  const json params = msg.contains("params") ? msg["params"] : json::object();
  if (!params.is_object()) return error_response(id, k_invalid_params, "params must be an object");
  if (method == "initialize") return result_response(id, initialize(params));
  if (method == "ping") return result_response(id, json::object());
  const std::string version = [&] {
    std::lock_guard<std::mutex> g(m_mutex);
    return m_version.empty() ? std::string(k_versions.back()) : m_version;
  }();
  const bool structured = has_structured_content(version);
  if (method == "tools/list") return result_response(id, {{"tools", tool_definitions(structured)}});
  if (method != "tools/call") return error_response(id, k_method_not_found, "method not found: " + method);
  if (!params.contains("name") || !params["name"].is_string())
    return error_response(id, k_invalid_params, "tools/call needs a tool name");
  ToolCall call;
  call.name = params["name"].get<std::string>();
  if (params.contains("arguments") && !params["arguments"].is_null()) call.arguments = params["arguments"];
  if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains("progressToken"))
    call.progress_token = params["_meta"]["progressToken"];
  ServeOptions opts;
  {
    std::lock_guard<std::mutex> g(m_mutex);
    opts = m_opts;
  }
  // The workspace is held while the call runs; a wait lets go of it between polls.
  std::unique_lock<std::mutex> ws_turn(m_ws_mutex);
  Door d = door;
  d.sleep = [&ws_turn](std::chrono::milliseconds pause) {
    ws_turn.unlock();
    std::this_thread::sleep_for(pause);
    ws_turn.lock();
  };
  auto r = call_tool(m_ws, opts, call, d);
  ws_turn.unlock();
  if (door.cancelled && door.cancelled()) return std::nullopt;  // the client asked for no answer
  if (auto* e = std::get_if<RpcError>(&r)) return error_response(id, e->code, e->message, e->data);
  return result_response(id, tool_result(std::get<ToolOutcome>(r), structured));
}

}  // namespace kai::mcp
