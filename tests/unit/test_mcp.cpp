// The MCP server's handlers called as cmd/mcp.cpp calls them, without a
// process: the handshake, the tool list for each protocol version, every
// tool's answer, the refusals, and waits that end by a decision, an expiry
// or a cancellation.

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include <nlohmann/json.hpp>

#include "lib/gate/gate.hpp"
#include "lib/mcp/dispatch.hpp"
#include "lib/mcp/server.hpp"
#include "lib/util/json_bounded.hpp"
#include "unit/ws_fixture.hpp"

namespace {
using json = nlohmann::json;
using kai::test::WsFixture;
namespace mcp = kai::mcp;
namespace gate = kai::gate;

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json call(mcp::Server& srv, const std::string& tool, json args, const mcp::Door& door = {}, json meta = nullptr) {
  json params = {{"name", tool}, {"arguments", std::move(args)}};
  if (!meta.is_null()) params["_meta"] = meta;
  auto r = srv.handle(request(7, "tools/call", params), door);
  REQUIRE(r);
  return *r;
}

// A server over a fresh workspace whose client said `version` in initialize.
struct Served {
  WsFixture f;
  mcp::Server srv;
  explicit Served(const std::string& version = "2025-06-18", const std::string& config = "",
                  std::initializer_list<std::pair<std::string, std::string>> files = {{"a.txt", "hello\n"}})
      : f(config, files), srv(*f.ws, {f.dir.path(), ""}, "0.1.0") {
    auto r = srv.handle(request(1, "initialize",
                                {{"protocolVersion", version},
                                 {"capabilities", json::object()},
                                 {"clientInfo", {{"name", "unit-client"}, {"version", "1"}}}}));
    REQUIRE(r);
    REQUIRE(r->at("result").at("protocolVersion") == std::string(mcp::negotiate_version(version)));
  }
  kai::State state(int id) {
    auto p = f.ws->store.load(id, kai::Store::Payloads::none);
    REQUIRE(p);
    return p->state;
  }
};

int proposal_id(const json& response) {
  INFO(response.dump(2));
  REQUIRE(response.at("result").at("isError") == false);
  return response.at("result").at("structuredContent").at("proposal").at("id").get<int>();
}

// structuredContent of a tool result, or the JSON in its one text block.
json body(const json& response) {
  const json& r = response.at("result");
  json text = json::parse(r.at("content").at(0).at("text").get<std::string>());
  if (r.contains("structuredContent")) CHECK(r.at("structuredContent") == text);
  return text;
}

void approve_now(WsFixture& f, int id) {
  const gate::Decider who{"tester", gate::Channel::terminal};
  auto rv = gate::prepare_approval(*f.ws, id, who, {});
  REQUIRE(rv);
  gate::Request req;
  req.id = id;
  req.who = who;
  req.answer = gate::Answer::yes;
  req.seen_digest = rv->digest;
  REQUIRE(gate::approve(*f.ws, req));
}

}  // namespace

TEST_CASE("mcp: a supported protocol version is answered as asked, any other with the newest", "[mcp]") {
  for (auto v : mcp::protocol_versions()) CHECK(mcp::negotiate_version(v) == v);
  CHECK(mcp::negotiate_version("2099-01-01") == "2025-11-25");
  CHECK(mcp::negotiate_version("") == "2025-11-25");
  CHECK(mcp::protocol_versions().size() == 4);
  CHECK(mcp::protocol_versions().front() == "2024-11-05");
}

