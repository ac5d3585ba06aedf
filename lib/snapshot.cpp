#include "lib/snapshot.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <dirent.h>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <git2.h>

#include "lib/git.hpp"
#include "lib/snapshot_watch.hpp"
#include "lib/util/fs.hpp"
#include "lib/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

template <typename T, void (*F)(T*)>
struct Freer {
  void operator()(T* p) const { F(p); }
};
template <typename T, void (*F)(T*)>
using Owned = std::unique_ptr<T, Freer<T, F>>;
using RepoPtr = Owned<git_repository, git_repository_free>;
using OdbPtr = Owned<git_odb, git_odb_free>;
using IndexPtr = Owned<git_index, git_index_free>;
using TreePtr = Owned<git_tree, git_tree_free>;

constexpr const char* k_refs = "refs/kaicoder/";
constexpr const char* k_pending = "refs/kaicoder/pending/";

std::string hex(const git_oid& id) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &id);
  return buf;
}

Result<git_oid> oid_of(const std::string& text) {
  git_oid id;
  if (git_oid_fromstrn(&id, text.data(), text.size()) < 0 || text.size() != GIT_OID_HEXSZ)
    return make_error(Errc::io, fmt::format("'{}' is not an object id", text));
  return id;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Never in a snapshot: kaicoder's own files, git's, and secrets (which
// kaicoder copies nowhere, not even into its own store).
bool excluded(const Guardrails& g, const std::string& rel) {
  auto under = [&](const std::string& d) { return rel == d || starts_with(rel, d + "/"); };
  if (under(".git") || rel.find("/.git/") != std::string::npos || rel.ends_with("/.git")) return true;
  if (under(g.state_dir) || rel == g.changelog) return true;
  if (std::find(g.config_files.begin(), g.config_files.end(), rel) != g.config_files.end()) return true;
  if (rel.substr(rel.rfind('/') + 1).find(".bak-kaicoder-") != std::string::npos) return true;
  return !check_read(g, RootPath{rel, {}}).ok();
}

// The store, with the user's object store (if any) as an in-process
// alternate, and where the user's work tree lies relative to root.
struct Handles {
  RepoPtr snap, user;
  fs::path base;       // the user's work tree, or root when there is none
  std::string prefix;  // root relative to base: "" or "sub/dir/"
};

enum class Create { no, yes };

Result<Handles> open_handles(const fs::path& dir, const fs::path& root, Create create) {
  git_init_once();
  Handles h;
  git_repository* r = nullptr;
  if (!fs::exists(dir / "HEAD")) {
    if (create == Create::no)
      return make_error(Errc::not_found, fmt::format("no snapshot store at '{}'", dir.string()));
    git_repository_init_options o = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    o.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
    o.mode = GIT_REPOSITORY_INIT_SHARED_UMASK;
    KAI_TRY(git_check(git_repository_init_ext(&r, dir.c_str(), &o), "creating the snapshot store"));
  } else {
    KAI_TRY(git_check(git_repository_open_bare(&r, dir.c_str()), "opening the snapshot store"));
  }
  h.snap.reset(r);
  h.base = root;
  git_repository* u = nullptr;
  if (git_repository_open_ext(&u, root.c_str(), 0, nullptr) == 0) {
    RepoPtr user(u);
    std::error_code ec;
    const char* wd = git_repository_workdir(u);
    std::string w = wd ? wd : "";
    while (w.size() > 1 && w.back() == '/') w.pop_back();  // libgit2 ends it with '/'
    fs::path base = wd ? fs::canonical(w, ec) : fs::path{};
    std::string rel = wd ? root.lexically_relative(base).generic_string() : std::string("..");
    if (wd && !ec && !starts_with(rel, "..")) {
      h.base = base;
      h.prefix = rel == "." || rel.empty() ? "" : rel + "/";
      git_odb* odb = nullptr;
      KAI_TRY(git_check(git_repository_odb(&odb, h.snap.get()), "opening the snapshot objects"));
      OdbPtr own(odb);
      fs::path objects = fs::path(git_repository_commondir(u)) / "objects";
      KAI_TRY(git_check(git_odb_add_disk_alternate(odb, objects.c_str()), "reading the repository's objects"));
      h.user = std::move(user);
    }
  }
  return h;
}

// ----- kaicoder's stat cache --------------------------------------------------

struct Cached {
  StatKey st;
  git_oid id;
  uint32_t git_mode = 0;
  bool usable = true;  // false: seen in the racy window; the path counts as known, its id is read again
};
using Cache = std::unordered_map<std::string, Cached>;

}  // namespace

struct StatCache {
  bool loaded = false;
  Cache files;
  // The files in the order the last walk met them (a walk of an unchanged
  // tree meets them in the same order, so each lookup is a comparison).
  std::vector<const Cache::value_type*> order;
  std::unordered_set<std::string> dirs;  // the folders of the last snapshot
  // Each folder's names as the last walk read them, by root-relative prefix
  // ("" or "a/b/"), with the folder's stat data read before: while that
  // stays the same (any entry added, removed or renamed changes a folder's
  // ctime, which no one can set back) the names are the same, and a walk
  // need not read the folder again. In memory only, like `order`.
  struct Listing {
    StatKey key;
    std::vector<std::string> names;
  };
  std::unordered_map<std::string, Listing> listings;
  StatKey on_disk;  // the cache file as this object last wrote or read it
  // The watch that saw everything since this cache's walk began (it was
  // started before, held sound, and every file and folder stat'ed was on
  // its file system): the next walk may take its word. Null: walk it all.
  const SnapshotWatch* armed = nullptr;
};

namespace {

constexpr const char* k_cache_name = "kaicoder-stat-cache";
constexpr std::string_view k_cache_magic = "kaicoder stat cache 2\n";

StatKey key_of(const struct stat& st) {
  auto ns = [](const timespec& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
  };
  return {static_cast<uint64_t>(st.st_size), ns(st.st_mtim), ns(st.st_ctim), static_cast<uint64_t>(st.st_ino),
          static_cast<uint32_t>(st.st_mode)};
}

// "<size> <mtime> <ctime> <ino> <mode> <git mode> <usable> <id>\t<path>\0" per file,
// after the magic line and the root's path. Anything unexpected: no cache.
// The cache's first lines: what it is, and the root and guardrails it was
// taken under (what a snapshot leaves out depends on them).
std::string cache_head(const fs::path& root, const Guardrails& g) {
  std::string out = std::string(k_cache_magic) + root.string() + "\n" + g.state_dir + "\n" + g.changelog + "\n";
  for (const auto* list : {&g.config_files, &g.deny_read}) out += fmt::format("{}\n", fmt::join(*list, "\t"));
  return out;
}

Cache load_cache(const fs::path& file, const std::string& head,
                 std::vector<const Cache::value_type*>* order = nullptr) {
  Cache out;
  std::vector<const Cache::value_type*> seen;  // handed over only when the whole file parsed
  auto text = read_file(file);
  if (!text || !starts_with(*text, head)) return out;
  std::string_view t = *text;
  size_t pos = head.size();
  while (pos < t.size()) {
    size_t tab = t.find('\t', pos), nul = t.find('\0', pos);
    if (tab == std::string_view::npos || nul == std::string_view::npos || tab > nul) return {};
    std::string_view f = t.substr(pos, tab - pos);
    Cached c;
    uint64_t v[7];
    const char* p = f.data();
    const char* e = f.data() + f.size();
    for (int i = 0; i < 7; ++i) {
      auto r = std::from_chars(p, e, v[i]);
      if (r.ec != std::errc{} || r.ptr == e || *r.ptr != ' ') return {};
      p = r.ptr + 1;
    }
    if (e - p != GIT_OID_HEXSZ || git_oid_fromstrn(&c.id, p, GIT_OID_HEXSZ) < 0) return {};
    c.st = {v[0], v[1], v[2], v[3], static_cast<uint32_t>(v[4])};
    c.git_mode = static_cast<uint32_t>(v[5]);
    c.usable = v[6] == 1;
    auto [it, added] = out.emplace(std::string(t.substr(tab + 1, nul - tab - 1)), c);
    if (added) seen.push_back(&*it);
    pos = nul + 1;
  }
  if (order) *order = std::move(seen);
  return out;
}

// Written in walk order, which load_cache() keeps.
Status save_cache(const fs::path& file, const std::string& head, const std::vector<const Cache::value_type*>& order) {
  std::string out = head;
  out.reserve(out.size() + order.size() * 120);
  for (const auto* entry : order) {
    const auto& [rel, c] = *entry;
    out += fmt::format("{} {} {} {} {} {} {} {}\t{}", c.st.size, c.st.mtime_ns, c.st.ctime_ns, c.st.ino, c.st.mode,
                       c.git_mode, c.usable ? 1 : 0, hex(c.id), rel) +
           '\0';
  }
  return write_file_atomic(file, out, 0600);
}

uint64_t now_ns() {
  timespec t;
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

// ----- the walk -----------------------------------------------------------------

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

void close_dir(DIR* d) { ::closedir(d); }

constexpr size_t k_ignored_max = 100000;  // files listed in ignored trees, per snapshot
constexpr size_t k_in_memory = 1u << 20;  // files up to this size are hashed from memory

// One entry of a tree object being written.
struct TreeEntry {
  std::string key;  // the name, with '/' after a folder's: git's sort order
  uint32_t mode;
  git_oid id;
};

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
        m_racy(now_ns() - 1000000000ull) {
    fresh.reserve(m_old.size());
  }

  // Walks the folder `fd` (owned) holding root-relative `prefix` ("" or
  // "a/b/"); `tree` is its tree, none when it holds no file.
  Status walk(int fd, const std::string& prefix, std::optional<git_oid>& tree);
  void guard_git();
  // The tree object of `entries` (any order), written into the store.
  Status write_tree(std::vector<TreeEntry>& entries, git_oid& out);
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
              std::vector<TreeEntry>& into);
  // A file the watch saw nothing touch: its last entry, unstat'ed.
  void unchanged(const std::string& name, const Cache::value_type* old, std::vector<TreeEntry>& into);
  void added(const std::string& name, uint32_t mode, const git_oid& id, std::vector<TreeEntry>& into) {
    into.push_back(TreeEntry{name, mode, id});
    if (++m_out.files % 1000 == 0 && m_progress) m_progress(m_out.files);
  }
  void seen_on(const struct stat& st) {
    if (m_watch && static_cast<uint64_t>(st.st_dev) != m_watch->dev()) foreign = true;
  }
  Status hash_regular(int dirfd, const char* name, const std::string& rel, const struct stat& st, git_oid& id,
                      bool& stable);
  void count_ignored(int fd, const std::string& prefix, const std::string& top);
  Handles& m_h;
  const Guardrails& m_g;
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

Status Builder::write_tree(std::vector<TreeEntry>& entries, git_oid& out) {
  std::sort(entries.begin(), entries.end(), [](const TreeEntry& a, const TreeEntry& b) { return a.key < b.key; });
  std::string buf;
  buf.reserve(entries.size() * 40);
  for (const auto& e : entries) {
    buf += e.mode == GIT_FILEMODE_TREE              ? "40000 "
           : e.mode == GIT_FILEMODE_LINK            ? "120000 "
           : e.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? "100755 "
                                                    : "100644 ";
    buf.append(e.key, 0, e.mode == GIT_FILEMODE_TREE ? e.key.size() - 1 : e.key.size());
    buf += '\0';
    buf.append(reinterpret_cast<const char*>(e.id.id), GIT_OID_RAWSZ);
  }
  return git_check(git_odb_write(&out, m_odb, buf.data(), buf.size(), GIT_OBJECT_TREE), "writing the snapshot tree");
}

Status Builder::read_tracked() {
  m_tracked_read = true;
  if (!m_h.user) return ok_status();
  git_index* idx = nullptr;
  KAI_TRY(git_check(git_repository_index(&idx, m_h.user.get()), "reading the repository's index"));
  IndexPtr own(idx);
  KAI_TRY(git_check(git_index_read(idx, 0), "reading the repository's index"));
  for (size_t i = 0, n = git_index_entrycount(idx); i < n; ++i) {
    std::string_view path = git_index_get_byindex(idx, i)->path;
    if (!starts_with(path, m_h.prefix)) continue;
    std::string rel(path.substr(m_h.prefix.size()));
    for (auto slash = rel.rfind('/'); slash != std::string::npos && slash > 0; slash = rel.rfind('/', slash - 1))
      if (!m_tracked_dirs.insert(rel.substr(0, slash)).second) break;
    m_tracked.insert(std::move(rel));
  }
  return ok_status();
}

Status Builder::hash_regular(int dirfd, const char* name, const std::string& rel, const struct stat& st, git_oid& id,
                             bool& stable) {
  int raw = ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) return make_error(Errc::not_found, "gone");  // gone, swapped for a link, or unreadable
  Fd fd(raw);
  struct stat opened;
  if (::fstat(fd.fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_ino != st.st_ino)
    return make_error(Errc::not_found, "gone");
  const uint64_t size = static_cast<uint64_t>(opened.st_size);
  auto read_some = [&](char* buf, size_t n) -> ssize_t {
    for (;;) {
      ssize_t r = ::read(fd.fd, buf, n);
      if (r < 0 && errno == EINTR) continue;
      return r;
    }
  };
  auto failed = [&](int err) {
    return make_error(Errc::io, fmt::format("cannot read '{}' for the snapshot: {}", rel, std::strerror(err)));
  };
  if (size <= k_in_memory) {
    std::string data(static_cast<size_t>(size) + 1, '\0');
    size_t got = 0;
    for (ssize_t r; got < data.size() && (r = read_some(data.data() + got, data.size() - got)) != 0;
         got += static_cast<size_t>(r))
      if (r < 0) return failed(errno);
    data.resize(got);
    stable = got == size;
    KAI_TRY(git_check(git_odb_hash(&id, data.data(), data.size(), GIT_OBJECT_BLOB), "hashing a file"));
    if (!git_odb_exists(m_odb, &id))
      KAI_TRY(git_check(git_odb_write(&id, m_odb, data.data(), data.size(), GIT_OBJECT_BLOB),
                        fmt::format("storing '{}' in the snapshot", rel)));
  } else {
    // Streamed: memory stays one buffer, whatever the size.
    git_odb_stream* ws = nullptr;
    KAI_TRY(git_check(git_odb_open_wstream(&ws, m_odb, size, GIT_OBJECT_BLOB),
                      fmt::format("storing '{}' in the snapshot", rel)));
    Owned<git_odb_stream, git_odb_stream_free> own(ws);
    std::vector<char> buf(1u << 16);
    uint64_t left = size;
    while (left > 0) {
      ssize_t r = read_some(buf.data(), static_cast<size_t>(std::min<uint64_t>(left, buf.size())));
      if (r < 0) return failed(errno);
      if (r == 0) return make_error(Errc::io, fmt::format("'{}' shrank while it was snapshotted", rel), "run it again");
      KAI_TRY(git_check(git_odb_stream_write(ws, buf.data(), static_cast<size_t>(r)),
                        fmt::format("storing '{}' in the snapshot", rel)));
      left -= static_cast<uint64_t>(r);
    }
    KAI_TRY(git_check(git_odb_stream_finalize_write(&id, ws), fmt::format("storing '{}' in the snapshot", rel)));
    char one;
    stable = read_some(&one, 1) == 0;
  }
  struct stat again;
  stable = stable && ::fstat(fd.fd, &again) == 0 && key_of(again) == key_of(opened);
  return ok_status();
}

Status Builder::file(int dirfd, const char* name, const std::string& rel, const struct stat& st,
                     const Cache::value_type* old, std::vector<TreeEntry>& into) {
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
  bool cacheable = std::max(k.mtime_ns, k.ctime_ns) < m_racy;
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
    auto s = hash_regular(dirfd, name, rel, st, id, stable);
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

void Builder::unchanged(const std::string& name, const Cache::value_type* old, std::vector<TreeEntry>& into) {
  const Cached& c = old->second;
  if (c.st.mode & (S_ISUID | S_ISGID)) m_out.setid[old->first] = c.st.mode & 07777;
  fresh.push_back(Fresh{old, {}, {}});
  ++m_out.unstatted;
  added(name, c.git_mode, c.id, into);
}

// Files of an ignored tree: stat data only, so that changes can be counted.
void Builder::count_ignored(int fd, const std::string& prefix, const std::string& top) {
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
    if (S_ISDIR(st.st_mode))
      subdirs.emplace_back(name);
    else if (m_out.ignored.size() >= k_ignored_max)
      m_out.uncounted.insert(top);
    else
      m_out.ignored[prefix + std::string(name)] = key_of(st);
  }
  for (const auto& sub : subdirs) {
    int sfd = ::openat(::dirfd(d), sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd >= 0) count_ignored(sfd, prefix + sub + "/", top);
  }
  ::closedir(d);
}

Status Builder::walk(int fd, const std::string& prefix, std::optional<git_oid>& tree) {
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return ok_status();
  }
  Owned<DIR, close_dir> own(d);
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
                     static_cast<uint64_t>(self.st_dev) == m_watch->dev() && !m_watch->touched(self_key.ino);
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
        e.untouched = e.hit && e.hit->second.usable && !m_watch->touched(e.hit->second.st.ino);
      }
    }
    if (!e.untouched && ::fstatat(::dirfd(d), name.c_str(), &e.st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    entries.push_back(e);
  }
  // Kept only out of the racy window (a change within the same clock tick
  // could leave ctime as it was). Moving the vector keeps its strings where
  // they are, so `entries` still points at them.
  if (names == &read && have_self && std::max(self_key.mtime_ns, self_key.ctime_ns) < m_racy)
    listings.emplace(prefix, StatCache::Listing{self_key, std::move(read)});
  std::vector<TreeEntry> into;
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
    if (!dir && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // fifos, sockets, devices
    // A path the last snapshot held was not excluded then, and the cache
    // is only used under the same guardrails (the cache file names them).
    const Cache::value_type* hit = dir ? nullptr : e.looked ? e.hit : cached(rel);
    bool known = dir ? m_old_dirs.count(rel) > 0 : hit != nullptr;
    if (!known && excluded(m_g, rel)) {
      // Kaicoder's state and changelog change under other kaicoder commands; the rest is guarded.
      bool kaicoders = rel == m_g.state_dir || starts_with(rel, m_g.state_dir + "/") || rel == m_g.changelog;
      if (!dir && !kaicoders) m_out.guarded[rel] = key_of(st);
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
      continue;
    }
    m_out.dirs.insert(rel);
    std::optional<git_oid> sub;
    KAI_TRY(walk(sfd, rel + "/", sub));
    if (sub) into.push_back(TreeEntry{name + "/", GIT_FILEMODE_TREE, *sub});
  }
  if (into.empty()) return ok_status();
  tree.emplace();
  return write_tree(into, *tree);
}

