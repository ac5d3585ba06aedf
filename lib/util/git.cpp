#include "lib/util/git.hpp"

#include <mutex>

#include <fmt/format.h>
#include <git2.h>

#include <mbedtls/md.h>

namespace kai {

void git_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string blob_id(std::string_view bytes) {
  // git's blob id (SHA-1 of "blob <size>\0" and the bytes), hashed with
  // mbedTLS rather than through libgit2: libgit2's initialisation reads
  // and parses the system's CA bundle, which a command that only hashes
  // (every command finds its config's digest) never needs. An id here only
  // says whether a file is still what a person saw; what lands is the
  // staged bytes themselves, never looked up by id.
  const std::string header = fmt::format("blob {}", bytes.size());
  unsigned char sum[20] = {};
  mbedtls_md_context_t ctx;
  mbedtls_md_init(&ctx);
  if (mbedtls_md_setup(&ctx, mbedtls_md_info_from_type(MBEDTLS_MD_SHA1), 0) == 0 && mbedtls_md_starts(&ctx) == 0) {
    (void)mbedtls_md_update(&ctx, reinterpret_cast<const unsigned char*>(header.c_str()),
                            header.size() + 1);  // the header ends with its NUL
    (void)mbedtls_md_update(&ctx, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
    (void)mbedtls_md_finish(&ctx, sum);
  }
  mbedtls_md_free(&ctx);
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (size_t i = 0; i < 20; ++i) {
    out[2 * i] = k_hex[sum[i] >> 4];
    out[2 * i + 1] = k_hex[sum[i] & 0xf];
  }
  return out;
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