TEST_CASE("mcp: initialize answers with the tools capability, ping with an empty result, notifications with nothing",
          "[mcp]") {
  WsFixture f("", {{"a.txt", "hello\n"}});
  mcp::Server srv(*f.ws, {f.dir.path(), ""}, "0.1.0");
  auto init = srv.handle(request(1, "initialize",
                                 {{"protocolVersion", "2025-03-26"},
                                  {"capabilities", json::object()},
                                  {"clientInfo", {{"name", "c"}, {"version", "1"}}}}));
  REQUIRE(init);
  CHECK(init->at("id") == 1);
  CHECK(init->at("result").at("protocolVersion") == "2025-03-26");
  CHECK(init->at("result").at("capabilities").contains("tools"));
  CHECK(init->at("result").at("serverInfo").at("name") == "kaicoder");
  CHECK(srv.version() == "2025-03-26");
  CHECK_FALSE(srv.handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  auto pong = srv.handle(request(2, "ping"));
  REQUIRE(pong);
  CHECK(pong->at("result") == json::object());
  auto unknown = srv.handle(request(3, "resources/list"));
  REQUIRE(unknown);
  CHECK(unknown->at("error").at("code") == mcp::k_method_not_found);
  // A response from the client (we send no requests) is not answered.
  CHECK_FALSE(srv.handle({{"jsonrpc", "2.0"}, {"id", 9}, {"result", json::object()}}));
}

TEST_CASE("mcp: a line that is not JSON-RPC 2.0 gets the parse or invalid-request error", "[mcp]") {
  auto bad = mcp::parse_message("{not json");
  REQUIRE(bad.error_reply);
  CHECK(bad.error_reply->at("error").at("code") == mcp::k_parse_error);
  CHECK(bad.error_reply->at("id").is_null());
  auto v1 = mcp::parse_message(R"({"jsonrpc": "1.0", "id": 4, "method": "ping"})");
  REQUIRE(v1.error_reply);
  CHECK(v1.error_reply->at("error").at("code") == mcp::k_invalid_request);
  CHECK(v1.error_reply->at("id") == 4);
  auto arr = mcp::parse_message("[1, 2]");
  REQUIRE(arr.error_reply);
  CHECK(arr.error_reply->at("error").at("code") == mcp::k_invalid_request);
  auto good = mcp::parse_message(R"({"jsonrpc": "2.0", "id": "x", "method": "ping"})");
  REQUIRE(good.message);
  CHECK_FALSE(good.error_reply);
  CHECK(mcp::Server::blocks(request(1, "tools/call")));
  CHECK_FALSE(mcp::Server::blocks(request(1, "ping")));
  CHECK(mcp::Server::cancelled_id(
            {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 7}}}}) == json(7));
}

TEST_CASE("bounded JSON: nesting past the bound is refused unparsed, brackets in strings are text", "[mcp]") {
  using kai::JsonStatus;
  CHECK(kai::parse_bounded_json(std::string(64, '[') + std::string(64, ']')).status == JsonStatus::ok);
  CHECK(kai::parse_bounded_json(std::string(65, '[') + std::string(65, ']')).status == JsonStatus::too_deep);
  // 1.5 million, unclosed: refused at the 65th, nothing allocated for the rest.
  auto deep = kai::parse_bounded_json(std::string(1500000, '['));
  CHECK(deep.status == JsonStatus::too_deep);
  CHECK(deep.value.is_discarded());
  const std::string in_string = "{\"a\": \"" + std::string(1000, '[') + "\\\"" + std::string(1000, '{') + "\"}";
  auto s = kai::parse_bounded_json(in_string);
  REQUIRE(s.status == JsonStatus::ok);
  CHECK(s.value.at("a").get<std::string>().size() == 2001);
  CHECK(kai::parse_bounded_json("{\"a\": 1}\0x").status == JsonStatus::ok);  // a C string: stops at the NUL
  CHECK(kai::parse_bounded_json(std::string("{\"a\": 1}\0", 9)).status == JsonStatus::not_json);
  CHECK(kai::parse_bounded_json("{not json").value.is_discarded());
  auto line = mcp::parse_message(std::string(100000, '['));
  REQUIRE(line.error_reply);
  CHECK(line.error_reply->at("error").at("code") == mcp::k_parse_error);
}

TEST_CASE("mcp: tools/list holds the fixed tools, none that decides, with schemas and annotations", "[mcp]") {
  for (const std::string version : {"2024-11-05", "2025-11-25"}) {
    Served s(version);
    auto r = s.srv.handle(request(2, "tools/list"));
    REQUIRE(r);
    const json& tools = r->at("result").at("tools");
    std::vector<std::string> names;
    for (const auto& t : tools) {
      names.push_back(t.at("name"));
      CHECK(t.at("inputSchema").at("type") == "object");
      CHECK(t.at("description").get<std::string>().size() > 40);
      // outputSchema (with structuredContent) only where the protocol has it.
      CHECK(t.contains("outputSchema") == (version != "2024-11-05"));
      const bool read = t.at("annotations").at("readOnlyHint").get<bool>();
      CHECK(t.at("annotations").at("destructiveHint").get<bool>() == !read);
    }
    CHECK(names == std::vector<std::string>{"read_file", "list_dir", "propose_edit", "propose_patch", "write_file",
                                            "delete_file", "run_command", "proposal_status", "wait_for_decision",
                                            "list_proposals"});
    for (const auto& t : tools) {
      const std::string n = t.at("name");
      // wait_for_decision writes what a person signed on the team remote (it applies a published proposal).
      const bool read = n == "read_file" || n == "list_dir" || n == "proposal_status" || n == "list_proposals";
      CHECK(t.at("annotations").at("readOnlyHint").get<bool>() == read);
    }
  }
}

