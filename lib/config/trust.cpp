#include "lib/config/trust.hpp"

#include "lib/store/mac.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/util/git.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json_bounded.hpp"
#include "lib/util/lock.hpp"
#include "lib/config/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr const char* k_list = "trusted-roots.json";
constexpr const char* k_trust_hint =
    "if you own this tree, run `kaicoder trust` there at a terminal and check what it shows";

fs::path absolute_from(const Env& env, const fs::path& p) { return p.is_absolute() ? p : env.cwd / p; }

// The working directory as the kernel sees it: symlinks on the way resolved.
fs::path canonical_cwd(const Env& env) {
  std::error_code ec;
  fs::path c = fs::canonical(env.cwd, ec);
  return ec ? env.cwd.lexically_normal() : c;
}

bool has_config(const fs::path& dir) {
  std::error_code ec;
  return fs::symlink_status(dir / "kaicoder.toml", ec).type() != fs::file_type::not_found;
}

Trust state_of(const TrustedRoot& t, const std::optional<std::string>& bytes) {
  return bytes && config_digest(*bytes) == t.digest ? Trust::trusted : Trust::changed;
}

// Refusal for a listed root whose kaicoder.toml no longer holds the trusted bytes.
Error changed_error(const fs::path& root, bool gone) {
  return make_error(Errc::denied,
                    fmt::format("'{}' {} since you trusted it; kaicoder refuses to work there until you trust it again",
                                (root / "kaicoder.toml").string(), gone ? "is gone" : "changed"),
                    "run `kaicoder trust` there at a terminal: it shows what changed and asks");
}

}  // namespace

// `--root DIR` made canonical. `/` is never a root: nothing above it could
// hold an owner's tree apart from the rest of the system.
Result<fs::path> canonical_root_option(const Env& env) {
  std::error_code ec;
  fs::path r = absolute_from(env, *env.root_override);
  if (!fs::is_directory(r, ec))
    return make_error(Errc::usage, fmt::format("--root '{}' is not a folder", env.root_override->string()));
  fs::path c = fs::canonical(r, ec);
  if (ec) return make_error(Errc::io, fmt::format("cannot resolve --root '{}': {}", r.string(), ec.message()));
  if (c == c.root_path())
    return make_error(
        Errc::denied,
        fmt::format("--root '{}' is the filesystem root, which kaicoder never governs", env.root_override->string()),
        "name the tree you initialised with `kaicoder init`");
  return c;
}

std::string config_digest(std::string_view bytes) { return blob_id(bytes); }

