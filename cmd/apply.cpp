// kaicoder apply: apply an approved proposal (after --no-apply or a failed
// apply), re-checking every guardrail, the approval digest and the base;
// --force applies one whose validation failed.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/decide.hpp"
#include "lib/runs.hpp"

namespace kai::cmd {

RunFn setup_apply(CLI::App& sub) {
  auto id = std::make_shared<int>(0);
  auto force = std::make_shared<bool>(false);
  sub.add_option("id", *id, "approved proposal to apply")->required();
  sub.add_flag("--force", *force, "apply even though its validation failed");
  return [id, force](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (auto p = (*ws)->store.load(*id, Store::Payloads::none); p && p->kind == Kind::run) {
      if (auto ok = may_decide(**ws, s.user()); !ok) return report(s, ok.error());
      if ((*ws)->cfg.mode == "propose-only")
        return report(s, make_error(Errc::denied, "policy mode is propose-only: kaicoder never runs commands in this mode"));
      auto ran = execute_run(**ws, *id, p->decided_by.empty() ? s.user() : p->decided_by, s.json() ? nullptr : stream_output);
      if (!ran) return report(s, ran.error());
      if (s.json())
        print_json({{"id", *id}, {"ran", true}, {"exit_code", ran->result.exit_code}, {"stdout", ran->result.out},
                    {"stderr", ran->result.err}, {"entry", entry_json(ran->entry)}});
      else
        print_run_outcome(s, *p, *ran);
      return k_exit_ok;
    }
    auto r = apply_approved(**ws, *id, s.user(), *force ? Force::yes : Force::no);
    if (!r) return report(s, r.error());
    if (s.json()) {
      nlohmann::json j = proposal_json(r->proposal);
      if (r->applied) j["applied"] = outcome_json(*r->applied);
      print_json(j);
    } else if (r->applied) {
      print_outcome(s, r->proposal, *r->applied);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
