#pragma once
// [hooks] (SPEC §8): notify and review, the owner's own commands, each a
// shell string run with /bin/sh -c from root, in a session of its own (no
// terminal, so it can answer no prompt), killed with its process group at
// its time limit.
//
// notify gets one JSON document on stdin per event — the proposal as
// `show --json` has it plus "event" (proposed, approved, applied, failed,
// rejected, timeout, blocked, rolled-back, held: a run's effects wait for
// CONFIRM) and "root". Events are queued
// while the store lock is held and run later, with no lock held, so a slow
// hook never holds up anybody else:
//
//   queue_notify(ws, p, "approved");   // anywhere, cheap, never fails
//   ...lock released...
//   flush_notify(ws);                  // runs the hook once per event
//
// A hook that fails, hangs or cannot start never fails or loses anything:
// each run is one line in <state>/hooks.log.
//
// review gets {"instructions": ..., "untrusted_proposal": {...}} on stdin and
// its stdout becomes the proposal's advisory review text. The text is data:
// nothing it says changes the proposal. Its writes are confined (with
// [run] sandbox = "landlock") to a scratch folder removed afterwards.

#include <string_view>

#include "lib/diff/diff.hpp"
#include "lib/store/proposal.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

// What the review command is told about the document it receives.
extern const char* const k_review_instructions;

void queue_notify(Workspace& ws, const Proposal& p, std::string_view event);
// Whether [hooks] notify is set: a caller that must read something only to
// queue an event asks first.
bool notify_wanted(const Workspace& ws);
// One event for many proposals (an expiry burst): the document holds
// "event", "root" and "ids", and KAICODER_PROPOSAL the ids, comma-separated.
void queue_notify_burst(Workspace& ws, std::string_view event, const std::vector<int>& ids);

// Run [hooks] notify for every queued event, oldest first, and clear the
// queue. Call with no store lock held. Never fails; writes <state>/hooks.log.
void flush_notify(Workspace& ws);

// Run [hooks] review on `p` with its diff (status "none" when no review
// command is configured). Never fails: a review that cannot run, exits
// non-zero or times out says so in its status and text.
Review review_proposal(const Workspace& ws, const Proposal& p, const FileDiff& diff);

}  // namespace kai
