// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/store/changelog.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/time.hpp"

namespace fs = std::filesystem;
using kai::Entry;
using kai::test::slurp;
using kai::test::TempDir;

namespace {

void spit(const fs::path& p, const std::string& text) { REQUIRE(kai::write_file_atomic(p, text).ok()); }

// The SPEC §6 example.
Entry spec_entry() {
  Entry e;
  e.time = "2026-07-09T14:25:30Z";
  e.kind = "edit";
  e.rollback_id = "20260709T142530Z";
  e.files = {"/home/me/proj/src/leo.mjs"};
  e.action = "edit_file";
  e.summary = "Guarded the TTS call with a null-voice check.";
  e.why = "Leo crashed on empty text; add a guard.";
  e.backup = "/home/me/proj/src/leo.mjs.bak-kaicoder-20260709T142530Z";
  e.approver = "ryan";
  e.result = "ok";
  e.rollback = "restore leo.mjs.bak-kaicoder-20260709T142530Z \xE2\x86\x92 leo.mjs";
  return e;
}

// Entry number i, one second apart, ids in the rollback-id form.
Entry nth_entry(int i) {
  kai::TimePoint t = kai::TimePoint{} + std::chrono::seconds(1783000000 + i);
  Entry e = spec_entry();
  e.time = kai::iso_utc(t);
  e.rollback_id = kai::compact_utc(t);
  e.summary = "change number " + std::to_string(i);
  return e;
}

// Every field but the parse position, in a form Catch can print.
std::vector<std::string> fields(const Entry& e) {
  std::string files;
  for (const auto& f : e.files) files += f + "|";
  return {e.time, e.kind, e.rollback_id, files, e.action, e.summary, e.why, e.backup, e.approver, e.result, e.rollback};
}

Entry round_trip(const Entry& e) {
  kai::Parsed p = kai::parse_changelog(kai::format_entry(e));
  REQUIRE(p.malformed.empty());
  REQUIRE(p.entries.size() == 1);
  return p.entries.front();
}

size_t count_headings(const std::string& text) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("## ", 0) == 0) ++n;
  return n;
}

std::vector<fs::path> archive_files(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir))
    for (const auto& d : fs::directory_iterator(dir)) out.push_back(d.path());
  return out;
}

}  // namespace

TEST_CASE("format_entry prints the SPEC example byte for byte", "[changelog]") {
  const std::string expected =
      "## 2026-07-09T14:25:30Z  \xC2\xB7  edit  \xC2\xB7  rollback-id: 20260709T142530Z\n"
      "- file(s):   /home/me/proj/src/leo.mjs\n"
      "- action:    edit_file\n"
      "- summary:   Guarded the TTS call with a null-voice check.\n"
      "- why:       Leo crashed on empty text; add a guard.\n"
      "- backup:    /home/me/proj/src/leo.mjs.bak-kaicoder-20260709T142530Z\n"
      "- approver:  ryan\n"
      "- result:    ok\n"
      "- rollback:  restore leo.mjs.bak-kaicoder-20260709T142530Z \xE2\x86\x92 leo.mjs\n"
      "\n";
  CHECK(kai::format_entry(spec_entry()) == expected);
}

TEST_CASE("format_entry joins files, prints none for empty values and flattens lines", "[changelog]") {
  Entry e = spec_entry();
  e.files = {"/a/one.txt", "/a/two.txt"};
  e.backup = "";
  e.rollback = "";
  e.why = "first line\nsecond line\r\n\r\nthird  \n";
  std::string text = kai::format_entry(e);
  CHECK(text.find("- file(s):   /a/one.txt, /a/two.txt\n") != std::string::npos);
  CHECK(text.find("- backup:    \xE2\x80\x94\n") != std::string::npos);
  CHECK(text.find("- rollback:  \xE2\x80\x94\n") != std::string::npos);
  CHECK(text.find("- why:       first line second line third\n") != std::string::npos);

  e.files.clear();
  CHECK(kai::format_entry(e).find("- file(s):   \xE2\x80\x94\n") != std::string::npos);
}

