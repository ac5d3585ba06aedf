#pragma once
// The journal: one structured record per reversible changelog entry, kept in
// <state>/journal/<rollback-id>.json. It is what makes rollback exact (blob
// ids and modes before and after, the backup's blob id) and cheap: finding an
// entry by id is one file open, `last` is one pointer file, and "which entry
// touched this path last" is one file per path (paths/<blob id of the path>)
// — none of it grows with history. A pointer that is there is rewritten in
// place (lib/util/fs, overwrite_in_place: no new inode per path, which was
// most of the kernel's cost of a changeset); a new one is made by a rename.
//
// Every record carries a "seal" (lib/store/mac) over the rest of it, bound to the
// root and its rollback id; each pointer file holds the id and, on a second
// line, a seal bound to what it points from (LAST, or the path); bytes after
// the second line count for nothing. load() and last() refuse what does not
// verify; latest_for() reads a path pointer that does not verify (forged, or
// torn by a power cut mid-write) from the sealed records instead.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lib/store/mac.hpp"
#include "lib/result.hpp"
#include "lib/util/time.hpp"

namespace kai {

struct FileSide {
  bool exists = false;
  std::string blob;
  unsigned mode = 0644;
};

struct FileChange {
  std::string rel;  // root-relative path
  FileSide before, after;
  std::string backup_rel;  // root-relative backup of `before`, empty when none
  std::string backup_blob;
};

struct Record {
  std::string id;          // rollback id
  std::string kind;        // edit write delete rollback run
  std::string time;        // ISO UTC
  int proposal = 0;        // 0 for rollbacks
  std::string rolls_back;  // for kind rollback: the id it undid
  std::vector<FileChange> files;
};

// A file's side as records hold it, {exists, blob, mode}: a journal
// record's and an intent's before and after, a changeset's base.
nlohmann::json side_json(const FileSide& s);

// A transaction's files as its journal record and its intent hold them:
// an array of {path, before, after, backup, backup_blob}, each side
// {exists, blob, mode}. files_from reads the "files" member of `record`
// (none, or not an array: no files).
nlohmann::json files_json(const std::vector<FileChange>& files);
std::vector<FileChange> files_from(const nlohmann::json& record);

// Whether rollback id `a` names a later action than `b`: by time, then by
// suffix as a number ("-10" comes after "-9"; no suffix is the first).
bool rollback_id_newer(std::string_view a, std::string_view b);

// Whether `s` has a rollback id's shape: 20260709T142530Z, maybe -N after
// it (N a proposal-id-like decimal).
bool rollback_id_shape(std::string_view s);

class Journal {
public:
  explicit Journal(std::filesystem::path dir);
  // Seal and check records with `s` (Workspace::open sets the owner's).
  void use(Sealer s);

  // A rollback id for time `t` not used yet: 20260709T142530Z, then -2, -3…
  // up to -999 (ids stay within the 24 characters lib/paths counts on).
  // Caller holds the store lock. `taken` may reject more candidates (say, a
  // backup name already on disk); an error from it is returned, never taken
  // for "in use". Errc::conflict when every candidate is taken.
  Result<std::string> fresh_id(TimePoint t, const std::function<Result<bool>(const std::string&)>& taken = {}) const;

  // Stores the record and moves the `last` and per-path pointers to it:
  // write_record() then point_to().
  Status write(const Record& r) const;
  // The record alone, as a new file: until pointers name it, removing it
  // (remove()) leaves the journal as it was.
  Status write_record(const Record& r) const;
  // The `last` and per-path pointers moved to `r`, which write_record()
  // stored. Idempotent. A pointer left naming a record that is gone (a
  // transaction undone after its pointers moved) is read as if it named the
  // newest record there is (for `last`) or that touched its path.
  Status point_to(const Record& r) const;
  // Unlink the record of `id` (a transaction undone before it counted).
  Status remove(const std::string& id) const;
  bool has(const std::string& id) const;
  // not_found for an unknown id; conflict when its seal does not verify
  // (denied without a key); io when it is corrupt. The file is read each
  // time; the bytes read last, when the same again, are not parsed and
  // checked again (LoadCache: a rollback reads its record before the
  // question, after the answer and as it applies, a changeset's naming each
  // of its files).
  Result<Record> load(const std::string& id) const;
  // The newest record, or not_found when there is none; conflict when the
  // pointer's seal does not verify.
  Result<std::string> last() const;
  // The newest record that touched `rel`, empty when none (no pointer). A
  // pointer that does not verify, or names a record that is gone, is
  // answered from the sealed records, newest first.
  std::string latest_for(const std::string& rel) const;
  // Every record's id, newest first (rollback_id_newer). Listed from the
  // names on disk: load() still judges each record.
  std::vector<std::string> ids() const;

private:
  // The rollback ids of every record, newest first.
  std::vector<std::string> ids_newest_first() const;
  std::filesystem::path m_dir;
  Sealer m_seal;
  // The record loaded last, by its exact bytes: any byte changed on disk
  // misses; a new sealer (use()) starts an empty one.
  struct LoadCache;
  std::shared_ptr<LoadCache> m_load_cache;  // shared by copies with this sealer
};

}  // namespace kai
