// Seals (lib/store/mac): the owner's key and the MACs bound to root and identity.

#include "unit/temp_dir.hpp"

#include <sys/stat.h>

#include "lib/store/mac.hpp"

namespace {
using kai::test::mode_of;
using kai::test::TempDir;

}  // namespace

TEST_CASE("init's key is 32 private bytes in a private folder, made once", "[mac]") {
  TempDir d;
  const auto owner = d.path() / "home" / ".config" / "kaicoder";
  auto made = kai::create_key(owner);
  REQUIRE(made);
  CHECK(*made);
  CHECK(mode_of(owner) == 0700);
  CHECK(mode_of(owner / "key") == 0600);
  CHECK(std::filesystem::file_size(owner / "key") == 32);
  auto first = kai::load_key(owner);
  REQUIRE(first);
  auto again = kai::create_key(owner);
  REQUIRE(again);
  CHECK_FALSE(*again);  // never replaced: records sealed with it must keep verifying
  auto second = kai::load_key(owner);
  REQUIRE(second);
  CHECK(first->bytes == second->bytes);
}

TEST_CASE("a key file others may read, a symlink, or the wrong size is refused", "[mac]") {
  TempDir d;
  const auto owner = d.path() / "owner";
  REQUIRE(kai::create_key(owner));
  SECTION("readable by the group") { ::chmod((owner / "key").c_str(), 0640); }
  SECTION("a symlink to a key elsewhere") {
    REQUIRE(kai::create_key(d.path() / "elsewhere"));
    std::filesystem::remove(owner / "key");
    std::filesystem::create_symlink(d.path() / "elsewhere" / "key", owner / "key");
  }
  SECTION("the wrong size") {
    d.write("owner/key", "short");
    ::chmod((owner / "key").c_str(), 0600);
  }
  SECTION("a folder others may write") { ::chmod(owner.c_str(), 0777); }
  auto k = kai::load_key(owner);
  REQUIRE_FALSE(k);
  CHECK(k.error().code == kai::Errc::denied);
  auto c = kai::create_key(owner);
  REQUIRE_FALSE(c);
  CHECK(c.error().code == kai::Errc::denied);
  const kai::Sealer s(owner, d.path());
  CHECK_FALSE(s.usable());
  CHECK(s.check("proposal", "1", "x", "00") == kai::SealCheck::no_key);
}

TEST_CASE("a seal verifies only for the same kind, root, identity and bytes", "[mac]") {
  TempDir d;
  REQUIRE(kai::create_key(d.path() / "owner"));
  const kai::Sealer here(d.path() / "owner", "/srv/a"), there(d.path() / "owner", "/srv/b");
  auto mac = here.seal("proposal", "3", "{\"status\":\"approved\"}");
  REQUIRE(mac);
  CHECK(mac->size() == 64);
  CHECK(here.check("proposal", "3", "{\"status\":\"approved\"}", *mac) == kai::SealCheck::ok);
  CHECK(here.check("proposal", "4", "{\"status\":\"approved\"}", *mac) == kai::SealCheck::bad);
  CHECK(here.check("intent", "3", "{\"status\":\"approved\"}", *mac) == kai::SealCheck::bad);
  CHECK(here.check("proposal", "3", "{\"status\":\"pending\"}", *mac) == kai::SealCheck::bad);
  CHECK(there.check("proposal", "3", "{\"status\":\"approved\"}", *mac) == kai::SealCheck::bad);
  CHECK(here.check("proposal", "3", "{\"status\":\"approved\"}", "") == kai::SealCheck::missing);
  // Another owner's key: nothing of this one verifies.
  REQUIRE(kai::create_key(d.path() / "other"));
  const kai::Sealer theirs(d.path() / "other", "/srv/a");
  CHECK(theirs.check("proposal", "3", "{\"status\":\"approved\"}", *mac) == kai::SealCheck::bad);
}

TEST_CASE("HMAC-SHA-256 matches the RFC 4231 test vector", "[mac]") {
  kai::MacKey k;
  k.bytes.fill(0x0b);  // RFC 4231 case 1 uses 20 bytes of 0x0b; HMAC pads a short key with zeros
  std::fill(k.bytes.begin() + 20, k.bytes.end(), 0);
  CHECK(kai::mac_hex(k, "Hi There") == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(kai::same_mac("abc", "abc"));
  CHECK_FALSE(kai::same_mac("abc", "abd"));
  CHECK_FALSE(kai::same_mac("abc", "ab"));
}

TEST_CASE("what was spent stays spent, per root", "[mac]") {
  TempDir d;
  REQUIRE(kai::create_key(d.path() / "owner"));
  const kai::Sealer a(d.path() / "owner", "/srv/a"), b(d.path() / "owner", "/srv/b");
  CHECK_FALSE(a.spent("apply", "1"));
  REQUIRE(a.spend("apply", "1"));
  REQUIRE(a.spend("apply", "1"));  // again is fine
  CHECK(a.spent("apply", "1"));
  CHECK_FALSE(a.spent("run", "1"));
  CHECK_FALSE(b.spent("apply", "1"));
  const kai::Sealer none;
  CHECK_FALSE(none.spend("apply", "1"));
}