// Git's own files that run commands (config, hooks, info/, commondir,
// alternates): guarded, watched by their stat data.
void Builder::guard_git() {
  if (!m_h.user) return;
  fs::path gitdir = git_repository_path(m_h.user.get());
  fs::path common = git_repository_commondir(m_h.user.get());
  auto label = [&](const fs::path& p) {
    std::string rel = p.lexically_normal().lexically_relative(m_h.base).generic_string();
    return m_h.prefix.empty() && !starts_with(rel, "..") ? rel : p.lexically_normal().generic_string();
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

unsigned perm_of(uint32_t git_mode) { return git_mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755u : 0644u; }

FileSide side_of(const git_diff_file& f, bool exists) {
  if (!exists) return {};
  return {true, hex(f.id), perm_of(f.mode)};
}

// The rollback id order: 20260709T142530Z < 20260709T142530Z-2 < …-10.
bool older(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    auto dash = s.find('-');
    return std::pair{s.substr(0, dash), dash == std::string::npos ? 1L : std::atol(s.c_str() + dash + 1)};
  };
  return split(a) < split(b);
}

Result<std::vector<std::string>> ref_names(git_repository* snap, bool pending) {
  std::vector<std::string> out;
  auto cb = [](const char* name, void* payload) -> int {
    static_cast<std::vector<std::string>*>(payload)->emplace_back(name);
    return 0;
  };
  KAI_TRY(git_check(git_reference_foreach_glob(snap, "refs/kaicoder/*", cb, &out), "listing snapshots"));
  std::vector<std::string> picked;
  for (const auto& n : out) {
    bool is_pending = starts_with(n, k_pending);
    std::string rest = n.substr(std::strlen(k_refs));
    if (is_pending == pending && (pending || rest.find('/') == std::string::npos)) picked.push_back(pending ? n : rest);
  }
  if (!pending) std::sort(picked.begin(), picked.end(), older);
  return picked;
}

// Copy tree `id` and its subtrees into `pure` (kaicoder's own objects only).
// Children are written before their parent, so a tree already there has all
// of its subtrees too.
Status copy_tree(git_repository* snap, git_odb* full, git_odb* pure, const git_oid& id);

Status copy_object(git_odb* full, git_odb* pure, const git_oid& id) {
  if (git_odb_exists(pure, &id)) return ok_status();
  git_odb_object* o = nullptr;
  KAI_TRY(git_check(git_odb_read(&o, full, &id), fmt::format("reading object {}", hex(id))));
  Owned<git_odb_object, git_odb_object_free> own(o);
  git_oid out;
  return git_check(git_odb_write(&out, pure, git_odb_object_data(o), git_odb_object_size(o), git_odb_object_type(o)),
                   "copying an object into the snapshot store");
}

Status copy_tree(git_repository* snap, git_odb* full, git_odb* pure, const git_oid& id) {
  if (git_odb_exists(pure, &id)) return ok_status();
  git_tree* t = nullptr;
  KAI_TRY(git_check(git_tree_lookup(&t, snap, &id), "reading a snapshot tree"));
  TreePtr own(t);
  for (size_t i = 0, n = git_tree_entrycount(t); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(t, i);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) KAI_TRY(copy_tree(snap, full, pure, *git_tree_entry_id(e)));
  }
  return copy_object(full, pure, id);
}

