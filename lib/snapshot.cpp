#include "lib/snapshot.hpp"

#include <algorithm>
#include <cerrno>
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
    if (create == Create::no) return make_error(Errc::not_found, fmt::format("no snapshot store at '{}'", dir.string()));
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

// Builds one snapshot tree in an in-memory index.
class Builder {
public:
  Builder(Handles& h, const Guardrails& g, git_odb* odb, git_index* mem, const std::function<void(size_t)>& progress)
      : m_h(h), m_g(g), m_odb(odb), m_mem(mem), m_progress(progress) {}

  Status from_index(const std::unordered_map<std::string, unsigned>& dirty, const std::vector<std::string>& untracked);
  // Whether any file could be filtered at all. Asking libgit2 file by file
  // costs more than the rest of a snapshot together (it stats every folder's
  // attribute files), so that question is only asked where an attribute file
  // or core.autocrlf exists.
  void find_filters(git_index* idx);
  Status walk(const std::string& dir);
  Status from_disk(const std::string& repo_rel);
  size_t files = 0, hashed = 0;

private:
  std::optional<std::string> root_rel(const std::string& repo_rel) const {
    if (!starts_with(repo_rel, m_h.prefix)) return std::nullopt;
    std::string rel = repo_rel.substr(m_h.prefix.size());
    if (rel.empty() || excluded(m_g, rel)) return std::nullopt;
    return rel;
  }
  bool ignored(const std::string& repo_rel) const {
    int ign = 0;
    return m_h.user && git_ignore_path_is_ignored(&ign, m_h.user.get(), repo_rel.c_str()) == 0 && ign;
  }
  // Clean and smudge filters (autocrlf, eol, ident, LFS…) make the index's
  // blob differ from the bytes on disk; such files are read instead.
  bool filtered(const char* path) const {
    if (!m_filters) return false;
    git_filter_list* fl = nullptr;
    if (git_filter_list_load(&fl, m_h.user.get(), nullptr, path, GIT_FILTER_TO_ODB, GIT_FILTER_DEFAULT) < 0) return true;
    bool any = fl != nullptr;
    git_filter_list_free(fl);
    return any;
  }
  Status add(const std::string& rel, const git_oid& id, uint32_t mode) {
    git_index_entry e;
    std::memset(&e, 0, sizeof e);
    e.mode = mode;
    git_oid_cpy(&e.id, &id);
    e.path = rel.c_str();
    KAI_TRY(git_check(git_index_add(m_mem, &e), fmt::format("adding '{}' to the snapshot", rel)));
    if (++files % 1000 == 0 && m_progress) m_progress(files);
    return ok_status();
  }

  Handles& m_h;
  bool m_filters = true;
  const Guardrails& m_g;
  git_odb* m_odb;
  git_index* m_mem;
  const std::function<void(size_t)>& m_progress;
};

Status Builder::from_disk(const std::string& repo_rel) {
  auto rel = root_rel(repo_rel);
  if (!rel) return ok_status();
  fs::path abs = m_h.base / repo_rel;
  struct stat st;
  if (::lstat(abs.c_str(), &st) != 0) return ok_status();  // gone meanwhile
  std::string data;
  uint32_t mode = GIT_FILEMODE_BLOB;
  if (S_ISLNK(st.st_mode)) {
    std::string buf(static_cast<size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlink(abs.c_str(), buf.data(), buf.size());
    if (n < 0) return ok_status();
    data.assign(buf.data(), static_cast<size_t>(n));
    mode = GIT_FILEMODE_LINK;
  } else if (S_ISREG(st.st_mode)) {
    int fd = ::open(abs.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return ok_status();  // gone, swapped for a link, or unreadable: nothing kaicoder could restore
    data.reserve(static_cast<size_t>(st.st_size));
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        return make_error(Errc::io, fmt::format("cannot read '{}' for the snapshot: {}", *rel, std::strerror(err)));
      }
      if (n == 0) break;
      data.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    if (st.st_mode & S_IXUSR) mode = GIT_FILEMODE_BLOB_EXECUTABLE;
  } else {
    return ok_status();  // fifos, sockets, devices
  }
  git_oid id;
  KAI_TRY(git_check(git_odb_write(&id, m_odb, data.data(), data.size(), GIT_OBJECT_BLOB),
                    fmt::format("storing '{}' in the snapshot", *rel)));
  ++hashed;
  return add(*rel, id, mode);
}

Status Builder::walk(const std::string& dir) {
  if (!dir.empty()) {
    std::string d = dir.substr(0, dir.size() - 1);
    if (dir.size() > m_h.prefix.size() && starts_with(dir, m_h.prefix) &&
        excluded(m_g, dir.substr(m_h.prefix.size(), dir.size() - m_h.prefix.size() - 1)))
      return ok_status();
    std::error_code ec;
    // A nested repository: git would not add its files either.
    if (fs::exists(m_h.base / d / ".git", ec)) return ok_status();
  }
  std::error_code ec;
  fs::directory_iterator it(m_h.base / dir, ec), end;
  if (ec) return ok_status();
  std::vector<std::pair<std::string, bool>> entries;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    auto st = it->symlink_status(ec);
    if (ec) continue;
    std::string rel = dir + it->path().filename().string();
    if (fs::is_directory(st)) {
      if (it->path().filename() != ".git") entries.emplace_back(rel + "/", true);
    } else if (fs::is_regular_file(st) || fs::is_symlink(st)) {
      entries.emplace_back(rel, false);
    }
  }
  for (const auto& [rel, is_dir] : entries) {
    // Inside root only: a walk that started above it (root in an untracked folder) goes down to it.
    if (!starts_with(rel, m_h.prefix) && !starts_with(m_h.prefix, rel)) continue;
    if (ignored(rel)) continue;
    KAI_TRY(is_dir ? walk(rel) : from_disk(rel));
  }
  return ok_status();
}

