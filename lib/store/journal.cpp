#include "lib/store/journal.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/paths/beneath.hpp"
#include "lib/store/proposal.hpp"
#include "lib/util/git.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/json_bounded.hpp"
#include "lib/util/last_read.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

// Built in place, member by member: a changeset's record holds thousands
// of these, and an initializer list copies each value it is given.
json side_json(const FileSide& s) {
  json j = json::object();
  auto& o = j.get_ref<json::object_t&>();
  o.emplace("exists", s.exists);
  o.emplace("blob", s.blob);
  o.emplace("mode", s.mode);
  return j;
}

namespace {
// Member `key` of file entry `f` (missing, or not an object: a side that
// does not exist).
FileSide side_from(const json& f, const char* key) {
  auto it = f.find(key);
  if (it == f.end() || !it->is_object()) return FileSide{};
  return {it->value("exists", false), it->value("blob", ""), it->value("mode", 0644u)};
}

bool valid_id(const std::string& id) {
  if (id.size() < 16 || id.size() > 24) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  return true;
}
}  // namespace

json files_json(const std::vector<FileChange>& files) {
  json out = json::array();
  auto& all = out.get_ref<json::array_t&>();
  all.reserve(files.size());
  for (const FileChange& f : files) {
    json e = json::object();
    auto& o = e.get_ref<json::object_t&>();
    o.emplace("path", f.rel);
    o.emplace("before", side_json(f.before));
    o.emplace("after", side_json(f.after));
    o.emplace("backup", f.backup_rel);
    o.emplace("backup_blob", f.backup_blob);
    all.push_back(std::move(e));
  }
  return out;
}

std::vector<FileChange> files_from(const json& record) {
  std::vector<FileChange> out;
  auto files = record.is_object() ? record.find("files") : record.end();
  if (files == record.end() || !files->is_array()) return out;
  out.reserve(files->size());
  for (const json& f : *files) {
    if (!f.is_object()) {  // counts as an entry of no fields
      out.push_back(FileChange{"", FileSide{}, FileSide{}, "", ""});
      continue;
    }
    out.push_back({f.value("path", ""), side_from(f, "before"), side_from(f, "after"), f.value("backup", ""),
                   f.value("backup_blob", "")});
  }
  return out;
}

bool rollback_id_shape(std::string_view s) {
  if (s.size() < 16) return false;
  for (size_t i = 0; i < 16; ++i) {
    const char c = s[i];
    const bool ok = i == 8 ? c == 'T' : i == 15 ? c == 'Z' : c >= '0' && c <= '9';
    if (!ok) return false;
  }
  return s.size() == 16 || (s[16] == '-' && parse_proposal_id(s.substr(17)).has_value());
}

Result<std::string> Journal::fresh_id(TimePoint t, const std::function<Result<bool>(const std::string&)>& taken) const {
  constexpr int k_max_tries = 999;
  const std::string base = compact_utc(t);
  for (int n = 1; n <= k_max_tries; ++n) {
    std::string id = n == 1 ? base : fmt::format("{}-{}", base, n);
    if (has(id)) continue;
    if (!taken) return id;
    Result<bool> used = taken(id);
    if (!used) return used.error();
    if (!*used) return id;
  }
  return make_error(Errc::conflict,
                    fmt::format("no free rollback id for {}: {} candidates are taken", base, k_max_tries),
                    "remove stray *.bak-kaicoder-* files beside the file, then try again");
}

bool Journal::has(const std::string& id) const {
  std::error_code ec;
  return valid_id(id) && fs::exists(m_dir / (id + ".json"), ec);
}

Status Journal::write(const Record& r) const {
  KAI_TRY(write_record(r));
  return point_to(r);
}

