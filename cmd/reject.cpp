// kaicoder reject: turn a proposal down. Logs a `rejected` entry; writes
// nothing in the tree.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/render.hpp"
#include "lib/gate/gate.hpp"
#include "lib/util/strings.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

namespace {

// A team proposal of another clone: the rejection is a signed decision
// pushed to the team remote.
int reject_team(Session& s, Workspace& ws, int id, const std::string& reason) {
  const gate::Decider who{s.user(), gate::Channel::terminal};
  auto rv = team::prepare_decision(ws, id, who, DiffOptions{});
  if (!rv) return report(s, rv.error());
  const Proposal& p = rv->proposal;
  auto yes = ask_on_terminal(
      fmt::format("Reject team proposal {} of clone {} ({})?", p.id, p.team.origin, count_of(p.changes.size(), "file")),
      Tier::normal);
  if (!yes) return report(s, yes.error());
  if (!*yes) {
    const Error no = make_error(Errc::rejected, fmt::format("not rejected; proposal {} is unchanged", p.id));
    if (s.json()) return emit(s, {{"rejected", false}, {"id", p.id}}, exit_code(no.code), no);
    return report(s, no);
  }
  team::DecisionRequest req{id, who, false, terminal_answer(Tier::normal), rv->digest, rv->diff_cut, reason};
  auto r = team::decide(ws, req);
  if (!r) return report(s, r.error());
  return report_team_decision(s, *r, "rejected");
}

}  // namespace

RunFn setup_reject(CLI::App& sub) {
  struct Args {
    std::string id, reason;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("id", a->id, "proposal to reject")->required();
  sub.add_option("--reason", a->reason, "why, for the agent and the changelog");
  return [a](Session& s) {
    auto id = read_proposal_id(a->id);
    if (!id) return report(s, id.error());
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (auto peek = (*ws)->store.load(*id, Store::Payloads::none); peek && peek->team.remote())
      return reject_team(s, **ws, *id, a->reason);
    const gate::Decider who{s.user(), gate::Channel::terminal};
    auto p = gate::prepare_reject(**ws, *id, who);
    if (!p) return report(s, p.error());
    auto yes =
        ask_on_terminal(fmt::format("Reject proposal {} ({} {})?", p->id, to_string(p->kind), p->path), Tier::normal);
    if (!yes) return report(s, yes.error());
    if (!*yes) {
      const Error no = make_error(Errc::rejected, fmt::format("not rejected; proposal {} is unchanged", p->id));
      if (s.json()) return emit(s, {{"rejected", false}, {"id", p->id}}, exit_code(no.code), no);
      return report(s, no);
    }
    gate::Request req;
    req.id = *id;
    req.who = who;
    req.answer = terminal_answer(Tier::normal);
    auto r = gate::reject(**ws, req, a->reason);
    if (!r) return report(s, r.error());
    if (s.json())
      emit(s, with_proposal(*r));
    else
      out("rejected proposal {}; nothing was written\n", r->id);
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
