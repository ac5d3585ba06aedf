#pragma once
// Routing the messages of one MCP session to a Server, concurrently, with no
// transport: a line in, whole messages out through `send` (cmd/mcp.cpp
// writes each as one line of stdout; a test collects them).
//
//   Dispatcher d(srv, [&](const json& m) { write_line(m); });
//   while (read(line)) d.feed(line);
//   d.finish();                                  // end of input
//
// Tool calls run on a bounded pool of threads (k_max_calls in flight, the
// rest queued in order), so a wait_for_decision that blocks for a person
// does not hold up a read_file or a second proposal; everything else
// (initialize, ping, tools/list, notifications) is answered at once on the
// caller's thread. notifications/cancelled ends the call with that id (a
// queued one never runs, a running wait ends), and it gets no answer.
// finish() ends every wait at once (nothing is decided), answers the calls
// already sent, and returns when none is left.
//
// Every line gets an answer and the session goes on: -32700 for a line
// that is not JSON or nests too deep (lib/util/json_bounded), -32600 for
// one that is not a JSON-RPC message (lib/mcp/server parse_message), and
// -32603 when answering it failed inside.
//
// A JSON-RPC batch (an array) is answered only when protocol version
// 2025-03-26 was negotiated, the one version that has batches: one array
// of the responses, once all its requests are answered (notifications and
// cancelled calls add none; nothing is sent when none is left). Any other
// version gets the invalid-request error, as before the handshake.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lib/mcp/server.hpp"

namespace kai::mcp {

class Dispatcher {
public:
  static constexpr size_t k_max_calls = 8;

  // `send` must write one message whole; it is called from several threads
  // (the dispatcher serializes the calls itself).
  Dispatcher(Server& srv, std::function<void(const json&)> send, size_t max_line = size_t{64} << 20);
  ~Dispatcher();  // finish()
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  void feed(std::string_view line);
  void finish();

private:
  using Sink = std::function<void(std::optional<json>)>;
  struct Job {
    json msg;
    Sink sink;
  };
  void emit(const json& m);
  void take(std::string_view line);
  void route(json msg, const Sink& sink);
  void batch(json list);
  void worker();
  bool is_cancelled(const std::string& id);

  Server& m_srv;
  std::function<void(const json&)> m_send;
  size_t m_max_line;
  std::mutex m_out;  // one message at a time on the way out
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<Job> m_queue;
  std::set<std::string> m_cancelled;
  std::atomic<bool> m_gone{false};
  bool m_done = false;
  std::vector<std::thread> m_threads;
};

}  // namespace kai::mcp
