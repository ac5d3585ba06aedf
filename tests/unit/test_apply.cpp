// The transaction at the heart of kaicoder: apply, rollback, recovery.

#include "unit/temp_dir.hpp"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "lib/gate/apply.hpp"
#include "lib/gate/decide.hpp"
#include "lib/util/git.hpp"
#include "lib/store/mac.hpp"
#include "lib/gate/propose.hpp"
#include "lib/store/journal.hpp"
#include "lib/util/fs.hpp"
#include "unit/still_clock.hpp"
#include "unit/trusted_root.hpp"

namespace {
using kai::test::StillClock;
using kai::test::TempDir;

struct ApplyFixture {
  TempDir dir;
  StillClock clock;
  std::optional<kai::Workspace> ws;

  ApplyFixture() {
    kai::Env env;
    env.cwd = dir.path();
    env.root_override = dir.path();
    env.user_config_dir = dir.path() / ".no-user-config";
    kai::test::trust_for_test(dir.path(), env.user_config_dir);
    env.user = "tester";
    REQUIRE(kai::create_key(env.user_config_dir));  // the owner's key, as init makes it
    auto w = kai::Workspace::open(env, clock);
    REQUIRE(w);
    ws.emplace(std::move(*w));
  }

  // Stage and approve (as a person would), returning the proposal id.
  int stage(const kai::ProposeRequest& r) {
    auto st = kai::propose(*ws, r, dir.path(), kai::DryRun::no, {});
    REQUIRE(st);
    return st->proposal.id;
  }
  kai::Result<kai::Approved> approve(int id) {
    auto p = ws->store.load(id);
    REQUIRE(p);
    return kai::approve(*ws, id, kai::digest(*p), "tester", kai::ApplyNow::yes);
  }
};

// Sorted names in one folder under the fixture; none when it does not exist.
std::vector<std::string> names_in(const TempDir& dir, const std::string& rel) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / rel, ec))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// An intent as kaicoder writes it: sealed with the owner's key.
void plant_intent(ApplyFixture& f, nlohmann::json intent) {
  const std::string id = intent.at("id");
  auto mac = f.ws->sealer.seal("intent", id, intent.dump());
  REQUIRE(mac);
  intent["seal"] = *mac;
  f.dir.write(".kaicoder/intents/" + id + ".json", intent.dump());
}

nlohmann::json intent_for(const std::string& path, const std::string& before, const std::string& after) {
  const std::string id = "20260709T141530Z";
  return {{"id", id},
          {"kind", "edit"},
          {"time", "2026-07-09T14:15:30Z"},
          {"proposal", 0},
          {"files",
           {{{"path", path},
             {"before", {{"exists", true}, {"blob", kai::blob_id(before)}, {"mode", 420}}},
             {"after", {{"exists", true}, {"blob", kai::blob_id(after)}, {"mode", 420}}},
             {"backup", path + ".bak-kaicoder-" + id},
             {"backup_blob", kai::blob_id(before)}}}},
          {"entry", {{"kind", "edit"}, {"rollback_id", id}}}};
}

kai::ProposeRequest edit(std::string path, std::string target, std::string replacement) {
  kai::ProposeRequest r;
  r.path = std::move(path);
  r.target = std::move(target);
  r.replacement = std::move(replacement);
  r.why = "test";
  return r;
}

}  // namespace

TEST_CASE("apply_edit replaces a target that occurs exactly once", "[apply]") {
  auto r = kai::apply_edit("a\nb\nc\n", "b\n", "B\n", "f");
  REQUIRE(r);
  CHECK(*r == "a\nB\nc\n");
}

TEST_CASE("apply_edit refuses a missing, repeated or empty target", "[apply]") {
  auto none = kai::apply_edit("abc", "x", "y", "f");
  REQUIRE_FALSE(none);
  CHECK(none.error().code == kai::Errc::conflict);
  CHECK(none.error().message.find("not found") != std::string::npos);

  auto twice = kai::apply_edit("x\ny\nx\n", "x", "z", "f");
  REQUIRE_FALSE(twice);
  CHECK(twice.error().code == kai::Errc::conflict);
  CHECK(twice.error().message.find("found 2 times") != std::string::npos);
  CHECK(twice.error().message.find("lines 1, 3") != std::string::npos);

  // Overlapping occurrences are ambiguous too.
  CHECK_FALSE(kai::apply_edit("aaa", "aa", "b", "f"));
  auto empty = kai::apply_edit("abc", "", "b", "f");
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == kai::Errc::usage);
}

