// Every verb explains itself wherever it is asked: `--help` must answer
// outside a repository, and must not create anything there. (Help with a
// store in a broken state is tested with each state in test_doctor.cpp.)

#include <filesystem>

#include "tests/support/checks.hpp"
#include "tests/support/command_table.hpp"

using namespace kai::test;
using Catch::Matchers::Contains;

TEST_CASE("every verb answers --help outside a repository, and so does kaicoder itself", "[e2e][meta]") {
  TempRepo repo;
  std::filesystem::remove_all(repo.abs(".git"));  // now just a folder
  const std::vector<std::string> all = command_table_verbs(KAICODER_SOURCE_DIR);
  REQUIRE(all.size() >= 13);
  Run top = repo.kai({"--help"});
  KAI_CHECK_EXIT(top, 0);
  for (const std::string& verb : all) {
    INFO(verb);
    CHECK_THAT(top.out, Contains(verb));
    Run r = repo.kai({verb, "--help"});
    KAI_CHECK_EXIT(r, 0);
    CHECK_THAT(r.out, Contains(verb) && Contains("--"));
  }
  CHECK_FALSE(repo.exists(".kaicoder"));  // asking for help changes nothing
}
