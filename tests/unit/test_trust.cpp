// Trusted roots (SPEC §1): discovery finds only a root its owner trusted,
// and only while kaicoder.toml holds the trusted bytes.

#include "unit/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include "lib/config/trust.hpp"
#include "lib/config/workspace.hpp"

namespace {
namespace fs = std::filesystem;
using kai::test::TempDir;

struct Owner {
  TempDir t;
  fs::path root = fs::canonical(t.path()) / "proj";
  fs::path owner = fs::canonical(t.path()) / "owner";

  Owner() {
    t.write("proj/kaicoder.toml", "[approval]\ntimeout = 30\n");
    t.write("proj/src/deep/a.c", "int a;\n");
    REQUIRE(kai::TrustList(owner).record(root, "[approval]\ntimeout = 30\n", "2026-07-09T14:15:30Z"));
  }
  kai::Env env(const fs::path& cwd, std::optional<fs::path> root_opt = std::nullopt) const {
    kai::Env e;
    e.cwd = cwd;
    e.root_override = std::move(root_opt);
    e.user_config_dir = owner;
    return e;
  }
};

}  // namespace

TEST_CASE("the nearest trusted root upward is found, and an untrusted kaicoder.toml on the way is ignored", "[trust]") {
  Owner o;
  auto found = kai::find_trusted_root(o.env(o.root / "src" / "deep"));
  REQUIRE(found);
  CHECK(found->root == o.root);
  REQUIRE(found->config);
  CHECK(*found->config == "[approval]\ntimeout = 30\n");

  o.t.write("proj/src/kaicoder.toml", "[policy.default]\nedit = \"allow\"\n");
  auto again = kai::find_trusted_root(o.env(o.root / "src" / "deep"));
  REQUIRE(again);
  CHECK(again->root == o.root);
}

TEST_CASE("a working directory reached through a symlink finds the root it really is in", "[trust]") {
  Owner o;
  fs::create_directory_symlink(o.root / "src", o.t.path() / "alias");
  auto found = kai::find_trusted_root(o.env(o.t.path() / "alias" / "deep"));
  REQUIRE(found);
  CHECK(found->root == o.root);
}

TEST_CASE("no trusted root, an untrusted one, a changed or missing kaicoder.toml are refused", "[trust]") {
  Owner o;
  SECTION("outside every root") {
    auto r = kai::find_trusted_root(o.env(o.t.path()));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::denied);
    CHECK(r.error().message.find("no trusted root") != std::string::npos);
  }
  SECTION("a tree with a kaicoder.toml nobody trusted") {
    o.t.write("clone/kaicoder.toml", "");
    auto r = kai::find_trusted_root(o.env(o.t.path() / "clone"));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::denied);
    CHECK(r.error().hint.find("kaicoder trust") != std::string::npos);
  }
  SECTION("changed") {
    o.t.write("proj/kaicoder.toml", "[approval]\ntimeout = 31\n");
    auto r = kai::find_trusted_root(o.env(o.root));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::denied);
    CHECK(r.error().message.find("changed since you trusted it") != std::string::npos);
  }
  SECTION("gone") {
    fs::remove(o.root / "kaicoder.toml");
    auto r = kai::find_trusted_root(o.env(o.root / "src"));
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("is gone") != std::string::npos);
  }
  SECTION("replaced by a symlink to the same bytes") {
    o.t.write("elsewhere.toml", "[approval]\ntimeout = 30\n");
    fs::remove(o.root / "kaicoder.toml");
    fs::create_symlink(o.t.path() / "elsewhere.toml", o.root / "kaicoder.toml");
    auto r = kai::find_trusted_root(o.env(o.root));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::denied);
  }
  SECTION("a damaged list trusts nothing and is not overwritten") {
    o.t.write("owner/trusted-roots.json", "{not json");
    auto r = kai::find_trusted_root(o.env(o.root));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::io);
    CHECK_FALSE(kai::TrustList(o.owner).record(o.root, "x", "now"));
    CHECK(o.t.read("owner/trusted-roots.json") == "{not json");
  }
}

TEST_CASE("the --root option names only a trusted root: never / nor a subfolder", "[trust]") {
  Owner o;
  CHECK(kai::find_trusted_root(o.env(o.t.path(), o.root)));
  CHECK(kai::find_trusted_root(o.env(o.root / "src", fs::path(".."))));
  for (const fs::path& bad : {fs::path("/"), o.root / "src", fs::path(o.t.path()), fs::path("src/../../..")}) {
    INFO(bad);
    auto r = kai::find_trusted_root(o.env(o.root, bad));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::denied);
  }
  auto missing = kai::find_trusted_root(o.env(o.root, o.root / "nope"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == kai::Errc::usage);
}

TEST_CASE("trust shows the previous bytes, records once per root, and refuses a file changed meanwhile", "[trust]") {
  Owner o;
  o.t.write("proj/kaicoder.toml", "[approval]\ntimeout = 99\n");
  auto review = kai::review_trust(o.env(o.root / "src"));
  REQUIRE(review);
  CHECK(review->root == o.root);
  CHECK(review->state == kai::Trust::changed);
  REQUIRE(review->previous);
  CHECK(*review->previous == "[approval]\ntimeout = 30\n");
  CHECK(review->current == "[approval]\ntimeout = 99\n");

  o.t.write("proj/kaicoder.toml", "[approval]\ntimeout = 1\n");
  auto late = kai::accept_trust(o.env(o.root), *review, "now");
  REQUIRE_FALSE(late);
  CHECK(late.error().code == kai::Errc::conflict);
  CHECK_FALSE(kai::find_trusted_root(o.env(o.root)));

  auto fresh = kai::review_trust(o.env(o.root));
  REQUIRE(fresh);
  REQUIRE(kai::accept_trust(o.env(o.root), *fresh, "now"));
  CHECK(kai::find_trusted_root(o.env(o.root)));
  auto list = kai::TrustList(o.owner).load();
  REQUIRE(list);
  CHECK(list->size() == 1);
  auto again = kai::review_trust(o.env(o.root));
  REQUIRE(again);
  CHECK(again->state == kai::Trust::trusted);
}

TEST_CASE("a clone's kaicoder.toml is reviewed whole, and / is never trusted", "[trust]") {
  Owner o;
  o.t.write("clone/kaicoder.toml", "[hooks]\nnotify = \"x\"\n");
  auto review = kai::review_trust(o.env(o.t.path() / "clone"));
  REQUIRE(review);
  CHECK(review->state == kai::Trust::unknown);
  CHECK_FALSE(review->previous);
  auto slash = kai::review_trust(o.env(o.root, fs::path("/")));
  REQUIRE_FALSE(slash);
  CHECK(slash.error().code == kai::Errc::denied);
  auto none = kai::review_trust(o.env(o.t.path()));
  REQUIRE_FALSE(none);
  CHECK(none.error().code == kai::Errc::usage);
}