TEST_CASE("mcp: propose_edit returns its proposal id at once and writes nothing", "[mcp]") {
  Served s;
  json r = call(s.srv, "propose_edit", {{"path", "a.txt"}, {"old_text", "hello"}, {"new_text", "bye"}, {"why", "t"}});
  const int id = proposal_id(r);
  CHECK(id == 1);
  json b = body(r);
  CHECK(b.at("ok") == true);
  CHECK(b.at("proposal").at("status") == "pending");
  CHECK(b.at("proposal").at("agent") == "unit-client");  // the client's name from initialize
  CHECK_THAT(b.at("next").get<std::string>(), Catch::Contains("kaicoder approve 1"));
  CHECK_THAT(b.at("diff").get<std::string>(), Catch::Contains("+bye"));
  CHECK(b.at("diff_info").at("added") == 1);
  CHECK_FALSE(b.at("diff_info").contains("text"));  // the text goes once, as "diff"
  CHECK(s.f.dir.read("a.txt") == "hello\n");
  CHECK(s.state(id) == kai::State::pending);
  // The retry of a denied write is the same proposal, not a second one.
  json again =
      call(s.srv, "propose_edit", {{"path", "a.txt"}, {"old_text", "hello"}, {"new_text", "bye"}, {"why", "t"}});
  CHECK(proposal_id(again) == 1);
  CHECK(body(again).at("existing") == true);
}

TEST_CASE("mcp: propose_edit with replace_all stages every occurrence, without it several are refused", "[mcp]") {
  Served s("2025-06-18", "", {{"a.txt", "one two one\n"}});
  json twice = call(s.srv, "propose_edit", {{"path", "a.txt"}, {"old_text", "one"}, {"new_text", "1"}, {"why", "t"}});
  CHECK(twice.at("result").at("isError") == true);
  CHECK(body(twice).at("error").at("kind") == "conflict");
  CHECK(s.f.ws->store.ids()->empty());
  json r = call(s.srv, "propose_edit",
                {{"path", "a.txt"}, {"old_text", "one"}, {"new_text", "1"}, {"replace_all", true}, {"why", "t"}});
  const int id = proposal_id(r);
  CHECK_THAT(body(r).at("diff").get<std::string>(), Catch::Contains("+1 two 1"));
  CHECK(s.f.dir.read("a.txt") == "one two one\n");
  approve_now(s.f, id);
  CHECK(s.f.dir.read("a.txt") == "1 two 1\n");
  // replace_all must be a boolean.
  json bad = call(s.srv, "propose_edit",
                  {{"path", "a.txt"}, {"old_text", "1"}, {"new_text", "x"}, {"replace_all", "yes"}, {"why", "t"}});
  CHECK(bad.at("error").at("code") == mcp::k_invalid_params);
}

TEST_CASE("mcp: propose_patch stages a two-file patch as one changeset, written only when approved", "[mcp]") {
  Served s("2025-06-18", "", {{"a.txt", "hello\n"}, {"b.txt", "one\ntwo\n"}});
  const std::string patch =
      "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-hello\n+bye\n"
      "diff --git a/b.txt b/b.txt\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,3 @@\n one\n two\n+three\n";
  json r = call(s.srv, "propose_patch", {{"patch", patch}, {"why", "t"}, {"summary", "two files"}});
  const int id = proposal_id(r);
  json b = body(r);
  CHECK(b.at("proposal").at("kind") == "changeset");
  CHECK(b.at("proposal").at("status") == "pending");
  CHECK_THAT(b.at("next").get<std::string>(), Catch::Contains("kaicoder approve " + std::to_string(id)));
  CHECK_THAT(b.at("diff").get<std::string>(), Catch::Contains("+bye"));
  CHECK_THAT(b.at("diff").get<std::string>(), Catch::Contains("+three"));
  CHECK(s.f.ws->store.ids()->size() == 1);
  CHECK(s.f.dir.read("a.txt") == "hello\n");
  CHECK(s.f.dir.read("b.txt") == "one\ntwo\n");
  // A retry is the same changeset.
  CHECK(proposal_id(call(s.srv, "propose_patch", {{"patch", patch}, {"why", "t"}, {"summary", "two files"}})) == id);
  approve_now(s.f, id);
  CHECK(s.f.dir.read("a.txt") == "bye\n");
  CHECK(s.f.dir.read("b.txt") == "one\ntwo\nthree\n");
}

