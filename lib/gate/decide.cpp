#include "lib/gate/decide.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/run/hooks.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/gate/status.hpp"
#include "lib/util/text.hpp"

namespace kai {

Entry unreversible_entry(const Workspace& ws, const Proposal& p, const std::string& kind, const std::string& approver,
                         const std::string& result, const std::string& summary) {
  Entry e;
  e.time = iso_utc(ws.clock->now());
  e.kind = kind;
  if (p.kind == Kind::changeset) {
    for (const Change& c : p.changes) {
      e.files.push_back((ws.root / c.path).string());
      if (!c.to.empty()) e.files.push_back((ws.root / c.to).string());
    }
  } else if (!p.path.empty()) {
    e.files = {(ws.root / p.path).string()};
  }
  e.action = std::string(action_name(p.kind));
  e.summary = make_visible(summary);
  e.why = p.why;
  e.approver = approver;
  e.result = result;
  return ws.redact(std::move(e));
}

bool past_timeout(const Workspace& ws, const Store::LiveEntry& e) {
  return past_timeout(ws, e, unix_seconds(ws.clock->now()));
}

bool past_timeout(const Workspace& ws, const Store::LiveEntry& e, int64_t now) {
  if (!e.readable || (e.state != State::pending && e.state != State::held) || e.clock == '-') return false;
  if (e.clock == 'a') return now > e.at;
  return now - e.at > ws.cfg.timeout;
}

bool past_timeout(const Workspace& ws, const Proposal& p) {
  if (p.state != State::pending && p.state != State::held) return false;
  TimePoint since;
  // A team proposal of another clone expires when its origin's timeout ends.
  if (p.team.remote()) return parse_iso_utc(p.team.expires, since) && ws.clock->now() > since;
  // Held effects wait from when they were held.
  if (!parse_iso_utc(p.state == State::held ? p.held_since : p.created, since)) return false;
  return ws.clock->now() - since > std::chrono::seconds(ws.cfg.timeout);
}

std::string Decider::recorded() const {
  if (!policy_rule.empty()) return fmt::format("policy ({})", policy_rule);
  if (channel == Channel::terminal) return user;
  return fmt::format("{} ({})", user, to_string(channel));
}

Status not_self_approval(const Workspace& ws, const Proposal& p, const std::string& decider) {
  if (p.proposer_uid >= 0 && p.agent == decider)
    return make_error(
        Errc::denied,
        fmt::format("proposal {} was proposed by '{}' (uid {}), who may not approve it", p.id, p.agent, p.proposer_uid),
        "the owner approves what the agent user proposed, from the owner's own terminal");
  if (two_user(ws) && decider == ws.cfg.two_user_agent)
    return make_error(Errc::denied, fmt::format("'{}' is the agent user here: it proposes, it never decides", decider),
                      "the owner approves, from the owner's own terminal");
  return ok_status();
}

Status may_decide(const Workspace& ws, const Decider& who) {
  const auto& list = ws.cfg.approvers;
  if (list.empty() || std::find(list.begin(), list.end(), who.user) != list.end()) return ok_status();
  return make_error(Errc::denied, fmt::format("'{}' is not an approver here", who.user),
                    "[approval] approvers in kaicoder.toml names who may decide");
}

Status not_team_remote(const Proposal& p) {
  if (!p.team.remote()) return ok_status();
  return make_error(Errc::usage,
                    fmt::format("proposal {} is a team proposal of clone {}: it is decided with a signed decision and "
                                "applied where it was proposed",
                                p.id, p.team.origin),
                    fmt::format("decide it at a terminal: kaicoder approve {} (or kaicoder reject {})", p.id, p.id));
}

namespace {

bool live_state_of(const Proposal& p) {
  return p.state == State::pending || p.state == State::approved || p.state == State::held;
}

Status expire(Workspace& ws, Proposal& p) {
  p.state = State::timeout;
  p.result = fmt::format("timeout: not decided within {} s", ws.cfg.timeout);
  p.outcome_code = static_cast<int>(Errc::timeout);
  // Entry first: if we die in between, the next sweep logs it again rather
  // than never; the status change is what makes it happen once.
  KAI_TRY(ws.changelog.prepend(unreversible_entry(ws, p, "timeout", "", p.result, p.summary)));
  KAI_TRY(ws.store.save(p));
  queue_notify(ws, p, "timeout");
  return ok_status();
}

// After apply_proposal refused a proposal it had marked failed: the
// `failed` entry of SPEC §6, so the log says what became of it.
Status log_failure(Workspace& ws, const Proposal& p, const std::string& user) {
  if (p.state != State::failed) return ok_status();
  return ws.changelog.prepend(unreversible_entry(ws, p, "failed", user, p.result, p.summary));
}

Result<Proposal> pending_or_error(Workspace& ws, int id) {
  auto p = ws.store.load(id);
  if (!p) return p.error();
  KAI_TRY(not_team_remote(*p));
  if (p->state == State::pending && p->sealed == SealCheck::ok && past_timeout(ws, *p)) KAI_TRY(expire(ws, *p));
  if (p->state == State::timeout)
    return make_error(Errc::timeout, fmt::format("proposal {} expired before a decision", id),
                      "ask the agent to propose it again");
  if (p->state != State::pending)
    return make_error(Errc::conflict, fmt::format("proposal {} is already {}{}", id, to_string(p->state),
                                                  p->decided_by.empty() ? "" : fmt::format(" (by {})", p->decided_by)));
  return p;
}

// "3-5, 8, 10-17": ascending ids, runs folded.
std::string id_ranges(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ", ", ids[i]);
    if (j > i) out += fmt::format("-{}", ids[j]);
    i = j + 1;
  }
  return out;
}

