// `kaicoder propose`: each way of giving a change, --json, --dry-run and the agent.

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("propose stages an edit and prints its id, kind and diff without touching the tree", "[e2e][propose]") {
  TempRepo repo{{"src/a.txt", "one\ntwo\nthree\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai(edit("src/a.txt", "two", "TWO", "make it loud"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("proposal 1"));
  CHECK_THAT(r.out, Contains("edit"));
  CHECK_THAT(r.out, Contains("risk low"));
  CHECK_THAT(r.out, Contains("--- a/src/a.txt\n+++ b/src/a.txt\n"));
  CHECK_THAT(r.out, Contains("-two\n+TWO\n"));
  CHECK_THAT(r.out, Contains("kaicoder approve 1"));
  CHECK(repo.tree_snapshot() == before);
  CHECK(std::filesystem::is_directory(repo.abs(".kaicoder/staging/1")));
  CHECK(show_json(repo, 1).at("status") == "pending");
  // Colour is for terminals only.
  CHECK(r.out.find('\x1b') == std::string::npos);
}

TEST_CASE("propose accepts an absolute path inside the root and a ./ prefix", "[e2e][propose]") {
  TempRepo repo{{"src/a.txt", "a\nb\n"}};
  repo.init();
  Run abs = repo.kai({"--json", "propose", "--path", repo.abs("src/a.txt").string(), "--target", "a", "--replacement",
                      "A", "--why", "w"});
  KAI_REQUIRE_EXIT(abs, 0);
  CHECK(json_of(abs).at("path") == "src/a.txt");
  Run dot = repo.kai(
      {"--json", "propose", "--path", "./src/../src/a.txt", "--target", "b", "--replacement", "B", "--why", "w"});
  KAI_REQUIRE_EXIT(dot, 0);
  CHECK(json_of(dot).at("path") == "src/a.txt");
}

TEST_CASE("propose --json has id, kind, path, status and diff", "[e2e][propose][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("id") == 1);
  CHECK(j.at("kind") == "edit");
  CHECK(j.at("path") == "a.txt");
  CHECK(j.at("status") == "pending");
  CHECK(j.at("why") == "w");
  CHECK_THAT(j.at("diff").get<std::string>(), Contains("-old\n+new\n"));
  // The text goes once, as "diff"; diff_info holds what describes it.
  CHECK(j.at("diff_info").at("added") == 1);
  CHECK(j.at("diff_info").at("removed") == 1);
  CHECK(j.at("diff_info").at("truncated") == false);
  CHECK_FALSE(j.at("diff_info").contains("text"));
  CHECK(j.at("dry_run") == false);

  SECTION("--json also works after the subcommand") {
    Run r2 =
        repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "newer", "--why", "w", "--json"});
    KAI_REQUIRE_EXIT(r2, 0);
    CHECK(json_of(r2).at("id") == 2);
  }
}

TEST_CASE("propose --content-file stages a write that creates a file", "[e2e][propose]") {
  TempRepo repo{{"content.in", "fresh\nfile\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "docs/new.txt", "--content-file", "content.in", "--why", "w"});
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("kind") == "write");
  CHECK(j.at("path") == "docs/new.txt");
  CHECK(j.at("base").at("exists") == false);
  CHECK_THAT(j.at("diff").get<std::string>(), Contains("+fresh\n+file\n"));
  CHECK_FALSE(repo.exists("docs"));
  std::string rid = approve(repo, 1);
  CHECK(repo.read("docs/new.txt") == "fresh\nfile\n");
  CHECK(repo.find(".bak-kaicoder-").empty());
  json e = log_entries(repo).at(0);
  CHECK(e.at("kind") == "write");
  CHECK(e.at("backup") == "\u2014");
  CHECK(e.at("rollback") == "delete docs/new.txt");
}

TEST_CASE("propose --content-file - reads the content from stdin and overwrites a file", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "old content\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "a.txt", "--content-file", "-", "--why", "w"}, "new content\n");
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("kind") == "write");
  CHECK(j.at("base").at("exists") == true);
  std::string rid = approve(repo, 1);
  CHECK(repo.read("a.txt") == "new content\n");
  CHECK(repo.read("a.txt.bak-kaicoder-" + rid) == "old content\n");
}

