// libgit2's SSH transport and TLS streams are not linked in a static build
// (lib/util/network_absent.cpp): a remote reached through libgit2 fails at
// once, saying why, and nothing parses the CA bundle at start.

#include <catch2/catch.hpp>
#include <git2.h>

#include <string>

#include "lib/util/git.hpp"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

namespace {

// The error libgit2 reports for connecting to `url`, or "" when it connected.
std::string connect_error(const char* url) {
  kai::git_init_once();
  git_remote* remote = nullptr;
  if (git_remote_create_detached(&remote, url) != 0) return "cannot create remote";
#ifdef __SANITIZE_ADDRESS__
  // libgit2's smart transport leaks its ref list when its subtransport
  // cannot be made (as in any libgit2 built without SSH): not ours to free.
  __lsan_disable();
#endif
  const int rc = git_remote_connect(remote, GIT_DIRECTION_FETCH, nullptr, nullptr, nullptr);
#ifdef __SANITIZE_ADDRESS__
  __lsan_enable();
#endif
  const git_error* e = git_error_last();
  std::string what = rc == 0 ? std::string() : std::string(e && e->message ? e->message : "unknown");
  git_remote_free(remote);
  return what;
}

}  // namespace

TEST_CASE("libgit2 opens no SSH or TLS remote: the transport and stream are absent", "[git]") {
#if KAICODER_NETWORK_ABSENT
  CHECK(connect_error("ssh://127.0.0.1:1/repo.git").find("SSH transport is not linked in") != std::string::npos);
  CHECK(connect_error("https://127.0.0.1:1/repo.git").find("TLS streams are not linked in") != std::string::npos);
#else
  SUCCEED("linked with shared libraries: libgit2's own transports are present");
#endif
}
