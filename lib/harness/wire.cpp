#include "lib/harness/wire.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/decide.hpp"
#include "lib/git.hpp"
#include "lib/propose.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/time.hpp"

namespace kai::harness {
namespace fs = std::filesystem;

namespace {

std::string why_of(const IntegratePlan& plan) {
  return fmt::format("wire {} to write only through kaicoder (kaicoder integrate {})", harness_name(plan.harness),
                     harness_name(plan.harness));
}

Result<Written> write_project_file(Workspace& ws, const IntegratePlan& plan, const SettingsFile& f, const gate::Decider& who) {
  ProposeRequest r;
  r.path = f.rel;
  r.content = f.after;
  r.why = why_of(plan);
  r.agent = "kaicoder integrate";
  auto st = propose(ws, std::move(r), ws.root, DryRun::no, DiffOptions{});
  if (!st) return st.error();
  const Proposal& p = st->proposal;
  Written w{f.rel, p.id, "", ""};
  if (st->applied) {
    w.rollback_id = st->applied->rollback_id;
    w.backup = st->applied->backup;
    return w;
  }
  // What the owner saw is what is staged: the same file under it.
  if (p.base.exists != f.exists || (f.exists && p.base.blob != blob_id(f.before))) {
    (void)reject(ws, p.id, who.user, "the file changed while kaicoder integrate was asking");
    return make_error(Errc::conflict, fmt::format("'{}' changed while you were asked; nothing was written to it", f.rel),
                      "run kaicoder integrate again");
  }
  const gate::ApprovalOptions opts{ApplyNow::yes, Force::no};
  auto rv = gate::prepare_approval(ws, p.id, who, opts);
  if (!rv) return rv.error();
  if (rv->refusal) return *rv->refusal;
  gate::Request req{p.id, who, gate::Answer::confirm, rv->digest, rv->diff_cut, opts};
  auto ap = gate::approve(ws, req);
  if (!ap) return ap.error();
  if (ap->applied) {
    w.rollback_id = ap->applied->rollback_id;
    w.backup = ap->applied->backup;
  }
  return w;
}

Result<Written> write_user_file(Workspace& ws, const IntegratePlan& plan, const SettingsFile& f, const gate::Decider& who) {
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  auto now = read_file(f.abs, size_t{16} << 20);
  const bool exists = static_cast<bool>(now);
  if ((exists ? *now : std::string()) != f.before || exists != f.exists)
    return make_error(Errc::conflict, fmt::format("'{}' changed while you were asked; nothing was written to it", f.abs.string()),
                      "run kaicoder integrate again");
  Written w{f.rel, 0, "", ""};
  mode_t mode = 0644;
  const TimePoint t = ws.clock->now();
  if (exists) {
    struct stat sb {};
    if (::stat(f.abs.c_str(), &sb) == 0) mode = sb.st_mode & 07777;
    w.backup = f.abs.string() + ".bak-kaicoder-" + compact_utc(t);
    KAI_TRY(write_file_exclusive(w.backup, f.before, mode));
  } else {
    KAI_TRY(make_dirs(f.abs.parent_path(), 0755));
  }
  KAI_TRY(write_file_atomic(f.abs, f.after, mode));
  Entry e;
  e.time = iso_utc(t);
  e.kind = "write";
  e.rollback_id.clear();  // not reversible: the changelog prints its mark for none
  e.files = {f.abs.string()};
  e.action = "write_file";
  e.summary = fmt::format("wired {} in the owner's user settings", harness_name(plan.harness));
  e.why = why_of(plan);
  e.backup = w.backup;
  e.approver = who.user;
  e.result = "ok";
  e.rollback = w.backup.empty() ? fmt::format("outside root: delete {} by hand", f.abs.string())
                                : fmt::format("outside root: restore by hand, cp {} {}", w.backup, f.abs.string());
  KAI_TRY(ws.changelog.prepend(ws.redact(std::move(e))));
  return w;
}

}  // namespace

WriteResult write_plan(Workspace& ws, const IntegratePlan& plan, const gate::Decider& who) {
  WriteResult out;
  for (const SettingsFile& f : plan.files) {
    if (!f.changes()) continue;
    auto w = f.user ? write_user_file(ws, plan, f, who) : write_project_file(ws, plan, f, who);
    if (!w) {
      out.error = w.error();
      return out;
    }
    out.written.push_back(std::move(*w));
  }
  return out;
}

}  // namespace kai::harness
