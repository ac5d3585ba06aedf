#pragma once
// "Always allow this" (SPEC §4): at a terminal approval the person may
// answer `a`; kaicoder then writes the narrowest allow rule that would have
// let the proposal through without a prompt into the root's kaicoder.toml,
// trusts the root again with it, and approves.
//
//   auto rule = always_rule(ws, p, need.tier, ApplyNow::yes);  // nullopt: not offered
//   show rule->words() and rule->toml(); the person answers a
//   auto added = add_allow_rule(ws, *rule, who, p.id);        // written, logged, trusted
//   gate::approve(...)                                         // then approved as for y
//
// The rule for a file proposal names its one path (an anchored, escaped
// glob); for a run its whole command (`exact = true`) and, when the
// command runs files of the tree (lib/run/tree_scripts), those files with
// their blob ids (`files`), so it stops matching once one of them changes.
// Never offered for the confirm tier, protected paths, changesets, a
// command not fully understood or asking for the network, propose-only, an
// approval that does not apply now, or where a deny or ask rule would
// still win over the new allow rule.

#include <optional>
#include <string>

#include "lib/config/config.hpp"
#include "lib/gate/decide.hpp"
#include "lib/store/grade.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai::gate {

struct AllowRule {
  std::string action;   // edit write delete run
  std::string path;     // file actions: the glob naming exactly the proposal's file
  std::string command;  // run: the whole command as kaicoder shows it
  FileBlobs files;      // run: the tree's files it runs, with their blob ids

  // The [[policy.rule]] table as it is appended to kaicoder.toml, with a
  // comment line saying where it came from (`note`).
  std::string toml(const std::string& note) const;
  // One line for the person: run "cargo test" / edit docs/a.md, and the
  // files it is bound to.
  std::string words() const;
};

// The rule to offer for pending proposal `p`, which takes tier `need` now
// and would be applied now or not (`now`); nullopt when none is offered.
std::optional<AllowRule> always_rule(const Workspace& ws, const Proposal& p, Tier need, ApplyNow now);

// Append `rule` (offered for proposal `p`) to the root's kaicoder.toml as
// one of kaicoder's own transactions under the store lock (a backup beside
// it, a journal record of kind "config", a changelog entry naming the
// proposal and `who`), then trust the root with the new bytes. denied: `who`
// may not decide `p`; conflict: `p` is no longer pending, or kaicoder.toml
// changed since it was trusted (nothing written); usage: the file would
// not load with the rule. Returns the entry's rollback id.
Result<std::string> add_allow_rule(Workspace& ws, const AllowRule& rule, const Decider& who, const Proposal& p);

// Trust the root with its kaicoder.toml as it is now, in the owner's list
// (after kaicoder itself wrote the file, or put it back).
Status retrust_root(const Workspace& ws);

}  // namespace kai::gate
