#pragma once
// Changesets (SPEC §2 propose --patch, §5, §6): many file operations under
// one proposal id, one decision, one apply, one changelog entry and one
// rollback id.
//
//   ChangesetRequest req;                        // a patch text, or ops
//   req.patch = text;  req.why = "…";
//   Result<Staged> st = propose_changeset(ws, req, cwd, DryRun::no, {});
//
// At propose every file's resulting bytes and mode are computed from the
// file as it is (a patch's hunks placed as `git apply` places them, never
// again later), and every guardrail, policy rule, confirm-tier rule, risk
// assessment and validation check is applied to every file: the strictest
// verdict is the changeset's, and one refused file refuses it whole, named.
// The digest binds every file's op, paths, base and result (lib/store/proposal).
// At apply every file must still be as it was at propose (bytes and mode),
// else the whole changeset is stale: nothing is written.
//
// propose_changeset is the one way in for every door (the command line,
// MCP tools, hook adapters).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/gate/apply.hpp"
#include "lib/diff/diff.hpp"
#include "lib/store/proposal.hpp"
#include "lib/gate/propose.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

// One file operation as an agent asks for it (--json-input "changes").
struct ChangeRequest {
  std::string op;  // edit write delete rename mode
  std::string path;
  std::string to;                                  // rename
  std::optional<std::string> target, replacement;  // edit
  bool replace_all = false;                        // edit: every occurrence
  std::optional<std::string> content;              // write (creates the file when it is missing)
  std::optional<unsigned> mode;                    // mode (and optionally write, rename): 0644 or 0755
};

struct ChangesetRequest {
  std::optional<std::string> patch;    // a unified diff or a `*** Begin Patch` envelope
  std::vector<ChangeRequest> changes;  // or these
  std::string why, agent, summary;
  long proposer_uid = -1;  // the spool entry's owner (lib/two_user/intake); -1: the owner's own process
};

// Whether a --json-input object asks for a changeset (it has "changes").
bool is_changeset_json(std::string_view text);

// Parse {"changes": [{"op", "path", "target", "replacement", "replace_all",
// "content" | "content_base64", "to", "mode"}, …], "why", "agent",
// "summary"}. usage naming the change (by its index) and the bad field.
Result<ChangesetRequest> changeset_from_json(std::string_view text);

// Stage a changeset. Paths of `req.changes` are relative to `cwd` (or the
// root); a patch's are relative to the root. Errors: usage for a malformed
// request or patch, a binary patch, a change that changes nothing; denied
// for a symlink or submodule in a patch, a guardrail, a protected path
// whose change is not a surgical edit, a policy deny (naming the file);
// conflict for a patch that does not apply (naming file and hunk), an edit
// target not found (or found more than once without replace_all), a file
// touched twice, a create of a file that exists. Takes the store lock
// itself (not on a dry run). Staged::diff holds every file's diff.
Result<Staged> propose_changeset(Workspace& ws, const ChangesetRequest& req, const std::filesystem::path& cwd,
                                 DryRun dry, const DiffOptions& opts);

// The diff of changeset `p`, file after file, against the files as they are
// now. conflict when a file is no longer what it was at propose (the
// changeset can never apply). The cut of a long diff (opts) counts changed
// lines over all files together; FileDiff::parts says which file each
// stretch of the text is and how much of that file is shown. `only`, when
// set, keeps one file (its path, or for a rename either path): not_found
// when it is not in `p`.
Result<FileDiff> changeset_diff(Workspace& ws, const Proposal& p, const DiffOptions& opts,
                                const std::optional<std::string>& only = std::nullopt);

// The diff of `changes` from `befores` (one each; nullopt: the file is
// absent), with one budget of changed lines for all, as changeset_diff
// shows it: for a door that holds the bytes it compares, not the tree (a
// team proposal's commit against its base, lib/team).
Result<FileDiff> changes_diff(const std::vector<Change>& changes,
                              const std::vector<std::optional<std::string>>& befores, const DiffOptions& opts);

// Apply approved changeset `p` (apply_proposal calls it after its checks):
// every file is checked against its base first, then all are written in
// one transaction (lib/gate/txn, batched durability). A folder the changeset
// leaves empty is removed afterwards, as git apply does; one that holds
// the backup of a file it removed stays, since a backup sits beside its
// file (SPEC §5), and a rollback restores the file into it (a removed
// folder is made again). Folders made for new files are recorded, so an
// interrupted apply removes them, and a rollback does when they are empty.
// `forced`: its failed validation was overridden (the entry says so).
Result<Outcome> apply_changeset_proposal(Workspace& ws, Proposal& p, const std::string& approver, bool forced);

}  // namespace kai
