// POSIX access ACLs (lib/util/acl): the system.posix_acl_access bytes parsed
// strictly and judged as the kernel judges them, and agent_access listing a
// file the agent user reaches through an ACL entry.

#include "unit/temp_dir.hpp"

#include <cerrno>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/util/acl.hpp"
#include "lib/two_user/agent_user.hpp"
#include "lib/paths/paths.hpp"

namespace {
namespace fs = std::filesystem;
using kai::AclTag;

struct AclEntry {
  AclTag tag;
  unsigned perm;
  uint32_t id;
};

// The attribute's bytes as the kernel writes them: version 2, then
// little-endian {tag, perm, id} entries.
std::string acl_bytes(std::initializer_list<AclEntry> entries, uint32_t version = 2) {
  std::string b;
  auto put16 = [&](uint16_t v) { b += static_cast<char>(v & 0xff), b += static_cast<char>(v >> 8); };
  auto put32 = [&](uint32_t v) { put16(static_cast<uint16_t>(v & 0xffff)), put16(static_cast<uint16_t>(v >> 16)); };
  put32(version);
  for (const AclEntry& e : entries) {
    put16(static_cast<uint16_t>(e.tag));
    put16(static_cast<uint16_t>(e.perm));
    put32(e.id);
  }
  return b;
}

constexpr uint32_t k_none = 0xffffffffu;
constexpr uid_t k_agent = 54321, k_owner = 1000;
constexpr gid_t k_agent_group = 54321, k_file_group = 1000, k_other_group = 777;

struct stat owned() {
  struct stat st {};
  st.st_uid = k_owner;
  st.st_gid = k_file_group;
  st.st_mode = S_IFREG | 0640;
  return st;
}

}  // namespace

TEST_CASE("an access ACL is parsed from the attribute's bytes, strictly", "[acl][twouser]") {
  auto acl = kai::parse_posix_acl(acl_bytes({{AclTag::user_obj, 6, k_none},
                                             {AclTag::user, 6, k_agent},
                                             {AclTag::group_obj, 4, k_none},
                                             {AclTag::mask, 6, k_none},
                                             {AclTag::other, 0, k_none}}));
  REQUIRE(acl);
  REQUIRE(acl->entries.size() == 5);
  CHECK(acl->entries[1].tag == AclTag::user);
  CHECK(acl->entries[1].id == k_agent);
  CHECK(acl->entries[1].perm == 6);
  // Stored out of order, it is judged in the kernel's order.
  auto shuffled = kai::parse_posix_acl(
      acl_bytes({{AclTag::other, 0, k_none}, {AclTag::group_obj, 4, k_none}, {AclTag::user_obj, 6, k_none}}));
  REQUIRE(shuffled);
  CHECK(shuffled->entries.front().tag == AclTag::user_obj);

  const std::string good =
      acl_bytes({{AclTag::user_obj, 6, k_none}, {AclTag::group_obj, 4, k_none}, {AclTag::other, 4, k_none}});
  for (const std::string& bad : {
           std::string(),
           std::string("\x02\x00\x00", 3),
           acl_bytes({{AclTag::user_obj, 6, k_none}, {AclTag::group_obj, 4, k_none}, {AclTag::other, 4, k_none}}, 1),
           good.substr(0, good.size() - 1),
           good + "\x01",
           acl_bytes({{AclTag::user_obj, 6, k_none}, {AclTag::group_obj, 4, k_none}}),  // no other
           acl_bytes({{AclTag::user_obj, 6, k_none},
                      {AclTag::user_obj, 6, k_none},
                      {AclTag::group_obj, 4, k_none},
                      {AclTag::other, 0, k_none}}),
           acl_bytes({{AclTag::user_obj, 6, k_none},
                      {AclTag::user, 6, k_agent},
                      {AclTag::group_obj, 4, k_none},
                      {AclTag::other, 0, k_none}}),  // a named entry without a mask
           acl_bytes({{AclTag::user_obj, 6, k_none},
                      {static_cast<AclTag>(0x40), 6, k_none},
                      {AclTag::group_obj, 4, k_none},
                      {AclTag::other, 0, k_none}}),
       }) {
    INFO(bad.size());
    CHECK_FALSE(kai::parse_posix_acl(bad));
  }
}

