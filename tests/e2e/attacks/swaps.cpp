// What the agent changes between propose and the write: a changeset's
// folders are opened for its question and again after the answer, each time
// beneath root, with no symlink followed and no mount crossed, so a folder
// swapped for a symlink before the question is refused there, one swapped
// while the question is on the screen takes no write through it, and
// nothing of the changeset lands.

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

// A tree of two files and, outside root, a folder that looks like src/
// from a stat (the same name, the same mode, the same bytes); proposal 1
// writes both files as one changeset. Returns the folder outside.
fs::path propose_two_files(TempRepo& repo) {
  repo.init();
  const fs::path outside = repo.home() / "outside";
  fs::create_directories(outside);
  {
    std::ofstream(outside / "a.txt", std::ios::binary) << "a as it was\n";
  }
  json changes = json::array({json{{"op", "write"}, {"path", "docs/c.txt"}, {"content", "c as approved\n"}},
                              json{{"op", "write"}, {"path", "src/a.txt"}, {"content", "a as approved\n"}}});
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, json{{"why", "two files"}, {"changes", changes}}.dump()), 0);
  return outside;
}

// src/ goes, and a symlink to the folder outside takes its name.
void swap_src(TempRepo& repo, const fs::path& outside) {
  fs::rename(repo.abs("src"), repo.abs("src.moved"));
  fs::create_directory_symlink(outside, repo.abs("src"));
}

// The agent's rewrite in place: `text` over the start of `rel`, the same
// inode, size and mode, and its modification time put back.
void rewrite_in_place(TempRepo& repo, const std::string& rel, const std::string& text) {
  const auto when = fs::last_write_time(repo.abs(rel));
  {
    std::ofstream(repo.abs(rel), std::ios::binary | std::ios::in | std::ios::out) << text;
  }
  fs::last_write_time(repo.abs(rel), when);
}

// `args` at a terminal, src/a.txt rewritten in place with `text` while its
// question is on the screen, then answered yes; `before` is the tree as the
// answer found it.
Run rewritten_while_asked(TempRepo& repo, const std::vector<std::string>& args, const std::string& text,
                          std::map<std::string, std::string>& before) {
  TtyProcess asked = repo.spawn_kai_tty(args);
  REQUIRE(asked.wait_for_prompt());
  rewrite_in_place(repo, "src/a.txt", text);
  before = tree_but_log(repo);
  asked.answer("y");
  return asked.finish();
}
}  // namespace

TEST_CASE("attack: a folder swapped for a symlink while the person reads a changeset takes no write through it",
          "[e2e][attack][swaps]") {
  TempRepo repo{{"src/a.txt", "a as it was\n"}, {"docs/c.txt", "c as it was\n"}};
  const fs::path outside = propose_two_files(repo);
  TtyProcess approver = repo.spawn_kai_tty({"approve", "1"});
  REQUIRE(approver.wait_for_prompt());
  swap_src(repo, outside);  // while the question is on the screen
  auto before = tree_but_log(repo);
  approver.answer("y");
  Run r = approver.finish();
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("'src/a.txt'") && Contains("symlink 'src'"));
  // Nothing was written through the link, and nothing of the changeset landed.
  CHECK(read_outside(outside / "a.txt") == "a as it was\n");
  CHECK(std::distance(fs::directory_iterator(outside), fs::directory_iterator{}) == 1);
  auto after = tree_but_log(repo);
  CHECK(after == before);
  // The failure is logged, naming the file and why.
  CHECK_THAT(repo.read("KAI-CODER-CHANGELOG.md"), Contains("failed: 'src/a.txt'") && Contains("symlink 'src'"));
  CHECK(repo.read("docs/c.txt") == "c as it was\n");
  CHECK(repo.find(".bak-kaicoder-").empty());
  CHECK(json_of(repo.kai({"--json", "show", "1"})).at("proposal").at("status") != "applied");
}

TEST_CASE("attack: a folder swapped for a symlink after a changeset is proposed is refused before the question",
          "[e2e][attack][swaps]") {
  // The paths of a sealed changeset are resolved once, when it is proposed;
  // its diff for the question opens each folder again beneath root, with no
  // symlink followed, so a swap made between propose and approve is refused
  // there, before the person is asked, and nothing is read through it.
  TempRepo repo{{"src/a.txt", "a as it was\n"}, {"docs/c.txt", "c as it was\n"}};
  const fs::path outside = propose_two_files(repo);
  swap_src(repo, outside);
  auto before = tree_but_log(repo);
  Run r = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("'src/a.txt'") && Contains("symlink 'src'"));
  CHECK(r.tty.find("[y/N]") == std::string::npos);  // never asked
  CHECK(read_outside(outside / "a.txt") == "a as it was\n");
  CHECK(std::distance(fs::directory_iterator(outside), fs::directory_iterator{}) == 1);
  auto after = tree_but_log(repo);
  CHECK(after == before);
  CHECK(repo.read("docs/c.txt") == "c as it was\n");
  CHECK(repo.find(".bak-kaicoder-").empty());
  // show refuses it the same way: nothing of the folder outside is shown.
  Run s = repo.kai({"show", "1"});
  CHECK(s.out.find("a as it was") == std::string::npos);
}

