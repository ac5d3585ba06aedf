// kaicoder approve: the human gate. Shows the diff and risk (paged when it is
// longer than the screen), asks on the terminal, then applies (or only
// approves with --no-apply). A normal-tier run or file proposal may be
// answered "a": approved, and its narrowest allow rule added to
// kaicoder.toml (lib/gate/always_allow).

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/gate/always_allow.hpp"
#include "lib/gate/gate.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

namespace {

// What "a" at the prompt would add, shown before the question.
void print_always_offer(const gate::AllowRule& rule) {
  out("a = approve, and always allow {} from now on: this rule goes into kaicoder.toml (backed up, logged, "
      "trusted again):\n",
      rule.words());
  out("{}", Lines{rule.toml("always allow")});
  out("\n");
}

nlohmann::json always_json(const gate::AllowRule& rule, const std::string& rollback_id) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [rel, blob] : rule.files) files[rel] = blob;
  nlohmann::json j = {{"action", rule.action}, {"rollback_id", rollback_id}};
  if (rule.action == "run")
    j.update({{"command", rule.command}, {"exact", true}, {"files", files}});
  else
    j["path"] = rule.path;
  return j;
}

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
    Pager pager(s, Paging::before_prompt);
    print_proposal_header(s, p);
    print_diffstat(s, p);
    print_diff(s, p, rv->diff);
    if (!rv->base_note.empty()) out("  note:     {}\n", rv->base_note);
  }
  out("\nyour answer is signed with your SSH key and pushed to the team remote; clone {} applies it\n", p.team.origin);
  std::fflush(stdout);
  send_text_to_stderr(false);
  auto yes =
      ask_on_terminal(fmt::format("Approve team proposal {} ({})?", p.id, count_of(p.changes.size(), "file")),
                      rv->need.tier);
  if (!yes) return report(s, yes.error());
  if (!*yes) {
    // Declined (SPEC §3, §11): exit 4, and the proposal stays as it was.
    const Error no =
        make_error(Errc::rejected, fmt::format("not approved; proposal {} is still pending", p.id),
                   fmt::format("decide later with: kaicoder approve {} (or kaicoder reject {})", p.id, p.id));
    if (s.json()) return emit(s, {{"approved", false}, {"id", p.id}, {"status", "pending"}}, exit_code(no.code), no);
    return report(s, no);
  }
  team::DecisionRequest req{id, who, true, terminal_answer(rv->need.tier), rv->digest, rv->diff_cut, {}};
  auto r = team::decide(ws, req);
  if (!r) return report(s, r.error());
  const int rc = report_team_decision(s, *r, "approved");
  if (rc == k_exit_ok && !s.json())
    out("pushed; clone {} applies it when it next waits or fetches\n", r->proposal.team.origin);
  return rc;
}

}  // namespace

