#include "lib/util/git.hpp"

#include <mutex>

#include <fmt/format.h>
#include <git2.h>

namespace kai {

void git_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string blob_id(std::string_view bytes) {
  git_init_once();
  git_oid oid;
  git_odb_hash(&oid, bytes.data(), bytes.size(), GIT_OBJECT_BLOB);
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

Status git_check(int rc, std::string_view what) {
  if (rc >= 0) return ok_status();
  const git_error* e = git_error_last();
  return make_error(Errc::io,
                    fmt::format("{} failed: {}", what, e && e->message ? e->message : "unknown libgit2 error"));
}

}  // namespace kai
