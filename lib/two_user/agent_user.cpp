#include "lib/two_user/agent_user.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/util/acl.hpp"
#include "lib/config/config.hpp"
#include "lib/two_user/intake.hpp"
#include "lib/store/spool.hpp"
#include "lib/util/fs.hpp"
#include "lib/config/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

std::optional<AgentSide> find_agent_side(const Env& env, uid_t uid) {
  auto judge = [uid](const fs::path& dir) -> std::optional<std::optional<AgentSide>> {
    struct stat st {};
    if (::lstat((dir / ".kaicoder").c_str(), &st) != 0) return std::nullopt;  // none here: look further up
    if (!S_ISDIR(st.st_mode) || st.st_uid == uid || !has_spool(dir / ".kaicoder")) return std::optional<AgentSide>{};
    std::error_code ec;
    fs::path root = fs::canonical(dir, ec);
    if (ec) return std::optional<AgentSide>{};
    return std::optional<AgentSide>(AgentSide{root, st.st_uid});
  };
  if (env.root_override) {
    fs::path dir = env.root_override->is_absolute() ? *env.root_override : env.cwd / *env.root_override;
    return judge(dir).value_or(std::nullopt);
  }
  for (fs::path dir = env.cwd; !dir.empty(); dir = dir.parent_path()) {
    if (auto v = judge(dir)) return *v;
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

Result<UnixUser> lookup_user(const std::string& name) {
  const passwd* pw = ::getpwnam(name.c_str());
  if (!pw) return make_error(Errc::not_found, fmt::format("there is no user '{}'", name));
  UnixUser u{pw->pw_name, pw->pw_uid, pw->pw_gid, {}, pw->pw_dir ? pw->pw_dir : ""};
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (::getgrouplist(u.name.c_str(), u.gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    ::getgrouplist(u.name.c_str(), u.gid, groups.data(), &n);
  }
  groups.resize(static_cast<size_t>(std::max(n, 0)));
  u.groups = std::move(groups);
  if (std::find(u.groups.begin(), u.groups.end(), u.gid) == u.groups.end()) u.groups.push_back(u.gid);
  return u;
}

UnixUser lookup_uid(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid); pw && pw->pw_name)
    if (auto u = lookup_user(pw->pw_name)) return *u;
  return UnixUser{fmt::format("uid{}", uid), uid, static_cast<gid_t>(-1), {}, {}};
}

fs::path owner_dir_of(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid); pw && pw->pw_dir && *pw->pw_dir)
    return fs::path(pw->pw_dir) / ".config" / "kaicoder";
  return "/nonexistent/kaicoder";
}

fs::path store_owner_dir(const fs::path& root) {
  struct stat st {};
  return owner_dir_of(::lstat((root / ".kaicoder").c_str(), &st) == 0 ? st.st_uid : ::getuid());
}

namespace {

// Whether `who` has every bit of `bits` (4 read, 2 write, 1 search) on the
// file at `p` with this stat data, as the kernel decides it: by its access
// ACL when it has one (lib/util/acl), else by the mode bits.
bool can(const fs::path& p, const struct stat& st, const UnixUser& who, unsigned bits) {
  if (who.uid == 0) return true;
  if (auto acl = read_access_acl(p)) return acl_permits(*acl, st, who.uid, who.groups, bits);
  unsigned shift = 0;
  if (st.st_uid == who.uid)
    shift = 6;
  else if (std::find(who.groups.begin(), who.groups.end(), st.st_gid) != who.groups.end())
    shift = 3;
  return ((st.st_mode >> shift) & bits) == bits;
}

// `who` can pass through every folder from / down to `dir` (itself included).
bool reaches(const fs::path& dir, const UnixUser& who) {
  fs::path cur = "/";
  std::vector<fs::path> chain = {cur};
  for (const auto& part : dir.relative_path()) chain.push_back(cur /= part);
  for (const auto& p : chain) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || !can(p, st, who, 1)) return false;
  }
  return true;
}

bool is_secret(const Guardrails& g, const fs::path& root, const std::string& rel) {
  return !check_read(g, RootPath{rel, root / rel});
}

constexpr size_t k_walk_limit = 200000;

}  // namespace

bool user_may_read(const fs::path& p, const UnixUser& who) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return errno == ENOENT || errno == ENOTDIR;  // nothing there to show
  return reaches(p.parent_path(), who) && can(p, st, who, 4);
}