void mark(git_repository* snap, const git_oid& id, std::unordered_set<std::string>& live) {
  if (!live.insert(hex(id)).second) return;
  git_tree* t = nullptr;
  if (git_tree_lookup(&t, snap, &id) < 0) return;
  TreePtr own(t);
  for (size_t i = 0, n = git_tree_entrycount(t); i < n; ++i) {
    const git_tree_entry* e = git_tree_entry_byindex(t, i);
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
      mark(snap, *git_tree_entry_id(e), live);
    else
      live.insert(hex(*git_tree_entry_id(e)));
  }
}

// Remove the loose objects no snapshot ref reaches. Caller holds the store
// lock, which every writer of the store holds too.
Status collect_garbage(const fs::path& dir, const fs::path& root, const Guardrails& guards, git_repository* snap,
                       git_odb* pure) {
  std::unordered_set<std::string> live;
  // What the stat cache names is still on disk: its blobs stay.
  for (const auto& [rel, c] : load_cache(dir / k_cache_name, cache_head(root, guards))) live.insert(hex(c.id));
  for (bool pending : {false, true}) {
    auto names = ref_names(snap, pending);
    if (!names) return names.error();
    for (const auto& n : *names) {
      git_oid id;
      if (git_reference_name_to_id(&id, snap, (pending ? n : k_refs + n).c_str()) == 0) mark(snap, id, live);
    }
  }
  std::vector<std::string> dead;
  struct Payload {
    std::unordered_set<std::string>* live;
    std::vector<std::string>* dead;
  } pl{&live, &dead};
  auto cb = [](const git_oid* id, void* payload) -> int {
    auto* p = static_cast<Payload*>(payload);
    std::string h = hex(*id);
    if (!p->live->count(h)) p->dead->push_back(h);
    return 0;
  };
  KAI_TRY(git_check(git_odb_foreach(pure, cb, &pl), "listing snapshot objects"));
  std::error_code ec;
  for (const auto& h : dead) fs::remove(dir / "objects" / h.substr(0, 2) / h.substr(2), ec);
  return ok_status();
}

