#include "lib/decide.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/hooks.hpp"
#include "lib/util/text.hpp"

namespace kai {

Entry unreversible_entry(const Workspace& ws, const Proposal& p, const std::string& kind, const std::string& approver,
                         const std::string& result, const std::string& summary) {
  Entry e;
  e.time = iso_utc(ws.clock->now());
  e.kind = kind;
  e.rollback_id = k_none;
  if (!p.path.empty()) e.files = {(ws.root / p.path).string()};
  e.action = std::string(action_name(p.kind));
  e.summary = make_visible(summary);
  e.why = p.why;
  e.backup = k_none;
  e.approver = approver;
  e.result = result;
  e.rollback = k_none;
  return ws.redact(std::move(e));
}

Status may_decide(const Workspace& ws, const std::string& user) {
  const auto& list = ws.cfg.approvers;
  if (list.empty() || std::find(list.begin(), list.end(), user) != list.end()) return ok_status();
  return make_error(Errc::denied, fmt::format("'{}' is not an approver here", user),
                    "[approval] approvers in kaicoder.toml names who may decide");
}

bool past_timeout(const Workspace& ws, const Proposal& p) {
  if (p.state != State::pending) return false;
  TimePoint created;
  if (!parse_iso_utc(p.created, created)) return false;
  return ws.clock->now() - created > std::chrono::seconds(ws.cfg.timeout);
}

namespace {

Status expire(Workspace& ws, Proposal& p) {
  p.state = State::timeout;
  p.result = fmt::format("timeout: not decided within {} s", ws.cfg.timeout);
  p.outcome_code = static_cast<int>(Errc::timeout);
  // Entry first: if we die in between, the next sweep logs it again rather
  // than never; the status change is what makes it happen once.
  KAI_TRY(ws.changelog.prepend(unreversible_entry(ws, p, "timeout", k_none, p.result, p.summary)));
  KAI_TRY(ws.store.save(p));
  queue_notify(ws, p, "timeout");
  return ok_status();
}

Result<Proposal> pending_or_error(Workspace& ws, int id) {
  auto p = ws.store.load(id);
  if (!p) return p.error();
  if (p->state == State::pending && past_timeout(ws, *p)) KAI_TRY(expire(ws, *p));
  if (p->state == State::timeout)
    return make_error(Errc::timeout, fmt::format("proposal {} expired before a decision", id),
                      "ask the agent to propose it again");
  if (p->state != State::pending)
    return make_error(Errc::conflict,
                      fmt::format("proposal {} is already {}{}", id, to_string(p->state),
                                  p->decided_by.empty() ? "" : fmt::format(" (by {})", p->decided_by)));
  return p;
}

}  // namespace

Result<std::vector<int>> sweep(Workspace& ws) {
  auto r = recover(ws);
  if (!r) return r.error();
  std::vector<int> out;
  auto ids = ws.store.ids();
  if (!ids) return ids.error();
  for (int id : *ids) {
    auto p = ws.store.load(id);
    if (!p || p->state != State::pending || !past_timeout(ws, *p)) continue;
    KAI_TRY(expire(ws, *p));
    out.push_back(id);
  }
  return out;
}

Result<Proposal> load_for_decision(Workspace& ws, int id) {
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto s = sweep(ws);
  if (!s) return s.error();
  return ws.store.load(id);
}

Result<Approved> approve(Workspace& ws, int id, const std::string& seen_digest, const std::string& user, ApplyNow now,
                         Force force) {
  KAI_TRY(may_decide(ws, user));
  if (now == ApplyNow::yes && ws.cfg.mode == "propose-only")
    return make_error(Errc::denied, "policy mode is propose-only: kaicoder stages and diffs but never applies",
                      "approve with --no-apply to record the decision, or change [policy] mode");
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto s = sweep(ws);
  if (!s) return s.error();
  auto p = pending_or_error(ws, id);
  if (!p) return p.error();
  if (digest(*p) != seen_digest)
    return make_error(Errc::conflict, fmt::format("proposal {} changed while it was being reviewed", id),
                      "review it again: kaicoder show " + std::to_string(id));
  // Refused before the approval is recorded, so the proposal stays pending.
  if (now == ApplyNow::yes) KAI_TRY(validation_permits_apply(*p, force));
  p->state = State::approved;
  p->decided_by = user;
  p->decided_at = iso_utc(ws.clock->now());
  p->approved_digest = seen_digest;
  KAI_TRY(ws.store.save(*p));
  queue_notify(ws, *p, "approved");
  Approved out{*p, std::nullopt};
  if (now == ApplyNow::no) return out;
  auto o = apply_proposal(ws, out.proposal, user, force);
  if (!o) return o.error();
  out.applied = std::move(*o);
  return out;
}

Result<Proposal> reject(Workspace& ws, int id, const std::string& user, const std::string& reason) {
  KAI_TRY(may_decide(ws, user));
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto s = sweep(ws);
  if (!s) return s.error();
  auto p = pending_or_error(ws, id);
  if (!p) {
    // An approved but not yet applied proposal may still be turned down.
    auto q = ws.store.load(id);
    if (!q || (q->state != State::approved && q->state != State::failed)) return p.error();
    p = std::move(q);
  }
  p->state = State::rejected;
  p->decided_by = user;
  p->decided_at = iso_utc(ws.clock->now());
  p->reason = ws.redact(reason);
  p->result = reason.empty() ? "rejected" : fmt::format("rejected: {}", p->reason);
  p->outcome_code = static_cast<int>(Errc::rejected);
  KAI_TRY(ws.changelog.prepend(unreversible_entry(ws, *p, "rejected", user, p->result, p->summary)));
  KAI_TRY(ws.store.save(*p));
  queue_notify(ws, *p, "rejected");
  return p;
}

Result<Approved> apply_approved(Workspace& ws, int id, const std::string& user, Force force) {
  KAI_TRY(may_decide(ws, user));
  if (ws.cfg.mode == "propose-only")
    return make_error(Errc::denied, "policy mode is propose-only: kaicoder stages and diffs but never applies");
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto s = sweep(ws);
  if (!s) return s.error();
  auto p = ws.store.load(id);
  if (!p) return p.error();
  auto o = apply_proposal(ws, *p, p->decided_by.empty() ? user : p->decided_by, force);
  if (!o) return o.error();
  return Approved{*p, std::move(*o)};
}

}  // namespace kai

