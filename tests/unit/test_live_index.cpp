// Store::live: the live index names the proposals pending or approved, so
// what proposing and deciding read grows with the work in flight, not with
// the history; it is made again when missing, forged or stale.

#include <catch2/catch.hpp>

#include "lib/gate/decide.hpp"
#include "lib/gate/limits.hpp"
#include "lib/util/fs.hpp"
#include "tests/support/live_file.hpp"
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
  CHECK(swept->live.entries().size() == 2);
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
// The index's lines, as written: its head, its snapshot, the changes appended since.
std::vector<std::string> index_lines(const Workspace& ws) {
  auto text = read_file(index_file(ws));
  REQUIRE(text);
  return kai::test::live_file_lines(*text);
}

// The index file with field `field` (0: the id) of proposal `id`'s lines set to `value`, their seals kept.
std::string with_field(const Workspace& ws, int id, size_t field, const std::string& value) {
  auto text = read_file(index_file(ws));
  REQUIRE(text);
  return kai::test::forge_live_field(*text, id, field, value);
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
  REQUIRE(view->entries().size() == 2);
  for (const auto& e : view->entries()) {
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
  CHECK(view->entries()[0].state == State::pending);
  CHECK(view->entries()[1].state == State::approved);
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
  REQUIRE(swept->live.entries().size() == 2);
  CHECK(swept->live.entries()[0].agent == p1->agent);
}

TEST_CASE("an index entry with a forged agent, key, state or time does not verify: made again from the records",
          "[live][attack]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  auto before = f.ws->store.live_index();
  REQUIRE(before);
  REQUIRE(before->entries().size() == 2);
  std::string forged;
  SECTION("agent") { forged = with_field(*f.ws, 1, 5, "someone-else"); }
  SECTION("key") { forged = with_field(*f.ws, 1, 4, std::string(16, '0')); }
  SECTION("state") { forged = with_field(*f.ws, 1, 1, "approved"); }
  SECTION("time") { forged = with_field(*f.ws, 1, 3, "r0"); }
  SECTION("unsettled mark") { forged = with_field(*f.ws, 1, 2, "?"); }
  SECTION("an entry dropped") { forged = kai::test::drop_live_lines(*read_file(index_file(*f.ws)), 1); }
  REQUIRE(forged != *read_file(index_file(*f.ws)));
  REQUIRE(write_file_atomic(index_file(*f.ws), forged, 0600));
  auto view = f.ws->store.live_index();
  REQUIRE(view);
  CHECK(view->rebuilt);
  CHECK(view->entries() == before->entries());
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
    for (const auto& e : v->entries())
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
  for (const auto& [id, l] : kai::test::live_file_entries(*read_file(index_file(*f.ws))))
    CHECK(l.find("\t?\t") == std::string::npos);
}

namespace {
bool appended(const std::string& l) {
  for (const char* what : {"put\t", "drop\t", "marks\t", "archived\t"})
    if (l.rfind(what, 0) == 0) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}
}  // namespace

TEST_CASE("each change is one line appended, sealed and chained to the line before it", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  const auto first = index_lines(*f.ws);
  REQUIRE(f.write("b.txt", "b\n"));
  decide(*f.ws, 2, State::approved);
  const auto now = index_lines(*f.ws);
  // Appended, not written again: what was there stays, byte for byte.
  REQUIRE(now.size() > first.size());
  CHECK(std::vector<std::string>(now.begin(), now.begin() + static_cast<std::ptrdiff_t>(first.size())) == first);
  for (size_t i = first.size(); i < now.size(); ++i) CHECK(appended(now[i]));
  // A reader of another process (nothing kept in memory) believes it.
  Store other{f.ws->store.dir()};
  other.use(f.ws->store.sealer());
  auto view = other.live_index();
  REQUIRE(view);
  CHECK_FALSE(view->rebuilt);
  REQUIRE(view->entries().size() == 2);
  CHECK(view->entries()[1].state == State::approved);
  CHECK(f.ws->store.check_live().empty());
}

TEST_CASE("an appended line torn, dropped, moved, replayed or from another store is not believed: made again",
          "[live][attack]") {
  WsFixture f{""};
  for (const char* n : {"a", "b", "c"}) REQUIRE(f.write(std::string(n) + ".txt", std::string(n) + "\n"));
  decide(*f.ws, 2, State::approved);
  auto before = f.ws->store.live_index();
  REQUIRE(before);
  const auto good = before->entries();
  REQUIRE(good.size() == 3);
  const std::string text = *read_file(index_file(*f.ws));
  std::vector<std::string> lines = index_lines(*f.ws);
  std::vector<size_t> at;  // the appended lines' places
  for (size_t i = 0; i < lines.size(); ++i)
    if (appended(lines[i])) at.push_back(i);
  REQUIRE(at.size() >= 6);
  std::string forged;
  SECTION("the last line torn (a write cut short)") { forged = text.substr(0, text.size() - 20); }
  SECTION("the last line without its newline") { forged = text.substr(0, text.size() - 1); }
  SECTION("a line in the middle dropped") {
    lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at[at.size() / 2]));
    forged = joined(lines);
  }
  SECTION("two lines swapped") {
    std::swap(lines[at[1]], lines[at[2]]);
    forged = joined(lines);
  }
  SECTION("an old line replayed at the end") { forged = text + lines[at[0]] + "\n"; }
  SECTION("a line sealed for another store, at the end") {
    WsFixture g{""};
    REQUIRE(g.write("a.txt", "other\n"));
    std::string theirs;
    for (const auto& l : index_lines(*g.ws))
      if (l.rfind("put\t", 0) == 0) theirs = l;
    REQUIRE_FALSE(theirs.empty());
    forged = text + theirs + "\n";
  }
  SECTION("a line's change forged, its seal kept") {
    forged = kai::test::forge_live_field(text, 3, 5, "someone-else");
  }
  SECTION("the last lines cut off: an older index, which does not know 3") {
    size_t cut = lines.size();
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].rfind("put\t3\t", 0) == 0) cut = std::min(cut, i);
    REQUIRE(cut < lines.size());
    forged = joined(std::vector<std::string>(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(cut)));
  }
  REQUIRE(forged != text);
  REQUIRE(write_file_atomic(index_file(*f.ws), forged, 0600));
  auto view = f.ws->store.live_index();
  REQUIRE(view);
  CHECK(view->rebuilt);
  CHECK(view->entries() == good);
  CHECK_FALSE(f.ws->store.check_live().empty());
  {
    auto lock = f.ws->store.lock();
    REQUIRE(lock);
    REQUIRE(f.ws->store.live_index(Store::Refresh::write));
  }
  CHECK(f.ws->store.check_live().empty());
}

