#pragma once
// The spool of two-user mode (kaicoder-agent-user(1)): where the agent's
// Unix user, which can read the tree but write nothing of it, drops its
// proposals for the owner's processes to take in (lib/two_user/intake).
//
//   <state>/spool/     the owner's, the agent user's group, mode 3770 (setgid,
//                      sticky): the agent creates <ticket>.json there (0644:
//                      the owner reads it as "others"; nobody else can pass
//                      through the folder), and nothing else
//   <state>/tickets/   the owner's, 2750: <ticket>.json, what became of an entry
//                      (its proposal id, or why it was refused or quarantined)
//   <state>/status/    the owner's, 2750: <id>.json, a copy of each proposal's
//                      record, so the agent reads status without the store
//   <state>/intake/    the owner's, 700: entries claimed by one intake
//   <state>/spool-quarantine/  the owner's, 700: entries that were refused
//
// The agent side writes an entry (write_entry) and gets its ticket at once;
// the owner side reads it as hostile input (read_claimed_entry,
// parse_entry). Nothing here stages a proposal: lib/two_user/intake does.
//
// Usage (agent): auto t = write_entry(state, entry_text(e), max, now);
// Usage (owner): claim → read_claimed_entry → parse_entry → … → write_ticket

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/result.hpp"
#include "lib/util/time.hpp"

namespace kai {

namespace spool {
std::filesystem::path dir(const std::filesystem::path& state);         // spool/
std::filesystem::path tickets(const std::filesystem::path& state);     // tickets/
std::filesystem::path status(const std::filesystem::path& state);      // status/
std::filesystem::path claimed(const std::filesystem::path& state);     // intake/
std::filesystem::path quarantine(const std::filesystem::path& state);  // spool-quarantine/
}  // namespace spool

// True when `state` has a spool folder (a real folder, not a symlink).
bool has_spool(const std::filesystem::path& state);

// A ticket: letters, digits and '-', 1 to 80 characters, not all digits
// (a number is a proposal id).
bool is_ticket(std::string_view s);

// What an entry asks for. `request` is the --json-input object of propose
// (lib/gate/propose request_from_json), a run request (run_request_json) or a
// changeset request (changeset_request_json), all in lib/two_user/intake.
enum class EntryType { propose, run, changeset };
struct SpoolEntry {
  EntryType type = EntryType::propose;
  std::string cwd;  // the agent's working folder, relative to root ("" = root)
  nlohmann::json request;
};

// The entry as written: {"version": 1, "type", "cwd", "request"}.
std::string entry_text(const SpoolEntry& e);

// Strict reading of an entry's bytes: one JSON object, exactly the keys
// above, version 1, a known type ("propose", "run" or "changeset"), a cwd that is relative and never climbs
// out ("..") , a request object. usage error naming what is wrong.
Result<SpoolEntry> parse_entry(std::string_view text);

// Agent side: write `text` as a new entry and return its ticket. The bytes
// go to a hidden temp file created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW,
// mode 0644), then renamed to <ticket>.json without replacing anything, so
// intake never sees half an entry. usage when `text` is over `max` bytes;
// denied when the spool cannot be written (not the agent user, or no spool).
Result<std::string> write_entry(const std::filesystem::path& state, std::string_view text, size_t max, TimePoint now);

// Owner side: what a claimed entry holds, read as hostile input.
struct EntryRead {
  unsigned uid = 0;  // the entry's owner: who proposed, as the kernel says
  std::string bytes;
};
// Open <dir>/<name> with O_NOFOLLOW (a symlink is refused, never followed),
// then check it: a regular file with one link, not writable by others, no
// set-id bits, at most `max` bytes. denied naming the check that failed.
Result<EntryRead> read_claimed_entry(const std::filesystem::path& dir, const std::string& name, size_t max);

// What became of an entry, written by the owner for the agent to read.
struct TicketInfo {
  std::string ticket;
  int proposal = 0;            // 0 when none was staged
  long uid = -1;               // the entry's owner
  std::string proposer;        // that uid's user name
  std::string verdict;         // a run's verdict (blocked, ask, …), else empty
  bool quarantined = false;    // the entry was malformed and kept aside
  std::optional<Error> error;  // why nothing was staged
};
nlohmann::json to_json(const TicketInfo& t);
// tickets/<ticket>.json, atomically, mode 0640. Replace::no writes it only
// when there is none yet (a temp file linked into place), so that a ticket
// saying "being taken in" never overwrites what an intake already decided.
enum class Replace { yes, no };
Status write_ticket(const std::filesystem::path& state, const TicketInfo& t, Replace replace = Replace::yes);
// nullopt while intake has not taken the entry in; io for a malformed ticket.
Result<std::optional<TicketInfo>> read_ticket(const std::filesystem::path& state, const std::string& ticket);

// The copy of proposal `id`'s record the agent may read, written by the
// store on every save when status/ exists (mode 0640), without the approval
// digest, the payloads' digest and the seal, with "approval_timeout" (the
// owner's [approval] timeout, when above 0) so that the agent's side sees
// it expire; a run's captured output beside it (<id>.stdout, <id>.stderr).
// Errors are ignored by the caller: the store's own record is what counts.
// `folder` is the record's folder (staging/<id>/ or its place in the archive).
Status mirror_status(const std::filesystem::path& state, int id, const std::filesystem::path& folder,
                     std::string_view record, long approval_timeout = 0);
// Beside it, <id>.diff: the diff of a proposal the agent may see (lib/two_user/agent_side mirror_diff).
Status mirror_status_diff(const std::filesystem::path& state, int id, std::string_view diff);
// The mirrored records, for the agent's list/show/wait: the raw JSON text.
// not_found for an id with no copy.
Result<std::string> read_status(const std::filesystem::path& state, int id);
std::vector<int> status_ids(const std::filesystem::path& state);
// A run's captured "stdout" or "stderr" (or a proposal's "diff") as copied
// beside its status; empty when none.
std::string read_status_output(const std::filesystem::path& state, int id, const std::string& stream);

// Entries waiting in the spool (names of *.json files; hidden temp files
// are not entries yet).
std::vector<std::string> waiting_entries(const std::filesystem::path& state);

}  // namespace kai