TEST_CASE("propose --delete stages removal of one file", "[e2e][propose]") {
  TempRepo repo{{"gone.txt", "bye\n"}, {"kept.txt", "stay\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "gone.txt", "--delete", "--why", "unused"});
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(json_of(r).at("kind") == "delete");
  CHECK(repo.exists("gone.txt"));
  std::string rid = approve(repo, 1);
  CHECK_FALSE(repo.exists("gone.txt"));
  CHECK(repo.read("gone.txt.bak-kaicoder-" + rid) == "bye\n");
  CHECK(repo.read("kept.txt") == "stay\n");
  CHECK(log_entries(repo).at(0).at("action") == "delete_file");
}

TEST_CASE("propose --json-input takes a multi-line edit from stdin", "[e2e][propose]") {
  TempRepo repo{{"a.py", "def f():\n    return 1\n\nprint(f())\n"}};
  repo.init();
  json req = {{"path", "a.py"},
              {"target", "def f():\n    return 1\n"},
              {"replacement", "def f():\n    \"quoted\" 'both'\n    return 2\n"},
              {"why", "multi-line"},
              {"agent", "json-agent"}};
  Run r = repo.kai({"--json", "propose", "--json-input"}, req.dump());
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("kind") == "edit");
  CHECK(j.at("agent") == "json-agent");
  approve(repo, 1);
  CHECK(repo.read("a.py") == "def f():\n    \"quoted\" 'both'\n    return 2\n\nprint(f())\n");

  SECTION("a write and a delete go through --json-input too") {
    json w = {{"path", "b.txt"}, {"content", "b\n"}, {"why", "w"}};
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, w.dump()), 0);
    json d = {{"path", "a.py"}, {"delete", true}, {"why", "w"}};
    Run rd = repo.kai({"--json", "propose", "--json-input"}, d.dump());
    KAI_REQUIRE_EXIT(rd, 0);
    CHECK(json_of(rd).at("kind") == "delete");
    CHECK(show_json(repo, 2).at("kind") == "write");
  }
}

TEST_CASE("propose reads target and replacement from files, or one of them from stdin", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "alpha\nbeta\ngamma\n"}, {"t.in", "beta\n"}, {"r.in", "BETA\nBETA2\n"}};
  repo.init();

  SECTION("both from files") {
    KAI_REQUIRE_EXIT(
        repo.kai({"propose", "--path", "a.txt", "--target-file", "t.in", "--replacement-file", "r.in", "--why", "w"}),
        0);
  }
  SECTION("target from stdin") {
    KAI_REQUIRE_EXIT(
        repo.kai({"propose", "--path", "a.txt", "--target-file", "-", "--replacement-file", "r.in", "--why", "w"},
                 "beta\n"),
        0);
  }
  SECTION("replacement from stdin") {
    KAI_REQUIRE_EXIT(
        repo.kai({"propose", "--path", "a.txt", "--target-file", "t.in", "--replacement-file", "-", "--why", "w"},
                 "BETA\nBETA2\n"),
        0);
  }
  approve(repo, 1);
  CHECK(repo.read("a.txt") == "alpha\nBETA\nBETA2\ngamma\n");
}

TEST_CASE("propose --dry-run prints the diff and stages nothing", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r =
      repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w", "--dry-run"});
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("dry run: nothing staged"));
  CHECK_THAT(r.out, Contains("-old\n+new\n"));
  Run j = repo.kai(
      {"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w", "--dry-run"});
  KAI_REQUIRE_EXIT(j, 0);
  CHECK(json_of(j).at("dry_run") == true);
  CHECK(json_of(j).at("id") == 0);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  CHECK(json_of(l).at("proposals").empty());
  CHECK(repo.tree_snapshot() == before);
  // The next real proposal still gets the first id.
  Run real =
      repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_REQUIRE_EXIT(real, 0);
  CHECK(json_of(real).at("id") == 1);
}

TEST_CASE("propose records the agent from --agent or KAICODER_AGENT", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "a", "--replacement", "A", "--why", "w",
                             "--agent", "flag-agent"}),
                   0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B"), "", {{"KAICODER_AGENT", "env-agent"}}), 0);
  // The flag wins over the environment.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "b", "--replacement", "BB", "--why", "w",
                             "--agent", "flag-wins"},
                            "", {{"KAICODER_AGENT", "env-agent"}}),
                   0);
  CHECK(show_json(repo, 1).at("agent") == "flag-agent");
  CHECK(show_json(repo, 2).at("agent") == "env-agent");
  CHECK(show_json(repo, 3).at("agent") == "flag-wins");
  Run s = repo.kai({"show", "2"});
  KAI_REQUIRE_EXIT(s, 0);
  CHECK_THAT(s.out, Contains("agent:\n      | env-agent"));
}

}  // namespace
