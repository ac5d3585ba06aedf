#include "lib/store/changelog.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <sys/stat.h>
#include <system_error>
#include <unordered_set>

#include <fmt/format.h>

#include "lib/paths/beneath.hpp"
#include "lib/store/journal.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_none = "\xE2\x80\x94";  // "—": no file, no backup, not reversible
constexpr std::string_view k_dot = "\xC2\xB7";       // "·"
constexpr std::string_view k_sep = "  \xC2\xB7  ";   // heading separator
constexpr size_t k_value_column = 13;                // after "- approver:  "
constexpr size_t k_field_count = 8;
constexpr std::string_view k_labels[k_field_count] = {"file(s)", "action",   "summary", "why",
                                                      "backup",  "approver", "result",  "rollback"};
// Index 0 (files) is a list and handled apart; the rest map to strings.
std::string Entry::*const k_members[k_field_count] = {nullptr,        &Entry::action,  &Entry::summary,
                                                      &Entry::why,    &Entry::backup,  &Entry::approver,
                                                      &Entry::result, &Entry::rollback};

// Values must stay on one line, or the entry would no longer parse: every
// run of line breaks becomes one space, and edges are trimmed because the
// parser cannot tell padding from a value's own leading blanks.
std::string flatten(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool in_break = false;
  for (char c : v) {
    bool brk = c == '\n' || c == '\r';
    if (brk && !in_break) out += ' ';
    if (!brk) out += c;
    in_break = brk;
  }
  // Other characters that end a line for some reader (U+2028, NEL, form
  // feed, …) or drive a terminal that shows the file are spelled out, so no
  // field can start a `## ` heading or a `- field:` line of its own.
  return make_visible(trim(out), Allow::tab);
}

std::string flat_or_none(std::string_view v) { return or_none(flatten(v)); }

void append_field(std::string& out, std::string_view label, std::string_view value) {
  size_t used = label.size() + 3;  // "- " + label + ":"
  out += "- ";
  out += label;
  out += ':';
  out.append(used < k_value_column ? k_value_column - used : 1, ' ');
  out += value;
  out += '\n';
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Exactly 2026-07-09T14:25:30Z; parse_iso_utc is looser than a heading may be.
bool is_iso_time(std::string_view s) {
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i]) return false;
  return true;
}

// A "## " line is taken for an entry (and reported if garbled) when it has
// the separator, the id label, or starts with a date; any other heading is
// a hand-written note.
bool is_heading(std::string_view l) {
  if (l.substr(0, 3) != "## ") return false;
  std::string_view rest = l.substr(3);
  if (rest.find(k_dot) != std::string_view::npos || rest.find("rollback-id") != std::string_view::npos) return true;
  return rest.size() >= 11 && is_digit(rest[0]) && is_digit(rest[3]) && rest[4] == '-' && rest[10] == 'T';
}

struct OffsetLine {
  std::string_view text;
  size_t offset = 0;
};

std::vector<OffsetLine> lines_at_offsets(std::string_view text) {
  std::vector<OffsetLine> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back({l, pos});
    pos = end + 1;
  }
  return out;
}

std::vector<size_t> heading_offsets(std::string_view text) {
  std::vector<size_t> out;
  for (const OffsetLine& l : lines_at_offsets(text))
    if (is_heading(l.text)) out.push_back(l.offset);
  return out;
}

