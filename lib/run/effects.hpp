#pragma once
// A run's effects (SPEC §5, kaicoder-run(1) "A run's effects"): what a
// command changed, as one changeset the gate sees, each effect with a
// verdict from the decision table:
//
//   lands   the approval of the command covers it;
//   held    a proposal could make it only at the confirm tier: it stays only
//           when the person types CONFIRM after seeing it;
//   never   a proposal could never make it: always dropped, never offered.
//
// The table is written once, in man/kaicoder-run.1 between the markers
// `effects-table-begin` and `effects-table-end`; CMake copies those lines
// into generated/effects_table.inc and effect_table() reads them: the page
// and the code cannot drift. Which row applies to an effect is decided
// here (classify); which verdict a row gives is the page's.
//
// The effects are read two ways, to the same model:
//   read_upper      from an overlay's upper folder against the live tree
//                   (the `full` level: cost in proportion to what the run wrote);
//   from_snapshots  from the tree changes between two snapshots plus the
//                   folder modes and .git's files captured before and after
//                   (the `landlock` level, and where no overlay can be mounted).
// Git's own files (refs, HEAD, the index, packed-refs, the stash's log,
// rebase todo lists, objects) get their meaning from git_meaning
// (lib/run/effects_git.cpp), which reads the objects with libgit2.
//
//   Effects fx = read_upper(upper, root, start);     // or from_snapshots(…)
//   git_meaning(fx, view);                           // refs, HEAD, index, stash
//   classify(fx, ctx);                               // a rule and verdict each

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/result.hpp"

