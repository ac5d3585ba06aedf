#pragma once
// Team mode (SPEC §10, kaicoder-team(7)): proposals and signed decisions
// travel as commits through the git remote `[team] remote` names; no
// server of kaicoder's own.
//
//   agent's clone                 remote                      person's clone
//   publish(ws, 7) ─► refs/kaicoder/proposals/<origin>/7 ─► fetch(ws): local id 12
//                                                            prepare_decision(ws, 12) ─► ask
//   wait(ws, 7)   ◄── refs/kaicoder/decisions/<origin>/7 ◄── decide(ws, {12, approve})
//     verify the signature against the base commit's allowed signers,
//     apply through the normal transaction, fast-forward the branch.
//
// The trust anchor is the base commit of the proposal: the allowed-signers
// file `[certify] allowed_signers` names in its kaicoder.toml, never the
// change itself — as `kaicoder verify` anchors it. Every function here
// refuses (usage) when [team] remote is not set: nothing is pushed then.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/config/workspace.hpp"
#include "lib/diff/diff.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/gate.hpp"
#include "lib/result.hpp"
#include "lib/store/proposal.hpp"

namespace kai::team {

// usage, with how to set it up, when [team] remote is not set.
Status require_team(const Workspace& ws);

// ---- the proposing clone ----

struct Published {
  Proposal proposal;
  std::string ref;     // refs/kaicoder/proposals/<origin>/<id>
  bool again = false;  // it had been published before: the same commit was pushed again
};

// Publish pending proposal `id` (edit, write, delete, changeset; never a
// run): its commit on HEAD (conflict "commit first" when its files differ
// from HEAD), a local ref, the record (sealed: the commit, the base, the
// origin), then the push. A proposal published before is pushed again as
// the same commit. For a decided proposal fetched from another clone:
// push our decision again (after a push that failed). Errors: usage (no
// [team], a run, no git), conflict, io when the remote cannot be reached
// (the proposal stays published here; publish again).
Result<Published> publish(Workspace& ws, int id);

// What a publish did, as every door reports it: {ref, commit (the proposal
// commit, or for a remote proposal our decision), base, origin, again}.
nlohmann::json published_object(const Published& p);

// Fetch the decision on published proposal `id`, if there is one, and
// carry it out: approved → applied through the normal transaction with
// `approver: <signer> (team)` (and the branch fast-forwarded when it still
// points at the base); rejected → rejected. A decision that is not signed
// by an allowed signer of the base commit, names another proposal, origin
// or commit, or answers y where CONFIRM is due is refused (denied, or
// conflict for another commit), logged once as a `blocked` entry, and the
// proposal stays pending. nullopt when no decision is there yet.
struct Received {
  Proposal proposal;
  std::optional<Outcome> applied;
  std::string forwarded;  // the branch moved to the proposal commit, or ""
  std::string note;       // why it did not move
};
Result<std::optional<Received>> receive(Workspace& ws, int id);
// {decision, signer, forwarded, note}: what a wait reports of it.
nlohmann::json received_object(const Received& r);

// Block until published proposal `id` is decided — here at a terminal, or
// by a signed decision on the remote (polled every `poll`) — or `within`
// passes. An unreachable remote is noted and the wait goes on.
struct Waited {
  Proposal proposal;
  std::optional<Received> received;  // set when a team decision settled it
  std::string remote_note;           // the remote could not be reached: why
};
Result<Waited> wait(Workspace& ws, int id, std::optional<std::chrono::seconds> within, const WaitControl& control = {},
                    std::chrono::milliseconds poll = std::chrono::seconds(3));

// What every door's wait blocks on (`kaicoder wait`, propose --wait, the
// MCP wait tool): a proposal this clone published, with [team] set, as
// wait() does — a signed decision on the remote counts too; any other
// proposal as the gate's wait_for_decision.
Result<Waited> wait_for_outcome(Workspace& ws, int id, std::optional<std::chrono::seconds> within,
                                const WaitControl& control = {});

// ---- every clone ----

struct FetchOptions {
  bool prune = false;
};
struct FetchReport {
  std::vector<int> added;            // remote proposals given a local id now
  std::vector<int> decided;          // remote proposals a decision on the remote settled
  std::vector<Received> received;    // our own proposals a decision settled here
  std::vector<std::string> refused;  // what was refused, and why
  std::vector<std::string> pruned;   // refs dropped (with --prune)
  std::vector<int> pushed;           // our decisions that reached the remote only now
};
// Bring refs/kaicoder/* from the remote (never any other ref): remote
// proposals get local ids (kind changeset, with their origin), decisions
// on them update their records, decisions on our own proposals are
// received (as receive()), and with `prune` the refs of rejected and
// expired proposals older than [team] keep are dropped, on the remote and
// here — never a decision whose proposal commit is in the history. A ref
// with another name, a proposal or decision object that does not check
// out is refused (listed) and harms nothing. io when the remote cannot be
// reached.
Result<FetchReport> fetch(Workspace& ws, const FetchOptions& opts);

// ---- the deciding clone ----

// What a door shows before it asks about remote proposal `id`.
struct DecisionReview {
  Proposal proposal;
  FileDiff diff;  // the commit against its base, cut as DiffOptions says
  bool diff_cut = false;
  std::string digest;  // the proposal commit: what a decision binds to
  RequiredTier need;
  std::string base_note;  // the base is not in this clone's history
};
// denied: not an approver; usage: not a remote proposal; conflict: decided
// already, its ref now names another commit (re-pushed); timeout: expired.
Result<DecisionReview> prepare_decision(Workspace& ws, int id, const Decider& who, const DiffOptions& opts);
// The diff of remote proposal `p` (show, the review page).
Result<FileDiff> remote_diff(Workspace& ws, const Proposal& p, const DiffOptions& opts);

struct DecisionRequest {
  int id = 0;
  Decider who;
  bool approve = true;
  gate::Answer answer = gate::Answer::no;
  std::string seen_digest;  // DecisionReview::digest
  bool diff_cut = false;
  std::string reason;  // a rejection's
};
struct Decided {
  Proposal proposal;
  std::string decision;             // the decision commit
  std::string signer;               // the allowed signer whose key signed it
  std::optional<Error> push_error;  // decided and signed here; the push failed (publish ID pushes it again)
};
// Sign and push a decision on remote proposal `id`, re-checking under the
// lock what prepare_decision checked, and that the answer meets the tier.
// The key is the one lib/certify/signing_key chooses; its signature must
// verify against the base commit's allowed signers before anything is
// written (denied otherwise).
Result<Decided> decide(Workspace& ws, const DecisionRequest& req);

}  // namespace kai::team
