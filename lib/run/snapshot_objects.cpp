#include "lib/run/snapshot_objects.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>

#include <fmt/format.h>

#include "lib/run/snapshot_cache.hpp"
#include "lib/util/fd.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr size_t k_in_memory = 1u << 20;  // files up to this size are hashed from memory

// The rollback id order: 20260709T142530Z < 20260709T142530Z-2 < …-10.
bool older(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    auto dash = s.find('-');
    return std::pair{s.substr(0, dash), dash == std::string::npos ? 1L : std::atol(s.c_str() + dash + 1)};
  };
  return split(a) < split(b);
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

}  // namespace

Result<git_oid> oid_of(const std::string& text) {
  git_oid id;
  if (git_oid_fromstrn(&id, text.data(), text.size()) < 0 || text.size() != GIT_OID_HEXSZ)
    return make_error(Errc::io, fmt::format("'{}' is not an object id", text));
  return id;
}

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
  // The store holds copies of every file of the tree, private ones too: in
  // two-user mode the state dir lets the agent user pass (0711), so this
  // folder lets no one else in, whatever mode git or an older kaicoder gave it.
  if (Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)); d.get() >= 0) {
    struct stat st {};
    if (::fstat(d.get(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 07777) != 0700)
      ::fchmod(d.get(), 0700);
  }
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
    if (wd && !ec && !rel.starts_with("..")) {
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

Result<OdbPtr> open_pure(const fs::path& dir) {
  git_odb* pure = nullptr;
  KAI_TRY(git_check(git_odb_open(&pure, (dir / "objects").c_str()), "opening the snapshot objects"));
  return OdbPtr(pure);
}

void sort_tree(std::vector<TreeItem>& entries) {
  std::sort(entries.begin(), entries.end(), [](const TreeItem& a, const TreeItem& b) { return a.key < b.key; });
}

Status write_tree(git_odb* odb, std::vector<TreeItem>& entries, git_oid& out) {
  sort_tree(entries);
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
  return git_check(git_odb_write(&out, odb, buf.data(), buf.size(), GIT_OBJECT_TREE), "writing the snapshot tree");
}

Status store_regular(git_odb* odb, int dirfd, const char* name, const std::string& rel, const struct stat& st,
                     git_oid& id, bool& stable) {
  int raw = ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (raw < 0) return make_error(Errc::not_found, "gone");  // gone, swapped for a link, or unreadable
  Fd fd(raw);
  struct stat opened;
  if (::fstat(fd.get(), &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_ino != st.st_ino)
    return make_error(Errc::not_found, "gone");
  const uint64_t size = static_cast<uint64_t>(opened.st_size);
  auto read_some = [&](char* buf, size_t n) -> ssize_t {
    for (;;) {
      ssize_t r = ::read(fd.get(), buf, n);
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
    if (!git_odb_exists(odb, &id))
      KAI_TRY(git_check(git_odb_write(&id, odb, data.data(), data.size(), GIT_OBJECT_BLOB),
                        fmt::format("storing '{}' in the snapshot", rel)));
  } else {
    // Streamed: memory stays one buffer, whatever the size.
    git_odb_stream* ws = nullptr;
    KAI_TRY(git_check(git_odb_open_wstream(&ws, odb, size, GIT_OBJECT_BLOB),
                      fmt::format("storing '{}' in the snapshot", rel)));
    GitOwned<git_odb_stream, git_odb_stream_free> own(ws);
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
  stable = stable && ::fstat(fd.get(), &again) == 0 && key_of(again) == key_of(opened);
  return ok_status();
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
    bool is_pending = n.starts_with(k_pending);
    std::string rest = n.substr(std::strlen(k_refs));
    if (is_pending == pending && (pending || rest.find('/') == std::string::npos)) picked.push_back(pending ? n : rest);
  }
  if (!pending) std::sort(picked.begin(), picked.end(), older);
  return picked;
}

Status copy_object(git_odb* full, git_odb* pure, const git_oid& id) {
  if (git_odb_exists(pure, &id)) return ok_status();
  git_odb_object* o = nullptr;
  KAI_TRY(git_check(git_odb_read(&o, full, &id), fmt::format("reading object {}", hex(id))));
  GitOwned<git_odb_object, git_odb_object_free> own(o);
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

}  // namespace kai
