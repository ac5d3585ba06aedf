// The deciding clone's side: a remote proposal shown from its commit, and
// the person's answer turned into a signed decision commit on the remote.

#include <git2.h>
#include <fmt/format.h>

#include "lib/certify/certify.hpp"
#include "lib/certify/signing_key.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/status.hpp"
#include "lib/team/git_cli.hpp"
#include "lib/team/internal.hpp"
#include "lib/team/objects.hpp"
#include "lib/team/team.hpp"

namespace kai::team {

namespace {

// A remote proposal a decision may start from: sealed, pending, not past
// its origin's timeout, its ref still naming the commit it was fetched as.
Result<Proposal> decidable(Workspace& ws, git_repository* repo, int id, Store::Payloads payloads) {
  auto p = ws.store.load(id, payloads);
  if (!p) return p.error();
  if (!p->team.remote())
    return make_error(Errc::usage, fmt::format("proposal {} is not a team proposal of another clone", id));
  KAI_TRY(require_sealed(ws.store, *p));
  if (past_timeout(ws, *p))
    return make_error(Errc::timeout,
                      fmt::format("proposal {} expired at its origin ({}) before a decision", id, p->team.expires),
                      "ask for it to be proposed again");
  if (p->state != State::pending)
    return make_error(Errc::conflict, fmt::format("proposal {} is already {}{}", id, to_string(p->state),
                                                  p->decided_by.empty() ? "" : " (by " + p->decided_by + ")"));
  auto at = ref_target(repo, remote_ref_name("proposals", p->team.origin, p->team.remote_id));
  if (!at || *at != p->team.commit)
    return make_error(
        Errc::conflict,
        fmt::format("proposal {} is no longer the commit {} it was fetched as", id, p->team.commit.substr(0, 12)),
        "its ref was pushed again with other content; nothing is decided on it");
  return p;
}

// The key could not sign (a passphrase and no ssh-agent holding it, most
// often): nothing was written. What to do next depends on the door: a
// terminal can load the key into ssh-agent; the review page cannot ask
// for a passphrase at all.
Error not_signed(const SigningKey& key, const Error& why, const DecisionRequest& req) {
  const std::string verb = req.approve ? "approve" : "reject";
  std::string hint =
      req.who.channel == Channel::web
          ? fmt::format(
                "the review page cannot type a passphrase for your key: decide at a terminal with kaicoder {} {} "
                "(a key with a passphrase must be loaded in ssh-agent: ssh-add), or load it into the ssh-agent "
                "kaicoder serve was started with",
                verb, req.id)
          : fmt::format("a key with a passphrase must be loaded in ssh-agent (ssh-add {}), then: kaicoder {} {}",
                        key.file.empty() ? std::string("KEY") : key.file.string(), verb, req.id);
  return make_error(Errc::io,
                    fmt::format("your key ({}, {}) could not sign the decision; nothing was signed or pushed: {}",
                                key.shown(), key.from, why.message),
                    std::move(hint));
}

}  // namespace

Result<FileDiff> remote_diff(Workspace& ws, const Proposal& p, const DiffOptions& opts) {
  if (!p.team.remote()) return make_error(Errc::usage, fmt::format("proposal {} is not a team proposal", p.id));
  auto repo = open_repo(ws);
  if (!repo) return repo.error();
  auto before = base_bytes(repo->get(), p.team.base, p.changes, content_max(ws));
  if (!before) return before.error();
  return changes_diff(p.changes, *before, opts);
}

Result<DecisionReview> prepare_decision(Workspace& ws, int id, const Decider& who, const DiffOptions& opts) {
  KAI_TRY(require_team(ws));
  KAI_TRY(may_decide(ws, who));
  auto repo = open_repo(ws);
  if (!repo) return repo.error();
  auto p = decidable(ws, repo->get(), id, Store::Payloads::all);
  if (!p) return p.error();
  KAI_TRY(require_sealed(ws.store, *p));
  auto d = remote_diff(ws, *p, opts);
  if (!d) return d.error();
  DecisionReview r;
  r.diff_cut = d->truncated;
  r.diff = std::move(*d);
  r.digest = p->team.commit;
  r.need = required_tier(*p, r.diff_cut, ApplyNow::yes, Force::no);
  if (!in_history(repo->get(), p->team.base))
    r.base_note = fmt::format(
        "its base {} is not in this branch's history (it came with the proposal): it was made on another line of work",
        p->team.base.substr(0, 12));
  r.proposal = std::move(*p);
  return r;
}

Result<Decided> decide(Workspace& ws, const DecisionRequest& req) {
  KAI_TRY(require_team(ws));
  KAI_TRY(may_decide(ws, req.who));
  KAI_TRY(gate::answer_meets(Tier::normal, req.answer));  // a no is no decision
  auto repo = open_repo(ws);
  if (!repo) return repo.error();
  Decided out;
  std::string ref;
  {
    auto lock = lock_and_sweep(ws);
    if (!lock) return lock.error();
    auto p = decidable(ws, repo->get(), req.id, Store::Payloads::none);
    if (!p) return p.error();
    if (req.seen_digest != p->team.commit)
      return make_error(Errc::conflict, fmt::format("proposal {} changed while it was being reviewed", req.id),
                        "review it again: kaicoder show " + std::to_string(req.id));
    if (req.approve) {
      const RequiredTier need = required_tier(*p, req.diff_cut, ApplyNow::yes, Force::no);
      KAI_TRY(gate::answer_meets(need.tier, req.answer, need.reason));
    }
    TeamDecision d;
    d.verdict = req.approve ? "approve" : "reject";
    d.proposal = p->team.commit;
    d.base = p->team.base;
    d.origin = p->team.origin;
    d.id = p->team.remote_id;
    d.decider = req.who.user;
    d.time = iso_utc(ws.clock->now());
    d.tier = req.answer == gate::Answer::confirm ? "confirm" : "normal";
    d.reason = ws.redact(req.reason);
    const std::string text = format_decision(d);
    auto key = choose_signing_key(ws.root, ws.home, ws.owner_dir);
    if (!key) return key.error();
    const SshTool ssh = ssh_tool(ws);
    // ssh-keygen runs with no terminal and stdin from /dev/null, within
    // SshTool's time limit (lib/run/runner): a key with a passphrase no
    // ssh-agent holds fails at once, at a terminal or behind the review page.
    auto sig = sign_with(ssh, *key, text, k_decision_namespace);
    if (!sig) return not_signed(*key, sig.error(), req);
    git_oid bid;
    if (git_oid_fromstr(&bid, p->team.base.c_str()) != 0) return make_error(Errc::conflict, "no base commit");
    auto base = lookup_commit(repo->get(), bid, "the proposal's base");
    if (!base) return base.error();
    auto signers = signers_at(repo->get(), base->get());
    if (!signers) return signers.error();
    if (!signers->problem.empty())
      return make_error(Errc::denied, fmt::format("no signature can count: {}", signers->problem),
                        "the base commit must name an allowed-signers file in [certify] allowed_signers");
    auto signer = verify_signature(ssh, signers->text, text, *sig, k_decision_namespace);
    if (!signer)
      return make_error(Errc::denied,
                        fmt::format("your key ({}, {}) is not an allowed signer at the base {}: {}", key->shown(),
                                    key->from, p->team.base.substr(0, 12), signer.error().message),
                        fmt::format("its public key must be in '{}' as the base commit holds it", signers->path));
    auto commit =
        make_decision_commit(repo->get(), p->team.commit, text, *sig, git_identity(ws), ws.clock->now(),
                             fmt::format("kaicoder decision: {} proposal {}/{}\n", d.verdict, d.origin, d.id));
    if (!commit) return commit.error();
    ref = ref_name("decisions", d.origin, d.id);
    KAI_TRY(set_ref(repo->get(), ref, *commit, "kaicoder: decision"));
    p->state = req.approve ? State::approved : State::rejected;
    p->decided_by = req.who.recorded();
    p->channel = req.who.channel;
    p->decided_at = d.time;
    p->approved_digest = req.approve ? p->team.commit : "";
    p->reason = d.reason;
    p->result = req.approve ? "approved: a signed decision for its origin" : "rejected";
    if (!req.approve) p->outcome_code = static_cast<int>(Errc::rejected);
    p->team.decision = *commit;
    p->team.signer = *signer;
    p->team.pushed = false;
    KAI_TRY(ws.store.save(*p));
    out.proposal = *p;
    out.decision = *commit;
    out.signer = *signer;
  }
  if (auto pushed = push_refs(git_cli(ws), {fmt::format("+{}:{}", out.decision, ref)}); !pushed) {
    out.push_error = pushed.error();
    return out;
  }
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  auto p = ws.store.load(req.id, Store::Payloads::none);
  if (!p) return p.error();
  p->team.pushed = true;
  KAI_TRY(ws.store.save(*p));
  out.proposal = std::move(*p);
  return out;
}

}  // namespace kai::team
