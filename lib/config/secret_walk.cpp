#include "lib/config/secret_walk.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <dirent.h>
#include <functional>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>

#include <fmt/format.h>

#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/stack.hpp"
#include "lib/version.hpp"

namespace kai {
namespace fs = std::filesystem;

// Named, not anonymous: a unity build puts this file beside others of lib/config.
namespace secret_walk_detail {

constexpr std::string_view k_magic = "kaicoder-secret-walk-1\n";
constexpr std::string_view k_seal_kind = "secret-walk";
// A cache is a line per folder and a few names: far below this for any tree
// the walk can cover (k_secret_walk_entries names).
constexpr size_t k_max_cache = 64u << 20;

// What the walk found in one folder, in the order read.
struct Folder {
  StatKey key;
  size_t count = 0;  // names in it, as the walk's bound counts them
  // 'd' a folder entered, 's' a secret file; then its name.
  std::vector<std::pair<char, std::string>> items;
  bool has_folders = false;  // an item is 'd'
};

struct Cache {
  uint64_t read_after = 0;  // the wall clock before the walk that wrote it
  std::unordered_map<std::string, Folder> folders;
};

// Length-prefixed fields: a name holds any byte but '/' and NUL.
void put(std::string& out, std::string_view s) {
  out += fmt::format("{}:", s.size());
  out += s;
}

// What decides the walk besides the tree: the version (its secret-file
// patterns, what it skips, its bounds) and the guardrails.
std::string config_key(const Guardrails& g) {
  std::string k;
  put(k, version());
  put(k, fmt::format("{} {}", k_secret_walk_entries, k_secret_walk_files));
  put(k, g.state_dir);
  put(k, g.changelog);
  for (const auto* list : {&g.config_files, &g.deny_write, &g.deny_read}) {
    put(k, fmt::format("{}", list->size()));
    for (const auto& s : *list) put(k, s);
  }
  put(k, fmt::format("{}{}", g.break_hardlinks ? 1 : 0, g.allow_unusual_names ? 1 : 0));
  return k;
}

class Reader {
public:
  explicit Reader(std::string_view s) : m_s(s) {}
  bool done() const { return m_s.empty(); }
  std::optional<uint64_t> number(char end) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(m_s.data(), m_s.data() + m_s.size(), v);
    if (ec != std::errc() || p == m_s.data() || p == m_s.data() + m_s.size() || *p != end) return std::nullopt;
    m_s.remove_prefix(static_cast<size_t>(p - m_s.data()) + 1);
    return v;
  }
  std::optional<std::string_view> field() {
    auto n = number(':');
    if (!n || *n > m_s.size()) return std::nullopt;
    std::string_view f = m_s.substr(0, *n);
    m_s.remove_prefix(*n);
    return f;
  }
  bool literal(std::string_view s) {
    if (!m_s.starts_with(s)) return false;
    m_s.remove_prefix(s.size());
    return true;
  }

private:
  std::string_view m_s;
};

std::string encode(const std::string& config, uint64_t read_after,
                   const std::vector<std::pair<std::string, Folder>>& folders) {
  std::string out(k_magic);
  put(out, config);
  out += fmt::format("{}\n{}\n", read_after, folders.size());
  for (const auto& [prefix, f] : folders) {
    put(out, prefix);
    out += fmt::format("{} {} {} {} {} {} {}\n", f.key.size, f.key.mtime_ns, f.key.ctime_ns, f.key.ino, f.key.mode,
                       f.count, f.items.size());
    for (const auto& [kind, name] : f.items) {
      out += kind;
      put(out, name);
    }
  }
  return out;
}

std::optional<Cache> decode(std::string_view body, const std::string& config) {
  Reader r(body);
  if (!r.literal(k_magic)) return std::nullopt;
  auto cfg = r.field();
  if (!cfg || *cfg != config) return std::nullopt;
  Cache c;
  auto after = r.number('\n'), n = r.number('\n');
  if (!after || !n || *n > k_secret_walk_entries + 1) return std::nullopt;
  c.read_after = *after;
  for (uint64_t i = 0; i < *n; ++i) {
    auto prefix = r.field();
    if (!prefix) return std::nullopt;
    Folder f;
    auto size = r.number(' '), mtime = r.number(' '), ctime = r.number(' '), ino = r.number(' '),
         mode = r.number(' '), count = r.number(' '), items = r.number('\n');
    if (!size || !mtime || !ctime || !ino || !mode || !count || !items || *items > *count) return std::nullopt;
    f.key = StatKey{*size, *mtime, *ctime, *ino, static_cast<uint32_t>(*mode)};
    f.count = *count;
    for (uint64_t j = 0; j < *items; ++j) {
      const char kind = r.literal("d") ? 'd' : r.literal("s") ? 's' : '\0';
      auto name = r.field();
      if (!kind || !name || name->empty() || name->find('/') != std::string_view::npos) return std::nullopt;
      f.items.emplace_back(kind, std::string(*name));
      f.has_folders = f.has_folders || kind == 'd';
    }
    c.folders.emplace(std::string(*prefix), std::move(f));
  }
  if (!r.done()) return std::nullopt;
  return c;
}

// The cache at `file` if it verifies under `sealer` and was written for `config`.
std::optional<Cache> load(const fs::path& file, const Sealer& sealer, const std::string& config) {
  auto text = read_file(file, k_max_cache);
  if (!text || text->size() > k_max_cache) return std::nullopt;
  const size_t nl = text->find('\n');
  if (nl == std::string::npos) return std::nullopt;
  const std::string_view mac = std::string_view(*text).substr(0, nl), body = std::string_view(*text).substr(nl + 1);
  if (sealer.check(k_seal_kind, "", body, mac) != SealCheck::ok) return std::nullopt;
  return decode(body, config);
}

// How many roots' caches the owner's walk-cache folder keeps, and how old a
// temp file left there must be before it is taken for a crash's leftover.
constexpr size_t k_caches_kept = 64;
constexpr uint64_t k_stale_temp_ns = uint64_t{600} * 1'000'000'000;

bool hex_name(std::string_view name) {
  return name.size() >= 32 && std::all_of(name.begin(), name.end(), [](char ch) {
           return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
         });
}

// Keeps the folder of caches bounded: a cache is named by its root and
// store, so a store made anew (or a root no longer used) leaves its old one
// behind, and a crash leaves a temp file. Removes the temp files older than
// k_stale_temp_ns and, past k_caches_kept caches, the least recently written
// (never `kept`, the one just written): a root whose cache went is walked
// in full once, as without one. Only names kaicoder gives (hex, or hex and
// ".tmp-PID") and only regular files; best effort, silent.
void prune(const fs::path& folder, const std::string& kept, uint64_t now) {
  Fd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) return;
  std::vector<std::pair<uint64_t, std::string>> caches;
  size_t left = 4 * k_caches_kept + 4096;
  const int listing = ::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0);  // read_folder closes the one it reads
  if (listing < 0) return;
  (void)read_folder(listing, left, [&](int dirfd, const char* name, unsigned type) {
    if (type != DT_REG) return true;
    const std::string_view n(name);
    const size_t dot = n.find(".tmp-");
    const bool temp = dot != std::string_view::npos && hex_name(n.substr(0, dot)) &&
                      n.size() > dot + 5 && std::all_of(n.begin() + static_cast<std::ptrdiff_t>(dot + 5), n.end(),
                                                          [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!temp && (!hex_name(n) || n == kept)) return true;
    struct stat st;
    if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return true;
    const uint64_t mtime = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                           static_cast<uint64_t>(st.st_mtim.tv_nsec);
    if (temp) {
      if (now > mtime && now - mtime > k_stale_temp_ns) (void)::unlinkat(dirfd, name, 0);
    } else {
      caches.emplace_back(mtime, std::string(n));
    }
    return true;
  });
  if (caches.size() + 1 <= k_caches_kept) return;
  std::sort(caches.begin(), caches.end(), std::greater<>());
  for (size_t i = k_caches_kept - 1; i < caches.size(); ++i) (void)::unlinkat(dir.get(), caches[i].second.c_str(), 0);
}

