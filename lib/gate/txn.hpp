#pragma once
// The transaction under every apply and rollback (SPEC §5): the files it
// changes, the intent recorded before the tree is touched, the steps that
// make it happen and those that finish or undo it after a crash.
//
//   intent → backups (exclusive) → atomic replace/unlink → journal →
//   changelog → proposal status → intent removed.
//
// One transaction may change many files (a changeset, a rollback of one):
// recovery finishes it when every file holds its new bytes and mode, and
// undoes it otherwise, so the tree ends wholly old or wholly new.
//
// All functions here expect the caller to hold the store lock.
//
// A transaction's files are root-relative, with one exception: the
// user-level settings files of agent harnesses, which `kaicoder integrate
// --user` writes in the owner's home (Workspace::home), are named "~/REL".
// Only the names user_settings_file() accepts may be written there, each
// opened beneath the home as files are beneath root (no symlink followed),
// with its backup beside it: the same intent, journal record, changelog
// entry and rollback as any transaction.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lib/gate/apply.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/store/changelog.hpp"
#include "lib/store/journal.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai::txn {

// Whether `rel` names a harness's user-level settings file in the owner's
// home ("~/.claude.json", "~/.codex/config.toml", …) or the folder holding
// one ("~/.codex"): the only places outside root a transaction may touch.
bool user_settings_file(std::string_view rel);

// Where a transaction's file lives: `base` (root, or the owner's home for a
// "~/" name) and the path beneath it. denied for a "~/" name that is not a
// user settings file, or when the owner's home is unknown.
struct Place {
  std::filesystem::path base;
  std::string rel;
};
Result<Place> place_of(const Workspace& ws, const std::string& rel);
// The absolute path of a transaction's file (or backup), as the changelog shows it.
std::filesystem::path abs_path(const Workspace& ws, const std::string& rel);

std::string dir_of(const std::string& rel);   // "a/b/" for "a/b/c", "" for "c"
std::string base_of(const std::string& rel);  // "c" for "a/b/c"
std::string backup_name(const std::string& name, const std::string& id);
// ".NAME.kaicoder-tmp-ID": where transaction `id` writes the new bytes of
// `name` before renaming them over it (NAME shortened to fit NAME_MAX).
std::string temp_name(const std::string& name, const std::string& id);
// Where transaction `id` keeps a file it removes that an earlier entry
// created (a rollback of a created file): in the state dir, not beside the
// file, so the folders that entry created can go with it:
// "<state>/kept/<id>/<blob id of rel>", root-relative.
std::string kept_dir(const Workspace& ws, const std::string& id);
std::string kept_backup(const Workspace& ws, const std::string& id, const std::string& rel);

// The backup `f` names, as it is now (beside the file, or kept in the state
// dir), its folder taken from `folders` when given.
class Folders;
Result<FileState> read_backup(const Workspace& ws, const FileChange& f, Folders* folders = nullptr);

// Whether anything holds the backup name or the temp name for `id` beside
// `name` in `dir`.
Result<bool> backup_taken(const Dir& dir, const std::string& name, const std::string& id);

FileSide side_of(const FileState& s);
// Fills in the blob id of `s`'s bytes once, so that side_of and same
// reuse it instead of hashing the file again.
void hash_once(FileState& s);
// `s` holds what `a` describes: existence and bytes, and the permission
// bits too when `with_mode`.
bool same(const FileSide& a, const FileState& s, bool with_mode = false);
// Why entry `id` cannot be rolled back: `rel` no longer holds what the
// entry wrote (`exists`: it is there with other bytes; else removed). Names
// the later entry that changed it, when the journal holds one.
Error changed_since(Workspace& ws, const std::string& id, const std::string& rel, bool exists);
// Whether a change of `f` is told apart by its mode (its bytes may stay).
bool mode_matters(const FileChange& f);

