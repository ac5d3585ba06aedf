// SnapshotStore::take: kaicoder's own walk of root, which writes one tree
// object per folder as it leaves it and reads only the files its stat cache
// (lib/run/snapshot_cache.hpp) and the watch of a run (lib/run/snapshot_watch.hpp)
// cannot vouch for.

#include "lib/run/snapshot.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <git2.h>

#include "lib/util/git.hpp"
#include "lib/util/stack.hpp"
#include "lib/util/text.hpp"
#include "lib/run/snapshot_cache.hpp"
#include "lib/run/snapshot_objects.hpp"
#include "lib/run/snapshot_watch.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

// Never in a snapshot: kaicoder's own files, git's, and secrets (which
// kaicoder copies nowhere, not even into its own store).
bool excluded(const Guardrails& g, ReadCheck& read, const std::string& rel) {
  auto under = [&](const std::string& d) { return rel == d || rel.starts_with(d + "/"); };
  if (under(".git") || rel.find("/.git/") != std::string::npos || rel.ends_with("/.git")) return true;
  if (under(g.state_dir) || rel == g.changelog) return true;
  if (std::find(g.config_files.begin(), g.config_files.end(), rel) != g.config_files.end()) return true;
  if (rel.substr(rel.rfind('/') + 1).find(".bak-kaicoder-") != std::string::npos) return true;
  return !read.readable(rel);
}

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};

constexpr size_t k_ignored_max = 100000;  // files listed in ignored trees, per snapshot
// Folders nested deeper than this are refused: a tree that deep is an
// attack on the walk (no build makes one), and each level costs a frame.
constexpr int k_max_depth = 3000;
// git's ignore rules are asked about paths at most this many folders deep.
// libgit2 reads the ignore file of every folder above the path it is asked
// about, for every path: below this depth the work per path would grow
// with the depth (a chain of 2,500 nested folders took minutes). Deeper
// untracked paths are snapshotted like any untracked file (restorable),
// never counted as ignored.
constexpr int k_ignore_depth = 24;

// Builds one snapshot tree by walking root, writing each folder's tree
// object straight into the store (an unchanged tree is already there).
class Builder {
public:
  // `watch`: the files and folders stat'ed are checked to be on its file
  // system; with `trusted` too, a quiet folder's untouched files are not stat'ed.
  Builder(Handles& h, const Guardrails& g, git_odb* odb, Snapshot& out, StatCache& old,
          const std::function<void(size_t)>& progress, SnapshotWatch* watch, bool trusted)
      : m_h(h),
        m_g(g),
        m_odb(odb),
        m_out(out),
        m_old(old.files),
        m_order(old.order),
        m_old_dirs(old.dirs),
        m_listings(old.listings),
        m_progress(progress),
        m_watch(watch),
        m_trusted(watch && trusted),
        m_racy(racy_from(now_ns())) {
    fresh.reserve(m_old.size());
  }

  // Walks the folder `fd` (owned) holding root-relative `prefix` ("" or
  // "a/b/"); `tree` is its tree, none when it holds no file.
  Status walk(int fd, const std::string& prefix, std::optional<git_oid>& tree);
  void guard_git();
  // The new cache, in walk order: a file that matched its entry points at
  // it (no copy while the tree is unchanged), any other is held here.
  struct Fresh {
    const Cache::value_type* same = nullptr;
    std::string rel;
    Cached c;
  };
  std::vector<Fresh> fresh;
  std::unordered_map<std::string, StatCache::Listing> listings;  // what this walk read
  bool foreign = false;  // something stat'ed lies on another file system than the watch's

private:
  bool ignored(const std::string& rel, bool dir) const {
    if (m_depth > k_ignore_depth) return false;
    int ign = 0;
    std::string p = m_h.prefix + rel + (dir ? "/" : "");
    return m_h.user && git_ignore_path_is_ignored(&ign, m_h.user.get(), p.c_str()) == 0 && ign;
  }
  // What the user's index names (its paths only, never its flags or ids),
  // read only when a path is not in the stat cache.
  Status read_tracked();
  Result<bool> tracked(const std::string& rel, bool dir) {
    if (!m_tracked_read) KAI_TRY(read_tracked());
    return dir ? m_tracked_dirs.count(rel) > 0 : m_tracked.count(rel) > 0;
  }
  Status file(int dirfd, const char* name, const std::string& rel, const struct stat& st, const Cache::value_type* old,
              std::vector<TreeItem>& into);
  // A file the watch saw nothing touch: its last entry, unstat'ed.
  void unchanged(const std::string& name, const Cache::value_type* old, std::vector<TreeItem>& into);
  void added(const std::string& name, uint32_t mode, const git_oid& id, std::vector<TreeItem>& into) {
    into.push_back(TreeItem{name, mode, id});
    if (++m_out.files % 1000 == 0 && m_progress) m_progress(m_out.files);
  }
  void seen_on(const struct stat& st) {
    if (m_watch && static_cast<uint64_t>(st.st_dev) != m_watch->dev()) foreign = true;
  }
  void count_ignored(int fd, const std::string& prefix, const std::string& top, int depth = 0);
  Handles& m_h;
  int m_depth = 0;  // folders above the folder being walked
  const Guardrails& m_g;
  ReadCheck m_read{m_g};  // for the paths the stat cache does not know
  git_odb* m_odb;
  Snapshot& m_out;
  const Cache& m_old;
  const std::vector<const Cache::value_type*>& m_order;
  size_t m_next = 0;  // where in m_order the next file probably is
  // The cache's entry for `rel`, or null.
  const Cache::value_type* cached(const std::string& rel);
  const std::unordered_set<std::string>& m_old_dirs;
  std::unordered_map<std::string, StatCache::Listing>& m_listings;  // what a listing still valid is moved out of
  const std::function<void(size_t)>& m_progress;
  SnapshotWatch* m_watch;
  const bool m_trusted;
  uint64_t m_racy;  // stat data this new or newer is not cached
  bool m_tracked_read = false;
  std::unordered_set<std::string> m_tracked, m_tracked_dirs;
};