// Replace `file` by a temp file renamed over it; no fsync: a cache torn by a
// crash does not verify and is walked past. False on any failure.
bool save(const fs::path& file, const Sealer& sealer, const std::string& body) {
  auto mac = sealer.seal(k_seal_kind, "", body);
  if (!mac) return false;
  if (!make_dirs(file.parent_path(), 0700)) return false;
  const fs::path tmp = file.string() + fmt::format(".tmp-{}", ::getpid());
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (fd.get() < 0) return false;
  const std::string text = *mac + "\n" + body;
  bool ok = write_all(fd.get(), text);
  fd.reset();
  ok = ok && ::rename(tmp.c_str(), file.c_str()) == 0;
  if (!ok) ::unlink(tmp.c_str());
  return ok;
}

struct Walker {
  Walker(const Guardrails& guards, const Cache* cache, ListedFolders* l, SecretWalk& o)
      : g(guards),
        check(guards),
        old(cache),
        racy(cache ? racy_from(cache->read_after) : 0),
        listed(l),
        out(o) {}

  const Guardrails& g;
  ReadCheck check;
  const Cache* old;
  uint64_t racy;  // folders changed at or after this are read again
  ListedFolders* listed;
  SecretWalk& out;
  size_t left = k_secret_walk_entries;
  bool cut = false;  // a bound stopped the walk
  size_t max_depth = 0;  // folders below root it may go down; 0: no bound
  size_t depth = 0;
  bool too_deep = false;  // it stopped at max_depth (and is cut)
  std::vector<std::pair<std::string, Folder>> fresh;

  bool found(const std::string& rel) {
    out.files.push_back(rel);
    if (out.files.size() >= k_secret_walk_files) cut = true;
    return !cut;
  }

