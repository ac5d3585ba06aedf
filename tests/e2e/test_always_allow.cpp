// "Always allow this" at the terminal prompt (SPEC §4): `a` writes the
// narrowest allow rule into kaicoder.toml through kaicoder's own
// transaction, trusts the root again and approves; the next identical
// proposal goes through without a prompt. Never offered for the confirm
// tier; a rule for a command that runs a script of the tree is bound to
// that script's blob id.

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

std::string config_backup(const TempRepo& repo) {
  for (const auto& name : repo.ls())
    if (name.starts_with("kaicoder.toml.bak-kaicoder-")) return name;
  return "";
}

}  // namespace

TEST_CASE("a at the prompt writes the narrowest rule for an edit, trusts it and approves", "[e2e][always]") {
  TempRepo repo{{"docs/a.md", "old\n"}, {"docs/b.md", "old\n"}};
  repo.init();
  const std::string cfg_before = repo.read("kaicoder.toml");
  KAI_REQUIRE_EXIT(repo.kai(edit("docs/a.md", "old", "new")), 0);
  Run a = repo.kai_tty({"approve", "1"}, "a");
  KAI_REQUIRE_EXIT(a, 0);
  REQUIRE(a.prompted);
  // The rule is shown before the question.
  CHECK_THAT(a.out, Contains("a = approve, and always allow edit docs/a.md"));
  CHECK_THAT(a.out, Contains("path = \"/docs/a.md\""));
  CHECK_THAT(a.tty, Contains("Apply proposal 1 to docs/a.md? [y/N/a]"));
  CHECK_THAT(a.out, Contains("added to kaicoder.toml and trusted"));
  CHECK(repo.read("docs/a.md") == "new\n");
  // Written through kaicoder's transaction: the old file backed up, an entry logged.
  const std::string cfg = repo.read("kaicoder.toml");
  CHECK(cfg.starts_with(cfg_before));
  CHECK_THAT(cfg, Contains("[[policy.rule]]\naction = \"edit\"\npath = \"/docs/a.md\"\ndecision = \"allow\"\n"));
  const std::string backup = config_backup(repo);
  REQUIRE_FALSE(backup.empty());
  CHECK(repo.read(backup) == cfg_before);
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 2);
  CHECK_THAT(entries.at(1).at("summary").get<std::string>(), Contains("always allow edit docs/a.md"));
  CHECK(entries.at(1).at("files") == json::array({repo.abs("kaicoder.toml").string()}));
  // The root is trusted with the new file, and the next edit of that file passes at once.
  Run next = repo.kai(
      {"--json", "propose", "--path", "docs/a.md", "--target", "new", "--replacement", "newer", "--why", "again"});
  KAI_REQUIRE_EXIT(next, 0);
  CHECK(json_of(next).at("status") == "applied");
  CHECK(json_of(next).at("decided_by") == "policy");
  CHECK(repo.read("docs/a.md") == "newer\n");
  // Only that file: another one still waits for a person.
  Run other =
      repo.kai({"--json", "propose", "--path", "docs/b.md", "--target", "old", "--replacement", "x", "--why", "w"});
  KAI_REQUIRE_EXIT(other, 0);
  CHECK(json_of(other).at("status") == "pending");
}