void Builder::find_filters(git_index* idx) {
  git_repository* u = m_h.user.get();
  m_filters = false;
  git_config* cfg = nullptr;
  if (git_repository_config_snapshot(&cfg, u) == 0) {
    const char* v = nullptr;
    int autocrlf = 0;
    if (git_config_get_string(&v, cfg, "core.attributesfile") == 0 && v && *v) m_filters = true;
    if (git_config_get_bool(&autocrlf, cfg, "core.autocrlf") == 0 && autocrlf) m_filters = true;
    if (git_config_get_string(&v, cfg, "core.autocrlf") == 0 && v && std::string_view(v) == "input") m_filters = true;
    git_config_free(cfg);
  } else {
    m_filters = true;
  }
  std::error_code ec;
  fs::path dir = git_repository_path(u);
  if (fs::exists(dir / "info" / "attributes", ec) || fs::exists(fs::path(git_repository_commondir(u)) / "info" / "attributes", ec) ||
      fs::exists("/etc/gitattributes", ec))
    m_filters = true;
  for (size_t i = 0, n = git_index_entrycount(idx); !m_filters && i < n; ++i) {
    std::string_view p = git_index_get_byindex(idx, i)->path;
    m_filters = p == ".gitattributes" || p.ends_with("/.gitattributes");
  }
}

Status Builder::from_index(const std::unordered_map<std::string, unsigned>& dirty, const std::vector<std::string>& untracked) {
  git_index* idx = nullptr;
  KAI_TRY(git_check(git_repository_index(&idx, m_h.user.get()), "reading the repository's index"));
  IndexPtr own(idx);
  find_filters(idx);
  // A changed or untracked .gitattributes counts too (an untracked folder
  // holds no tracked file, so its attribute files cannot matter here).
  auto attributes = [](std::string_view p) { return p == ".gitattributes" || p.ends_with("/.gitattributes"); };
  for (const auto& d : dirty) m_filters = m_filters || attributes(d.first);
  for (const auto& u : untracked) m_filters = m_filters || attributes(u);
  std::string last;
  for (size_t i = 0, n = git_index_entrycount(idx); i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(idx, i);
    std::string path = e->path;
    if (path == last || e->mode == GIT_FILEMODE_COMMIT) continue;  // later conflict stages; submodules
    last = path;
    auto rel = root_rel(path);
    if (!rel) continue;
    auto d = dirty.find(path);
    if (d != dirty.end() && (d->second & GIT_STATUS_WT_DELETED)) continue;
    bool stale = d != dirty.end() || GIT_INDEX_ENTRY_STAGE(e) != 0 || (e->flags_extended & GIT_INDEX_ENTRY_INTENT_TO_ADD);
    if (stale || (e->mode != GIT_FILEMODE_LINK && filtered(e->path)))
      KAI_TRY(from_disk(path));
    else
      KAI_TRY(add(*rel, e->id, e->mode));
  }
  return ok_status();
}

