// GSSAPI, absent. libgit2's archive (libgit2.a, linked when
// KAICODER_STATIC_DEPS is on: CMakeLists.txt) refers to nine GSSAPI names,
// all from one place: the HTTP "Negotiate" (Kerberos/SPNEGO) authentication
// of its network transports. kaicoder never opens a remote through libgit2:
// it reads and writes local repositories only, and team mode pushes and
// fetches with the git program (lib/team). Linking the real library would
// load seven shared libraries (the Kerberos stack) into every kaicoder
// process for code that never runs, so these definitions take their place:
// each answers as a system with no GSSAPI mechanism would (GSS_S_FAILURE;
// the releases succeed), which libgit2 reports as "could not query
// mechanisms" and does not offer Negotiate. Hidden: they are resolved when
// kaicoder is linked and are never seen by a shared library it loads.

#include <cstdint>

namespace {
using OM_uint32 = std::uint32_t;
constexpr OM_uint32 k_gss_s_failure = 13u << 16;  // GSS_S_FAILURE, RFC 2744
}  // namespace

#define KAI_GSS_HIDDEN __attribute__((visibility("hidden")))

extern "C" {

KAI_GSS_HIDDEN void* GSS_C_NT_HOSTBASED_SERVICE = nullptr;

KAI_GSS_HIDDEN OM_uint32 gss_indicate_mechs(OM_uint32* minor, void** mechs) {
  if (minor) *minor = 0;
  if (mechs) *mechs = nullptr;
  return k_gss_s_failure;
}

KAI_GSS_HIDDEN OM_uint32 gss_import_name(OM_uint32* minor, const void*, const void*, void** name) {
  if (minor) *minor = 0;
  if (name) *name = nullptr;
  return k_gss_s_failure;
}

KAI_GSS_HIDDEN OM_uint32 gss_init_sec_context(OM_uint32* minor, const void*, void**, const void*, const void*,
                                              OM_uint32, OM_uint32, const void*, const void*, void**, void*,
                                              OM_uint32*, OM_uint32*) {
  if (minor) *minor = 0;
  return k_gss_s_failure;
}

KAI_GSS_HIDDEN OM_uint32 gss_display_status(OM_uint32* minor, OM_uint32, int, const void*, OM_uint32* more,
                                            void*) {
  if (minor) *minor = 0;
  if (more) *more = 0;
  return k_gss_s_failure;
}

KAI_GSS_HIDDEN OM_uint32 gss_delete_sec_context(OM_uint32* minor, void**, void*) {
  if (minor) *minor = 0;
  return 0;
}

KAI_GSS_HIDDEN OM_uint32 gss_release_buffer(OM_uint32* minor, void*) {
  if (minor) *minor = 0;
  return 0;
}

KAI_GSS_HIDDEN OM_uint32 gss_release_name(OM_uint32* minor, void**) {
  if (minor) *minor = 0;
  return 0;
}

KAI_GSS_HIDDEN OM_uint32 gss_release_oid_set(OM_uint32* minor, void**) {
  if (minor) *minor = 0;
  return 0;
}

}  // extern "C"