TEST_CASE("every kind of entry survives format and parse", "[changelog]") {
  Entry e = spec_entry();
  e.kind = GENERATE("edit", "write", "delete", "run", "rollback", "rejected", "timeout", "blocked");
  if (e.kind == "run" || e.kind == "blocked") {
    e.files.clear();
    e.action = e.kind == "run" ? "run_shell" : "";
    e.backup = "";
    e.rollback = "";
    e.result = e.kind == "run" ? "failed: exit 1" : "";
  }
  if (e.kind == "rejected" || e.kind == "timeout") {
    e.rollback_id = "";
    e.result = e.kind == "rejected" ? "rejected: not now" : "";
  }
  if (e.kind == "write") e.files = {"/p/a.txt", "/p/dir, with comma/b.txt", "/p/c.txt"};

  // "none" is printed "—" and comes back empty, everything else unchanged.
  CHECK(fields(round_trip(e)) == fields(e));
  CHECK(kai::format_entry(round_trip(e)) == kai::format_entry(e));
}

TEST_CASE("an empty field prints as the mark for none, and only the changelog's text holds it", "[changelog]") {
  Entry e = spec_entry();
  e.rollback_id = "";
  e.backup = "";
  e.files.clear();
  const std::string text = kai::format_entry(e);
  CHECK(text.find("rollback-id: \u2014\n") != std::string::npos);
  CHECK(text.find("- backup:    \u2014\n") != std::string::npos);
  CHECK(text.find("- file(s):   \u2014\n") != std::string::npos);
  CHECK(kai::or_none("") == "\u2014");
  CHECK(kai::or_none("/p/a.txt") == "/p/a.txt");
}

TEST_CASE("multi-line values come back as the single line that was written", "[changelog]") {
  Entry e = spec_entry();
  e.why = "the agent said:\n  crash on empty text\n\nfix it";
  e.summary = "  padded  ";
  Entry back = round_trip(e);
  CHECK(back.why == "the agent said:   crash on empty text fix it");
  CHECK(back.summary == "padded");
  CHECK(kai::format_entry(back) == kai::format_entry(e));
}

TEST_CASE("non-ASCII text and arrows survive a round trip", "[changelog]") {
  Entry e = spec_entry();
  e.files = {"/home/m\xC3\xBCller/\xE6\x97\xA5\xE6\x9C\xAC/caf\xC3\xA9.md"};
  e.summary =
      "Gr\xC3\xBC\xC3\x9F"
      "e \xE2\x86\x92 \xE2\x80\x9Cquotes\xE2\x80\x9D \xC2\xB7 emoji \xF0\x9F\x9A\x80";
  e.approver = "\xC3\xA9lodie";
  e.rollback = "restore caf\xC3\xA9.md.bak-kaicoder-20260709T142530Z \xE2\x86\x92 caf\xC3\xA9.md";
  CHECK(fields(round_trip(e)) == fields(e));
}

