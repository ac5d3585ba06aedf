// The archive (lib/store/store.hpp Store::archive_decided, catalog): decided
// proposals leave staging/ at the next sweep, are still found by id with a
// stat, and a full listing reads their buckets' summaries instead of every
// record; a summary line is believed only when its seal verifies.

#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "lib/gate/decide.hpp"
#include "lib/util/fs.hpp"
#include "unit/ws_fixture.hpp"

namespace {
using namespace kai;
using kai::test::WsFixture;
using kai::test::decide;
namespace fs = std::filesystem;

size_t archive_now(Workspace& ws) {
  auto lock = ws.store.lock();
  REQUIRE(lock);
  auto n = ws.store.archive_decided();
  REQUIRE(n);
  return *n;
}

std::vector<int> ids_of(const std::vector<Proposal>& ps) {
  std::vector<int> out;
  for (const auto& p : ps) out.push_back(p.id);
  return out;
}

fs::path summary_of(const Workspace& ws) { return ws.store.dir() / "archive" / "0" / "summary"; }
size_t lines_of(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

TEST_CASE("decided proposals move to the archive and are still loaded, saved and listed", "[archive]") {
  WsFixture f{""};
  for (int i = 1; i <= 6; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  decide(*f.ws, 2, State::rejected);
  decide(*f.ws, 3, State::applied);
  decide(*f.ws, 5, State::approved);
  CHECK(archive_now(*f.ws) == 2);
  CHECK_FALSE(fs::exists(f.ws->store.staging_dir(2)));
  CHECK(fs::exists(f.ws->store.archive_dir(2) / "meta.json"));
  CHECK(f.ws->store.folder(3) == f.ws->store.archive_dir(3));
  CHECK(f.ws->store.folder(5) == f.ws->store.staging_dir(5));
  CHECK(f.ws->store.hot_ids() == std::vector<int>{1, 4, 5, 6});
  auto ids = f.ws->store.ids();
  REQUIRE(ids);
  CHECK(*ids == std::vector<int>{1, 2, 3, 4, 5, 6});
  // Loaded with its payloads, the seal verifying where it moved to.
  auto p = f.ws->store.load(3);
  REQUIRE(p);
  CHECK(p->sealed == SealCheck::ok);
  CHECK_FALSE(p->payload_changed);
  CHECK(p->content == "3\n");
  // Listed from the summary, nothing read from the records.
  auto all = f.ws->store.catalog();
  REQUIRE(all);
  CHECK(ids_of(all->proposals) == std::vector<int>{1, 2, 3, 4, 5, 6});
  CHECK(all->from_records.empty());
  CHECK(all->corrupt.empty());
  CHECK(f.ws->store.check_summaries(false).empty());
  // An archived record saved again (rolled back) keeps its summary true.
  decide(*f.ws, 3, State::rolled_back);
  CHECK(f.ws->store.folder(3) == f.ws->store.archive_dir(3));
  all = f.ws->store.catalog();
  REQUIRE(all);
  CHECK(all->proposals[2].state == State::rolled_back);
  CHECK(all->from_records.empty());
  // The next id steps over archived ones even with the counter and index gone.
  fs::remove(f.ws->store.dir() / "staging" / "next-id");
  fs::remove(f.ws->store.dir() / "staging" / "live");
  decide(*f.ws, 6, State::rejected);
  CHECK(archive_now(*f.ws) == 1);
  {
    auto lock = f.ws->store.lock();
    REQUIRE(lock);
    auto next = f.ws->store.next_id();
    REQUIRE(next);
    CHECK(*next == 7);
  }
}

TEST_CASE("a bucket's summary is appended to: the last line of an id is its word, and doctor writes it compact",
          "[archive]") {
  WsFixture f{""};
  for (int i = 1; i <= 4; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  decide(*f.ws, 1, State::applied);
  decide(*f.ws, 2, State::rejected);
  CHECK(archive_now(*f.ws) == 2);
  const Store& store = f.ws->store;
  auto before = read_file(summary_of(*f.ws));
  REQUIRE(before);
  CHECK(lines_of(*before) == 2);

  // A rollback of an archived proposal: a drop line, then its new line,
  // both added at the end; nothing before them is written again.
  decide(*f.ws, 1, State::rolled_back);
  auto after = read_file(summary_of(*f.ws));
  REQUIRE(after);
  REQUIRE(after->size() > before->size());
  CHECK(after->compare(0, before->size(), *before) == 0);
  CHECK(after->find("\n1\t-\n") != std::string::npos);
  CHECK(lines_of(*after) == 4);
  auto all = store.catalog();
  REQUIRE(all);
  CHECK(all->from_records.empty());
  CHECK(all->proposals[0].state == State::rolled_back);
  CHECK(all->proposals[1].state == State::rejected);

  // The next sweep appends too.
  decide(*f.ws, 3, State::rejected);
  CHECK(archive_now(*f.ws) == 1);
  CHECK(lines_of(*read_file(summary_of(*f.ws))) == 5);

  // In order, only longer than it needs: not a disagreement; a repair
  // writes it compact, and it reads the same.
  std::vector<std::string> untidy;
  CHECK(store.check_summaries(false, &untidy).empty());
  CHECK(untidy == std::vector<std::string>{"0"});
  {
    auto lock = store.lock();
    REQUIRE(lock);
    CHECK(store.compact_summaries(untidy) == 1);
    CHECK(store.compact_summaries(untidy) == 0);  // compact already
  }
  CHECK(lines_of(*read_file(summary_of(*f.ws))) == 3);
  untidy.clear();
  CHECK(store.check_summaries(false, &untidy).empty());
  CHECK(untidy.empty());
  all = store.catalog();
  REQUIRE(all);
  CHECK(all->from_records.empty());
  CHECK(ids_of(all->proposals) == std::vector<int>{1, 2, 3, 4});
}

TEST_CASE("a summary's last line cut short by a crash is not read, and the next line starts on its own",
          "[archive][crash]") {
  WsFixture f{""};
  for (int i = 1; i <= 3; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  decide(*f.ws, 1, State::applied);
  CHECK(archive_now(*f.ws) == 1);
  const Store& store = f.ws->store;
  auto text = read_file(summary_of(*f.ws));
  REQUIRE(text);
  // An append of proposal 1's new line, killed halfway.
  const std::string line = text->substr(0, text->find('\n'));
  REQUIRE(append_file(summary_of(*f.ws), line.substr(0, line.size() / 2), 0600));
  auto all = store.catalog();
  REQUIRE(all);
  CHECK(all->from_records.empty());  // the cut line is not read: proposal 1's whole line stands
  CHECK(all->proposals[0].state == State::applied);
  // The next append ends the cut line first: it is then a line that does
  // not verify, so proposal 1 is read from its record (never believed
  // from it), and proposal 2's line is whole.
  decide(*f.ws, 2, State::rejected);
  CHECK(archive_now(*f.ws) == 1);
  all = store.catalog();
  REQUIRE(all);
  CHECK(all->from_records == std::vector<int>{1});
  CHECK(all->proposals[0].state == State::applied);
  CHECK(all->proposals[1].state == State::rejected);
  CHECK(store.check_summaries(false) == std::vector<std::string>{"0"});
  CHECK(store.check_summaries(true) == std::vector<std::string>{"0"});
  all = store.catalog();
  REQUIRE(all);
  CHECK(all->from_records.empty());
}

TEST_CASE("an archive summary linked to a file elsewhere is never written through", "[archive][attack]") {
  WsFixture f{""};
  for (int i = 1; i <= 3; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  decide(*f.ws, 1, State::applied);
  CHECK(archive_now(*f.ws) == 1);
  const fs::path victim = f.dir.path() / "victim.txt";
  auto text = read_file(summary_of(*f.ws));
  REQUIRE(text);
  REQUIRE(write_file_atomic(victim, *text, 0600));
  fs::remove(summary_of(*f.ws));
  SECTION("a hard link") { fs::create_hard_link(victim, summary_of(*f.ws)); }
  SECTION("a symlink") { fs::create_symlink(victim, summary_of(*f.ws)); }
  decide(*f.ws, 1, State::rolled_back);
  decide(*f.ws, 2, State::rejected);
  CHECK(archive_now(*f.ws) == 1);
  // The file elsewhere holds what it held; the summary is a file of its own.
  CHECK(*read_file(victim) == *text);
  CHECK(fs::is_regular_file(fs::symlink_status(summary_of(*f.ws))));
  CHECK(fs::hard_link_count(summary_of(*f.ws)) == 1);
  auto all = f.ws->store.catalog();
  REQUIRE(all);
  CHECK(all->proposals[0].state == State::rolled_back);
  CHECK(all->proposals[1].state == State::rejected);
}

TEST_CASE("doctor's audit leaves out a bucket unchanged since a whole check found it in order", "[archive][attack]") {
  WsFixture f{""};
  for (int i = 1; i <= 4; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  decide(*f.ws, 1, State::rejected);
  decide(*f.ws, 2, State::applied);
  decide(*f.ws, 3, State::rejected);
  CHECK(archive_now(*f.ws) == 3);
  const Store& store = f.ws->store;
  const fs::path file = store.dir() / "archive" / "audit" / "0";
  auto entry_ids = [](const Store::Audit& a) {
    std::vector<int> out;
    for (const auto& e : a.entries) out.push_back(e.id);
    return out;
  };
  auto vouch = [&store](const Store::Audit& a) { return store.vouch(a, store.check_summaries(a, false)); };
  // Stat data in the racy window (a second before the audit) is never vouched for.
  CHECK(vouch(store.audit()) == 0);
  CHECK_FALSE(fs::exists(file));
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  const Store::Audit whole = store.audit();
  REQUIRE(whole.read.size() == 1);
  CHECK(entry_ids(whole) == std::vector<int>{1, 2, 3, 4});
  CHECK(vouch(whole) == 1);
  REQUIRE(fs::exists(file));
  // Unchanged: left out, and nothing it holds is missed by the checks.
  const Store::Audit changed = store.audit(Store::Depth::changed);
  CHECK(changed.vouched == std::vector<int>{0});
  CHECK(changed.read.empty());
  CHECK(entry_ids(changed) == std::vector<int>{4});
  CHECK(store.check_summaries(changed, false).empty());
  CHECK(store.check_live(changed).empty());
  CHECK(store.audit(Store::Depth::full).vouched.empty());
  // Another sealer (another owner's key) does not believe it.
  {
    const fs::path owner = f.dir.path() / ".other-owner";
    REQUIRE(kai::create_key(owner));
    Sealer other{owner, f.ws->root};
    REQUIRE(other.usable());
    Store elsewhere{store.dir()};
    elsewhere.use(other);
    CHECK(elsewhere.audit(Store::Depth::changed).vouched.empty());
  }
  // One larger than a bucket's file can be is not read, nor believed.
  {
    const std::string kept = *read_file(file);
    REQUIRE(write_file_atomic(file, kept + std::string(1 << 20, '\n'), 0600));
    CHECK(store.audit(Store::Depth::changed).vouched.empty());
    REQUIRE(write_file_atomic(file, kept, 0600));
    CHECK(store.audit(Store::Depth::changed).vouched == std::vector<int>{0});
  }
  // A record saved again (rolled back from the archive) moves its stamp:
  // the bucket is read whole, and loses its file until it settles.
  decide(*f.ws, 2, State::rolled_back);
  const Store::Audit again = store.audit(Store::Depth::changed);
  CHECK(again.vouched.empty());
  CHECK(entry_ids(again) == std::vector<int>{1, 2, 3, 4});
  CHECK(vouch(again) == 0);
  CHECK_FALSE(fs::exists(file));
}

TEST_CASE("the sweep archives, and a forged, cut or missing summary is refused and made again", "[archive][attack]") {
  WsFixture f{""};
  for (int i = 1; i <= 3; ++i) REQUIRE(f.write("f" + std::to_string(i) + ".txt", std::to_string(i) + "\n"));
  decide(*f.ws, 1, State::applied);
  decide(*f.ws, 2, State::rejected);
  {
    auto swept = lock_and_sweep_live(*f.ws);
    REQUIRE(swept);
  }
  REQUIRE(fs::exists(f.ws->store.archive_dir(1)));
  REQUIRE(fs::exists(f.ws->store.archive_dir(2)));
  auto text = read_file(summary_of(*f.ws));
  REQUIRE(text);

  SECTION("missing") { fs::remove(summary_of(*f.ws)); }
  SECTION("a forged line: proposal 2 shown applied, its seal made up") {
    std::string forged = *text;
    const size_t at = forged.find("\"rejected\"");
    REQUIRE(at != std::string::npos);
    forged.replace(at, 10, "\"applied\"");
    REQUIRE(write_file_atomic(summary_of(*f.ws), forged, 0600));
  }
  SECTION("a line of proposal 1 copied under id 2") {
    const std::string first = text->substr(0, text->find('\n'));
    REQUIRE(write_file_atomic(summary_of(*f.ws), first + "\n2" + first.substr(1) + "\n", 0600));
  }
  SECTION("cut short") { REQUIRE(write_file_atomic(summary_of(*f.ws), text->substr(0, text->size() / 2), 0600)); }

  // What does not verify is not believed: the record says instead.
  auto all = f.ws->store.catalog();
  REQUIRE(all);
  CHECK(ids_of(all->proposals) == std::vector<int>{1, 2, 3});
  CHECK(all->proposals[1].state == State::rejected);
  CHECK(all->proposals[0].state == State::applied);
  CHECK_FALSE(all->from_records.empty());
  CHECK(f.ws->store.check_summaries(false) == std::vector<std::string>{"0"});
  // doctor's repair makes it again from the records.
  CHECK(f.ws->store.check_summaries(true) == std::vector<std::string>{"0"});
  CHECK(f.ws->store.check_summaries(false).empty());
  all = f.ws->store.catalog();
  REQUIRE(all);
  CHECK(all->from_records.empty());
  CHECK(all->proposals[1].state == State::rejected);
}

TEST_CASE("a forged archived record is never believed, moved or summarised as kaicoder's", "[archive][attack]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  REQUIRE(f.write("b.txt", "b\n"));
  decide(*f.ws, 1, State::applied);
  CHECK(archive_now(*f.ws) == 1);
  // The agent rewrites the archived record and its summary line.
  auto meta = read_file(f.ws->store.archive_dir(1) / "meta.json");
  REQUIRE(meta);
  std::string forged = *meta;
  forged.replace(forged.find("\"applied\""), 9, "\"pending\"");
  REQUIRE(write_file_atomic(f.ws->store.archive_dir(1) / "meta.json", forged, 0600));
  REQUIRE(f.ws->store.check_summaries(true) == std::vector<std::string>{"0"});
  auto p = f.ws->store.load(1);
  REQUIRE(p);
  CHECK(p->sealed == SealCheck::bad);
  auto all = f.ws->store.catalog();
  REQUIRE(all);
  CHECK(all->from_records == std::vector<int>{1});
  CHECK(all->proposals[0].sealed == SealCheck::bad);
  // A decided record that does not verify stays in staging/, where doctor lists it.
  decide(*f.ws, 2, State::rejected);
  REQUIRE(write_file_atomic(f.ws->store.staging_dir(2) / "meta.json", forged, 0600));
  CHECK(archive_now(*f.ws) == 0);
  CHECK(fs::exists(f.ws->store.staging_dir(2)));
}

namespace {
fs::path listing_of(const Workspace& ws) { return ws.store.dir() / "archive" / "0" / "listing"; }
}  // namespace

TEST_CASE("a full listing reads each bucket's sealed listing, and a forged one is never believed", "[archive][attack]") {
  WsFixture f{""};
  for (int i = 1; i <= 3; ++i) {
    ProposeRequest r;
    r.path = "f" + std::to_string(i) + ".txt";
    r.content = std::to_string(i) + "\n";
    r.why = "test";
    r.agent = "bot-" + std::to_string(i);
    // What an agent writes may hold tabs, newlines and backslashes: kept exactly.
    r.summary = "made f" + std::to_string(i) + "\twith a tab\nand \\ a line";
    REQUIRE(propose(*f.ws, r, f.dir.path(), DryRun::no, {}));
  }
  decide(*f.ws, 1, State::applied);
  decide(*f.ws, 2, State::rejected);
  CHECK(archive_now(*f.ws) == 2);
  auto text = read_file(listing_of(*f.ws));
  REQUIRE(text);
  // Listed from the listing: the fields a row shows, nothing else read.
  auto all = f.ws->store.catalog(Store::Detail::listed);
  REQUIRE(all);
  CHECK(ids_of(all->proposals) == std::vector<int>{1, 2, 3});
  CHECK(all->unlisted.empty());
  CHECK(all->from_records.empty());
  auto full = f.ws->store.load(2, Store::Payloads::none);
  REQUIRE(full);
  const Proposal& row = all->proposals[1];
  CHECK(row.state == State::rejected);
  CHECK(row.summary == full->summary);
  CHECK(row.summary == "made f2\twith a tab\nand \\ a line");
  CHECK(row.agent == full->agent);
  CHECK(row.path == full->path);
  CHECK(row.kind == full->kind);
  CHECK(row.created == full->created);
  CHECK(f.ws->store.check_summaries(false).empty());

  // The agent edits the listing: a status, a summary, an author; or cuts
  // it, or copies a line under another id, or removes it.
  auto swap = [&](const std::string& from, const std::string& to) {
    std::string forged = *text;
    const size_t at = forged.find(from);
    REQUIRE(at != std::string::npos);
    forged.replace(at, from.size(), to);
    REQUIRE(write_file_atomic(listing_of(*f.ws), forged, 0600));
  };
  SECTION("status") { swap("\trejected\t", "\tapplied\t"); }
  SECTION("summary text") { swap("made f2", "all tests pass"); }
  SECTION("author") { swap("\t" + full->agent + "\t", "\tthe-owner\t"); }
  SECTION("a line copied under another id") {
    const size_t body = text->find('\n') + 1;
    const std::string first = text->substr(body, text->find('\n', body) - body);
    REQUIRE(write_file_atomic(listing_of(*f.ws), text->substr(0, body) + first + "\n2" + first.substr(1) + "\n", 0600));
  }
  SECTION("cut short") { REQUIRE(write_file_atomic(listing_of(*f.ws), text->substr(0, text->size() - 5), 0600)); }
  SECTION("missing") { fs::remove(listing_of(*f.ws)); }

  // Not believed: each is read as without the listing, and named.
  all = f.ws->store.catalog(Store::Detail::listed);
  REQUIRE(all);
  CHECK(ids_of(all->proposals) == std::vector<int>{1, 2, 3});
  CHECK(all->unlisted == std::vector<int>{1, 2});
  CHECK(all->proposals[1].state == State::rejected);
  CHECK(all->proposals[1].summary == full->summary);
  CHECK(all->proposals[1].agent == full->agent);
  CHECK(all->proposals[0].state == State::applied);
  CHECK(f.ws->store.check_summaries(false) == std::vector<std::string>{"0"});
  // doctor's repair makes it again from the records.
  CHECK(f.ws->store.check_summaries(true) == std::vector<std::string>{"0"});
  CHECK(f.ws->store.check_summaries(false).empty());
  all = f.ws->store.catalog(Store::Detail::listed);
  REQUIRE(all);
  CHECK(all->unlisted.empty());
  CHECK(all->proposals[1].state == State::rejected);
}

TEST_CASE("the listing follows an archived record saved again, and never vouches for a forged one", "[archive][attack]") {
  WsFixture f{""};
  REQUIRE(f.write("a.txt", "a\n"));
  decide(*f.ws, 1, State::applied);
  CHECK(archive_now(*f.ws) == 1);
  decide(*f.ws, 1, State::rolled_back);
  auto all = f.ws->store.catalog(Store::Detail::listed);
  REQUIRE(all);
  CHECK(all->unlisted.empty());
  CHECK(all->proposals[0].state == State::rolled_back);
  // A forged record: doctor's rebuild leaves it out of the listing.
  auto meta = read_file(f.ws->store.archive_dir(1) / "meta.json");
  REQUIRE(meta);
  std::string forged = *meta;
  forged.replace(forged.find("\"rolled-back\""), 13, "\"applied\"");
  REQUIRE(write_file_atomic(f.ws->store.archive_dir(1) / "meta.json", forged, 0600));
  REQUIRE(f.ws->store.check_summaries(true) == std::vector<std::string>{"0"});
  all = f.ws->store.catalog(Store::Detail::listed);
  REQUIRE(all);
  CHECK(all->unlisted == std::vector<int>{1});
  CHECK(all->proposals[0].sealed == SealCheck::bad);
}
