// kaicoder mcp: the Model Context Protocol on stdio. Newline-delimited
// JSON-RPC 2.0: stdout carries protocol messages only, logs go to stderr,
// and the server ends at end of input. What each message means, and the
// threads tool calls run on (lib/mcp/dispatch), live in lib/mcp; this file
// only reads lines and writes each message whole as one line.

#include <csignal>
#include <iostream>

#include "cmd/cli.hpp"
#include "lib/gate/envelope.hpp"
#include "lib/mcp/dispatch.hpp"
#include "lib/mcp/server.hpp"
#include "lib/version.hpp"

namespace kai::cmd {

using json = nlohmann::json;

RunFn setup_mcp(CLI::App& sub) {
  auto agent = std::make_shared<std::string>();
  sub.add_option("--agent", *agent,
                 "name recorded as proposed-by (default: $KAICODER_AGENT, else the client's name from initialize)");
  return [agent](Session& s) {
    auto ws = s.workspace();
    if (!ws) {
      // stdout belongs to the protocol: the refusal goes to stderr, always.
      err("kaicoder mcp: {}: {}\n", errc_kind(ws.error().code), ws.error().message);
      if (!ws.error().hint.empty()) err("hint: {}\n", ws.error().hint);
      return exit_code(ws.error().code);
    }
    std::signal(SIGPIPE, SIG_IGN);  // a client that closed its end ends the server at the next read, not by a signal
    std::string name = *agent;
    if (name.empty())
      if (const char* env_agent = std::getenv("KAICODER_AGENT")) name = env_agent;
    mcp::Server srv(**ws, {(*ws)->root, name}, std::string(version()));
    auto send = [](const json& j) {
      write_stdout(j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
      std::fflush(stdout);
    };
    err("kaicoder mcp: serving {} on stdio\n", (*ws)->root.string());
    // Room for a write at the [limits] content limit, JSON-escaped, and the rest.
    const size_t max_line = 6 * static_cast<size_t>((*ws)->cfg.limits.content) + (size_t{1} << 20);
    {
      mcp::Dispatcher dispatch(srv, send, max_line);
      std::string line;
      while (std::getline(std::cin, line)) dispatch.feed(line);
      dispatch.finish();
    }
    err("kaicoder mcp: end of input; pending proposals stay pending (kaicoder list)\n");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
