#include "lib/harness/wire.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/util/git.hpp"
#include "lib/store/journal.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/time.hpp"

namespace kai::harness {
namespace fs = std::filesystem;
using namespace txn;

namespace {

std::string why_of(const IntegratePlan& plan) {
  return fmt::format("wire {} to write only through kaicoder (kaicoder integrate {})", harness_name(plan.harness),
                     harness_name(plan.harness));
}

Error changed_meanwhile(const std::string& name) {
  return make_error(Errc::conflict, fmt::format("'{}' changed while you were asked; nothing was written", name),
                    "run kaicoder integrate again");
}

// What was written: every changed file of `plan`, with its backup when it existed.
Written written(const Workspace& ws, const IntegratePlan& plan, int proposal, const std::string& id) {
  Written w{proposal, id, {}};
  for (const SettingsFile& f : plan.files) {
    if (!f.changes()) continue;
    const fs::path abs = abs_path(ws, f.rel);
    w.files.push_back(
        {abs.string(), f.exists ? (abs.parent_path() / backup_name(abs.filename().string(), id)).string() : ""});
  }
  return w;
}

// Project files: one changeset, approved with the owner's CONFIRM.
Result<Written> write_project(Workspace& ws, const IntegratePlan& plan, const gate::Decider& who) {
  ChangesetRequest req;
  req.why = why_of(plan);
  req.agent = "kaicoder integrate";
  req.summary = fmt::format("wire {} to kaicoder", harness_name(plan.harness));
  for (const SettingsFile& f : plan.files) {
    if (!f.changes()) continue;
    ChangeRequest c;
    c.op = "write";
    c.path = f.rel;
    c.content = f.after;
    req.changes.push_back(std::move(c));
  }
  auto st = propose_changeset(ws, req, ws.root, DryRun::no, DiffOptions{});
  if (!st) return st.error();
  const Proposal& p = st->proposal;
  if (st->applied) return written(ws, plan, p.id, st->applied->rollback_id);
  // What the owner saw is what is staged: every file as it was shown.
  for (const SettingsFile& f : plan.files) {
    if (!f.changes()) continue;
    auto c = std::find_if(p.changes.begin(), p.changes.end(), [&](const Change& ch) { return ch.path == f.rel; });
    if (c == p.changes.end() || c->base.exists != f.exists || (f.exists && c->base.blob != blob_id(f.before)) ||
        c->after != f.after) {
      (void)reject(ws, p.id, who.user, "a file changed while kaicoder integrate was asking");
      return changed_meanwhile(f.rel);
    }
  }
  const gate::ApprovalOptions opts{ApplyNow::yes, Force::no, gate::DiffShown::cut};
  auto rv = gate::prepare_approval(ws, p.id, who, opts);
  if (!rv) return rv.error();
  if (rv->refusal) return *rv->refusal;
  gate::Request r{p.id, who, gate::Answer::confirm, rv->digest, rv->diff_cut, opts};
  auto ap = gate::approve(ws, r);
  if (!ap) return ap.error();
  if (!ap->applied)
    return make_error(Errc::io, fmt::format("proposal {} was approved but not applied", p.id),
                      fmt::format("apply it with: kaicoder apply {}", p.id));
  return written(ws, plan, p.id, ap->applied->rollback_id);
}

// The folders on the way to user file `rel` ("~/…") that do not exist yet, outermost first.
std::vector<std::string> missing_folders(const Workspace& ws, const std::string& rel) {
  std::vector<std::string> out;
  for (size_t slash = rel.find('/', 2); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
    std::error_code ec;
    std::string dir = rel.substr(0, slash);
    if (fs::symlink_status(abs_path(ws, dir), ec).type() == fs::file_type::not_found) out.push_back(dir);
  }
  return out;
}

// User files: one transaction of lib/gate/txn, under the store lock.
Result<Written> write_user(Workspace& ws, const IntegratePlan& plan, const gate::Decider& who) {
  auto lock = lock_and_sweep(ws);
  if (!lock) return lock.error();
  KAI_TRY(ws.changelog.check_readable());
  std::vector<std::string> made;  // folders created for new files, outermost first
  for (const SettingsFile& f : plan.files)
    if (f.changes())
      for (auto& d : missing_folders(ws, f.rel))
        if (std::find(made.begin(), made.end(), d) == made.end()) made.push_back(d);
  auto undo_made = [&] {
    for (auto it = made.rbegin(); it != made.rend(); ++it) remove_empty_dir(ws, *it);
  };
  std::vector<Target> targets;
  std::vector<std::optional<std::string>> after;
  for (const SettingsFile& f : plan.files) {
    if (!f.changes()) continue;
    auto tg = open_target(ws, f.rel, CreateDirs::yes, Guard::tree, Read::whole, Home::yes);
    if (!tg) {
      undo_made();
      return tg.error();
    }
    if (tg->current.exists != f.exists || (f.exists && tg->current.bytes != f.before)) {
      undo_made();
      return changed_meanwhile(f.abs.string());
    }
    targets.push_back(std::move(*tg));
    after.push_back(f.after);
  }
  const TimePoint now = ws.clock->now();
  Txn t;
  t.rec.kind = "changeset";
  t.rec.time = iso_utc(now);
  auto fresh = fresh_txn_id(ws, now, targets);
  if (!fresh) {
    undo_made();
    return fresh.error();
  }
  t.rec.id = std::move(*fresh);
  for (size_t i = 0; i < targets.size(); ++i) {
    const FileState& cur = targets[i].current;
    t.rec.files.push_back(change_of(targets[i], after[i], cur.exists ? cur.mode & 07777u : 0644u, t.rec.id));
  }
  // Folders made for new files are recorded: a rollback removes them again.
  for (const auto& d : made) t.rec.files.push_back(made_folder(d));
  t.entry = make_entry(ws, t, "changeset", std::string(action_name(Kind::changeset)));
  t.entry.summary = fmt::format("wired {} in the owner's user settings (outside root)", harness_name(plan.harness));
  t.entry.why = why_of(plan);
  t.entry.approver = who.recorded();
  if (auto s = execute(ws, t, targets, after, Durability::each); !s) {
    undo_made();
    return s.error();
  }
  return written(ws, plan, 0, t.rec.id);
}

}  // namespace

Result<Written> write_plan(Workspace& ws, const IntegratePlan& plan, const gate::Decider& who) {
  size_t user = 0, project = 0;
  for (const SettingsFile& f : plan.files)
    if (f.changes()) ++(f.user ? user : project);
  if (user && project)
    return make_error(Errc::usage, "an integration plan writes either project files or user files, not both");
  if (!user && !project) return Written{};
  return user ? write_user(ws, plan, who) : write_project(ws, plan, who);
}

}  // namespace kai::harness
