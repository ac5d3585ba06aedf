#pragma once
// Team decisions (kaicoder-team(7)): a person's signed answer to a proposal
// another clone published as a commit. The decision is a commit whose only
// parent is the proposal commit and whose tree holds exactly two files:
//
//   decision.toml       the text below
//   decision.toml.sig   its SSH signature, ssh-keygen -Y sign -n kaicoder-decision
//
//   version = 1
//   decision = "approve"        # or "reject"
//   proposal = "<commit>"       # the proposal commit decided on
//   base = "<commit>"           # its parent
//   origin = "<12 hex>"         # the clone that proposed it
//   id = 7                      # its proposal id there
//   decider = "alice"           # the OS user who answered
//   time = "2026-07-09T14:25:30Z"
//   tier = "normal"             # or "confirm": the person typed CONFIRM
//   reason = "…"                # a rejection's reason, optional
//
// Refs: refs/kaicoder/proposals/<origin>/<id> and
// refs/kaicoder/decisions/<origin>/<id> on the team remote; a fetch keeps
// them under refs/kaicoder/remote/. lib/team writes and checks decisions;
// lib/certify (verify) counts an approving one as the manifest of the
// results its proposal commit makes.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/certify/manifest.hpp"
#include "lib/result.hpp"

struct git_repository;
struct git_commit;
struct git_oid;

namespace kai {

inline constexpr std::string_view k_decision_file = "decision.toml";
inline constexpr std::string_view k_decision_sig = "decision.toml.sig";
// No decision text or signature is larger; a bigger object is refused unread.
inline constexpr size_t k_decision_max_bytes = 16 * 1024;

struct TeamDecision {
  std::string verdict;   // approve | reject
  std::string proposal;  // the proposal commit
  std::string base;      // its parent
  std::string origin;    // the proposing clone
  int id = 0;            // the proposal's id there
  std::string decider;   // the OS user who answered
  std::string time;      // ISO UTC
  std::string tier;      // normal | confirm
  std::string reason;    // reject only; may be empty
};

// The text that is signed, parse_decision reads back.
std::string format_decision(const TeamDecision& d);
// Strict: a TOML error, an unknown or missing key, a malformed value is
// Errc::usage naming `origin_for_messages`.
Result<TeamDecision> parse_decision(std::string_view text, const std::string& origin_for_messages);

// A clone's origin name: 12 lowercase hex digits.
bool valid_origin(std::string_view s);
// A proposal id as a ref names it: decimal, no sign, no leading zero, 1..INT_MAX.
std::optional<int> ref_id(std::string_view s);

// One ref of team mode, from what follows "refs/kaicoder/" (or
// "refs/kaicoder/remote/"): "proposals/<origin>/<id>" or
// "decisions/<origin>/<id>"; nullopt for any other name.
struct TeamRef {
  std::string kind;  // proposals | decisions
  std::string origin;
  int id = 0;
};
std::optional<TeamRef> parse_team_ref(std::string_view rest);
std::string team_ref_name(std::string_view prefix, const TeamRef& r);  // prefix + kind/origin/id

// A decision commit read from a repository, strictly: one parent, a tree of
// exactly the two files (regular, at most k_decision_max_bytes each), a
// text that parses. Errc::conflict saying what is wrong; Errc::io when
// libgit2 cannot read it.
struct DecisionObject {
  std::string commit, parent;
  std::string text, sig;
  TeamDecision decision;
};
Result<DecisionObject> read_decision_commit(git_repository* repo, const git_oid& id);

// The results commit `c` makes against its first parent: every path it
// adds, changes or removes, as a manifest would bind it (no rename
// detection: a rename is a delete and an add). Errc::usage for a commit
// without a parent; io when libgit2 fails.
Result<std::vector<Binding>> commit_bindings(git_repository* repo, git_commit* c);

}  // namespace kai
