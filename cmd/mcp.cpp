// kaicoder mcp: the Model Context Protocol on stdio. Newline-delimited
// JSON-RPC 2.0: stdout carries protocol messages only, logs go to stderr,
// and the server ends at end of input. What each message means lives in
// lib/mcp; this file only reads lines, writes lines, and runs tool calls on a
// worker thread so that ping and cancellation are still read while a
// wait_for_decision blocks.

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "cmd/cli.hpp"
#include "lib/envelope.hpp"
#include "lib/mcp/server.hpp"
#include "lib/version.hpp"

namespace kai::cmd {
namespace {

using json = nlohmann::json;

// Tool calls, run one at a time beside the reading loop.
class Worker {
public:
  Worker(mcp::Server& srv, std::function<void(const json&)> send) : m_srv(srv), m_send(std::move(send)) {
    m_thread = std::thread([this] { loop(); });
  }
  ~Worker() {
    {
      std::lock_guard<std::mutex> g(m_mutex);
      m_done = true;
    }
    m_wake.notify_all();
    m_thread.join();
  }
  void push(json msg) {
    {
      std::lock_guard<std::mutex> g(m_mutex);
      m_queue.push_back(std::move(msg));
    }
    m_wake.notify_all();
  }
  // notifications/cancelled: a queued call is dropped, a running one ends
  // without an answer.
  void cancel(const json& id) {
    std::lock_guard<std::mutex> g(m_mutex);
    m_cancelled.insert(id.dump());
  }
  // End of input: a wait ends at once; the calls already sent are answered.
  void client_gone() {
    {
      std::lock_guard<std::mutex> g(m_mutex);
      m_gone = true;
    }
    m_wake.notify_all();
  }

private:
  bool is_cancelled(const std::string& id) {
    std::lock_guard<std::mutex> g(m_mutex);
    return m_cancelled.count(id) > 0;
  }
  void loop() {
    for (;;) {
      json msg;
      {
        std::unique_lock<std::mutex> g(m_mutex);
        m_wake.wait(g, [this] { return m_done || m_gone || !m_queue.empty(); });
        if (m_queue.empty()) return;  // done, or the client is gone and every call it sent is answered
        msg = std::move(m_queue.front());
        m_queue.pop_front();
      }
      const std::string id = msg["id"].dump();
      if (!is_cancelled(id)) {
        mcp::Door door{m_send, [this, id] { return is_cancelled(id); }, [this] { return m_gone.load(); }};
        if (auto reply = m_srv.handle(msg, door)) m_send(*reply);
      }
      std::lock_guard<std::mutex> g(m_mutex);
      m_cancelled.erase(id);
    }
  }

  mcp::Server& m_srv;
  std::function<void(const json&)> m_send;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<json> m_queue;
  std::set<std::string> m_cancelled;
  std::atomic<bool> m_gone{false};
  bool m_done = false;
  std::thread m_thread;
};

}  // namespace

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
    std::mutex out_mutex;
    auto send = [&out_mutex](const json& j) {
      std::lock_guard<std::mutex> g(out_mutex);
      write_stdout(j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
      std::fflush(stdout);
    };
    err("kaicoder mcp: serving {} on stdio\n", (*ws)->root.string());
    // Room for a write at the [limits] content limit, JSON-escaped, and the rest.
    const size_t max_line = 6 * static_cast<size_t>((*ws)->cfg.limits.content) + (size_t{1} << 20);
    {
      Worker worker(srv, send);
      std::string line;
      while (std::getline(std::cin, line)) {
        if (line.empty() || line == "\r") continue;
        if (line.size() > max_line) {
          send(mcp::error_response(nullptr, mcp::k_invalid_request, "message too large"));
          continue;
        }
        auto parsed = mcp::parse_message(line);
        if (parsed.error_reply) {
          send(*parsed.error_reply);
          continue;
        }
        const json& msg = *parsed.message;
        if (auto id = mcp::Server::cancelled_id(msg)) worker.cancel(*id);
        if (mcp::Server::blocks(msg)) worker.push(msg);
        else if (auto reply = srv.handle(msg)) send(*reply);
      }
      worker.client_gone();
    }
    err("kaicoder mcp: end of input; pending proposals stay pending (kaicoder list)\n");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
