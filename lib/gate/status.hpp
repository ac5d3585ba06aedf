#pragma once
// A proposal's state as a reader sees it, for every door that reports one
// (list, show, wait, the MCP tools): pending past [approval] timeout reads as
// expired before a sweep records it, the proposals in the order people read
// them, and what a decided proposal means for the one who proposed it.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/store/proposal.hpp"
#include "lib/store/store.hpp"
#include "lib/result.hpp"

namespace kai {

class Workspace;

// How far a proposal someone waits on has come, for every door that waits
// or reports one (kaicoder wait on either side, the MCP tools
// wait_for_decision and proposal_status). Only `settled` ends a wait; a
// door says the others in its own words, and a wait that stops at one of
// them is still pending (8).
enum class Standing {
  in_spool,   // two-user mode: a ticket intake has not taken in yet
  no_status,  // two-user mode: taken in, its status copy not written yet
  pending,    // waiting for a person
  approved,   // approved, not carried out yet
  settled,    // applied, rejected, expired, failed or rolled back
};
Standing standing(const Proposal& p);

// Whether a proposal is still open: pending, approved, or failed (it can
// still be applied or rejected), so its diff against the tree is worth
// showing.
bool still_open(const Proposal& p);

// Whether `file` is one that proposal `p` changes (its path, or a
// changeset's change by either path of a rename), for show --file on
// every side: ok for an empty `file`, else not_found naming both.
Status names_file(const Proposal& p, const std::string& file);

// to_string(p.state), or "timeout" for a pending proposal past its timeout.
std::string shown_state(const Workspace& ws, const Proposal& p);

struct Listing {
  std::vector<Proposal> proposals;                   // metadata only, no payloads
  std::vector<std::pair<int, std::string>> corrupt;  // id, why it could not be read
  // Archived proposals read from their records because their summary line
  // was missing or did not verify (Store::catalog): doctor makes it again.
  std::vector<int> from_records;
  // With Store::Detail::listed: archived proposals their bucket's listing
  // did not vouch for (no line, or a listing that does not verify), read
  // from the summary or the record instead: doctor makes it again.
  std::vector<int> unlisted;
};

// Every proposal (or those whose shown_state is `status`), pending first
// (oldest first: they expire first), then the rest newest first. Only
// reads: never sweeps, never fails on a corrupt record. `detail`: how much
// of an archived proposal is read (Store::catalog): every field, or only
// what a list row shows.
Result<Listing> list_proposals(const Workspace& ws, const std::string& status = {},
                               Store::Detail detail = Store::Detail::records);

// What a decided proposal means for its proposer: nothing (applied,
// approved, rolled back; a run that ran, whatever its own exit code) or the
// error it ends in — rejected (4), timeout (5), failed with the code it was
// recorded with (a conflict is 6), still pending (8).
std::optional<Error> outcome_error(const Proposal& p);

}  // namespace kai