namespace kai {

// The blob id of the regular file `name` in `dirfd`, read as a stream (never
// whole in memory); empty when it cannot be read.
std::string blob_at_fd(int dirfd, const std::string& name);

enum class EffectVerdict { lands, held, never };
std::string_view to_string(EffectVerdict v);  // lands held never
std::optional<EffectVerdict> parse_verdict(std::string_view s);

// One row of the decision table.
struct EffectRule {
  std::string id;  // "setid", "instructions", …
  EffectVerdict verdict = EffectVerdict::never;
  std::string text;  // what the row covers, as the page says it
};

// The rows of `text` (the lines between the markers): each
// `.It Li ID Ta VERDICT Ta TEXT`. usage naming the line for a row that does
// not parse.
Result<std::vector<EffectRule>> parse_effect_table(std::string_view text);
// The table of kaicoder-run(1), parsed once.
const std::vector<EffectRule>& effect_table();
// The row `id`; a row the page lost counts as never (the safe side).
EffectRule effect_rule(std::string_view id);
// Every row id the code gives an effect, in table order.
const std::vector<std::string_view>& effect_rule_ids();

// What a path (or a ref) was, or is.
enum class NodeType { none, file, dir, link, fifo, socket, device, ref };
std::string_view to_string(NodeType t);
struct EntrySide {
  NodeType type = NodeType::none;
  unsigned mode = 0;  // every permission bit, set-id and sticky included (07777)
  std::string blob;   // file: blob id of its bytes; link: blob id of its target text
  std::string text;   // link: its target; ref: its value (an object id, or "ref: NAME")
  uint64_t size = 0;
  bool exists() const { return type != NodeType::none; }
};

enum class EffectKind {
  file_created,
  file_changed,
  file_deleted,
  folder_created,
  folder_deleted,
  mode_changed,
  link_created,
  link_changed,
  link_deleted,
  special_created,  // a FIFO, socket or device
  ref_created,
  ref_moved,
  ref_deleted,
  head_moved,
  index_changed,
  stash_dropped,
  objects_added,
  object_changed,  // an existing git object overwritten or removed
  git_file,        // git's other state files: reflogs, ORIG_HEAD, a rebase's progress
};
std::string_view to_string(EffectKind k);
std::optional<EffectKind> parse_kind_of_effect(std::string_view s);
inline constexpr EffectKind k_all_effect_kinds[] = {
    EffectKind::file_created,   EffectKind::file_changed,  EffectKind::file_deleted,  EffectKind::folder_created,
    EffectKind::folder_deleted, EffectKind::mode_changed,  EffectKind::link_created,  EffectKind::link_changed,
    EffectKind::link_deleted,   EffectKind::special_created, EffectKind::ref_created, EffectKind::ref_moved,
    EffectKind::ref_deleted,    EffectKind::head_moved,    EffectKind::index_changed, EffectKind::stash_dropped,
    EffectKind::objects_added,  EffectKind::object_changed, EffectKind::git_file};

struct Effect {
  EffectKind kind = EffectKind::file_changed;
  // Root-relative path of the entry this effect changes: "" is the root
  // folder, ".git/…" one of git's files (a ref's loose file or packed-refs,
  // HEAD, the index). Several effects may share one path (two refs moved in
  // packed-refs): the path lands only when all of them do.
  std::string path;
  EntrySide before, after;
  std::string ref;     // refs and HEAD: "refs/heads/main", "HEAD"
  std::string detail;  // a commit's subject, "3 objects", "exec lines", …
  std::string rule;    // the decision table's row
  EffectVerdict verdict = EffectVerdict::lands;
  bool conflict = false;  // the path changed in the live tree while the run ran: never overwritten
};

struct Effects {
  std::vector<Effect> list;  // by path
  // Said beside them: trees written directly, the umask new files get.
  std::vector<std::string> notes;
};

// How the decision table is applied to one tree: what each path is. Filled
// by the gate from the workspace (guardrails, the policy, git's index and
// ignore rules); pure for the tests.
struct EffectContext {
  // "guarded", "harness" or "never-write" when the path is on one of those
  // lists (kaicoder's guarded paths, harness settings, secrets, deny_write,
  // backups); empty otherwise.
  std::function<std::string(const std::string& rel)> never_rule;
  // Why the path is protected or confirm tier ([paths]); empty when it is not.
  std::function<std::string(const std::string& rel)> confirm_reason;
  std::function<bool(const std::string& rel)> tracked;  // in the index before the run
  std::function<bool(const std::string& rel)> ignored;  // ignored by git's rules
  std::function<bool(const std::string& rel)> nested;   // inside a nested repository or submodule
};

// Gives every effect its rule and verdict (the first row that matches, in
// the table's order), and makes a path's effects all as strict as the
// strictest of them. A conflict is never landed whatever its verdict.
void classify(Effects& fx, const EffectContext& ctx);

// The effects a person reads: a file of .git whose meaning is told by
// another effect on the same path (a ref moved, the index changed) is not
// told again; the objects added are told once.
std::vector<const Effect*> shown_effects(const Effects& fx);

// The strictest verdict among `fx` (lands for none).
EffectVerdict strictest(const Effects& fx);

// Whether `rel` is one of the files harnesses and editors run or read as
// instructions (the built-in list of the `instructions` row).
bool is_instruction_file(std::string_view rel);

// One line for a person and the changelog: "src/a.txt created",
// "src/ 0755 → 0757", "refs/heads/main 177b9ca → 884b996 \"chore: tidy\"".
std::string describe(const Effect& e);
// "0755": a mode as the changelog shows it.
std::string mode_text(unsigned mode);

nlohmann::json to_json(const Effect& e);
nlohmann::json to_json(const Effects& fx);
Result<Effects> effects_from_json(const nlohmann::json& j);

// --- reading them ---

// The effects an overlay's upper folder `upper` holds against the live
// tree at `root` (lower): created, changed (bytes, mode, type) and deleted
// entries, whiteouts (a character device 0/0) and opaque folders
// (overlayfs's opaque attribute: every lower entry below is deleted) included;
// a folder the run only wrote into is no effect of its own. Files are
// hashed (blob ids) on both sides. Every live path an effect names whose
// change time is at or after `start_ns` (CLOCK_REALTIME) is marked a
// conflict. Entries under `skip` (root-relative prefixes such as
// ".kaicoder/") are left out. io when the upper folder cannot be read;
// usage when any folder in it cannot be read or folders nest more than
// 3,000 deep (as the snapshots' walk): effects not all known are none.
// `xattrs`: the namespace of overlayfs's own attributes the overlay was
// mounted with (user.overlay.* with userxattr, trusted.overlay.* when root
// mounted it); the other namespace's are ordinary attributes the command
// may have set, and mean nothing here.
enum class OverlayXattrs { user, trusted };
Result<Effects> read_upper(const std::filesystem::path& upper, const std::filesystem::path& root, int64_t start_ns,
                           const std::vector<std::string>& skip = {}, OverlayXattrs xattrs = OverlayXattrs::user);

// Before read_upper of an overlay mounted with trusted attributes and
// redirect_dir=on: a folder of the lower layer the run renamed is, in the
// upper folder, a folder holding only what the run changed in it, with
// trusted.overlay.redirect naming where it came from (the old name is a
// whiteout). Each such folder, and every folder below it, is made whole:
// the lower entries it does not hold are copied in (bytes, modes, owners,
// times; through `work`, the overlay's work folder, each renamed in once
// complete), it is marked opaque and its redirect removed. read_upper then
// reads the move as what it is: every file deleted at the old path and
// created at the new one (a rename, to the gate). Running it again after a
// crash finishes the job. Entries under `skip`, and those `keep_out` names
// (by their path in the tree: secrets, guarded paths), are not copied: the
// move leaves them where they were (their deletion at the old path is then
// an effect the decision table never lands). usage when a redirect is not a
// plain path, a device node would be copied, or a folder cannot be read or
// written: effects not all known are none.
Status settle_redirects(const std::filesystem::path& upper, const std::filesystem::path& root,
                        const std::filesystem::path& work, const std::vector<std::string>& skip = {},
                        const std::function<bool(const std::string& rel)>& keep_out = {});

// The modes of root's folders and the files of .git git writes in ordinary
// work, captured before and after a run at the levels without an overlay.
struct GitCapture {
  std::map<std::string, std::string> files;  // ".git/HEAD", ".git/refs/heads/main", … → bytes
  std::map<std::string, std::string> objects;  // ".git/objects/ab/cdef…" and packs → a stamp of size, time, inode
};
// Reads .git's refs, HEAD, packed-refs, the index, logs, ORIG_HEAD,
// rebase-*/ and sequencer/ files, and the stat stamps of loose objects and
// packs (the whole of objects/ is never read). An absent .git gives none.
GitCapture capture_git(const std::filesystem::path& root);

// One entry a snapshot diff found (lib/run/snapshot TreeChange, in this
// part's own words): its path and its sides.
struct SnapshotChange {
  std::string rel;
  EntrySide before, after;
};
// The effects of a run at the levels without an overlay: the snapshot's
// changes, the folder modes (`dirs_before`/`dirs_after`, root-relative,
// "" for the root), and .git's files before and after.
Effects from_snapshots(const std::vector<SnapshotChange>& changes, const std::map<std::string, unsigned>& dirs_before,
                       const std::map<std::string, unsigned>& dirs_after, const GitCapture& git_before,
                       const GitCapture& git_after);
// The modes of the folders of `root` named in `dirs` (and root itself, as "").
std::map<std::string, unsigned> folder_modes(const std::filesystem::path& root, const std::vector<std::string>& dirs);

// Why an overlay of `root` would fail for a process of `uid`:`gid` in a
// user namespace that maps only those (overlayfs cannot copy up a file whose
// owner or group it cannot map: EOVERFLOW), or empty when none is known:
// root, the entries at its top and the tracked files as git's index last
// saw them (their owner and group) are all the caller's. Reads no other
// folder of the tree.
std::string overlay_owner_problem(const std::filesystem::path& root, unsigned uid, unsigned gid);

// --- git's files ---

// Where git_meaning reads the repository as it was and as the run leaves it.
struct GitView {
  std::filesystem::path objects;                   // the repository's objects folder (live)
  std::vector<std::filesystem::path> new_objects;  // folders holding the objects the run added
  std::filesystem::path scratch;                   // a private folder for copies of an index
  // The bytes of one of .git's files (".git/HEAD") before and after the
  // run; nullopt: absent.
  std::function<std::optional<std::string>(const std::string& rel)> before, after;
  // A file of the tree as the run leaves it (type, mode, blob id); nullopt: absent.
  std::function<std::optional<EntrySide>(const std::string& rel)> file_after;
};

// Gives .git's effects their meaning: a changed loose ref or packed-refs
// becomes ref_created / ref_moved / ref_deleted per ref (with the commit's
// subject), HEAD head_moved, the index index_changed, the stash's log
// stash_dropped when it lost an entry, new objects one objects_added, a
// changed or removed object object_changed, rebase todo lists git_file.
// Marks each with whether a commit of the tree's own content made it (rule
// "commit"), or whether it is sensitive (rule "ref", "stash", "index"); the
// rest of the table is classify()'s.
void git_meaning(Effects& fx, const GitView& view);

}  // namespace kai
