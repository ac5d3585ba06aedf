#include "lib/mcp/server.hpp"

#include <array>
#include <thread>

#include <fmt/format.h>

#include "lib/util/json_bounded.hpp"

namespace kai::mcp {
namespace {

constexpr std::array<std::string_view, 4> k_versions = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};

constexpr const char* k_instructions =
    "kaicoder is the only way to change this project. Reads (read_file, list_dir) answer at once. Every change "
    "(propose_edit, propose_patch, write_file, delete_file, run_command) is staged as a proposal and returns its id "
    "at once; nothing is written until a person approves it at a terminal with `kaicoder approve N`. Call "
    "wait_for_decision with the id to learn the outcome (applied with a rollback id, rejected with a reason, "
    "expired). No tool can approve, reject, apply or roll back.";

// The string at `key` of object `j`, "" when it is missing or not a string.
std::string text_at(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

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
  BoundedJson p = parse_bounded_json(line);
  if (p.status == JsonStatus::too_deep)
    return {std::nullopt, error_response(nullptr, k_parse_error,
                                         fmt::format("parse error: the message nests deeper than {} levels",
                                                     k_json_max_depth))};
  if (p.status != JsonStatus::ok)
    return {std::nullopt, error_response(nullptr, k_parse_error, "parse error: not JSON")};
  return check_message(std::move(p.value));
}

namespace {

// What is wrong with `j` as a JSON-RPC 2.0 message, "" when nothing.
std::string message_fault(const json& j) {
  if (!j.is_object()) return "a message is a JSON object";
  auto rpc = j.find("jsonrpc");
  if (rpc == j.end() || !rpc->is_string() || rpc->get_ref<const std::string&>() != "2.0")
    return "\"jsonrpc\" must be the string \"2.0\"";
  if (auto id = j.find("id"); id != j.end() && !id->is_string() && !id->is_number_integer())
    return "\"id\" must be a string or an integer";
  auto method = j.find("method");
  if (method != j.end() && !method->is_string()) return "\"method\" must be a string";
  if (auto params = j.find("params"); params != j.end() && !params->is_object() && !params->is_array())
    return "\"params\" must be an object";
  if (method == j.end() && !j.contains("result") && !j.contains("error"))
    return "a message has a \"method\", or a \"result\" or \"error\"";
  return {};
}

}  // namespace

Parsed check_message(json j) {
  const std::string fault = message_fault(j);
  if (fault.empty()) return {std::move(j), std::nullopt};
  json id = nullptr;
  if (j.is_object())
    if (auto it = j.find("id"); it != j.end() && (it->is_string() || it->is_number_integer())) id = *it;
  return {std::nullopt, error_response(id, k_invalid_request, "invalid request: " + fault)};
}

Server::Server(ToolRunner tools, ServeOptions opts, std::string server_version)
    : m_tools(std::move(tools)), m_opts(std::move(opts)), m_server_version(std::move(server_version)) {}

std::string Server::version() const {
  std::lock_guard<std::mutex> g(m_mutex);
  return m_version;
}

bool Server::blocks(const json& msg) { return msg.contains("id") && text_at(msg, "method") == "tools/call"; }

std::optional<json> Server::cancelled_id(const json& msg) {
  if (text_at(msg, "method") != "notifications/cancelled" || !msg.contains("params") || !msg["params"].is_object() ||
      !msg["params"].contains("requestId"))
    return std::nullopt;
  return msg["params"]["requestId"];
}

json Server::initialize(const json& params) {
  const std::string asked = text_at(params, "protocolVersion");
  std::lock_guard<std::mutex> g(m_mutex);
  m_version = std::string(negotiate_version(asked));
  if (m_opts.agent.empty() && params.contains("clientInfo"))
    m_opts.agent = text_at(params["clientInfo"], "name");
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
  auto r = m_tools(opts, call, d);
  ws_turn.unlock();
  if (door.cancelled && door.cancelled()) return std::nullopt;  // the client asked for no answer
  if (auto* e = std::get_if<RpcError>(&r)) return error_response(id, e->code, e->message, e->data);
  return result_response(id, tool_result(std::get<ToolOutcome>(r), structured));
}

}  // namespace kai::mcp
