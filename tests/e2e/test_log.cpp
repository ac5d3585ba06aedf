// `kaicoder log` and the changelog it reads: the format of SPEC §6, notes,
// the archive, and names that need quoting.

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;

TEST_CASE("log lists entries newest first and filters with -n, --kind and --file", "[e2e][log]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}, {"c.txt", "c\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A", "first")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "c.txt", "--delete", "--why", "second"}), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "B", "third")), 0);
  std::string r1 = approve(repo, 1);
  std::string r2 = approve(repo, 2);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "3"}, "y"), 0);

  json all = log_entries(repo);
  REQUIRE(all.size() == 3);
  CHECK(all.at(0).at("kind") == "rejected");
  CHECK(all.at(1).at("rollback_id") == r2);
  CHECK(all.at(2).at("rollback_id") == r1);

  Run text = repo.kai({"log"});
  KAI_REQUIRE_EXIT(text, 0);
  size_t at2 = text.out.find(r2 + " "), at1 = text.out.find(r1 + " ");
  CHECK(at2 != std::string::npos);
  CHECK(at2 < at1);
  CHECK_THAT(text.out, Contains("a.txt"));  // one line each, paths relative to root

  Run n1 = repo.kai({"--json", "log", "-n", "1"});
  KAI_REQUIRE_EXIT(n1, 0);
  CHECK(json_of(n1).at("entries").size() == 1);

  Run kind = repo.kai({"--json", "log", "--kind", "delete"});
  KAI_REQUIRE_EXIT(kind, 0);
  REQUIRE(json_of(kind).at("entries").size() == 1);
  CHECK(json_of(kind).at("entries").at(0).at("rollback_id") == r2);

  Run file = repo.kai({"--json", "log", "--file", "a.txt"});
  KAI_REQUIRE_EXIT(file, 0);
  REQUIRE(json_of(file).at("entries").size() == 1);
  CHECK(json_of(file).at("entries").at(0).at("rollback_id") == r1);
  Run file_abs = repo.kai({"--json", "log", "--file", repo.abs("b.txt").string()});
  KAI_REQUIRE_EXIT(file_abs, 0);
  REQUIRE(json_of(file_abs).at("entries").size() == 1);
  CHECK(json_of(file_abs).at("entries").at(0).at("kind") == "rejected");

  Run full = repo.kai({"log", "--full", "-n", "1", "--kind", "edit"});
  KAI_REQUIRE_EXIT(full, 0);
  CHECK_THAT(full.out, StartsWith("## " + iso_of(r1) + "  \u00b7  edit  \u00b7  rollback-id: " + r1 + "\n"));
  CHECK_THAT(full.out, Contains("- why:       first\n"));

  KAI_CHECK_EXIT(repo.kai({"log", "--kind", "bogus"}), 2);
}

TEST_CASE("log on a tree with no changes says so", "[e2e][log]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  Run r = repo.kai({"log"});
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("no changelog entries"));
  CHECK(log_entries(repo).empty());
}

TEST_CASE("the changelog entry of an edit is exactly the SPEC format", "[e2e][changelog]") {
  TempRepo repo{{"src/leo.mjs", "speak(text)\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "src/leo.mjs", "--target", "speak(text)", "--replacement",
                             "if (voice) speak(text)", "--why", "Leo crashed on empty text; add a guard.", "--summary",
                             "Guarded the TTS call with a null-voice check."}),
                   0);
  std::string id = approve(repo, 1);
  std::string file = repo.abs("src/leo.mjs").string();
  std::vector<std::string> want = {
      "## " + iso_of(id) + "  \u00b7  edit  \u00b7  rollback-id: " + id,
      "- file(s):   " + file,
      "- action:    edit_file",
      "- summary:   Guarded the TTS call with a null-voice check.",
      "- why:       Leo crashed on empty text; add a guard.",
      "- backup:    " + file + ".bak-kaicoder-" + id,
      "- approver:  " + current_user(),
      "- result:    ok",
      // Whole root-relative paths: leo.mjs alone could be any folder's.
      "- rollback:  restore src/leo.mjs.bak-kaicoder-" + id + " \u2192 src/leo.mjs",
      "",
  };
  CHECK(entry_lines(repo, id) == want);
  CHECK(json_of(repo.kai({"--json", "log"})).at("entries").at(0).at("time") == iso_of(id));
}

TEST_CASE("the changelog is newest first and uses — for none", "[e2e][changelog]") {
  TempRepo repo{{"a.txt", "a\n"}, {"c.in", "created\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "new.txt", "--content-file", "c.in", "--why", "w1"}), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--delete", "--why", "w2"}), 0);
  std::string created = approve(repo, 1);
  std::string deleted = approve(repo, 2);

  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  size_t newer = text.find("rollback-id: " + deleted + "\n"), older = text.find("rollback-id: " + created + "\n");
  REQUIRE(newer != std::string::npos);
  REQUIRE(older != std::string::npos);
  CHECK(newer < older);

  std::vector<std::string> c = entry_lines(repo, created);
  REQUIRE(c.size() == 10);
  CHECK(c[0] == "## " + iso_of(created) + "  \u00b7  write  \u00b7  rollback-id: " + created);
  CHECK(c[2] == "- action:    write_file");
  CHECK(c[5] == "- backup:    \u2014");
  CHECK(c[8] == "- rollback:  delete new.txt");

  std::vector<std::string> d = entry_lines(repo, deleted);
  REQUIRE(d.size() == 10);
  CHECK(d[2] == "- action:    delete_file");
  CHECK(d[5] == "- backup:    " + repo.abs("a.txt").string() + ".bak-kaicoder-" + deleted);
  CHECK(d[8] == "- rollback:  restore a.txt.bak-kaicoder-" + deleted + " \u2192 a.txt");
}

