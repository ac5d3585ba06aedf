#pragma once
// A proposal: one staged change and everything decided about it. Payloads
// (target, replacement, content) are raw bytes, never re-encoded.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/store/grade.hpp"
#include "lib/store/mac.hpp"
#include "lib/result.hpp"

namespace kai {

enum class Kind { edit, write, del, run, changeset };
// held: a run's sensitive effects wait for a person (lib/gate/run_effects),
// as a pending proposal does.
enum class State { pending, approved, applied, rejected, timeout, failed, rolled_back, held };
// Through which door a decision came: stored with the decision. `team`: a
// signed decision of another clone's person, received through the team
// remote (lib/team).
enum class Channel { terminal, web, spool, team };

std::string_view to_string(Kind k);   // edit write delete run changeset
std::string_view to_string(State s);  // pending … rolled-back, held
std::optional<Kind> parse_kind(std::string_view s);
std::optional<State> parse_state(std::string_view s);
std::string_view to_string(Channel c);  // terminal web spool team
std::optional<Channel> parse_channel(std::string_view s);
std::string_view action_name(Kind k);  // edit_file write_file delete_file run_shell apply_changeset

// Proposal ids (SPEC §11) are decimal numbers written in digits only: no
// sign, space, leading zero, exponent or other base, at most nine digits.
// This is the one parser every command and door reads an id with, so
// "010", "0x8", "+8", " 8" and "1e3" name no proposal anywhere.
constexpr int k_max_proposal_id = 999'999'999;
std::optional<int> parse_proposal_id(std::string_view text);
// The same, with the one message for a malformed id: Errc::usage naming
// the text and the valid form.
Result<int> read_proposal_id(std::string_view text);

struct Base {  // the file as it was at propose time
  bool exists = false;
  std::string blob;  // blob id when exists
  unsigned mode = 0644;
};

// One [validate] command run against the proposed content (lib/run/validate).
struct ValidationCheck {
  std::string pattern, command;  // the [validate] glob and its command as configured
  std::string status;            // ok | failed | not-run
  int exit_code = 0;
  bool timed_out = false;
  std::string output;  // stdout then stderr, capped, redacted, made visible; or why it did not run
};

// The validation result: "none" (nothing matched, a delete, or an old
// record), "ok" (every check that ran passed), "failed" (one did), or
// "not-run" (checks matched but none could run).
struct Validation {
  std::string status = "none";
  std::vector<ValidationCheck> checks;
};

// What the advisory [hooks] review command said. Its text is untrusted: it is
// stored and shown, and nothing in it changes the proposal.
struct Review {
  std::string status = "none";  // none | ok | failed | timeout
  int exit_code = 0;
  std::string text;  // its stdout, capped, redacted, made visible
};

// One file of a changeset proposal (lib/gate/changeset.hpp), as staged: what
// the file was at propose time, the bytes and mode it ends with, and the
// verdicts on it. `after` is a payload (raw bytes); the rest is metadata.
struct Change {
  std::string op;            // edit write create delete rename mode
  std::string path;          // root-relative: the file as it is (the one created, for create)
  std::string to;            // rename: the new path, which gets `after`
  Base base;                 // `path` at propose time (exists false for create)
  bool after_exists = true;  // false for delete and for the old path of a rename
  unsigned after_mode = 0644;
  std::string after;              // the resulting bytes
  size_t added = 0, removed = 0;  // lines, for the diffstat
  bool binary = false;
  Risk risk = Risk::low;
  std::string risk_reason;
  Tier tier = Tier::normal;
  std::string tier_reason;
  Decision decision = Decision::ask;
  std::string decision_rule;
  std::string validation = "none";  // this file's validation status
  // The path that holds the result: `to` for a rename, else `path`.
  const std::string& target() const { return op == "rename" ? to : path; }
};

// Team mode (lib/team): a proposal published as a commit on the team
// remote, or one fetched from another clone. Empty `role` for any other.
struct TeamLink {
  std::string role;      // "published": this clone proposed it; "remote": fetched from another clone
  std::string origin;    // the proposing clone's origin name (12 hex digits)
  int remote_id = 0;     // its id in the proposing clone's store
  std::string commit;    // the proposal commit
  std::string base;      // its parent: the base commit it was made against
  std::string kind;      // remote: its kind at its origin (edit, write, delete, changeset)
  std::string expires;   // ISO UTC: its origin's [approval] timeout ends then
  bool pushed = false;   // published: the proposal reached the remote; remote: our decision did
  std::string decision;  // the decision commit that settled it, when one did
  std::string signer;    // the allowed signer who signed that decision
  bool remote() const { return role == "remote"; }
  bool published() const { return role == "published"; }
};

struct Proposal {
  int id = 0;
  Kind kind = Kind::edit;
  State state = State::pending;
  std::string path;  // root-relative
  std::string why, agent, summary;
  // Who proposed it as the kernel says: the uid that owned the spool entry
  // it came from (two-user mode, lib/two_user/intake); -1 for a proposal made in the
  // owner's own process. `agent` then holds that uid's user name.
  long proposer_uid = -1;
  std::string created;  // ISO UTC
  Base base;
  // payloads (files in the staging folder)
  std::string target, replacement, content;
  // edit --replace-all: every occurrence of target is replaced, and there
  // were `occurrences` of them at propose time (apply refuses another count).
  bool replace_all = false;
  size_t occurrences = 0;
  // changeset proposals: every file it changes, in order; `path` is the first.
  std::vector<Change> changes;
  // run proposals
  std::vector<std::string> argv;
  std::string shell, cwd;
  long timeout = 0;      // seconds asked for; 0 = [run] timeout
  bool network = false;  // asked for network access (run --network): confirm tier
  // the decision
  std::string decided_by, decided_at, approved_digest, reason;
  Channel channel = Channel::terminal;  // the door decided_by decided through
  // the outcome
  std::string rollback_id, backup, result;
  int outcome_code = 0;  // exit code a --wait-ing proposer reports
  // A run's effects (lib/gate/run_effects): the digest of effects.json in
  // its staging folder, and since when its sensitive ones are held (state
  // held; approval.timeout counts from here).
  std::string effects_digest, held_since;
  Risk risk = Risk::low;
  std::string risk_reason;
  Tier tier = Tier::normal;  // confirm: the approver types CONFIRM
  std::string tier_reason;
  Decision decision = Decision::ask;  // what the policy said at propose time
  std::string decision_rule;
  Validation validation;
  Review review;
  TeamLink team;  // team mode only
  // Not stored: whether the record's seal verified when it was loaded
  // (lib/store), or ok once it was written sealed.
  SealCheck sealed = SealCheck::missing;
  // Not stored: the record verified but its payload files no longer match it.
  bool payload_changed = false;
  // Not stored: the payload digest the record was sealed with, and whether
  // the payloads were read (Store::Payloads::all) or only found to be there;
  // a record saved without its payloads keeps the digest it had.
  std::string sealed_payload_digest;
  bool payloads_loaded = true;
};

// The digest an approval binds to: kind, path, target, replacement, content,
// command, cwd, timeout and a network request, a replace-all and its count,
// and for a changeset every file's op, paths, base (existence, blob id,
// mode) and result (existence, blob id, mode), hashed as a git blob of a
// length-prefixed serialisation. The last one computed is kept with its
// input as bytes (the results themselves, not their ids): the same
// proposal digested again compares bytes instead of hashing them.
std::string digest(const Proposal& p);
// digest(p) of a record as Store::load read it: the sealed payload digest,
// which the load already compared with digest(p) (payload_changed), when
// the seal verified and the payloads were read and match; digest(p)
// otherwise. Only for a proposal whose payload fields are as loaded.
std::string loaded_digest(const Proposal& p);

// How a changeset's diffstat names change `c`: its path, or "old → new"
// for a rename; and its verdicts there: "risk low · ask", then "confirm",
// "validate failed" and "mode 644 → 755" when they apply. Every door's
// diffstat says the same words.
std::string change_name(const Change& c);
std::string change_verdicts(const Change& c);

// Metadata (everything but the payloads) to/from JSON.
nlohmann::json to_json(const Proposal& p);
// The proposal object of kaicoder(1): to_json(p), plus argv, shell and
// command for a run.
nlohmann::json proposal_object(const Proposal& p);
// A run's command as a person reads it.
std::string command_text(const Proposal& p);
nlohmann::json to_json(const Validation& v);
nlohmann::json to_json(const Review& r);
Result<Proposal> from_json(const nlohmann::json& j);

}  // namespace kai