#include <thread>

namespace kai {

Result<Outcome> rollback(Workspace& ws, const std::string& id, const std::string& user, Force force, CheckOnly check) {
  KAI_TRY(may_decide(ws, user));
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto s = sweep(ws);
  if (!s) return s.error();
  return rollback_entry(ws, id, user, force, check);
}

Result<Proposal> wait_for_decision(Workspace& ws, int id) {
  for (;;) {
    auto p = ws.store.load(id);
    if (!p) return p.error();
    if (p->state == State::pending && past_timeout(ws, *p)) {
      auto lock = ws.store.lock();
      if (!lock) return lock.error();
      auto s = sweep(ws);
      if (!s) return s.error();
      continue;
    }
    // Approved is not the outcome yet: the proposer waits for the apply
    // (or the run) and what it did.
    if (p->state != State::pending && p->state != State::approved) return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int outcome_exit_code(const Proposal& p) {
  if (p.kind == Kind::run && p.state == State::applied) return p.outcome_code;
  switch (p.state) {
    case State::applied:
    case State::approved:
    case State::rolled_back: return 0;
    case State::rejected: return static_cast<int>(Errc::rejected);
    case State::timeout: return static_cast<int>(Errc::timeout);
    case State::failed: return p.outcome_code > 0 ? p.outcome_code : 1;
    case State::pending: return 1;
  }
  return 1;
}

}  // namespace kai
