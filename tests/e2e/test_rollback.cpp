// `kaicoder rollback`: by id and by last, answered n, of a rollback, of a
// created or deleted file.

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("rollback by id and by last restores the old bytes", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "B")), 0);
  std::string ra = approve(repo, 1);
  std::string rb = approve(repo, 2);

  Run last = repo.kai_tty({"rollback", "last"}, "y");
  KAI_REQUIRE_EXIT(last, 0);
  CHECK_THAT(last.out, Contains("rolled back " + rb));
  CHECK(repo.read("b.txt") == "b\n");
  CHECK(repo.read("a.txt") == "A\n");
  CHECK(show_json(repo, 2).at("status") == "rolled-back");

  Run by_id = repo.kai_tty({"--json", "rollback", ra}, "y");
  KAI_REQUIRE_EXIT(by_id, 0);
  json j = json_of(by_id);
  CHECK(is_rollback_id(j.at("rollback_id")));
  CHECK(j.at("entry").at("kind") == "rollback");
  CHECK(j.at("backup") == repo.abs("a.txt.bak-kaicoder-" + j.at("rollback_id").get<std::string>()).string());
  CHECK(repo.read("a.txt") == "a\n");
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
  CHECK(log_entries(repo).size() == 4);
}

TEST_CASE("answering n to rollback changes nothing", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  approve(repo, 1);
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", "last"}, "n");
  KAI_REQUIRE_EXIT(r, 4);  // declined (SPEC §3)
  CHECK_THAT(r.err, Contains("kaicoder: error: not confirmed; nothing rolled back"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("a rollback can itself be rolled back", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  Run r1 = repo.kai_tty({"--json", "rollback", id}, "y");
  KAI_REQUIRE_EXIT(r1, 0);
  std::string undo_id = json_of(r1).at("rollback_id");
  CHECK(repo.read("a.txt") == "old\n");
  Run r2 = repo.kai_tty({"--json", "rollback", undo_id}, "y");
  KAI_REQUIRE_EXIT(r2, 0);
  CHECK(repo.read("a.txt") == "new\n");
  std::string redo_id = json_of(r2).at("rollback_id");
  CHECK(repo.read("a.txt.bak-kaicoder-" + redo_id) == "old\n");
  // And `last` is now that second rollback.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(log_entries(repo).size() == 4);
}

TEST_CASE("rolling back a created file deletes it", "[e2e][rollback]") {
  TempRepo repo{{"c.in", "new file\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "sub/new.txt", "--content-file", "c.in", "--why", "w"}), 0);
  std::string id = approve(repo, 1);
  REQUIRE(repo.read("sub/new.txt") == "new file\n");
  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_FALSE(repo.exists("sub/new.txt"));
  // The created file's last bytes are kept in the state dir (so the folder
  // it made can go), and this rollback is reversible too.
  CHECK_FALSE(repo.exists("sub"));
  CHECK(repo.find("new.txt.bak-kaicoder-").empty());
  const std::string undo_id = log_entries(repo).at(0).at("rollback_id");
  const auto kept = repo.ls(".kaicoder/kept/" + undo_id);
  REQUIRE(kept.size() == 1);
  CHECK(repo.read(".kaicoder/kept/" + undo_id + "/" + kept[0]) == "new file\n");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(repo.read("sub/new.txt") == "new file\n");
}

TEST_CASE("rolling back a delete recreates the file with its mode", "[e2e][rollback][mode]") {
  TempRepo repo{{"tool.sh.txt", "#!/bin/sh\necho hi\n"}};
  repo.init();
  repo.chmod("tool.sh.txt", 0755);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "tool.sh.txt", "--delete", "--why", "w"}), 0);
  std::string id = approve(repo, 1);
  REQUIRE_FALSE(repo.exists("tool.sh.txt"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  REQUIRE(repo.exists("tool.sh.txt"));
  CHECK(repo.read("tool.sh.txt") == "#!/bin/sh\necho hi\n");
  CHECK(repo.mode("tool.sh.txt") == 0755);
}

// The rollback of a rollback carries the proposal along: once its change is
// live again, `show` must not call it rolled back.
TEST_CASE("undoing the rollback of a proposal marks the proposal applied again", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  approve(repo, 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  REQUIRE(repo.read("a.txt") == "new\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
}

}  // namespace

TEST_CASE("rollback N undoes what proposal N did, and last~N names the entry N before the newest", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}, {"c.txt", "c\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "B")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("c.txt", "c", "C")), 0);
  const std::string ra = approve(repo, 1), rb = approve(repo, 2), rc = approve(repo, 3);

  // A proposal id names its entry, and the screen says which it is.
  Run by_proposal = repo.kai_tty({"rollback", "2"}, "y");
  KAI_REQUIRE_EXIT(by_proposal, 0);
  CHECK_THAT(by_proposal.out, Contains("rollback of " + rb + " (edit, proposal 2)"));
  CHECK_THAT(by_proposal.out, Contains("rolled back " + rb));
  CHECK(repo.read("b.txt") == "b\n");
  CHECK(repo.read("a.txt") == "A\n");
  CHECK(repo.read("c.txt") == "C\n");

  // Entries now, newest first: the rollback of rb, rc, rb, ra. last~3 is ra.
  Run third = repo.kai_tty({"--json", "rollback", "last~3"}, "y");
  KAI_REQUIRE_EXIT(third, 0);
  CHECK(json_of(third).at("entry").at("rollback").get<std::string>().find("a.txt") != std::string::npos);
  CHECK(repo.read("a.txt") == "a\n");
  CHECK(repo.read("c.txt") == "C\n");

  // last~0 is last; far past the oldest is no entry (7); a malformed N is a usage error (2).
  Run zero = repo.kai_tty({"rollback", "last~0"}, "n");
  KAI_CHECK_EXIT(zero, 4);
  CHECK_THAT(zero.out, Contains("rollback of "));
  Run far = repo.kai_tty({"rollback", "last~40"}, "y");
  KAI_CHECK_EXIT(far, 7);
  CHECK_THAT(far.err, Contains("there is no entry last~40"));
  CHECK_FALSE(far.prompted);
  for (const char* bad : {"last~", "last~x", "last~-1", "last~01", "last~1e1"}) {
    INFO(bad);
    Run r = repo.kai_tty({"rollback", bad}, "y");
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("last~N"));
    CHECK_FALSE(r.prompted);
  }
  (void)ra;
  (void)rc;
}

TEST_CASE("rollback of a proposal that changed nothing, or of none, says so", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  auto before = repo.tree_snapshot();
  Run pending = repo.kai_tty({"rollback", "1"}, "y");
  KAI_CHECK_EXIT(pending, 7);
  CHECK_THAT(pending.err, Contains("proposal 1 has no entry to roll back (it is pending"));
  Run none = repo.kai_tty({"rollback", "99"}, "y");
  KAI_CHECK_EXIT(none, 7);
  CHECK_THAT(none.err, Contains("no proposal 99"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("a proposal with several entries is named by one of them", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  const std::string first = approve(repo, 1);
  // A second entry of proposal 1, sealed as kaicoder seals its records.
  json rec = json::parse(repo.read(".kaicoder/journal/" + first + ".json"));
  rec.erase("seal");
  const std::string second = "20990101T000000Z";
  rec["id"] = second;
  auto mac = kai::test::store_sealer(repo).seal("journal", second, rec.dump());
  REQUIRE(mac);
  rec["seal"] = *mac;
  repo.write(".kaicoder/journal/" + second + ".json", rec.dump(2));
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", "1"}, "y");
  KAI_CHECK_EXIT(r, 2);
  CHECK_FALSE(r.prompted);
  CHECK_THAT(r.err, Contains("proposal 1 has 2 entries: "));
  CHECK_THAT(r.err, Contains(first));
  CHECK_THAT(r.err, Contains(second));
  CHECK_THAT(r.err, Contains("hint: name the one to undo: kaicoder rollback "));
  CHECK(repo.tree_snapshot() == before);
}
