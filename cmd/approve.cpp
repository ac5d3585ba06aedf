// kaicoder approve: the human gate. Shows the diff and risk, asks on the
// terminal, then applies (or only approves with --no-apply).

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/render.hpp"
#include "lib/decide.hpp"

namespace kai::cmd {

RunFn setup_approve(CLI::App& sub) {
  struct Args {
    int id = 0;
    bool no_apply = false, force = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("id", a->id, "proposal to approve")->required();
  sub.add_flag("--no-apply", a->no_apply, "record the approval; apply later with 'kaicoder apply'");
  sub.add_flag("--force", a->force, "apply even though its validation failed (asks for CONFIRM)");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (auto ok = may_decide(**ws, s.user()); !ok) return report(s, ok.error());
    auto p = load_for_decision(**ws, a->id);
    if (!p) return report(s, p.error());
    if (p->state != State::pending)
      return report(s, make_error(p->state == State::timeout ? Errc::timeout : Errc::conflict,
                                  fmt::format("proposal {} is {}, not pending", p->id, to_string(p->state))));
    // Refused before the question: a "yes" to a record kaicoder did not seal is never carried out.
    if (auto sealed = require_sealed((*ws)->store, *p); !sealed) return report(s, sealed.error());
    if (!a->no_apply && (*ws)->cfg.mode == "propose-only")
      return report(s, make_error(Errc::denied, "policy mode is propose-only: kaicoder stages and diffs but never applies",
                                  "approve with --no-apply to record the decision, or change [policy] mode"));
    const bool is_run = p->kind == Kind::run;
    // The person sees what they decide on even with --json (on stderr then).
    send_text_to_stderr(s.json());
    bool diff_cut = false;
    if (is_run) {
      print_run_header(s, *p);
    } else {
      auto d = diff_for_display(s, **ws, *p, false);
      if (!d && d.error().code == Errc::conflict) {
        // It can never be applied as proposed: say so to the waiter and the log too.
        auto f = fail_pending(**ws, a->id, s.user(), d.error());
        return report(s, f ? d.error() : f.error());
      }
      if (!d) return report(s, d.error());
      print_proposal_header(s, *p);
      print_diff(s, *p, *d);
      diff_cut = d->truncated;
    }
    out("\n");
    std::fflush(stdout);
    send_text_to_stderr(false);
    // What the person sees is what gets bound: the digest is taken now.
    const std::string seen = digest(*p);
    const bool failed_validation = p->validation.status == "failed" && !is_run;
    // No question is asked whose "yes" could not be carried out.
    if (failed_validation && !a->force && !a->no_apply)
      return report(s, make_error(Errc::conflict, fmt::format("proposal {} failed validation; not applied", p->id),
                                  fmt::format("read the output above; approve it anyway with: kaicoder approve --force {}",
                                              p->id)));
    const ApplyNow apply_now = a->no_apply ? ApplyNow::no : ApplyNow::yes;
    const Force force = a->force ? Force::yes : Force::no;
    const RequiredTier need = required_tier(*p, diff_cut, apply_now, force);
    auto yes = ask_on_terminal(is_run ? fmt::format("Run proposal {}?", p->id)
                                      : fmt::format("Apply proposal {} to {}?", p->id, p->path),
                               need.tier);
    if (!yes) return report(s, yes.error());
    if (!*yes) {
      if (!s.json()) out("not approved; proposal {} is still pending\n", p->id);
      else print_json({{"ok", true}, {"approved", false}, {"id", p->id}, {"status", "pending"}});
      return k_exit_ok;
    }
    auto r = approve(**ws, a->id, seen, s.user(), is_run ? ApplyNow::no : apply_now, force);
    if (!r) return report(s, r.error());
    if (is_run && apply_now == ApplyNow::yes) {
      if ((*ws)->cfg.mode == "propose-only")
        return report(s, make_error(Errc::denied, "policy mode is propose-only: approved, but kaicoder never runs commands in this mode"));
      auto ran = execute_run(**ws, a->id, s.user(), s.json() ? nullptr : stream_output);
      if (!ran) return report(s, ran.error());
      if (s.json()) {
        print_json({{"id", a->id}, {"ran", true}, {"exit_code", ran->result.exit_code}, {"stdout", ran->result.out},
                    {"stderr", ran->result.err}, {"entry", entry_json(ran->entry)}});
      } else {
        print_run_outcome(s, r->proposal, *ran);
      }
      return k_exit_ok;
    }
    if (s.json()) {
      nlohmann::json j = proposal_json(r->proposal);
      if (r->applied) j["applied"] = outcome_json(*r->applied);
      print_json(j);
    } else if (r->applied) {
      print_outcome(s, r->proposal, *r->applied);
    } else {
      out("approved proposal {}; apply it with: kaicoder apply {}\n", r->proposal.id, r->proposal.id);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