bool parse_heading(std::string_view l, Entry& e, std::string& reason) {
  std::vector<std::string_view> parts;
  std::string_view rest = l.substr(3);
  for (size_t at; (at = rest.find(k_dot)) != std::string_view::npos; rest.remove_prefix(at + k_dot.size()))
    parts.push_back(trim(rest.substr(0, at)));
  parts.push_back(trim(rest));
  if (parts.size() != 3) {
    reason = "heading is not 'TIME  \xC2\xB7  KIND  \xC2\xB7  rollback-id: ID'";
    return false;
  }
  constexpr std::string_view id_label = "rollback-id:";
  std::string_view id = parts[2].substr(0, id_label.size()) == id_label ? trim(parts[2].substr(id_label.size())) : "";
  if (!is_iso_time(parts[0]))
    reason = fmt::format("bad time '{}'", parts[0]);
  else if (parts[1].empty() || parts[1].find(' ') != std::string_view::npos)
    reason = fmt::format("bad kind '{}'", parts[1]);
  else if (id.empty())
    reason = "missing rollback-id";
  else if (id.find(' ') != std::string_view::npos)
    reason = fmt::format("bad rollback-id '{}'", id);
  if (!reason.empty()) return false;
  e.time = parts[0];
  e.kind = parts[1];
  e.rollback_id = id == k_none ? std::string_view() : id;
  return true;
}

// Files are absolute, so when the list starts with '/' only ", /" separates
// two of them: a comma inside a file name then survives the round trip.
std::vector<std::string> split_files(std::string_view v) {
  std::vector<std::string> out;
  if (v == k_none) return out;
  std::string_view sep = v.substr(0, 1) == "/" ? ", /" : ", ";
  for (size_t at; (at = v.find(sep)) != std::string_view::npos; v.remove_prefix(at + 2))
    out.emplace_back(v.substr(0, at));
  out.emplace_back(v);
  return out;
}

int field_index(std::string_view label) {
  for (size_t i = 0; i < k_field_count; ++i)
    if (k_labels[i] == label) return static_cast<int>(i);
  return -1;
}

// Reads the entry whose heading is lines[at]; returns the index of the first
// line after it. Field order is not enforced (a hand edit may reorder), but
// each field must appear once; "- " lines after the eighth field are notes.
size_t parse_entry_lines(const std::vector<OffsetLine>& lines, size_t at, Entry& e, Malformed& bad) {
  e.line = at + 1;
  if (!parse_heading(lines[at].text, e, bad.reason)) {
    bad.line = at + 1;
    return at + 1;
  }
  bool seen[k_field_count] = {};
  size_t found = 0;
  size_t i = at + 1;
  for (; i < lines.size() && found < k_field_count && lines[i].text.substr(0, 2) == "- "; ++i) {
    std::string_view l = lines[i].text;
    size_t colon = l.find(':');
    std::string_view label = l.substr(2, colon == std::string_view::npos ? l.size() : colon - 2);
    int f = field_index(label);
    if (colon == std::string_view::npos)
      bad.reason = fmt::format("expected 'NAME: VALUE', got '{}'", l);
    else if (f < 0)
      bad.reason = fmt::format("unknown field '{}'", trim(label));
    else if (seen[f])
      bad.reason = fmt::format("field '{}' appears twice", label);
    if (!bad.reason.empty()) {
      bad.line = i + 1;
      return i + 1;
    }
    auto idx = static_cast<size_t>(f);
    seen[idx] = true;
    ++found;
    std::string_view value = trim(l.substr(colon + 1));
    if (idx == 0)
      e.files = split_files(value);
    else
      e.*k_members[idx] = value == k_none ? std::string_view() : value;
  }
  if (found < k_field_count) {
    size_t missing = static_cast<size_t>(std::find(seen, seen + k_field_count, false) - seen);
    bad.line = at + 1;
    bad.reason = fmt::format("missing field '{}'", k_labels[missing]);
  }
  return i;
}

// What identifies an entry across files. A crash between writing an archive
// and the live file leaves byte-identical copies; entries without an id are
// compared whole so that two of them in one second are not merged.
std::string dedup_key(const Entry& e) {
  if (!e.rollback_id.empty()) return e.rollback_id + '\n' + e.time;
  return format_entry(e);
}

// Archive names carry ids read back from a hand-editable file: keep them to
// plain characters so they can never name another folder or split wrongly.
std::string name_key(const Entry& e) {
  std::string id = e.rollback_id;
  if (id.empty()) {
    id.clear();
    for (char c : e.time)
      if (c != '-' && c != ':') id += c;
  }
  std::string out;
  for (char c : id) {
    bool plain = std::isalnum(static_cast<unsigned char>(c)) || (c == '-' && (out.empty() || out.back() != '-'));
    out += plain ? c : '_';
  }
  return out.empty() ? "unknown" : out;
}