TEST_CASE("the changelog entry of a rollback is itself an entry with a backup", "[e2e][changelog][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  Run r = repo.kai_tty({"--json", "rollback", id}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  std::string rid = json_of(r).at("rollback_id");
  std::vector<std::string> lines = entry_lines(repo, rid);
  std::string file = repo.abs("a.txt").string();
  std::vector<std::string> want = {
      "## " + iso_of(rid) + "  \u00b7  rollback  \u00b7  rollback-id: " + rid,
      "- file(s):   " + file,
      "- action:    rollback",
      "- summary:   rolled back " + id,
      "- why:       undo " + id,
      "- backup:    " + file + ".bak-kaicoder-" + rid,
      "- approver:  " + current_user(),
      "- result:    ok",
      "- rollback:  restore a.txt.bak-kaicoder-" + rid + " \u2192 a.txt",
      "",
  };
  CHECK(lines == want);
}

TEST_CASE("notes written by hand in the changelog survive and do not break log", "[e2e][changelog]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B")), 0);
  std::string first = approve(repo, 1);
  const std::string notes = "\nReviewed on Tuesday; see ticket 42.\n\n## Notes from the team\n\n- not a field\n";
  repo.write("KAI-CODER-CHANGELOG.md", repo.read("KAI-CODER-CHANGELOG.md") + notes);
  std::string second = approve(repo, 2);
  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  CHECK_THAT(text, Contains(notes));
  CHECK(text.find("rollback-id: " + second + "\n") < text.find("rollback-id: " + first + "\n"));
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 2);
  CHECK(entries.at(0).at("rollback_id") == second);
  CHECK(entries.at(1).at("rollback_id") == first);
  KAI_CHECK_EXIT(repo.kai({"log", "--full"}), 0);
}

TEST_CASE("entries moved to the changelog archive still show in log and can be rolled back",
          "[e2e][changelog][rollback]") {
  // With keep = 10 the live file holds at most 20 entries; the 21st change
  // moves the oldest 10 to .kaicoder/changelog-archive/.
  constexpr int k_changes = 21;
  TempRepo repo;
  for (int i = 0; i < k_changes; ++i) repo.write("f" + std::to_string(i) + ".txt", "old\n");
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  size_t at = cfg.find("keep = 500");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("keep = 500").size(), "keep = 10");
  // Edits apply at once here, so the case needs no terminal per change.
  cfg += "\n[[policy.rule]]\naction = \"edit\"\npath = \"f*.txt\"\ndecision = \"allow\"\n";
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  std::vector<std::string> ids;
  for (int i = 0; i < k_changes; ++i) {
    Run r = repo.kai({"--json", "propose", "--path", "f" + std::to_string(i) + ".txt", "--target", "old",
                      "--replacement", "new", "--why", "w"});
    KAI_REQUIRE_EXIT(r, 0);
    ids.push_back(json_of(r).at("applied").at("rollback_id"));
  }
  std::string live = repo.read("KAI-CODER-CHANGELOG.md");
  CHECK(live.find("rollback-id: " + ids[0] + "\n") == std::string::npos);
  CHECK(live.find("rollback-id: " + ids[k_changes - 1] + "\n") != std::string::npos);
  json entries = log_entries(repo);
  REQUIRE(entries.size() == static_cast<size_t>(k_changes));
  for (size_t i = 0; i < entries.size(); ++i) CHECK(entries.at(i).at("rollback_id") == ids[ids.size() - 1 - i]);
  Run oldest = repo.kai({"--json", "log", "--file", "f0.txt"});
  KAI_REQUIRE_EXIT(oldest, 0);
  CHECK(json_of(oldest).at("entries").size() == 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", ids[0]}, "y"), 0);
  CHECK(repo.read("f0.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
}

TEST_CASE("a file name with spaces, a comma and non-ASCII letters goes through the whole loop", "[e2e][changelog]") {
  const std::string name = "docs/my file, v2 \u00e9t\u00e9.txt";
  TempRepo repo{{name, "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit(name, "old", "new")), 0);
  std::string id = approve(repo, 1);
  CHECK(repo.read(name) == "new\n");
  CHECK(repo.read(name + ".bak-kaicoder-" + id) == "old\n");
  json e = log_entries(repo).at(0);
  CHECK(e.at("files") == json::array({repo.abs(name).string()}));
  Run by_file = repo.kai({"--json", "log", "--file", name});
  KAI_REQUIRE_EXIT(by_file, 0);
  CHECK(json_of(by_file).at("entries").size() == 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read(name) == "old\n");
}

}  // namespace
