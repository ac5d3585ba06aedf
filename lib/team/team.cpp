#include "lib/team/team.hpp"

#include <thread>

#include <fmt/format.h>

#include "lib/gate/status.hpp"
#include "lib/team/git_cli.hpp"
#include "lib/team/internal.hpp"
#include "lib/team/objects.hpp"
#include "lib/team/origin.hpp"

namespace kai::team {

Status require_team(const Workspace& ws) {
  if (!ws.cfg.team_remote.empty()) return ok_status();
  return make_error(Errc::usage, "team mode is off: [team] remote is not set",
                    "name the git remote proposals travel through in kaicoder.toml: [team] remote = \"origin\" "
                    "(see kaicoder-team(7))");
}

SshTool ssh_tool(const Workspace& ws) {
  SshTool t;
  for (const auto& [name, value] : ws.env_vars)
    if (name == "SSH_AUTH_SOCK") t.env.push_back(name + "=" + value);
  return t;
}

size_t content_max(const Workspace& ws) {
  return ws.cfg.limits.content > 0 ? static_cast<size_t>(ws.cfg.limits.content) : 0;
}

std::optional<Proposal> find_remote_record(const Workspace& ws, const std::string& origin, int remote_id) {
  auto ids = ws.store.ids();
  if (!ids) return std::nullopt;
  for (int id : *ids) {
    auto p = ws.store.load(id, Store::Payloads::none);
    if (p && p->sealed == SealCheck::ok && p->team.remote() && p->team.origin == origin &&
        p->team.remote_id == remote_id)
      return std::move(*p);
  }
  return std::nullopt;
}

std::string ref_name(const std::string& kind, const std::string& origin, int id) {
  return team_ref_name(k_refs, TeamRef{kind, origin, id});
}
std::string remote_ref_name(const std::string& kind, const std::string& origin, int id) {
  return team_ref_name(k_remote_refs, TeamRef{kind, origin, id});
}
std::string incoming_ref_name(const std::string& kind, const std::string& origin, int id) {
  return team_ref_name(k_incoming_refs, TeamRef{kind, origin, id});
}

namespace {

// Push our decision on remote proposal `p` again (after a push that failed).
Result<Published> push_decision_again(Workspace& ws, const Proposal& p) {
  if (p.team.decision.empty())
    return make_error(Errc::usage,
                      fmt::format("proposal {} is a team proposal of clone {}: there is nothing of ours to publish "
                                  "until it is decided",
                                  p.id, p.team.origin),
                      fmt::format("decide it: kaicoder approve {} (or kaicoder reject {})", p.id, p.id));
  const std::string ref = ref_name("decisions", p.team.origin, p.team.remote_id);
  KAI_TRY(push_refs(git_cli(ws), {fmt::format("+{}:{}", p.team.decision, ref)}));
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto q = ws.store.load(p.id, Store::Payloads::none);
  if (!q) return q.error();
  q->team.pushed = true;
  KAI_TRY(ws.store.save(*q));
  return Published{*q, ref, true};
}

}  // namespace

Result<Published> publish(Workspace& ws, int id) {
  KAI_TRY(require_team(ws));
  auto repo = open_repo(ws);
  if (!repo) return repo.error();
  Published out;
  {
    auto lock = lock_and_sweep(ws);
    if (!lock) return lock.error();
    auto p = ws.store.load(id);
    if (!p) return p.error();
    KAI_TRY(require_sealed(ws.store, *p));
    if (p->team.remote()) {
      lock->release();
      return push_decision_again(ws, *p);
    }
    if (p->kind == Kind::run)
      return make_error(Errc::usage, fmt::format("proposal {} is a command run, which is never published", id),
                        "a run runs where the person is: they approve it at this clone's terminal");
    if (p->state == State::timeout)
      return make_error(Errc::timeout, fmt::format("proposal {} expired before it was published", id),
                        "propose it again");
    if (p->state != State::pending)
      return make_error(Errc::conflict, fmt::format("proposal {} is {}, not pending", id, to_string(p->state)));
    auto origin = clone_origin(ws, true);
    if (!origin) return origin.error();
    if (p->team.published()) {
      out.again = true;
    } else {
      TimePoint created;
      if (!parse_iso_utc(p->created, created)) created = ws.clock->now();
      const std::string expires = iso_utc(created + std::chrono::seconds(ws.cfg.timeout));
      auto info = make_proposal_commit(ws, repo->get(), *p, *origin, expires, ws.clock->now());
      if (!info) return info.error();
      p->team.role = "published";
      p->team.origin = *origin;
      p->team.remote_id = p->id;
      p->team.commit = info->commit;
      p->team.base = info->base;
      p->team.kind = info->kind;
      p->team.expires = expires;
      KAI_TRY(ws.store.save(*p));
    }
    out.ref = ref_name("proposals", p->team.origin, p->id);
    KAI_TRY(set_ref(repo->get(), out.ref, p->team.commit, fmt::format("kaicoder: publish proposal {}", id)));
    out.proposal = std::move(*p);
  }
  // The lock is not held while the network is used.
  KAI_TRY(push_refs(git_cli(ws), {fmt::format("{}:{}", out.proposal.team.commit, out.ref)}));
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto p = ws.store.load(id, Store::Payloads::none);
  if (!p) return p.error();
  if (!p->team.pushed) {
    p->team.pushed = true;
    KAI_TRY(ws.store.save(*p));
  }
  out.proposal = std::move(*p);
  return out;
}

nlohmann::json published_object(const Published& p) {
  return {{"ref", p.ref},
          {"commit", p.proposal.team.remote() ? p.proposal.team.decision : p.proposal.team.commit},
          {"base", p.proposal.team.base},
          {"origin", p.proposal.team.origin},
          {"again", p.again}};
}

nlohmann::json received_object(const Received& r) {
  return {{"decision", r.proposal.team.decision},
          {"signer", r.proposal.team.signer},
          {"forwarded", r.forwarded},
          {"note", r.note}};
}

Result<Waited> wait_for_outcome(Workspace& ws, int id, std::optional<std::chrono::seconds> within,
                                const WaitControl& control) {
  auto peek = ws.store.load(id, Store::Payloads::none);
  if (peek && peek->team.published() && !ws.cfg.team_remote.empty()) return wait(ws, id, within, control);
  auto p = wait_for_decision(ws, id, within, control);
  if (!p) return p.error();
  Waited out;
  out.proposal = std::move(*p);
  return out;
}

Result<Waited> wait(Workspace& ws, int id, std::optional<std::chrono::seconds> within, const WaitControl& control,
                    std::chrono::milliseconds poll) {
  const TimePoint start = ws.clock->now();
  std::optional<TimePoint> until;
  if (within) until = start + *within;
  auto ticked = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> polled;
  Waited out;
  for (;;) {
    auto p = ws.store.load(id, Store::Payloads::none);
    if (!p) return p.error();
    KAI_TRY(require_sealed(ws.store, *p));
    out.proposal = *p;
    if (standing(*p) == Standing::settled) return out;
    const auto now = std::chrono::steady_clock::now();
    if (p->state == State::pending && p->team.published() && (!polled || now - *polled >= poll)) {
      polled = now;
      auto r = receive(ws, id);
      if (!r && r.error().code != Errc::io) return r.error();
      if (!r) {
        out.remote_note = r.error().message;
      } else {
        out.remote_note.clear();
        if (*r) {
          out.proposal = (*r)->proposal;
          out.received = std::move(**r);
          return out;
        }
      }
      continue;
    }
    if (p->state == State::pending && past_timeout(ws, *p)) {
      auto lock = lock_and_sweep(ws);
      if (!lock) return lock.error();
      continue;
    }
    if (until && ws.clock->now() >= *until) return out;
    if (control.stop && control.stop()) return out;
    if (control.tick && now - ticked >= std::chrono::seconds(1)) {
      ticked = now;
      control.tick(std::chrono::duration_cast<std::chrono::milliseconds>(ws.clock->now() - start));
    }
    if (control.sleep)
      control.sleep(std::chrono::milliseconds(100));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace kai::team
