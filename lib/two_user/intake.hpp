#pragma once
// Intake: spool entries (lib/store/spool) become proposals in the owner's process.
// Each entry is hostile input: claimed by a rename into <state>/intake/
// (so two intakes never take one entry twice), read with O_NOFOLLOW and
// checked (lib/store/spool read_claimed_entry), strictly parsed, then staged by
// the same propose/propose_run as every other door, with the entry's owner
// uid as the proposer — the name it claims is ignored. A malformed entry is
// moved to <state>/spool-quarantine/ and reported; it never stops the
// others and nothing of it is staged. Every entry ends with a ticket the
// agent reads (lib/store/spool write_ticket).
//
// Usage: if (two_user(ws)) { auto r = intake(ws); … render r … }

#include <optional>
#include <string>
#include <vector>

#include "lib/gate/changeset.hpp"
#include "lib/gate/propose.hpp"
#include "lib/result.hpp"
#include "lib/gate/runs.hpp"
#include "lib/store/spool.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

// The largest entry intake reads: room for a target and a replacement at
// [limits] content, and 1 MiB for the rest (as --json-input); a changeset
// must fit in it too.
size_t max_entry_size(const Workspace& ws);

// The user name of `uid` from the password database, else "uid<N>".
std::string uid_name(unsigned uid);

// The request objects a spool entry carries: a propose request as
// --json-input takes it, and a run request {"argv", "shell", "cwd",
// "timeout", "network", "why", "agent"}, parsed as strictly (usage error
// naming the field).
nlohmann::json request_json(const ProposeRequest& r);
nlohmann::json run_request_json(const RunRequest& r);
Result<RunRequest> run_request_from_json(const nlohmann::json& j);

// A changeset request as a spool entry carries it: {"patch" or
// "patch_base64", or "changes" as --json-input takes them, and "why",
// "summary", "agent"}. Bytes that are not UTF-8 travel as base64 (the
// patch, a change's content); usage when another field is not UTF-8.
Result<nlohmann::json> changeset_request_json(const ChangesetRequest& r);
// Read strictly, as hostile input: an object with exactly one of "patch",
// "patch_base64" and "changes" (at most 10000 changes, each as
// changeset_from_json reads it), strings where strings go, nothing else.
// usage naming what is wrong. Paths are only text here: intake resolves
// every one of them again under the owner's rules (propose_changeset).
Result<ChangesetRequest> changeset_request_from_json(const nlohmann::json& j);

struct IntakeReport {
  std::vector<TicketInfo> taken;        // staged, or refused by a guardrail (error set)
  std::vector<TicketInfo> quarantined;  // malformed; kept in spool-quarantine/
  size_t still_waiting = 0;             // entries left in the spool by a bounded intake
};

// How many entries the owner's other commands take in before their own
// work: each costs a proposal's staging, so a flooded spool delays a
// prompt by at most this batch. `kaicoder intake` takes in everything.
constexpr size_t k_intake_batch = 25;

// Take in the entries waiting in the spool, oldest first: every one, or at
// most `at_most` (0: no bound), counting what is left in still_waiting.
// Errc::io only when the spool itself cannot be read; a bad entry is in
// the report. Does nothing when `ws` has no spool.
Result<IntakeReport> intake(Workspace& ws, size_t at_most = 0);

// Where a ticket stands: the proposal it became (`proposal` > 0), or not
// staged yet (`waiting`: its entry is in the spool, or being taken in now).
// not_found for no such ticket; the ticket's error when nothing was staged.
enum class TicketWait { no, in_spool, being_taken_in };
struct TicketStanding {
  int proposal = 0;
  TicketWait waiting = TicketWait::no;
};
Result<TicketStanding> ticket_standing(const std::filesystem::path& state, const std::string& ticket);

// The proposal a ticket became: not_found while intake has not taken the
// entry in (`hint` says so), the ticket's error when nothing was staged.
Result<int> proposal_of_ticket(const std::filesystem::path& state, const std::string& ticket);

}  // namespace kai