AgentAccess agent_access(const fs::path& root, const Guardrails& guards, const UnixUser& who,
                         const fs::path& owner_dir) {
  AgentAccess a;
  a.reaches_root = reaches(root, who);
  struct stat st {};
  if (a.reaches_root && ::stat(root.c_str(), &st) == 0 && can(root, st, who, 3)) a.writable.push_back(".");
  const std::string spool_rel = (fs::path(guards.state_dir) / "spool").generic_string();
  std::error_code ec;
  size_t seen = 0;
  if (a.reaches_root)
    for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (++seen > k_walk_limit) {
        a.cut_short = true;
        break;
      }
      if (::lstat(it->path().c_str(), &st) != 0) continue;
      const std::string rel = it->path().lexically_relative(root).generic_string();
      if (S_ISDIR(st.st_mode)) {
        if (!can(it->path(), st, who, 1)) {
          it.disable_recursion_pending();  // nothing below it is within its reach
          continue;
        }
        if (can(it->path(), st, who, 3) && rel != spool_rel) a.writable.push_back(rel + "/");
        continue;
      }
      if (!S_ISREG(st.st_mode)) continue;
      if (can(it->path(), st, who, 2)) a.writable.push_back(rel);
      if (can(it->path(), st, who, 4) && is_secret(guards, root, rel)) a.secrets_readable.push_back(rel);
    }
  std::sort(a.writable.begin(), a.writable.end());
  std::sort(a.secrets_readable.begin(), a.secrets_readable.end());
  if (reaches(owner_dir, who)) {
    for (const fs::path& p :
         {owner_dir, owner_dir / "key", owner_dir / "config.toml", owner_dir / "trusted-roots.json"}) {
      if (::lstat(p.c_str(), &st) != 0) continue;
      bool dir = S_ISDIR(st.st_mode);
      if (can(p, st, who, 4) || can(p, st, who, 2)) a.owner_dir.push_back(p.string() + (dir ? "/" : ""));
      if (dir && !can(p, st, who, 1)) break;  // what lies inside is out of reach
    }
  }
  return a;
}

std::string two_user_level(const AgentAccess& a, const std::string& name) {
  if (a.holds()) return fmt::format("two-user: the agent cannot write the tree or approve (agent user '{}')", name);
  auto some = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size() && i < 5; ++i) s += (i ? ", " : "") + v[i];
    if (v.size() > 5) s += fmt::format(" and {} more", v.size() - 5);
    return s;
  };
  std::string s = fmt::format("two-user mode does not hold: agent user '{}'", name);
  if (!a.writable.empty()) s += fmt::format(" can write {}", some(a.writable));
  if (!a.secrets_readable.empty())
    s += fmt::format("{} can read secret files {}", a.writable.empty() ? "" : ";", some(a.secrets_readable));
  if (!a.owner_dir.empty())
    s += fmt::format("{} can reach the owner's folder: {}", a.writable.empty() && a.secrets_readable.empty() ? "" : ";",
                     some(a.owner_dir));
  return s;
}

Result<fs::path> store_root(const fs::path& start) {
  for (fs::path dir = start; !dir.empty(); dir = dir.parent_path()) {
    struct stat st {};
    if (::lstat((dir / ".kaicoder").c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return dir;
    if (dir == dir.parent_path()) break;
  }
  return make_error(Errc::not_found, fmt::format("no kaicoder store at or above '{}'", start.string()),
                    "the owner runs kaicoder init in the tree first");
}

bool valid_user_name(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; });
}

namespace {

// Run a system tool (fixed path, empty environment, no terminal); its exit status.
int run_tool(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char* envp[] = {const_cast<char*>("PATH=/usr/sbin:/usr/bin:/sbin:/bin"), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), envp);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A folder of the store, owned by the owner and the agent's group, with
// `mode`. True when it had to be made or changed.
Result<bool> store_folder(const fs::path& p, uid_t owner, gid_t group, mode_t mode) {
  struct stat st {};
  const bool exists = ::lstat(p.c_str(), &st) == 0;
  if (exists && !S_ISDIR(st.st_mode))
    return make_error(Errc::denied, fmt::format("'{}' is not a folder; remove it first", p.string()));
  if (exists && st.st_uid == owner && st.st_gid == group && (st.st_mode & 07777) == mode) return false;
  if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error(Errc::io, fmt::format("cannot create '{}': {}", p.string(), errno_text(errno)));
  if (::lchown(p.c_str(), owner, group) != 0 || ::chmod(p.c_str(), mode) != 0)
    return make_error(Errc::io, fmt::format("cannot set up '{}': {}", p.string(), errno_text(errno)));
  return true;
}

// The tree as the agent should find it: everything readable (folders
// passable), nothing writable, secret files not readable at all.
size_t open_tree_for_reading(const fs::path& root, const Guardrails& g, const UnixUser& agent) {
  size_t changed = 0, seen = 0;
  std::error_code ec;
  auto agents_group = [&](gid_t gid) {
    return std::find(agent.groups.begin(), agent.groups.end(), gid) != agent.groups.end();
  };
  auto fix = [&](const fs::path& p, const std::string& rel) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) return;
    mode_t mode = st.st_mode & 07777, want = mode;
    if (S_ISREG(st.st_mode) && is_secret(g, root, rel)) {
      want &= ~0007u;
      if (agents_group(st.st_gid)) want &= ~0070u;
    } else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
      want = (want | 0004 | (S_ISDIR(st.st_mode) || (mode & 0100) ? 0001 : 0)) & ~0002u;
      if (agents_group(st.st_gid)) want &= ~0020u;
    }
    if (want != mode && ::chmod(p.c_str(), want) == 0) ++changed;
  };
  fix(root, ".");
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end && ++seen < k_walk_limit;
       it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(root).generic_string();
    if (rel == g.state_dir) {
      it.disable_recursion_pending();  // the store has modes of its own
      continue;
    }
    if (it->is_symlink(ec)) continue;
    fix(it->path(), rel);
  }
  return changed;
}

