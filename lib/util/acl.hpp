#pragma once
// POSIX access ACLs as Linux keeps them: the system.posix_acl_access
// extended attribute, read and judged the way the kernel judges it
// (posix_acl_permission), so that `kaicoder agent-user check` sees what a
// user can reach through an ACL entry as well as through the mode bits.
// Parsed from the attribute's bytes directly: no libacl.
//
//   if (auto acl = read_access_acl(path)) ok = acl_permits(*acl, st, uid, groups, 4);

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <vector>

namespace kai {

// Entry tags as the attribute stores them.
enum class AclTag : uint16_t {
  user_obj = 0x01,
  user = 0x02,
  group_obj = 0x04,
  group = 0x08,
  mask = 0x10,
  other = 0x20
};

struct AclEntry {
  AclTag tag = AclTag::other;
  unsigned perm = 0;  // 4 read, 2 write, 1 execute/search
  uint32_t id = 0;    // the uid or gid of a named user or group entry
};

struct Acl {
  std::vector<AclEntry> entries;  // in the attribute's order (sorted by tag, then id)
};

// The attribute's bytes: a little-endian version 2 header (4 bytes), then
// 8-byte entries {tag, perm, id}. nullopt when it is not that: a bad
// version or length, an unknown tag, or an access ACL without its
// user_obj, group_obj and other entries (or named entries without a mask).
std::optional<Acl> parse_posix_acl(std::string_view bytes);

// The access ACL of `p` (not following a symlink); nullopt when it has none
// beyond its mode bits, the file system keeps none, or it cannot be read.
std::optional<Acl> read_access_acl(const std::filesystem::path& p);

// Whether a process of `uid` in `groups` has every bit of `bits` on a file
// with owner and group of `st` and this ACL, in the kernel's order: the
// owner entry, a named user entry (masked), the owning and named group
// entries (masked; a matching group that does not grant denies), other.
bool acl_permits(const Acl& acl, const struct stat& st, uid_t uid, const std::vector<gid_t>& groups, unsigned bits);

}  // namespace kai
