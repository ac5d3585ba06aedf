// kaicoder rollback: undo one changelog entry from its backup, after a
// backup of the current bytes. Itself logged, and itself reversible.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/render.hpp"
#include "lib/decide.hpp"
#include "lib/policy.hpp"
#include "lib/snapshot.hpp"

namespace kai::cmd {

RunFn setup_rollback(CLI::App& sub) {
  struct Args {
    std::string id;
    bool force = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("rollback-id", a->id, "rollback id from 'kaicoder log', or 'last'")->required();
  sub.add_flag("--force", a->force, "roll back even though the file changed since (its current bytes are backed up)");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (auto ok = may_decide(**ws, s.user()); !ok) return report(s, ok.error());
    Verdict v = decide((*ws)->cfg, "rollback", a->id);
    if (v.decision == Decision::deny)
      return report(s, make_error(Errc::denied, fmt::format("the policy denies rollback ({})", v.rule)));
    std::string id = a->id;
    if (id == "last") {
      auto l = (*ws)->journal.last();
      if (!l) return report(s, l.error());
      id = *l;
    }
    auto rec = (*ws)->journal.load(id);
    if (!rec) return report(s, rec.error());
    std::string approver = s.user();
    // Say what is wrong before asking, not after the person said yes.
    if (auto pre = rollback(**ws, id, approver, a->force ? Force::yes : Force::no, CheckOnly::yes); !pre)
      return report(s, pre.error());
    if (v.decision == Decision::ask) {
      if (!s.json()) {
        out("rollback of {} ({}{}):\n", id, rec->kind, rec->rolls_back.empty() ? "" : " of " + rec->rolls_back);
        for (const auto& f : rec->files) {
          if (f.after.mode == k_mode_dir) {
            out("  rmdir    {}/ (if empty)\n", f.rel);
            continue;
          }
          if (f.after.mode == k_mode_link) out("  unlink   {} (a symlink the run made)\n", f.rel);
          if (f.after.mode == k_mode_link && !f.before.exists) continue;
          out("  {}  {}\n", f.before.exists ? "restore" : "delete ",
              !f.before.exists          ? f.rel
              : f.backup_rel.empty()    ? fmt::format("{} from snapshot {}", f.rel, id)
                                        : fmt::format("{} → {}", f.backup_rel, f.rel));
        }
        std::fflush(stdout);
      }
      auto yes = ask_on_terminal(fmt::format("Roll back {}{}?", id, a->force ? " (forced)" : ""), Tier::normal);
      if (!yes) return report(s, yes.error());
      if (!*yes) {
        if (s.json()) print_json({{"ok", true}, {"rolled_back", false}});
        else out("nothing rolled back\n");
        return k_exit_ok;
      }
    } else {
      approver = fmt::format("policy ({})", v.rule);
    }
    auto o = rollback(**ws, id, approver, a->force ? Force::yes : Force::no);
    if (!o) return report(s, o.error());
    if (s.json()) {
      print_json(outcome_json(*o));
    } else {
      out("rolled back {}\n", o->entry.summary.substr(std::string("rolled back ").size()));
      std::string files;
      for (const auto& f : o->entry.files) files += (files.empty() ? "" : ", ") + f;
      out("  files:       {}\n", files);
      out("  backup:      {}\n", o->backup.empty() ? "\u2014" : o->backup);
      out("  rollback-id: {}   (undo this rollback: kaicoder rollback {})\n", o->rollback_id, o->rollback_id);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