TEST_CASE("an ACL grants as the kernel decides: owner, named user within the mask, groups, other", "[acl][twouser]") {
  const struct stat st = owned();
  const std::vector<gid_t> agent_groups{k_agent_group};
  auto judge = [&](std::initializer_list<AclEntry> entries, uid_t uid, const std::vector<gid_t>& groups,
                   unsigned bits) {
    auto acl = kai::parse_posix_acl(acl_bytes(entries));
    REQUIRE(acl);
    return kai::acl_permits(*acl, st, uid, groups, bits);
  };
  // user:agent:rw- with mask rw-: the agent can write.
  CHECK(judge({{AclTag::user_obj, 6, k_none},
               {AclTag::user, 6, k_agent},
               {AclTag::group_obj, 4, k_none},
               {AclTag::mask, 6, k_none},
               {AclTag::other, 0, k_none}},
              k_agent, agent_groups, 2));
  // The same entry under mask r--: read only.
  CHECK_FALSE(judge({{AclTag::user_obj, 6, k_none},
                     {AclTag::user, 6, k_agent},
                     {AclTag::group_obj, 4, k_none},
                     {AclTag::mask, 4, k_none},
                     {AclTag::other, 0, k_none}},
                    k_agent, agent_groups, 2));
  CHECK(judge({{AclTag::user_obj, 6, k_none},
               {AclTag::user, 6, k_agent},
               {AclTag::group_obj, 4, k_none},
               {AclTag::mask, 4, k_none},
               {AclTag::other, 0, k_none}},
              k_agent, agent_groups, 4));
  // A named user entry wins over a generous other.
  CHECK_FALSE(judge({{AclTag::user_obj, 6, k_none},
                     {AclTag::user, 0, k_agent},
                     {AclTag::group_obj, 4, k_none},
                     {AclTag::mask, 7, k_none},
                     {AclTag::other, 6, k_none}},
                    k_agent, agent_groups, 4));
  // group:agents:rw-: through a group it is in.
  CHECK(judge({{AclTag::user_obj, 6, k_none},
               {AclTag::group_obj, 0, k_none},
               {AclTag::group, 6, k_agent_group},
               {AclTag::mask, 6, k_none},
               {AclTag::other, 0, k_none}},
              k_agent, agent_groups, 6));
  // A group that matches but does not grant denies, whatever other says.
  CHECK_FALSE(judge({{AclTag::user_obj, 6, k_none},
                     {AclTag::group_obj, 4, k_none},
                     {AclTag::group, 4, k_agent_group},
                     {AclTag::mask, 6, k_none},
                     {AclTag::other, 6, k_none}},
                    k_agent, agent_groups, 2));
  // No entry for it: other.
  CHECK(judge({{AclTag::user_obj, 6, k_none},
               {AclTag::group_obj, 4, k_none},
               {AclTag::group, 6, k_other_group},
               {AclTag::mask, 6, k_none},
               {AclTag::other, 6, k_none}},
              k_agent, agent_groups, 2));
  // The owner gets the owner entry, never more.
  CHECK_FALSE(judge({{AclTag::user_obj, 4, k_none}, {AclTag::group_obj, 6, k_none}, {AclTag::other, 6, k_none}},
                    k_owner, {k_file_group}, 2));
}

TEST_CASE("agent_access lists a file the agent user can write through an ACL entry", "[acl][twouser]") {
  kai::test::TempDir t;
  t.write("a.txt", "a\n");
  t.write("b.txt", "b\n");
  const fs::path root = t.path();
  fs::permissions(root, fs::perms(0755));
  fs::permissions(root / "a.txt", fs::perms(0644));
  fs::permissions(root / "b.txt", fs::perms(0644));
  kai::UnixUser agent{"agent", k_agent, k_agent_group, {k_agent_group}, {}};
  kai::Guardrails g;
  auto before = kai::agent_access(root, g, agent, root / "owner");
  if (!before.reaches_root) {
    WARN("skipped: the temp folder's parents are not passable for others here");
    return;
  }
  CHECK(before.writable.empty());
  const std::string acl = acl_bytes({{AclTag::user_obj, 6, k_none},
                                     {AclTag::user, 6, k_agent},
                                     {AclTag::group_obj, 4, k_none},
                                     {AclTag::mask, 6, k_none},
                                     {AclTag::other, 4, k_none}});
  if (::lsetxattr((root / "a.txt").c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0) {
    WARN("skipped: this file system keeps no POSIX ACLs (" << std::strerror(errno) << ")");
    return;
  }
  auto after = kai::agent_access(root, g, agent, root / "owner");
  CHECK(after.writable == std::vector<std::string>{"a.txt"});
  CHECK(kai::two_user_level(after, "agent").find("can write a.txt") != std::string::npos);
}