TEST_CASE("a rollback id has one shape: a UTC second, maybe -N after it", "[apply][rollback]") {
  for (const char* good : {"20260709T142530Z", "20260709T142530Z-2", "20260709T142530Z-10"}) {
    INFO(good);
    CHECK(kai::rollback_id_shape(good));
  }
  for (const char* bad : {"", "last", "20260709T142530", "20260709 142530Z", "20260709T142530Z-",
                          "20260709T142530Z-02", "20260709T142530Z-x", "20260709T142530Zx", "2026070xT142530Z", "12"}) {
    INFO(bad);
    CHECK_FALSE(kai::rollback_id_shape(bad));
  }
  CHECK(kai::rollback_id_newer("20260709T142530Z-10", "20260709T142530Z-9"));
  CHECK(kai::rollback_id_newer("20260709T142530Z-2", "20260709T142530Z"));
  CHECK_FALSE(kai::rollback_id_newer("20260709T142530Z", "20260709T142531Z"));
}

TEST_CASE("an approved edit is backed up, applied, journalled and logged", "[apply]") {
  ApplyFixture f;
  f.dir.write("src/a.txt", "one\r\ntwo\r\nthree");  // CRLF, no final newline
  ::chmod((f.dir / "src/a.txt").c_str(), 0750);
  int id = f.stage(edit("src/a.txt", "two", "TWO"));
  auto r = f.approve(id);
  REQUIRE(r);
  REQUIRE(r->applied);
  const auto& o = *r->applied;
  CHECK(o.rollback_id == "20260709T141530Z");
  CHECK(f.dir.read("src/a.txt") == "one\r\nTWO\r\nthree");
  CHECK(f.dir.read("src/a.txt.bak-kaicoder-20260709T141530Z") == "one\r\ntwo\r\nthree");
  struct stat st {};
  REQUIRE(::stat((f.dir / "src/a.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  auto rec = f.ws->journal.load(o.rollback_id);
  REQUIRE(rec);
  CHECK(rec->files.at(0).backup_blob == kai::blob_id("one\r\ntwo\r\nthree"));
  auto entries = f.ws->changelog.newest(0);
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  CHECK(entries->at(0).kind == "edit");
  CHECK(entries->at(0).approver == "tester");
  auto p = f.ws->store.load(id);
  REQUIRE(p);
  CHECK(p->state == kai::State::applied);
  CHECK_FALSE(f.dir.exists(".kaicoder/intents/20260709T141530Z.json"));
}

TEST_CASE("two actions in one second get rollback ids with suffixes", "[apply]") {
  ApplyFixture f;
  f.dir.write("a.txt", "a\n");
  f.dir.write("b.txt", "b\n");
  auto r1 = f.approve(f.stage(edit("a.txt", "a", "A")));
  auto r2 = f.approve(f.stage(edit("b.txt", "b", "B")));
  REQUIRE(r1);
  REQUIRE(r2);
  CHECK(r1->applied->rollback_id == "20260709T141530Z");
  CHECK(r2->applied->rollback_id == "20260709T141530Z-2");
}

TEST_CASE("a write whose file changed since the proposal is refused as stale", "[apply]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  kai::ProposeRequest w;
  w.path = "a.txt";
  w.content = "new\n";
  w.why = "t";
  int id = f.stage(w);
  f.dir.write("a.txt", "edited by hand\n");
  auto r = f.approve(id);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == kai::Errc::conflict);
  CHECK(f.dir.read("a.txt") == "edited by hand\n");
  CHECK(f.ws->store.load(id)->state == kai::State::failed);
}

TEST_CASE("apply refuses a proposal whose payload changed after approval", "[apply]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  int id = f.stage(edit("a.txt", "old", "new"));
  auto p = f.ws->store.load(id);
  REQUIRE(kai::approve(*f.ws, id, kai::digest(*p), "tester", kai::ApplyNow::no));
  f.dir.write(".kaicoder/staging/" + std::to_string(id) + "/replacement", "evil");
  auto r = kai::apply_approved(*f.ws, id, "tester");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == kai::Errc::conflict);
  CHECK(f.dir.read("a.txt") == "old\n");
}

TEST_CASE("rollback restores the backup and can itself be rolled back", "[apply][rollback]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  auto r = f.approve(f.stage(edit("a.txt", "old", "new")));
  REQUIRE(r);
  auto back = kai::rollback(*f.ws, "last", "tester", kai::Force::no);
  REQUIRE(back);
  CHECK(f.dir.read("a.txt") == "old\n");
  CHECK(f.dir.read("a.txt.bak-kaicoder-" + back->rollback_id) == "new\n");
  CHECK(f.ws->store.load(1)->state == kai::State::rolled_back);
  auto again = kai::rollback(*f.ws, back->rollback_id, "tester", kai::Force::no);
  REQUIRE(again);
  CHECK(f.dir.read("a.txt") == "new\n");
}

TEST_CASE("rollback refuses a file changed since the entry unless forced", "[apply][rollback]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  auto r = f.approve(f.stage(edit("a.txt", "old", "new")));
  REQUIRE(r);
  f.dir.write("a.txt", "hand edit\n");
  auto refused = kai::rollback(*f.ws, r->applied->rollback_id, "tester", kai::Force::no);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == kai::Errc::conflict);
  CHECK(refused.error().message.find("changed by hand") != std::string::npos);
  CHECK(f.dir.read("a.txt") == "hand edit\n");
  auto forced = kai::rollback(*f.ws, r->applied->rollback_id, "tester", kai::Force::yes);
  REQUIRE(forced);
  CHECK(f.dir.read("a.txt") == "old\n");
  CHECK(f.dir.read("a.txt.bak-kaicoder-" + forced->rollback_id) == "hand edit\n");
}

