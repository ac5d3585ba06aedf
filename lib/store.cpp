#include "lib/store.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/beneath.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {
constexpr const char* k_payloads[] = {"target", "replacement", "content"};

std::string* payload(Proposal& p, std::string_view name) {
  if (name == "target") return &p.target;
  if (name == "replacement") return &p.replacement;
  return &p.content;
}
}  // namespace

namespace {

// A state dir, or a folder in it, that is a symlink would carry every write
// of the store out of root (a cloned repository can commit one): refused,
// never followed. The files in them are read with lib/beneath read_owned.
Status refuse_symlinked_folders(const fs::path& dir) {
  for (const char* sub : {"", "staging", "journal", "journal/paths", "intents", "scratch", "cache", "changelog-archive"}) {
    fs::path p = *sub ? dir / sub : dir;
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", p.string()),
                        "the state dir and its folders must be real folders inside the root; remove the link");
  }
  return ok_status();
}

}  // namespace

Status Store::ensure() const {
  KAI_TRY(refuse_symlinked_folders(m_dir));
  KAI_TRY(make_dirs(m_dir, 0700));
  KAI_TRY(make_dirs(m_dir / "staging", 0700));
  KAI_TRY(make_dirs(m_dir / "journal", 0700));
  return ok_status();
}

Result<fs::path> Store::make_scratch(const std::string& prefix) const {
  KAI_TRY(ensure());
  KAI_TRY(make_dirs(m_dir / "scratch", 0700));
  std::string templ = (m_dir / "scratch" / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(templ.data())) return make_error(Errc::io, fmt::format("cannot create '{}': {}", templ, errno_text(errno)));
  return fs::path(templ);
}

bool Store::exists() const {
  std::error_code ec;
  return fs::is_directory(m_dir / "staging", ec);
}

fs::path Store::staging_dir(int id) const { return m_dir / "staging" / std::to_string(id); }

Result<FileLock> Store::lock() const {
  KAI_TRY(ensure());
  return FileLock::acquire(m_dir / "lock");
}

Result<int> Store::next_id() const {
  fs::path counter = m_dir / "staging" / "next-id";
  int next = 1;
  if (auto text = read_owned(counter)) {
    auto r = std::from_chars(text->data(), text->data() + text->size(), next);
    if (r.ec != std::errc{} || next < 1) next = 1;
  }
  // A counter lost or rolled back by hand must never hand out an id twice.
  if (auto all = ids(); all && !all->empty()) next = std::max(next, all->back() + 1);
  KAI_TRY(write_file_atomic(counter, fmt::format("{}\n", next + 1), 0600));
  return next;
}

Status Store::create(const Proposal& p) const {
  fs::path dir = staging_dir(p.id);
  std::error_code ec;
  if (!fs::create_directory(dir, ec) || ec)
    return make_error(Errc::io, fmt::format("cannot create staging folder '{}': {}", dir.string(),
                                            ec ? ec.message() : "it already exists"));
  Proposal copy = p;
  for (const char* name : k_payloads) KAI_TRY(write_file_exclusive(dir / name, *payload(copy, name), 0600));
  // A command is a payload too: it runs exactly as staged, so it is kept
  // raw beside the metadata (which is redacted), never inside it.
  if (p.kind == Kind::run) {
    nlohmann::json cmd = {{"argv", p.argv}, {"shell", p.shell}};
    KAI_TRY(write_file_exclusive(dir / "command", cmd.dump(), 0600));
  }
  return save(p);
}

Status Store::save(const Proposal& p) const {
  return write_file_atomic(staging_dir(p.id) / "meta.json", to_json(p).dump(2) + "\n", 0600);
}

Result<Proposal> Store::load(int id) const {
  fs::path dir = staging_dir(id);
  std::error_code ec;
  if (id < 1 || !fs::is_directory(dir, ec))
    return make_error(Errc::not_found, fmt::format("no proposal {}", id), "see 'kaicoder list' for the ids there are");
  auto text = read_owned(dir / "meta.json");
  if (!text) return make_error(Errc::io, fmt::format("proposal {} has no readable record: {}", id, text.error().message));
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return make_error(Errc::io, fmt::format("proposal {} has a corrupt record '{}'", id, (dir / "meta.json").string()));
  auto p = from_json(j);
  if (!p) return make_error(Errc::io, fmt::format("proposal {}: {}", id, p.error().message));
  for (const char* name : k_payloads) {
    auto bytes = read_owned(dir / name);
    if (!bytes) return make_error(Errc::io, fmt::format("proposal {} is missing its '{}' payload", id, name));
    *payload(*p, name) = std::move(*bytes);
  }
  if (p->kind == Kind::run) {
    auto cmd_text = read_owned(dir / "command");
    nlohmann::json cmd = cmd_text ? nlohmann::json::parse(*cmd_text, nullptr, false) : nlohmann::json();
    if (!cmd.is_object()) return make_error(Errc::io, fmt::format("proposal {} is missing its command", id));
    p->argv = cmd.value("argv", std::vector<std::string>{});
    p->shell = cmd.value("shell", "");
  }
  return p;
}

Result<std::vector<int>> Store::ids() const {
  std::vector<int> out;
  std::error_code ec;
  fs::directory_iterator it(m_dir / "staging", ec);
  if (ec) return out;
  for (const auto& e : it) {
    const std::string name = e.path().filename().string();
    int id = 0;
    auto r = std::from_chars(name.data(), name.data() + name.size(), id);
    if (r.ec == std::errc{} && r.ptr == name.data() + name.size() && id > 0) out.push_back(id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kai
