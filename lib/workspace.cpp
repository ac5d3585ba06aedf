#include "lib/workspace.hpp"

#include <fmt/format.h>

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
  // kaicoder's own config is never an edit target, wherever it lives in root.
  fs::path rel = root_cfg.lexically_relative(root);
  if (!rel.empty() && *rel.begin() != "..") ws.guards.config_files.push_back(rel.generic_string());
  return ws;
}

}  // namespace kai
