// kaicoder approve: the human gate. Shows the diff and risk, asks on the
// terminal, then applies (or only approves with --no-apply).

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/gate/gate.hpp"

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
    const gate::Decider who{s.user(), gate::Channel::terminal};
    const gate::ApprovalOptions opts{a->no_apply ? ApplyNow::no : ApplyNow::yes, a->force ? Force::yes : Force::no};
    auto rv = gate::prepare_approval(**ws, a->id, who, opts);
    if (!rv) return report(s, rv.error());
    const Proposal& p = rv->proposal;
    const bool is_run = p.kind == Kind::run;
    // The person sees what they decide on even with --json (on stderr then).
    send_text_to_stderr(s.json());
    if (is_run) {
      print_run_header(s, p);
    } else if (p.kind == Kind::changeset) {
      // Many files: paged on a terminal (the pager quits when it fits on
      // one screen), then the question.
      Pager pager(s, s.json() ? Paging::off : Paging::automatic);
      print_proposal_header(s, p);
      print_diffstat(s, p);
      print_diff(s, p, *rv->diff);
    } else {
      print_proposal_header(s, p);
      print_diff(s, p, *rv->diff);
    }
    out("\n");
    std::fflush(stdout);
    send_text_to_stderr(false);
    if (rv->refusal) return report(s, *rv->refusal);
    auto yes = ask_on_terminal(is_run ? fmt::format("Run proposal {}?", p.id)
                               : p.kind == Kind::changeset
                                   ? fmt::format("Apply proposal {} to all {} files?", p.id, p.changes.size())
                                   : fmt::format("Apply proposal {} to {}?", p.id, p.path),
                               rv->need.tier);
    if (!yes) return report(s, yes.error());
    if (!*yes) {
      if (!s.json())
        out("not approved; proposal {} is still pending\n", p.id);
      else
        emit(s, {{"approved", false}, {"id", p.id}, {"status", "pending"}});
      return k_exit_ok;
    }
    gate::Request req{a->id, who, terminal_answer(rv->need.tier), rv->digest, rv->diff_cut, opts};
    auto r = gate::approve(**ws, req, s.json() ? gate::OnOutput{} : stream_output);
    if (!r) return report(s, r.error());
    if (r->ran) {
      if (s.json()) {
        emit(s, ran_json(r->proposal, *r->ran));
      } else {
        print_run_outcome(s, r->proposal, *r->ran);
      }
      return k_exit_ok;
    }
    if (s.json()) {
      nlohmann::json j = with_proposal(r->proposal);
      if (r->applied) j["applied"] = outcome_object(*r->applied);
      emit(s, j);
    } else if (r->applied) {
      print_outcome(s, r->proposal, *r->applied);
    } else {
      out("approved proposal {}; apply it with: kaicoder apply {}\n", r->proposal.id, r->proposal.id);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
