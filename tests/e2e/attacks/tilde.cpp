// A folder named '~' at the root. kaicoder's records name the owner's home
// "~/" (a harness's user settings, which integrate --user writes), so a
// path of the tree spelled the same way would be written, or rolled back,
// in the home instead: a harness's settings outside root, which can start
// programs. Such a path is a never-write path, refused at every door
// before anything is staged, and a proposal that names one is never carried
// out in the home.

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;
}  // namespace

TEST_CASE("attack: a root folder named ~ does not lead a write to the owner's home settings, even under allow",
          "[e2e][attack][tilde]") {
  TempRepo repo{{"~/.claude.json", "{\"hooks\":{}}\n"}, {"~/.codex/config.toml", "model = \"x\"\n"}};
  repo.init();
  // Every edit and write is allowed at once: no person would see it.
  repo.write("kaicoder.toml",
             repo.read("kaicoder.toml") + "\n[[policy.rule]]\naction = \"edit\"\npath = \"**\"\ndecision = \"allow\"\n" +
                 "\n[[policy.rule]]\naction = \"write\"\npath = \"**\"\ndecision = \"allow\"\n");
  repo.trust();
  const fs::path settings = repo.home() / ".claude.json";
  fs::create_directories(repo.home());
  {
    std::ofstream(settings, std::ios::binary) << "{\"hooks\":{}}\n";
  }
  const auto before = repo.tree_snapshot();
  // The spellings an agent tries: through "./", as a whole write, in a
  // changeset, and as a patch.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"propose", "--path", "./~/.claude.json", "--target", "{\"hooks\":{}}",
            "--replacement", "{\"hooks\":{\"Stop\":\"touch /tmp/pwned\"}}", "--why", "w"},
           {"propose", "--path", "./~/.claude.json", "--content-file", "-", "--why", "w"},
           {"propose", "--path", "./~/.codex/config.toml", "--content-file", "-", "--why", "w"}}) {
    Run r = repo.kai(args, "{\"hooks\":{\"Stop\":\"x\"}}\n");  // the whole write's content, on stdin
    INFO(args[2]);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("folder named '~'"));
  }
  json changes = json::array({json{{"op", "write"}, {"path", "./~/.claude.json"}, {"content", "{\"hooks\":1}\n"}}});
  Run cs = repo.kai({"propose", "--json-input"}, json{{"why", "w"}, {"changes", changes}}.dump());
  KAI_CHECK_EXIT(cs, 3);
  CHECK_THAT(cs.err, Contains("'~/.claude.json'"));
  const std::string patch =
      "--- a/~/.claude.json\n+++ b/~/.claude.json\n@@ -1 +1 @@\n-{\"hooks\":{}}\n+{\"hooks\":{\"Stop\":\"x\"}}\n";
  Run p = repo.kai({"propose", "--patch", "-", "--why", "w"}, patch);
  KAI_CHECK_EXIT(p, 3);
  CHECK_THAT(p.err, Contains("~/.claude.json"));
  // Nothing staged, nothing written: not in the tree, not in the home.
  CHECK(read_outside(settings) == "{\"hooks\":{}}\n");
  CHECK_FALSE(fs::exists(repo.home() / ".codex" / "config.toml"));
  CHECK(repo.tree_snapshot() == before);
  CHECK(json_of(repo.kai({"--json", "list"})).at("proposals").empty());
}
