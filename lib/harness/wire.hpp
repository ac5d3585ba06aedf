#pragma once
// Writing an integration plan (lib/harness/integrate) once its owner has
// seen it at a terminal and typed CONFIRM: every file it changes in ONE
// transaction, with one changelog entry and one rollback id that restores
// them all (created files removed).
//
// Project files (inside root) go as one changeset proposal (lib/gate/changeset:
// confirm tier, harness settings) approved through the gate with what the
// owner answered: backups, entry (`changeset` / `apply_changeset`) and
// rollback as for any changeset.
//
// User-level files (`--user`, in the owner's home, outside root: only this
// door writes there) cannot be a proposal, whose paths are root-relative by
// construction. They go as one transaction of lib/gate/txn with no proposal: the
// same intent (crash recovery), backups beside each file, journal record,
// changelog entry listing every file and backup, and rollback id
// (`kaicoder rollback ID`, at a terminal only). lib/gate/txn accepts there only
// the user settings files of the harnesses (txn::user_settings_file).

#include <optional>
#include <string>
#include <vector>

#include "lib/gate/gate.hpp"
#include "lib/harness/integrate.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai::harness {

struct Written {
  int proposal = 0;         // the changeset that carried project files; 0 for user files
  std::string rollback_id;  // undoes every file at once
  struct File {
    std::string path;    // absolute
    std::string backup;  // absolute; empty when the file was new
  };
  std::vector<File> files;
};

// Write every file of `plan` that changes, for `who`, all or nothing.
// conflict when a file changed since the plan was made (a staged changeset
// is then rejected: nothing is written); usage for a plan that mixes
// project and user files; the errors of propose, the gate and lib/gate/txn
// otherwise (denied for a symlink on the way to a user file).
Result<Written> write_plan(Workspace& ws, const IntegratePlan& plan, const gate::Decider& who);

}  // namespace kai::harness
