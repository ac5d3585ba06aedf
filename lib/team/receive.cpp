// The proposing clone's side of a decision: fetch it, check it against the
// base commit's allowed signers and the proposal as it was published, and
// carry it out through the gate's own transitions.

#include <algorithm>

#include <git2.h>
#include <fmt/format.h>

#include "lib/certify/certify.hpp"
#include "lib/certify/signing_key.hpp"
#include "lib/gate/decide.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/team/git_cli.hpp"
#include "lib/team/internal.hpp"
#include "lib/team/objects.hpp"
#include "lib/team/origin.hpp"
#include "lib/team/team.hpp"
#include "lib/util/fs.hpp"

namespace kai::team {
namespace fs = std::filesystem;

namespace {

Error replayed(const std::string& decision, const std::string& what) {
  return make_error(Errc::denied, fmt::format("decision {} is refused: {}", decision.substr(0, 12), what),
                    "a decision counts only for the proposal, clone and commit it was signed for");
}

// A refused decision is a `blocked` entry in the changelog, once per
// decision commit (a wait polls the same one again and again).
void log_refusal(Workspace& ws, const Proposal& p, const std::string& decision, const Error& why) {
  auto dir = team_dir(ws, true);
  if (!dir) return;
  const fs::path mark = *dir / ("refused-" + decision);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(mark, ec))) return;
  (void)ws.changelog.prepend(unreversible_entry(
      ws, p, "blocked", "", fmt::format("refused team decision {}: {}", decision, why.message), p.summary));
  (void)write_file_exclusive(mark, why.message + "\n", 0600);
}

// Record on `id` the decision being carried out, so the entry names it.
Status note_decision(Workspace& ws, int id, const std::string& decision, const std::string& signer) {
  auto p = ws.store.load(id, Store::Payloads::none);
  if (!p) return p.error();
  p->team.decision = decision;
  p->team.signer = signer;
  return ws.store.save(*p);
}

}  // namespace

Result<Verified> verify_decision(const Workspace& ws, git_repository* repo, const std::string& decision,
                                 const std::string& origin, int remote_id, const std::string& proposal,
                                 const std::string& base) {
  git_oid id;
  if (git_oid_fromstr(&id, decision.c_str()) != 0)
    return make_error(Errc::conflict, fmt::format("'{}' is not a decision commit", decision));
  auto o = read_decision_commit(repo, id);
  if (!o) return o.error();
  const TeamDecision& d = o->decision;
  if (d.origin != origin) return replayed(decision, fmt::format("it is for clone {}, not {}", d.origin, origin));
  if (d.id != remote_id) return replayed(decision, fmt::format("it is for proposal {}, not {}", d.id, remote_id));
  if (o->parent != proposal || d.proposal != proposal)
    return make_error(Errc::conflict,
                      fmt::format("decision {} is on commit {}, not on the proposal commit {} that was published",
                                  decision.substr(0, 12), d.proposal.substr(0, 12), proposal.substr(0, 12)),
                      "a decision counts only for the commit it was signed for");
  if (d.base != base)
    return make_error(Errc::conflict, fmt::format("decision {} names base {}, not {}", decision.substr(0, 12),
                                                  d.base.substr(0, 12), base.substr(0, 12)));
  git_oid bid;
  if (git_oid_fromstr(&bid, base.c_str()) != 0) return make_error(Errc::conflict, "the base is not a commit id");
  auto base_commit = lookup_commit(repo, bid, "the proposal's base");
  if (!base_commit) return base_commit.error();
  auto signers = signers_at(repo, base_commit->get());
  if (!signers) return signers.error();
  if (!signers->problem.empty()) return replayed(decision, fmt::format("no signature can count: {}", signers->problem));
  auto who = verify_signature(ssh_tool(ws), signers->text, o->text, o->sig, k_decision_namespace);
  if (!who)
    return make_error(who.error().code == Errc::denied ? Errc::denied : who.error().code,
                      fmt::format("decision {} is refused: {} (allowed signers: '{}' at the base {})",
                                  decision.substr(0, 12), who.error().message, signers->path, base.substr(0, 12)),
                      "only a person whose key the base commit allows can decide");
  return Verified{std::move(*o), *who};
}

