#pragma once
// Two-user mode, the agent user's side (kaicoder-agent-user(1)): what a
// process of the agent user does instead of touching the store, for every
// door alike (the command line, `kaicoder mcp`, `kaicoder hook`). Requests
// go into the spool (lib/store/spool), and the answer comes back through tickets
// and the status copies, which the owner's processes write; the approval
// digest, the seal and the key never reach this side.
//
//   if (on_agent_side(ws)) {
//     auto ticket = spool_propose(ws, req, cwd);        // at once; intake stages it
//     auto w = wait_on_agent_side(ws, *ticket, 30s, {}); // ticket → proposal → outcome
//   }
//
// The owner's side keeps the status copies useful: mirror_diff leaves the
// diff of a proposal the agent may see beside its status copy.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/propose.hpp"
#include "lib/result.hpp"
#include "lib/gate/runs.hpp"
#include "lib/gate/status.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

// True when `ws` is seen by a process of the agent user: its store belongs
// to another uid and has a spool (as lib/two_user/agent_user find_agent_side judges
// a folder). Such a process proposes through the spool and reads status
// copies; it never stages, decides or applies.
bool on_agent_side(const Workspace& ws);

// `cwd` relative to root, as a spool entry carries it ("" for root itself);
// usage when it lies outside root.
Result<std::string> entry_cwd(const Workspace& ws, const std::filesystem::path& cwd);

// Write a request into the spool and return its ticket at once; the owner's
// intake stages it with the owner's rules and the entry's uid as proposer
// (the request's agent name is ignored there). Paths are relative to `cwd`
// (a patch's to the root). usage when the entry would be over the size
// intake reads; denied when the spool cannot be written.
Result<std::string> spool_propose(Workspace& ws, const ProposeRequest& r, const std::filesystem::path& cwd);
Result<std::string> spool_changeset(Workspace& ws, const ChangesetRequest& r, const std::filesystem::path& cwd);
// A run is judged here first with the built-in rules: a blocked command is
// denied at once and never spooled (the owner's intake judges it again).
Result<std::string> spool_run(Workspace& ws, const RunRequest& r, const std::filesystem::path& cwd);

// A proposal id written in digits, or a ticket resolved to the proposal it
// became (lib/two_user/intake proposal_of_ticket: not_found while it waits for
// intake, the ticket's error when nothing was staged). usage for anything
// else, and for a ticket where there is no spool.
Result<int> resolve_id(const Workspace& ws, const std::string& id_or_ticket);

// A proposal as its status copy says it is. `expired`: still pending past
// the owner's [approval] timeout (the copy carries it), which the owner's
// next command records; it can no longer be approved.
struct StatusCopy {
  Proposal proposal;
  bool expired = false;
};
// not_found for an id with no copy; io for a copy that is not a record.
Result<StatusCopy> read_status_copy(const Workspace& ws, int id);

// Every status copy (or those in state `status`, an expired one as
// "timeout"), pending first (oldest first), then the rest newest first, as
// list orders the owner's proposals. Copies that cannot be read are left out.
std::vector<StatusCopy> status_copies(const Workspace& ws, const std::string& status = {});

// The outcome as a waiter reports it: decided (or expired), else pending.
bool copy_done(const StatusCopy& c);

// What the agent side's wait found. `id` is 0 while the ticket waits for
// intake; `status` is set once the proposal has a copy.
struct AgentWaited {
  int id = 0;
  std::optional<StatusCopy> status;
};
// in_spool while the ticket waits for intake, no_status until the copy is
// written, then as the copy stands (an expired copy is settled).
Standing standing(const AgentWaited& w);
// Block until the ticket is taken in and its proposal decided or expired,
// or `within` passes (then as it is). Polls the tickets and status copies;
// `control` as wait_for_decision's (stop ends the wait as it is). Errors:
// the ticket's own (a refused or quarantined entry), usage for a bad id.
Result<AgentWaited> wait_on_agent_side(const Workspace& ws, const std::string& id_or_ticket,
                                       std::optional<std::chrono::seconds> within, const WaitControl& control = {});

// The diff the owner's side left beside the status copy of `id`, for the
// agent's show; nullopt when there is none (a proposal the agent did not
// make, a file it may not read, a run).
std::optional<std::string> read_status_diff(const Workspace& ws, int id);
// Of a changeset's diff text, the part of one file: the sections whose
// "diff --git" line names `path` on either side (a rename by either path).
std::string diff_of_file(std::string_view diff, const std::string& path);

// Owner side, when a proposal is staged in two-user mode: leave its diff
// beside its status copy (status/<id>.diff, 0640), redacted with the
// owner's redactor. Only for a proposal that came through the spool, and
// never when a file it touches is never-read or one the agent user cannot
// read now (the diff's context would show it). Errors are ignored by the
// caller: the agent's show then says there is no diff.
Status mirror_diff(const Workspace& ws, const Proposal& p, const FileDiff& d);

}  // namespace kai
