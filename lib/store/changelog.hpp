#pragma once
// The markdown changelog (SPEC §6): newest entry first, one entry per action.
//
// Cost does not grow with history: when a prepend leaves the live file with
// more than 2*keep entries, the oldest `keep` (with any notes between them)
// move, unchanged and newest-first, to one archive file
// `<archive_dir>/<oldest-id>--<newest-id>.md` that is never rewritten. Nor
// does it grow with the size of entries (a changeset's names each of its
// files and backups): when a prepend would leave the live file larger than
// max_bytes, the oldest entries move until it holds at most half of that,
// the new entry always staying. The live file therefore holds at most
// 2*keep entries and max_bytes (or one entry larger than that), and an
// append rewrites no more. The archive is written before the live file, so
// a crash in between duplicates entries (readers skip the copies) and never
// loses any.
// Finding an entry by id needs the journal (lib/store/journal.hpp), not this file.
//
// Usage: Changelog log{live, archive_dir, keep};
//        log.prepend(entry);  // under the store lock
//        log.newest(20, filter);

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

struct Entry {
  std::string time;  // 2026-07-09T14:25:30Z
  std::string kind;  // edit write delete run rollback rejected timeout blocked
  // An empty value is "none" (no file, no backup, not reversible), which
  // the changelog prints as "—".
  std::string rollback_id;         // 20260709T142530Z[-N], or empty
  std::vector<std::string> files;  // absolute paths
  std::string action;              // edit_file write_file delete_file run_shell rollback, or empty
  std::string summary;
  std::string why;
  std::string backup;  // absolute path(s), or empty
  std::string approver;
  std::string result;    // ok, failed: …, rejected: …
  std::string rollback;  // "restore a.bak-kaicoder-X → a", "delete a", or empty
  size_t line = 0;       // 1-based line of the heading when parsed
};

// The entry exactly as SPEC §6 prints it, ending with a blank line. Every
// value is flattened to one trimmed line (line breaks become a space); an
// empty value prints "—", and parse_changelog gives an empty value back for
// it (files: an empty list).
std::string format_entry(const Entry& e);

// `value`, or the changelog's mark for none ("—") when it is empty: for any
// other place that shows an entry's field (the JSON of an entry).
std::string or_none(std::string_view value);

struct Malformed {
  size_t line = 0;
  std::string reason;
};
struct Parsed {
  std::vector<Entry> entries;  // in file order (newest first)
  std::vector<Malformed> malformed;
};
// Tolerant: text that is not an entry (a title, hand-written notes between
// entries) is skipped; an entry heading whose fields are missing or garbled
// is reported in `malformed` and skipped. Never fails. A "## " line counts as
// an entry heading when it has a "·", "rollback-id" or starts with a date;
// other headings are notes.
Parsed parse_changelog(std::string_view text);

struct ArchiveFile {
  std::filesystem::path file;
  Parsed parsed;
};

class Changelog {
public:
  // keep == 0 is taken as 1.
  static constexpr size_t k_max_bytes = size_t{4} << 20;
  Changelog(std::filesystem::path live, std::filesystem::path archive_dir, size_t keep = 500,
            size_t max_bytes = k_max_bytes);

  // Adds `e` before the first entry (atomic replace of the live file; a new
  // file starts with a title block), rotating as above. Text that is not an
  // entry (title, notes) is kept where it was. Errors: usage when the entry
  // would not parse back (bad time, kind or id); io.
  Status prepend(const Entry& e);
  // prepend(e), unless the live file already holds an entry with e's
  // rollback id (a change being finished again after a crash): the file
  // is read once for both. `before_write`, when given, runs once the entry
  // is to be added, before anything is written; its error is returned.
  // true when the entry was added.
  Result<bool> prepend_once(const Entry& e, const std::function<Status()>& before_write = {});

  // Up to `n` newest entries passing `keep_if`, newest first: the live file,
  // then archives newest-first, read only until `n` are found. n == 0 means
  // all. Copies left by an interrupted rotation are returned once. A missing
  // live file or archive folder counts as empty. Errors: io.
  Result<std::vector<Entry>> newest(size_t n, const std::function<bool(const Entry&)>& keep_if = {}) const;

  // ok when prepend() can read the live file (or there is none yet); denied
  // when it is a symlink, a hard link or not a regular file. Every read of
  // the changelog and its archives holds them to the rules of user files
  // (lib/paths/beneath read_owned), so a planted link cannot copy an outside
  // file's bytes into the changelog. Checked before a change is applied.
  Status check_readable() const;

  // Whether the live file holds an entry with this rollback id (recovery uses
  // it to avoid logging twice). Reads only the live file; missing = false.
  Result<bool> live_contains(std::string_view rollback_id) const;

  // The live file parsed, for doctor (malformed entries with line numbers).
  // Errors: not_found when there is no live file yet; io.
  Result<Parsed> parse_live() const;

  // Every archive file parsed, newest first, for doctor. Errors: io.
  Result<std::vector<ArchiveFile>> parse_archives() const;

  const std::filesystem::path& path() const { return m_live; }

private:
  // Once::yes: not when the live file holds e's rollback id already.
  enum class Once { no, yes };
  Result<bool> add(const Entry& e, Once once, const std::function<Status()>& before_write);

  std::filesystem::path m_live;
  std::filesystem::path m_archive_dir;
  size_t m_keep;
  size_t m_max_bytes;
};

}  // namespace kai