TEST_CASE("mcp: propose_patch refuses a patch that does not apply, naming file and hunk, staging nothing", "[mcp]") {
  Served s("2025-06-18", "", {{"a.txt", "hello\n"}, {"b.txt", "one\ntwo\n"}});
  const std::string patch =
      "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+bye\n"
      "*** Update File: b.txt\n@@\n-not there\n+x\n*** End Patch\n";
  json r = call(s.srv, "propose_patch", {{"patch", patch}, {"why", "t"}});
  REQUIRE(r.at("result").at("isError") == true);
  json b = body(r);
  CHECK(b.at("ok") == false);
  CHECK(b.at("error").at("kind") == "conflict");
  CHECK(b.at("error").at("code") == 6);
  CHECK_THAT(b.at("error").at("message").get<std::string>(), Catch::Contains("'b.txt': hunk 1"));
  CHECK(s.f.ws->store.ids()->empty());
  CHECK(s.f.dir.read("a.txt") == "hello\n");
  CHECK(s.f.dir.read("b.txt") == "one\ntwo\n");
  // An empty patch is off the schema: a JSON-RPC error.
  CHECK(call(s.srv, "propose_patch", {{"patch", ""}, {"why", "t"}}).at("error").at("code") == mcp::k_invalid_params);
}

TEST_CASE("mcp: write_file and delete_file stage, and a 2024-11-05 client gets no structuredContent", "[mcp]") {
  Served s("2024-11-05");
  json w = call(s.srv, "write_file", {{"path", "new.txt"}, {"content", "x\n"}, {"why", "t"}});
  REQUIRE(w.at("result").at("isError") == false);
  CHECK_FALSE(w.at("result").contains("structuredContent"));
  CHECK(body(w).at("proposal").at("kind") == "write");
  json d = call(s.srv, "delete_file", {{"path", "a.txt"}, {"why", "t"}});
  CHECK(body(d).at("proposal").at("kind") == "delete");
  CHECK_FALSE(s.f.dir.exists("new.txt"));
  CHECK(s.f.dir.read("a.txt") == "hello\n");
}

TEST_CASE("mcp: a denied path or a target not found is a tool error with kaicoder's error object", "[mcp]") {
  Served s("2025-06-18", "", {{"a.txt", "hello\n"}, {".env", "TOKEN=abcdef123456\n"}});
  for (const std::string path : {".env", "../outside.txt", ".git/config"}) {
    json r = call(s.srv, "write_file", {{"path", path}, {"content", "x"}, {"why", "t"}});
    INFO(path << ": " << r.dump());
    CHECK(r.at("result").at("isError") == true);
    json b = body(r);
    CHECK(b.at("ok") == false);
    CHECK(b.at("error").at("kind") == "denied");
    CHECK(b.at("error").at("code") == 3);
  }
  json read_secret = call(s.srv, "read_file", {{"path", ".env"}});
  CHECK(read_secret.at("result").at("isError") == true);
  CHECK(body(read_secret).at("error").at("kind") == "denied");
  json missing =
      call(s.srv, "propose_edit", {{"path", "a.txt"}, {"old_text", "nowhere"}, {"new_text", "x"}, {"why", "t"}});
  CHECK(missing.at("result").at("isError") == true);
  CHECK(body(missing).at("error").at("kind") == "conflict");
  CHECK(body(missing).at("error").at("code") == 6);
  CHECK(s.f.dir.read(".env") == "TOKEN=abcdef123456\n");
  CHECK(s.f.ws->store.ids()->empty());
}