const Cache::value_type* Builder::cached(const std::string& rel) {
  if (m_next < m_order.size() && m_order[m_next]->first == rel) return m_order[m_next++];
  auto hit = m_old.find(rel);
  if (hit == m_old.end()) return nullptr;
  // Go on from there: after a new or removed file the order holds again.
  for (size_t i = m_next + 1; i < m_order.size() && i <= m_next + 8; ++i)
    if (m_order[i] == &*hit) {
      m_next = i + 1;
      break;
    }
  return &*hit;
}

Status Builder::read_tracked() {
  m_tracked_read = true;
  if (!m_h.user) return ok_status();
  git_index* idx = nullptr;
  KAI_TRY(git_check(git_repository_index(&idx, m_h.user.get()), "reading the repository's index"));
  GitOwned<git_index, git_index_free> own(idx);
  KAI_TRY(git_check(git_index_read(idx, 0), "reading the repository's index"));
  for (size_t i = 0, n = git_index_entrycount(idx); i < n; ++i) {
    std::string_view path = git_index_get_byindex(idx, i)->path;
    if (!path.starts_with(m_h.prefix)) continue;
    std::string rel(path.substr(m_h.prefix.size()));
    for (auto slash = rel.rfind('/'); slash != std::string::npos && slash > 0; slash = rel.rfind('/', slash - 1))
      if (!m_tracked_dirs.insert(rel.substr(0, slash)).second) break;
    m_tracked.insert(std::move(rel));
  }
  return ok_status();
}

Status Builder::file(int dirfd, const char* name, const std::string& rel, const struct stat& st,
                     const Cache::value_type* old, std::vector<TreeItem>& into) {
  const Cached* cached = old ? &old->second : nullptr;
  StatKey k = key_of(st);
  if (S_ISREG(st.st_mode) && k.size > k_snapshot_max_bytes) {
    m_out.large[rel] = k;
    return ok_status();
  }
  uint32_t mode = S_ISLNK(st.st_mode)      ? GIT_FILEMODE_LINK
                  : (st.st_mode & S_IXUSR) ? GIT_FILEMODE_BLOB_EXECUTABLE
                                           : GIT_FILEMODE_BLOB;
  git_oid id;
  bool cacheable = settled_before(k, m_racy);
  if (st.st_mode & (S_ISUID | S_ISGID)) m_out.setid[rel] = st.st_mode & 07777;
  if (cached && cached->usable && cached->st == k && cached->git_mode == mode) {
    id = cached->id;
    if (cacheable) {  // the new entry would be the old one
      fresh.push_back(Fresh{old, {}, {}});
      added(name, mode, id, into);
      return ok_status();
    }
  } else if (S_ISLNK(st.st_mode)) {
    std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlinkat(dirfd, name, buf.data(), buf.size());
    if (n < 0) return ok_status();
    cacheable = cacheable && static_cast<size_t>(n) == static_cast<size_t>(st.st_size);
    KAI_TRY(git_check(git_odb_write(&id, m_odb, buf.data(), static_cast<size_t>(n), GIT_OBJECT_BLOB),
                      fmt::format("storing '{}' in the snapshot", rel)));
    ++m_out.hashed;
  } else {
    bool stable = false;
    auto s = store_regular(m_odb, dirfd, name, rel, st, id, stable);
    // Each file read is an event of the watch's: read them as they come, or
    // a first walk of a big tree would overflow the kernel's queue.
    if (m_watch && m_out.hashed % 256 == 255) m_watch->drain();
    if (!s) return s.error().code == Errc::not_found ? ok_status() : s;
    cacheable = cacheable && stable;
    ++m_out.hashed;
  }
  fresh.push_back(Fresh{nullptr, rel, Cached{k, id, mode, cacheable}});
  added(name, mode, id, into);
  return ok_status();
}

