#include "lib/util/acl.hpp"

#include <algorithm>
#include <cerrno>
#include <string>
#include <sys/xattr.h>

namespace kai {
namespace {

constexpr uint32_t k_version = 2;
constexpr size_t k_header = 4, k_entry = 8;

uint32_t le32(std::string_view b, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}

uint16_t le16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}

bool known(uint16_t tag) {
  for (AclTag t : {AclTag::user_obj, AclTag::user, AclTag::group_obj, AclTag::group, AclTag::mask, AclTag::other})
    if (tag == static_cast<uint16_t>(t)) return true;
  return false;
}

}  // namespace

std::optional<Acl> parse_posix_acl(std::string_view bytes) {
  if (bytes.size() < k_header || (bytes.size() - k_header) % k_entry != 0 || le32(bytes, 0) != k_version)
    return std::nullopt;
  Acl acl;
  size_t owners = 0, group_objs = 0, others = 0, masks = 0, named = 0;
  for (size_t at = k_header; at < bytes.size(); at += k_entry) {
    const uint16_t tag = le16(bytes, at);
    if (!known(tag)) return std::nullopt;
    AclEntry e{static_cast<AclTag>(tag), le16(bytes, at + 2) & 7u, le32(bytes, at + 4)};
    owners += e.tag == AclTag::user_obj;
    group_objs += e.tag == AclTag::group_obj;
    others += e.tag == AclTag::other;
    masks += e.tag == AclTag::mask;
    named += e.tag == AclTag::user || e.tag == AclTag::group;
    acl.entries.push_back(e);
  }
  if (owners != 1 || group_objs != 1 || others != 1 || masks > 1 || (named > 0 && masks == 0)) return std::nullopt;
  // The kernel keeps entries sorted by tag; its check relies on that order.
  std::stable_sort(acl.entries.begin(), acl.entries.end(), [](const AclEntry& x, const AclEntry& y) {
    return static_cast<uint16_t>(x.tag) < static_cast<uint16_t>(y.tag);
  });
  return acl;
}

std::optional<Acl> read_access_acl(const std::filesystem::path& p) {
  std::string buf(4096, '\0');
  ssize_t n = ::lgetxattr(p.c_str(), "system.posix_acl_access", buf.data(), buf.size());
  if (n < 0 && errno == ERANGE) {
    n = ::lgetxattr(p.c_str(), "system.posix_acl_access", nullptr, 0);
    if (n <= 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    n = ::lgetxattr(p.c_str(), "system.posix_acl_access", buf.data(), buf.size());
  }
  if (n <= 0) return std::nullopt;
  buf.resize(static_cast<size_t>(n));
  return parse_posix_acl(buf);
}

bool acl_permits(const Acl& acl, const struct stat& st, uid_t uid, const std::vector<gid_t>& groups, unsigned bits) {
  auto in_group = [&](gid_t g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); };
  unsigned mask = 7;
  for (const AclEntry& e : acl.entries)
    if (e.tag == AclTag::mask) mask = e.perm;
  auto grants = [bits](unsigned perm) { return (perm & bits) == bits; };
  bool group_matched = false;
  for (const AclEntry& e : acl.entries) {
    switch (e.tag) {
      case AclTag::user_obj:
        if (st.st_uid == uid) return grants(e.perm);
        break;
      case AclTag::user:
        if (e.id == uid) return grants(e.perm & mask);
        break;
      case AclTag::group_obj:
      case AclTag::group:
        if (in_group(e.tag == AclTag::group_obj ? st.st_gid : static_cast<gid_t>(e.id))) {
          group_matched = true;
          if (grants(e.perm & mask)) return true;
        }
        break;
      case AclTag::mask: break;
      case AclTag::other: return !group_matched && grants(e.perm);
    }
  }
  return false;
}

}  // namespace kai