TEST_CASE("mcp: an unknown tool or arguments off the schema are JSON-RPC errors", "[mcp]") {
  Served s;
  json unknown = call(s.srv, "approve", {{"id", 1}});
  CHECK(unknown.at("error").at("code") == mcp::k_invalid_params);
  CHECK_THAT(unknown.at("error").at("message").get<std::string>(), Catch::Contains("unknown tool"));
  json no_why = call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "x"}});
  CHECK(no_why.at("error").at("code") == mcp::k_invalid_params);
  CHECK_THAT(no_why.at("error").at("message").get<std::string>(), Catch::Contains("'why' is required"));
  json extra = call(s.srv, "read_file", {{"path", "a.txt"}, {"root", "/"}});
  CHECK(extra.at("error").at("code") == mcp::k_invalid_params);
  CHECK_THAT(extra.at("error").at("message").get<std::string>(), Catch::Contains("unknown argument 'root'"));
  json wrong_type = call(s.srv, "wait_for_decision", {{"id", "1"}});
  CHECK(wrong_type.at("error").at("code") == mcp::k_invalid_params);
  json too_long = call(s.srv, "wait_for_decision", {{"id", 1}, {"timeout_s", 601}});
  CHECK(too_long.at("error").at("code") == mcp::k_invalid_params);
  json both = call(s.srv, "run_command", {{"argv", {"true"}}, {"shell", "true"}, {"why", "t"}});
  CHECK(both.at("error").at("code") == mcp::k_invalid_params);
  json neither = call(s.srv, "run_command", {{"why", "t"}});
  CHECK(neither.at("error").at("code") == mcp::k_invalid_params);
  // A status or a wait names one proposal: by its id or by a two-user ticket, never both or neither.
  for (const char* tool : {"proposal_status", "wait_for_decision"}) {
    INFO(tool);
    json none = call(s.srv, tool, json::object());
    CHECK(none.at("error").at("code") == mcp::k_invalid_params);
    CHECK_THAT(none.at("error").at("message").get<std::string>(), Catch::Contains("exactly one of 'id' and 'ticket'"));
    json two = call(s.srv, tool, {{"id", 1}, {"ticket", "20260101T000000Z-1-ab"}});
    CHECK(two.at("error").at("code") == mcp::k_invalid_params);
    json empty = call(s.srv, tool, {{"ticket", ""}});
    CHECK(empty.at("error").at("code") == mcp::k_invalid_params);
  }
  // Where there is no spool, a ticket names nothing: a business outcome, not a protocol error.
  json no_spool = call(s.srv, "proposal_status", {{"ticket", "20260101T000000Z-1-ab"}});
  CHECK(no_spool.at("result").at("isError") == true);
  CHECK(s.f.ws->store.ids()->empty());
}

TEST_CASE("mcp: proposal ids are decimal here as on the command line", "[mcp][ids]") {
  Served s;
  for (const char* tool : {"proposal_status", "wait_for_decision"}) {
    INFO(tool);
    // A JSON number that is no whole number, or past the largest id: off the schema.
    for (const json& id : {json(1e3), json(8.5), json(1000000000), json(-8)}) {
      json r = call(s.srv, tool, {{"id", id}});
      CHECK(r.at("error").at("code") == mcp::k_invalid_params);
    }
    // A ticket that is a malformed number is refused by the one parser, never read as an id.
    for (const char* text : {"010", "0x8", "+8", " 8", "1e3"}) {
      INFO(text);
      json r = call(s.srv, tool, {{"ticket", text}});
      REQUIRE(r.at("result").at("isError") == true);
      CHECK_THAT(r.dump(), Catch::Contains("is not a proposal id"));
    }
  }
}

TEST_CASE("mcp: check_arguments follows the schema subset the tools use", "[mcp]") {
  const json schema = json::parse(R"({"type": "object", "additionalProperties": false, "required": ["n"],
    "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 5}, "s": {"type": "string", "minLength": 1,
    "enum": ["a", "b"]}, "b": {"type": "boolean"}, "v": {"type": "array", "items": {"type": "string"}, "minItems": 1}}})");
  CHECK(mcp::check_arguments(schema, {{"n", 1}, {"s", "a"}, {"b", true}, {"v", {"x"}}}));
  CHECK_FALSE(mcp::check_arguments(schema, json::array()));
  CHECK_FALSE(mcp::check_arguments(schema, json::object()));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 0}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 6}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1.5}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1}, {"s", "c"}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1}, {"s", ""}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1}, {"b", "yes"}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1}, {"v", json::array()}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1}, {"v", {1}}}));
  CHECK_FALSE(mcp::check_arguments(schema, {{"n", 1}, {"other", 1}}));
}

TEST_CASE("mcp: run_command stages a command, network asks for the confirm tier, a blocked one is refused", "[mcp]") {
  Served s;
  json plain = call(s.srv, "run_command", {{"argv", {"ls", "-l"}}, {"why", "look"}});
  CHECK(proposal_id(plain) == 1);
  CHECK(body(plain).at("proposal").at("tier") == "normal");
  json net = call(s.srv, "run_command", {{"argv", {"ls"}}, {"why", "fetch"}, {"network", true}});
  CHECK(proposal_id(net) == 2);
  CHECK(body(net).at("proposal").at("tier") == "confirm");
  CHECK(body(net).at("proposal").at("network") == true);
  json blocked = call(s.srv, "run_command", {{"shell", "rm -rf /"}, {"why", "oops"}});
  CHECK(blocked.at("result").at("isError") == true);
  CHECK(body(blocked).at("error").at("kind") == "denied");
  CHECK(body(blocked).at("verdict") == "blocked");
  CHECK(s.f.ws->store.ids()->size() == 2);
}

