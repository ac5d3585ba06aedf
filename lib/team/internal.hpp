#pragma once
// What the parts of lib/team share: the records of team proposals in the
// store, the ref names, and the one check every decision passes before it
// counts (lib/team/receive, fetch, deciding). Private to lib/team.

#include <optional>
#include <string>

#include "lib/certify/decision.hpp"
#include "lib/certify/manifest.hpp"
#include "lib/config/workspace.hpp"
#include "lib/result.hpp"
#include "lib/store/proposal.hpp"
#include "lib/team/team.hpp"

struct git_repository;

namespace kai::team {

// ssh-keygen with the caller's ssh-agent (SSH_AUTH_SOCK), nothing else of the environment.
SshTool ssh_tool(const Workspace& ws);

// [limits] content in bytes: the most of one file kaicoder reads from a fetched object.
size_t content_max(const Workspace& ws);

// The record of remote proposal <origin>/<remote_id> in this store, if any.
std::optional<Proposal> find_remote_record(const Workspace& ws, const std::string& origin, int remote_id);

// refs/kaicoder/<kind>/<origin>/<id> and its kin under refs/kaicoder/remote/.
std::string ref_name(const std::string& kind, const std::string& origin, int id);
std::string remote_ref_name(const std::string& kind, const std::string& origin, int id);
std::string incoming_ref_name(const std::string& kind, const std::string& origin, int id);

// A decision that counts: its object reads as one, it decides on
// `proposal` (its parent and its text), names `origin` and `remote_id`,
// and is signed in the decision namespace by an allowed signer of `base`
// (its kaicoder.toml's [certify] allowed_signers, read from `base`).
// denied: another origin or id (replayed), no allowed signer, a bad
// signature; conflict: not a decision object, another proposal commit or
// base.
struct Verified {
  DecisionObject object;
  std::string signer;
};
Result<Verified> verify_decision(const Workspace& ws, git_repository* repo, const std::string& decision,
                                 const std::string& origin, int remote_id, const std::string& proposal,
                                 const std::string& base);

// Carry out decision commit `decision` on our published proposal `id`
// (receive() and fetch() both): verify it, then approve-and-apply or
// reject through lib/gate/decide as `<signer> (team)`. A refusal is logged
// once per decision commit (a `blocked` entry) and returned. nullopt when
// the proposal is no longer pending.
Result<std::optional<Received>> carry_out(Workspace& ws, git_repository* repo, int id, const std::string& decision);

}  // namespace kai::team
