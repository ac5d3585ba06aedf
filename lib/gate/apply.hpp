#pragma once
// Applying approved proposals and rolling back changelog entries (SPEC §5),
// and finishing or undoing either after a crash.
//
// Each action is a transaction (lib/gate/txn) over one file or many,
// recorded as an intent in <state>/intents/<rollback-id>.json before the
// tree is touched:
//   intent → room reserved → new bytes in temps → backups (hard links) →
//   renames/unlinks → journal → status → changelog → intent removed.
// A failure before the changelog entry is undone by the same command.
// recover() looks at every leftover intent: when the changelog holds its
// entry, or every file already holds the new bytes, the remaining steps are
// finished; otherwise each file gets its old bytes back (its backup renamed
// over it) and nothing happened. Either way the tree ends wholly old or
// wholly new, and every applied change has its backup and entry.
//
// All functions here expect the caller to hold the store lock.

#include <string>

#include "lib/store/changelog.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

enum class Force { no, yes };

struct Outcome {
  std::string rollback_id;  // empty when nothing changed
  std::string backup;       // absolute path, empty when none
  bool unchanged = false;   // content already as proposed: nothing written
  Entry entry;              // what was logged
};

// Compute the bytes an edit produces from `current`. conflict when the
// target is not found or found more than once (with line numbers).
Result<std::string> apply_edit(std::string_view current, std::string_view target, std::string_view replacement,
                               std::string_view path_for_messages);

// conflict when the proposal's validation failed and `force` is no (SPEC §8).
Status validation_permits_apply(const Proposal& p, Force force);

// Apply an approved (or failed) proposal, re-checking every guardrail and the
// approval digest, and refusing a failed validation unless `force` (the
// changelog entry's result then says it was forced). On a conflict or a
// guardrail refusal the proposal is marked failed and the error is returned;
// the tree is untouched. Queues an "applied" or "failed" notify event.
Result<Outcome> apply_proposal(Workspace& ws, Proposal& p, const std::string& approver, Force force = Force::no);

enum class CheckOnly { no, yes };

// Whether entry `r` is one of kaicoder's own writes of the root's
// kaicoder.toml ("always allow", journal kind "config") or a rollback of
// one (or of a rollback of one): the only entries whose rollback may write
// kaicoder.toml, and which re-trust the root (lib/gate).
bool writes_own_config(const Workspace& ws, const Record& r);

// Undo the entry `id` ("last" = newest reversible entry). CheckOnly::yes
// runs every check (conflicts, backups, guardrails) and changes nothing.
Result<Outcome> rollback_entry(Workspace& ws, const std::string& id, const std::string& decider, Force force,
                               CheckOnly check = CheckOnly::no);

// Finish or undo half-done transactions. Returns how many were found.
// An intent that does not verify (lib/store/mac) or names a file the guardrails
// refuse is never obeyed: it is moved to <state>/quarantine/ with a note of
// why. A backup the crash cut short (0 bytes, or only the start of the file)
// that the intent names and no journal record refers to is removed.
// denied when intents are waiting and there is no key to check them.
Result<int> recover(Workspace& ws);

// What recover() would find, for doctor: one per leftover intent.
struct IntentInfo {
  std::string name;     // file stem
  std::string refused;  // why it would be quarantined; empty when it would be obeyed
  int proposal = 0;     // the proposal it belongs to, 0 for none or refused
  std::string rollback_id;
  std::vector<std::string> cut_backups;  // root-relative backups cut short by the crash
  std::vector<std::string> temps;        // root-relative new files written but never renamed into place
};
std::vector<IntentInfo> inspect_intents(Workspace& ws);

}  // namespace kai