TEST_CASE("rollback names the later entry that changed the file", "[apply][rollback]") {
  ApplyFixture f;
  f.dir.write("a.txt", "one\ntwo\n");
  auto first = f.approve(f.stage(edit("a.txt", "one", "ONE")));
  REQUIRE(first);
  auto second = f.approve(f.stage(edit("a.txt", "two", "TWO")));
  REQUIRE(second);
  auto r = kai::rollback(*f.ws, first->applied->rollback_id, "tester", kai::Force::no);
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find(second->applied->rollback_id) != std::string::npos);
}

TEST_CASE("rollback refuses a backup that was changed", "[apply][rollback]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  auto r = f.approve(f.stage(edit("a.txt", "old", "new")));
  REQUIRE(r);
  f.dir.write("a.txt.bak-kaicoder-" + r->applied->rollback_id, "tampered\n");
  auto back = kai::rollback(*f.ws, "last", "tester", kai::Force::yes);
  REQUIRE_FALSE(back);
  CHECK(back.error().code == kai::Errc::conflict);
  CHECK(f.dir.read("a.txt") == "new\n");
}

TEST_CASE("rolling back a created file deletes it and a deleted file comes back with its mode", "[apply][rollback]") {
  ApplyFixture f;
  kai::ProposeRequest w;
  w.path = "dir/new.txt";
  w.content = "fresh\n";
  w.why = "t";
  REQUIRE(f.approve(f.stage(w)));
  CHECK(f.dir.read("dir/new.txt") == "fresh\n");
  REQUIRE(kai::rollback(*f.ws, "last", "tester", kai::Force::no));
  CHECK_FALSE(f.dir.exists("dir/new.txt"));

  f.dir.write("run.sh", "#!/bin/sh\n");
  ::chmod((f.dir / "run.sh").c_str(), 0755);
  kai::ProposeRequest d;
  d.path = "run.sh";
  d.del = true;
  d.why = "t";
  REQUIRE(f.approve(f.stage(d)));
  CHECK_FALSE(f.dir.exists("run.sh"));
  REQUIRE(kai::rollback(*f.ws, "last", "tester", kai::Force::no));
  CHECK(f.dir.read("run.sh") == "#!/bin/sh\n");
  struct stat st {};
  REQUIRE(::stat((f.dir / "run.sh").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
}

TEST_CASE("recovery finishes an intent whose file already holds the new bytes", "[apply][recover]") {
  ApplyFixture f;
  f.dir.write("a.txt", "new\n");
  f.dir.write("a.txt.bak-kaicoder-20260709T141530Z", "old\n");
  nlohmann::json intent = {{"id", "20260709T141530Z"},
                           {"kind", "edit"},
                           {"time", "2026-07-09T14:15:30Z"},
                           {"proposal", 0},
                           {"files",
                            {{{"path", "a.txt"},
                              {"before", {{"exists", true}, {"blob", kai::blob_id("old\n")}, {"mode", 420}}},
                              {"after", {{"exists", true}, {"blob", kai::blob_id("new\n")}, {"mode", 420}}},
                              {"backup", "a.txt.bak-kaicoder-20260709T141530Z"},
                              {"backup_blob", kai::blob_id("old\n")}}}},
                           {"entry",
                            {{"time", "2026-07-09T14:15:30Z"},
                             {"kind", "edit"},
                             {"rollback_id", "20260709T141530Z"},
                             {"files", {"/x/a.txt"}},
                             {"action", "edit_file"},
                             {"result", "ok"}}}};
  plant_intent(f, intent);
  auto n = kai::recover(*f.ws);
  REQUIRE(n);
  CHECK(*n == 1);
  CHECK(f.ws->journal.has("20260709T141530Z"));
  CHECK(*f.ws->changelog.live_contains("20260709T141530Z"));
  CHECK_FALSE(f.dir.exists(".kaicoder/intents/20260709T141530Z.json"));
  CHECK(f.dir.read("a.txt") == "new\n");
}

TEST_CASE("recovery undoes an intent whose file still holds the old bytes", "[apply][recover]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  f.dir.write("a.txt.bak-kaicoder-20260709T141530Z", "old\n");
  nlohmann::json intent = {{"id", "20260709T141530Z"},
                           {"kind", "edit"},
                           {"time", "2026-07-09T14:15:30Z"},
                           {"proposal", 0},
                           {"files",
                            {{{"path", "a.txt"},
                              {"before", {{"exists", true}, {"blob", kai::blob_id("old\n")}, {"mode", 420}}},
                              {"after", {{"exists", true}, {"blob", kai::blob_id("new\n")}, {"mode", 420}}},
                              {"backup", "a.txt.bak-kaicoder-20260709T141530Z"},
                              {"backup_blob", kai::blob_id("old\n")}}}},
                           {"entry", {{"kind", "edit"}, {"rollback_id", "20260709T141530Z"}}}};
  plant_intent(f, intent);
  REQUIRE(kai::recover(*f.ws));
  CHECK(f.dir.read("a.txt") == "old\n");
  CHECK_FALSE(f.dir.exists("a.txt.bak-kaicoder-20260709T141530Z"));
  CHECK_FALSE(f.ws->journal.has("20260709T141530Z"));
  CHECK_FALSE(*f.ws->changelog.live_contains("20260709T141530Z"));
}

TEST_CASE("a pending proposal past the timeout expires once and cannot be approved", "[decide]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  int id = f.stage(edit("a.txt", "old", "new"));
  f.clock.t += std::chrono::seconds(301);
  auto swept = kai::sweep(*f.ws);
  REQUIRE(swept);
  CHECK(swept->size() == 1);
  auto again = kai::sweep(*f.ws);
  REQUIRE(again);
  CHECK(again->empty());
  auto r = f.approve(id);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == kai::Errc::timeout);
  auto entries = f.ws->changelog.newest(0);
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  CHECK(entries->at(0).kind == "timeout");
  CHECK(f.dir.read("a.txt") == "old\n");
}

TEST_CASE("a proposal made while the clock ran ahead counts its approval time from when it is seen", "[decide]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  f.clock.t += std::chrono::hours(24 * 10);  // the clock runs ten days ahead
  int id = f.stage(edit("a.txt", "old", "new"));
  f.clock.t -= std::chrono::hours(24 * 10);  // and is put right
  auto swept = kai::sweep(*f.ws);
  REQUIRE(swept);
  CHECK(swept->empty());
  REQUIRE(f.ws->notices.size() == 1);
  CHECK(f.ws->notices[0].find("created in the future") != std::string::npos);
  auto p = f.ws->store.load(id);
  REQUIRE(p);
  CHECK(p->created == kai::iso_utc(f.clock.t));
  // The usual timeout from now, not ten days and more.
  f.clock.t += std::chrono::seconds(301);
  auto later = kai::sweep(*f.ws);
  REQUIRE(later);
  CHECK(later->size() == 1);
}

TEST_CASE("a rejected proposal writes nothing and logs a rejected entry", "[decide]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  int id = f.stage(edit("a.txt", "old", "new"));
  auto r = kai::reject(*f.ws, id, "tester", "not like this");
  REQUIRE(r);
  CHECK(r->state == kai::State::rejected);
  CHECK(f.dir.read("a.txt") == "old\n");
  auto entries = f.ws->changelog.newest(0);
  REQUIRE(entries->size() == 1);
  CHECK(entries->at(0).kind == "rejected");
  CHECK(entries->at(0).result == "rejected: not like this");
  CHECK(r->outcome_code == 4);  // what a --wait-ing proposer exits with
}

TEST_CASE("only listed approvers may decide", "[decide]") {
  ApplyFixture f;
  f.ws->cfg.approvers = {"alice"};
  CHECK(kai::may_decide(*f.ws, "alice"));
  auto no = kai::may_decide(*f.ws, "mallory");
  REQUIRE_FALSE(no);
  CHECK(no.error().code == kai::Errc::denied);
}

TEST_CASE("a path made dangerous after propose is refused at apply, and nothing outside changes", "[apply][paths]") {
  // Each case stages a valid edit of d/a.txt, then changes the tree under it.
  struct Case {
    const char* name;
    void (*spoil)(TempDir& root, TempDir& outside);
  };
  const Case cases[] = {
      {"folder swapped for a symlink out of root",
       [](TempDir& r, TempDir& o) {
         std::filesystem::remove_all(r / "d");
         r.symlink("d", o.path().string());
       }},
      {"folder swapped for a symlink to .git",
       [](TempDir& r, TempDir&) {
         r.write(".git/a.txt", "old\n");
         std::filesystem::remove_all(r / "d");
         r.symlink("d", ".git");
       }},
      {"file swapped for a symlink out of root",
       [](TempDir& r, TempDir& o) {
         std::filesystem::remove(r / "d/a.txt");
         r.symlink("d/a.txt", (o / "a.txt").string());
       }},
      {"file swapped for a dangling symlink",
       [](TempDir& r, TempDir&) {
         std::filesystem::remove(r / "d/a.txt");
         r.symlink("d/a.txt", "/nonexistent/a.txt");
       }},
      {"file hard-linked to a file outside root",
       [](TempDir& r, TempDir& o) {
         std::filesystem::remove(r / "d/a.txt");
         std::filesystem::create_hard_link(o / "a.txt", r / "d/a.txt");
       }},
      {"file replaced by a folder",
       [](TempDir& r, TempDir&) {
         std::filesystem::remove(r / "d/a.txt");
         r.mkdir("d/a.txt");
       }},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    ApplyFixture f;
    TempDir outside;
    outside.write("a.txt", "old\n");
    f.dir.write("d/a.txt", "old\n");
    int id = f.stage(edit("d/a.txt", "old", "new"));
    c.spoil(f.dir, outside);
    auto r = f.approve(id);
    REQUIRE_FALSE(r);
    CHECK((r.error().code == kai::Errc::denied || r.error().code == kai::Errc::conflict));
    CHECK(outside.read("a.txt") == "old\n");
    if (f.dir.exists(".git/a.txt")) CHECK(f.dir.read(".git/a.txt") == "old\n");
    CHECK(f.ws->store.load(id)->state == kai::State::failed);
  }
}

TEST_CASE("propose refuses a file with more than one hard link", "[apply][paths]") {
  ApplyFixture f;
  TempDir outside;
  outside.write("a.txt", "old\n");
  std::filesystem::create_hard_link(outside / "a.txt", f.dir / "a.txt");
  auto st = kai::propose(*f.ws, edit("a.txt", "old", "new"), f.dir.path(), kai::DryRun::no, {});
  REQUIRE_FALSE(st);
  CHECK(st.error().code == kai::Errc::denied);
  CHECK(st.error().message.find("hard links") != std::string::npos);
  CHECK(outside.read("a.txt") == "old\n");
}

TEST_CASE("a journal record loaded again is believed only while its bytes are the ones that verified",
          "[apply][journal][attack]") {
  ApplyFixture f;
  f.dir.write("a.txt", "one\n");
  auto r = f.approve(f.stage(edit("a.txt", "one", "two")));
  REQUIRE(r);
  REQUIRE(r->applied);
  const std::string id = r->applied->rollback_id;
  const std::string rel = ".kaicoder/journal/" + id + ".json";
  auto first = f.ws->journal.load(id);
  REQUIRE(first);
  auto again = f.ws->journal.load(id);  // the same bytes: the record kept from the first load
  REQUIRE(again);
  CHECK(again->files.at(0).backup_blob == first->files.at(0).backup_blob);
  // The agent edits the record after it was loaded: the next load reads
  // the file again and its seal does not verify.
  std::string text = f.dir.read(rel);
  const size_t at = text.find(first->files.at(0).backup_blob);
  REQUIRE(at != std::string::npos);
  text.replace(at, 40, kai::blob_id("forged\n"));
  f.dir.write(rel, text);
  auto forged = f.ws->journal.load(id);
  REQUIRE_FALSE(forged);
  CHECK(forged.error().code == kai::Errc::conflict);
  // Put back, it verifies again.
  text.replace(at, 40, first->files.at(0).backup_blob);
  f.dir.write(rel, text);
  CHECK(f.ws->journal.load(id));
}

TEST_CASE("the search for a free rollback id is bounded and stops at an error", "[apply][journal]") {
  TempDir t;
  kai::Journal j(t.path() / "journal");
  const kai::TimePoint at = std::chrono::system_clock::from_time_t(1783606530);
  int asked = 0;
  auto all_taken = j.fresh_id(at, [&](const std::string&) -> kai::Result<bool> {
    ++asked;
    return true;
  });
  REQUIRE_FALSE(all_taken);
  CHECK(all_taken.error().code == kai::Errc::conflict);
  CHECK(asked == 999);
  // An error is not "taken" (a backup name too long once looped for ever).
  asked = 0;
  auto broken = j.fresh_id(at, [&](const std::string&) -> kai::Result<bool> {
    ++asked;
    return kai::make_error(kai::Errc::io, "File name too long");
  });
  REQUIRE_FALSE(broken);
  CHECK(broken.error().message == "File name too long");
  CHECK(asked == 1);
  auto third = j.fresh_id(at, [](const std::string& id) -> kai::Result<bool> {
    return id.find('-') == std::string::npos || id.ends_with("-2");
  });
  REQUIRE(third);
  CHECK(*third == "20260709T141530Z-3");
}

namespace {
kai::Record record_of(const std::string& id, std::vector<std::string> paths) {
  kai::Record r;
  r.id = id;
  r.kind = "changeset";
  r.time = "2026-07-09T14:15:30Z";
  for (auto& p : paths) r.files.push_back({std::move(p), {true, kai::blob_id("a\n"), 0644}, {true, kai::blob_id("b\n"), 0644}, "", ""});
  return r;
}
ino_t inode_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_ino;
}
}  // namespace