void Builder::unchanged(const std::string& name, const Cache::value_type* old, std::vector<TreeItem>& into) {
  const Cached& c = old->second;
  if (c.st.mode & (S_ISUID | S_ISGID)) m_out.setid[old->first] = c.st.mode & 07777;
  fresh.push_back(Fresh{old, {}, {}});
  ++m_out.unstatted;
  added(name, c.git_mode, c.id, into);
}

// Files of an ignored tree: stat data only, so that changes can be counted.
// An ignored tree nested past k_max_depth below the walk is left uncounted.
void Builder::count_ignored(int fd, const std::string& prefix, const std::string& top, int depth) {
  if (m_depth + depth > k_max_depth) {
    ::close(fd);
    m_out.uncounted.insert(top);
    return;
  }
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return;
  }
  std::vector<std::string> subdirs;
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == ".." || name == ".git") continue;
    struct stat st;
    if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)))
      m_out.setid[prefix + std::string(name)] = st.st_mode & 07777;
    if (S_ISDIR(st.st_mode))
      subdirs.emplace_back(name);
    else if (m_out.ignored.size() >= k_ignored_max)
      m_out.uncounted.insert(top);
    else
      m_out.ignored[prefix + std::string(name)] = key_of(st);
  }
  for (const auto& sub : subdirs) {
    int sfd = ::openat(::dirfd(d), sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd >= 0) count_ignored(sfd, prefix + sub + "/", top, depth + 1);
  }
  ::closedir(d);
}