Result<OdbPtr> open_pure(const fs::path& dir) {
  git_odb* pure = nullptr;
  KAI_TRY(git_check(git_odb_open(&pure, (dir / "objects").c_str()), "opening the snapshot objects"));
  return OdbPtr(pure);
}

}  // namespace

std::vector<std::string> snapshot_notes(const Snapshot& a, const Snapshot& b) {
  std::vector<std::string> out;
  auto changed = [](const std::map<std::string, StatKey>& x, const std::map<std::string, StatKey>& y) {
    std::vector<std::pair<std::string, const char*>> d;
    for (const auto& [rel, k] : y) {
      auto o = x.find(rel);
      if (o == x.end())
        d.emplace_back(rel, "created");
      else if (!(o->second == k))
        d.emplace_back(rel, "changed");
    }
    for (const auto& [rel, k] : x)
      if (!y.count(rel)) d.emplace_back(rel, "deleted");
    std::sort(d.begin(), d.end());
    return d;
  };
  for (const auto& [rel, how] : changed(a.guarded, b.guarded))
    out.push_back(fmt::format("GUARDED FILE {}: {}",
                              how == std::string_view("changed")   ? "CHANGED"
                              : how == std::string_view("created") ? "CREATED"
                                                                   : "DELETED",
                              rel));
  for (const auto& [rel, how] : changed(a.large, b.large)) {
    auto k = b.large.count(rel) ? b.large.at(rel) : a.large.at(rel);
    out.push_back(fmt::format("{} {}, not snapshotted: too large ({:.1f} MiB, limit {} MiB)", rel, how,
                              static_cast<double>(k.size) / (1 << 20), k_snapshot_max_bytes >> 20));
  }
  for (const auto& [rel, mode] : b.setid)
    if (auto was = a.setid.find(rel); was == a.setid.end() || was->second != mode)
      out.push_back(fmt::format("SET-USER-ID OR SET-GROUP-ID BIT SET: {} (mode {:04o}; a rollback restores it without)",
                                rel, mode));
  // Ignored changes, counted per ignored tree (a single ignored file counts under its folder).
  std::map<std::string, size_t> counts;
  std::set<std::string> tops = a.ignored_tops;
  tops.insert(b.ignored_tops.begin(), b.ignored_tops.end());
  for (const auto& [rel, how] : changed(a.ignored, b.ignored)) {
    std::string label;
    for (const auto& t : tops)
      if (t.ends_with("/") && starts_with(rel, t)) label = t;
    if (label.empty()) label = rel.find('/') == std::string::npos ? "./" : rel.substr(0, rel.rfind('/') + 1);
    ++counts[label];
  }
  for (const auto& [label, n] : counts)
    out.push_back(fmt::format("{}: {} file{} changed (ignored, not restorable)", label, n, n == 1 ? "" : "s"));
  std::set<std::string> uncounted = a.uncounted;
  uncounted.insert(b.uncounted.begin(), b.uncounted.end());
  for (const auto& t : uncounted) out.push_back(fmt::format("{}: too many ignored files to count", t));
  return out;
}

