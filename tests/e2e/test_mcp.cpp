// kaicoder mcp driven by the official MCP TypeScript SDK client
// (tests/mcp/client.mjs, installed by `npm ci` in scripts/test.sh) over
// stdio. This side owns the repository and the person at the terminal: when
// the client says "APPROVE N" or "REJECT N" it decides proposal N on a
// pseudo-terminal, as a person does, while the client waits with progress.
// Without node on PATH the cases are skipped with a warning.

#include <cstdlib>
#include <map>
#include <thread>

#include "tests/support/team.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

const fs::path k_client_dir = fs::path(KAICODER_SOURCE_DIR) / "tests" / "mcp";

bool have_node() {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    std::error_code ec;
    if (!dir.empty() && fs::exists(fs::path(dir) / "node", ec)) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

// Whether the SDK client can run here: node must be there (else the case is
// skipped), and its packages installed (else the case fails and says how).
bool client_ready() {
  if (!have_node()) {
    WARN("SKIPPED: node is not on PATH; the MCP SDK client cannot run (scripts/test.sh installs Debian's nodejs)");
    return false;
  }
  INFO("the MCP SDK client is not installed: run `npm ci` in tests/mcp (scripts/test.sh does)");
  REQUIRE(fs::exists(k_client_dir / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"));
  return true;
}

Process start_client(const TempRepo& repo, const std::string& scenario) {
  return repo.spawn({"node", (k_client_dir / "client.mjs").string(), scenario, kaicoder_bin()});
}

// The number after `word ` once the client printed such a line; 0 if it ended or 60 s passed first.
int wait_for_line(Process& client, const std::string& word) {
  for (int i = 0; i < 2400; ++i) {
    const std::string& out = client.so_far().out;
    if (size_t at = out.find(word + " "); at != std::string::npos && out.find('\n', at) != std::string::npos)
      return std::atoi(out.c_str() + at + word.size() + 1);
    if (client.done()) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return 0;
}

void check_passed(Process& client) {
  Run r = client.finish(60s);
  KAI_CHECK_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("PASS"));
}

}  // namespace

TEST_CASE("mcp sdk: handshake, tools/list, ping, an unknown tool, bad arguments, denied paths, a 2024-11-05 client",
          "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  if (!client_ready()) return;
  const auto before = repo.tree_snapshot();
  Process client = start_client(repo, "handshake");
  check_passed(client);
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("mcp sdk: a person approves at a terminal while the client waits with progress", "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  if (!client_ready()) return;
  Process client = start_client(repo, "approve");
  const int id = wait_for_line(client, "APPROVE");
  INFO(client.so_far().all());
  REQUIRE(id == 1);
  CHECK(repo.read("a.txt") == "hello\n");  // nothing written before the person said yes
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  check_passed(client);
  CHECK(repo.read("a.txt") == "hello, world\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
}

TEST_CASE("mcp sdk: a rejection is a tool error with kind rejected", "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  if (!client_ready()) return;
  Process client = start_client(repo, "reject");
  const int id = wait_for_line(client, "REJECT");
  INFO(client.so_far().all());
  REQUIRE(id == 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1", "--reason", "not now"}, "y"), 0);
  check_passed(client);
  CHECK_FALSE(repo.exists("b.txt"));
}

TEST_CASE("mcp sdk: a proposal that expires ends the wait with kind timeout", "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}, {"kaicoder.toml", "[approval]\ntimeout = 2\n"}};
  repo.trust();
  if (!client_ready()) return;
  Process client = start_client(repo, "expire");
  check_passed(client);
  CHECK_FALSE(repo.exists("b.txt"));
  CHECK(show_json(repo, 1).at("status") == "timeout");
}

TEST_CASE("mcp sdk: a cancelled wait decides nothing and the server keeps answering", "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  if (!client_ready()) return;
  Process client = start_client(repo, "cancel");
  check_passed(client);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK_FALSE(repo.exists("b.txt"));
}

TEST_CASE("mcp sdk: a client that disconnects mid-wait leaves the proposal pending for kaicoder wait", "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  if (!client_ready()) return;
  Process client = start_client(repo, "disconnect");
  const int id = wait_for_line(client, "DISCONNECTED");
  INFO(client.so_far().all());
  REQUIRE(id == 1);
  check_passed(client);
  CHECK(show_json(repo, 1).at("status") == "pending");
  // The proposal outlived its client: a person approves, `kaicoder wait` reports it.
  Process waiter = repo.spawn_kai({"--json", "wait", "1", "--timeout", "60"});
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  Run w = waiter.finish(60s);
  KAI_CHECK_EXIT(w, 0);
  CHECK(json_of(w).at("proposal").at("status") == "applied");
  CHECK(repo.read("b.txt") == "b\n");
}

TEST_CASE("mcp sdk: a read_file and a second proposal are answered while a wait_for_decision is in flight",
          "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  if (!client_ready()) return;
  Process client = start_client(repo, "parallel");
  const int id = wait_for_line(client, "APPROVE");
  INFO(client.so_far().all());
  REQUIRE(id == 1);
  CHECK_FALSE(repo.exists("b.txt"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  check_passed(client);
  CHECK(repo.read("b.txt") == "b\n");
  CHECK(show_json(repo, 2).at("status") == "pending");
  CHECK_FALSE(repo.exists("c.txt"));
}

namespace {

// The messages `kaicoder mcp` wrote for `lines`, one per stdout line, once its input ended.
std::vector<nlohmann::json> mcp_session(const TempRepo& repo, const std::vector<std::string>& lines) {
  std::string in;
  for (const auto& l : lines) in += l + "\n";
  Run r = repo.kai({"mcp"}, in);
  INFO(r.err.substr(0, 2000));
  KAI_REQUIRE_EXIT(r, 0);
  std::vector<nlohmann::json> out;
  for (size_t at = 0; at < r.out.size();) {
    size_t nl = r.out.find('\n', at);
    if (nl == std::string::npos) nl = r.out.size();
    out.push_back(nlohmann::json::parse(r.out.substr(at, nl - at)));
    at = nl + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("mcp session: a line nesting 1.5 million open brackets is a parse error, and the server answers the next ping",
          "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  const std::string deep = R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":)" +
                           std::string(1500000, '[') + "}}}";
  auto out = mcp_session(repo, {deep, R"({"jsonrpc":"2.0","id":2,"method":"ping"})"});
  REQUIRE(out.size() == 2);
  CHECK(out[0].at("id").is_null());
  CHECK(out[0].at("error").at("code") == -32700);
  CHECK_THAT(out[0].at("error").at("message").get<std::string>(), Contains("deeper than"));
  CHECK(out[1].at("id") == 2);
  CHECK(out[1].at("result") == nlohmann::json::object());
}

TEST_CASE("mcp session: every mistyped line gets its JSON-RPC error and the session goes on", "[e2e][mcp]") {
  TempRepo repo{{"a.txt", "hello\n"}};
  repo.init();
  struct Line {
    std::string text;
    int code;
    nlohmann::json id;
  };
  const std::vector<Line> bad = {
      {R"({"jsonrpc":2,"id":1,"method":"ping"})", -32600, 1},
      {R"({"jsonrpc":null,"id":2,"method":"ping"})", -32600, 2},
      {R"({"jsonrpc":["2.0"],"id":3,"method":"ping"})", -32600, 3},
      {R"({"id":4,"method":"ping"})", -32600, 4},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", -32600, nullptr},
      {R"({"jsonrpc":"2.0","id":[5],"method":"ping"})", -32600, nullptr},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})", -32600, nullptr},
      {R"({"jsonrpc":"2.0","id":6.5,"method":"ping"})", -32600, nullptr},
      {R"({"jsonrpc":"2.0","id":7,"method":7})", -32600, 7},
      {R"({"jsonrpc":"2.0","id":8,"method":null})", -32600, 8},
      {R"({"jsonrpc":"2.0","id":9,"method":["ping"]})", -32600, 9},
      {R"({"jsonrpc":"2.0","id":10,"method":"ping","params":"x"})", -32600, 10},
      {R"({"jsonrpc":"2.0","id":11})", -32600, 11},
      {"null", -32600, nullptr},
      {"42", -32600, nullptr},
      {R"("ping")", -32600, nullptr},
      {"[]", -32600, nullptr},
      {R"([{"jsonrpc":"2.0","id":12,"method":"ping"}])", -32600, nullptr},
      {"{not json", -32700, nullptr},
      {std::string(R"({"jsonrpc":"2.0","id":13,"method":"ping"})") + std::string(1, '\0') + "x", -32700, nullptr},
      {R"({"jsonrpc":"2.0","id":14,"method":"initialize","params":{"protocolVersion":5,"clientInfo":{"name":[]}}})", 0, 14},
      {R"({"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read_file","arguments":[[[1]]]}})", -32602, 15},
      {R"({"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":7}})", -32602, 16},
  };
  // Tool calls are answered from the pool, so replies are matched by id:
  // every ping after a bad line has its own, and the bad lines without a
  // usable id are answered at once, in order.
  std::vector<std::string> lines;
  for (size_t i = 0; i < bad.size(); ++i) {
    lines.push_back(bad[i].text);
    lines.push_back(nlohmann::json{{"jsonrpc", "2.0"}, {"id", "after-" + std::to_string(i)}, {"method", "ping"}}.dump());
  }
  auto out = mcp_session(repo, lines);
  REQUIRE(out.size() == 2 * bad.size());
  std::map<std::string, nlohmann::json> by_id;
  std::vector<nlohmann::json> no_id;
  for (const auto& reply : out) {
    CHECK(reply.at("jsonrpc") == "2.0");
    if (reply.at("id").is_null())
      no_id.push_back(reply);
    else
      by_id[reply.at("id").dump()] = reply;
  }
  size_t next_no_id = 0;
  for (size_t i = 0; i < bad.size(); ++i) {
    INFO("line: " << bad[i].text);
    const nlohmann::json* reply = nullptr;
    if (bad[i].id.is_null()) {
      REQUIRE(next_no_id < no_id.size());
      reply = &no_id[next_no_id++];
    } else {
      REQUIRE(by_id.count(bad[i].id.dump()));
      reply = &by_id[bad[i].id.dump()];
    }
    if (bad[i].code == 0)
      CHECK(reply->contains("result"));
    else
      CHECK(reply->at("error").at("code") == bad[i].code);
    const std::string ping = nlohmann::json("after-" + std::to_string(i)).dump();
    REQUIRE(by_id.count(ping));
    CHECK(by_id[ping].at("result") == nlohmann::json::object());
  }
  CHECK(next_no_id == no_id.size());
}

TEST_CASE("mcp sdk: team mode: propose_edit with publish, a person approves from their clone, the wait applies it",
          "[e2e][mcp][team]") {
  TeamRepos t;
  if (!client_ready()) return;
  Process client = start_client(t.agent, "team");
  const int id = wait_for_line(client, "APPROVE");
  REQUIRE(id == 1);
  const int local = t.fetch_one();
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(local)}, "y"), 0);
  check_passed(client);
  CHECK(t.agent.read("a.txt") == "beta\n");
  CHECK(log_entries(t.agent)[0].at("approver") == "person@example.com (team)");
}
