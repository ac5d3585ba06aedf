#include "lib/mcp/dispatch.hpp"

#include <memory>

#include <fmt/format.h>

namespace kai::mcp {

Dispatcher::Dispatcher(Server& srv, std::function<void(const json&)> send, size_t max_line)
    : m_srv(srv), m_send(std::move(send)), m_max_line(max_line) {
  for (size_t i = 0; i < k_max_calls; ++i) m_threads.emplace_back([this] { worker(); });
}

Dispatcher::~Dispatcher() { finish(); }

void Dispatcher::emit(const json& m) {
  std::lock_guard<std::mutex> g(m_out);
  m_send(m);
}

void Dispatcher::feed(std::string_view line) {
  if (line.empty() || line == "\r") return;
  // Whatever a line holds, it gets its answer and the session goes on: a
  // fault in answering one message is that message's internal error.
  try {
    take(line);
  } catch (const std::exception& e) {
    emit(error_response(nullptr, k_internal_error, fmt::format("internal error: {}", e.what())));
  }
}

void Dispatcher::take(std::string_view line) {
  if (line.size() > m_max_line) return emit(error_response(nullptr, k_invalid_request, "message too large"));
  if (line.back() == '\r') line.remove_suffix(1);
  Parsed one = parse_message(line);
  if (one.error_reply && one.error_reply->at("error").at("code") == k_invalid_request) {
    // Not one message: a batch, when the version agreed has them.
    json j = json::parse(line, nullptr, false);  // nests within the bound: parse_message checked
    if (j.is_array() && m_srv.version() == k_batch_version) return batch(std::move(j));
    if (j.is_array())
      return emit(
          error_response(nullptr, k_invalid_request,
                         fmt::format("invalid request: batches exist only in protocol version {}", k_batch_version)));
  }
  if (one.error_reply) return emit(*one.error_reply);
  route(std::move(*one.message), [this](std::optional<json> reply) {
    if (reply) emit(*reply);
  });
}

// One message: a cancellation noted, a tool call to the pool, the rest answered now.
void Dispatcher::route(json msg, const Sink& sink) {
  if (auto id = Server::cancelled_id(msg)) {
    std::lock_guard<std::mutex> g(m_mutex);
    m_cancelled.insert(id->dump());
  }
  if (!Server::blocks(msg)) return sink(m_srv.handle(msg));
  {
    std::lock_guard<std::mutex> g(m_mutex);
    m_queue.push_back({std::move(msg), sink});
  }
  m_wake.notify_one();
}

void Dispatcher::batch(json list) {
  if (list.empty()) return emit(error_response(nullptr, k_invalid_request, "invalid request: an empty batch"));
  struct Gather {
    std::mutex mutex;
    json replies = json::array();
    size_t left = 0;
  };
  auto g = std::make_shared<Gather>();
  g->left = list.size();
  Sink sink = [this, g](std::optional<json> reply) {
    json all;
    {
      std::lock_guard<std::mutex> lock(g->mutex);
      if (reply) g->replies.push_back(std::move(*reply));
      if (--g->left > 0 || g->replies.empty()) return;
      all = std::move(g->replies);
    }
    emit(all);
  };
  for (json& m : list) {
    Parsed p = check_message(std::move(m));
    if (p.error_reply)
      sink(std::move(p.error_reply));
    else
      route(std::move(*p.message), sink);
  }
}

bool Dispatcher::is_cancelled(const std::string& id) {
  std::lock_guard<std::mutex> g(m_mutex);
  return m_cancelled.count(id) > 0;
}

void Dispatcher::worker() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> g(m_mutex);
      m_wake.wait(g, [this] { return m_done || !m_queue.empty(); });
      if (m_queue.empty()) return;  // finished, and every call sent is answered
      job = std::move(m_queue.front());
      m_queue.pop_front();
    }
    const std::string id = job.msg["id"].dump();
    std::optional<json> reply;
    if (!is_cancelled(id)) {
      Door door{[this](const json& n) { emit(n); },
                [this, id] { return is_cancelled(id); },
                [this] { return m_gone.load(); },
                {}};
      try {
        reply = m_srv.handle(job.msg, door);
      } catch (const std::exception& e) {
        reply = error_response(job.msg["id"], k_internal_error, fmt::format("internal error: {}", e.what()));
      }
    }
    job.sink(std::move(reply));
    std::lock_guard<std::mutex> g(m_mutex);
    m_cancelled.erase(id);
  }
}

void Dispatcher::finish() {
  m_gone = true;
  {
    std::lock_guard<std::mutex> g(m_mutex);
    if (m_done) return;
    m_done = true;
  }
  m_wake.notify_all();
  for (auto& t : m_threads) t.join();
}

}  // namespace kai::mcp