// One file of a transaction, opened beneath root, guardrails checked.
struct Target {
  std::string rel, name;
  Dir dir;
  FileState current;
  // Opened with Read::stat: `current` holds what a stat tells and, as its
  // blob, the one it must still have; its bytes are read and checked once,
  // from the backup that takes them (take_backup), before any file changes.
  bool check_at_backup = false;
};
// Which guardrails a target passes. tree: every one (SPEC §7). own_config:
// the same, except that the root's kaicoder.toml itself may be written:
// only by kaicoder's own "always allow" (lib/gate/always_allow) and the
// rollback of what it wrote, both decided by the owner at a terminal.
enum class Guard { tree, own_config };
// The root's own config file, as a transaction names it.
inline constexpr std::string_view k_root_config = "kaicoder.toml";
// How a target's current bytes are read: whole (every change that edits
// them), or hashed as a stream when larger than k_whole_max (a rollback,
// which only compares the file and moves it aside: a run may have left a
// file of any size, and undoing it must not take that much memory), or not
// yet (stat: a changeset or a rollback after the answer, whose files are
// replaced whole; each is read once, as its backup, and refused there when
// it is not what was shown, hashed as a stream past k_whole_max).
enum class Read { whole, or_hash, stat };
inline constexpr size_t k_whole_max = size_t{64} << 20;
// Whether a "~/" name stands for the owner's home: only in a transaction of
// integrate --user (and its rollback). Anywhere else it is a path of the
// tree under a folder named '~', which check_write refuses.
enum class Home { no, yes };
Result<Target> open_target(Workspace& ws, const std::string& rel, CreateDirs create, Guard guard = Guard::tree,
                           Read read = Read::whole, Home home = Home::no);

// The folders of one transaction's files, each opened beneath its base
// once and shared by every file in it (Dir::share): one descriptor a
// folder, however many files, and no folder walked again for each file.
// Held for one look at a proposal's files (its diff, before the question)
// or for one transaction (after the answer), never across the question:
// what the write uses is opened after the person said yes. A folder that
// does not exist is not kept: a later call may create it. At most
// k_keep_max folders are kept open, and no more than a quarter of the
// open-file limit; beyond that each is opened for its file alone. (A
// transaction's targets still hold one descriptor for each folder they lie
// in until it is done: folder_room makes room for them first.)
class Folders {
public:
  explicit Folders(const Workspace& ws);
  // The folder holding `rel` (as target_rel returns it, or a backup's name).
  Result<Dir> parent(const std::string& rel, CreateDirs create);
  static constexpr size_t k_keep_max = 256;

private:
  const Workspace& m_ws;
  size_t m_keep_max;
  std::map<std::string, Dir> m_open;  // by the folder's name, as dir_of gives it
};
// Room for a transaction over `rels` to hold one open folder for each
// folder they lie in until it is done (room_for_descriptors, lib/util/fs):
// io, before anything is opened or changed, when the hard limit on open
// files is too low for them.
Status folder_room(const std::vector<std::string>& rels, std::string_view what);
// open_target with the folders of its transaction.
Result<Target> open_target(Workspace& ws, Folders& folders, const std::string& rel, CreateDirs create,
                           Guard guard = Guard::tree, Read read = Read::whole, Home home = Home::no);
// A path as kaicoder stored it in a sealed record (a changeset's, resolved
// when it was proposed; a journal record's, when the change was made),
// checked against the guardrails as it stands
// and not walked on disk a second time: the folder opened for it
// (open_parent: no symlink followed, no mount crossed) refuses a symlink or
// mount planted since. open_stored then reads it in that folder.
Status check_stored(Workspace& ws, const std::string& rel, Guard guard = Guard::tree, Home home = Home::no);
Result<Target> open_stored(Workspace& ws, Folders& folders, const std::string& rel, CreateDirs create,
                           Read read = Read::whole);

// The record of `tg` becoming `after` (nullopt: removed) with permission
// bits `mode`, its backup named for transaction `id` when it exists now.
FileChange change_of(const Target& tg, const std::optional<std::string>& after, unsigned mode, const std::string& id);
// A folder made for new files: recorded, so that an undo or a rollback
// removes it again when it is empty.
FileChange made_folder(const std::string& rel);

