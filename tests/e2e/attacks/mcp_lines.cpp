// Attacks on `kaicoder mcp` through the lines an agent's client sends: one
// line built to end the server (nesting far past any sane depth, a member of
// the wrong type, a message that is not an object) must get its JSON-RPC
// error while the session, and every wait in flight, goes on; and reads of
// .git/ are refused as the hooks refuse them.

#include <fstream>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

std::string line_rpc(const json& id, const std::string& method, const json& params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n";
}

std::string line_tool_call(int id, const std::string& name, const json& args) {
  return line_rpc(id, "tools/call", {{"name", name}, {"arguments", args}});
}

// Each reply the server printed, one JSON value a line.
std::vector<json> line_replies(const std::string& out) {
  std::vector<json> all;
  for (size_t at = 0; at < out.size();) {
    size_t nl = out.find('\n', at);
    if (nl == std::string::npos) nl = out.size();
    if (nl > at) all.push_back(json::parse(out.substr(at, nl - at)));
    at = nl + 1;
  }
  return all;
}

const json* line_reply_to(const std::vector<json>& all, const json& id) {
  for (const auto& r : all)
    if (r.contains("id") && r.at("id") == id) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("attack: one MCP line cannot end the server or lose a wait in flight", "[e2e][attack][mcp]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const auto before = tree_but_log(repo);
  // A proposal and a wait on it, then the lines that ended the server
  // before: 1.5 million '[' (3 MB, under the line limit), a number where
  // "2.0" belongs, null, an array; then a ping. The input stays open until
  // the wait has been answered (its own timeout, 2 s), however slow the
  // machine, so the wait is answered, not cut by the end of input.
  const std::string deep = R"({"jsonrpc":"2.0","id":90,"method":"tools/call","params":{"name":"read_file","arguments":{"path":)" +
                           std::string(1500000, '[') + "}}}\n";
  // Tool calls run side by side (lib/mcp/dispatch), so the wait is sent
  // once the proposal it waits on is answered, as a client that learns the
  // id from that answer sends it.
  const std::string first =
      line_rpc(1, "initialize",
          {{"protocolVersion", "2025-06-18"},
           {"capabilities", json::object()},
           {"clientInfo", {{"name", "attacker"}, {"version", "1"}}}}) +
      json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump() + "\n" +
      line_tool_call(2, "propose_edit", {{"path", "a.txt"}, {"old_text", "old"}, {"new_text", "new"}, {"why", "t"}});
  const std::string then =
      line_tool_call(3, "wait_for_decision", {{"id", 1}, {"timeout_s", 2}}) + deep +
      R"({"jsonrpc":2,"id":4,"method":"ping"})" "\n" + "null\n" + "[]\n" + R"([{"jsonrpc":"2.0","id":5,"method":"ping"}])" "\n" +
      R"({"jsonrpc":"2.0","id":6,"method":"ping"})" "\n";
  const auto input = repo.home() / "mcp-lines.txt";
  const auto input_then = repo.home() / "mcp-lines-then.txt";
  {
    std::ofstream(input, std::ios::binary) << first;
    std::ofstream(input_then, std::ios::binary) << then;
  }
  const auto replies = repo.home() / "mcp-replies.txt";
  // The shell waits (up to 60 s) for the answer to `id`.
  auto until_id = [&](int id) {
    return "i=0; while [ $i -lt 600 ] && ! grep -qE '\"id\":" + std::to_string(id) + "[,}]' '" + replies.string() +
           "'; do sleep 0.1; i=$((i+1)); done; ";
  };
  Process server = repo.spawn({"/bin/sh", "-c",
                               "{ cat '" + input.string() + "'; " + until_id(2) + "cat '" + input_then.string() +
                                   "'; " + until_id(3) + "} | '" + std::string(kaicoder_bin()) + "' mcp >'" +
                                   replies.string() + "'"});
  Run r = server.finish(std::chrono::seconds(90));
  INFO(r.err.substr(0, 2000));
  KAI_CHECK_EXIT(r, 0);
  CHECK(r.term_signal == 0);
  std::ifstream replied(replies, std::ios::binary);
  const std::string out((std::istreambuf_iterator<char>(replied)), std::istreambuf_iterator<char>());
  const auto all = line_replies(out);
  // The deep line: a parse error naming why, with no id (none was read).
  bool deep_answered = false;
  for (const auto& reply : all)
    if (reply.at("id").is_null() && reply.contains("error") && reply["error"].at("code") == -32700)
      deep_answered = reply["error"].at("message").get<std::string>().find("deeper than") != std::string::npos;
  CHECK(deep_answered);
  // The mistyped "jsonrpc": an invalid request, answered to its id.
  const json* typed = line_reply_to(all, 4);
  REQUIRE(typed);
  CHECK(typed->at("error").at("code") == -32600);
  // null, [] and a batch: invalid requests without an id, one each.
  size_t invalid_no_id = 0;
  for (const auto& reply : all)
    if (reply.at("id").is_null() && reply.contains("error") && reply["error"].at("code") == -32600) ++invalid_no_id;
  CHECK(invalid_no_id == 3);
  CHECK_FALSE(line_reply_to(all, 5));  // a batch is refused whole, never half-run
  // The session went on: the ping is answered, and the wait in flight
  // ended on its own time with the proposal still pending.
  const json* ping = line_reply_to(all, 6);
  REQUIRE(ping);
  CHECK(ping->at("result") == json::object());
  const json* wait = line_reply_to(all, 3);
  REQUIRE(wait);
  INFO("the wait's reply: " << wait->dump().substr(0, 2000));
  CHECK(wait->at("result").at("structuredContent").at("decided") == false);
  CHECK(json_of(repo.kai({"--json", "show", "1"})).at("proposal").at("status") == "pending");
  // Nothing in the tree changed.
  CHECK(tree_but_log(repo) == before);
}

TEST_CASE("attack: MCP read_file and list_dir refuse .git/ in every spelling, as the hooks do", "[e2e][attack][mcp]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  repo.write(".git/config", "[remote \"origin\"]\n\turl = https://user:ghp_tok3n@example.com/r.git\n");
  const auto before = tree_but_log(repo);
  std::string in;
  int id = 1;
  const std::vector<std::string> paths = {".git/config", "./.git/config", "a/../.git/config",
                                          ".git//config", ".GIT/config",  repo.abs(".git/config").string()};
  for (const std::string& p : paths)
    in += line_tool_call(id++, "read_file", {{"path", p}});
  in += line_tool_call(id++, "list_dir", {{"path", ".git"}});
  in += line_tool_call(id++, "list_dir", {{"glob", ".git/*"}});
  Run r = repo.kai({"mcp"}, in);
  KAI_CHECK_EXIT(r, 0);
  CHECK(r.out.find("ghp_tok3n") == std::string::npos);
  CHECK(r.out.find("[remote") == std::string::npos);
  const auto all = line_replies(r.out);
  for (int i = 1; i < id; ++i) {
    INFO("call " << i);
    const json* reply = line_reply_to(all, i);
    REQUIRE(reply);
    const json& res = reply->at("result");
    // Refused with a reason, or (a listing of the root by pattern) answered without .git/.
    if (res.at("isError") == true)
      CHECK_FALSE(res.at("structuredContent").at("error").at("message").get<std::string>().empty());
    else
      CHECK(res.dump().find(".git/") == std::string::npos);
  }
  CHECK(tree_but_log(repo) == before);
}
