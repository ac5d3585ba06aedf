#include "lib/journal.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/beneath.hpp"
#include "lib/git.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
json side_json(const FileSide& s) { return {{"exists", s.exists}, {"blob", s.blob}, {"mode", s.mode}}; }
FileSide side_from(const json& j) { return {j.value("exists", false), j.value("blob", ""), j.value("mode", 0644u)}; }

bool valid_id(const std::string& id) {
  if (id.size() < 16 || id.size() > 24) return false;
  for (char c : id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) return false;
  return true;
}
}  // namespace

std::string Journal::fresh_id(TimePoint t, const std::function<bool(const std::string&)>& taken) const {
  const std::string base = compact_utc(t);
  for (int n = 1;; ++n) {
    std::string id = n == 1 ? base : fmt::format("{}-{}", base, n);
    if (!has(id) && !(taken && taken(id))) return id;
  }
}

bool Journal::has(const std::string& id) const {
  std::error_code ec;
  return valid_id(id) && fs::exists(m_dir / (id + ".json"), ec);
}

Status Journal::write(const Record& r) const {
  KAI_TRY(make_dirs(m_dir / "paths", 0700));
  json files = json::array();
  for (const auto& f : r.files)
    files.push_back({{"path", f.rel}, {"before", side_json(f.before)}, {"after", side_json(f.after)},
                     {"backup", f.backup_rel}, {"backup_blob", f.backup_blob}});
  json j = {{"id", r.id}, {"kind", r.kind}, {"time", r.time}, {"proposal", r.proposal},
            {"rolls_back", r.rolls_back}, {"files", files}};
  KAI_TRY(write_file_atomic(m_dir / (r.id + ".json"), j.dump(2) + "\n", 0600));
  for (const auto& f : r.files) KAI_TRY(write_file_atomic(m_dir / "paths" / blob_id(f.rel), r.id + "\n", 0600));
  return write_file_atomic(m_dir / "LAST", r.id + "\n", 0600);
}

Result<Record> Journal::load(const std::string& id) const {
  if (!has(id))
    return make_error(Errc::not_found, fmt::format("no changelog entry with rollback id '{}'", id),
                      "see 'kaicoder log' for the rollback ids there are");
  auto text = read_owned(m_dir / (id + ".json"));
  if (!text) return text.error();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(Errc::io, fmt::format("the journal record of '{}' is corrupt", id));
  Record r;
  r.id = j.value("id", id);
  r.kind = j.value("kind", "");
  r.time = j.value("time", "");
  r.proposal = j.value("proposal", 0);
  r.rolls_back = j.value("rolls_back", "");
  for (const auto& f : j.value("files", json::array())) {
    FileChange c;
    c.rel = f.value("path", "");
    c.before = side_from(f.value("before", json::object()));
    c.after = side_from(f.value("after", json::object()));
    c.backup_rel = f.value("backup", "");
    c.backup_blob = f.value("backup_blob", "");
    r.files.push_back(std::move(c));
  }
  return r;
}

static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

Result<std::string> Journal::last() const {
  auto text = read_owned(m_dir / "LAST");
  if (!text || first_line(*text).empty())
    return make_error(Errc::not_found, "there is no change to roll back", "see 'kaicoder log'");
  return first_line(*text);
}

std::string Journal::latest_for(const std::string& rel) const {
  auto text = read_owned(m_dir / "paths" / blob_id(rel));
  return text ? first_line(*text) : std::string{};
}

}  // namespace kai