RunFn setup_approve(CLI::App& sub) {
  struct Args {
    std::string id;
    bool no_apply = false, force = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("id", a->id, "proposal to approve")->required();
  sub.add_flag("--no-apply", a->no_apply, "record the approval; apply later with 'kaicoder apply'");
  sub.add_flag("--force", a->force, "apply even though its validation failed (asks for CONFIRM)");
  return [a](Session& s) {
    auto id = read_proposal_id(a->id);
    if (!id) return report(s, id.error());
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (auto peek = (*ws)->store.load(*id, Store::Payloads::none); peek && peek->team.remote())
      return approve_team(s, **ws, *id, a->no_apply);
    const gate::Decider who{s.user(), gate::Channel::terminal};
    // A pager shows all of a diff; without one a long diff is cut and takes
    // CONFIRM (SPEC §11).
    const gate::DiffShown shown = Pager::available(s) ? gate::DiffShown::whole : gate::DiffShown::cut;
    const gate::ApprovalOptions opts{a->no_apply ? ApplyNow::no : ApplyNow::yes, a->force ? Force::yes : Force::no,
                                     shown};
    auto rv = gate::prepare_approval(**ws, *id, who, opts);
    if (!rv) return report(s, rv.error());
    const Proposal& p = rv->proposal;
    const bool is_run = p.kind == Kind::run;
    const auto always = rv->refusal ? std::nullopt : gate::always_rule(**ws, p, rv->need.tier, opts.now);
    // The person sees what they decide on even with --json (on stderr then),
    // through the pager when it is longer than the screen, then the question.
    send_text_to_stderr(s.json());
    if (rv->held) {
      // A run that ran: what is decided now is what it did that needs CONFIRM.
      print_run_header(s, p);
      print_effects(s, p, rv->held->fx, rv->held->diff, rv->held->fx.notes, true);
      out("\n");
      std::fflush(stdout);
      send_text_to_stderr(false);
      auto keep = ask_on_terminal(fmt::format("Keep the held effects of proposal {}?", p.id), Tier::confirm);
      if (!keep) return report(s, keep.error());
      if (!*keep) {
        if (!s.json())
          out("not confirmed; the held effects of proposal {} still wait (drop them: kaicoder reject {})\n", p.id, p.id);
        else
          emit(s, {{"approved", false}, {"id", p.id}, {"status", "held"}});
        return k_exit_ok;
      }
      gate::Request req{*id, who, gate::Answer::confirm, rv->digest, false, opts};
      auto r = gate::approve(**ws, req);
      if (!r) return report(s, r.error());
      if (s.json()) {
        nlohmann::json j = with_proposal(r->proposal);
        j["held_kept"] = true;
        if (r->kept) j["rollback_id"] = r->kept->rollback_id;
        return emit(s, std::move(j));
      }
      out("kept the held effects of proposal {}{}\n", p.id,
          r->kept && !r->kept->rollback_id.empty()
              ? fmt::format("   (undo them: kaicoder rollback {})", r->kept->rollback_id)
              : std::string());
      if (r->kept)
        for (const auto& n : r->kept->notes) out("  {}\n", n);
      return k_exit_ok;
    }
    {
      Pager pager(s, Paging::before_prompt);
      if (is_run) {
        print_run_header(s, p);
        if (const auto& u = rv->unrestorable; !u.empty()) {
          std::vector<std::string> names;
          for (size_t i = 0; i < u.size() && i < 5; ++i) names.push_back(make_visible(u[i]));
          out("  restore:  not possible for {} whose name kaicoder may not write (not UTF-8, hidden or shell "
              "characters); if this run changes or removes {}, no rollback puts {} back: {}{}\n",
              count_of(u.size(), "tracked file"), u.size() == 1 ? "it" : "them", u.size() == 1 ? "it" : "them",
              fmt::join(names, ", "), u.size() > names.size() ? ", ..." : "");
        }
      } else {
        print_proposal_header(s, p);
        if (p.kind == Kind::changeset) print_diffstat(s, p);
        print_diff(s, p, *rv->diff);
      }
      out("\n");
      if (always) print_always_offer(*always);
    }
    std::fflush(stdout);
    send_text_to_stderr(false);
    if (rv->refusal) return report(s, *rv->refusal);
    auto reply = ask_reply(is_run ? fmt::format("Run proposal {}?", p.id)
                           : p.kind == Kind::changeset
                               ? fmt::format("Apply proposal {} to all {} files?", p.id, p.changes.size())
                               : fmt::format("Apply proposal {} to {}?", p.id, p.path),
                           rv->need.tier, always ? OfferAlways::yes : OfferAlways::no);
    if (!reply) return report(s, reply.error());
    if (*reply == Reply::no) {
      // Declined (SPEC §3, §11): exit 4, and the proposal stays as it was.
      const Error no =
          make_error(Errc::rejected, fmt::format("not approved; proposal {} is still pending", p.id),
                     fmt::format("decide later with: kaicoder approve {} (or kaicoder reject {})", p.id, p.id));
      if (s.json()) return emit(s, {{"approved", false}, {"id", p.id}, {"status", "pending"}}, exit_code(no.code), no);
      return report(s, no);
    }
    std::string rule_entry;
    if (*reply == Reply::always) {
      auto added = gate::add_allow_rule(**ws, *always, who, p);
      if (!added) return report(s, added.error());
      rule_entry = *added;
      if (!s.json())
        out("added to kaicoder.toml and trusted: always allow {} (undo: kaicoder rollback {})\n", always->words(),
            rule_entry);
    }
    gate::Request req{*id, who, terminal_answer(rv->need.tier), rv->digest, rv->diff_cut, opts};
    auto r = gate::approve(**ws, req, s.json() ? gate::OnOutput{} : stream_output);
    if (!r) return report(s, r.error());
    if (r->ran) {
      if (!s.json()) print_run_outcome(s, r->proposal, *r->ran);
      // What needs CONFIRM is asked right after the command's output.
      HeldAnswer held = settle_held_at_terminal(s, **ws, r->proposal);
      if (s.json()) {
        nlohmann::json j = ran_json(r->proposal, *r->ran);
        if (held.kept) j["held_kept"] = *held.kept;
        if (!rule_entry.empty()) j["always_allow"] = always_json(*always, rule_entry);
        return emit(s, std::move(j), held.rc, held.error);
      }
      if (held.error && held.error->code != Errc::rejected) return report(s, *held.error);
      return held.rc;
    }
    if (s.json()) {
      nlohmann::json j = with_proposal(r->proposal);
      if (r->applied) j["applied"] = outcome_object(*r->applied);
      if (!rule_entry.empty()) j["always_allow"] = always_json(*always, rule_entry);
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
