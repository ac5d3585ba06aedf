#include "lib/workspace.hpp"

#include <fmt/format.h>

#include "lib/beneath.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

fs::path find_root(const fs::path& cwd) {
  std::error_code ec;
  fs::path start = fs::weakly_canonical(cwd, ec);
  if (ec) start = cwd;
  for (fs::path d = start;; d = d.parent_path()) {
    if (fs::exists(d / "kaicoder.toml", ec)) return d;
    if (d == d.parent_path()) break;
  }
  for (fs::path d = start;; d = d.parent_path()) {
    if (fs::exists(d / ".git", ec)) return d;
    if (d == d.parent_path()) break;
  }
  return start;
}

Workspace::Workspace(fs::path r, Config c, const Clock& clk, std::string u)
    : root(r),
      cfg(std::move(c)),
      store(r / ".kaicoder"),
      journal(r / ".kaicoder" / "journal"),
      changelog(r / cfg.changelog, r / ".kaicoder" / "changelog-archive", static_cast<size_t>(cfg.changelog_keep)),
      clock(&clk),
      user(std::move(u)) {
  guards.changelog = cfg.changelog;
  guards.deny_write = cfg.deny_write;
  guards.deny_read = cfg.deny_read;
  guards.break_hardlinks = cfg.hardlinks == "break";
}

Entry Workspace::redact(Entry e) const {
  for (std::string* f : {&e.summary, &e.why, &e.result, &e.approver, &e.backup, &e.rollback}) *f = redactor.apply(*f);
  for (auto& f : e.files) f = redactor.apply(f);
  return e;
}

namespace {

// Secret files anywhere in the tree feed the redactor, so that their values
// are hidden wherever else they turn up (a config that copies a token, a
// diff, a command's output). A secret file is one by its name, so the walk
// looks at names only and reads just the secret files, beneath root without
// following a symlink. It goes to any depth, but every command opens a
// workspace, so its cost is bounded: it skips the folders of git, of
// kaicoder and of generated or downloaded files (.git, .kaicoder,
// node_modules, target, build, dist), stops after k_max_entries names, and
// reads at most k_max_files secret files of at most k_max_size bytes. A tree
// past those limits loses only redaction of the values of the secret files
// not reached; those files themselves stay never-read and never-written,
// which is decided by name on every request.
void load_secret_files(const fs::path& root, const Guardrails& g, Redactor& r) {
  constexpr size_t k_max_entries = 200000, k_max_files = 256, k_max_size = 1 << 20;
  size_t entries = 0, loaded = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end && entries < k_max_entries && loaded < k_max_files; it.increment(ec), ++entries) {
    const std::string name = it->path().filename().string();
    const fs::file_status st = it->symlink_status(ec);
    if (fs::is_directory(st)) {
      if (name == ".git" || name == g.state_dir || name == "node_modules" || name == "target" || name == "build" ||
          name == "dist")
        it.disable_recursion_pending();
      continue;
    }
    if (!fs::is_regular_file(st)) continue;
    RootPath rp{it->path().lexically_relative(root).generic_string(), it->path()};
    if (check_read(g, rp)) continue;  // readable: not a secret file
    if (it->file_size(ec) > k_max_size) continue;
    auto dir = open_parent(root, rp.rel, CreateDirs::no);
    if (!dir) continue;
    auto file = read_at(*dir, name);
    if (!file || !file->regular) continue;
    r.add_secret_file(name, file->bytes);
    ++loaded;
  }
}

}  // namespace

Result<Workspace> Workspace::open_without_config(const Env& env, const Clock& clock) {
  Env e = env;
  e.config_override = std::nullopt;
  fs::path root = e.root_override ? *e.root_override : find_root(e.cwd);
  std::error_code ec;
  root = fs::weakly_canonical(e.root_override && root.is_relative() ? e.cwd / root : root, ec);
  Workspace ws(root, Config{}, clock, e.user);
  ws.owner_dir = e.user_config_dir;
  ws.redactor.add_env(e.vars);
  load_secret_files(root, ws.guards, ws.redactor);
  return ws;
}

Result<Workspace> Workspace::open(const Env& env, const Clock& clock) {
  fs::path root;
  std::error_code ec;
  if (env.root_override) {
    fs::path r = env.root_override->is_absolute() ? *env.root_override : env.cwd / *env.root_override;
    if (!fs::is_directory(r, ec))
      return make_error(Errc::usage, fmt::format("--root '{}' is not a folder", env.root_override->string()));
    root = fs::canonical(r, ec);
  } else {
    root = find_root(env.cwd);
  }
  std::vector<fs::path> files = {env.user_config_dir / "config.toml"};
  fs::path root_cfg = root / "kaicoder.toml";
  if (env.config_override) {
    fs::path c = env.config_override->is_absolute() ? *env.config_override : env.cwd / *env.config_override;
    if (!fs::is_regular_file(c, ec))
      return make_error(Errc::usage, fmt::format("--config '{}' is not a file", env.config_override->string()));
    root_cfg = c;
  }
  files.push_back(root_cfg);
  auto cfg = load_config(files);
  if (!cfg) return cfg.error();
  Workspace ws(root, std::move(*cfg), clock, env.user);
  ws.owner_dir = env.user_config_dir;
  ws.redactor.add_env(env.vars);
  load_secret_files(root, ws.guards, ws.redactor);
  // kaicoder's own config is never an edit target, wherever it lives in root.
  fs::path rel = root_cfg.lexically_relative(root);
  if (!rel.empty() && *rel.begin() != "..") ws.guards.config_files.push_back(rel.generic_string());
  return ws;
}

}  // namespace kai
