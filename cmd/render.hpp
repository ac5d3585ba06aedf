#pragma once
// How proposals, diffs and changelog entries look on the terminal and in
// --json. Shared by every command that shows them.

#include <chrono>
#include <optional>

#include <nlohmann/json.hpp>

#include "cmd/cli.hpp"
#include "lib/gate/apply.hpp"
#include "lib/certify/certify.hpp"
#include "lib/store/changelog.hpp"
#include "lib/diff/diff.hpp"
#include "lib/gate/envelope.hpp"
#include "lib/store/proposal.hpp"
#include "lib/gate/runs.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

void print_proposal_header(Session& s, const Proposal& p);
// `list`: the header line, then one row per proposal in stable columns:
// id, status (as shown: "expired*" for one past its timeout), kind, risk,
// tier, what it changes (a file, a command, or "3 files: a, b, …", cut to
// its column) and its summary.
void print_list_header();
void print_list_row(const Proposal& p, std::string_view status);
// The row print_list_row prints, made visible, not redacted yet: a long
// listing writes its rows at once (write_text redacts the whole text).
std::string list_row(const Proposal& p, std::string_view status);
void print_diff(Session& s, const Proposal& p, const FileDiff& d);
// A changeset's files, one line each: op, path, lines added and removed,
// and the verdicts on it (risk, tier, policy, validation).
void print_diffstat(Session& s, const Proposal& p);
void print_outcome(Session& s, const Proposal& p, const Outcome& o);

nlohmann::json proposal_json(const Proposal& p);
// The proposal's fields at the top level, as earlier releases printed
// them, and the same object under "proposal", where every command that
// returns a proposal puts it (SPEC §2).
nlohmann::json with_proposal(const Proposal& p);

// Live output of a command run on the approver's terminal (redacted).
void stream_output(std::string_view chunk, int fd);
void print_run_outcome(Session& s, const Proposal& p, const RunOutcome& o);
// The --json of a run that approve or apply executed: the proposal, "ran",
// the command's exit code and output, and its changelog entry.
nlohmann::json ran_json(const Proposal& p, const RunOutcome& o);
void print_run_header(Session& s, const Proposal& p);
// A run's effects, one line each with what becomes of it (lands, HELD,
// NEVER, CONFLICT), then the diff of its files, then `notes`. `only_held`:
// the held ones alone, as a person decides them.
void print_effects(Session& s, const Proposal& p, const Effects& fx, const std::string& diff,
                   const std::vector<std::string>& notes, bool only_held = false);
// The same in --json: {"effects": [...], "held", "dropped", "conflicts", "diff", "notes"}.
nlohmann::json effects_json(const Effects& fx, const std::string& diff, const std::vector<std::string>& notes);

// The line a proposer that is about to block prints first, on stderr:
// the id it can resume with (`kaicoder wait ID`) if it is killed.
void print_waiting(int id);
// Who decided `p`, when someone did: in the header with the time
// ("decided:  AT by WHO"), in a wait's summary who alone ("decided by:  WHO").
enum class DecidedLine { with_time, who_only };
void print_decided(const Proposal& p, DecidedLine form);
// A status copy past the owner's [approval] timeout, as the agent side
// shows it (kaicoder show and wait).
void print_expired_copy();
// The exit code a wait for `p` ends with: its outcome's once settled, 8
// (still pending) while it waits for a person or for its apply.
int wait_exit_code(const Proposal& p);
// Wait for proposal `id` (at most `within`, when given) and report what
// became of it: for propose --wait, run --wait and wait alike. stdout is
// one JSON object with --json (a run's captured output, "ran" once it
// ran). Returns the exit code (outcome_exit_code, or 8 while undecided).
int wait_and_report(Session& s, Workspace& ws, int id, std::optional<std::chrono::seconds> within = std::nullopt);

// Certification (verify, certify): one line per change of a certified path,
// with what it needs when it is not covered.
void print_change(const CertChange& c);
void print_certification(const Certification& c);
nlohmann::json certification_json(const Certification& c);

// Team mode: what a publish did (publish, propose --publish), and what a
// received decision did (wait, fetch).
void print_published(const team::Published& p);
void print_received(const team::Received& r);
// What this clone's signed decision on a remote proposal did (approve,
// reject): the JSON with `team_decision`, or its lines, and the exit code.
int report_team_decision(Session& s, const team::Decided& d, std::string_view verb);

// "diff" for proposals that still apply; an explanation otherwise.
Result<FileDiff> diff_for_display(Session& s, Workspace& ws, const Proposal& p, bool full);

}  // namespace kai::cmd