TEST_CASE("mcp: read_file and list_dir answer at once, secrets redacted", "[mcp]") {
  Served s("2025-06-18", "",
           {{"a.txt", "hello\nkey abcdef123456 here\n"}, {".env", "API_TOKEN=abcdef123456\n"}, {"src/b.txt", "b\n"}});
  json r = call(s.srv, "read_file", {{"path", "a.txt"}, {"lines", "2:2"}});
  REQUIRE(r.at("result").at("isError") == false);
  CHECK(body(r).at("text") == "key [REDACTED:API_TOKEN] here\n");
  CHECK(r.dump().find("abcdef123456") == std::string::npos);
  json bad_range = call(s.srv, "read_file", {{"path", "a.txt"}, {"lines", "x"}});
  CHECK(bad_range.at("error").at("code") == mcp::k_invalid_params);
  json l = call(s.srv, "list_dir", {{"path", "src"}});
  REQUIRE(l.at("result").at("isError") == false);
  CHECK(body(l).at("entries").at(0).at("path") == "src/b.txt");
  json out = call(s.srv, "list_dir", {{"path", "/"}});
  CHECK(out.at("result").at("isError") == true);
}

TEST_CASE("mcp: wait_for_decision reports an applied proposal with its rollback id", "[mcp]") {
  Served s;
  const int id = proposal_id(call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "new\n"}, {"why", "t"}}));
  approve_now(s.f, id);
  json r = call(s.srv, "wait_for_decision", {{"id", id}, {"timeout_s", 5}});
  REQUIRE(r.at("result").at("isError") == false);
  json b = body(r);
  CHECK(b.at("decided") == true);
  CHECK(b.at("proposal").at("status") == "applied");
  CHECK_FALSE(b.at("rollback_id").get<std::string>().empty());
  CHECK(s.f.dir.read("a.txt") == "new\n");
  json st = call(s.srv, "proposal_status", {{"id", id}});
  CHECK(body(st).at("proposal").at("status") == "applied");
  json listed = call(s.srv, "list_proposals", {{"status", "applied"}});
  CHECK(body(listed).at("proposals").size() == 1);
}

TEST_CASE("mcp: a rejected or expired proposal is a tool error, and so is an unknown id", "[mcp]") {
  Served s("2025-06-18", "[approval]\ntimeout = 60\n");
  const int rejected = proposal_id(call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "t"}}));
  const gate::Decider who{"tester", gate::Channel::terminal};
  gate::Request req;
  req.id = rejected;
  req.who = who;
  req.answer = gate::Answer::yes;
  REQUIRE(gate::reject(*s.f.ws, req, "not this way"));
  json r = call(s.srv, "wait_for_decision", {{"id", rejected}});
  CHECK(r.at("result").at("isError") == true);
  CHECK(body(r).at("error").at("kind") == "rejected");
  CHECK(body(r).at("error").at("code") == 4);
  CHECK_THAT(body(r).at("error").at("message").get<std::string>(), Catch::Contains("not this way"));

  const int late = proposal_id(call(s.srv, "write_file", {{"path", "b.txt"}, {"content", "x\n"}, {"why", "t"}}));
  s.f.clock.t += std::chrono::seconds(61);
  json st = call(s.srv, "proposal_status", {{"id", late}});
  CHECK(st.at("result").at("isError") == true);
  CHECK(body(st).at("error").at("kind") == "timeout");
  json w = call(s.srv, "wait_for_decision", {{"id", late}});
  CHECK(body(w).at("error").at("kind") == "timeout");
  CHECK(body(w).at("error").at("code") == 5);
  CHECK(s.state(late) == kai::State::timeout);  // the wait recorded the expiry
  CHECK_FALSE(s.f.dir.exists("b.txt"));

  json unknown = call(s.srv, "proposal_status", {{"id", 99}});
  CHECK(unknown.at("result").at("isError") == true);
  CHECK(body(unknown).at("error").at("kind") == "not_found");
}

TEST_CASE("mcp: a cancelled wait gets no answer, sends progress while it waits, and decides nothing", "[mcp]") {
  Served s;
  const int id = proposal_id(call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "t"}}));
  std::vector<json> sent;
  std::atomic<bool> cancelled{false};
  mcp::Door door{[&](const json& n) {
                   sent.push_back(n);
                   cancelled = true;  // the client cancels once it has seen progress
                 },
                 [&] { return cancelled.load(); },
                 nullptr,
                 {}};
  auto r = s.srv.handle(request(8, "tools/call",
                                {{"name", "wait_for_decision"},
                                 {"arguments", {{"id", id}, {"timeout_s", 30}}},
                                 {"_meta", {{"progressToken", "tok-1"}}}}),
                        door);
  CHECK_FALSE(r);  // cancelled: no response
  REQUIRE(sent.size() == 1);
  CHECK(sent[0].at("method") == "notifications/progress");
  CHECK(sent[0].at("params").at("progressToken") == "tok-1");
  CHECK(sent[0].at("params").at("total") == 30.0);
  CHECK(sent[0].at("params").at("message") == "waiting for a person: kaicoder approve " + std::to_string(id));
  CHECK(s.state(id) == kai::State::pending);
  CHECK(s.f.dir.read("a.txt") == "hello\n");
}

