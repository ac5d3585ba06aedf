// kaicoder approve: the human gate. Shows the diff and risk, asks on the
// terminal, then applies (or only approves with --no-apply).

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/gate/gate.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

namespace {

// A team proposal of another clone: the person's yes becomes a decision
// signed with their key and pushed to the team remote; the proposing clone
// applies it. "Always allow" is never offered here.
int approve_team(Session& s, Workspace& ws, int id, bool no_apply) {
  if (no_apply)
    return report(s, make_error(Errc::usage, "--no-apply does not go with a team proposal",
                                "it is applied where it was proposed, once the signed decision arrives there"));
  const gate::Decider who{s.user(), gate::Channel::terminal};
  auto rv = team::prepare_decision(ws, id, who, DiffOptions{});
  if (!rv) return report(s, rv.error());
  const Proposal& p = rv->proposal;
  send_text_to_stderr(s.json());
  {
    Pager pager(s, s.json() ? Paging::off : Paging::automatic);
    print_proposal_header(s, p);
    print_diffstat(s, p);
    print_diff(s, p, rv->diff);
    if (!rv->base_note.empty()) out("  note:     {}\n", rv->base_note);
  }
  out("\nyour answer is signed with your SSH key and pushed to the team remote; clone {} applies it\n", p.team.origin);
  std::fflush(stdout);
  send_text_to_stderr(false);
  auto yes =
      ask_on_terminal(fmt::format("Approve team proposal {} ({} file(s))?", p.id, p.changes.size()), rv->need.tier);
  if (!yes) return report(s, yes.error());
  if (!*yes) {
    if (s.json())
      emit(s, {{"approved", false}, {"id", p.id}, {"status", "pending"}});
    else
      out("not approved; proposal {} is still pending\n", p.id);
    return k_exit_ok;
  }
  team::DecisionRequest req{id, who, true, terminal_answer(rv->need.tier), rv->digest, rv->diff_cut, {}};
  auto r = team::decide(ws, req);
  if (!r) return report(s, r.error());
  if (s.json()) {
    nlohmann::json j = with_proposal(r->proposal);
    j["decision"] = {{"commit", r->decision}, {"signer", r->signer}, {"pushed", !r->push_error}};
    if (r->push_error) return emit(s, j, exit_code(r->push_error->code), r->push_error);
    return emit(s, j);
  }
  out("approved team proposal {}: decision {} signed by {}\n", r->proposal.id, r->decision.substr(0, 12), r->signer);
  if (r->push_error) return report(s, *r->push_error);
  out("pushed; clone {} applies it when it next waits or fetches\n", r->proposal.team.origin);
  return k_exit_ok;
}

}  // namespace

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
    if (auto peek = (*ws)->store.load(a->id, Store::Payloads::none); peek && peek->team.remote())
      return approve_team(s, **ws, a->id, a->no_apply);
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
