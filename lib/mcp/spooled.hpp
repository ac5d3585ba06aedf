#pragma once
// The MCP tools in a process of the agent user (two-user mode,
// kaicoder-agent-user(1)): the same tools and arguments, through the agent
// side's path (lib/two_user/agent_side). lib/mcp/tools routes to these when the
// workspace is seen from the agent's side: a mutating tool writes a spool
// entry and answers its ticket at once; proposal_status and
// wait_for_decision take that ticket (or the proposal id it became) and
// read tickets and status copies; list_proposals lists the status copies.
// read_file and list_dir stay the ordinary tools: they read as the agent
// user can.
//
//   if (on_agent_side(ws)) return spooled_outcome(spool_propose(ws, req, cwd));

#include <string>

#include "lib/gate/decide.hpp"
#include "lib/mcp/tools.hpp"

namespace kai::mcp {

// A spool_* result as the tool's answer: {"ok", "ticket", "spooled", "next"}.
ToolOutcome spooled_outcome(const Result<std::string>& ticket);

// proposal_status: where the ticket's (or id's) proposal stands now.
ToolOutcome spooled_status(const Workspace& ws, const std::string& id_or_ticket);
// wait_for_decision: wait at most `limit_s` for intake and a decision.
ToolOutcome spooled_wait(const Workspace& ws, const std::string& id_or_ticket, long limit_s,
                         const WaitControl& control);
// list_proposals: the status copies, pending first.
ToolOutcome spooled_list(const Workspace& ws, const std::string& status);

}  // namespace kai::mcp