TEST_CASE("the journal's pointers move in place, and a torn or forged one is read from the records",
          "[apply][journal]") {
  ApplyFixture f;
  kai::Journal& j = f.ws->journal;
  const std::string pa = ".kaicoder/journal/paths/" + kai::blob_id("a.txt");
  const std::string pb = ".kaicoder/journal/paths/" + kai::blob_id("src/b.txt");
  REQUIRE(j.write(record_of("20260709T141530Z-10", {"a.txt", "src/b.txt"})));
  CHECK(j.latest_for("a.txt") == "20260709T141530Z-10");
  const ino_t a_was = inode_of(f.dir / pa), last_was = inode_of(f.dir / ".kaicoder/journal/LAST");
  REQUIRE(j.write(record_of("20260709T141531Z", {"a.txt"})));
  SECTION("a pointer that is there is rewritten where it is: no new file, and nothing of the longer old id left") {
    CHECK(inode_of(f.dir / pa) == a_was);
    CHECK(inode_of(f.dir / ".kaicoder/journal/LAST") == last_was);
    const std::string text = f.dir.read(pa);
    CHECK(text.starts_with("20260709T141531Z\n"));
    CHECK(std::count(text.begin(), text.end(), '\n') == 2);
    CHECK(j.latest_for("a.txt") == "20260709T141531Z");
    CHECK(j.latest_for("src/b.txt") == "20260709T141530Z-10");
    CHECK(*j.last() == "20260709T141531Z");
    CHECK(j.latest_for("never.txt").empty());
  }
  SECTION("a torn pointer (a power cut mid-write) is read from the sealed records") {
    const std::string whole = f.dir.read(pa);
    for (size_t n : {size_t{0}, size_t{5}, whole.size() - 3}) {
      f.dir.write(pa, whole.substr(0, n));
      CHECK(j.latest_for("a.txt") == "20260709T141531Z");
    }
    // An old pointer's tail behind a whole new one counts for nothing.
    f.dir.write(pa, whole + "20260709T141530Z-10\n");
    CHECK(j.latest_for("a.txt") == "20260709T141531Z");
  }
  SECTION("a forged pointer, or one sealed for another path, is not believed") {
    f.dir.write(pa, "20260709T141530Z-10\n" + std::string(64, '0') + "\n");
    CHECK(j.latest_for("a.txt") == "20260709T141531Z");
    f.dir.write(pa, f.dir.read(pb));  // b's pointer, sealed for b
    CHECK(j.latest_for("a.txt") == "20260709T141531Z");
    // And a forged pointer is mended by the next change of its path.
    REQUIRE(j.write(record_of("20260709T141532Z", {"a.txt"})));
    CHECK(j.latest_for("a.txt") == "20260709T141532Z");
  }
  SECTION("a symlink, a hard link or a folder at a pointer's name is replaced, never written through") {
    f.dir.write("outside.txt", "keep\n");
    std::filesystem::remove(f.dir / pa);
    f.dir.symlink(pa, (f.dir / "outside.txt").string());
    std::filesystem::remove(f.dir / pb);
    f.dir.hardlink(pb, "outside.txt");
    std::filesystem::remove(f.dir / ".kaicoder/journal/LAST");
    f.dir.mkdir(".kaicoder/journal/LAST");
    auto wrote = j.write(record_of("20260709T141532Z", {"a.txt", "src/b.txt"}));
    CHECK(f.dir.read("outside.txt") == "keep\n");
    if (wrote) {  // a folder is not renamed over: the write fails, and says so
      CHECK(std::filesystem::is_regular_file(std::filesystem::symlink_status(f.dir / pa)));
      CHECK(j.latest_for("a.txt") == "20260709T141532Z");
      CHECK(j.latest_for("src/b.txt") == "20260709T141532Z");
    }
    std::filesystem::remove(f.dir / ".kaicoder/journal/LAST");
    REQUIRE(j.write(record_of("20260709T141533Z", {"a.txt", "src/b.txt"})));
    CHECK(f.dir.read("outside.txt") == "keep\n");
    CHECK(std::filesystem::is_regular_file(std::filesystem::symlink_status(f.dir / pa)));
    CHECK(j.latest_for("a.txt") == "20260709T141533Z");
    CHECK(j.latest_for("src/b.txt") == "20260709T141533Z");
    CHECK(*j.last() == "20260709T141533Z");
  }
  SECTION("a removed pointer reads as untouched, as before") {
    std::filesystem::remove(f.dir / pa);
    CHECK(j.latest_for("a.txt").empty());
  }
}

