#include "lib/gate/gate.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/gate/always_allow.hpp"
#include "lib/gate/propose.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/gate/status.hpp"
#include "lib/paths/paths.hpp"
#include "lib/util/git.hpp"

namespace kai::gate {

Status answer_meets(Tier tier, Answer answer, std::string_view reason) {
  if (answer == Answer::no) return make_error(Errc::rejected, "not confirmed");
  if (tier == Tier::confirm && answer != Answer::confirm)
    return make_error(Errc::denied,
                      reason.empty()
                          ? std::string("this decision takes CONFIRM typed out, not a plain yes")
                          : fmt::format("this decision takes CONFIRM typed out, not a plain yes ({})", reason),
                      "answer with CONFIRM");
  return ok_status();
}

bool propose_only(const Workspace& ws) { return ws.cfg.mode == "propose-only"; }

namespace {

Error propose_only_error() {
  return make_error(Errc::denied, "policy mode is propose-only: kaicoder stages and diffs but never applies",
                    "approve with --no-apply to record the decision, or change [policy] mode");
}

Error propose_only_run_error() {
  return make_error(Errc::denied, "policy mode is propose-only: kaicoder never runs commands in this mode");
}

// A proposal a decision may start from: pending (or a run's effects held), not expired.
Status pending(const Proposal& p) {
  if (p.state == State::pending || p.state == State::held) return ok_status();
  return make_error(p.state == State::timeout ? Errc::timeout : Errc::conflict,
                    fmt::format("proposal {} is {}, not pending", p.id, to_string(p.state)));
}

}  // namespace

Result<ApprovalReview> prepare_approval(Workspace& ws, int id, const Decider& who, const ApprovalOptions& opts) {
  KAI_TRY(may_decide(ws, who));
  auto p = load_for_decision(ws, id);
  if (!p) return p.error();
  KAI_TRY(not_team_remote(*p));
  KAI_TRY(pending(*p));
  KAI_TRY(not_self_approval(ws, *p, who.user));
  // Refused before the question: a "yes" to a record kaicoder did not seal is never carried out.
  KAI_TRY(require_sealed(ws.store, *p));
  if (opts.now == ApplyNow::yes && propose_only(ws)) return propose_only_error();
  ApprovalReview r;
  if (p->state == State::held) {
    // What is decided now is the run's held effects, always with CONFIRM.
    auto kept = kept_effects(ws, *p);
    if (!kept) return kept.error();
    r.digest = kept->digest;
    r.need = {Tier::confirm, "a run's effects held for CONFIRM"};
    r.held = std::move(*kept);
    r.proposal = std::move(*p);
    return r;
  }
  const bool is_run = p->kind == Kind::run;
  if (!is_run) {
    DiffOptions shown;
    shown.full = opts.shown == DiffShown::whole;
    auto d = current_diff(ws, *p, shown);
    if (!d && d.error().code == Errc::conflict) {
      // It can never be applied as proposed: say so to the waiter and the log too.
      auto f = fail_pending(ws, id, who, d.error());
      if (!f) return f.error();
      return d.error();
    }
    if (!d) return d.error();
    r.diff_cut = d->truncated;
    r.diff = std::move(*d);
  }
  // What the person sees is what gets bound.
  r.digest = loaded_digest(*p);  // computed once, by the load
  r.need = required_tier(*p, r.diff_cut, opts.now, opts.force);
  // No question is asked whose "yes" could not be carried out.
  if (!is_run && p->validation.status == "failed" && opts.force == Force::no && opts.now == ApplyNow::yes)
    r.refusal =
        make_error(Errc::conflict, fmt::format("proposal {} failed validation; not applied", p->id),
                   fmt::format("read the output above; approve it anyway with: kaicoder approve --force {}", p->id));
  if (is_run) {
    r.unrestorable = unrestorable_names(ws);
    // Below the overlay such a name could be lost for good: refused before it runs.
    if (!r.refusal)
      if (Status s = run_restorable(ws, &r.unrestorable); !s) r.refusal = s.error();
  }
  r.proposal = std::move(*p);
  return r;
}

Result<Approval> approve(Workspace& ws, const Request& req, const OnOutput& on_output) {
  const ApprovalOptions& o = req.opts;
  KAI_TRY(may_decide(ws, req.who));  // before anything about the proposal is told
  if (o.now == ApplyNow::yes && propose_only(ws)) return propose_only_error();
  // Under the lock, on the proposal as it is now: the answer meets its tier.
  auto tier_check = [&](const Proposal& p) -> Status {
    KAI_TRY(not_self_approval(ws, p, req.who.user));
    if (p.kind == Kind::run && o.now == ApplyNow::yes) KAI_TRY(run_restorable(ws));
    RequiredTier need = required_tier(p, req.diff_cut, o.now, o.force);
    return answer_meets(need.tier, req.answer, need.reason);
  };
  KAI_TRY(answer_meets(Tier::normal, req.answer));  // a no never reaches the store
  // A run is recorded approved and then carried out by execute_run, which
  // claims it once; an edit is applied under the same lock. The digest
  // binds the kind, so a proposal read here as a run is one at approval.
  auto peek = ws.store.load(req.id, Store::Payloads::none);
  if (!peek) return peek.error();
  if (peek->state == State::held) {
    auto kept = settle_held(ws, req);
    if (!kept) return kept.error();
    auto now = ws.store.load(req.id);
    if (!now) return now.error();
    return Approval{std::move(*now), std::nullopt, std::nullopt, std::move(*kept)};
  }
  const bool run = peek->kind == Kind::run;
  auto r = kai::approve(ws, req.id, req.seen_digest, req.who, run ? ApplyNow::no : o.now, o.force, tier_check);
  if (!r) return r.error();
  Approval out{std::move(r->proposal), std::move(r->applied), std::nullopt, std::nullopt};
  if (!run || o.now == ApplyNow::no) return out;
  auto ran = execute_run(ws, req.id, req.who.recorded(), on_output);
  if (!ran) return ran.error();
  out.ran = std::move(*ran);
  if (auto q = ws.store.load(req.id)) out.proposal = std::move(*q);  // applied, or its effects held
  return out;
}

Result<RunEffects> settle_held(Workspace& ws, const Request& req) {
  KAI_TRY(may_decide(ws, req.who));
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto p = ws.store.load(req.id);
  if (!p) return p.error();
  KAI_TRY(require_sealed(ws.store, *p));
  if (p->state == State::timeout || (p->state == State::applied && p->held_since.empty() &&
                                     p->result.find("held effects expired") != std::string::npos))
    return make_error(Errc::timeout, fmt::format("the held effects of proposal {} expired before a decision", req.id));
  if (p->state != State::held)
    return make_error(Errc::conflict,
                      fmt::format("proposal {} holds no effects (it is {})", req.id, to_string(p->state)));
  KAI_TRY(not_self_approval(ws, *p, req.who.user));
  const bool keep = req.answer == Answer::confirm;
  auto r = decide_held(ws, *p, keep, req.who.recorded(), req.seen_digest,
                       keep ? std::string() : std::string("not confirmed at the terminal"));
  if (!r) return r.error();
  if (!keep)
    return make_error(Errc::rejected,
                      fmt::format("not confirmed: the held effects of proposal {} were dropped", req.id),
                      "the command's other effects stay; kaicoder log shows what was dropped");
  return r;
}

Result<Approval> apply(Workspace& ws, const Request& req, const OnOutput& on_output) {
  auto p = ws.store.load(req.id, Store::Payloads::none);
  if (p && p->kind == Kind::run) {
    KAI_TRY(may_decide(ws, req.who));
    if (propose_only(ws)) return propose_only_run_error();
    KAI_TRY(run_restorable(ws));
    // execute_run re-checks under the lock: sealed, approved, digest, once.
    auto ran = execute_run(ws, req.id, p->decided_by.empty() ? req.who.recorded() : p->decided_by, on_output);
    if (!ran) return ran.error();
    if (auto q = ws.store.load(req.id)) p = std::move(q);  // applied, or its effects held
    return Approval{std::move(*p), std::nullopt, std::move(*ran), std::nullopt};
  }
  auto r = apply_approved(ws, req.id, req.who, req.opts.force);
  if (!r) return r.error();
  return Approval{std::move(r->proposal), std::move(r->applied), std::nullopt, std::nullopt};
}

Result<Proposal> prepare_reject(Workspace& ws, int id, const Decider& who) {
  KAI_TRY(may_decide(ws, who));
  auto p = load_for_decision(ws, id);
  if (!p) return p.error();
  KAI_TRY(not_team_remote(*p));
  if (!still_open(*p))
    return make_error(p->state == State::timeout ? Errc::timeout : Errc::conflict,
                      fmt::format("proposal {} is already {}", p->id, to_string(p->state)));
  return p;
}

Result<Proposal> reject(Workspace& ws, const Request& req, const std::string& reason) {
  KAI_TRY(answer_meets(Tier::normal, req.answer));
  // lib/gate/decide's reject re-checks the approver and the state under the lock.
  return kai::reject(ws, req.id, req.who, reason);
}

namespace {
// A rollback of `id` that writes outside root (the user-level settings
// `integrate --user` wired), or that puts back kaicoder.toml (what "always
// allow" wrote), is, like that write, decided at a terminal and asked
// whatever the policy allows.
Status terminal_only_check(Workspace& ws, const std::string& id, const Decider& who, Decision& decision) {
  auto rec = ws.journal.load(id);
  if (!rec) return ok_status();  // the rollback itself says why
  const bool outside =
      std::any_of(rec->files.begin(), rec->files.end(), [](const FileChange& f) { return f.rel.starts_with("~/"); });
  const bool config = writes_own_config(ws, *rec);
  if (!outside && !config) return ok_status();
  if (who.channel != Channel::terminal)
    return make_error(Errc::denied,
                      fmt::format("rollback {} writes {}: it is decided at a terminal", id,
                                  outside ? "your user settings outside root" : "the root's kaicoder.toml"),
                      fmt::format("run kaicoder rollback {} at a terminal", id));
  decision = Decision::ask;
  return ok_status();
}
}  // namespace

namespace {

// "last~N": the entry N before the newest one, in the journal's order.
Result<std::string> nth_entry(const Workspace& ws, std::string_view steps) {
  auto n = parse_proposal_id(steps);
  if (!n)
    return make_error(
        Errc::usage,
        fmt::format("'last~{}' names no entry: N in last~N is a decimal number like 2", steps.substr(0, 64)),
        "last is the newest entry, last~1 the one before it, last~2 the third-newest");
  auto newest = ws.journal.last();
  if (!newest) return newest.error();
  if (*n == 0) return *newest;
  const std::vector<std::string> ids = ws.journal.ids();
  auto at = std::find(ids.begin(), ids.end(), *newest);
  const size_t from = at == ids.end() ? 0 : static_cast<size_t>(at - ids.begin());
  if (from + static_cast<size_t>(*n) >= ids.size())
    return make_error(
        Errc::not_found,
        fmt::format("there is no entry last~{}: the journal holds {} before the newest", *n, ids.size() - from - 1),
        "see them with: kaicoder log");
  return ids[from + static_cast<size_t>(*n)];
}

// A proposal id: the one entry of what that proposal did.
Result<std::string> entry_of_proposal(const Workspace& ws, int id) {
  std::vector<Record> found;
  for (const std::string& rid : ws.journal.ids()) {
    auto rec = ws.journal.load(rid);
    if (rec && rec->proposal == id && rec->kind != "rollback") found.push_back(std::move(*rec));
  }
  if (found.size() == 1) return found.front().id;
  if (found.size() > 1) {
    std::string list;
    for (const Record& r : found) list += fmt::format("{}{} ({}, {})", list.empty() ? "" : ", ", r.id, r.kind, r.time);
    return make_error(Errc::usage, fmt::format("proposal {} has {} entries: {}", id, found.size(), list),
                      fmt::format("name the one to undo: kaicoder rollback {}", found.front().id));
  }
  auto p = ws.store.load(id, Store::Payloads::none);
  if (!p && p.error().code == Errc::not_found)
    return make_error(Errc::not_found, fmt::format("no proposal {} and no entry of it", id),
                      "see the entries with: kaicoder log");
  const std::string state = p ? std::string(to_string(p->state)) : std::string("unreadable");
  return make_error(
      Errc::not_found,
      fmt::format("proposal {} has no entry to roll back (it is {}; only what was applied can be)", id, state),
      "see the entries with: kaicoder log");
}

}  // namespace

Result<std::string> resolve_entry(const Workspace& ws, const std::string& name) {
  if (name == "last") {
    auto l = ws.journal.last();
    if (!l) return l.error();
    return *l;
  }
  if (name.starts_with("last~")) return nth_entry(ws, std::string_view(name).substr(5));
  if (rollback_id_shape(name)) return name;
  // Anything else that starts like a number is read as a proposal id, by
  // the one parser: "010" or "1e3" is refused, never guessed at.
  const char c = name.empty() ? '\0' : name.front();
  if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == ' ' || c == '\t') {
    auto id = read_proposal_id(name);
    if (!id) return id.error();
    return entry_of_proposal(ws, *id);
  }
  return name;  // the journal says it is unknown
}

