#pragma once
// Staging a file change (SPEC §2 propose): validate the request, confine the
// path, compute the diff, ask the policy, and store it — or, for an `allow`,
// apply it at once with backup and changelog entry.

#include <filesystem>
#include <optional>
#include <string>

#include "lib/gate/apply.hpp"
#include "lib/diff/diff.hpp"
#include "lib/config/policy.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

struct ProposeRequest {
  std::string path;
  std::optional<std::string> target, replacement, content;
  bool del = false;
  bool replace_all = false;  // an edit replaces every occurrence of target (at least one)
  std::string why, agent, summary;
  long proposer_uid = -1;  // the spool entry's owner (lib/two_user/intake); -1: the owner's own process
};

// Parse the --json-input object {"path","target","replacement","content",
// "delete","replace_all","why","agent","summary"}. usage error naming the bad field.
Result<ProposeRequest> request_from_json(std::string_view text);

enum class DryRun { no, yes };

struct Staged {
  Proposal proposal;               // id 0 on a dry run
  FileDiff diff;                   // a changeset: every file's diff, one after the other
  std::optional<Outcome> applied;  // set when the policy allowed it
  bool existing = false;           // a retry: `proposal` is the pending one it repeats, nothing new was staged
};

// usage: malformed request; denied: guardrail or policy deny; conflict:
// edit target not found / not unique, nothing to delete. Takes the store
// lock itself (not on a dry run). The request is taken by value: a caller
// that moves it in hands its content over without a copy.
Result<Staged> propose(Workspace& ws, ProposeRequest req, const std::filesystem::path& cwd, DryRun dry,
                       const DiffOptions& diff_opts);

// The proposal's diff against the file as it is now (or as it was proposed,
// when it no longer applies). A changeset: the diffs of all its files
// (lib/gate/changeset.hpp changeset_diff).
Result<FileDiff> current_diff(Workspace& ws, const Proposal& p, const DiffOptions& opts);

// Store `out.proposal` under the lock (a pending retry of the same request
// returns that one instead, `existing` set) and, when the policy verdict
// `v` allows it in normal mode, apply it at once. For propose and
// propose_changeset alike.
Status stage(Workspace& ws, Staged& out, const Verdict& v);

// The text `target` occurs in `current`, counted as replace-all replaces it
// (left to right, never overlapping), and the bytes with every one replaced.
struct ReplacedAll {
  std::string bytes;
  size_t count = 0;
};
ReplacedAll replace_every(std::string_view current, std::string_view target, std::string_view replacement);

}  // namespace kai