// The folders a transaction's new files need that do not exist yet: noted
// (add) before the targets are opened, which makes them, and removed again
// when empty unless the transaction ran (keep): a change refused before it
// began leaves no folder behind.
class MadeFolders {
public:
  explicit MadeFolders(Workspace& ws) : m_ws(ws) {}
  MadeFolders(const MadeFolders&) = delete;
  MadeFolders& operator=(const MadeFolders&) = delete;
  ~MadeFolders();
  // Note the missing folders on the way to root-relative `rel`.
  void add(const std::string& rel);
  // Outermost first.
  const std::vector<std::string>& folders() const { return m_made; }
  void keep() { m_keep = true; }

private:
  Workspace& m_ws;
  std::vector<std::string> m_made;
  std::set<std::string> m_there;  // folders found there: a changeset's files share few
  bool m_keep = false;
};

// A rollback id for a transaction at `t` over `targets`: free in the
// journal, and its backup name free beside every target.
Result<std::string> fresh_txn_id(Workspace& ws, TimePoint t, const std::vector<Target>& targets);

struct Txn {
  Record rec;
  Entry entry;
  int proposal = 0;  // proposal whose status follows the outcome
  // That proposal's record as the caller holds it under the store lock,
  // loaded sealed or just saved (apply_proposal): its status is taken from
  // here and written from a copy of it, not read and verified again (a
  // changeset's record is hundreds of KB). Null: read from the store, as
  // recovery does.
  const Proposal* live = nullptr;
  State done_state = State::applied;
  // The proposal's status before the transaction (execute() notes it), put
  // back when the transaction is undone after it wrote the new one.
  struct Before {
    std::string state, rollback_id, backup, result;
    int outcome_code = 0;
  };
  std::optional<Before> was;
};

// How the tree writes of one transaction reach the disk. each: every file
// and folder is synced as it is written. batched: nothing is synced while
// the files are written, then the file system holding the root is synced
// once (syncfs) before the journal records the change: one flush for a
// change of hundreds of files instead of two each.
enum class Durability { each, batched };

// Run a transaction: `targets[i]` becomes `after[i]` (nullopt = removed),
// for the file entries of t.rec.files in order (folder entries, mode
// k_mode_dir, are skipped):
//
//   intent → room reserved for the records → every new file written as a
//   temp beside it → backups (hard links) → each temp renamed over its file
//   (or the file unlinked) → room given back → journal record, pointers,
//   proposal status → changelog entry (the change counts) → intent removed.
//
// A failure before the changelog holds the entry is undone before this
// returns, by renames and unlinks that need no new space: the error then
// says "nothing changed", and how many files were put back. A failure after
// it leaves the intent for recover(), and says so.
Status execute(Workspace& ws, Txn& t, std::vector<Target>& targets,
               const std::vector<std::optional<std::string>>& after, Durability durability = Durability::each);

// The room execute() takes for the records written after the tree (the
// journal record of about `intent_bytes`, its pointers, the changelog, the
// proposal's status), as a file in the state dir: taken before the tree is
// touched, given back (release_room) just before the records are written.
// io, saying how much is needed and free, when the room is not there. For a
// change that lands other than through execute() (a run's effects,
// lib/gate/run_effects), in the same order.
Status reserve_room(Workspace& ws, const Txn& t, uint64_t intent_bytes);
void release_room(const Workspace& ws);

// The changelog entry of `t`: every file, every backup in the same order
// ("—" for a file that had none, when there are several), and how to undo.
Entry make_entry(const Workspace& ws, const Txn& t, const std::string& kind, const std::string& action);

// The entry of an apply of proposal `p`: its summary and why, the approver,
// and a result that says when a failed validation was overridden.
void describe_apply(const Workspace& ws, Entry& e, const Proposal& p, const std::string& approver, bool forced);

// `p` once `t` applied it (status, rollback id, `backup`, result), the
// "applied" notify event queued, and the outcome to report.
Outcome record_applied(Workspace& ws, Proposal& p, const Txn& t, std::string backup);

// Remove folder `rel` if it is empty; anything else is left as it is.
void remove_empty_dir(Workspace& ws, const std::string& rel);

}  // namespace kai::txn
