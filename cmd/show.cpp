// kaicoder show: one proposal with its metadata, decision and diff. Only
// reads: no sweep, no hook; a pending proposal past its timeout is shown as
// expired.

#include <fmt/format.h>

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/gate/runs.hpp"
#include "lib/gate/status.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

namespace {
constexpr const char* k_expired_note =
    "  expired:  past [approval] timeout, not recorded yet; it can no longer be approved\n";
}  // namespace

RunFn setup_show(CLI::App& sub) {
  struct Args {
    std::string id;
    bool full = false, no_pager = false;
    std::string file;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("id", a->id, "proposal (or ticket, in two-user mode) to show")->required();
  sub.add_flag("--full", a->full, "the whole diff, however large");
  sub.add_flag("--no-pager", a->no_pager, "never page the output (default: page it on a terminal)");
  sub.add_option("--file", a->file, "a changeset: show the diff of this one file (its path, either path of a rename)");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (s.agent_side()) return agent_show(s, **ws, a->id, a->file);
    auto id = resolve_id(**ws, a->id);
    if (!id) return report(s, id.error());
    auto p = (*ws)->store.load(*id);
    if (!p) return report(s, p.error());
    Pager pager(s, a->no_pager ? Paging::off : Paging::automatic);
    const bool late = past_timeout(**ws, *p);
    // Once applied, rejected or expired there is nothing left to diff
    // against; the changelog has the record.
    if (p->kind == Kind::run) {
      CapturedOutput captured = run_output(**ws, p->id);
      auto kept = kept_effects(**ws, *p);  // none before it ran
      if (s.json()) {
        nlohmann::json j = with_proposal(*p);
        if (late) j["expired"] = true;
        j["stdout"] = captured.out;
        j["stderr"] = captured.err;
        if (kept) j["effects"] = effects_json(kept->fx, kept->diff, kept->fx.notes);
        return emit(s, std::move(j));
      }
      print_run_header(s, *p);
      if (late) out("{}", k_expired_note);
      if (!captured.out.empty() || !captured.err.empty())
        out("\n--- output ---\n{}{}", Lines{captured.out}, Lines{captured.err});
      if (kept) print_effects(s, *p, kept->fx, kept->diff, kept->fx.notes);
      if (!kept && kept.error().code != Errc::not_found) out("\neffects: {}\n", kept.error().message);
      if (p->state == State::held && !late)
        out("\nheld for CONFIRM: kaicoder approve {}   (or: kaicoder reject {})\n", p->id, p->id);
      return k_exit_ok;
    }
    const bool live = still_open(*p);
    std::optional<FileDiff> d;
    std::string diff_note;
    // A changeset's file is looked for by changeset_diff below.
    if (p->kind != Kind::changeset)
      if (auto named = names_file(*p, a->file); !named) return report(s, named.error());
    if (live && p->kind == Kind::changeset && !a->file.empty() && !p->team.remote()) {
      DiffOptions opts;
      opts.full = a->full;
      auto r = changeset_diff(**ws, *p, opts, a->file);
      if (!r && r.error().code == Errc::not_found) return report(s, r.error());
      if (r)
        d = std::move(*r);
      else
        diff_note = fmt::format("no diff: {}", r.error().message);
    } else if (p->team.remote()) {
      // Another clone's proposal: its commit against its base, whatever this tree holds.
      DiffOptions opts;
      opts.full = a->full;
      auto r = team::remote_diff(**ws, *p, opts);
      if (r)
        d = std::move(*r);
      else
        diff_note = fmt::format("no diff: {}", r.error().message);
    } else if (live) {
      auto r = diff_for_display(s, **ws, *p, a->full);
      if (r)
        d = std::move(*r);
      else
        diff_note = fmt::format("no diff: {}", r.error().message);
    }
    if (s.json()) {
      nlohmann::json j = with_proposal(*p);
      if (late) j["expired"] = true;
      j["diff"] = d ? d->text : "";
      if (d) j["diff_info"] = diff_object(*d);
      if (!diff_note.empty()) j["diff_note"] = diff_note;
      return emit(s, std::move(j));
    }
    print_proposal_header(s, *p);
    if (late) out("{}", k_expired_note);
    if (p->kind == Kind::changeset) print_diffstat(s, *p);
    if (d) print_diff(s, *p, *d);
    if (!diff_note.empty()) out("\n{}\n", diff_note);
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
