// `kaicoder approve`, `apply` and `reject` at the terminal, and --json.

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("approve shows the diff, asks y/N on the terminal and applies on y", "[e2e][approve]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"approve", "1"}, "y", {}, TtyOutput::terminal);
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.tty, Contains("-old\n+new\n"));
  CHECK_THAT(a.tty, Contains("Apply proposal 1 to a.txt? [y/N/a]"));
  CHECK_THAT(a.tty, Contains("applied proposal 1 to a.txt"));
  CHECK(repo.read("a.txt") == "new\n");
  json p = show_json(repo, 1);
  CHECK(p.at("status") == "applied");
  CHECK(p.at("decided_by") == current_user());
  CHECK(is_rollback_id(p.at("rollback_id")));
}

TEST_CASE("approve answered n leaves the proposal pending and the tree alone", "[e2e][approve]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  auto before = repo.tree_snapshot();
  for (const char* no : {"n", "", "nope", "yess"}) {
    Run a = repo.kai_tty({"approve", "1"}, no);
    KAI_CHECK_EXIT(a, 4);  // declined (SPEC §3)
    CHECK(a.prompted);
    CHECK_THAT(a.err, Contains("kaicoder: error: not approved; proposal 1 is still pending"));
  }
  CHECK(repo.tree_snapshot() == before);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(log_entries(repo).empty());
}

TEST_CASE("approve --no-apply records the decision and apply then writes it", "[e2e][approve][apply]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"approve", "1", "--no-apply"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.out, Contains("kaicoder apply 1"));
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "approved");
  // apply needs no terminal: the decision is already made.
  Run ap = repo.kai({"--json", "apply", "1"});
  KAI_REQUIRE_EXIT(ap, 0);
  json j = json_of(ap);
  CHECK(j.at("status") == "applied");
  CHECK(is_rollback_id(j.at("applied").at("rollback_id")));
  CHECK(repo.read("a.txt") == "new\n");
  CHECK(log_entries(repo).at(0).at("approver") == current_user());

  SECTION("applying it again is a conflict") {
    Run again = repo.kai({"apply", "1"});
    KAI_CHECK_EXIT(again, 6);
    CHECK(repo.read("a.txt") == "new\n");
    CHECK(log_entries(repo).size() == 1);
  }
}

TEST_CASE("approve --json prints the applied proposal", "[e2e][approve][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  json j = json_of(a);
  CHECK(j.at("id") == 1);
  CHECK(j.at("status") == "applied");
  json o = j.at("applied");
  CHECK(o.at("unchanged") == false);
  CHECK(o.at("backup") == repo.abs("a.txt.bak-kaicoder-" + o.at("rollback_id").get<std::string>()).string());
  CHECK(o.at("entry").at("kind") == "edit");
}

TEST_CASE("apply refuses a proposal that is not approved", "[e2e][apply]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run r = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("not approved"));
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("reject with --reason logs a rejected entry and writes nothing in the tree", "[e2e][reject]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new", "because")), 0);
  auto before = repo.tree_snapshot();
  before.erase("KAI-CODER-CHANGELOG.md");
  Run r = repo.kai_tty({"reject", "1", "--reason", "not like this"}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("rejected proposal 1"));
  auto after = repo.tree_snapshot();
  after.erase("KAI-CODER-CHANGELOG.md");
  CHECK(after == before);
  json p = show_json(repo, 1);
  CHECK(p.at("status") == "rejected");
  CHECK(p.at("reason") == "not like this");
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  json e = entries.at(0);
  CHECK(e.at("kind") == "rejected");
  CHECK(e.at("rollback_id") == "\u2014");
  CHECK(e.at("files") == json::array({repo.abs("a.txt").string()}));
  CHECK(e.at("action") == "edit_file");
  CHECK(e.at("why") == "because");
  CHECK(e.at("approver") == current_user());
  CHECK(e.at("result") == "rejected: not like this");
  CHECK(e.at("backup") == "\u2014");
  CHECK(e.at("rollback") == "\u2014");
  // A rejected proposal can no longer be approved.
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_FALSE(a.prompted);
  CHECK(repo.read("a.txt") == "old\n");

  SECTION("reject --json prints the proposal") {
    KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "newer")), 0);
    Run rj = repo.kai_tty({"--json", "reject", "2"}, "y");
    KAI_REQUIRE_EXIT(rj, 0);
    CHECK(json_of(rj).at("status") == "rejected");
  }
  SECTION("answering n to reject keeps it pending") {
    KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "newer")), 0);
    Run rn = repo.kai_tty({"reject", "2"}, "n");
    KAI_REQUIRE_EXIT(rn, 4);
    CHECK_THAT(rn.err, Contains("not rejected; proposal 2 is unchanged"));
    CHECK(show_json(repo, 2).at("status") == "pending");
  }
}

// Like approve, reject and rollback check that there is something to decide
// before they ask a person to decide it.
TEST_CASE("reject and rollback say what is wrong before asking the question", "[e2e][reject][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  Run again = repo.kai_tty({"reject", "1"}, "y");
  KAI_CHECK_EXIT(again, 6);
  CHECK_FALSE(again.prompted);
  Run unknown = repo.kai_tty({"rollback", "20990101T000000Z"}, "y");
  KAI_CHECK_EXIT(unknown, 7);
  CHECK_FALSE(unknown.prompted);
}

}  // namespace
