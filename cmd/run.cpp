// kaicoder run: stage a shell command. Blocked commands are refused at once
// and logged; the rest wait for a person (or run at once under an allow rule).

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/runs.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {
namespace {

struct RunArgs {
  std::vector<std::string> argv;
  std::string shell, cwd, why, agent;
  long timeout = 0;
  bool dry_run = false, wait = false, network = false;
};

nlohmann::json verdict_json(const StagedRun& st) {
  nlohmann::json leaves = nlohmann::json::array();
  for (const auto& l : st.classification.leaves)
    leaves.push_back({{"text", l.text}, {"argv", l.argv}, {"understood", l.understood}});
  return {{"verdict", to_string(st.verdict)},
          {"reasons", st.classification.reasons},
          {"leaves", leaves},
          {"understood", st.classification.understood},
          {"write_targets", st.classification.write_targets},
          {"network", st.proposal.network}};
}

}  // namespace

void stream_output(std::string_view chunk, int fd) {
  // The approver watches the command live; secrets are still redacted, and
  // on a terminal its escape sequences are shown, not obeyed.
  write_content(chunk, fd == 2 ? 2 : 1);
  std::fflush(fd == 2 ? stderr : stdout);
}

void print_run_outcome(Session& s, const Proposal& p, const RunOutcome& o) {
  out("\nproposal {}: {}\n", p.id, o.entry.result);
  if (o.result.out_cut || o.result.err_cut) out("  output was longer than [run] max_output; head and tail kept\n");
  out("  {}\n", o.result.sandbox_note);
  if (!o.result.guards.empty()) {
    out("  WARNING: the command touched paths kaicoder guards; what was done about it:\n");
    for (const auto& g : o.result.guards) out("    {}\n", g);
  }
  print_effects(s, p, o.effects.fx, o.effects.diff, o.effects.notes);
  if (!o.entry.rollback_id.empty())
    out("  rollback-id: {}   (undo its changes to {}: kaicoder rollback {})\n", o.entry.rollback_id,
        count_of(o.entry.files.size(), "file"), o.entry.rollback_id);
  if (o.effects.held > 0)
    out("  {} effect{} held for CONFIRM: kaicoder approve {}   (or: kaicoder reject {})\n", o.effects.held,
        o.effects.held == 1 ? " is" : "s are", p.id, p.id);
}

RunFn setup_run(CLI::App& sub) {
  auto a = std::make_shared<RunArgs>();
  sub.add_option("--why", a->why, "why the command is needed (goes into the changelog)");
  sub.add_option("--cwd", a->cwd, "folder to run in, inside root (default: the working folder)");
  sub.add_option("--timeout", a->timeout,
                 "seconds before the command's process group is killed (default: [run] timeout)")
      ->check(whole_number(1, 24 * 3600));
  sub.add_option("--shell", a->shell, "a shell string (pipes, chains), run with /bin/sh -c once every part is judged");
  sub.add_option("--agent", a->agent, "name of the proposing agent (default: $KAICODER_AGENT)");
  sub.add_flag("--network", a->network, "ask for network access for this run (confirm tier; the approver sees it)");
  sub.add_flag("--dry-run", a->dry_run, "print the verdict; stage nothing");
  sub.add_flag("--wait", a->wait, "block until decided and run; print the output and exit with its code");
  sub.add_option("command", a->argv, "the command and its arguments, after --");
  sub.positionals_at_end();
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    RunRequest req{a->argv, a->shell, a->cwd, a->timeout, a->network, a->why, a->agent};
    if (req.agent.empty())
      if (const char* env_agent = std::getenv("KAICODER_AGENT")) req.agent = env_agent;
    // Two-user mode, the agent user's side: the owner's intake stages it.
    if (s.agent_side() && !a->dry_run)
      return report_spooled(s, **ws, spool_run(**ws, req, s.env().cwd), "run", a->wait);
    auto st =
        propose_run(**ws, req, s.env().cwd, a->dry_run ? DryRun::yes : DryRun::no, s.json() ? nullptr : stream_output);
    if (!st) return report(s, st.error());
    const Proposal& p = st->proposal;
    bool blocked = st->verdict == RunVerdict::blocked;
    if (s.json()) {
      nlohmann::json j = verdict_json(*st);
      if (p.id) j["proposal"] = proposal_json(p);
      if (p.id) j["existing"] = st->existing;
      if (st->ran)
        j["ran"] = true, j["exit_code"] = st->ran->result.exit_code, j["stdout"] = st->ran->result.out,
        j["stderr"] = st->ran->result.err,
        j["effects"] = effects_json(st->ran->effects.fx, st->ran->effects.diff, st->ran->effects.notes);
      if (!(a->wait && p.id && !st->ran)) {
        if (blocked)
          return emit(s, std::move(j), exit_code(Errc::denied),
                      make_error(Errc::denied, "the command is blocked and was not staged", "see 'reasons'"));
        const int rc = st->ran ? st->ran->result.exit_code : k_exit_ok;
        if (rc != k_exit_ok) j["error"] = exit_error(rc);
        return emit(s, std::move(j), rc);
      }
    } else {
      out("{} \u00b7 {}\n",
          blocked ? "blocked"
          : p.id  ? fmt::format("proposal {} \u00b7 run", p.id)
                  : std::string("dry run"),
          command_text(p));
      out("  verdict:  {}{}\n", to_string(st->verdict),
          st->classification.understood ? "" : " (not fully understood: never auto-allowed)");
      for (const auto& r : st->classification.reasons) out("  reason:   {}\n", r);
      if (blocked) {
        err("kaicoder: denied: the command is blocked and was not staged\n");
        return exit_code(Errc::denied);
      }
      if (st->ran) {
        print_run_outcome(s, p, *st->ran);
        return st->ran->result.exit_code;
      }
      if (st->existing)
        out("  the same command from the same agent is already waiting: proposal {}; nothing new was staged\n", p.id);
      if (p.id && !a->wait) out("\nwaiting for a person: kaicoder approve {}   (or: kaicoder reject {})\n", p.id, p.id);
      if (!p.id || !a->wait) return k_exit_ok;
      std::fflush(stdout);
    }
    print_waiting(p.id);
    return wait_and_report(s, **ws, p.id);
  };
}

}  // namespace kai::cmd
