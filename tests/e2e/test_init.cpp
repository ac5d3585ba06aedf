// `kaicoder init`: the question at the terminal, what it writes, and --json.

#include <fstream>
#include <iterator>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("init asks at the terminal, writes the config and state folder, keeps them out of git and trusts the root",
          "[e2e][init]") {
  TempRepo repo{{"a.txt", "a\n"}};
  Run r = repo.kai_tty({"init"}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(r.prompted);
  CHECK_THAT(r.tty, Contains("Make " + repo.path().string() + " a kaicoder root and trust it?"));
  CHECK_THAT(r.out, Contains("initialised kaicoder in " + repo.path().string()));
  CHECK(repo.exists("kaicoder.toml"));
  {
    // The written config is the documented example, byte for byte.
    std::ifstream ex(std::string(KAICODER_SOURCE_DIR) + "/kaicoder.toml.example", std::ios::binary);
    std::string example((std::istreambuf_iterator<char>(ex)), std::istreambuf_iterator<char>());
    CHECK(repo.read("kaicoder.toml") == example);
  }
  CHECK(std::filesystem::is_directory(repo.abs(".kaicoder")));
  std::string gi = repo.read(".gitignore");
  CHECK_THAT(gi, Contains(".kaicoder/\n"));
  CHECK_THAT(gi, Contains("*.bak-kaicoder-*\n"));

  // The owner's list of trusted roots names it with the digest of those bytes.
  json list = json::parse(read_outside(repo.owner_dir() / "trusted-roots.json"));
  REQUIRE(list.at("roots").size() == 1);
  CHECK(list.at("roots")[0].at("root") == repo.path().string());
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);

  SECTION("a second init refuses to overwrite") {
    auto before = repo.tree_snapshot();
    Run again = repo.kai_tty({"init"}, "y");
    CHECK(again.exit_code == 6);
    CHECK_FALSE(again.prompted);
    CHECK_THAT(again.err, Contains("already exists") && Contains("kaicoder trust"));
    CHECK(repo.tree_snapshot() == before);
  }
}

TEST_CASE("init without a terminal, or answered no, writes nothing and trusts nothing", "[e2e][init]") {
  TempRepo repo{{"a.txt", "a\n"}};
  auto before = repo.tree_snapshot();
  Run r = repo.kai({"init"});
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("terminal"));
  Run no = repo.kai_tty({"init"}, "n");
  KAI_CHECK_EXIT(no, 4);
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder"));
  CHECK_FALSE(std::filesystem::exists(repo.owner_dir() / "trusted-roots.json"));
}

TEST_CASE("init --json names the root, the config and what went into .gitignore", "[e2e][init]") {
  TempRepo repo{{".gitignore", "*.o\n"}};
  Run r = repo.kai_tty({"--json", "init"}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("root") == repo.path().string());
  CHECK(j.at("config") == repo.abs("kaicoder.toml").string());
  CHECK(j.at("gitignore_added") == json::array({".kaicoder/", "*.bak-kaicoder-*"}));
  CHECK(repo.read(".gitignore") == "*.o\n.kaicoder/\n*.bak-kaicoder-*\n");
}

}  // namespace