TEST_CASE("mcp: a wait whose client went away ends at once, answered, with the proposal still pending", "[mcp]") {
  Served s;
  const int id = proposal_id(call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "t"}}));
  mcp::Door door{nullptr, [] { return false; }, [] { return true; }, {}};
  json r = call(s.srv, "wait_for_decision", {{"id", id}, {"timeout_s", 600}}, door);
  REQUIRE(r.at("result").at("isError") == false);
  CHECK(body(r).at("decided") == false);
  CHECK_THAT(body(r).at("next").get<std::string>(), Catch::Contains("kaicoder approve " + std::to_string(id)));
  CHECK(s.state(id) == kai::State::pending);
}

namespace {

// What a Dispatcher sends, in order, as the client reads it.
struct Collector {
  std::mutex m;
  std::condition_variable cv;
  std::vector<json> got;
  std::function<void(const json&)> sink() {
    return [this](const json& j) {
      {
        std::lock_guard<std::mutex> g(m);
        got.push_back(j);
      }
      cv.notify_all();
    };
  }
  // The place of the response to request `id` once it came (at most 20 s).
  std::optional<size_t> wait_for(const json& id) {
    std::unique_lock<std::mutex> g(m);
    std::optional<size_t> at;
    cv.wait_for(g, std::chrono::seconds(20), [&] {
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i].is_object() && got[i].contains("id") && got[i]["id"] == id) at = i;
      return at.has_value();
    });
    return at;
  }
  std::vector<json> all() {
    std::lock_guard<std::mutex> g(m);
    return got;
  }
};

std::string line(int id, const std::string& tool, json args) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", std::move(args)}}).dump();
}

bool answered(const std::vector<json>& got, int id) {
  for (const auto& j : got)
    if (j.is_object() && j.value("id", json()) == id) return true;
  return false;
}

}  // namespace

TEST_CASE("mcp: a read and a second proposal are answered while a wait_for_decision is in flight",
          "[mcp][mcp_dispatch]") {
  Served s;
  Collector c;
  mcp::Dispatcher d(s.srv, c.sink());
  d.feed(line(2, "write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "t"}}));
  auto staged = c.wait_for(2);
  REQUIRE(staged);
  const int id = proposal_id(c.all()[*staged]);
  d.feed(line(3, "wait_for_decision", {{"id", id}, {"timeout_s", 30}}));
  d.feed(line(4, "read_file", {{"path", "a.txt"}}));
  d.feed(line(5, "write_file", {{"path", "b.txt"}, {"content", "y\n"}, {"why", "t"}}));
  d.feed(request(6, "ping").dump());
  REQUIRE(c.wait_for(4));
  REQUIRE(c.wait_for(5));
  REQUIRE(c.wait_for(6));
  CHECK_FALSE(answered(c.all(), 3));  // the wait is still waiting
  CHECK(body(c.all()[*c.wait_for(4)]).at("text") == "hello\n");
  const int second = proposal_id(c.all()[*c.wait_for(5)]);
  CHECK(second == id + 1);
  // The person approves the first: the wait answers with its rollback id.
  approve_now(s.f, id);
  auto waited = c.wait_for(3);
  REQUIRE(waited);
  CHECK(*waited > *c.wait_for(4));
  CHECK(body(c.all()[*waited]).at("decided") == true);
  CHECK(s.f.dir.read("a.txt") == "x\n");
  d.finish();
  CHECK(s.state(second) == kai::State::pending);
}

TEST_CASE("mcp: a cancel ends only the call it names, and end of input ends the other waits, answered",
          "[mcp][mcp_dispatch]") {
  Served s;
  Collector c;
  const int id = proposal_id(call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "t"}}));
  mcp::Dispatcher d(s.srv, c.sink());
  d.feed(line(10, "wait_for_decision", {{"id", id}, {"timeout_s", 60}}));
  d.feed(line(11, "wait_for_decision", {{"id", id}, {"timeout_s", 60}}));
  d.feed(json{{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 10}}}}.dump());
  d.feed(request(12, "ping").dump());
  REQUIRE(c.wait_for(12));
  d.finish();  // end of input: the remaining wait ends at once, deciding nothing
  auto got = c.all();
  CHECK_FALSE(answered(got, 10));
  REQUIRE(answered(got, 11));
  CHECK(body(got[*c.wait_for(11)]).at("decided") == false);
  CHECK(s.state(id) == kai::State::pending);
}

