#include "lib/mcp/spooled.hpp"

#include <fmt/format.h>

#include "lib/two_user/agent_side.hpp"
#include "lib/gate/envelope.hpp"
#include "lib/gate/runs.hpp"
#include "lib/store/spool.hpp"

namespace kai::mcp {
namespace {

std::string call_next(const std::string& ticket) {
  return fmt::format(
      "two-user mode: nothing is written until the owner's kaicoder takes ticket {} in and a person approves it at the "
      "owner's terminal; call wait_for_decision with ticket \"{}\" to learn the proposal id and the outcome",
      ticket, ticket);
}

ToolOutcome waited_outcome(const Workspace& ws, const std::string& id_or_ticket, const Result<AgentWaited>& w) {
  if (!w) return tool_failure(w.error(), {{"ticket", id_or_ticket}});
  const Standing at = standing(*w);
  if (at == Standing::in_spool)
    return {{{"ok", true}, {"ticket", id_or_ticket}, {"decided", false}, {"next", call_next(id_or_ticket)}}, false};
  if (at == Standing::no_status)
    return {{{"ok", true},
             {"id", w->id},
             {"decided", false},
             {"next", fmt::format("proposal {} has no status yet; call wait_for_decision again", w->id)}},
            false};
  const StatusCopy& c = *w->status;
  const bool ran = c.proposal.kind == Kind::run && c.proposal.state == State::applied;
  CapturedOutput out;
  if (ran) {
    out.out = read_status_output(ws.store.dir(), c.proposal.id, "stdout");
    out.err = read_status_output(ws.store.dir(), c.proposal.id, "stderr");
  }
  ToolOutcome o = decided_outcome(c.proposal, c.expired, ran ? &out : nullptr);
  if (is_ticket(id_or_ticket)) o.structured["ticket"] = id_or_ticket;
  return o;
}

}  // namespace

ToolOutcome spooled_outcome(const Result<std::string>& ticket) {
  if (!ticket) return tool_failure(ticket.error());
  return {{{"ok", true}, {"ticket", *ticket}, {"spooled", true}, {"next", call_next(*ticket)}}, false};
}

ToolOutcome spooled_status(const Workspace& ws, const std::string& id_or_ticket) {
  return waited_outcome(ws, id_or_ticket, wait_on_agent_side(ws, id_or_ticket, std::chrono::seconds(0)));
}

ToolOutcome spooled_wait(const Workspace& ws, const std::string& id_or_ticket, long limit_s,
                         const WaitControl& control) {
  return waited_outcome(ws, id_or_ticket, wait_on_agent_side(ws, id_or_ticket, std::chrono::seconds(limit_s), control));
}

ToolOutcome spooled_list(const Workspace& ws, const std::string& status) {
  const std::vector<StatusCopy> rows = status_copies(ws, status);
  json arr = json::array();
  for (const auto& c : rows) {
    arr.push_back(proposal_object(c.proposal));
    if (c.expired) arr.back()["expired"] = true;
  }
  return {{{"ok", true},
           {"proposals", arr},
           {"corrupt", json::array()},
           {"spooled", waiting_entries(ws.store.dir()).size()}},
          false};
}

}  // namespace kai::mcp
