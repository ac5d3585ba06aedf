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

namespace {
// The index's lines (after its head and its "next" line), as written.
std::vector<std::string> index_lines(const Workspace& ws) {
  auto text = read_file(index_file(ws));
  REQUIRE(text);
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text->size()) {
    size_t nl = text->find('\n', at);
    if (nl == std::string::npos) nl = text->size();
    out.push_back(text->substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// The index file with field `field` (0: the id) of proposal `id`'s line set to `value`, its seal kept.
std::string with_field(const Workspace& ws, int id, size_t field, const std::string& value) {
  std::string out;
  for (const std::string& l : index_lines(ws)) {
    std::vector<std::string> f;
    size_t at = 0;
    for (size_t tab = l.find('\t'); tab != std::string::npos; tab = l.find('\t', at)) {
      f.push_back(l.substr(at, tab - at));
      at = tab + 1;
    }
    f.push_back(l.substr(at));
    if (f.size() == 6 && f[0] == std::to_string(id)) f[field] = value;
    std::string line;
    for (size_t i = 0; i < f.size(); ++i) line += (i ? "\t" : "") + f[i];
    out += line + "\n";
  }
  return out;
}
}  // namespace

TEST_CASE("each index entry carries what the sweep, the twin and the limit read, as its record says", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  REQUIRE(f.write("c.txt", "c\n"));
  decide(*f.ws, 2, State::approved);
  decide(*f.ws, 3, State::rejected);
  auto view = f.ws->store.live_index();
  REQUIRE(view);
  CHECK_FALSE(view->rebuilt);
  REQUIRE(view->entries.size() == 2);
  for (const auto& e : view->entries) {
    auto p = f.ws->store.load(e.id);
    REQUIRE(p);
    CHECK(e.readable);
    CHECK(e.state == p->state);
    CHECK(e.agent == p->agent);
    CHECK(e.key == live_key(*p, digest(*p)));
    CHECK(e.clock == 'r');
    TimePoint created;
    REQUIRE(parse_iso_utc(p->created, created));
    CHECK(e.at == unix_seconds(created));
    CHECK(e == live_entry(*p));
  }
  CHECK(view->entries[0].state == State::pending);
  CHECK(view->entries[1].state == State::approved);
  // The same request keys the same; another path, base or content does not.
  auto p1 = f.ws->store.load(1);
  REQUIRE(p1);
  Proposal other = *p1;
  other.content = "other\n";
  CHECK(live_key(other, digest(other)) != live_key(*p1, digest(*p1)));
  other = *p1;
  other.path = "z.txt";
  CHECK(live_key(other, digest(other)) != live_key(*p1, digest(*p1)));
  other = *p1;
  other.base.exists = !other.base.exists;
  CHECK(live_key(other, digest(other)) != live_key(*p1, digest(*p1)));
  // A sweep reads the index and no record: the records made unreadable, it
  // still gives the twin and the limit both entries.
  for (int i : {1, 2}) REQUIRE(write_file_atomic(f.ws->store.staging_dir(i) / "meta.json", "not json", 0600));
  auto swept = lock_and_sweep_live(*f.ws);
  REQUIRE(swept);
  REQUIRE(swept->live.size() == 2);
  CHECK(swept->live[0].agent == p1->agent);
}

TEST_CASE("an index entry with a forged agent, key, state or time does not verify: made again from the records",
          "[live][attack]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  auto before = f.ws->store.live_index();
  REQUIRE(before);
  REQUIRE(before->entries.size() == 2);
  std::string forged;
  SECTION("agent") { forged = with_field(*f.ws, 1, 5, "someone-else"); }
  SECTION("key") { forged = with_field(*f.ws, 1, 4, std::string(16, '0')); }
  SECTION("state") { forged = with_field(*f.ws, 1, 1, "approved"); }
  SECTION("time") { forged = with_field(*f.ws, 1, 3, "r0"); }
  SECTION("unsettled mark") { forged = with_field(*f.ws, 1, 2, "?"); }
  SECTION("an entry dropped") {
    for (const std::string& l : index_lines(*f.ws))
      if (l.rfind("1\t", 0) != 0) forged += l + "\n";
  }
  REQUIRE(forged != *read_file(index_file(*f.ws)));
  REQUIRE(write_file_atomic(index_file(*f.ws), forged, 0600));
  auto view = f.ws->store.live_index();
  REQUIRE(view);
  CHECK(view->rebuilt);
  CHECK(view->entries == before->entries);
  CHECK_FALSE(f.ws->store.check_live().empty());
  // The limit counts both for the agent, whatever the forged entry said.
  f.ws->cfg.limits.pending = 2;
  auto over = f.write("c.txt", "c\n");
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::denied);
  // A retry of 1 finds its twin.
  f.ws->cfg.limits.pending = 100;
  auto again = f.write("a.txt", "a\n");
  REQUIRE(again);
  CHECK(again->existing);
  CHECK(again->proposal.id == 1);
  CHECK(f.ws->store.check_live().empty());  // the proposing command wrote it again
}

TEST_CASE("an old sealed index put back after a decision: the records decide, doctor's check sees it", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  const auto old_copy = read_file(index_file(*f.ws));
  REQUIRE(old_copy);
  decide(*f.ws, 1, State::approved);
  REQUIRE(write_file_atomic(index_file(*f.ws), *old_copy, 0600));
  // It says pending, its record approved: no twin is taken from it.
  CHECK_THAT(f.ws->store.check_live(), Catch::Matchers::Contains("say other than their records"));
  auto again = f.write("a.txt", "a\n");
  REQUIRE(again);
  CHECK_FALSE(again->existing);
  CHECK(again->proposal.id == 2);
  auto lock = f.ws->store.lock();
  REQUIRE(lock);
  REQUIRE(f.ws->store.rebuild_live());
  CHECK(f.ws->store.check_live().empty());
}

TEST_CASE("an index entry is kept as each state change says, and dropped when decided", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  auto state_of = [&](int id) -> std::string {
    auto v = f.ws->store.live_index();
    REQUIRE(v);
    for (const auto& e : v->entries)
      if (e.id == id) return std::string(to_string(e.state));
    return "gone";
  };
  CHECK(state_of(1) == "pending");
  decide(*f.ws, 1, State::approved);
  CHECK(state_of(1) == "approved");
  decide(*f.ws, 1, State::held);
  CHECK(state_of(1) == "held");
  decide(*f.ws, 1, State::applied);
  CHECK(state_of(1) == "gone");
  decide(*f.ws, 2, State::timeout);
  CHECK(state_of(2) == "gone");
  CHECK(f.ws->store.check_live().empty());
  // No entry is left unsettled by a save that finished.
  for (const std::string& l : index_lines(*f.ws)) CHECK(l.find("\t?\t") == std::string::npos);
}