TEST_CASE("the parser skips notes and reports malformed entries by line", "[changelog]") {
  std::string good = kai::format_entry(spec_entry());
  std::string text =
      "# KAI Coder changelog\n"                                                               // 1
      "\n"                                                                                    // 2
      "## Notes from the review\n"                                                            // 3
      "- these lines are ours\n"                                                              // 4
      "\n" +                                                                                  // 5
      good +                                                                                  // 6-15
      "A hand-written note.\n"                                                                // 16
      "\n"                                                                                    // 17
      "## 2026-07-09T14:20:00Z  \xC2\xB7  write\n"                                            // 18 no id
      "- file(s):   /a\n"                                                                     // 19
      "\n"                                                                                    // 20
      "## 2026-07-09T14:19:00Z  \xC2\xB7  delete  \xC2\xB7  rollback-id: 20260709T141900Z\n"  // 21
      "- file(s):   /a\n"                                                                     // 22
      "- colour:    red\n"                                                                    // 23 unknown
      "\n"                                                                                    // 24
      "## 2026-07-09T14:18:00Z  \xC2\xB7  delete  \xC2\xB7  rollback-id: 20260709T141800Z\n"  // 25
      "- file(s):   /a\n"                                                                     // 26 too short
      "\n"                                                                                    // 27
      "## 2026-13-09 14:17  \xC2\xB7  run  \xC2\xB7  rollback-id: x\n"                        // 28 bad time
      "\n";                                                                                   // 29
  Entry last = spec_entry();
  last.rollback_id = "20260709T141600Z";
  text += kai::format_entry(last);  // 30

  kai::Parsed p = kai::parse_changelog(text);
  REQUIRE(p.entries.size() == 2);
  CHECK(p.entries[0].line == 6);
  CHECK(p.entries[1].line == 30);
  CHECK(p.entries[1].rollback_id == "20260709T141600Z");
  REQUIRE(p.malformed.size() == 4);
  CHECK(p.malformed[0].line == 18);
  CHECK(p.malformed[1].line == 23);
  CHECK(p.malformed[2].line == 25);
  CHECK(p.malformed[3].line == 28);
  for (const auto& m : p.malformed) CHECK_FALSE(m.reason.empty());
}

TEST_CASE("bullet notes right after a complete entry are not fields", "[changelog]") {
  std::string text = kai::format_entry(spec_entry());
  text.pop_back();  // drop the blank line so the note touches the entry
  text += "- note: checked by bob\n";
  kai::Parsed p = kai::parse_changelog(text);
  CHECK(p.entries.size() == 1);
  CHECK(p.malformed.empty());
}

TEST_CASE("prepend starts a new file with the title block", "[changelog]") {
  TempDir dir;
  kai::Changelog log{dir.path() / "KAI-CODER-CHANGELOG.md", dir.path() / ".kaicoder" / "changelog"};
  REQUIRE(log.prepend(spec_entry()).ok());
  std::string text = slurp(log.path());
  CHECK(text.rfind("# KAI Coder changelog\n\n", 0) == 0);
  CHECK(text.find(".kaicoder/changelog/") != std::string::npos);
  CHECK(text.ends_with("\n\n" + kai::format_entry(spec_entry())));
}

TEST_CASE("prepend puts the entry first and leaves notes where they were", "[changelog]") {
  TempDir dir;
  fs::path live = dir.path() / "log.md";
  kai::Changelog log{live, dir.path() / "archive"};
  std::string head = "# Our changelog\n\nSomething the owner wrote.\n\n";
  std::string note = "Reviewed up to here by bob.\n\n";
  spit(live, head + kai::format_entry(nth_entry(1)) + note + kai::format_entry(nth_entry(0)));

  REQUIRE(log.prepend(nth_entry(2)).ok());
  CHECK(slurp(live) == head + kai::format_entry(nth_entry(2)) + kai::format_entry(nth_entry(1)) + note +
                           kai::format_entry(nth_entry(0)));

  auto all = log.newest(0);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].rollback_id == nth_entry(2).rollback_id);
  CHECK((*all)[2].rollback_id == nth_entry(0).rollback_id);
}

TEST_CASE("prepend refuses an entry that would not parse back", "[changelog]") {
  TempDir dir;
  kai::Changelog log{dir.path() / "log.md", dir.path() / "archive"};
  Entry e = spec_entry();
  e.time = "yesterday";
  auto s = log.prepend(e);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == kai::Errc::usage);
  CHECK_FALSE(fs::exists(log.path()));
}

