#pragma once
// Many tool calls through one `kaicoder mcp`: the propose path every door
// shares, without a process per proposal, for cases that need many
// proposals before the part they test.
//
//   auto replies = mcp_tool_calls(repo, "bot", {{"write_file", {{"path", "a.txt"}, …}}, …});

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/checks.hpp"

namespace kai::test {

// The calls' structuredContent, in order; fails the case unless kaicoder mcp
// exits 0 and answers every call.
inline std::vector<nlohmann::json> mcp_tool_calls(const TempRepo& repo, const std::string& agent,
                                                  const std::vector<std::pair<std::string, nlohmann::json>>& calls) {
  using json = nlohmann::json;
  std::string in = json{{"jsonrpc", "2.0"},
                        {"id", 0},
                        {"method", "initialize"},
                        {"params",
                         {{"protocolVersion", "2025-06-18"},
                          {"capabilities", json::object()},
                          {"clientInfo", {{"name", "e2e"}, {"version", "1"}}}}}}
                       .dump() +
                   "\n";
  in += json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump() + "\n";
  for (size_t i = 0; i < calls.size(); ++i)
    in += json{{"jsonrpc", "2.0"},
               {"id", i + 1},
               {"method", "tools/call"},
               {"params", {{"name", calls[i].first}, {"arguments", calls[i].second}}}}
              .dump() +
          "\n";
  Run r = repo.kai({"mcp", "--agent", agent}, in, {}, std::chrono::milliseconds(120000));
  KAI_REQUIRE_EXIT(r, 0);
  std::vector<json> out(calls.size());
  size_t answered = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    json reply = json::parse(line);
    const size_t id = reply.at("id").get<size_t>();
    if (id == 0) continue;
    INFO(line);
    REQUIRE(id <= calls.size());
    out[id - 1] = reply.at("result").at("structuredContent");
    ++answered;
  }
  REQUIRE(answered == calls.size());
  return out;
}

}  // namespace kai::test
