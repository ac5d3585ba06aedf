// kaicoder rollback: undo one changelog entry from its backup, after a
// backup of the current bytes. Itself logged, and itself reversible. The
// entry is named as git names commits: its rollback id, last, last~N, or
// the proposal whose change it was (lib/gate resolve_entry).

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/gate/gate.hpp"
#include "lib/run/snapshot.hpp"

namespace kai::cmd {

RunFn setup_rollback(CLI::App& sub) {
  struct Args {
    std::string id;
    bool force = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("entry", a->id,
                 "the entry to undo: its rollback id from 'kaicoder log', 'last', 'last~N' (N before the newest), "
                 "or the id of the proposal whose change it was")
      ->required();
  sub.add_flag("--force", a->force, "roll back even though the file changed since (its current bytes are backed up)");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    const Force force = a->force ? Force::yes : Force::no;
    gate::Request req;
    req.who = {s.user(), gate::Channel::terminal};
    req.opts.force = force;
    auto rv = gate::prepare_rollback(**ws, a->id, req.who, force);
    if (!rv) return report(s, rv.error());
    const std::string& id = rv->id;
    if (rv->decision == Decision::ask) {
      if (!s.json()) {
        Pager pager(s, Paging::before_prompt);  // a run's entry may list many files
        const Record& rec = rv->record;
        {
          Batch batch;  // a line per file, until the question
          out("rollback of {} ({}{}{}):\n", id, rec.kind, rec.rolls_back.empty() ? "" : " of " + rec.rolls_back,
              rec.proposal > 0 ? fmt::format(", proposal {}", rec.proposal) : "");
          for (const auto& f : rec.files) {
            if (f.after.mode == k_mode_dir) {
              out("  rmdir    {}/ (if empty)\n", f.rel);
              continue;
            }
            if (f.after.mode == k_mode_link) out("  unlink   {} (a symlink the run made)\n", f.rel);
            if (f.after.mode == k_mode_link && !f.before.exists) continue;
            out("  {}  {}\n", f.before.exists ? "restore" : "delete ",
                !f.before.exists       ? f.rel
                : f.backup_rel.empty() ? fmt::format("{} from snapshot {}", f.rel, id)
                                       : fmt::format("{} \u2192 {}", f.backup_rel, f.rel));
          }
        }
        std::fflush(stdout);
      }
      auto yes = ask_on_terminal(fmt::format("Roll back {}{}?", id, a->force ? " (forced)" : ""), Tier::normal);
      if (!yes) return report(s, yes.error());
      if (!*yes) {
        const Error no = make_error(Errc::rejected, fmt::format("not confirmed; nothing rolled back ({} stays)", id));
        if (s.json()) return emit(s, {{"rolled_back", false}}, exit_code(no.code), no);
        return report(s, no);
      }
      req.answer = terminal_answer(Tier::normal);
    }
    auto r = gate::rollback(**ws, *rv, req);
    if (!r) return report(s, r.error());
    const Outcome& o = r->outcome;
    if (s.json()) {
      emit(s, outcome_object(o));
    } else {
      out("rolled back {}\n", r->undone);
      std::string files;
      for (const auto& f : o.entry.files) files += (files.empty() ? "" : ", ") + f;
      out("  files:       {}\n", files);
      out("  backup:      {}\n", o.backup.empty() ? "\u2014" : o.backup);
      out("  rollback-id: {}   (undo this rollback: kaicoder rollback {})\n", o.rollback_id, o.rollback_id);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
