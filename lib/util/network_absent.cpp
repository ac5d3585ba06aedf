// libgit2's SSH transport and TLS streams, absent. kaicoder opens no remote
// through libgit2: it reads and writes local repositories only, and team
// mode pushes and fetches with the git program (lib/team). Yet libgit2's
// archive (linked when KAICODER_STATIC_DEPS is on: CMakeLists.txt) would
// bring both in, and with them costs every process pays for code that never
// runs:
//   - its initialisation reads and parses the system's whole CA bundle
//     (git_mbedtls_stream_global_init), a few milliseconds of base64 and
//     X.509 parsing in every command that diffs or walks a tree;
//   - its SSH transport pulls in libssh2 and, through it, OpenSSL's
//     libcrypto: hundreds of kilobytes of relocated tables and a CPU probe
//     run before main.
// The link wraps the seven names libgit2 calls them by (-Wl,--wrap, set on
// the archive kaicoder_git2_absent), and these definitions answer in their
// place: the initialisations succeed and do nothing, and a request for an
// SSH transport or a TLS stream fails as libgit2 built without SSH or TLS
// does, with an error that says so. No reference to the real definitions
// is left, so their objects, libssh2, libcrypto and mbedTLS's TLS and X.509
// libraries are never linked. Hidden: resolved when kaicoder is linked and
// never seen by a shared library it loads.

#include <git2/errors.h>

#define KAI_NET_HIDDEN __attribute__((visibility("hidden")))

namespace {

int refuse(int error_class, const char* what) {
  git_error_set_str(error_class, what);
  return -1;
}

template <typename T>
void clear(T** out) {
  if (out) *out = nullptr;
}

constexpr const char* k_no_ssh =
    "kaicoder opens no remote through libgit2: its SSH transport is not linked in (team mode uses the git program)";
constexpr const char* k_no_tls =
    "kaicoder opens no remote through libgit2: its TLS streams are not linked in (team mode uses the git program)";

}  // namespace

extern "C" {

// transports/ssh.c
KAI_NET_HIDDEN int __wrap_git_transport_ssh_global_init() { return 0; }

KAI_NET_HIDDEN int __wrap_git_smart_subtransport_ssh(void** out, void*, void*) {
  clear(out);
  return refuse(GIT_ERROR_SSH, k_no_ssh);
}

KAI_NET_HIDDEN int __wrap_git_transport_ssh_with_paths(void** out, void*, void*) {
  clear(out);
  return refuse(GIT_ERROR_SSH, k_no_ssh);
}

// streams/mbedtls.c
KAI_NET_HIDDEN int __wrap_git_mbedtls_stream_global_init() { return 0; }

KAI_NET_HIDDEN int __wrap_git_mbedtls_stream_new(void** out, const char*, const char*) {
  clear(out);
  return refuse(GIT_ERROR_SSL, k_no_tls);
}

KAI_NET_HIDDEN int __wrap_git_mbedtls_stream_wrap(void** out, void*, const char*) {
  clear(out);
  return refuse(GIT_ERROR_SSL, k_no_tls);
}

KAI_NET_HIDDEN int __wrap_git_mbedtls__set_cert_location(const char*, const char*) {
  return refuse(GIT_ERROR_SSL, k_no_tls);
}

}  // extern "C"