TEST_CASE("rotation keeps the live file short and loses nothing", "[changelog]") {
  TempDir dir;
  fs::path archive = dir.path() / "archive";
  kai::Changelog log{dir.path() / "log.md", archive, 3};
  for (int i = 0; i < 20; ++i) {
    REQUIRE(log.prepend(nth_entry(i)).ok());
    CHECK(count_headings(slurp(log.path())) <= 6);
  }
  // 7 entries rotate the first 3 out; every 3 more rotate again.
  CHECK(count_headings(slurp(log.path())) == 5);
  CHECK(archive_files(archive).size() == 5);
  CHECK(fs::exists(archive / (nth_entry(0).rollback_id + "--" + nth_entry(2).rollback_id + ".md")));

  auto all = log.newest(0);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 20);
  for (int i = 0; i < 20; ++i) CHECK((*all)[static_cast<size_t>(i)].rollback_id == nth_entry(19 - i).rollback_id);

  auto some = log.newest(8);
  REQUIRE(some.ok());
  REQUIRE(some->size() == 8);
  CHECK(some->back().rollback_id == nth_entry(12).rollback_id);

  // Ids end in the second digit, then 'Z'.
  auto even = log.newest(4, [](const Entry& e) { return (e.rollback_id[e.rollback_id.size() - 2] - '0') % 2 == 0; });
  REQUIRE(even.ok());
  CHECK(even->size() == 4);

  CHECK(*log.live_contains(nth_entry(19).rollback_id));
  CHECK_FALSE(*log.live_contains(nth_entry(0).rollback_id));

  auto parsed = log.parse_archives();
  REQUIRE(parsed.ok());
  REQUIRE(parsed->size() == 5);
  CHECK(parsed->front().parsed.entries.front().rollback_id == nth_entry(14).rollback_id);
}

TEST_CASE("prepend_once adds an entry once, and runs before_write only when it will write", "[changelog]") {
  TempDir dir;
  fs::path live = dir.path() / "log.md";
  kai::Changelog log{live, dir.path() / "archive", 2};
  for (int i = 0; i < 3; ++i) REQUIRE(log.prepend(nth_entry(i)).ok());
  int asked = 0;
  auto ask = [&] {
    ++asked;
    return kai::ok_status();
  };
  // Already logged (a change finished again): nothing written, nothing asked.
  const std::string before = slurp(live);
  auto again = log.prepend_once(nth_entry(2), ask);
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
  CHECK(asked == 0);
  CHECK(slurp(live) == before);
  // Its id inside another entry's text (a backup's name) is not its entry.
  Entry e = nth_entry(3);
  Entry other = nth_entry(4);
  other.backup = "/home/me/proj/a.c.bak-kaicoder-" + e.rollback_id;
  REQUIRE(log.prepend(other).ok());
  auto added = log.prepend_once(e, ask);  // five entries: the oldest two rotate out
  REQUIRE(added.ok());
  CHECK(*added);
  CHECK(asked == 1);
  CHECK(*log.live_contains(e.rollback_id));
  CHECK(count_headings(slurp(live)) == 3);
  auto all = log.newest(0);
  REQUIRE(all.ok());
  CHECK(all->size() == 5);
  // What before_write says wrong is returned, and nothing is written.
  const std::string now = slurp(live);
  auto refused =
      log.prepend_once(nth_entry(5), [] { return kai::Status(kai::make_error(kai::Errc::io, "no room")); });
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "no room");
  CHECK(slurp(live) == now);
}