Result<std::optional<Received>> carry_out(Workspace& ws, git_repository* repo, int id, const std::string& decision) {
  Proposal p;
  {
    auto lock = lock_and_sweep(ws);
    if (!lock) return lock.error();
    auto q = ws.store.load(id);
    if (!q) return q.error();
    KAI_TRY(require_sealed(ws.store, *q));
    if (q->state != State::pending || !q->team.published()) return std::optional<Received>{};
    p = std::move(*q);
  }
  auto v = verify_decision(ws, repo, decision, p.team.origin, p.id, p.team.commit, p.team.base);
  if (v) {
    // Signed with a key this clone holds: whoever works here, the agent
    // too, could have signed it. A decision counts only from elsewhere.
    const auto key = signature_public_key(v->object.sig);
    const auto held = held_public_keys(ssh_tool(ws), ws.root, ws.home, ws.owner_dir);
    if (!key || std::find(held.begin(), held.end(), *key) != held.end())
      v = make_error(Errc::denied,
                     fmt::format("decision {} is refused: it is signed with a key this clone holds ({} signs with "
                                 "it here), so the agent working here could have signed it",
                                 decision.substr(0, 12), v->signer),
                     "keep the decider's key where the person decides: not in this clone's owner's ~/.ssh, "
                     "signing key or ssh-agent");
  }
  if (v && v->object.decision.verdict == "approve") {
    const RequiredTier need = required_tier(p, false, ApplyNow::yes, Force::no);
    if (need.tier == Tier::confirm && v->object.decision.tier != "confirm")
      v = replayed(decision,
                   fmt::format("it was answered with y, and proposal {} takes CONFIRM ({})", id, need.reason));
  }
  if (!v) {
    auto lock = ws.store.lock();
    if (lock) log_refusal(ws, p, decision, v.error());
    return v.error();
  }
  (void)set_ref(repo, remote_ref_name("decisions", p.team.origin, p.id), decision, "kaicoder: decision received");
  const Decider who{v->signer, Channel::team};
  Received out;
  {
    auto lock = ws.store.lock();
    if (!lock) return lock.error();
    KAI_TRY(note_decision(ws, id, decision, v->signer));
  }
  if (v->object.decision.verdict == "reject") {
    const std::string& why = v->object.decision.reason;
    auto r = kai::reject(ws, id, who, why.empty() ? std::string("rejected by a team decision") : why);
    if (!r) return r.error();
    out.proposal = std::move(*r);
    return std::optional<Received>(std::move(out));
  }
  const std::string digest_now = digest(p);
  auto recheck = [&p](const Proposal& now) -> Status {
    if (now.team.commit != p.team.commit || now.team.base != p.team.base)
      return make_error(Errc::conflict, fmt::format("proposal {} was published again meanwhile", now.id));
    return ok_status();
  };
  auto a = kai::approve(ws, id, digest_now, who, ApplyNow::yes, Force::no, recheck);
  if (!a) return a.error();
  out.proposal = std::move(a->proposal);
  out.applied = std::move(a->applied);
  auto lock = ws.store.lock();
  if (!lock) return lock.error();
  Forwarded f = fast_forward(ws, repo, out.proposal);
  if (f.moved)
    out.forwarded = f.branch;
  else
    out.note = f.note;
  return std::optional<Received>(std::move(out));
}

Result<std::optional<Received>> receive(Workspace& ws, int id) {
  KAI_TRY(require_team(ws));
  auto p = ws.store.load(id, Store::Payloads::none);
  if (!p) return p.error();
  if (!p->team.published())
    return make_error(Errc::usage, fmt::format("proposal {} was not published", id),
                      fmt::format("publish it first: kaicoder publish {}", id));
  if (p->state != State::pending) return std::optional<Received>{};
  auto repo = open_repo(ws);
  if (!repo) return repo.error();
  const GitCli git = git_cli(ws);
  const std::string ref = ref_name("decisions", p->team.origin, id);
  auto there = ls_remote(git, {ref});
  if (!there) return there.error();
  if (there->empty()) return std::optional<Received>{};
  const std::string incoming = incoming_ref_name("decisions", p->team.origin, id);
  KAI_TRY(fetch_refs(git, {fmt::format("+{}:{}", ref, incoming)}));
  auto decision = ref_target(repo->get(), incoming);
  (void)delete_ref(repo->get(), incoming);
  if (!decision) return std::optional<Received>{};
  return carry_out(ws, repo->get(), id, *decision);
}

}  // namespace kai::team
