#include "lib/gate/limits.hpp"

#include <fmt/format.h>

#include "lib/gate/decide.hpp"
#include "lib/util/text.hpp"
#include "lib/util/time.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

namespace {

Error too_long(std::string_view what, size_t size, std::string_view unit, long limit, std::string_view key) {
  return make_error(Errc::usage,
                    fmt::format("{} is {} {}; the limit is {} ([limits] {})", what, size, unit, limit, key),
                    "shorten it and propose again; nothing was staged");
}

}  // namespace

Status check_text_limits(const Config::Limits& l, std::string_view why, std::string_view summary,
                         std::string_view agent) {
  if (why.size() > static_cast<size_t>(l.why)) return too_long("--why", why.size(), "bytes", l.why, "why");
  if (size_t n = utf8_length(summary); n > static_cast<size_t>(l.summary))
    return too_long("--summary", n, "characters", l.summary, "summary");
  if (size_t n = utf8_length(agent); n > static_cast<size_t>(l.agent))
    return too_long("the agent name", n, "characters", l.agent, "agent");
  return ok_status();
}

Status check_path_limits(const Config::Limits& l, std::string_view what, std::string_view path) {
  if (path.size() > static_cast<size_t>(l.path)) return too_long(what, path.size(), "bytes", l.path, "path");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = std::min(path.find('/', start), path.size());
    if (end - start > static_cast<size_t>(l.path_component))
      return too_long(fmt::format("a name in {}", what), end - start, "bytes", l.path_component, "path_component");
    start = end + 1;
  }
  return ok_status();
}

Status check_payload_limit(const Config::Limits& l, std::string_view what, size_t bytes) {
  if (bytes <= static_cast<size_t>(l.content)) return ok_status();
  return make_error(Errc::usage, fmt::format("{} is over the limit of {} bytes ([limits] content)", what, l.content),
                    "split the change into smaller proposals; nothing was staged");
}

Status check_pending_limit(const Workspace& ws, const Store::LiveView& live, const std::string& agent) {
  long pending = 0;
  const int64_t now = unix_seconds(ws.clock->now());
  live.each([&](const Store::LiveEntry& e) {
    if (e.readable && e.state == State::pending && e.agent == agent && !past_timeout(ws, e, now)) ++pending;
    return true;
  });
  if (pending < ws.cfg.limits.pending) return ok_status();
  return make_error(Errc::denied,
                    fmt::format("{} already has {} proposals waiting for a decision ([limits] pending is {})",
                                agent.empty() ? std::string("an agent without a name")
                                              : fmt::format("agent '{}'", make_visible(agent)),
                                pending, ws.cfg.limits.pending),
                    "wait until the person decides some (kaicoder list --status pending); nothing was staged");
}

std::optional<Proposal> pending_twin(const Workspace& ws, const Store::LiveView& live,
                                     const Proposal& p) {
  const std::string want = digest(p);
  const std::string key = live_key(p, want);
  std::optional<Proposal> found;
  const int64_t now = unix_seconds(ws.clock->now());
  live.each([&](const Store::LiveEntry& e) {
    // The key first: it tells requests apart where the agent mostly does not.
    if (e.key != key || !e.readable || e.state != State::pending || e.agent != p.agent || past_timeout(ws, e, now))
      return true;
    // The index only says where to look: the record, its own seal checked, decides.
    auto q = ws.store.load(e.id, Store::Payloads::none);
    if (!q || q->state != State::pending || q->sealed != SealCheck::ok || past_timeout(ws, *q)) return true;
    // The same base too: a retry after the file changed is a new proposal,
    // not one whose approval would now fail as stale.
    const bool same_base = q->base.exists == p.base.exists && q->base.blob == p.base.blob;
    if (q->agent == p.agent && q->kind == p.kind && q->path == p.path && same_base && q->sealed_payload_digest == want) {
      found = std::move(*q);
      return false;
    }
    return true;
  });
  return found;
}

}  // namespace kai
