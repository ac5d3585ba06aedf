#pragma once
// A run's effects through the gate (SPEC §5, kaicoder-run(1) "A run's
// effects"): read when the command ends, each with its verdict from the
// decision table (lib/run/effects.hpp); the plain ones land at once through a
// crash-safe transaction, the sensitive ones are held for the person, the
// ones a proposal could never make are dropped.
//
// Every run has a folder of its own, <state>/runs/<id>/ (mode 0700):
//   alive         locked by the process that runs the command (and by the
//                 sandbox's processes it forks): free means the run is over
//   started       made when the run starts: its change time is the run's start
//   upper/ work/  the overlay of root (full level): what the command wrote;
//                 after it, what is held waiting for CONFIRM
//   redirect      made when root mounts that overlay with trusted
//                 attributes and redirect_dir=on (folders of the tree can
//                 be renamed): its moves are settled before it is read
//   objects/      git's new objects (full level without an overlay)
//   landing.json  the sealed intent of a landing under way (recover_runs
//                 rolls it forward after a crash; each step is idempotent)
//   scratch/      copies of an index being read
// The effects themselves are kept in the proposal's staging folder
// (effects.json, with its digest in the sealed record, and effects.diff).
//
// At the full level with an overlay nothing the command writes reaches the
// tree while it runs; without one (the landlock level, an older kernel, or
// [run] overlay = false) the tree is snapshotted before and after, the same
// effects come from the difference, and the held and never ones are put
// back from the snapshot at once (the held ones kept in upper/ for later).
//
// Landing moves entries from upper/ into the tree: the bytes each one
// replaces are kept in the snapshot store under the landing's rollback id,
// the journal gets a record of kind `run` (folders, modes, symlinks and
// git's files included), so `kaicoder rollback` puts back exactly what
// landed. A path whose live state is no longer what the effect started
// from (the person changed it while the run went on) is a conflict: never
// overwritten, its effect dropped and named. .git's files land by
// compare-and-swap the same way, never with a backup beside them.
//
// All functions here expect the caller to hold the store lock unless said
// otherwise.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/config/workspace.hpp"
#include "lib/diff/diff.hpp"
#include "lib/result.hpp"
#include "lib/run/confine.hpp"
#include "lib/run/effects.hpp"
#include "lib/store/changelog.hpp"
#include "lib/store/journal.hpp"
#include "lib/store/proposal.hpp"
#include "lib/util/lock.hpp"

namespace kai {

struct RunFolder {
  std::filesystem::path dir, upper, work, objects, scratch, redirect;
  static RunFolder of(const Workspace& ws, int id);
};

// How a run's effects are read.
enum class EffectsWay { overlay, snapshots, none };

struct Snapshot;
struct RunUndo;  // the snapshots of the levels without an overlay (lib/gate/run_effects.cpp)

// One run in flight, from its claim to its record.
class EffectsRun {
public:
  EffectsRun();
  EffectsRun(EffectsRun&&) noexcept;
  EffectsRun& operator=(EffectsRun&&) noexcept;
  ~EffectsRun();

  int id = 0;
  RunFolder folder;
  EffectsWay way = EffectsWay::none;
  FileLock alive;        // held while the command runs (the sandbox's processes hold it too)
  int64_t start_ns = 0;  // change time of `started`
  EffectsPlan plan;      // what confine() mounts
  std::string note;      // why there is no undo, when there is none
  std::unique_ptr<RunUndo> undo;
  // The snapshot before the run, for the layout's scan (null without one).
  const Snapshot* seen() const;
};

// Whether this kernel and root allow a run's overlay: ok, or why not.
OverlayStatus overlay_for_runs(const Workspace& ws);
// Whether a run started now reads its effects from an overlay (the full
// level, [run] overlay on, the kernel allows it) rather than from snapshots.
bool effects_from_overlay(const Workspace& ws);
// Tracked files whose names kaicoder may not write (check_name: not UTF-8,
// hidden characters, shell syntax, too long).
std::vector<std::string> unrestorable_names(const Workspace& ws);
// A run whose effects come from snapshots can neither hold nor put back a
// tracked file such a name: the run is refused before it runs (denied,
// naming them and what to do). Ok at the overlay, where a change to such a
// name never lands, and with snapshots_keep = 0 (no undo at all). `known`:
// unrestorable_names() when the caller has them.
Status run_restorable(const Workspace& ws, const std::vector<std::string>* known = nullptr);

// Under the lock, when run proposal `p` is claimed: its folder, and the
// overlay (`full` level, where the kernel has one and [run] overlay is on)
// or the snapshots and .git's files before it.
Result<EffectsRun> start_effects(Workspace& ws, const Proposal& p, SandboxMode mode);

// What became of a run's effects once it was recorded.
struct RunEffects {
  Entry entry;            // the entry as logged
  Effects fx;             // every effect, with its verdict
  std::string diff;       // the diff of the file effects, as shown (kept in the proposal)
  std::string rollback_id;  // of what landed; empty when nothing did
  std::vector<std::string> landed;  // root-relative paths that landed
  size_t held = 0, dropped = 0, conflicts = 0;
  std::vector<std::string> notes;  // trees written directly, ignored trees, what could not be put back
};

// Under the lock, after the command ended: read and judge its effects,
// land the plain ones, hold the sensitive ones (the proposal becomes
// `held`), drop the rest; record `entry` (the `run` entry as the caller
// wrote it: result, summary, approver) with the effects added to it, and the
// proposal's new state, all in the landing's one transaction.
Result<RunEffects> finish_effects(Workspace& ws, Proposal& p, EffectsRun& run, Entry entry);

// A run that did not start (its sandbox could not be set up): its folder
// and its snapshot go, nothing happened.
void discard_effects(Workspace& ws, EffectsRun& run);

// The effects kept with proposal `id` (effects.json, checked against the
// digest its sealed record holds) and their diff. not_found when it has none.
struct KeptEffects {
  Effects fx;
  std::string diff;
  std::string digest;  // what a decision on the held ones binds to
};
Result<KeptEffects> kept_effects(const Workspace& ws, const Proposal& p);

// The held effects of proposal `p` (state held) land (`keep`) or are
// dropped, by `decider`; either way logged, the proposal applied again and
// its run folder removed. conflict when `seen_digest` is not what is held
// now, or a held path changed meanwhile (that one is dropped, named).
Result<RunEffects> decide_held(Workspace& ws, Proposal& p, bool keep, const std::string& decider,
                               const std::string& seen_digest, const std::string& why = {});

// The sweep's part: roll forward a landing a crash interrupted, record runs
// whose process died (interrupted: their effects so far judged, the plain
// ones landed, the sensitive ones held, an entry), drop held effects past
// [approval] timeout. Returns one line per thing done, for the caller.
Result<std::vector<std::string>> recover_runs(Workspace& ws);

// What recover_runs would do, for the reading commands and doctor: one
// line per run folder that is not in flight (interrupted, a landing cut
// short). Reads only.
std::vector<std::string> inspect_runs(const Workspace& ws);

// The diff of `fx`'s file effects (created, changed, deleted files) with
// their before sides from `before` and after sides from `after`, capped as
// `opts` says; secrets and never-shown paths are named, not shown.
std::string effects_diff(const Effects& fx, const std::function<std::optional<std::string>(const Effect&)>& before,
                         const std::function<std::optional<std::string>(const Effect&)>& after,
                         const DiffOptions& opts);

// The one line per effect the changelog and a person read, with its
// verdict when it did not land: "src/ 0755 → 0757 (HELD: …)".
std::vector<std::string> effect_lines(const Effects& fx);

}  // namespace kai
