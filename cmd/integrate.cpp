// kaicoder integrate HARNESS: wire an agent harness to write only through
// kaicoder. The owner, at a terminal, sees every settings file it would
// write as a diff, types CONFIRM, and every file is written in one of
// kaicoder's own transactions, one changelog entry and one rollback id
// (lib/harness/wire). --check only reports.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/diff/diff.hpp"
#include "lib/harness/integrate.hpp"
#include "lib/harness/wire.hpp"
#include "lib/util/strings.hpp"

namespace kai::cmd {
namespace {

using harness::IntegratePlan;

nlohmann::json plan_json(const IntegratePlan& plan) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : plan.files)
    files.push_back({{"file", f.user ? f.abs.string() : f.rel},
                     {"user", f.user},
                     {"exists", f.exists},
                     {"missing", f.missing},
                     {"refusal", f.refusal},
                     {"changes", f.changes()}});
  return {{"harness", harness::harness_name(plan.harness)},
          {"wired", plan.wired()},
          {"files", files},
          {"keeps", plan.keeps},
          {"loses", plan.loses},
          {"when_hook_fails", plan.when_hook_fails}};
}

void print_missing(const IntegratePlan& plan) {
  for (const auto& f : plan.files) {
    const std::string name = f.user ? f.abs.string() : f.rel;
    if (f.missing.empty()) out("  {}: wired\n", name);
    for (const auto& m : f.missing) out("  {}: missing {}\n", name, m);
    if (!f.refusal.empty()) out("  {}: cannot be edited as text: {}\n", name, f.refusal);
  }
}

void print_plan(Session& s, const IntegratePlan& plan) {
  const Proposal none;  // a settings file is shown as a diff of no proposal
  out("kaicoder integrate {}: {} to write\n", harness::harness_name(plan.harness),
      count_of(static_cast<size_t>(
                   std::count_if(plan.files.begin(), plan.files.end(), [](const auto& f) { return f.changes(); })),
               "file"));
  for (const auto& f : plan.files) {
    if (!f.changes()) continue;
    out("\n{} ({}{}):\n", f.user ? f.abs.string() : f.rel, f.exists ? "changed" : "new",
        f.user ? ", outside root: your user settings" : "");
    for (const auto& m : f.missing) out("  + {}\n", m);
    DiffOptions opts;
    opts.full = true;
    std::optional<std::string_view> before;
    if (f.exists) before = f.before;
    auto d = diff_buffers(f.user ? f.abs.filename().string() : f.rel, before, std::string_view(f.after), 0644, opts);
    if (d) print_diff(s, none, *d);
  }
  out("\nonce wired, {} keeps:\n", harness::harness_name(plan.harness));
  for (const auto& k : plan.keeps) out("  - {}\n", k);
  out("and loses:\n");
  for (const auto& l : plan.loses) out("  - {}\n", l);
  out("when its hook cannot start (kaicoder moved or removed): {}\n", plan.when_hook_fails);
  out("\n");
}

}  // namespace

RunFn setup_integrate(CLI::App& sub) {
  struct Args {
    std::string harness;
    bool check = false, user = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("harness", a->harness, "the harness to wire: claude-code, codex, gemini or cursor")
      ->required()
      ->check(CLI::IsMember({"claude-code", "codex", "gemini", "cursor"}));
  sub.add_flag("--check", a->check, "only report what is not wired yet (exit 6 when something is missing)");
  sub.add_flag("--user", a->user, "wire the harness's user-level settings in your home (outside root) instead");
  return [a](Session& s) {
    const harness::Harness h = *harness::harness_named(a->harness);
    if (!a->check)
      if (auto t =
              require_terminal("kaicoder integrate writes the harness's settings: its owner runs it at a terminal");
          !t)
        return report(s, t.error());
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    // The hook entries name this binary by its absolute path; --check runs
    // each kaicoder hook found once to see it answer.
    const harness::WireEnv wire{s.env().self_exe, s.env().vars, true};
    if (wire.self_exe.empty() || !wire.self_exe.is_absolute())
      return report(s, make_error(Errc::io, "cannot tell where this kaicoder is (/proc/self/exe)",
                                  "run kaicoder integrate on a system with /proc mounted"));
    auto plan = harness::plan_integration(**ws, h, a->user ? harness::Scope::user : harness::Scope::project,
                                          s.env().home, wire);
    if (!plan) return report(s, plan.error());
    const bool refused = plan->refused();
    if (a->check || plan->wired() || refused) {
      const int rc = plan->wired() ? k_exit_ok : exit_code(Errc::conflict);
      if (s.json()) {
        return emit(s, plan_json(*plan), rc,
                    rc == 0 ? std::nullopt
                            : std::optional<Error>(make_error(
                                  Errc::conflict, fmt::format("{} is not wired to kaicoder", harness::harness_name(h)),
                                  fmt::format("wire it with: kaicoder integrate {}", a->harness))));
      } else {
        out("{} is {}wired to kaicoder{}\n", harness::harness_name(h), plan->wired() ? "" : "not ",
            plan->wired() ? "" : (a->check ? "" : "; nothing was written"));
        print_missing(*plan);
        out("when its hook cannot start: {}\n", plan->when_hook_fails);
        if (!plan->wired() && !refused)
          out("wire it with: kaicoder integrate {}{}\n", a->harness, a->user ? " --user" : "");
      }
      return rc;
    }
    send_text_to_stderr(s.json());
    {
      Pager pager(s, Paging::before_prompt);
      print_plan(s, *plan);
    }
    std::fflush(stdout);
    send_text_to_stderr(false);
    auto yes = ask_on_terminal(fmt::format("Write these settings for {}?", a->harness), Tier::confirm);
    if (!yes) return report(s, yes.error());
    if (!*yes) return report(s, make_error(Errc::rejected, "not confirmed; nothing was written"));
    auto res = harness::write_plan(**ws, *plan, gate::Decider{s.user(), gate::Channel::terminal});
    if (!res) return report(s, res.error());
    nlohmann::json written = nlohmann::json::array();
    for (const auto& f : res->files) {
      written.push_back({{"file", f.path}, {"backup", f.backup}});
      if (s.json()) continue;
      out("wrote {}", f.path);
      if (!f.backup.empty()) out(" (backup {})", f.backup);
      out("\n");
    }
    if (s.json())
      return emit(s, {{"harness", a->harness},
                      {"proposal", res->proposal},
                      {"rollback_id", res->rollback_id},
                      {"written", written}});
    if (res->proposal)
      out("one changeset, proposal {}", res->proposal);
    else
      out("one transaction outside root");
    out(", one changelog entry: undo every file with kaicoder rollback {}\n", res->rollback_id);
    out("{} now writes only through kaicoder; check with: kaicoder integrate {}{} --check\n", a->harness, a->harness,
        a->user ? " --user" : "");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
