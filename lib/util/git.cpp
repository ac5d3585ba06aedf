#include "lib/util/git.hpp"

#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <mutex>

#include <fmt/format.h>
#include <git2.h>
#include <mbedtls/md.h>

#include "lib/util/fs.hpp"

namespace kai {

void git_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

namespace {

std::string hex_of(const unsigned char (&sum)[20]) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (size_t i = 0; i < 20; ++i) {
    out[2 * i] = k_hex[sum[i] >> 4];
    out[2 * i + 1] = k_hex[sum[i] & 0xf];
  }
  return out;
}

// One SHA-1 over git's blob header and the bytes `feed` hands it.
class BlobHasher {
public:
  explicit BlobHasher(uint64_t size) {
    mbedtls_md_init(&m_ctx);
    m_ok = mbedtls_md_setup(&m_ctx, mbedtls_md_info_from_type(MBEDTLS_MD_SHA1), 0) == 0 &&
           mbedtls_md_starts(&m_ctx) == 0;
    const std::string header = fmt::format("blob {}", size);
    update(std::string_view(header.c_str(), header.size() + 1));  // the header ends with its NUL
  }
  ~BlobHasher() { mbedtls_md_free(&m_ctx); }
  BlobHasher(const BlobHasher&) = delete;
  BlobHasher& operator=(const BlobHasher&) = delete;
  void update(std::string_view bytes) {
    if (m_ok) (void)mbedtls_md_update(&m_ctx, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  }
  std::string finish() {
    unsigned char sum[20] = {};
    if (m_ok) (void)mbedtls_md_finish(&m_ctx, sum);
    return hex_of(sum);
  }

private:
  mbedtls_md_context_t m_ctx;
  bool m_ok = false;
};

}  // namespace

std::string blob_id(std::string_view bytes) {
  // git's blob id (SHA-1 of "blob <size>\0" and the bytes), hashed with
  // mbedTLS rather than through libgit2: libgit2's initialisation reads
  // and parses the system's CA bundle, which a command that only hashes
  // (every command finds its config's digest) never needs. An id here only
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

Result<std::vector<std::string>> tracked_paths(const std::filesystem::path& root) {
  git_init_once();
  std::vector<std::string> out;
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return out;
  const GitOwned<git_repository, git_repository_free> repo(raw);
  git_index* raw_index = nullptr;
  KAI_TRY(git_check(git_repository_index(&raw_index, repo.get()), "open the git index"));
  const GitOwned<git_index, git_index_free> index(raw_index);
  const size_t n = git_index_entrycount(raw_index);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i)
    if (const git_index_entry* e = git_index_get_byindex(raw_index, i); e && e->path && GIT_INDEX_ENTRY_STAGE(e) == 0)
      out.emplace_back(e->path);
  return out;
}

Status git_check(int rc, std::string_view what) {
  if (rc >= 0) return ok_status();
  const git_error* e = git_error_last();
  return make_error(Errc::io,
                    fmt::format("{} failed: {}", what, e && e->message ? e->message : "unknown libgit2 error"));
}

}  // namespace kai