Status Journal::write_record(const Record& r) const {
  KAI_TRY(make_dirs(m_dir / "paths", 0700));
  json j = {{"id", r.id},
            {"kind", r.kind},
            {"time", r.time},
            {"proposal", r.proposal},
            {"rolls_back", r.rolls_back},
            {"files", files_json(r.files)}};
  auto mac = m_seal.seal("journal", r.id, j.dump());
  if (!mac) return mac.error();
  j["seal"] = *mac;
  // The record first: a pointer must never name a record that is not there.
  // Compact, as it was sealed: a changeset's record names every file.
  return write_file_atomic(m_dir / (r.id + ".json"), j.dump() + "\n", 0600);
}

Status Journal::point_to(const Record& r) const {
  KAI_TRY(make_dirs(m_dir / "paths", 0700));
  // Each pointer that is there already is rewritten in place (a changeset
  // moves hundreds of them, and a new inode per path was most of the
  // kernel's cost of an apply); one that is not is made whole by a rename.
  // All synced at once. A pointer torn by a power cut does not verify and
  // is read as unknown (latest_for() then asks the records).
  std::vector<std::pair<fs::path, std::string>> fresh;
  auto put = [&](fs::path p, std::string text) -> Status {
    auto done = overwrite_in_place(p, text, 0600);
    if (!done) return done.error();
    if (!*done) fresh.emplace_back(std::move(p), std::move(text));
    fault_point("after-pointer");
    return ok_status();
  };
  for (const auto& f : r.files) {
    auto pm = m_seal.seal("journal-path", f.rel, r.id);
    if (!pm) return pm.error();
    KAI_TRY(put(m_dir / "paths" / blob_id(f.rel), r.id + "\n" + *pm + "\n"));
  }
  auto lm = m_seal.seal("journal-last", "LAST", r.id);
  if (!lm) return lm.error();
  KAI_TRY(put(m_dir / "LAST", r.id + "\n" + *lm + "\n"));
  if (!fresh.empty()) return write_files_atomic(fresh, 0600);  // its syncs take the writes in place too
  return sync_file_system(m_dir);
}

Status Journal::remove(const std::string& id) const {
  if (!valid_id(id)) return ok_status();
  std::error_code ec;
  fs::remove(m_dir / (id + ".json"), ec);
  if (ec) return make_error(Errc::io, fmt::format("cannot remove the journal record of '{}': {}", id, ec.message()));
  return ok_status();
}

std::vector<std::string> Journal::ids_newest_first() const {
  // "20260709T142530Z", then "-2" … "-999" within one second.
  std::vector<std::pair<std::string, int>> keyed;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(m_dir, ec)) {
    if (e.path().extension() != ".json") continue;
    const std::string id = e.path().stem().string();
    if (!valid_id(id)) continue;
    const auto dash = id.find('-');
    keyed.emplace_back(id.substr(0, dash), dash == std::string::npos ? 1 : std::atoi(id.c_str() + dash + 1));
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a > b; });
  std::vector<std::string> out;
  out.reserve(keyed.size());
  for (const auto& [base, n] : keyed) out.push_back(n == 1 ? base : fmt::format("{}-{}", base, n));
  return out;
}

struct Journal::LoadCache : LastRead<std::string, Record> {};

Journal::Journal(fs::path dir) : m_dir(std::move(dir)), m_load_cache(std::make_shared<LoadCache>()) {}

void Journal::use(Sealer s) {
  m_seal = std::move(s);
  m_load_cache = std::make_shared<LoadCache>();
}

