#pragma once
// The decisions of the human gate (SPEC §4) on the store side: approve,
// reject, expire. Reading the answer from the terminal is cmd/'s job; these
// functions take the store lock, re-read the proposal and check that what
// the person saw is still what is staged.

#include <chrono>
#include <cstdint>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "lib/gate/apply.hpp"
#include "lib/config/policy.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

// A changelog entry for an action that changed no file and cannot be rolled
// back (rejected, timeout, blocked, run): rollback-id, backup and rollback "—".
Entry unreversible_entry(const Workspace& ws, const Proposal& p, const std::string& kind, const std::string& approver,
                         const std::string& result, const std::string& summary);

// Who decides: the OS user that [approval] approvers is checked against,
// and the door they decided through. The record and the changelog name
// them as recorded(): "alice" at the terminal, "alice (web)" from the
// review page.
struct Decider {
  std::string user;
  Channel channel = Channel::terminal;
  // Set when the policy allowed the transition without asking: `user` is
  // still who asked for it (and is checked against the approvers), and the
  // record names the rule instead.
  std::string policy_rule;
  Decider() = default;
  Decider(std::string u, Channel c = Channel::terminal)
      : user(std::move(u)), channel(c) {}  // NOLINT: a name is a terminal decider
  Decider(const char* u) : user(u) {}      // NOLINT
  std::string recorded() const;
};

// denied when [approval] approvers is set and `who.user` is not on it.
// A team decision's `user` is its signer (lib/team), so approvers, when
// set, names the signers whose decisions count too.
Status may_decide(const Workspace& ws, const Decider& who);
// denied when `decider` may not approve `p`: it was proposed through the
// spool by that same user, or (in two-user mode) `decider` is the agent user.
Status not_self_approval(const Workspace& ws, const Proposal& p, const std::string& decider);

// usage when `p` is a team proposal fetched from another clone (lib/team):
// it is decided with a signed decision and applied where it was proposed,
// never approved, rejected or applied here through the gate.
Status not_team_remote(const Proposal& p);

// Load for display; runs recovery and expiry first under the lock.
Result<Proposal> load_for_decision(Workspace& ws, int id);

enum class ApplyNow { no, yes };

struct Approved {
  Proposal proposal;
  std::optional<Outcome> applied;
};

// Approve proposal `id` whose digest the person saw was `seen_digest`, then
// (ApplyNow::yes, policy mode normal) apply it. conflict when it is no
// longer pending (decided by someone else meanwhile) or was changed, or —
// with ApplyNow::yes and Force::no — when its validation failed (it then
// stays pending); timeout when it expired; denied in propose-only mode with
// ApplyNow::yes. When the apply itself fails the proposal is failed and a
// `failed` changelog entry is written. Queues notify events (lib/run/hooks) for
// the caller to flush.
// `recheck`, when given, runs under the lock on the proposal as it is now,
// after the digest check; its error refuses the approval.
using Recheck = std::function<Status(const Proposal&)>;
Result<Approved> approve(Workspace& ws, int id, const std::string& seen_digest, const Decider& who, ApplyNow now,
                         Force force = Force::no, const Recheck& recheck = {});

// What the approval of a proposal takes at the terminal. CONFIRM when the
// proposal's own tier is confirm, when a failed validation is overridden
// (Force::yes with ApplyNow::yes), or when the diff shown was cut for
// display (`diff_cut`): a plain "y" is accepted only for a change the
// person saw whole. `reason` says why when it is CONFIRM.
struct RequiredTier {
  Tier tier = Tier::normal;
  std::string reason;
};
RequiredTier required_tier(const Proposal& p, bool diff_cut, ApplyNow now, Force force);

// A pending proposal that cannot be carried out as proposed (its edit's
// target is gone, its base changed): status failed with `why` as result
// and `why.code` as the code a --wait-ing proposer exits with, a `failed`
// changelog entry naming `who`, a notify event. Errors as approve().
Result<Proposal> fail_pending(Workspace& ws, int id, const Decider& who, const Error& why);

// Reject: status rejected, a `rejected` changelog entry, nothing in the tree.
Result<Proposal> reject(Workspace& ws, int id, const Decider& who, const std::string& reason);

// Apply an approved proposal (after --no-apply or a failed apply).
// Force::yes applies it even though its validation failed.
Result<Approved> apply_approved(Workspace& ws, int id, const Decider& who, Force force = Force::no);

// Housekeeping the commands that decide or propose run under the lock:
// finish or undo interrupted changes, expire pending proposals older than
// [approval] timeout. One that expires alone is logged as its own `timeout`
// entry; several expiring in the same sweep are one `timeout` entry whose
// summary names them all ("3 proposals expired: 4-5, 9") and one notify
// event. Reads metadata only. Returns the ids that expired. Never run by
// list, show or log: they only read, so a cloned tree's hooks never run
// because someone looked at it.
// Reads the live index (Store::live_index, which rebuilds it when it is
// missing, forged or stale), and the records only of what is due.
Result<std::vector<int>> sweep(Workspace& ws);

// What one sweep leaves: the store lock (held for as long as this lives)
// and the live set after expiry — the proposals pending and not past
// timeout, those approved and those held — as the sealed live index says
// them (Store::live_index: the agent, the request's key, the state, the
// time), no record read. The twin and the pending limit are read from it,
// so proposing reads the index once and no record but a twin's.
struct Swept {
  FileLock lock;
  Store::LiveView live;
};
Result<Swept> lock_and_sweep_live(Workspace& ws);

// Take the store lock, then sweep under it: how every command that proposes
// or decides begins. The lock is held for as long as the result lives.
Result<FileLock> lock_and_sweep(Workspace& ws);

}  // namespace kai

namespace kai {

// Whether a pending proposal is past [approval] timeout. Reads only: the
// reading commands (list, show, log, completion) show such a proposal as
// expired without recording it; sweep() records it.
bool past_timeout(const Workspace& ws, const Proposal& p);
// The same from what the live index says of one (Store::LiveEntry).
bool past_timeout(const Workspace& ws, const Store::LiveEntry& e);
// The same at `now` (unix seconds): for a pass over many entries.
bool past_timeout(const Workspace& ws, const Store::LiveEntry& e, int64_t now);
// How far ahead of the clock a proposal's created time may be before
// sweep() takes it for a clock that ran ahead and counts it from now.
inline constexpr std::chrono::seconds k_clock_skew{300};

// Roll back entry `id` or "last" under the lock (after may_decide).
Result<Outcome> rollback(Workspace& ws, const std::string& id, const Decider& who, Force force,
                         CheckOnly check = CheckOnly::no);

// How a door watches a wait: `stop` is asked every poll and, once true,
// ends the wait with the proposal as it is (a cancelled request, a client
// that went away: nothing is decided); `tick` is called about once a second
// with the time waited so far (progress for the one who waits).
// `sleep`, when set, is how the wait pauses between polls (a door that
// shares the workspace with other threads lets them use it meanwhile).
struct WaitControl {
  std::function<bool()> stop;
  std::function<void(std::chrono::milliseconds waited)> tick;
  std::function<void(std::chrono::milliseconds)> sleep;
};

// Block until proposal `id` is decided and, when approved, applied (or its
// apply failed). Polls without holding the lock; expires it when due. With
// `within`, returns it as it is (pending or approved) once that much time
// has passed on the workspace's clock.
Result<Proposal> wait_for_decision(Workspace& ws, int id, std::optional<std::chrono::seconds> within = std::nullopt,
                                   const WaitControl& control = {});

}  // namespace kai