// Many proposals expiring in one sweep (an agent left a hundred behind) are
// one `timeout` entry that names them all and one notify event: an entry
// each would hold the lock for seconds and push the person's own history
// into the archive. Entry first, as in expire().
Status expire_burst(Workspace& ws, std::vector<Proposal>& due) {
  std::vector<int> ids;
  std::vector<std::string> files;
  for (auto& p : due) {
    p.state = State::timeout;
    p.result = fmt::format("timeout: not decided within {} s", ws.cfg.timeout);
    p.outcome_code = static_cast<int>(Errc::timeout);
    ids.push_back(p.id);
    if (!p.path.empty()) files.push_back((ws.root / p.path).string());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  Entry e = unreversible_entry(ws, due.front(), "timeout", "", due.front().result,
                               fmt::format("{} proposals expired: {}", ids.size(), id_ranges(ids)));
  e.files = std::move(files);
  bool one_action = std::all_of(due.begin(), due.end(), [&](const Proposal& p) { return p.kind == due.front().kind; });
  e.action = one_action ? std::string(action_name(due.front().kind)) : "";
  e.why = "";  // each had its own; `kaicoder show ID` has it
  KAI_TRY(ws.changelog.prepend(ws.redact(std::move(e))));
  KAI_TRY(ws.store.save_all(due));
  queue_notify_burst(ws, "timeout", ids);
  return ok_status();
}

}  // namespace

namespace {

// The sweep proper: expire what is due; `live` keeps what is still live,
// as the live index says it (no record read but those due).
Result<std::vector<int>> sweep_into(Workspace& ws, Store::LiveView& live) {
  if (const std::string& before = ws.store.replaced(); !before.empty())
    ws.notices.push_back(fmt::format(
        "the state dir {} was made anew: the records of the store before it are gone, and proposal ids start "
        "at 1 again",
        ws.store.dir().string()));
  auto r = recover(ws);
  if (!r) return r.error();
  // Runs: a landing cut short, a run whose process died, held effects expired.
  if (auto runs = recover_runs(ws); !runs) return runs.error();
  // Staging folders a command left without a record (killed, or cut short
  // by a full disk): the lock is held, so none of them is being written.
  // Only the ids made since the index was last swept are looked at.
  auto debris = ws.store.settle_created();
  if (!debris) return debris.error();
  for (int id : *debris)
    ws.notices.push_back(fmt::format(
        "removed {}, the staging folder of a proposal an interrupted command left without a record",
        ws.store.staging_dir(id).string()));
  // Decided proposals leave staging/ for the archive, so that what the
  // next command lists there is the work in flight (an old store's whole
  // history moves here once, at its first sweep).
  if (auto moved = ws.store.archive_decided(); !moved) return moved.error();
  // The live set as the index says it: expiring never needs a payload, and
  // decided proposals never expire. Only a proposal the index says is due
  // (or made in the future) has its record read, and the record decides.
  auto set = ws.store.live_index(Store::Refresh::write);
  if (!set) return set.error();
  live = std::move(*set);
  std::vector<Proposal> due;
  const TimePoint now = ws.clock->now();
  const int64_t now_s = unix_seconds(now);
  // Only a candidate is taken out of the set and read from its record.
  std::vector<Store::LiveEntry> candidates;
  live.each([&](const Store::LiveEntry& e) {
    if (e.readable && e.state == State::pending && e.clock == 'r' &&
        (past_timeout(ws, e, now_s) || e.at - now_s > k_clock_skew.count()))
      candidates.push_back(e);
    return true;
  });
  std::vector<Store::LiveEntry> keep;
  for (auto& e : candidates) {
    auto loaded = ws.store.load(e.id, Store::Payloads::none);
    if (!loaded) {
      if (loaded.error().code != Errc::not_found) keep.push_back(std::move(e));  // doctor reports it
      continue;
    }
    Proposal& p = *loaded;
    // A record that does not verify is not kaicoder's to change; doctor
    // reports it. A team proposal of another clone expires at its origin,
    // which logs it: here it only reads as expired.
    const bool mine = p.state == State::pending && p.sealed == SealCheck::ok && !p.team.remote();
    // Made while the clock ran ahead: it would wait that much longer to
    // expire. Its time counts from now.
    TimePoint created;
    if (mine && parse_iso_utc(p.created, created) && created - now > k_clock_skew) {
      ws.notices.push_back(fmt::format("proposal {} was created in the future ({}): its approval time counts from now",
                                       p.id, p.created));
      p.created = iso_utc(now);
      KAI_TRY(ws.store.save(p));
    }
    if (mine && past_timeout(ws, p))
      due.push_back(std::move(p));
    else if (p.sealed == SealCheck::ok && live_state_of(p))
      keep.push_back(live_entry(p));
    else if (p.sealed != SealCheck::ok)
      keep.push_back(std::move(e));  // the index's word, not a record's that does not verify
  }
  // The candidates leave the set; what stays live comes back as read.
  for (const auto& e : candidates) live.left_out.push_back(e.id);
  std::sort(live.left_out.begin(), live.left_out.end());
  std::vector<Store::LiveEntry> extra;
  for (auto& e : live.extra)
    if (!std::binary_search(live.left_out.begin(), live.left_out.end(), e.id)) extra.push_back(std::move(e));
  for (auto& e : keep) extra.push_back(std::move(e));
  live.extra = std::move(extra);
  if (due.size() == 1)
    KAI_TRY(expire(ws, due.front()));
  else if (due.size() > 1)
    KAI_TRY(expire_burst(ws, due));
  std::vector<int> out;
  out.reserve(due.size());
  for (const auto& p : due) out.push_back(p.id);
  return out;
}

}  // namespace