// "<oldest>--<newest>.md" or, for a second file of that name, "….2.md".
std::string newest_id_of(const fs::path& p) {
  std::string name = p.filename().string();
  size_t sep = name.find("--");
  std::string v = sep == std::string::npos ? name : name.substr(sep + 2);
  return v.substr(0, v.find('.'));
}

// Archive files newest-first. A missing folder just means no rotation yet;
// so does a state dir that is not a folder (doctor reports that one), so
// that `log` still shows the live entries.
Result<std::vector<fs::path>> list_archives(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) return out;
    return make_error(Errc::io, fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() > 3 && name.front() != '.' && name.ends_with(".md") && name.find("--") != std::string::npos)
      out.push_back(it->path());
  }
  if (ec) return make_error(Errc::io, fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    std::string na = newest_id_of(a), nb = newest_id_of(b);
    if (na != nb) return rollback_id_newer(na, nb);
    return a.filename() > b.filename();
  });
  return out;
}

std::string title_block(const fs::path& live, const fs::path& archive_dir) {
  fs::path base = live.parent_path().empty() ? fs::path(".") : live.parent_path();
  fs::path rel = archive_dir.lexically_relative(base);
  std::string where = rel.empty() || *rel.begin() == ".." ? archive_dir.string() : rel.string();
  if (!where.ends_with('/')) where += '/';
  return fmt::format("# KAI Coder changelog\n\nNewest entries first; older entries move to `{}`.\n\n", where);
}

// Writes the oldest block to its own archive file. If a file of that name
// already holds exactly this text, an earlier rotation was cut short after
// the archive was written: nothing more to do. Any other file of that name
// is never overwritten, since it may be the only copy of its entries.
Status write_archive(const fs::path& dir, std::string_view block, std::string_view new_key) {
  // A block of garbled entries only still needs a unique, sortable name.
  Parsed moved = parse_changelog(block);
  std::string newest = moved.entries.empty() ? std::string(new_key) : name_key(moved.entries.front());
  std::string oldest = moved.entries.empty() ? "unparsed" : name_key(moved.entries.back());
  std::string text =
      fmt::format("# KAI Coder changelog archive\n\nEntries {} to {}, newest first.\n\n{}", oldest, newest, block);
  if (!text.ends_with('\n')) text += '\n';
  std::error_code ec;
  bool had_dir = fs::is_directory(dir, ec);
  if (!had_dir) {
    KAI_TRY(make_dirs(dir));
    KAI_TRY(fsync_dir(dir.parent_path().empty() ? fs::path(".") : dir.parent_path()));
  }
  for (int n = 1; n < 1000; ++n) {
    std::string name =
        n == 1 ? fmt::format("{}--{}.md", oldest, newest) : fmt::format("{}--{}.{}.md", oldest, newest, n);
    fs::path file = dir / name;
    Result<std::string> old = read_owned(file);
    if (old && *old == text) return ok_status();
    if (old) continue;
    if (old.error().code != Errc::not_found) return old.error();
    return write_owned(file, text);
  }
  return make_error(
      Errc::io, fmt::format("cannot archive changelog entries {} to {}: too many files of that name", oldest, newest),
      fmt::format("look into '{}'", dir.string()));
}

// Hands each well-formed entry to `take`, in file order, until it returns
// false: newest(1) then stops after the first entry instead of building all.
void scan(std::string_view text, std::vector<Malformed>* malformed, const std::function<bool(Entry&)>& take) {
  std::vector<OffsetLine> lines = lines_at_offsets(text);
  for (size_t i = 0; i < lines.size();) {
    if (!is_heading(lines[i].text)) {
      ++i;
      continue;
    }
    Entry e;
    Malformed bad;
    i = parse_entry_lines(lines, i, e, bad);
    if (!bad.reason.empty()) {
      if (malformed) malformed->push_back(std::move(bad));
    } else if (!take(e)) {
      return;
    }
  }
}

