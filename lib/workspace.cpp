#include "lib/workspace.hpp"

#include <fmt/format.h>

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

// Secret files near the top of the tree feed the redactor. The walk is
// bounded (depth, count, size) so a huge tree cannot slow every command.
void load_secret_files(const fs::path& root, const Guardrails& g, Redactor& r) {
  constexpr int k_max_depth = 2;
  constexpr size_t k_max_files = 64, k_max_size = 1 << 20;
  size_t seen = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end && seen < k_max_files; it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(root);
    const std::string name = it->path().filename().string();
    if (it->is_directory(ec)) {
      if (it.depth() >= k_max_depth || name == ".git" || name == ".kaicoder" || name == "node_modules" ||
          name == "target" || name == "build" || name == "dist")
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec) || it->file_size(ec) > k_max_size) continue;
    RootPath rp{rel.generic_string(), it->path()};
    if (check_read(g, rp)) continue;  // readable: not a secret file
    if (auto text = read_file(it->path())) {
      r.add_secret_file(name, *text);
      ++seen;
    }
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
  ws.home = e.home;
  ws.env_vars = e.vars;
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
  ws.home = env.home;
  ws.env_vars = env.vars;
  ws.redactor.add_env(env.vars);
  load_secret_files(root, ws.guards, ws.redactor);
  // kaicoder's own config is never an edit target, wherever it lives in root.
  fs::path rel = root_cfg.lexically_relative(root);
  if (!rel.empty() && *rel.begin() != "..") ws.guards.config_files.push_back(rel.generic_string());
  return ws;
}

}  // namespace kai
