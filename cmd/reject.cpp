// kaicoder reject: turn a proposal down. Logs a `rejected` entry; writes
// nothing in the tree.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/render.hpp"
#include "lib/gate/gate.hpp"

namespace kai::cmd {

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
