#pragma once
// The git objects of team mode (kaicoder-team(7)), made and read with
// libgit2 in the root's repository: a proposal as a commit on its base, a
// decision as a commit on the proposal, the refs that name them under
// refs/kaicoder/, and the fast-forward of the branch once a proposal is
// applied. No hook, no config-driven program runs here; only the transport
// is the git program's (lib/team/git_cli).
//
// A proposal commit: parent = the base commit (HEAD when it was
// published), tree = the base's tree with the proposal's result, message =
// a subject, the why, and the trailers
//
//   Kaicoder-Proposal: <origin>/<id>
//   Kaicoder-Kind: edit | write | delete | changeset
//   Kaicoder-Agent: …
//   Kaicoder-Summary: …
//   Kaicoder-Why: …             (on one line)
//   Kaicoder-Tier: normal | confirm
//   Kaicoder-Expires: <ISO UTC>

#include <optional>
#include <string>
#include <vector>

#include "lib/certify/decision.hpp"
#include "lib/config/workspace.hpp"
#include "lib/result.hpp"
#include "lib/store/proposal.hpp"
#include "lib/util/git_tree.hpp"
#include "lib/util/time.hpp"

namespace kai::team {

inline constexpr std::string_view k_refs = "refs/kaicoder/";
inline constexpr std::string_view k_remote_refs = "refs/kaicoder/remote/";
inline constexpr std::string_view k_incoming_refs = "refs/kaicoder/incoming/";

// The root's repository. usage when the root is not in a git work tree.
Result<RepoPtr> open_repo(const Workspace& ws);

// Who the commits are by: git's user.name and user.email (as git reads
// them, lib/certify/signing_key), else "kaicoder".
struct Identity {
  std::string name, email;
};
Identity git_identity(const Workspace& ws);

// HEAD's commit id; usage when there is none (an unborn branch).
Result<std::string> head_commit(git_repository* repo);

// What a proposal commit says of itself.
struct ProposalInfo {
  std::string origin;
  int id = 0;
  std::string kind, agent, summary, why, tier, expires;
  std::string commit, base;  // the commit and its parent
  std::string created;       // its committer time, ISO UTC
};

// The commit of pending proposal `p` (edit, write, delete, changeset) on
// HEAD, published as <origin>/<p.id>: its files must be at HEAD as the
// proposal found them (conflict naming the first that is not: "commit
// first"); the tree is HEAD's with the proposal's result. Writes objects
// only (no ref).
Result<ProposalInfo> make_proposal_commit(const Workspace& ws, git_repository* repo, const Proposal& p,
                                          const std::string& origin, const std::string& expires, TimePoint now);

// A fetched proposal commit read strictly: at most 256 KiB of commit, one
// parent, trailers that name `named` (the ref it came under), and changes
// of regular files only, with safe paths, each at most `max_bytes`.
// Errc::conflict saying what is wrong; io when libgit2 fails.
struct RemoteProposal {
  ProposalInfo info;
  std::vector<Change> changes;  // op, path, base and result (bytes and mode)
};
Result<RemoteProposal> read_proposal_commit(git_repository* repo, const std::string& commit, const TeamRef& named,
                                            size_t max_bytes);

// The bytes each change started from, read from `base` (nullopt: absent);
// a file there over `max` bytes ([limits] content) is refused by its size
// before it is read (the base may have come from the remote with the proposal).
Result<std::vector<std::optional<std::string>>> base_bytes(git_repository* repo, const std::string& base,
                                                           const std::vector<Change>& changes, size_t max);

// A decision commit on `proposal` holding the decision text and its
// signature (lib/certify/decision). Writes objects only.
Result<std::string> make_decision_commit(git_repository* repo, const std::string& proposal, const std::string& text,
                                         const std::string& sig, const Identity& who, TimePoint now,
                                         const std::string& message);

// Refs under refs/kaicoder/ only (usage for any other name).
Status set_ref(git_repository* repo, const std::string& name, const std::string& id, const std::string& log);
Status delete_ref(git_repository* repo, const std::string& name);
std::optional<std::string> ref_target(git_repository* repo, const std::string& name);
// Every ref whose name starts with `prefix` (under refs/kaicoder/): name → id.
std::vector<std::pair<std::string, std::string>> refs_under(git_repository* repo, const std::string& prefix);

// Whether `commit` is HEAD or one of its ancestors.
bool in_history(git_repository* repo, const std::string& commit);

// After published proposal `p` was applied: when the branch (or a detached
// HEAD) still points at its base, the work tree holds the proposal
// commit's result for every file it changes and the index holds the base's
// entries for them, move the index entries and then the branch to the
// proposal commit (compare-and-swap on the base). Otherwise nothing moves
// and `note` says why.
struct Forwarded {
  bool moved = false;
  std::string branch;  // what moved: "refs/heads/main", or "HEAD"
  std::string note;    // why nothing moved
};
Forwarded fast_forward(const Workspace& ws, git_repository* repo, const Proposal& p);

}  // namespace kai::team