TEST_CASE("an index in the format before, one seal over the whole file, is made again, never misread", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  // Sealed as the format before sealed it: it names 1 only.
  const std::string body = "next 3 swept 0\n1\tpending\t=\t-\t0000000000000000\tx\n";
  auto mac = f.ws->store.sealer().seal("live-index-2", "live", body);
  REQUIRE(mac);
  REQUIRE(write_file_atomic(index_file(*f.ws), "kaicoder-live-2 " + *mac + "\n" + body, 0600));
  auto view = f.ws->store.live_index();
  REQUIRE(view);
  CHECK(view->rebuilt);
  CHECK(view->entries().size() == 2);
}

TEST_CASE("the appended lines never outgrow the entries: the file is written whole again", "[live]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  const std::string head = index_lines(*f.ws).front();
  // Each change of state appends two lines (marked unsettled, then settled).
  for (int i = 0; i < 50; ++i) decide(*f.ws, 1, i % 2 ? State::approved : State::held);
  const auto lines = index_lines(*f.ws);
  CHECK(lines.front() != head);  // written whole again, under a new seal
  size_t changes = 0;
  for (const auto& l : lines) changes += appended(l) ? 1 : 0;
  CHECK(changes <= 2 * 1 + 64);
  auto view = f.ws->store.live_index();
  REQUIRE(view);
  CHECK_FALSE(view->rebuilt);
  REQUIRE(view->entries().size() == 1);
  CHECK(view->entries()[0].state == State::approved);
  CHECK(f.ws->store.check_live().empty());
}

TEST_CASE("the archiver moves what the index says left the live set, and forgets it once looked at", "[live][archive]") {
  WsFixture f{""};
  for (const char* n : {"a", "b", "c"}) REQUIRE(f.write(std::string(n) + ".txt", std::string(n) + "\n"));
  decide(*f.ws, 1, State::rejected);
  decide(*f.ws, 3, State::applied);
  // Said due in the index: a "drop" line each.
  size_t drops = 0;
  for (const auto& l : index_lines(*f.ws)) drops += l.rfind("drop\t", 0) == 0 ? 1 : 0;
  CHECK(drops == 2);
  {
    auto swept = lock_and_sweep_live(*f.ws);
    REQUIRE(swept);
  }
  CHECK(f.ws->store.folder(1) == f.ws->store.archive_dir(1));
  CHECK(f.ws->store.folder(3) == f.ws->store.archive_dir(3));
  CHECK(f.ws->store.folder(2) == f.ws->store.staging_dir(2));
  CHECK(index_lines(*f.ws).back().rfind("archived\t1 3\t", 0) == 0);
  // An index made again from the records names a decided one still in staging/ due.
  decide(*f.ws, 2, State::rejected);
  fs::remove(index_file(*f.ws));
  {
    auto swept = lock_and_sweep_live(*f.ws);
    REQUIRE(swept);
  }
  CHECK(f.ws->store.folder(2) == f.ws->store.archive_dir(2));
}
