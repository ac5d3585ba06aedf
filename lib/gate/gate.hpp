#pragma once
// The human gate (SPEC §4) as one library call per transition. Every door
// (the terminal today; a review page or a spool later) calls these and only
// renders: prepare_* says what to show and what answer it takes, the
// transition re-checks everything under the store lock — the decider is an
// approver, the answer meets the tier, the digest shown is the proposal's
// digest now, the record is sealed, the policy mode permits it.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "lib/gate/apply.hpp"
#include "lib/gate/decide.hpp"
#include "lib/diff/diff.hpp"
#include "lib/store/journal.hpp"
#include "lib/config/policy.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/gate/runs.hpp"
#include "lib/config/workspace.hpp"

namespace kai::gate {

// Through which door a decision came (stored with the decision), and who
// decided: lib/gate/decide's, so the store records both.
using kai::Channel;
using kai::Decider;
using kai::to_string;

// What the person answered: no, a plain yes, or CONFIRM typed out.
enum class Answer { no, yes, confirm };

// ok when `answer` is enough for `tier`: a yes for normal, CONFIRM for
// confirm. Errc::rejected for no, Errc::denied for a yes where CONFIRM is due.
Status answer_meets(Tier tier, Answer answer, std::string_view reason = {});

// Whether the policy mode is propose-only: an approval is recorded, never
// applied or run (ApplyNow::yes is refused).
bool propose_only(const Workspace& ws);

// How much of a diff the door can show before it asks: cut at the
// display limit (DiffOptions; a cut diff takes CONFIRM), or all of it,
// when the door pages it (SPEC §11).
enum class DiffShown { cut, whole };

struct ApprovalOptions {
  ApplyNow now = ApplyNow::yes;  // apply (or run) right after the approval
  Force force = Force::no;       // override a failed validation
  DiffShown shown = DiffShown::cut;
};

// Everything a door needs to ask for an approval.
struct ApprovalReview {
  Proposal proposal;
  std::optional<FileDiff> diff;  // the diff as shown (cut when long); none for a run
  bool diff_cut = false;         // the diff shown is not the whole change
  std::string digest;            // what the shown proposal binds to; the request carries it back
  RequiredTier need;             // the answer it takes, and why CONFIRM
  // Set when a yes could not be carried out (a failed validation without
  // --force): the door shows the proposal, then reports this without asking.
  std::optional<Error> refusal;
  // A run's effects held for CONFIRM (state held): what the person decides
  // on, instead of the command (lib/gate/run_effects).
  std::optional<KeptEffects> held;
  // A run: tracked files whose names kaicoder may not write (not UTF-8,
  // hidden characters, shell syntax: check_name). A run may change them,
  // but no rollback can put them back; the door says so before it asks.
  std::vector<std::string> unrestorable;
};

// Load pending proposal `id` for `who` to decide on. denied: not an
// approver, propose-only with ApplyNow::yes, an unsealed record; conflict:
// not pending, or it can never apply as proposed (it is then failed, logged
// and its waiter told); timeout: it expired.
Result<ApprovalReview> prepare_approval(Workspace& ws, int id, const Decider& who, const ApprovalOptions& opts);

// One decision as a door hands it over.
struct Request {
  int id = 0;
  Decider who;
  Answer answer = Answer::no;
  std::string seen_digest;  // ApprovalReview::digest of what was shown
  bool diff_cut = false;    // the diff shown was cut
  ApprovalOptions opts;
};

using OnOutput = std::function<void(std::string_view, int)>;

struct Approval {
  Proposal proposal;
  std::optional<Outcome> applied;  // an edit, write or delete applied now
  std::optional<RunOutcome> ran;   // a run carried out now (`on_output` hears it)
  std::optional<RunEffects> kept;  // a run's held effects kept now
};

// Approve, then apply or run with ApplyNow::yes. Re-checks under the lock
// what prepare_approval checked, plus: conflict when the digest differs
// from the one shown or it was decided meanwhile; denied when the answer
// does not meet the tier the proposal needs now; rejected for a no.
Result<Approval> approve(Workspace& ws, const Request& req, const OnOutput& on_output = {});

// The person at the terminal that approved (or applied) run `req.id`
// answers for its held effects right after the command's output: CONFIRM
// (Answer::confirm) keeps them, anything else drops them at once and logs
// it. Re-checked under the lock: the decider, the state (held), the digest
// of what was shown (KeptEffects::digest). Errc::rejected after a drop, so
// the door exits 4.
Result<RunEffects> settle_held(Workspace& ws, const Request& req);

// Apply (or run) proposal `req.id`, approved earlier. denied: not an
// approver, propose-only; conflict: not approved, changed since, failed
// validation without Force::yes. No answer is asked: the approval was.
Result<Approval> apply(Workspace& ws, const Request& req, const OnOutput& on_output = {});

// The proposal `who` may turn down: pending, approved or failed. denied:
// not an approver; timeout: expired; conflict: already decided otherwise.
Result<Proposal> prepare_reject(Workspace& ws, int id, const Decider& who);

// Reject with a yes (normal tier): status rejected, a `rejected` entry, nothing written.
Result<Proposal> reject(Workspace& ws, const Request& req, const std::string& reason);

// The changelog entry a person names (SPEC §1, §11), as git names commits:
// a rollback id; "last", the newest entry; "last~N", the entry N before it
// (last~2 is the third-newest); or a proposal id, the entry of what that
// proposal did. usage: a malformed number (one parser: lib/proposal), or a
// proposal with several entries (the message lists them, to name one);
// not_found: no such entry, or a proposal that changed nothing.
Result<std::string> resolve_entry(const Workspace& ws, const std::string& name);

// What a door shows before a rollback: the entry resolved from its name
// (resolve_entry), its record, and whether the policy asks or allows it.
struct RollbackReview {
  std::string asked;                  // the entry as the person named it: the policy's subject
  std::string id;                     // the entry to undo, its name resolved
  Record record;                      // what it changed
  Decision decision = Decision::ask;  // ask: the door asks; allow: no question
  std::string rule;                   // the policy rule that decided
};

// denied: not an approver, the policy denies rollback; conflict and the
// other refusals of the rollback itself, checked before any question.
Result<RollbackReview> prepare_rollback(Workspace& ws, const std::string& id, const Decider& who, Force force);

struct RolledBack {
  std::string undone;  // the entry that was undone
  Outcome outcome;
};

// Roll back the entry `shown` names (from prepare_rollback). The policy is
// decided again: deny refuses, ask needs a yes, allow records the rule as
// the approver.
Result<RolledBack> rollback(Workspace& ws, const RollbackReview& shown, const Request& req);

}  // namespace kai::gate