Result<std::vector<int>> sweep(Workspace& ws) {
  Store::LiveView live;
  return sweep_into(ws, live);
}

Result<Swept> lock_and_sweep_live(Workspace& ws) {
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  Swept out{std::move(*lock), {}};
  auto expired = sweep_into(ws, out.live);
  if (!expired) return expired.error();
  return out;
}

Result<FileLock> lock_and_sweep(Workspace& ws) {
  auto swept = lock_and_sweep_live(ws);
  if (!swept) return swept.error();
  return std::move(swept->lock);
}

Result<Proposal> load_for_decision(Workspace& ws, int id) {
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  return ws.store.load(id);
}

Result<Approved> approve(Workspace& ws, int id, const std::string& seen_digest, const Decider& who, ApplyNow now,
                         Force force, const Recheck& recheck) {
  KAI_TRY(may_decide(ws, who));
  const std::string user = who.recorded();
  if (now == ApplyNow::yes && ws.cfg.mode == "propose-only")
    return make_error(Errc::denied, "policy mode is propose-only: kaicoder stages and diffs but never applies",
                      "approve with --no-apply to record the decision, or change [policy] mode");
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto p = pending_or_error(ws, id);
  if (!p) return p.error();
  // Its tier, checks and base come from the record: only a sealed one is believed.
  KAI_TRY(require_sealed(ws.store, *p));
  if (loaded_digest(*p) != seen_digest)
    return make_error(Errc::conflict, fmt::format("proposal {} changed while it was being reviewed", id),
                      "review it again: kaicoder show " + std::to_string(id));
  if (recheck) KAI_TRY(recheck(*p));
  // Refused before the approval is recorded, so the proposal stays pending.
  if (now == ApplyNow::yes) KAI_TRY(validation_permits_apply(*p, force));
  p->state = State::approved;
  p->decided_by = user;
  p->channel = who.channel;
  p->decided_at = iso_utc(ws.clock->now());
  p->approved_digest = seen_digest;
  KAI_TRY(ws.store.save(*p));
  queue_notify(ws, *p, "approved");
  Approved out{*p, std::nullopt};
  if (now == ApplyNow::no) return out;
  auto o = apply_proposal(ws, out.proposal, user, force);
  if (!o) {
    (void)log_failure(ws, out.proposal, user);  // the refusal is what the person must hear
    return o.error();
  }
  out.applied = std::move(*o);
  return out;
}