SnapshotStore snapshots_of(const Workspace& ws) { return {ws.store.dir() / "snapshots.git", ws.root, ws.guards}; }

bool SnapshotStore::exists() const {
  std::error_code ec;
  return fs::exists(m_dir / "HEAD", ec);
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
  if (!m_cache->loaded) {
    m_cache->order.clear();
    m_cache->files = load_cache(cache_file, cache_head(m_root, m_guards), &m_cache->order);
    m_cache->loaded = true;
    for (const auto& [rel, c] : m_cache->files)
      for (auto slash = rel.rfind('/'); slash != std::string::npos && slash > 0; slash = rel.rfind('/', slash - 1))
        if (!m_cache->dirs.insert(rel.substr(0, slash)).second) break;
    struct stat st;
    if (::stat(cache_file.c_str(), &st) == 0) m_cache->on_disk = key_of(st);
  }
  const Cache& old = m_cache->files;
  // The watch's word is taken only about what a walk it saw from the start
  // recorded; every event up to now is read first.
  const bool trusted = watch && watch->drain() && m_cache->armed == watch;
  Builder b(*h, m_guards, odb, out, *m_cache, progress, watch, trusted);
  int fd = ::open(m_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return make_error(Errc::io, fmt::format("cannot open '{}': {}", m_root.string(), std::strerror(errno)));
  std::optional<git_oid> tree;
  KAI_TRY(b.walk(fd, "", tree));
  b.guard_git();
  if (!tree) {
    std::vector<TreeEntry> none;
    tree.emplace();
    KAI_TRY(b.write_tree(none, *tree));
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
  m_cache->armed = watch && watch->sound() && !b.foreign ? watch : nullptr;
  return out;
}

Status SnapshotStore::hold(const Snapshot& s, const std::string& tag) const {
  auto h = open_handles(m_dir, m_root, Create::yes);
  if (!h) return h.error();
  auto id = oid_of(s.tree);
  if (!id) return id.error();
  git_reference* ref = nullptr;
  KAI_TRY(git_check(git_reference_create(&ref, h->snap.get(), (k_pending + tag).c_str(), &*id, 1, "run in flight"),
                    "keeping the snapshot"));
  git_reference_free(ref);
  return ok_status();
}

Status SnapshotStore::release(const std::string& tag) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return ok_status();
  int rc = git_reference_remove(h->snap.get(), (k_pending + tag).c_str());
  return rc == GIT_ENOTFOUND ? ok_status() : git_check(rc, "dropping a pending snapshot");
}

Result<std::vector<TreeChange>> SnapshotStore::diff(const Snapshot& a, const Snapshot& b) const {
  // The common case of a run that changed nothing: no tree to read.
  if (a.tree == b.tree && a.dirs == b.dirs && a.setid == b.setid) return std::vector<TreeChange>{};
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  git_repository* snap = h->snap.get();
  auto ia = oid_of(a.tree);
  auto ib = oid_of(b.tree);
  if (!ia) return ia.error();
  if (!ib) return ib.error();
  git_tree *ta = nullptr, *tb = nullptr;
  KAI_TRY(git_check(git_tree_lookup(&ta, snap, &*ia), "reading the snapshot before the run"));
  TreePtr own_a(ta);
  KAI_TRY(git_check(git_tree_lookup(&tb, snap, &*ib), "reading the snapshot after the run"));
  TreePtr own_b(tb);
  git_diff_options o = GIT_DIFF_OPTIONS_INIT;
  o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* d = nullptr;
  KAI_TRY(git_check(git_diff_tree_to_tree(&d, snap, ta, tb, &o), "comparing snapshots"));
  Owned<git_diff, git_diff_free> own_d(d);
  std::vector<TreeChange> out;
  for (size_t i = 0, n = git_diff_num_deltas(d); i < n; ++i) {
    const git_diff_delta* delta = git_diff_get_delta(d, i);
    TreeChange c;
    bool had = delta->status != GIT_DELTA_ADDED, has = delta->status != GIT_DELTA_DELETED;
    c.rel = has ? delta->new_file.path : delta->old_file.path;
    // Crossed the size limit, or entered the index from an ignored tree:
    // snapshot_notes() says it; a rollback must not delete or resurrect it.
    if ((!has && b.large.count(c.rel)) || (!had && (a.large.count(c.rel) || a.ignored.count(c.rel)))) continue;
    c.before = side_of(delta->old_file, had);
    c.after = side_of(delta->new_file, has);
    bool link_before = had && delta->old_file.mode == GIT_FILEMODE_LINK;
    bool link_after = has && delta->new_file.mode == GIT_FILEMODE_LINK;
    if (link_before) c.before.mode = k_mode_link;
    if (link_after) c.after.mode = k_mode_link;
    c.regular = !link_before && !link_after;
    c.undoable = !link_before;
    // Git keeps only the executable bit; the disk has the rest (0600, 0750…),
    // less the set-user-ID and set-group-ID bits, which no restore brings back.
    struct stat st;
    if (has && !link_after && ::lstat((m_root / c.rel).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ((st.st_mode & S_IXUSR) != 0) == (c.after.mode == 0755u)) {
      c.after.mode = st.st_mode & 0777;
      if (had && delta->old_file.mode == delta->new_file.mode) c.before.mode = c.after.mode;
    }
    out.push_back(std::move(c));
  }
  // A set-user-ID or set-group-ID bit the run set on a file it did not
  // otherwise change: the rollback rewrites the file without it.
  for (const auto& [rel, mode] : b.setid) {
    auto was = a.setid.find(rel);
    if ((was != a.setid.end() && was->second == mode) ||
        std::any_of(out.begin(), out.end(), [&name = rel](const TreeChange& c) { return c.rel == name; }))
      continue;
    git_tree_entry* e = nullptr;
    if (git_tree_entry_bypath(&e, tb, rel.c_str()) != 0) continue;
    Owned<git_tree_entry, git_tree_entry_free> own_e(e);
    TreeChange c;
    c.rel = rel;
    c.before = {true, hex(*git_tree_entry_id(e)), mode & 0777};
    c.after = c.before;
    out.push_back(std::move(c));
  }
  for (const auto& dir : b.dirs)
    if (!a.dirs.count(dir)) {
      TreeChange c;
      c.rel = dir;
      c.after = {true, "", k_mode_dir};
      c.regular = false;
      out.push_back(std::move(c));
    }
  std::sort(out.begin(), out.end(), [](const TreeChange& x, const TreeChange& y) { return x.rel < y.rel; });
  return out;
}

Status SnapshotStore::keep(const Snapshot& before, const std::vector<TreeChange>& changes, const std::string& name,
                           const std::string& tag, long keep_count) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  git_repository* snap = h->snap.get();
  git_odb* full = nullptr;
  KAI_TRY(git_check(git_repository_odb(&full, snap), "opening the snapshot objects"));
  OdbPtr own_full(full);
  auto pure = open_pure(m_dir);
  if (!pure) return pure.error();
  auto tree = oid_of(before.tree);
  if (!tree) return tree.error();
  KAI_TRY(copy_tree(snap, full, pure->get(), *tree));
  for (const auto& c : changes) {
    if (!c.before.exists || !c.undoable || c.before.mode == k_mode_link) continue;
    auto id = oid_of(c.before.blob);
    if (!id) return id.error();
    if (auto copied = copy_object(full, pure->get(), *id); !copied) {
      // A blob the stat cache named is gone (pruned from the user's
      // objects): read every file again next time.
      std::error_code ec;
      fs::remove(m_dir / k_cache_name, ec);
      m_cache.reset();
      return copied;
    }
  }
  git_reference* ref = nullptr;
  KAI_TRY(git_check(git_reference_create(&ref, snap, (k_refs + name).c_str(), &*tree, 1, "run snapshot"),
                    "keeping the snapshot"));
  git_reference_free(ref);
  if (int rc = git_reference_remove(snap, (k_pending + tag).c_str()); rc != GIT_ENOTFOUND)
    KAI_TRY(git_check(rc, "dropping the pending snapshot"));
  auto names = ref_names(snap, false);
  if (!names) return names.error();
  for (size_t i = 0; keep_count >= 0 && names->size() - i > static_cast<size_t>(keep_count); ++i)
    KAI_TRY(git_check(git_reference_remove(snap, (k_refs + (*names)[i]).c_str()), "pruning an old snapshot"));
  return collect_garbage(m_dir, m_root, m_guards, snap, pure->get());
}

Result<std::string> SnapshotStore::blob(const std::string& name, const std::string& id) const {
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return make_error(Errc::not_found, fmt::format("the snapshot of {} is gone (no snapshot store)", name));
  git_oid at;
  if (git_reference_name_to_id(&at, h->snap.get(), (k_refs + name).c_str()) != 0)
    return make_error(Errc::not_found, fmt::format("the snapshot of {} was pruned", name),
                      "[run] snapshots_keep in kaicoder.toml sets how many snapshots are kept");
  auto oid = oid_of(id);
  if (!oid) return oid.error();
  auto pure = open_pure(m_dir);
  if (!pure) return pure.error();
  git_odb_object* o = nullptr;
  if (git_odb_read(&o, pure->get(), &*oid) < 0 || git_odb_object_type(o) != GIT_OBJECT_BLOB) {
    if (o) git_odb_object_free(o);
    return make_error(Errc::conflict, fmt::format("blob {} of snapshot {} is missing or damaged", id, name),
                      "run 'kaicoder doctor'");
  }
  std::string bytes(static_cast<const char*>(git_odb_object_data(o)), git_odb_object_size(o));
  git_odb_object_free(o);
  if (blob_id(bytes) != id)
    return make_error(Errc::conflict, fmt::format("blob {} of snapshot {} is damaged", id, name));
  return bytes;
}

Result<std::vector<std::string>> SnapshotStore::pending() const {
  if (!exists()) return std::vector<std::string>{};
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  auto refs = ref_names(h->snap.get(), true);
  if (!refs) return refs.error();
  for (auto& r : *refs) r = r.substr(std::strlen(k_pending));
  return refs;
}

Result<std::vector<std::string>> SnapshotStore::names() const {
  if (!exists()) return std::vector<std::string>{};
  auto h = open_handles(m_dir, m_root, Create::no);
  if (!h) return h.error();
  return ref_names(h->snap.get(), false);
}

}  // namespace kai