TEST_CASE("a run's rule is bound to the script it runs, and a changed script asks again", "[e2e][always][run]") {
  TempRepo repo{{"tools/gen.py", "open('out.txt', 'w').write('one\\n')\n"}};
  init_and_commit(repo);
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "generate", "--", "python3", "tools/gen.py"}), 0);
  Run a = repo.kai_tty({"approve", "1"}, "a");
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.out, Contains("command = \"python3 tools/gen.py\"\nexact = true\nfiles = { \"tools/gen.py\" = \""));
  CHECK(repo.read("out.txt") == "one\n");
  const std::string blob = repo.git({"hash-object", "tools/gen.py"}).substr(0, 40);
  CHECK_THAT(repo.read("kaicoder.toml"), Contains("\"tools/gen.py\" = \"" + blob + "\""));
  // The same command again: allowed by the rule, run at once.
  Run again = repo.kai({"--json", "run", "--why", "generate", "--", "python3", "tools/gen.py"});
  KAI_REQUIRE_EXIT(again, 0);
  CHECK(json_of(again).at("verdict") == "allow");
  // Not a longer command, not in another folder's script.
  Run longer = repo.kai({"--json", "run", "--why", "generate", "--", "python3", "tools/gen.py", "--more"});
  KAI_REQUIRE_EXIT(longer, 0);
  CHECK(json_of(longer).at("proposal").at("status") == "pending");
  // The script rewritten: the rule no longer matches.
  repo.write("tools/gen.py", "open('out.txt', 'w').write('two\\n')\n");
  Run changed = repo.kai({"--json", "run", "--why", "generate", "--", "python3", "tools/gen.py"});
  KAI_REQUIRE_EXIT(changed, 0);
  CHECK(json_of(changed).at("proposal").at("status") == "pending");
  CHECK(json_of(changed).at("verdict") == "ask");
  CHECK(repo.read("out.txt") == "one\n");
}

TEST_CASE("always allow is never offered where a plain yes is not enough", "[e2e][always]") {
  TempRepo repo{{"oracle.html", "<p>old</p>\n"},
                {"a.txt", "old\n"},
                {"b.txt", "b\n"},
                {"kaicoder.toml", "[paths]\nprotected = [\"oracle.html\"]\n"}};
  repo.trust();
  const std::string cfg = repo.read("kaicoder.toml");
  // Protected path: confirm tier.
  KAI_REQUIRE_EXIT(repo.kai(edit("oracle.html", "old", "new")), 0);
  // A run asking for the network: confirm tier.
  KAI_REQUIRE_EXIT(repo.kai({"run", "--network", "--why", "fetch", "--", "true"}), 0);
  // A changeset: many files, no one rule.
  const std::string patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "w"}, patch), 0);
  for (const char* id : {"1", "2", "3"}) {
    INFO("proposal " << id);
    Run a = repo.kai_tty({"approve", id}, "a");
    KAI_CHECK_EXIT(a, 4);  // "a" where it is not offered is no yes
    CHECK(a.prompted);
    CHECK_THAT(a.all(), !Contains("always allow"));
    CHECK_THAT(a.tty, !Contains("[y/N/a]"));
  }
  CHECK(repo.read("kaicoder.toml") == cfg);
  CHECK(config_backup(repo).empty());
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("always allow is not offered where an ask rule would still win", "[e2e][always]") {
  TempRepo repo{{"docs/a.md", "old\n"},
                {"kaicoder.toml", "[[policy.rule]]\naction = \"edit\"\npath = \"docs/**\"\ndecision = \"ask\"\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("docs/a.md", "old", "new")), 0);
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.tty, !Contains("[y/N/a]"));
  CHECK_THAT(a.out, !Contains("always allow"));
}

TEST_CASE("the rule's entry rolls back at a terminal, and the root is trusted as it was", "[e2e][always][rollback]") {
  TempRepo repo{{"docs/a.md", "old\n"}};
  repo.init();
  const std::string cfg_before = repo.read("kaicoder.toml");
  KAI_REQUIRE_EXIT(repo.kai(edit("docs/a.md", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "a"), 0);
  json entries = log_entries(repo);
  const std::string rule_entry = entries.at(1).at("rollback_id");
  // Only at a terminal.
  Run piped = repo.kai({"rollback", rule_entry});
  KAI_CHECK_EXIT(piped, 3);
  Run rb = repo.kai_tty({"rollback", rule_entry}, "y");
  KAI_REQUIRE_EXIT(rb, 0);
  CHECK(repo.read("kaicoder.toml") == cfg_before);
  // Trusted again: commands work, and the edit asks once more.
  Run next = repo.kai(
      {"--json", "propose", "--path", "docs/a.md", "--target", "new", "--replacement", "newer", "--why", "again"});
  KAI_REQUIRE_EXIT(next, 0);
  CHECK(json_of(next).at("status") == "pending");
}