Result<Proposal> fail_pending(Workspace& ws, int id, const Decider& who, const Error& why) {
  KAI_TRY(may_decide(ws, who));
  const std::string user = who.recorded();
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto p = pending_or_error(ws, id);
  if (!p) return p.error();
  p->state = State::failed;
  p->result = fmt::format("failed: {}", ws.redact(why.message));
  p->outcome_code = static_cast<int>(why.code);
  KAI_TRY(ws.changelog.prepend(unreversible_entry(ws, *p, "failed", user, p->result, p->summary)));
  KAI_TRY(ws.store.save(*p));
  queue_notify(ws, *p, "failed");
  return p;
}

RequiredTier required_tier(const Proposal& p, bool diff_cut, ApplyNow now, Force force) {
  const bool is_run = p.kind == Kind::run;
  if (p.tier == Tier::confirm) return {Tier::confirm, p.tier_reason};
  if (!is_run && p.validation.status == "failed" && force == Force::yes && now == ApplyNow::yes)
    return {Tier::confirm, "overriding a failed validation"};
  if (!is_run && diff_cut) return {Tier::confirm, "the diff was cut for display"};
  return {};
}

Result<Proposal> reject(Workspace& ws, int id, const Decider& who, const std::string& reason) {
  KAI_TRY(may_decide(ws, who));
  const std::string user = who.recorded();
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto p = pending_or_error(ws, id);
  if (!p) {
    // An approved but not yet applied proposal may still be turned down.
    auto q = ws.store.load(id);
    if (q && q->state == State::held) {
      // A run's held effects: dropped; the run itself stays as it was recorded.
      KAI_TRY(require_sealed(ws.store, *q));
      auto dropped = decide_held(ws, *q, false, user, "", reason.empty() ? "rejected" : ws.redact(reason));
      if (!dropped) return dropped.error();
      return q;
    }
    if (!q || (q->state != State::approved && q->state != State::failed)) return p.error();
    p = std::move(q);
  }
  p->state = State::rejected;
  p->decided_by = user;
  p->channel = who.channel;
  p->decided_at = iso_utc(ws.clock->now());
  p->reason = ws.redact(reason);
  p->result = reason.empty() ? "rejected" : fmt::format("rejected: {}", p->reason);
  p->outcome_code = static_cast<int>(Errc::rejected);
  KAI_TRY(ws.changelog.prepend(unreversible_entry(ws, *p, "rejected", user, p->result, p->summary)));
  KAI_TRY(ws.store.save(*p));
  queue_notify(ws, *p, "rejected");
  return p;
}

Result<Approved> apply_approved(Workspace& ws, int id, const Decider& who, Force force) {
  KAI_TRY(may_decide(ws, who));
  const std::string user = who.recorded();
  if (ws.cfg.mode == "propose-only")
    return make_error(Errc::denied, "policy mode is propose-only: kaicoder stages and diffs but never applies");
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto p = ws.store.load(id);
  if (!p) return p.error();
  auto o = apply_proposal(ws, *p, p->decided_by.empty() ? user : p->decided_by, force);
  if (!o) {
    (void)log_failure(ws, *p, user);
    return o.error();
  }
  return Approved{*p, std::move(*o)};
}

}  // namespace kai

#include <thread>

namespace kai {

Result<Outcome> rollback(Workspace& ws, const std::string& id, const Decider& who, Force force, CheckOnly check) {
  KAI_TRY(may_decide(ws, who));
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  return rollback_entry(ws, id, who.recorded(), force, check);
}

Result<Proposal> wait_for_decision(Workspace& ws, int id, std::optional<std::chrono::seconds> within,
                                   const WaitControl& control) {
  std::optional<TimePoint> until;
  const TimePoint start = ws.clock->now();
  if (within) until = start + *within;
  auto ticked = std::chrono::steady_clock::now();
  for (;;) {
    auto p = ws.store.load(id, Store::Payloads::none);
    if (!p) return p.error();
    KAI_TRY(require_sealed(ws.store, *p));
    if ((p->state == State::pending || p->state == State::held) && past_timeout(ws, *p)) {
      if (p->team.remote()) return p;  // it expired at its origin; no sweep here records it
      auto lock = lock_and_sweep(ws);
      if (!lock) return lock.error();
      continue;
    }
    // Approved is not the outcome yet: the proposer waits for the apply
    // (or the run) and what it did.
    if (standing(*p) == Standing::settled) return p;
    if (until && ws.clock->now() >= *until) return p;
    if (control.stop && control.stop()) return p;
    if (control.tick && std::chrono::steady_clock::now() - ticked >= std::chrono::seconds(1)) {
      ticked = std::chrono::steady_clock::now();
      control.tick(std::chrono::duration_cast<std::chrono::milliseconds>(ws.clock->now() - start));
    }
    if (control.sleep)
      control.sleep(std::chrono::milliseconds(100));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace kai