TEST_CASE("mcp: a batch is answered as one array under 2025-03-26 and refused under other versions",
          "[mcp][mcp_dispatch]") {
  const json batch =
      json::array({request(20, "ping"),
                   {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                   request(21, "tools/call", {{"name", "read_file"}, {"arguments", {{"path", "a.txt"}}}}),
                   {{"jsonrpc", "1.0"}, {"id", 22}, {"method", "ping"}}});
  SECTION("2025-03-26 has batches") {
    Served s("2025-03-26");
    Collector c;
    {
      mcp::Dispatcher d(s.srv, c.sink());
      d.feed(batch.dump());
      d.feed(json::array({{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}}).dump());  // nothing to answer
      d.feed("[]");
      d.finish();
    }
    auto got = c.all();
    REQUIRE(got.size() == 2);
    const json& answers = got[0].is_array() ? got[0] : got[1];
    const json& empty = got[0].is_array() ? got[1] : got[0];
    REQUIRE(answers.is_array());
    REQUIRE(answers.size() == 3);  // the notification gets none
    std::set<json> ids;
    for (const auto& a : answers) ids.insert(a.at("id"));
    CHECK(ids == std::set<json>{20, 21, 22});
    for (const auto& a : answers)
      if (a.at("id") == 21)
        CHECK(body(a).at("text") == "hello\n");
      else if (a.at("id") == 22)
        CHECK(a.at("error").at("code") == mcp::k_invalid_request);
    CHECK(empty.at("error").at("code") == mcp::k_invalid_request);
  }
  SECTION("any other version refuses them, running nothing") {
    Served s("2025-06-18");
    Collector c;
    {
      mcp::Dispatcher d(s.srv, c.sink());
      d.feed(json::array({request(30, "tools/call",
                                  {{"name", "write_file"},
                                   {"arguments", {{"path", "b.txt"}, {"content", "y\n"}, {"why", "t"}}}})})
                 .dump());
      d.finish();
    }
    auto got = c.all();
    REQUIRE(got.size() == 1);
    CHECK(got[0].at("id").is_null());
    CHECK(got[0].at("error").at("code") == mcp::k_invalid_request);
    CHECK_THAT(got[0].at("error").at("message").get<std::string>(), Catch::Contains("2025-03-26"));
    CHECK_FALSE(s.f.ws->store.load(1, kai::Store::Payloads::none));
  }
}

TEST_CASE("mcp: the proposing tools take 'publish'; without [team] it is refused and the proposal stays staged",
          "[mcp][team]") {
  Served s;
  auto r = s.srv.handle(request(2, "tools/list"));
  REQUIRE(r);
  for (const auto& t : r->at("result").at("tools")) {
    const std::string n = t.at("name");
    const bool proposes = n == "propose_edit" || n == "propose_patch" || n == "write_file" || n == "delete_file";
    INFO(n);
    CHECK(t.at("inputSchema").at("properties").contains("publish") == proposes);
    if (proposes) CHECK(t.at("inputSchema").at("properties").at("publish").at("type") == "boolean");
  }
  json a = call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "bye\n"}, {"why", "t"}, {"publish", true}});
  INFO(a.dump(2));
  CHECK(a.at("result").at("isError") == true);
  json b = body(a);
  CHECK(b.at("error").at("code") == 2);
  CHECK(b.at("error").at("message").get<std::string>().find("[team] remote") != std::string::npos);
  CHECK(b.at("proposal").at("id") == 1);
  CHECK(b.at("next").get<std::string>().find("kaicoder approve 1") != std::string::npos);
  CHECK(s.state(1) == kai::State::pending);
  // Not a boolean: the call itself is wrong.
  json bad = call(s.srv, "write_file", {{"path", "a.txt"}, {"content", "x\n"}, {"why", "t"}, {"publish", "yes"}});
  CHECK(bad.at("error").at("code") == mcp::k_invalid_params);
  // Without it, nothing is published and nothing is said of it.
  json plain = call(s.srv, "write_file", {{"path", "b.txt"}, {"content", "b\n"}, {"why", "t"}});
  CHECK(!body(plain).contains("published"));
}