Result<std::optional<std::string>> read_root_config(const fs::path& root) {
  fs::path p = root / "kaicoder.toml";
  int fd = ::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    if (errno == ELOOP)
      return make_error(Errc::denied,
                        fmt::format("'{}' is a symlink; kaicoder only trusts a regular file", p.string()));
    return make_error(Errc::io, fmt::format("cannot read '{}': {}", p.string(), errno_text(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(Errc::denied, fmt::format("'{}' is not a regular file", p.string()));
  }
  auto r = read_all(fd);
  ::close(fd);
  if (!r) return make_error(Errc::io, fmt::format("cannot read '{}': {}", p.string(), r.error().message));
  return std::optional<std::string>(std::move(*r));
}

Result<std::vector<TrustedRoot>> TrustList::load() const {
  std::vector<TrustedRoot> out;
  auto text = read_file(m_dir / k_list);
  if (!text) {
    if (text.error().code == Errc::not_found) return out;
    return text.error();
  }
  auto bad = [&](std::string_view why) {
    return make_error(Errc::io, fmt::format("'{}' is damaged: {}", (m_dir / k_list).string(), why),
                      "move it aside and trust your roots again with `kaicoder trust`");
  };
  nlohmann::json j = parse_bounded_json(*text).value;
  if (j.is_discarded() || !j.is_object() || !j.contains("roots") || !j["roots"].is_array())
    return bad("not a list of roots");
  for (const auto& e : j["roots"]) {
    if (!e.is_object() || !e.contains("root") || !e["root"].is_string() || !e.contains("digest") ||
        !e["digest"].is_string())
      return bad("an entry without root and digest");
    TrustedRoot t;
    t.root = e["root"].get<std::string>();
    t.digest = e["digest"].get<std::string>();
    if (e.contains("trusted_at") && e["trusted_at"].is_string()) t.trusted_at = e["trusted_at"].get<std::string>();
    if (e.contains("copy") && e["copy"].is_string()) t.copy = e["copy"].get<std::string>();
    if (!t.root.is_absolute()) return bad("a root that is not an absolute path");
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::optional<TrustedRoot>> TrustList::find(const fs::path& root) const {
  auto all = load();
  if (!all) return all.error();
  for (auto& t : *all)
    if (t.root == root) return std::optional<TrustedRoot>(std::move(t));
  return std::optional<TrustedRoot>();
}

std::optional<std::string> TrustList::trusted_bytes(const TrustedRoot& r) const {
  // Only a plain name under trusted/: a hand-edited list cannot point elsewhere.
  if (r.copy.empty() || r.copy.find('/') != std::string::npos || r.copy.starts_with(".")) return std::nullopt;
  auto text = read_file(m_dir / "trusted" / r.copy);
  if (!text || config_digest(*text) != r.digest) return std::nullopt;
  return *text;
}

Status TrustList::record(const fs::path& root, std::string_view bytes, std::string_view now_iso) {
  KAI_TRY(make_dirs(m_dir, 0700));
  auto lock = FileLock::acquire(m_dir / "trusted-roots.lock");
  if (!lock) return lock.error();
  auto all = load();
  if (!all) return all.error();
  TrustedRoot t;
  t.root = root;
  t.digest = config_digest(bytes);
  t.trusted_at = std::string(now_iso);
  // One copy per root, named by the root's own digest, so trusting again replaces it.
  t.copy = blob_id(root.string()) + ".toml";
  KAI_TRY(make_dirs(m_dir / "trusted", 0700));
  KAI_TRY(write_file_atomic(m_dir / "trusted" / t.copy, bytes, 0600));
  std::erase_if(*all, [&](const TrustedRoot& e) { return e.root == root; });
  all->push_back(t);
  nlohmann::json roots = nlohmann::json::array();
  for (const auto& e : *all)
    roots.push_back({{"root", e.root.string()}, {"digest", e.digest}, {"trusted_at", e.trusted_at}, {"copy", e.copy}});
  nlohmann::json j = {{"version", 1}, {"roots", roots}};
  return write_file_atomic(m_dir / k_list, j.dump(2) + "\n", 0600);
}

Result<TrustedRootFound> find_trusted_root(const Env& env) {
  TrustList list(env.user_config_dir);
  auto all = list.load();
  if (!all) return all.error();
  auto listed = [&](const fs::path& d) -> const TrustedRoot* {
    for (const auto& t : *all)
      if (t.root == d) return &t;
    return nullptr;
  };
  auto verify = [&](const TrustedRoot& t) -> Result<TrustedRootFound> {
    auto bytes = read_root_config(t.root);
    if (!bytes) return bytes.error();
    if (state_of(t, *bytes) != Trust::trusted) return changed_error(t.root, !*bytes);
    return TrustedRootFound{t.root, std::move(*bytes)};
  };
  if (env.root_override) {
    auto root = canonical_root_option(env);
    if (!root) return root.error();
    if (const TrustedRoot* t = listed(*root)) return verify(*t);
    return make_error(Errc::denied,
                      fmt::format("--root '{}' is not a trusted root; kaicoder works only in trees their owner trusted",
                                  env.root_override->string()),
                      has_config(*root) ? std::string(k_trust_hint)
                                        : "name the top of a tree you initialised with `kaicoder init` at a terminal");
  }
  const fs::path start = canonical_cwd(env);
  std::optional<fs::path> untrusted;
  for (fs::path d = start;; d = d.parent_path()) {
    if (const TrustedRoot* t = listed(d)) return verify(*t);
    // A kaicoder.toml nobody trusted is ignored: an agent with a shell of its
    // own could have written it to choose its own policy.
    if (!untrusted && has_config(d)) untrusted = d;
    if (d == d.parent_path()) break;
  }
  if (untrusted)
    return make_error(
        Errc::denied,
        fmt::format("'{}' is not a trusted root: its kaicoder.toml was never trusted by you", untrusted->string()),
        k_trust_hint);
  return make_error(Errc::denied, fmt::format("no trusted root at or above '{}'", start.string()),
                    "the owner runs `kaicoder init` at a terminal at the top of the tree");
}

AnyRoot find_any_root(const Env& env) {
  TrustList list(env.user_config_dir);
  auto all = list.load();
  std::vector<TrustedRoot> roots = all ? *all : std::vector<TrustedRoot>{};
  auto judge = [&](const fs::path& d) {
    for (const auto& t : roots)
      if (t.root == d) {
        auto bytes = read_root_config(d);
        return AnyRoot{d, bytes ? state_of(t, *bytes) : Trust::changed};
      }
    return AnyRoot{d, Trust::unknown};
  };
  if (env.root_override) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(absolute_from(env, *env.root_override), ec);
    return judge(ec ? absolute_from(env, *env.root_override) : c);
  }
  const fs::path start = canonical_cwd(env);
  for (fs::path d = start;; d = d.parent_path()) {
    for (const auto& t : roots)
      if (t.root == d) return judge(d);
    if (d == d.parent_path()) break;
  }
  auto found = nearest_holding(start, "kaicoder.toml");
  if (!found) found = nearest_holding(start, ".git");
  return judge(found ? *found : start);
}

Result<TrustReview> review_trust(const Env& env) {
  TrustReview r;
  if (env.root_override) {
    auto root = canonical_root_option(env);
    if (!root) return root.error();
    r.root = *root;
    if (!has_config(r.root))
      return make_error(Errc::usage, fmt::format("'{}' has no kaicoder.toml to trust", r.root.string()),
                        "run `kaicoder init` there to make one");
  } else {
    const fs::path start = canonical_cwd(env);
    auto found = nearest_holding(start, "kaicoder.toml");
    if (!found)
      return make_error(Errc::usage, fmt::format("no kaicoder.toml at or above '{}'", start.string()),
                        "run `kaicoder init` to make one");
    r.root = *found;
    if (r.root == r.root.root_path())
      return make_error(Errc::denied, "the filesystem root is never a kaicoder root", "move that kaicoder.toml aside");
  }
  auto bytes = read_root_config(r.root);
  if (!bytes) return bytes.error();
  if (!*bytes) return make_error(Errc::usage, fmt::format("'{}' has no kaicoder.toml to trust", r.root.string()));
  r.current = std::move(**bytes);
  TrustList list(env.user_config_dir);
  auto entry = list.find(r.root);
  if (!entry) return entry.error();
  if (*entry) {
    r.state = state_of(**entry, r.current);
    r.previous = list.trusted_bytes(**entry);
  }
  return r;
}

Status accept_trust(const Env& env, const TrustReview& review, std::string_view now_iso) {
  auto bytes = read_root_config(review.root);
  if (!bytes) return bytes.error();
  if (!*bytes || **bytes != review.current)
    return make_error(Errc::conflict,
                      fmt::format("'{}' changed while you were reading it; nothing was trusted",
                                  (review.root / "kaicoder.toml").string()),
                      "run `kaicoder trust` again and read what it shows");
  // A clone trusted for the first time needs the key that seals its records.
  if (auto key = create_key(env.user_config_dir); !key) return key.error();
  return TrustList(env.user_config_dir).record(review.root, review.current, now_iso);
}

}  // namespace kai
