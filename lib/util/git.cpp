#include "lib/util/git.hpp"

#include <mutex>

#include <fmt/format.h>
#include <git2.h>

#include "sha1dc/sha1.h"

namespace kai {

void git_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string blob_id(std::string_view bytes) {
  // SHA-1 with collision detection (third_party/sha1dc), the code libgit2
  // and git hash objects with, called directly: libgit2 itself is not
  // initialised for it, since its initialisation reads and parses the
  // system's CA bundle, which a command that only hashes (every command
  // finds its config's digest) never needs. Bytes crafted to collide get
  // sha1dc's "safe hash", so two of them never share an id.
  SHA1_CTX ctx;
  SHA1DCInit(&ctx);
  const std::string header = fmt::format("blob {}", bytes.size());
  SHA1DCUpdate(&ctx, header.c_str(), header.size() + 1);  // the header ends with its NUL
  SHA1DCUpdate(&ctx, bytes.data(), bytes.size());
  unsigned char sum[20];
  (void)SHA1DCFinal(sum, &ctx);
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out(40, '0');
  for (size_t i = 0; i < 20; ++i) {
    out[2 * i] = k_hex[sum[i] >> 4];
    out[2 * i + 1] = k_hex[sum[i] & 0xf];
  }
  return out;
}

Status git_check(int rc, std::string_view what) {
  if (rc >= 0) return ok_status();
  const git_error* e = git_error_last();
  return make_error(Errc::io,
                    fmt::format("{} failed: {}", what, e && e->message ? e->message : "unknown libgit2 error"));
}

}  // namespace kai
