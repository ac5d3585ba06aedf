#pragma once
// The review page's views: what lib/gate and the store return, as HTML.
// Pure rendering: no store access, no decision. Every agent-written value
// goes through html.hpp's shown() after the workspace's redaction, as
// everything printed on the terminal goes through cmd/output.

#include <optional>
#include <string>
#include <vector>

#include "lib/store/changelog.hpp"
#include "lib/gate/always_allow.hpp"
#include "lib/gate/gate.hpp"
#include "lib/gate/runs.hpp"
#include "lib/web/session.hpp"

namespace kai::web {

// One row of the list: the proposal, and whether it is past its timeout
// without that being recorded yet.
struct Row {
  Proposal proposal;
  bool expired = false;
};

std::string list_main(const Workspace& ws, const std::vector<Row>& rows,
                      const std::vector<std::pair<int, std::string>>& corrupt);

// What the proposal page knows about one proposal.
struct ProposalView {
  Proposal proposal;                           // as loaded (review: as prepared)
  std::optional<gate::ApprovalReview> review;  // pending and decidable: the forms are shown
  bool record_only = false;                    // propose-only mode: the review was prepared for approving only
  std::optional<Error> cannot_decide;          // why there are no forms (not an approver, …)
  std::optional<FileDiff> diff;                // a decided edit's diff when one can be made
  std::string diff_note;                       // why there is no diff
  CapturedOutput output;                       // a run's captured output
  bool expired = false;
  std::optional<gate::AllowRule> always;  // "always allow this": the rule the terminal's `a` offers
  // A team proposal of another clone (proposal.team.remote()): `review` was
  // prepared by lib/team (its digest is the proposal commit), the forms
  // sign a decision; `team_note` says when its base is not in this history.
  std::string team_note;
};
std::string proposal_main(const Workspace& ws, const Guard& g, const ProposalView& v);

// The changelog, newest first, a Roll back button on each reversible entry.
std::string log_main(const Workspace& ws, const Guard& g, const std::vector<Entry>& entries);

// What a rollback would restore, and the form that does it.
std::string rollback_main(const Workspace& ws, const Guard& g, const gate::RollbackReview& r);

// The outcome of a transition: a heading, lines of kaicoder's own text,
// and where to go next.
std::string outcome_main(std::string_view heading, const std::vector<std::string>& lines, std::string_view back_href,
                         std::string_view back_text);

// What an approval form's CSRF token is bound to: its action, the digest
// it shows and whether its diff was cut, so that a page cannot be made to
// post another digest or pretend it showed the whole diff.
std::string approve_binding(std::string_view action, std::string_view digest, std::string_view cut);

// Never approve unseen. A changeset's diff of at most k_open_diff_lines
// lines (about two screens of the page) is shown with every file open.
// A longer one, or one cut for display, shows each file closed, and an
// approval of it takes each file opened — the form's "opened" field lists
// the parts the page saw opened, filled in by its script — or CONFIRM
// typed out, as the terminal asks for a diff it cut. The page disables
// its approve buttons until then; App::approve refuses a post without it.
constexpr size_t k_open_diff_lines = 80;
bool files_must_be_opened(const Proposal& p, const FileDiff& d);
// Whether `opened` ("0,2,1": part numbers, any order) names every part of `d`.
bool opened_every_file(const FileDiff& d, std::string_view opened);

// What the "always allow" form's "rule" field carries, under the CSRF
// key: the rule it showed, so that only that rule is ever written.
std::string always_binding(std::string_view action, const gate::AllowRule& rule);

// "4m 10s", "2h 5m": a duration for people.
std::string human_duration(long seconds);

}  // namespace kai::web