TEST_CASE("the live file stays within its size in bytes whatever the size of its entries", "[changelog]") {
  TempDir dir;
  fs::path live = dir.path() / "log.md";
  fs::path archive = dir.path() / "archive";
  constexpr size_t k_max = 20000;
  kai::Changelog log{live, archive, 500, k_max};  // 500: only the size moves entries
  // A changeset's entry names each of its files and backups.
  auto big = [](int i, size_t files) {
    Entry e = nth_entry(i);
    e.files.clear();
    for (size_t f = 0; f < files; ++f) e.files.push_back("/home/me/proj/src/module/file" + std::to_string(f) + ".c");
    return e;
  };
  for (int i = 0; i < 60; ++i) {
    REQUIRE(log.prepend(big(i, 40)).ok());
    CHECK(fs::file_size(live) <= k_max);
  }
  CHECK(count_headings(slurp(live)) < 60);
  CHECK_FALSE(archive_files(archive).empty());
  auto all = log.newest(0);
  REQUIRE(all.ok());
  REQUIRE(all->size() == 60);
  for (int i = 0; i < 60; ++i) CHECK((*all)[static_cast<size_t>(i)].rollback_id == nth_entry(59 - i).rollback_id);
  // One entry larger than the bound stays, alone, and the next one moves it.
  REQUIRE(log.prepend(big(60, 600)).ok());
  CHECK(count_headings(slurp(live)) == 1);
  REQUIRE(log.prepend(nth_entry(61)).ok());
  CHECK(count_headings(slurp(live)) == 1);
  CHECK(fs::file_size(live) <= k_max);
  all = log.newest(0);
  REQUIRE(all.ok());
  CHECK(all->size() == 62);
  CHECK(all->front().rollback_id == nth_entry(61).rollback_id);
  CHECK((*all)[1].rollback_id == nth_entry(60).rollback_id);
}

TEST_CASE("newest reads archives only when the live file has too few", "[changelog]") {
  TempDir dir;
  fs::path archive = dir.path() / "archive";
  kai::Changelog log{dir.path() / "log.md", archive, 2};
  for (int i = 0; i < 10; ++i) REQUIRE(log.prepend(nth_entry(i)).ok());
  // An unreadable "archive" that sorts newest: touching it fails.
  fs::create_directories(archive / "x--99991231T235959Z.md");
  auto one = log.newest(1);
  REQUIRE(one.ok());
  CHECK(one->front().rollback_id == nth_entry(9).rollback_id);
  auto all = log.newest(0);
  REQUIRE_FALSE(all.ok());
  CHECK(all.error().code == kai::Errc::denied);  // not a regular file
}

TEST_CASE("the changelog and its archives are never read through a symlink or a hard link", "[changelog]") {
  TempDir dir;
  dir.write("outside/secret.txt", "OUTSIDE-BYTES\n");
  fs::path archive = dir.path() / "archive";
  kai::Changelog log{dir.path() / "log.md", archive, 2};
  fs::create_symlink(dir.path() / "outside/secret.txt", dir.path() / "log.md");
  CHECK(log.check_readable().error().code == kai::Errc::denied);
  auto put = log.prepend(nth_entry(0));
  REQUIRE_FALSE(put.ok());
  CHECK(put.error().code == kai::Errc::denied);
  CHECK(dir.read("outside/secret.txt") == "OUTSIDE-BYTES\n");
  CHECK_FALSE(log.newest(0).ok());
  fs::remove(dir.path() / "log.md");
  fs::create_hard_link(dir.path() / "outside/secret.txt", dir.path() / "log.md");
  CHECK(log.check_readable().error().code == kai::Errc::denied);
  CHECK_FALSE(log.prepend(nth_entry(0)).ok());
  fs::remove(dir.path() / "log.md");
  REQUIRE(log.prepend(nth_entry(0)).ok());
  CHECK(log.check_readable().ok());
  // An archive planted as a link is refused too.
  fs::create_directories(archive);
  fs::create_symlink(dir.path() / "outside/secret.txt", archive / "x--99991231T235959Z.md");
  CHECK_FALSE(log.newest(0).ok());
  CHECK_FALSE(log.parse_archives().ok());
}

TEST_CASE("a changelog whose folder is a symlink is never written through it", "[changelog]") {
  TempDir dir;
  dir.mkdir("outside");
  fs::create_directory_symlink(dir.path() / "outside", dir.path() / "docs");
  kai::Changelog log{dir.path() / "docs" / "log.md", dir.path() / "archive", 2};
  auto put = log.prepend(nth_entry(0));
  REQUIRE_FALSE(put.ok());
  CHECK(put.error().code == kai::Errc::denied);
  CHECK(fs::is_empty(dir.path() / "outside"));
}

