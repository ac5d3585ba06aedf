// `kaicoder fetch`: the team remote's refs/kaicoder/* brought here, each
// checked before it counts, and (--prune) the refs of settled proposals
// dropped once [team] keep has passed.

#include <algorithm>
#include <map>

#include <git2.h>
#include <fmt/format.h>

#include "lib/config/policy.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/team/git_cli.hpp"
#include "lib/team/internal.hpp"
#include "lib/team/objects.hpp"
#include "lib/team/origin.hpp"
#include "lib/team/team.hpp"
#include "lib/util/text.hpp"

namespace kai::team {

namespace {

struct Listed {
  TeamRef ref;
  std::string name;  // as the remote names it
  std::string id;    // what it points at there
};

bool object_id(std::string_view s) {
  return (s.size() == 40 || s.size() == 64) && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string cut_text(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s;
}

// The record of a remote proposal: a changeset of its commit's results,
// graded with this clone's [paths] confirm and protected lists.
Result<int> record_remote(Workspace& ws, git_repository* repo, const RemoteProposal& rp) {
  Proposal p;
  p.kind = Kind::changeset;
  p.state = State::pending;
  p.changes = rp.changes;
  p.path = p.changes.front().target();
  p.why = cut_text(rp.info.why, static_cast<size_t>(ws.cfg.limits.why));
  p.summary = cut_text(rp.info.summary, static_cast<size_t>(ws.cfg.limits.summary) * 4);
  p.agent = cut_text(rp.info.agent, static_cast<size_t>(ws.cfg.limits.agent) * 4);
  p.created = rp.info.created;
  p.risk_reason = "judged where it was proposed";
  p.decision_rule = "team proposal";
  auto before = base_bytes(repo, rp.info.base, p.changes, content_max(ws));
  if (!before) return before.error();
  auto d = changes_diff(p.changes, *before, DiffOptions{});
  if (!d) return d.error();
  for (const DiffPart& part : d->parts) {
    p.changes[part.change].added = part.added;
    p.changes[part.change].removed = part.removed;
  }
  for (Change& c : p.changes) {
    c.tier = path_tier(ws.cfg, c.path, &c.tier_reason);
    if (c.tier == Tier::confirm && p.tier != Tier::confirm) {
      p.tier = Tier::confirm;
      p.tier_reason = c.tier_reason;
    }
  }
  if (rp.info.tier == "confirm" && p.tier != Tier::confirm) {
    p.tier = Tier::confirm;
    p.tier_reason = "its origin asks for CONFIRM";
  }
  p.team.role = "remote";
  p.team.origin = rp.info.origin;
  p.team.remote_id = rp.info.id;
  p.team.commit = rp.info.commit;
  p.team.base = rp.info.base;
  p.team.kind = rp.info.kind;
  p.team.expires = rp.info.expires;
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  // A fetch running beside this one may have recorded it meanwhile.
  if (auto there = find_remote_record(ws, p.team.origin, p.team.remote_id)) return there->id;
  auto id = ws.store.next_id();
  if (!id) return id.error();
  p.id = *id;
  KAI_TRY(ws.store.create(p));
  return p.id;
}

// A decision on the remote proposal `rec` from someone: its record follows it.
Status record_decision(Workspace& ws, const Proposal& rec, const Verified& v) {
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto p = ws.store.load(rec.id, Store::Payloads::none);
  if (!p) return p.error();
  if (p->state != State::pending) return ok_status();
  const TeamDecision& d = v.object.decision;
  const bool yes = d.verdict == "approve";
  p->state = yes ? State::approved : State::rejected;
  p->decided_by = Decider{v.signer, Channel::team}.recorded();
  p->channel = Channel::team;
  p->decided_at = d.time;
  p->reason = ws.redact(d.reason);
  p->result = yes ? "approved: a signed decision for its origin" : "rejected";
  if (!yes) p->outcome_code = static_cast<int>(Errc::rejected);
  p->team.decision = v.object.commit;
  p->team.signer = v.signer;
  p->team.pushed = true;
  return ws.store.save(*p);
}

std::string refusal(const Listed& l, const Error& e) { return fmt::format("{}: {}", make_visible(l.name), e.message); }

}  // namespace

Result<FetchReport> fetch(Workspace& ws, const FetchOptions& opts) {
  KAI_TRY(require_team(ws));
  auto repo = open_repo(ws);
  if (!repo) return repo.error();
  git_repository* r = repo->get();
  const GitCli git = git_cli(ws);
  FetchReport rep;
  std::optional<std::string> own;
  if (auto o = clone_origin(ws, false))
    own = *o;
  else if (o.error().code != Errc::not_found)
    return o.error();

  // Our decisions whose push failed go now.
  if (auto ids = ws.store.ids()) {
    for (int id : *ids) {
      auto p = ws.store.load(id, Store::Payloads::none);
      if (!p || p->sealed != SealCheck::ok || !p->team.remote() || p->team.decision.empty() || p->team.pushed) continue;
      if (p->decided_by.ends_with("(team)")) continue;  // someone else's, fetched
      if (auto pushed = publish(ws, id)) rep.pushed.push_back(id);
    }
  }

  auto listed = ls_remote(git, {"refs/kaicoder/*"});
  if (!listed) return listed.error();
  std::vector<Listed> props, decs;
  for (const auto& l : *listed) {
    std::string_view rest(l.name);
    std::optional<TeamRef> t;
    if (rest.starts_with(k_refs)) t = parse_team_ref(rest.substr(k_refs.size()));
    if (!t || !object_id(l.id)) {
      rep.refused.push_back(
          fmt::format("{}: not a name team mode makes (refs/kaicoder/proposals/<origin>/<id> or "
                      "refs/kaicoder/decisions/<origin>/<id>); not fetched",
                      make_visible(l.name)));
      continue;
    }
    (t->kind == "proposals" ? props : decs).push_back(Listed{*t, l.name, l.id});
  }

  // Fetch what is not here yet, into refs/kaicoder/incoming/ only.
  std::vector<std::string> specs;
  auto wanted = [&](const Listed& l) {
    if (l.ref.kind == "proposals" && own && l.ref.origin == *own) return false;  // ours
    auto at = ref_target(r, remote_ref_name(l.ref.kind, l.ref.origin, l.ref.id));
    return !at || *at != l.id;
  };
  for (const auto* list : {&props, &decs})
    for (const auto& l : *list)
      if (wanted(l))
        specs.push_back(fmt::format("+{}:{}", l.name, incoming_ref_name(l.ref.kind, l.ref.origin, l.ref.id)));
  KAI_TRY(fetch_refs(git, specs));
  auto arrived = [&](const Listed& l) -> std::string {
    auto at = ref_target(r, incoming_ref_name(l.ref.kind, l.ref.origin, l.ref.id));
    return at ? *at : l.id;
  };

  std::map<std::pair<std::string, int>, std::string> proposal_at;  // (origin, id) → commit, as accepted
  for (const auto& l : props) {
    if (own && l.ref.origin == *own) {
      proposal_at[{l.ref.origin, l.ref.id}] = l.id;
      continue;
    }
    const std::string commit = arrived(l);
    if (auto rec = find_remote_record(ws, l.ref.origin, l.ref.id)) {
      if (rec->team.commit != commit) {
        rep.refused.push_back(refusal(
            l, make_error(Errc::conflict, fmt::format("pushed again with other content ({} instead of {}); proposal "
                                                      "{} stays bound to what was fetched first",
                                                      commit.substr(0, 12), rec->team.commit.substr(0, 12), rec->id))));
        continue;
      }
      proposal_at[{l.ref.origin, l.ref.id}] = commit;
      (void)set_ref(r, remote_ref_name("proposals", l.ref.origin, l.ref.id), commit, "kaicoder: fetch");
      continue;
    }
    auto rp = read_proposal_commit(r, commit, l.ref, static_cast<size_t>(ws.cfg.limits.content));
    if (!rp) {
      rep.refused.push_back(refusal(l, rp.error()));
      continue;
    }
    KAI_TRY(set_ref(r, remote_ref_name("proposals", l.ref.origin, l.ref.id), commit, "kaicoder: fetch"));
    auto id = record_remote(ws, r, *rp);
    if (!id) return id.error();
    rep.added.push_back(*id);
    proposal_at[{l.ref.origin, l.ref.id}] = commit;
  }

  for (const auto& l : decs) {
    const std::string decision = arrived(l);
    if (own && l.ref.origin == *own) {
      auto p = ws.store.load(l.ref.id, Store::Payloads::none);
      if (!p || !p->team.published() || p->team.origin != *own) {
        rep.refused.push_back(
            refusal(l, make_error(Errc::denied, "a decision on a proposal this clone did not publish")));
        continue;
      }
      if (p->state != State::pending) {
        if (p->team.decision == decision)
          (void)set_ref(r, remote_ref_name("decisions", l.ref.origin, l.ref.id), decision, "kaicoder: fetch");
        continue;
      }
      auto got = carry_out(ws, r, l.ref.id, decision);
      if (!got) {
        rep.refused.push_back(refusal(l, got.error()));
        continue;
      }
      if (*got) rep.received.push_back(std::move(**got));
      continue;
    }
    auto rec = find_remote_record(ws, l.ref.origin, l.ref.id);
    if (!rec) continue;  // its proposal is not here (refused, or not fetched): it decides nothing here
    if (rec->team.decision == decision) {
      (void)set_ref(r, remote_ref_name("decisions", l.ref.origin, l.ref.id), decision, "kaicoder: fetch");
      continue;
    }
    auto v = verify_decision(ws, r, decision, l.ref.origin, l.ref.id, rec->team.commit, rec->team.base);
    // A y where this clone asks for CONFIRM: the proposing clone refuses it
    // too, so it decides nothing here either.
    if (v && v->object.decision.verdict == "approve" && v->object.decision.tier != "confirm" &&
        required_tier(*rec, false, ApplyNow::yes, Force::no).tier == Tier::confirm)
      v = make_error(Errc::denied, fmt::format("decision {} answers proposal {} with y, and it takes CONFIRM",
                                               decision.substr(0, 12), rec->id));
    if (!v) {
      rep.refused.push_back(refusal(l, v.error()));
      continue;
    }
    (void)set_ref(r, remote_ref_name("decisions", l.ref.origin, l.ref.id), decision, "kaicoder: fetch");
    if (rec->state == State::pending) {
      KAI_TRY(record_decision(ws, *rec, *v));
      rep.decided.push_back(rec->id);
    }
  }
  for (const auto& [name, id] : refs_under(r, std::string(k_incoming_refs))) (void)delete_ref(r, name);

  if (opts.prune) {
    const TimePoint now = ws.clock->now();
    const auto keep = std::chrono::seconds(ws.cfg.team_keep);
    std::vector<std::string> drop;
    auto decision_on = [&](const TeamRef& t) -> const Listed* {
      for (const auto& d : decs)
        if (d.ref.origin == t.origin && d.ref.id == t.id) return &d;
      return nullptr;
    };
    for (const auto& l : props) {
      auto at = proposal_at.find({l.ref.origin, l.ref.id});
      if (at == proposal_at.end()) continue;  // refused above: not ours to judge
      const std::string& commit = at->second;
      if (in_history(r, commit)) continue;  // applied: verify needs it and its decision
      const Listed* d = decision_on(l.ref);
      bool old = false;
      if (d) {
        git_oid did;
        if (git_oid_fromstr(&did, arrived(*d).c_str()) != 0) continue;
        auto o = read_decision_commit(r, did);
        if (!o || o->decision.verdict != "reject" || o->parent != commit) continue;
        // Only a signed rejection counts as one.
        auto v = verify_decision(ws, r, o->commit, l.ref.origin, l.ref.id, commit, o->decision.base);
        TimePoint at_time;
        old = v && parse_iso_utc(o->decision.time, at_time) && now - at_time > keep;
      } else {
        auto rp = read_proposal_commit(r, commit, l.ref, static_cast<size_t>(ws.cfg.limits.content));
        TimePoint expires;
        old = rp && parse_iso_utc(rp->info.expires, expires) && now - expires > keep;
      }
      if (!old) continue;
      drop.push_back(l.name);
      if (d) drop.push_back(d->name);
    }
    std::vector<std::string> deletions;
    for (const auto& name : drop) deletions.push_back(":" + name);
    KAI_TRY(push_refs(git, deletions));
    for (const auto& name : drop) {
      auto t = parse_team_ref(std::string_view(name).substr(k_refs.size()));
      if (!t) continue;
      (void)delete_ref(r, remote_ref_name(t->kind, t->origin, t->id));
      (void)delete_ref(r, ref_name(t->kind, t->origin, t->id));
      rep.pruned.push_back(name);
    }
    // Here: tracking refs of what the remote no longer has, but a
    // decision whose proposal is in the history.
    for (const auto& [name, id] : refs_under(r, std::string(k_remote_refs))) {
      auto t = parse_team_ref(std::string_view(name).substr(k_remote_refs.size()));
      if (!t) continue;
      const std::string there = team_ref_name(k_refs, *t);
      const bool listed_there =
          std::any_of(listed->begin(), listed->end(), [&](const RemoteRef& x) { return x.name == there; });
      if (listed_there && std::find(drop.begin(), drop.end(), there) == drop.end()) continue;
      if (t->kind == "decisions") {
        git_oid did;
        if (git_oid_fromstr(&did, id.c_str()) == 0)
          if (auto o = read_decision_commit(r, did); o && in_history(r, o->parent)) continue;
      } else if (in_history(r, id)) {
        continue;
      }
      if (delete_ref(r, name)) rep.pruned.push_back(name);
    }
  }
  return rep;
}

}  // namespace kai::team