Status Builder::walk(int fd, const std::string& prefix, std::optional<git_oid>& tree) {
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return ok_status();
  }
  std::unique_ptr<DIR, DirCloser> own(d);
  // The folder's stat data first: a change after it shows at the next walk.
  struct stat self;
  const bool have_self = ::fstat(::dirfd(d), &self) == 0;
  const StatKey self_key = have_self ? key_of(self) : StatKey{};
  if (have_self) seen_on(self);
  auto was = have_self ? m_listings.find(prefix) : m_listings.end();
  // A folder the watch vouches for: the same folder as at the last walk
  // (its inode), on the watched file system, and no event in it since (an
  // entry added, removed or renamed in it is one).
  const bool quiet = m_trusted && was != m_listings.end() && was->second.key.ino == self_key.ino &&
                     static_cast<uint64_t>(self.st_dev) == m_watch->dev() && m_watch->quiet_folder(self_key.ino);
  const std::vector<std::string>* names = nullptr;
  std::vector<std::string> read;
  if (was != m_listings.end() && was->second.key == self_key) {
    names = &listings.insert(m_listings.extract(was)).position->second.names;  // moved, not copied
  } else {
    while (dirent* e = ::readdir(d)) {
      std::string_view name = e->d_name;
      if (name != "." && name != ".." && name != ".git") read.emplace_back(name);
    }
    names = &read;
  }
  struct Entry {
    const std::string* name;
    struct stat st;
    const Cache::value_type* hit;  // the cache's entry, when looked up already
    bool looked, untouched;
  };
  std::vector<Entry> entries;
  entries.reserve(names->size());
  for (const auto& name : *names) {
    Entry e{&name, {}, nullptr, false, false};
    if (quiet) {
      // A file of the last walk whose inode no event named (a write, a
      // mode change, a new link, an open: through any path) is as it was.
      std::string rel = prefix + name;
      if (!m_old_dirs.count(rel)) {
        e.hit = cached(rel);
        e.looked = true;
        e.untouched = e.hit && e.hit->second.usable && m_watch->quiet_file(self_key.ino, name, e.hit->second.st.ino);
      }
    }
    if (!e.untouched && ::fstatat(::dirfd(d), name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    entries.push_back(e);
  }
  // Kept only out of the racy window (a change within the same clock tick
  // could leave ctime as it was). Moving the vector keeps its strings where
  // they are, so `entries` still points at them.
  if (names == &read && have_self && settled_before(self_key, m_racy))
    listings.emplace(prefix, StatCache::Listing{self_key, std::move(read), {}, {}});
  std::vector<TreeItem> into;
  for (const Entry& e : entries) {
    const std::string& name = *e.name;
    if (e.untouched) {
      unchanged(name, e.hit, into);
      continue;
    }
    const struct stat& st = e.st;
    seen_on(st);
    std::string rel = prefix + name;
    bool dir = S_ISDIR(st.st_mode);
    if (m_watch && !dir && st.st_nlink > 1) m_watch->aliased(static_cast<uint64_t>(st.st_ino));
    if (!dir && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {  // fifos, sockets, devices: never stored
      if (excluded(m_g, m_read, rel)) m_out.guarded[rel] = key_of(st);
      continue;
    }
    // A path the last snapshot held was not excluded then, and the cache
    // is only used under the same guardrails (the cache file names them).
    const Cache::value_type* hit = dir ? nullptr : e.looked ? e.hit : cached(rel);
    bool known = dir ? m_old_dirs.count(rel) > 0 : hit != nullptr;
    if (!known && excluded(m_g, m_read, rel)) {
      // Kaicoder's state and changelog change under other kaicoder commands; the rest is guarded.
      bool kaicoders = rel == m_g.state_dir || rel.starts_with(m_g.state_dir + "/") || rel == m_g.changelog;
      if (!kaicoders) {
        if (dir)
          m_out.unwalked.insert(rel);
        else
          m_out.guarded[rel] = key_of(st);
      }
      continue;
    }
    // A file the previous snapshot held, or the index names, is looked at
    // whatever the ignore rules say now.
    if (!known) {
      auto t = tracked(rel, dir);
      if (!t) return t.error();
      known = *t;
    }
    if (!known && ignored(rel, dir)) {
      m_out.ignored_tops.insert(dir ? rel + "/" : rel);
      if (dir) {
        int sfd = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sfd >= 0) count_ignored(sfd, rel + "/", rel + "/");
      } else {
        m_out.ignored[rel] = key_of(st);
        if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID))) m_out.setid[rel] = st.st_mode & 07777;
      }
      continue;
    }
    if (!dir) {
      KAI_TRY(file(::dirfd(d), name.c_str(), rel, st, hit, into));
      continue;
    }
    int sfd = ::openat(::dirfd(d), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0) continue;
    struct stat g;
    if (::fstatat(sfd, ".git", &g, AT_SYMLINK_NOFOLLOW) == 0) {  // a nested repository or submodule
      ::close(sfd);
      m_out.unwalked.insert(rel);
      continue;
    }
    if (m_depth >= k_max_depth) {
      ::close(sfd);
      return make_error(Errc::usage,
                        fmt::format("folders are nested more than {} deep under '{}'", k_max_depth,
                                    make_visible(cut_to_length(rel, 60), Allow::nothing)),
                        "remove the nested folders (rm -r); no tool makes a tree this deep");
    }
    m_out.dirs.insert(rel);
    std::optional<git_oid> sub;
    ++m_depth;
    Status walked = walk(sfd, rel + "/", sub);
    --m_depth;
    KAI_TRY(walked);
    if (sub) into.push_back(TreeItem{name + "/", GIT_FILEMODE_TREE, *sub});
  }
  // The folders kind of watch watches the folder from now on, after this
  // walk's own reads of its files (lib/run/snapshot_watch.hpp).
  if (m_watch && !m_trusted && have_self) m_watch->enter(::dirfd(d), self_key.ino);
  auto mine = listings.find(prefix);  // this folder's listing, kept for the next walk
  StatCache::Listing* kept = mine != listings.end() ? &mine->second : nullptr;
  if (into.empty()) {
    if (kept) kept->items.clear();
    return ok_status();
  }
  tree.emplace();
  sort_tree(into);
  // The same items as the tree the last walk wrote, and that tree is still
  // in the store (the snapshot before a run is held by a ref meanwhile).
  if (kept && !kept->items.empty() && kept->items == into && git_odb_exists(m_odb, &kept->tree)) {
    *tree = kept->tree;
    return ok_status();
  }
  KAI_TRY(write_tree(m_odb, into, *tree));
  if (kept) {
    kept->items = std::move(into);
    kept->tree = *tree;
  }
  return ok_status();
}