// What the user's index says about the work tree: tracked paths that differ
// from it, and untracked files and folders ("dir/"), ignored ones left out.
Status scan_status(git_repository* user, std::unordered_map<std::string, unsigned>& dirty,
                   std::vector<std::string>& untracked) {
  git_status_options so = GIT_STATUS_OPTIONS_INIT;
  so.show = GIT_STATUS_SHOW_WORKDIR_ONLY;
  so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
  git_status_list* list = nullptr;
  KAI_TRY(git_check(git_status_list_new(&list, user, &so), "reading the work tree's status"));
  Owned<git_status_list, git_status_list_free> own(list);
  for (size_t i = 0, n = git_status_list_entrycount(list); i < n; ++i) {
    const git_status_entry* e = git_status_byindex(list, i);
    const git_diff_delta* d = e->index_to_workdir;
    if (!d) continue;
    const char* p = d->new_file.path ? d->new_file.path : d->old_file.path;
    if (!p) continue;
    if (e->status & GIT_STATUS_WT_NEW) untracked.emplace_back(p);
    else dirty[p] = e->status;
  }
  return ok_status();
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
    if (is_pending == pending && (pending || rest.find('/') == std::string::npos))
      picked.push_back(pending ? n : rest);
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
    if (git_tree_entry_type(e) == GIT_OBJECT_TREE) mark(snap, *git_tree_entry_id(e), live);
    else live.insert(hex(*git_tree_entry_id(e)));
  }
}

// Remove the loose objects no snapshot ref reaches. Caller holds the store
// lock, which every writer of the store holds too.
Status collect_garbage(const fs::path& dir, git_repository* snap, git_odb* pure) {
  std::unordered_set<std::string> live;
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

SnapshotStore snapshots_of(const Workspace& ws) { return {ws.store.dir() / "snapshots.git", ws.root, ws.guards}; }

bool SnapshotStore::exists() const {
  std::error_code ec;
  return fs::exists(m_dir / "HEAD", ec);
}

Result<Snapshot> SnapshotStore::take(const std::function<void(size_t)>& progress) const {
  auto h = open_handles(m_dir, m_root, Create::yes);
  if (!h) return h.error();
  git_odb* odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&odb, h->snap.get()), "opening the snapshot objects"));
  OdbPtr own_odb(odb);
  git_index* mem = nullptr;
  KAI_TRY(git_check(git_index_new(&mem), "creating the snapshot index"));
  IndexPtr own_mem(mem);
  Builder b(*h, m_guards, odb, mem, progress);
  if (h->user) {
    std::unordered_map<std::string, unsigned> dirty;
    std::vector<std::string> untracked;
    KAI_TRY(scan_status(h->user.get(), dirty, untracked));
    KAI_TRY(b.from_index(dirty, untracked));
    for (const auto& u : untracked) {
      if (!u.ends_with("/")) KAI_TRY(b.from_disk(u));
      else if (starts_with(h->prefix, u)) KAI_TRY(b.walk(h->prefix));
      else if (starts_with(u, h->prefix)) KAI_TRY(b.walk(u));
    }
  } else {
    KAI_TRY(b.walk(""));
  }
  git_oid tree;
  KAI_TRY(git_check(git_index_write_tree_to(&tree, mem, h->snap.get()), "writing the snapshot tree"));
  return Snapshot{hex(tree), b.files, b.hashed, h->user != nullptr};
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
    c.before = side_of(delta->old_file, had);
    c.after = side_of(delta->new_file, has);
    c.regular = (!had || delta->old_file.mode != GIT_FILEMODE_LINK) && (!has || delta->new_file.mode != GIT_FILEMODE_LINK);
    // Git keeps only the executable bit; the disk has the rest (0600, 0750…).
    struct stat st;
    if (has && ::lstat((m_root / c.rel).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ((st.st_mode & S_IXUSR) != 0) == (c.after.mode == 0755u)) {
      c.after.mode = st.st_mode & 07777;
      if (had && delta->old_file.mode == delta->new_file.mode) c.before.mode = c.after.mode;
    }
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
    if (!c.before.exists || !c.regular) continue;
    auto id = oid_of(c.before.blob);
    if (!id) return id.error();
    KAI_TRY(copy_object(full, pure->get(), *id));
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
  return collect_garbage(m_dir, snap, pure->get());
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