// `[two_user] agent = "NAME"` in the owner's config, added unless it is there.
Status name_agent_in_config(const fs::path& owner_dir, uid_t owner, gid_t owner_gid, const std::string& name,
                            std::vector<std::string>& done) {
  KAI_TRY(make_dirs(owner_dir, 0700));
  ::lchown(owner_dir.c_str(), owner, owner_gid);
  const fs::path cfg = owner_dir / "config.toml";
  std::string text;
  struct stat st {};
  if (::lstat(cfg.c_str(), &st) == 0) {
    auto t = read_file(cfg, 1 << 20);
    if (!t) return t.error();
    text = std::move(*t);
    auto parsed = parse_config_text(text, cfg.string());
    if (!parsed) return parsed.error();
    if (parsed->two_user_agent == name) return ok_status();
    if (!parsed->two_user_agent.empty())
      return make_error(Errc::conflict,
                        fmt::format("'{}' already names '{}' as the agent user", cfg.string(), parsed->two_user_agent),
                        "change [two_user] agent there by hand if the agent user is to change");
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += fmt::format("\n[two_user]\nagent = \"{}\"\n", name);
  KAI_TRY(write_file_atomic(cfg, text, 0600));
  ::lchown(cfg.c_str(), owner, owner_gid);
  done.push_back(fmt::format("named '{}' as the agent user in {}", name, cfg.string()));
  return ok_status();
}

}  // namespace

Status apply_setup(const fs::path& root, const std::string& name, const Guardrails& guards,
                   std::vector<std::string>& done) {
  if (::geteuid() != 0)
    return make_error(Errc::denied, "setting up two-user mode needs root",
                      fmt::format("run: sudo kaicoder --root '{}' agent-user setup {}", root.string(), name));
  if (!valid_user_name(name))
    return make_error(Errc::usage, fmt::format("'{}' is not a user name useradd accepts", name));
  const fs::path state = root / guards.state_dir;
  struct stat st {};
  if (::lstat(state.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return make_error(Errc::not_found, fmt::format("'{}' has no store", root.string()),
                      "the owner runs kaicoder init there first");
  const uid_t owner = st.st_uid;
  const UnixUser owner_user = lookup_uid(owner);
  auto agent = lookup_user(name);
  if (!agent) {
    if (run_tool({"/usr/sbin/useradd", "--create-home", "--user-group", "--shell", "/bin/bash", name}) != 0)
      return make_error(Errc::io, fmt::format("useradd could not create the user '{}'", name));
    done.push_back(fmt::format("created the user '{}' and its group", name));
    agent = lookup_user(name);
    if (!agent) return agent.error();
  }
  if (agent->uid == 0 || agent->uid == owner)
    return make_error(Errc::denied,
                      fmt::format("'{}' is root or the owner of the tree; the agent user must be neither", name));
  if (size_t n = open_tree_for_reading(root, guards, *agent))
    done.push_back(
        fmt::format("changed the modes of {} file(s) and folder(s): readable, not writable, secrets private", n));
  if ((st.st_mode & 07777) != 0711) {
    if (::chmod(state.c_str(), 0711) != 0)
      return make_error(Errc::io, fmt::format("cannot set up '{}': {}", state.string(), errno_text(errno)));
    done.push_back(fmt::format("{} passable (0711) and nothing more", state.string()));
  }
  bool made = false;
  for (auto [dir, mode] : {std::pair{spool::dir(state), mode_t{03770}},
                           {spool::tickets(state), mode_t{02750}},
                           {spool::status(state), mode_t{02750}}}) {
    auto m = store_folder(dir, owner, agent->gid, mode);
    if (!m) return m.error();
    made |= *m;
  }
  if (made)
    done.push_back(fmt::format("the spool {} (mode 3770, group {}) and its tickets/ and status/ (2750)",
                               spool::dir(state).string(), name));
  KAI_TRY(name_agent_in_config(owner_dir_of(owner), owner, owner_user.gid, name, done));
  if (!reaches(root, *agent))
    done.push_back(
        fmt::format("WARNING: '{}' cannot pass through a folder above '{}'; give it o+x there", name, root.string()));
  return ok_status();
}

}  // namespace kai