TEST_CASE("a diff cut for display takes CONFIRM, a whole one y", "[apply][gate]") {
  kai::Proposal p;
  p.kind = kai::Kind::write;
  using kai::ApplyNow;
  using kai::Force;
  CHECK(kai::required_tier(p, false, ApplyNow::yes, Force::no).tier == kai::Tier::normal);
  auto cut = kai::required_tier(p, true, ApplyNow::yes, Force::no);
  CHECK(cut.tier == kai::Tier::confirm);
  CHECK(cut.reason == "the diff was cut for display");
  CHECK(kai::required_tier(p, true, ApplyNow::no, Force::no).tier == kai::Tier::confirm);
  p.validation.status = "failed";
  CHECK(kai::required_tier(p, false, ApplyNow::yes, Force::yes).tier == kai::Tier::confirm);
  CHECK(kai::required_tier(p, false, ApplyNow::no, Force::yes).tier == kai::Tier::normal);
  p.validation.status = "ok";
  p.tier = kai::Tier::confirm;
  p.tier_reason = "protected";
  CHECK(kai::required_tier(p, false, ApplyNow::yes, Force::no).reason == "protected");
  kai::Proposal run;
  run.kind = kai::Kind::run;
  CHECK(kai::required_tier(run, true, ApplyNow::yes, Force::no).tier == kai::Tier::normal);
}