Result<RollbackReview> prepare_rollback(Workspace& ws, const std::string& id, const Decider& who, Force force) {
  KAI_TRY(may_decide(ws, who));
  RollbackReview r;
  r.asked = id;
  Verdict v = decide(ws.cfg, "rollback", id);
  if (v.decision == Decision::deny)
    return make_error(Errc::denied, fmt::format("the policy denies rollback ({})", v.rule));
  r.decision = v.decision;
  r.rule = v.rule;
  auto entry = resolve_entry(ws, id);
  if (!entry) return entry.error();
  r.id = std::move(*entry);
  auto rec = ws.journal.load(r.id);
  if (!rec) return rec.error();
  r.record = std::move(*rec);
  KAI_TRY(terminal_only_check(ws, r.id, who, r.decision));
  // Say what is wrong before asking, not after the person said yes.
  auto pre = kai::rollback(ws, r.id, who, force, CheckOnly::yes);
  if (!pre) return pre.error();
  return r;
}

Result<RolledBack> rollback(Workspace& ws, const RollbackReview& shown, const Request& req) {
  KAI_TRY(may_decide(ws, req.who));
  Verdict v = decide(ws.cfg, "rollback", shown.asked);
  if (v.decision == Decision::deny)
    return make_error(Errc::denied, fmt::format("the policy denies rollback ({})", v.rule));
  KAI_TRY(terminal_only_check(ws, shown.id, req.who, v.decision));
  Decider approver = req.who;
  if (v.decision == Decision::ask)
    KAI_TRY(answer_meets(Tier::normal, req.answer));
  else
    approver.policy_rule = v.rule;
  const bool config = writes_own_config(ws, shown.record);
  auto o = kai::rollback(ws, shown.id, approver, req.opts.force);
  if (!o) return o.error();
  // kaicoder.toml is back as the owner had it: trusted again in the same
  // step, as "always allow" trusted what it wrote.
  if (config) KAI_TRY(retrust_root(ws));
  return RolledBack{shown.id, std::move(*o)};
}

}  // namespace kai::gate
