#pragma once
// Writing an integration plan (lib/harness/integrate) once its owner has
// seen it at a terminal and typed CONFIRM. A settings file inside root goes
// through kaicoder's own transaction: a `write` proposal (confirm tier:
// harness settings) approved through the gate with what the owner
// answered, so it has its backup, its changelog entry and its rollback id
// like any change — one per file, as the gate decides one file at a time.
// A user-level file (`--user`, outside root, which only this door may write)
// gets a backup beside it, an atomic replace and a changelog entry that
// says how to restore it by hand (rollback works inside root only).

#include <string>
#include <vector>

#include "lib/gate.hpp"
#include "lib/harness/integrate.hpp"
#include "lib/result.hpp"
#include "lib/workspace.hpp"

namespace kai::harness {

struct Written {
  std::string rel;          // as SettingsFile::rel
  int proposal = 0;         // project files: the proposal that carried it
  std::string rollback_id;  // project files
  std::string backup;       // absolute; empty when the file was new
};

// Write every file of `plan` that changes, in order, for `who`. Stops at
// the first failure, returning what it wrote so far with the error's text
// (the files written stay written: each is its own entry, undone with
// `kaicoder rollback`). conflict when a file changed since the plan was made
// (its proposal is then rejected: nothing written for it); the errors of
// propose and the gate otherwise.
struct WriteResult {
  std::vector<Written> written;
  std::optional<Error> error;
};
WriteResult write_plan(Workspace& ws, const IntegratePlan& plan, const gate::Decider& who);

}  // namespace kai::harness