Result<Record> Journal::load(const std::string& id) const {
  if (!has(id))
    return make_error(Errc::not_found, fmt::format("no changelog entry with rollback id '{}'", id),
                      "see 'kaicoder log' for the rollback ids there are");
  auto text = read_owned(m_dir / (id + ".json"));
  if (!text) return text.error();
  if (auto hit = m_load_cache->find(id, *text)) return std::move(*hit);
  json j = parse_bounded_json(*text).value;
  if (j.is_discarded() || !j.is_object())
    return make_error(Errc::io, fmt::format("the journal record of '{}' is corrupt", id));
  std::string mac = j.contains("seal") && j["seal"].is_string() ? j["seal"].get<std::string>() : "";
  j.erase("seal");
  // The file name is the identity the seal is bound to: a record copied to
  // another name does not verify.
  SealCheck verdict = j.value("id", "") != id ? SealCheck::bad : m_seal.check("journal", id, j.dump(), mac);
  if (verdict != SealCheck::ok)
    return seal_error(m_seal, verdict, fmt::format("the journal record of '{}'", id),
                      "kaicoder rolls back only what it recorded; restore the file from git or a copy of your own; "
                      "'kaicoder doctor' lists every record that does not verify");
  Record r;
  r.id = j.value("id", id);
  r.kind = j.value("kind", "");
  r.time = j.value("time", "");
  r.proposal = j.value("proposal", 0);
  r.rolls_back = j.value("rolls_back", "");
  r.files = files_from(j);
  m_load_cache->keep(id, std::move(*text), r);  // only a record that verified
  return r;
}

namespace {
// "id\nseal\n" → {id, seal}; a pointer from before seals has no second line.
std::pair<std::string, std::string> pointer_lines(const std::string& s) {
  auto nl = s.find('\n');
  std::string id = s.substr(0, nl);
  if (nl == std::string::npos) return {id, ""};
  std::string rest = s.substr(nl + 1);
  return {id, rest.substr(0, rest.find('\n'))};
}
}  // namespace

Result<std::string> Journal::last() const {
  auto text = read_owned(m_dir / "LAST");
  auto [id, mac] = text ? pointer_lines(*text) : std::pair<std::string, std::string>{};
  if (id.empty()) return make_error(Errc::not_found, "there is no change to roll back", "see 'kaicoder log'");
  SealCheck verdict = m_seal.check("journal-last", "LAST", id, mac);
  if (verdict != SealCheck::ok)
    return seal_error(m_seal, verdict, fmt::format("the pointer to the last change ({}/LAST)", m_dir.string()),
                      "name the entry to undo by its rollback id from 'kaicoder log'");
  if (has(id)) return id;
  // It named a transaction that was undone: the newest record is the last.
  auto all = ids_newest_first();
  if (all.empty()) return make_error(Errc::not_found, "there is no change to roll back", "see 'kaicoder log'");
  return all.front();
}

bool rollback_id_newer(std::string_view a, std::string_view b) {
  auto split = [](std::string_view id) {
    size_t dash = id.find('-');
    unsigned long n = 1;
    if (dash != std::string_view::npos) {
      std::from_chars(id.data() + dash + 1, id.data() + id.size(), n);
      id = id.substr(0, dash);
    }
    return std::pair{id, n};
  };
  return split(a) > split(b);
}

std::vector<std::string> Journal::ids() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(m_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.ends_with(".json")) continue;
    std::string id = name.substr(0, name.size() - 5);
    if (valid_id(id)) out.push_back(std::move(id));
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return rollback_id_newer(a, b); });
  return out;
}

std::string Journal::latest_for(const std::string& rel) const {
  auto text = read_owned(m_dir / "paths" / blob_id(rel));
  if (!text) {
    std::error_code ec;
    // No pointer: nothing touched `rel` (pointers are written with their record).
    if (!fs::exists(fs::symlink_status(m_dir / "paths" / blob_id(rel), ec))) return {};
  } else {
    auto [id, mac] = pointer_lines(*text);
    if (m_seal.check("journal-path", rel, id, mac) == SealCheck::ok && has(id)) return id;
  }
  // A pointer that does not verify (torn by a power cut, or forged), or one
  // naming a transaction that was undone: the newest sealed record that
  // touched `rel` says it.
  for (const std::string& other : ids_newest_first()) {
    auto r = load(other);
    if (!r) continue;
    for (const auto& f : r->files)
      if (f.rel == rel) return other;
  }
  return {};
}

}  // namespace kai