TEST_CASE("recovery never obeys an intent without a valid seal and moves it aside", "[apply][recover][mac]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  f.dir.write("a.txt.bak-kaicoder-20260709T141530Z", "old\n");
  nlohmann::json intent = intent_for("a.txt", "old\n", "new\n");
  SECTION("no seal") { f.dir.write(".kaicoder/intents/20260709T141530Z.json", intent.dump()); }
  SECTION("a seal of other bytes") {
    plant_intent(f, intent);
    auto text = f.dir.read(".kaicoder/intents/20260709T141530Z.json");
    auto j = nlohmann::json::parse(text);
    j["files"][0]["path"] = "b.txt";
    f.dir.write(".kaicoder/intents/20260709T141530Z.json", j.dump());
  }
  SECTION("a valid intent under another name") {
    plant_intent(f, intent);
    std::filesystem::rename(f.dir.path() / ".kaicoder/intents/20260709T141530Z.json",
                            f.dir.path() / ".kaicoder/intents/20260709T141531Z.json");
  }
  auto n = kai::recover(*f.ws);
  REQUIRE(n);
  CHECK(f.dir.read("a.txt") == "old\n");
  CHECK(f.dir.exists("a.txt.bak-kaicoder-20260709T141530Z"));  // not touched: not provably its own
  CHECK(names_in(f.dir, ".kaicoder/intents").empty());
  auto aside = names_in(f.dir, ".kaicoder/quarantine");
  REQUIRE(aside.size() == 2);  // the intent and the note of why
  CHECK(f.dir.read(".kaicoder/quarantine/" + aside[1]).find("not written by kaicoder") != std::string::npos);
}

