// The dependency scan runs on every propose over every tracked file, so a
// tracked file built to make the import scanners slow is an attack on every
// later proposal. Each case commits one such file at the size that once took
// tens of seconds and gigabytes, proposes an edit, and checks that the
// proposal finishes (within the harness's time limit: no timed assertion)
// with the dependency edges found right.

#include "bench/hostile_deps.hpp"
#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// A repository holding `f`'s files (the hostile one and the ones it names),
// committed, and made a root.
void commit_hostile(TempRepo& repo, const kai::bench::HostileFile& f) {
  for (const auto& path : f.tracked) repo.write(path, path == f.path ? f.text : "// " + path + "\n");
  KAI_REQUIRE_EXIT(repo.spawn({"git", "add", "-A"}).finish(), 0);
  KAI_REQUIRE_EXIT(
      repo.spawn({"git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "hostile"})
          .finish(),
      0);
  repo.init();
}

// `propose --dry-run` of an edit to `target`: finishes, and its risk reason
// names `dependent` as a file that depends on it.
void proposes_with_dependent(TempRepo& repo, const std::string& target, const std::string& dependent) {
  Run r = repo.kai({"--json", "propose", "--dry-run", "--path", target, "--target", "// " + target, "--replacement",
                    "// changed", "--why", "w"});
  REQUIRE_FALSE(r.timed_out);
  KAI_REQUIRE_EXIT(r, 0);
  const json j = json_of(r);
  const std::string reason = j.value("risk_reason", "");
  INFO(r.out);
  CHECK_THAT(reason, Contains("depend"));
  CHECK_THAT(reason, Contains(dependent));
  CHECK_THAT(reason, !Contains("stopped"));
}

}  // namespace

TEST_CASE("attack: a tracked Rust file of 20,000 nested use groups does not stall a proposal", "[attack][scanners]") {
  TempRepo repo;
  const auto f = kai::bench::rust_nested(100'000);
  commit_hostile(repo, f);
  proposes_with_dependent(repo, "src/a/a.rs", f.path);
}

TEST_CASE("attack: a tracked 120 KB chain of use crate::a::a::… does not stall a proposal", "[attack][scanners]") {
  TempRepo repo;
  const auto f = kai::bench::rust_chain(120'000);
  commit_hostile(repo, f);
  proposes_with_dependent(repo, "src/a/a.rs", f.path);
}

TEST_CASE("attack: 60,000 #include lines in a file 300 folders deep do not stall a proposal", "[attack][scanners]") {
  TempRepo repo;
  const auto f = kai::bench::c_includes(1'000'000);
  commit_hostile(repo, f);
  proposes_with_dependent(repo, "include/h1.h", "x.c");
}
