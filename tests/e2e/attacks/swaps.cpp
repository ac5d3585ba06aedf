// What the agent changes while the person reads the question: a changeset's
// folders are opened again after the answer, beneath root, with no symlink
// followed and no mount crossed, so a folder swapped for a symlink while the
// question is on the screen takes no write through it, and nothing of the
// changeset lands.

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
}  // namespace

TEST_CASE("attack: a folder swapped for a symlink while the person reads a changeset takes no write through it",
          "[e2e][attack][swaps]") {
  TempRepo repo{{"src/a.txt", "a as it was\n"}, {"docs/c.txt", "c as it was\n"}};
  repo.init();
  // Outside root, a folder that looks like src/ from a stat: the same name,
  // the same mode, the same bytes.
  const fs::path outside = repo.home() / "outside";
  fs::create_directories(outside);
  {
    std::ofstream(outside / "a.txt", std::ios::binary) << "a as it was\n";
  }
  json changes = json::array({json{{"op", "write"}, {"path", "docs/c.txt"}, {"content", "c as approved\n"}},
                              json{{"op", "write"}, {"path", "src/a.txt"}, {"content", "a as approved\n"}}});
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, json{{"why", "two files"}, {"changes", changes}}.dump()), 0);
  TtyProcess approver = repo.spawn_kai_tty({"approve", "1"});
  REQUIRE(approver.wait_for_prompt());
  // While the question is on the screen: src/ goes, and a symlink to the
  // folder outside takes its name.
  fs::rename(repo.abs("src"), repo.abs("src.moved"));
  fs::create_directory_symlink(outside, repo.abs("src"));
  auto before = repo.tree_snapshot();
  before.erase("KAI-CODER-CHANGELOG.md");
  approver.answer("y");
  Run r = approver.finish();
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("'src/a.txt'") && Contains("symlink 'src'"));
  // Nothing was written through the link, and nothing of the changeset landed.
  CHECK(read_outside(outside / "a.txt") == "a as it was\n");
  CHECK(std::distance(fs::directory_iterator(outside), fs::directory_iterator{}) == 1);
  auto after = repo.tree_snapshot();
  after.erase("KAI-CODER-CHANGELOG.md");
  CHECK(after == before);
  // The failure is logged, naming the file and why.
  CHECK_THAT(repo.read("KAI-CODER-CHANGELOG.md"), Contains("failed: 'src/a.txt'") && Contains("symlink 'src'"));
  CHECK(repo.read("docs/c.txt") == "c as it was\n");
  CHECK(repo.find(".bak-kaicoder-").empty());
  CHECK(json_of(repo.kai({"--json", "show", "1"})).at("proposal").at("status") != "applied");
}