TEST_CASE("recovery checks the guardrails again even for a sealed intent", "[apply][recover][mac]") {
  ApplyFixture f;
  f.dir.write(".git/config", "[core]\n");
  plant_intent(f, intent_for(".git/config", "x\n", "[core]\n"));
  REQUIRE(kai::recover(*f.ws));
  CHECK(f.dir.read(".git/config") == "[core]\n");
  CHECK(names_in(f.dir, ".kaicoder/quarantine").size() == 2);
}

TEST_CASE("recovery removes a backup the crash cut short, and only that", "[apply][recover]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old bytes\n");
  const std::string backup = "a.txt.bak-kaicoder-20260709T141530Z";
  std::string left = GENERATE(as<std::string>{}, "", "old b");
  f.dir.write(backup, left);
  plant_intent(f, intent_for("a.txt", "old bytes\n", "new\n"));
  auto info = kai::inspect_intents(*f.ws);
  REQUIRE(info.size() == 1);
  CHECK(info[0].refused.empty());
  CHECK(info[0].cut_backups == std::vector<std::string>{backup});
  REQUIRE(kai::recover(*f.ws));
  CHECK_FALSE(f.dir.exists(backup));
  CHECK(f.dir.read("a.txt") == "old bytes\n");
}

TEST_CASE("recovery keeps a file in a backup's place that is not a cut-short copy", "[apply][recover]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old bytes\n");
  const std::string backup = "a.txt.bak-kaicoder-20260709T141530Z";
  f.dir.write(backup, "somebody's own\n");
  plant_intent(f, intent_for("a.txt", "old bytes\n", "new\n"));
  REQUIRE(kai::recover(*f.ws));
  CHECK(f.dir.read(backup) == "somebody's own\n");
}