// Git's own files that run commands (config, hooks, info/, commondir,
// alternates): guarded, watched by their stat data.
void Builder::guard_git() {
  if (!m_h.user) return;
  fs::path gitdir = git_repository_path(m_h.user.get());
  fs::path common = git_repository_commondir(m_h.user.get());
  auto label = [&](const fs::path& p) {
    std::string rel = p.lexically_normal().lexically_relative(m_h.base).generic_string();
    return m_h.prefix.empty() && !rel.starts_with("..") ? rel : p.lexically_normal().generic_string();
  };
  auto one = [&](const fs::path& p) {
    struct stat st;
    if (::lstat(p.c_str(), &st) == 0) m_out.guarded[label(p)] = key_of(st);
  };
  for (const fs::path& dir : {gitdir, common}) {
    for (const char* f : {"config", "config.worktree", "commondir", "objects/info/alternates"}) one(dir / f);
    for (const char* sub : {"hooks", "info"}) {
      std::error_code ec;
      for (fs::directory_iterator it(dir / sub, ec), end; !ec && it != end; it.increment(ec)) one(it->path());
    }
  }
}

}  // namespace

void SnapshotStore::seed(ListedFolders& listed) const {
  if (!m_cache) m_cache = std::make_shared<StatCache>();
  // Only names read well after the folder's last change count.
  const uint64_t racy = racy_from(listed.read_after);
  for (auto& f : listed.folders) {
    if (!settled_before(f.key, racy)) continue;
    std::erase(f.names, ".git");  // as a snapshot's walk lists a folder
    m_cache->listings.try_emplace(std::move(f.prefix), StatCache::Listing{f.key, std::move(f.names), {}, {}});
  }
  listed.folders.clear();
}

Result<Snapshot> SnapshotStore::take(const std::function<void(size_t)>& progress, SnapshotWatch* watch) const {
  auto h = open_handles(m_dir, m_root, Create::yes);
  if (!h) return h.error();
  git_odb* odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&odb, h->snap.get()), "opening the snapshot objects"));
  OdbPtr own_odb(odb);
  Snapshot out;
  out.git = h->user != nullptr;
  // The cache this object wrote last is used from memory: a run between two
  // snapshots cannot plant entries in it, whatever it writes on disk.
  const fs::path cache_file = m_dir / k_cache_name;
  if (!m_cache) m_cache = std::make_shared<StatCache>();
  if (!m_cache->loaded) m_cache->load(cache_file, cache_head(m_root, m_guards));
  const Cache& old = m_cache->files;
  // The watch's word is taken only about what a walk it saw from the start
  // recorded; every event up to now is read first.
  const bool trusted = watch && watch->drain() && m_cache->armed == watch->serial();
  Builder b(*h, m_guards, odb, out, *m_cache, progress, watch, trusted);
  int fd = ::open(m_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot open '{}': {}", m_root.string(), std::strerror(errno)));
  std::optional<git_oid> tree;
  // The walk recurses once per folder level: on a stack no tree can overflow.
  Status walked = ok_status();
  run_with_stack(k_walk_stack, [&] { walked = b.walk(fd, "", tree); });
  KAI_TRY(walked);
  b.guard_git();
  if (!tree) {
    std::vector<TreeItem> none;
    tree.emplace();
    KAI_TRY(write_tree(odb, none, *tree));
  }
  out.tree = hex(*tree);
  // Every file matched its cache entry (none was read) and none is new or gone.
  bool same = out.hashed == 0 && b.fresh.size() == old.size();
  struct stat st;
  same = same && ::stat(cache_file.c_str(), &st) == 0 && key_of(st) == m_cache->on_disk;
  // The cache only saves work: a snapshot stands without it.
  if (!same) {
    Cache fresh;
    std::vector<const Cache::value_type*> order;
    fresh.reserve(b.fresh.size());
    order.reserve(b.fresh.size());
    for (auto& f : b.fresh) {
      auto [it, added] = f.same ? fresh.emplace(f.same->first, f.same->second) : fresh.emplace(std::move(f.rel), f.c);
      if (added) order.push_back(&*it);
    }
    m_cache->files = std::move(fresh);  // a moved map keeps its nodes, so `order` stays valid
    m_cache->order = std::move(order);
  }
  if (!same && save_cache(cache_file, cache_head(m_root, m_guards), m_cache->order) &&
      ::stat(cache_file.c_str(), &st) == 0)
    m_cache->on_disk = key_of(st);
  m_cache->dirs = std::unordered_set<std::string>(out.dirs.begin(), out.dirs.end());
  m_cache->listings = std::move(b.listings);
  m_cache->armed = watch && watch->sound() && !b.foreign ? watch->serial() : 0;
  return out;
}

}  // namespace kai
