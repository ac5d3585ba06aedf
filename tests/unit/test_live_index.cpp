// Store::live: the live index names the proposals pending or approved, so
// what proposing and deciding read grows with the work in flight, not with
// the history; it is made again when missing, forged or stale.

#include <catch2/catch.hpp>

#include "lib/gate/decide.hpp"
#include "lib/gate/limits.hpp"
#include "lib/util/fs.hpp"
#include "unit/ws_fixture.hpp"

namespace {
using namespace kai;
using kai::test::WsFixture;
using kai::test::decide;
namespace fs = std::filesystem;

std::vector<int> ids_of(const Store::Live& l) {
  std::vector<int> out;
  for (const auto& p : l.proposals) out.push_back(p.id);
  return out;
}

fs::path index_file(const Workspace& ws) { return ws.store.dir() / "staging" / "live"; }

}  // namespace

TEST_CASE("the live set is what is pending or approved, read without touching decided records", "[live]") {
  WsFixture f{""};
  for (int i = 1; i <= 40; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  for (int i = 1; i <= 40; ++i)
    if (i != 7 && i != 23) decide(*f.ws, i, i % 2 ? State::rejected : State::applied);
  decide(*f.ws, 23, State::approved);
  // The decided records made unreadable: a live set that read them would
  // report them corrupt.
  for (int i = 1; i <= 40; ++i)
    if (i != 7 && i != 23) REQUIRE(write_file_atomic(f.ws->store.staging_dir(i) / "meta.json", "not json", 0600));
  auto live = f.ws->store.live();
  REQUIRE(live);
  CHECK(ids_of(*live) == std::vector<int>{7, 23});
  CHECK(live->corrupt.empty());
  CHECK_FALSE(live->rebuilt);
  for (const auto& p : live->proposals) CHECK(p.sealed == SealCheck::ok);
  // One sweep gives the twin and the limit their set.
  auto swept = lock_and_sweep_live(*f.ws);
  REQUIRE(swept);
  CHECK(swept->live.size() == 2);
}

TEST_CASE("a missing, forged or old live index is made again; a read never writes it", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  const auto old_copy = read_file(index_file(*f.ws));
  REQUIRE(old_copy);
  REQUIRE(f.write("b.txt", "b\n"));
  REQUIRE(f.write("c.txt", "c\n"));
  decide(*f.ws, 2, State::rejected);

  SECTION("missing") { fs::remove(index_file(*f.ws)); }
  SECTION("forged") {
    REQUIRE(write_file_atomic(index_file(*f.ws), R"({"ids":[],"next":4,"seal":")" + std::string(64, '0') + "\"}",
                              0600));
  }
  SECTION("an old sealed copy put back") { REQUIRE(write_file_atomic(index_file(*f.ws), *old_copy, 0600)); }

  const auto before = read_file(index_file(*f.ws));
  auto live = f.ws->store.live();
  REQUIRE(live);
  CHECK(live->rebuilt);
  CHECK(ids_of(*live) == std::vector<int>{1, 3});
  const auto after = read_file(index_file(*f.ws));  // read_only: left as it was
  CHECK(after.ok() == before.ok());
  if (after.ok() && before.ok()) CHECK(*after == *before);
  {
    auto lock = f.ws->store.lock();
    REQUIRE(lock);
    REQUIRE(f.ws->store.live(Store::Refresh::write));
  }
  auto again = f.ws->store.live();
  REQUIRE(again);
  CHECK_FALSE(again->rebuilt);
  CHECK(ids_of(*again) == std::vector<int>{1, 3});
  CHECK(f.ws->store.check_live().empty());
}

TEST_CASE("next_id never hands out an id twice, whatever the counter and the index say", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  auto lock = f.ws->store.lock();
  REQUIRE(lock);
  fs::remove(f.ws->store.dir() / "staging" / "next-id");
  fs::remove(index_file(*f.ws));
  auto id = f.ws->store.next_id();
  REQUIRE(id);
  CHECK(*id == 3);
  REQUIRE(write_file_atomic(f.ws->store.dir() / "staging" / "next-id", "1\n", 0600));
  auto id2 = f.ws->store.next_id();
  REQUIRE(id2);
  CHECK(*id2 == 3);
}

TEST_CASE("check_live says what is wrong with the index; rebuild_live mends it", "[live]") {
  WsFixture f{""};
  CHECK(f.ws->store.check_live().empty());  // no proposal yet: no index needed
  REQUIRE(f.write("a.txt", "a\n"));
  CHECK(f.ws->store.check_live().empty());
  fs::remove(index_file(*f.ws));
  CHECK(f.ws->store.check_live() == "it is missing");
  REQUIRE(write_file_atomic(index_file(*f.ws), "{}", 0600));
  CHECK_FALSE(f.ws->store.check_live().empty());
  auto lock = f.ws->store.lock();
  REQUIRE(lock);
  auto n = f.ws->store.rebuild_live();
  REQUIRE(n);
  CHECK(*n == 1);
  CHECK(f.ws->store.check_live().empty());
}