TEST_CASE("a proposal record changed outside kaicoder is not applied", "[apply][mac]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  int id = f.stage(edit("a.txt", "old", "new"));
  auto p = f.ws->store.load(id);
  REQUIRE(p);
  CHECK(p->sealed == kai::SealCheck::ok);
  auto meta = nlohmann::json::parse(f.dir.read(".kaicoder/staging/1/meta.json"));
  meta["status"] = "approved";
  meta["decided_by"] = "alice";
  meta["approved_digest"] = kai::digest(*p);
  f.dir.write(".kaicoder/staging/1/meta.json", meta.dump());
  auto r = kai::apply_approved(*f.ws, id, "tester");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == kai::Errc::conflict);
  CHECK(r.error().message.find("not written by kaicoder") != std::string::npos);
  CHECK(f.dir.read("a.txt") == "old\n");
}

TEST_CASE("an applied proposal's old approved record put back is not applied again", "[apply][mac]") {
  ApplyFixture f;
  f.dir.write("a.txt", "old\n");
  int id = f.stage(edit("a.txt", "old", "new"));
  auto p = f.ws->store.load(id);
  REQUIRE(p);
  REQUIRE(kai::approve(*f.ws, id, kai::digest(*p), "tester", kai::ApplyNow::no));
  const std::string approved = f.dir.read(".kaicoder/staging/1/meta.json");
  REQUIRE(kai::apply_approved(*f.ws, id, "tester"));
  REQUIRE(kai::rollback(*f.ws, "last", "tester", kai::Force::no));
  // Put back where the record is now (the rollback's sweep archived it).
  f.dir.write(std::filesystem::relative(f.ws->store.folder(id) / "meta.json", f.dir.path()).string(), approved);
  std::filesystem::remove_all(f.dir.path() / ".kaicoder/journal");  // even with every trace in the store gone
  auto again = kai::apply_approved(*f.ws, id, "tester");
  REQUIRE_FALSE(again);
  CHECK(again.error().message.find("applied before") != std::string::npos);
  CHECK(f.dir.read("a.txt") == "old\n");
}
