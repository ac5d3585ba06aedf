#include "lib/config/workspace.hpp"

#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "lib/paths/beneath.hpp"
#include "lib/config/secret_walk.hpp"
#include "lib/config/trust.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/stat.hpp"

namespace kai {
namespace fs = std::filesystem;

Workspace::Workspace(const fs::path& r, Config c, const Clock& clk, std::string u)
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
  guards.allow_unusual_names = cfg.allow_unusual_names;
  store.use_approval_timeout(cfg.timeout);
}

void Workspace::use_owner_dir(const fs::path& dir) {
  owner_dir = dir;
  sealer = Sealer(dir, root);
  // Seals and once-only notes are bound to the store's identity too.
  if (auto ident = store_identity(store.dir(), sealer); !ident) {
    sealer.refuse(ident.error());
  } else {
    sealer.use_store(ident->id);
    store.make_identity(ident->fresh);
  }
  store.use(sealer);
  journal.use(sealer);
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
// node_modules, target, build, dist), stops after k_secret_walk_entries
// names or k_secret_walk_files secret files, and reads none larger than
// k_max_size bytes; folders unchanged since the last command are not read
// again (lib/config/secret_walk.hpp), but every secret file is, each time.
// A tree past those limits loses only redaction of the values of the
// secret files not reached; those files themselves stay never-read and
// never-written, which is decided by name on every request.
// With `listed`, each folder's names read on the way are kept there.
void load_secret_files(const Workspace& ws, Redactor& r, ListedFolders* listed = nullptr) {
  constexpr size_t k_max_size = 1 << 20;
  SecretWalk walk = walk_secret_files(ws.root, ws.guards, ws.sealer, ws.owner_dir, listed, now_ns());
  for (const std::string& rel : walk.files) {
    auto dir = open_parent(ws.root, rel, CreateDirs::no);
    if (!dir) continue;
    const size_t slash = rel.rfind('/');
    const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    auto file = read_at(*dir, name, k_max_size);
    if (!file || !file->regular || file->bytes.size() > k_max_size) continue;
    r.add_secret_file(name, file->bytes);
  }
}

}  // namespace

Result<Workspace> Workspace::open_without_config(const Env& env, const Clock& clock) {
  fs::path root = find_any_root(env).root;
  Workspace ws(root, Config{}, clock, env.user);
  ws.use_owner_dir(env.user_config_dir);
  ws.home = env.home;
  ws.env_vars = env.vars;
  ws.redactor.add_env(env.vars);
  load_secret_files(ws, ws.redactor);
  return ws;
}

namespace {

// [changelog] path names a file kaicoder appends to: it must lie inside root
// and outside every place kaicoder never writes (.git/, the state dir, its
// config, backups, secret files, generated folders).
Status check_changelog_path(const fs::path& root, const std::string& rel) {
  auto bad = [&](const std::string& why, Errc code = Errc::usage) {
    return make_error(code, fmt::format("changelog.path '{}' {}", rel, why),
                      "name a file inside root, such as KAI-CODER-CHANGELOG.md; a symlink planted there must go");
  };
  // A symlink on the way is something planted in the tree, not a mistake in
  // the config: denied, like every other symlink kaicoder refuses to follow.
  auto p = resolve(root, root, rel);
  if (!p)
    return bad("must be a path inside root: " + p.error().message,
               p.error().code == Errc::denied ? Errc::denied : Errc::usage);
  if (p->rel != fs::path(rel).lexically_normal().generic_string())
    return bad("reaches another place through a symlink", Errc::denied);
  // The changelog's own name is never-write for agents; judge the folder it sits in by a neutral name.
  RootPath probe = *p;
  Guardrails g;
  g.changelog.clear();
  std::string base = p->abs.filename().string();
  for (char& ch : base) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (base == "kai-coder-changelog.md")
    probe.rel = (fs::path(p->rel).parent_path() / "changelog-probe.md").generic_string();
  if (auto w = check_write(g, probe); !w) return bad("is not a place kaicoder may write: " + w.error().message);
  return ok_status();
}

}  // namespace

Result<Workspace> Workspace::open(const Env& env, const Clock& clock) {
  auto found = find_trusted_root(env);
  if (!found) return found.error();
  const fs::path root = found->root;
  std::vector<ConfigFile> files = {ConfigFile(env.user_config_dir / "config.toml")};
  const fs::path root_cfg = root / "kaicoder.toml";
  if (found->config) files.emplace_back(root_cfg, ConfigRole::trusted, *found->config);
  std::optional<fs::path> overlay;
  if (env.config_override) {
    std::error_code ec;
    fs::path c = env.config_override->is_absolute() ? *env.config_override : env.cwd / *env.config_override;
    if (!fs::is_regular_file(c, ec))
      return make_error(Errc::usage, fmt::format("--config '{}' is not a file", env.config_override->string()));
    // A config is a few lines; a huge file is a mistake or an attempt to exhaust memory.
    constexpr uintmax_t k_max_overlay = 1 << 20;
    if (fs::file_size(c, ec) > k_max_overlay)
      return make_error(Errc::usage, fmt::format("--config '{}' is larger than 1 MiB", env.config_override->string()));
    auto text = read_file(c);
    if (!text) return text.error();
    files.emplace_back(c, ConfigRole::overlay, std::move(*text));
    overlay = fs::weakly_canonical(c, ec);
  }
  auto cfg = load_config(files);
  if (!cfg) return cfg.error();
  KAI_TRY(check_changelog_path(root, cfg->changelog));
  Workspace ws(root, std::move(*cfg), clock, env.user);
  ws.use_owner_dir(env.user_config_dir);
  ws.home = env.home;
  ws.env_vars = env.vars;
  ws.redactor.add_env(env.vars);
  ws.listed = std::make_shared<ListedFolders>();
  load_secret_files(ws, ws.redactor, ws.listed.get());
  // kaicoder's own config is never an edit target, wherever it lives in root.
  if (overlay) {
    fs::path rel = overlay->lexically_relative(root);
    if (!rel.empty() && *rel.begin() != "..") ws.guards.config_files.push_back(rel.generic_string());
  }
  return ws;
}

bool two_user(const Workspace& ws) { return !ws.cfg.two_user_agent.empty(); }

}  // namespace kai
