#include "lib/util/git.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <git2.h>

#include "lib/util/fs.hpp"
#include "lib/util/sha.hpp"
#include "lib/util/stat.hpp"
#include "lib/util/strings.hpp"

namespace kai {

void git_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

namespace {

// One SHA-1 over git's blob header and the bytes `feed` hands it.
class BlobHasher {
public:
  explicit BlobHasher(uint64_t size) {
    const std::string header = fmt::format("blob {}", size);
    update(std::string_view(header.c_str(), header.size() + 1));  // the header ends with its NUL
  }
  void update(std::string_view bytes) { m_sha.update(bytes); }
  std::string finish() {
    const auto sum = m_sha.finish();
    return lower_hex(std::string_view(reinterpret_cast<const char*>(sum.data()), sum.size()));
  }

private:
  Sha1 m_sha;
};

}  // namespace

std::string blob_id(std::string_view bytes) {
  // git's blob id (SHA-1 of "blob <size>\0" and the bytes), hashed with
  // mbedTLS rather than through libgit2, so a command that only hashes
  // (every command finds its config's digest) never initialises libgit2
  // (whose initialisation, linked with shared libraries, reads and parses
  // the system's CA bundle: lib/util/network_absent.cpp). An id here only
  // says whether a file is still what a person saw; what lands is the
  // staged bytes themselves, never looked up by id.
  BlobHasher h(bytes.size());
  h.update(bytes);
  return h.finish();
}

Result<std::string> blob_id_of_fd(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(Errc::io, "cannot hash a file that is not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  BlobHasher h(size);
  std::string chunk(1 << 20, '\0');
  uint64_t seen = 0;
  for (;;) {
    ssize_t n = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(seen));
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(Errc::io, fmt::format("cannot read a file to hash it: {}", errno_text(errno)));
    }
    if (n == 0) break;
    seen += static_cast<uint64_t>(n);
    if (seen > size) break;
    h.update(std::string_view(chunk.data(), static_cast<size_t>(n)));
  }
  if (seen != size) return make_error(Errc::conflict, "a file changed size while it was being hashed");
  return h.finish();
}

bool IndexEntries::tracked(std::string_view rel) const {
  auto less = [](const Entry& e, std::string_view p) { return std::string_view(e.path) < p; };
  auto at = std::lower_bound(entries.begin(), entries.end(), rel, less);
  for (; at != entries.end() && at->path == rel; ++at)
    if (at->stage == 0) return true;
  // A folder: the first entry at or after "rel/" lies below it.
  const std::string folder = std::string(rel) + "/";
  at = std::lower_bound(at, entries.end(), std::string_view(folder), less);
  return at != entries.end() && std::string_view(at->path).starts_with(folder);
}

Result<std::shared_ptr<const IndexEntries>> index_entries(const std::filesystem::path& root) {
  git_init_once();
  auto none = std::make_shared<const IndexEntries>();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return none;
  const GitOwned<git_repository, git_repository_free> repo(raw);
  const std::string file = std::string(git_repository_path(raw)) + "index";
  // The file's stat data before it is read: a change after shows next time.
  struct stat st {};
  const bool have = ::stat(file.c_str(), &st) == 0;
  const StatKey key = have ? key_of(st) : StatKey{};
  static std::mutex lock;
  static std::map<std::string, std::pair<StatKey, std::shared_ptr<const IndexEntries>>> read;
  if (have) {
    std::lock_guard<std::mutex> held(lock);
    if (auto it = read.find(file); it != read.end() && it->second.first == key) return it->second.second;
  }
  git_index* raw_index = nullptr;
  KAI_TRY(git_check(git_repository_index(&raw_index, repo.get()), "open the git index"));
  const GitOwned<git_index, git_index_free> index(raw_index);
  auto out = std::make_shared<IndexEntries>();
  const size_t n = git_index_entrycount(raw_index);
  out->entries.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (const git_index_entry* e = git_index_get_byindex(raw_index, i); e && e->path)
      out->entries.push_back(IndexEntries::Entry{e->path, e->mode, e->uid, e->gid, GIT_INDEX_ENTRY_STAGE(e)});
  auto by_path = [](const IndexEntries::Entry& a, const IndexEntries::Entry& b) {
    return a.path != b.path ? a.path < b.path : a.stage < b.stage;
  };
  if (!std::is_sorted(out->entries.begin(), out->entries.end(), by_path))
    std::sort(out->entries.begin(), out->entries.end(), by_path);
  if (have) {
    std::lock_guard<std::mutex> held(lock);
    read[file] = {key, out};
  }
  return std::shared_ptr<const IndexEntries>(std::move(out));
}

Result<std::vector<std::string>> tracked_paths(const std::filesystem::path& root) {
  auto index = index_entries(root);
  if (!index) return index.error();
  std::vector<std::string> out;
  out.reserve((*index)->entries.size());
  for (const auto& e : (*index)->entries)
    if (e.stage == 0) out.push_back(e.path);
  return out;
}

Status git_check(int rc, std::string_view what) {
  if (rc >= 0) return ok_status();
  const git_error* e = git_error_last();
  return make_error(Errc::io,
                    fmt::format("{} failed: {}", what, e && e->message ? e->message : "unknown libgit2 error"));
}

}  // namespace kai