  // The cache's entry for the folder at `prefix` if its stat data are `key`
  // and out of the racy window; null when the folder must be read.
  const Folder* cached(const std::string& prefix, const StatKey& key) const {
    if (!old) return nullptr;
    auto it = old->folders.find(prefix);
    if (it == old->folders.end() || !(it->second.key == key) || !settled_before(key, racy) ||
        it->second.count > left)
      return nullptr;
    return &it->second;
  }

  void enter(int parent, const std::string& name, const std::string& prefix) {
    if (max_depth != 0 && depth >= max_depth) {
      too_deep = cut = true;
      return;
    }
    ++depth;
    descend(parent, name, prefix);
    --depth;
  }

  void descend(int parent, const std::string& name, const std::string& prefix) {
    const std::string sub = prefix + name + "/";
    // A cached folder with no folder in it is known from its stat data alone:
    // one fstatat, never opened.
    struct stat st;
    if (old && ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
      if (const Folder* f = cached(sub, key_of(st)); f && !f->has_folders) return keep(-1, sub, *f);
    int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) folder(fd, sub);
  }

  // `fd` (owned) is the folder at `prefix` ("" or "a/b/").
  void folder(int fd, const std::string& prefix) {
    struct stat before;
    if (::fstat(fd, &before) != 0) {
      ::close(fd);
      return;
    }
    const StatKey key = key_of(before);
    if (const Folder* f = cached(prefix, key)) {
      Fd own(fd);
      keep(fd, prefix, *f);
      return;
    }
    read(fd, prefix, key);
  }

  // `fd`: the folder, or -1 when it has no folder to enter.
  void keep(int fd, const std::string& prefix, const Folder& f) {
    ++out.folders_kept;
    left -= f.count;
    fresh.emplace_back(prefix, f);
    for (const auto& [kind, name] : f.items) {
      if (cut) break;  // a cut walk writes no cache
      if (kind == 's')
        found(prefix + name);
      else
        enter(fd, name, prefix);
    }
  }

  void read(int fd, const std::string& prefix, const StatKey& key) {
    ++out.folders_read;
    if (cut) {  // a bound stopped the walk: nothing more is read
      ::close(fd);
      return;
    }
    Folder f{key, 0, {}, false};
    std::vector<std::string> names;
    const bool whole = read_folder(
        fd, left,
        [&](int dirfd, const char* name, unsigned type) {
          // What this folder takes of `left` when it is kept from the cache
          // (an entry gone while it was read changed the folder: it is read again).
          ++f.count;
          if (type == DT_DIR) {
            if (walk_skips(g, name)) return true;
            f.items.emplace_back('d', name);
            f.has_folders = true;
            enter(dirfd, name, prefix);
          } else if (type == DT_REG) {
            std::string rel = prefix + name;
            if (check.readable(rel)) return true;
            f.items.emplace_back('s', name);
            found(rel);
          }
          return !cut;
        },
        listed ? &names : nullptr);
    if (!whole) cut = true;
    if (whole && listed) listed->folders.push_back(ListedFolders::Folder{prefix, key, std::move(names)});
    if (whole) fresh.emplace_back(prefix, std::move(f));
  }
};

}  // namespace secret_walk_detail

fs::path secret_walk_cache(const Sealer& sealer, const fs::path& owner_dir) {
  // Named by a MAC of the root and store: no path characters, nothing learnt from the name.
  auto name = sealer.seal("secret-walk-name", "", "");
  if (!name || owner_dir.empty()) return {};
  return owner_dir / "walk-cache" / *name;
}

SecretWalk walk_secret_files(const fs::path& root, const Guardrails& g, const Sealer& sealer,
                             const fs::path& owner_dir, ListedFolders* listed, uint64_t now) {
  SecretWalk out;
  if (listed) listed->read_after = now;
  const fs::path file = secret_walk_cache(sealer, owner_dir);
  const std::string config = file.empty() ? std::string() : secret_walk_detail::config_key(g);
  std::optional<secret_walk_detail::Cache> old =
      file.empty() ? std::nullopt : secret_walk_detail::load(file, sealer, config);
  // The tree sets the depth of the recursion: a tree deeper than
  // k_shallow_depth is walked again from the start on a stack of its own.
  bool opened = false, cut = false;
  std::vector<std::pair<std::string, secret_walk_detail::Folder>> fresh;
  run_shallow_first(k_walk_stack, [&](size_t max_depth) {
    out = SecretWalk{};
    out.cache_used = old.has_value();
    if (listed) listed->folders.clear();
    secret_walk_detail::Walker w(g, old ? &*old : nullptr, listed, out);
    w.max_depth = max_depth;
    const int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    opened = fd >= 0;
    if (opened) w.folder(fd, "");
    if (w.too_deep) return false;
    cut = w.cut;
    fresh = std::move(w.fresh);
    return true;
  });
  if (!file.empty() && !cut && opened && out.folders_read > 0)
    out.cache_written = secret_walk_detail::save(file, sealer, secret_walk_detail::encode(config, now, fresh));
  if (out.cache_written) secret_walk_detail::prune(file.parent_path(), file.filename().string(), now);
  return out;
}

}  // namespace kai