TEST_CASE("a rotation cut short after the archive write duplicates, never loses", "[changelog]") {
  // Where the archive lands when the rotation completes.
  TempDir done;
  kai::Changelog full{done.path() / "log.md", done.path() / "archive", 2};
  for (int i = 0; i < 5; ++i) REQUIRE(full.prepend(nth_entry(i)).ok());
  auto written = archive_files(done.path() / "archive");
  REQUIRE(written.size() == 1);

  // The same history where the process died after writing the archive but
  // before replacing the live file: the live file still holds those entries.
  TempDir crashed;
  fs::path archive = crashed.path() / "archive";
  kai::Changelog log{crashed.path() / "log.md", archive, 2};
  for (int i = 0; i < 4; ++i) REQUIRE(log.prepend(nth_entry(i)).ok());
  fs::create_directories(archive);
  spit(archive / written.front().filename(), slurp(written.front()));

  auto seen = log.newest(0);
  REQUIRE(seen.ok());
  CHECK(seen->size() == 4);

  // The retried prepend finds its archive already there and writes no copy.
  REQUIRE(log.prepend(nth_entry(4)).ok());
  CHECK(archive_files(archive).size() == 1);
  auto all = log.newest(0);
  REQUIRE(all.ok());
  std::set<std::string> ids;
  for (const auto& e : *all) ids.insert(e.rollback_id);
  CHECK(all->size() == 5);
  CHECK(ids.size() == 5);
}

TEST_CASE("an archive name already taken by other text is never overwritten", "[changelog]") {
  TempDir dir;
  fs::path archive = dir.path() / "archive";
  kai::Changelog log{dir.path() / "log.md", archive, 1};
  for (int i = 0; i < 2; ++i) REQUIRE(log.prepend(nth_entry(i)).ok());
  fs::create_directories(archive);
  fs::path taken = archive / (nth_entry(0).rollback_id + "--" + nth_entry(0).rollback_id + ".md");
  spit(taken, "somebody else's text\n");
  REQUIRE(log.prepend(nth_entry(2)).ok());
  CHECK(slurp(taken) == "somebody else's text\n");
  CHECK(archive_files(archive).size() == 2);
  auto all = log.newest(0);
  REQUIRE(all.ok());
  CHECK(all->size() == 3);
}

TEST_CASE("the live file stays bounded by keep whatever the history", "[changelog]") {
  TempDir dir;
  fs::path archive = dir.path() / "archive";
  kai::Changelog log{dir.path() / "log.md", archive, 5};
  size_t entry_size = kai::format_entry(nth_entry(0)).size();
  size_t largest = 0;
  for (int i = 0; i < 200; ++i) {
    REQUIRE(log.prepend(nth_entry(i)).ok());
    std::string text = slurp(log.path());
    size_t n = count_headings(text);
    REQUIRE(n <= 10);
    largest = std::max(largest, text.size());
  }
  CHECK(largest <= 10 * (entry_size + 8) + 200);
  // Entry 11 first rotates 5 out (6 left); each 5 more rotate again: 38
  // rotations, each one an archive file.
  CHECK(count_headings(slurp(log.path())) == 10);
  CHECK(archive_files(archive).size() == 38);
  auto all = log.newest(0);
  REQUIRE(all.ok());
  CHECK(all->size() == 200);
}

TEST_CASE("a missing changelog reads as empty", "[changelog]") {
  TempDir dir;
  kai::Changelog log{dir.path() / "log.md", dir.path() / "archive"};
  auto all = log.newest(5);
  REQUIRE(all.ok());
  CHECK(all->empty());
  CHECK_FALSE(*log.live_contains("20260709T142530Z"));
  auto parsed = log.parse_live();
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().code == kai::Errc::not_found);
}