TEST_CASE("attack: a backup rewritten while the person reads a rollback's question is refused after the answer",
          "[e2e][attack][swaps]") {
  // A rollback reads each backup again after the answer and restores it
  // only while its bytes are those the sealed journal record holds (SPEC
  // §5): a backup the agent rewrote while the question was on the screen
  // is refused with code 6, and the person learns of it; neither its bytes
  // nor anything else of the rollback land.
  TempRepo repo{{"src/a.txt", "a as it was\n"}, {"docs/c.txt", "c as it was\n"}};
  (void)propose_two_files(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  REQUIRE(repo.read("src/a.txt") == "a as approved\n");
  std::string backup;
  for (const auto& b : repo.find(".bak-kaicoder-"))
    if (b.starts_with("src/a.txt")) backup = b;
  REQUIRE_FALSE(backup.empty());
  TtyProcess rollback = repo.spawn_kai_tty({"rollback", "last"});
  REQUIRE(rollback.wait_for_prompt());
  {
    std::ofstream(repo.abs(backup), std::ios::binary | std::ios::trunc) << "the agent's bytes\n";
  }
  rollback.answer("y");
  Run r = rollback.finish();
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains(backup) && Contains("changed since it was taken"));
  CHECK(repo.read("src/a.txt") == "a as approved\n");
  CHECK(repo.read("docs/c.txt") == "c as approved\n");
}

TEST_CASE("attack: a file rewritten in place while the person reads a changeset, its stat data kept, is refused",
          "[e2e][attack][swaps]") {
  // After the answer a changeset's files are judged first by what a stat
  // tells; each file's bytes are read once, from the backup linked before
  // any file changes. The agent rewrites a file in place while the question
  // is on the screen: the same inode, size and mode, and its time put back.
  // Its bytes are not those shown: code 6, and nothing of the changeset
  // lands, neither file, nor a backup, nor the agent's bytes overwritten.
  TempRepo repo{{"src/a.txt", "a as it was\n"}, {"docs/c.txt", "c as it was\n"}};
  (void)propose_two_files(repo);
  std::map<std::string, std::string> before;
  Run r = rewritten_while_asked(repo, {"approve", "1"}, "a AS IT WAS", before);
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("'src/a.txt'") && Contains("stale"));
  auto after = tree_but_log(repo);
  CHECK(after == before);
  CHECK(repo.read("src/a.txt") == "a AS IT WAS\n");
  CHECK(repo.read("docs/c.txt") == "c as it was\n");
  CHECK(repo.find(".bak-kaicoder-").empty());
  CHECK(repo.find(".kaicoder-tmp").empty());
  CHECK(json_of(repo.kai({"--json", "show", "1"})).at("proposal").at("status") != "applied");
  // Nothing is left to finish or undo.
  CHECK(repo.ls(".kaicoder/intents").empty());
}

TEST_CASE("attack: a file rewritten in place while the person reads a rollback's question, its stat data kept, is "
          "refused",
          "[e2e][attack][swaps][rollback]") {
  // After the answer a rollback judges each file first by what a stat
  // tells and reads its bytes once, from the backup linked before any file
  // changes: the name must hold what the entry wrote. The agent rewrites a
  // file in place while the question is on the screen, the same inode,
  // size and mode, its time put back: code 6, the rollback named, and
  // nothing of the rollback lands (neither file, nor a backup of its own,
  // nor the agent's bytes overwritten).
  TempRepo repo{{"src/a.txt", "a as it was\n"}, {"docs/c.txt", "c as it was\n"}};
  (void)propose_two_files(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  const std::string entry = log_entries(repo).at(0).at("rollback_id");
  const auto backups = repo.find(".bak-kaicoder-");
  std::map<std::string, std::string> before;
  Run r = rewritten_while_asked(repo, {"rollback", "last"}, "A AS APPROVED", before);
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("cannot roll back " + entry + ": 'src/a.txt' was changed by hand"));
  auto after = tree_but_log(repo);
  CHECK(after == before);
  CHECK(repo.read("src/a.txt") == "A AS APPROVED\n");
  CHECK(repo.read("docs/c.txt") == "c as approved\n");
  CHECK(repo.find(".bak-kaicoder-") == backups);
  CHECK(repo.find(".kaicoder-tmp").empty());
  CHECK(repo.ls(".kaicoder/intents").empty());
  CHECK(json_of(repo.kai({"--json", "show", "1"})).at("proposal").at("status") == "applied");
  // Asked again, the rollback says so before the question.
  Run again = repo.kai_tty({"rollback", "last"}, "y");
  KAI_CHECK_EXIT(again, 6);
  CHECK_THAT(again.err, Contains("'src/a.txt' was changed by hand"));
  CHECK(again.tty.find("[y/N]") == std::string::npos);
}