// Entries from several files, newest first, each counted once.
struct Collector {
  size_t want = 0;  // 0 = all
  const std::function<bool(const Entry&)>* keep_if = nullptr;
  std::vector<Entry> out;
  std::unordered_set<std::string> seen;  // keys of the files already read
  std::vector<std::string> file_keys;    // keys of the file being read

  bool full() const { return want != 0 && out.size() >= want; }
  // Returns false once there are enough entries.
  bool take(Entry& e) {
    std::string key = dedup_key(e);
    if (seen.count(key) != 0) return true;
    file_keys.push_back(std::move(key));
    if (!*keep_if || (*keep_if)(e)) out.push_back(std::move(e));
    return !full();
  }
  // Duplicates only arise between files, so a file's keys join `seen` after
  // it is read: within one file every entry is its own action.
  void end_file() {
    seen.insert(std::make_move_iterator(file_keys.begin()), std::make_move_iterator(file_keys.end()));
    file_keys.clear();
  }
};

}  // namespace

std::string or_none(std::string_view value) { return value.empty() ? std::string(k_none) : std::string(value); }

std::string format_entry(const Entry& e) {
  std::string files;
  for (const std::string& f : e.files) {
    std::string one = flatten(f);
    if (one.empty()) continue;
    if (!files.empty()) files += ", ";
    files += one;
  }
  std::string out = fmt::format("## {}{}{}{}rollback-id: {}\n", flat_or_none(e.time), k_sep, flat_or_none(e.kind),
                                k_sep, flat_or_none(e.rollback_id));
  append_field(out, k_labels[0], or_none(files));
  for (size_t i = 1; i < k_field_count; ++i) append_field(out, k_labels[i], flat_or_none(e.*k_members[i]));
  out += '\n';
  return out;
}

Parsed parse_changelog(std::string_view text) {
  Parsed out;
  scan(text, &out.malformed, [&](Entry& e) {
    out.entries.push_back(std::move(e));
    return true;
  });
  return out;
}

Changelog::Changelog(fs::path live, fs::path archive_dir, size_t keep, size_t max_bytes)
    : m_live(std::move(live)), m_archive_dir(std::move(archive_dir)), m_keep(keep == 0 ? 1 : keep),
      m_max_bytes(max_bytes) {}

namespace {
// Whether the changelog text `live` holds an entry with this rollback id.
// Text that does not hold the id anywhere holds no such entry, and is not
// parsed.
bool holds_id(std::string_view live, std::string_view rollback_id) {
  // memmem, not string_view::find: the live file is megabytes of dates and
  // ids, and find() stops at every byte that begins one.
  if (rollback_id.empty() || ::memmem(live.data(), live.size(), rollback_id.data(), rollback_id.size()) == nullptr)
    return false;
  bool found = false;
  scan(live, nullptr, [&](Entry& x) { return !(found = x.rollback_id == rollback_id); });
  return found;
}
}  // namespace

Status Changelog::prepend(const Entry& e) {
  KAI_TRY(add(e, Once::no, {}));
  return ok_status();
}

Result<bool> Changelog::prepend_once(const Entry& e, const std::function<Status()>& before_write) {
  return add(e, Once::yes, before_write);
}

