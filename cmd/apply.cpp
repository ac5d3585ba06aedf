// kaicoder apply: apply an approved proposal (after --no-apply or a failed
// apply), re-checking every guardrail, the approval digest and the base;
// --force applies one whose validation failed.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/render.hpp"
#include "lib/gate/gate.hpp"

namespace kai::cmd {

RunFn setup_apply(CLI::App& sub) {
  auto id = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  sub.add_option("id", *id, "approved proposal to apply")->required();
  sub.add_flag("--force", *force, "apply even though its validation failed");
  return [id, force](Session& s) {
    auto n = read_proposal_id(*id);
    if (!n) return report(s, n.error());
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    gate::Request req;
    req.id = *n;
    req.who = {s.user(), gate::Channel::terminal};
    req.opts.force = *force ? Force::yes : Force::no;
    auto r = gate::apply(**ws, req, s.json() ? gate::OnOutput{} : stream_output);
    if (!r) return report(s, r.error());
    if (r->ran) {
      if (!s.json()) print_run_outcome(s, r->proposal, *r->ran);
      // At a terminal what needs CONFIRM is asked right after the output;
      // without one it stays held for kaicoder approve.
      auto now = (*ws)->store.load(*n);
      HeldAnswer held = now ? settle_held_at_terminal(s, **ws, *now) : HeldAnswer{};
      if (s.json()) {
        nlohmann::json j = ran_json(r->proposal, *r->ran);
        if (held.kept) j["held_kept"] = *held.kept;
        return emit(s, std::move(j), held.rc, held.error);
      }
      if (held.error && held.error->code != Errc::rejected) return report(s, *held.error);
      return held.rc;
    }
    if (s.json()) {
      nlohmann::json j = with_proposal(r->proposal);
      if (r->applied) j["applied"] = outcome_object(*r->applied);
      emit(s, j);
    } else if (r->applied) {
      print_outcome(s, r->proposal, *r->applied);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