Result<bool> Changelog::add(const Entry& e, Once once, const std::function<Status()>& before_write) {
  std::string entry = format_entry(e);
  // Refuse to write what could not be read back: the file is the audit trail.
  Parsed self = parse_changelog(entry);
  if (!self.malformed.empty())
    return make_error(Errc::usage, fmt::format("cannot log entry: {}", self.malformed.front().reason));

  std::string text;
  mode_t mode = 0644;
  if (Result<std::string> cur = read_owned(m_live)) {
    text = std::move(*cur);
    struct stat st {};
    if (::stat(m_live.c_str(), &st) == 0) mode = st.st_mode & 07777;
  } else if (cur.error().code != Errc::not_found) {
    return cur.error();
  }
  if (once == Once::yes && holds_id(text, e.rollback_id)) return false;
  if (before_write) KAI_TRY(before_write());
  if (text.empty()) text = title_block(m_live, m_archive_dir);

  // Only the live file is scanned, so this costs O(keep), not O(history).
  std::vector<size_t> heads = heading_offsets(text);
  if (heads.empty()) {
    // First entry under a title or notes: leave a blank line above it.
    if (!text.ends_with('\n')) text += '\n';
    if (!text.ends_with("\n\n")) text += '\n';
  }
  // The new file is what comes before the first entry, the new entry, and
  // the entries kept, written as those three pieces: the live file (a
  // changeset's entry names every file and backup) is never copied whole.
  const size_t at = heads.empty() ? text.size() : heads.front();
  // How many of the entries there stay: with the new one, more than 2*keep
  // entries, and the oldest keep go; larger than max_bytes, and the oldest
  // go until what stays is half of that.
  size_t stay = heads.size();
  if (heads.size() + 1 > 2 * m_keep) stay = heads.size() - m_keep;
  // The live file's size with the first k entries there staying.
  auto size_with = [&](size_t k) { return (k < heads.size() ? heads[k] : text.size()) + entry.size(); };
  if (size_with(heads.size()) > m_max_bytes) {
    size_t k = 0;
    while (k < stay && size_with(k + 1) <= m_max_bytes / 2) ++k;
    stay = k;
  }
  size_t end = text.size();
  if (stay < heads.size()) {
    // Archive first: a crash before the live file is replaced leaves the
    // entries in both places (readers skip the copy), never in neither.
    end = heads[stay];
    KAI_TRY(write_archive(m_archive_dir, std::string_view(text).substr(end), name_key(self.entries.front())));
  }
  const std::string_view all(text);
  const std::string_view pieces[] = {all.substr(0, at), entry, all.substr(at, end - at)};
  KAI_TRY(write_owned(m_live, pieces, mode));
  return true;
}

Status Changelog::check_readable() const {
  // Opened and checked, not read: the file may be megabytes.
  Status live = check_owned(m_live);
  if (!live && live.error().code != Errc::not_found) return live.error();
  return ok_status();
}

Result<std::vector<Entry>> Changelog::newest(size_t n, const std::function<bool(const Entry&)>& keep_if) const {
  Collector c;
  c.want = n;
  c.keep_if = &keep_if;
  auto take = [&c](Entry& e) { return c.take(e); };
  if (Result<std::string> live = read_owned(m_live))
    scan(*live, nullptr, take);
  else if (live.error().code != Errc::not_found)
    return live.error();
  if (c.full()) return std::move(c.out);
  c.end_file();

  Result<std::vector<fs::path>> archives = list_archives(m_archive_dir);
  if (!archives) return archives.error();
  for (const fs::path& p : *archives) {
    Result<std::string> text = read_owned(p);
    if (!text) return text.error();
    scan(*text, nullptr, take);
    if (c.full()) break;
    c.end_file();
  }
  return std::move(c.out);
}

Result<bool> Changelog::live_contains(std::string_view rollback_id) const {
  Result<std::string> live = read_owned(m_live);
  if (!live) {
    if (live.error().code == Errc::not_found) return false;
    return live.error();
  }
  return holds_id(*live, rollback_id);
}

Result<Parsed> Changelog::parse_live() const {
  Result<std::string> live = read_owned(m_live);
  if (!live) return live.error();
  return parse_changelog(*live);
}

Result<std::vector<ArchiveFile>> Changelog::parse_archives() const {
  Result<std::vector<fs::path>> archives = list_archives(m_archive_dir);
  if (!archives) return archives.error();
  std::vector<ArchiveFile> out;
  for (const fs::path& p : *archives) {
    Result<std::string> text = read_owned(p);
    if (!text) return text.error();
    out.push_back({p, parse_changelog(*text)});
  }
  return out;
}

}  // namespace kai
