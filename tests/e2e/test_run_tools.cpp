// The builds and git commands people run every day, run through kaicoder
// (issue 26, "Tool-compatibility tests"; kaicoder-run(1) "A run's effects"):
// each is proposed as a run, approved at a terminal, and its intended
// effects land with exit 0 and no second question, since nothing sensitive
// is among them. A toolchain that is not installed here (cargo, go, npm) is
// skipped with a message: these tests never install anything.
//
// `git mv` of a folder that is in the tree before the run: root's overlay
// is mounted with redirect_dir and moves it (the effects read settles the
// move first, lib/run/effects.hpp); an ordinary user's overlay, mounted in a
// user namespace with userxattr, cannot have redirect_dir, the kernel
// answers EXDEV, git fails with exit 128 having changed nothing, and the
// run's result says what works instead (kaicoder-run(1)); with [run]
// overlay = false the snapshots see the move as any tree would.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lib/run/sandbox.hpp"
#include "tests/support/checks.hpp"
#include "tests/support/throwaway_user.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

bool full_level_or_warn() {
  kai::NamespaceStatus ns = kai::namespace_status();
  if (!ns.ok || kai::landlock_status().abi == 0) {
    WARN("SKIPPED: the full sandbox is not available here: " << ns.detail);
    return false;
  }
  return true;
}

// git's output without its last newline.
std::string git_of(const TempRepo& repo, const std::vector<std::string>& args) {
  std::string out = repo.git(args);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Whether `argv` runs here, in the case's own environment (its private
// home): a toolchain that is missing or not set up is skipped, not installed.
// Looked up in PATH inside the case's namespace, as the run will look it up
// (a toolchain kept in the real home, such as rustup's, is hidden there).
bool tool_works(const TempRepo& repo, const std::vector<std::string>& argv) {
  std::vector<std::string> sh{"sh", "-c", "exec \"$0\" \"$@\""};
  sh.insert(sh.end(), argv.begin(), argv.end());
  Run r = repo.spawn(sh).finish(std::chrono::seconds(30));
  if (r.ok()) return true;
  WARN("SKIPPED: '" << argv.front() << "' does not run here (exit " << r.exit_code << ": "
                    << r.all().substr(0, 200) << "); install it to run this case");
  return false;
}

// Proposes `argv` as run `id`, approves it at a terminal and checks what a
// person expects of an everyday command: exit 0, no held question, nothing
// held in the record.
Run run_approved(const TempRepo& repo, int id, const std::vector<std::string>& argv,
                 std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  std::vector<std::string> args{"run", "--why", "everyday tools", "--"};
  args.insert(args.end(), argv.begin(), argv.end());
  KAI_REQUIRE_EXIT(repo.kai(args), 0);
  TtyProcess p = repo.spawn_kai_tty({"approve", std::to_string(id)});
  REQUIRE(p.wait_for_prompt());
  p.answer(show_json(repo, id).at("tier") == "confirm" ? "CONFIRM" : "y");
  Run r = p.finish(limit);
  INFO(r.all());
  KAI_CHECK_EXIT(r, 0);
  CHECK_THAT(r.all(), !Contains("Keep the held effects") && !Contains("HELD"));
  const auto shown = show_json(repo, id);
  CHECK(shown.at("status") != "held");
  CHECK(shown.at("result") == "exit 0");  // the command's own exit
  return r;
}

const std::vector<std::string> k_git_id = {"git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com"};

std::vector<std::string> git_cmd(std::initializer_list<std::string> rest) {
  std::vector<std::string> v = k_git_id;
  v.insert(v.end(), rest);
  return v;
}

}  // namespace

TEST_CASE("a run of git add and then git commit lands the commit of the tree's content", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}};
  init_and_commit(repo);
  repo.write("notes/NEW.md", "new\n");
  const std::string before = git_of(repo, {"rev-parse", "HEAD"});
  run_approved(repo, 1, {"git", "add", "notes/NEW.md"});
  CHECK(git_of(repo, {"diff", "--cached", "--name-only"}) == "notes/NEW.md");
  run_approved(repo, 2, git_cmd({"commit", "-q", "-m", "add notes"}));
  CHECK(git_of(repo, {"rev-parse", "HEAD~1"}) == before);
  CHECK(git_of(repo, {"log", "-1", "--format=%s"}) == "add notes");
  CHECK(git_of(repo, {"status", "--porcelain", "--", "notes"}).empty());
  CHECK(repo.read("notes/NEW.md") == "new\n");
}

TEST_CASE("a run of git mv of a file renames it in the tree and the index", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}, {"old.txt", "moved\n"}};
  init_and_commit(repo);
  run_approved(repo, 1, {"git", "mv", "old.txt", "new.txt"});
  CHECK_FALSE(repo.exists("old.txt"));
  CHECK(repo.read("new.txt") == "moved\n");
  CHECK(git_of(repo, {"diff", "--cached", "--name-status", "-M"}) == "R100\told.txt\tnew.txt");
}

TEST_CASE("a run of git mv of a folder from before the run renames it in the tree and the index",
          "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}, {"src/one.txt", "one\n"}, {"src/two.txt", "two\n"}, {"src/deep/three.txt", "3\n"}};
  repo.write("src/tool", "#!/bin/sh\n");
  fs::permissions(repo.path() / "src/tool", fs::perms::owner_exec, fs::perm_options::add);
  fs::create_symlink("one.txt", repo.path() / "src/link");
  init_and_commit(repo);
  Run r = run_approved(repo, 1, {"git", "mv", "src", "lib"});
  if (r.all().find("an overlay of root that moves folders") == std::string::npos &&
      r.all().find("an overlay of root") != std::string::npos) {
    WARN("SKIPPED: only root's overlay moves a folder (an ordinary user's case is below)");
    return;
  }
  CHECK_FALSE(repo.exists("src"));
  CHECK(repo.read("lib/one.txt") == "one\n");
  CHECK(repo.read("lib/deep/three.txt") == "3\n");
  CHECK((fs::status(repo.path() / "lib/tool").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(fs::read_symlink(repo.path() / "lib/link") == "one.txt");
  CHECK(git_of(repo, {"diff", "--cached", "--name-status", "-M"}) ==
        "R100\tsrc/deep/three.txt\tlib/deep/three.txt\nR100\tsrc/link\tlib/link\n"
        "R100\tsrc/one.txt\tlib/one.txt\nR100\tsrc/tool\tlib/tool\nR100\tsrc/two.txt\tlib/two.txt");
  CHECK(git_of(repo, {"status", "--porcelain", "--untracked-files=all", "--", "src", "lib"}).find("??") ==
        std::string::npos);
  // One rollback puts the folder back where it was.
  Run back = repo.kai_tty({"rollback", "last"}, "y");
  INFO(back.all());
  KAI_CHECK_EXIT(back, 0);
  CHECK(repo.read("src/one.txt") == "one\n");
  CHECK(repo.read("src/deep/three.txt") == "3\n");
  CHECK_FALSE(repo.exists("lib/one.txt"));
}

TEST_CASE("a run that moves a folder, adds to it and moves a folder out of it lands what the command left",
          "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}, {"src/one.txt", "one\n"}, {"src/two.txt", "two\n"}, {"src/deep/three.txt", "3\n"},
                {"src/deep/more/four.txt", "4\n"}};
  init_and_commit(repo);
  run_approved(repo, 1,
               {"sh", "-c",
                "mv src lib && echo more > lib/added.txt && mkdir out && mv lib/deep out/deeper && "
                "echo new > out/deeper/more/five.txt && git add -A"});
  CHECK_FALSE(repo.exists("src"));
  CHECK(repo.read("lib/one.txt") == "one\n");
  CHECK_FALSE(repo.exists("lib/deep"));
  CHECK(repo.read("lib/two.txt") == "two\n");
  CHECK(repo.read("lib/added.txt") == "more\n");
  CHECK(repo.read("out/deeper/three.txt") == "3\n");
  CHECK(repo.read("out/deeper/more/four.txt") == "4\n");
  CHECK(repo.read("out/deeper/more/five.txt") == "new\n");
  // The index is the tree as the command left it: nothing unstaged, nothing untracked.
  CHECK(git_of(repo, {"diff", "--name-only"}).empty());
  CHECK(git_of(repo, {"ls-files", "--", "lib", "out", "src"}) ==
        "lib/added.txt\nlib/one.txt\nlib/two.txt\nout/deeper/more/five.txt\nout/deeper/more/four.txt\n"
        "out/deeper/three.txt");
}

TEST_CASE("with [run] overlay = false a run of git mv of a folder renames it from snapshots",
          "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}, {"src/one.txt", "one\n"}, {"src/two.txt", "two\n"}};
  init_and_commit(repo);
  std::string toml = repo.read("kaicoder.toml");
  REQUIRE(toml.find("\noverlay = true\n") != std::string::npos);
  toml.replace(toml.find("\noverlay = true\n"), 16, "\noverlay = false\n");
  repo.write("kaicoder.toml", toml);
  repo.trust();
  Run r = run_approved(repo, 1, {"git", "mv", "src", "lib"});
  CHECK_THAT(r.all(), !Contains("an overlay of root"));
  CHECK_FALSE(repo.exists("src"));
  CHECK(repo.read("lib/two.txt") == "two\n");
  CHECK(git_of(repo, {"diff", "--cached", "--name-status", "-M"}) ==
        "R100\tsrc/one.txt\tlib/one.txt\nR100\tsrc/two.txt\tlib/two.txt");
}

TEST_CASE("as an ordinary user a run of git mv of a folder from before the run meets EXDEV and says what works",
          "[e2e][effects][tools][users]") {
  if (!full_level_or_warn() || !UnprivilegedUser::available()) return;
  TempRepo repo{{"a.txt", "a\n"}, {"src/one.txt", "one\n"}, {"src/two.txt", "two\n"},
                {"gitmv.sh", "git mv src lib\n"}, {"move.sh", "mv src lib && git add -A src lib\n"}};
  init_and_commit(repo);
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") +
                                  "\n[[policy.rule]]\naction = \"run\"\ncommand = \"sh gitmv.sh\"\n"
                                  "decision = \"allow\"\n[[policy.rule]]\naction = \"run\"\n"
                                  "command = \"sh move.sh\"\ndecision = \"allow\"\n");
  repo.trust();
  repo.git({"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "rules", "kaicoder.toml"});
  const std::string index_before = git_of(repo, {"ls-files", "-s"});
  UnprivilegedUser user(repo);
  // The user's group too, in the index as well: an overlay in a user
  // namespace copies only what it can map.
  const std::string chown = "chown -R " + user.name + ":nogroup '" + repo.path().parent_path().string() + "'";
  REQUIRE(std::system(chown.c_str()) == 0);
  repo.git({"-c", "safe.directory=*", "update-index", "-q", "--really-refresh"});
  REQUIRE(std::system(chown.c_str()) == 0);
  const fs::path out = repo.path().parent_path() / "run.out";
  auto as_user = [&](const std::vector<std::string>& argv) {
    std::string cmd =
        "cd '" + repo.path().string() + "' && " + user.shell(argv) + " </dev/null >'" + out.string() + "' 2>&1";
    (void)std::system(cmd.c_str());
    std::ifstream in(out);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string seen = as_user({kaicoder_bin(), "run", "--why", "t", "--", "sh", "gitmv.sh"});
  INFO(seen);
  if (seen.find("an overlay of root") == std::string::npos) {
    WARN("SKIPPED: the run did not use the overlay here: " << seen);
    return;
  }
  CHECK_THAT(seen, Contains("Invalid cross-device link") && Contains("the command met EXDEV") &&
                       Contains("move it with mv, which copies, and then git add -A") &&
                       Contains("[run] overlay = false"));
  CHECK(repo.read("src/one.txt") == "one\n");
  CHECK_FALSE(repo.exists("lib"));
  CHECK(git_of(repo, {"-c", "safe.directory=*", "ls-files", "-s"}) == index_before);
  // What the note says works: mv copies the folder, git add -A records the move.
  const std::string moved = as_user({kaicoder_bin(), "run", "--why", "t", "--", "sh", "move.sh"});
  INFO(moved);
  CHECK_FALSE(repo.exists("src"));
  CHECK(repo.read("lib/one.txt") == "one\n");
  CHECK(git_of(repo, {"-c", "safe.directory=*", "diff", "--cached", "--name-status", "-M"}) ==
        "R100\tsrc/one.txt\tlib/one.txt\nR100\tsrc/two.txt\tlib/two.txt");
}

TEST_CASE("a run of git checkout -b makes the branch at the current commit and moves HEAD to it",
          "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}};
  init_and_commit(repo);
  const std::string head = git_of(repo, {"rev-parse", "HEAD"});
  run_approved(repo, 1, {"git", "checkout", "-q", "-b", "feature"});
  CHECK(git_of(repo, {"rev-parse", "--abbrev-ref", "HEAD"}) == "feature");
  CHECK(git_of(repo, {"rev-parse", "feature"}) == head);
}

TEST_CASE("a run of make builds its target", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"in.txt", "input\n"},
                {"Makefile", "out/hello.txt: in.txt\n\tmkdir -p out\n\tcp in.txt out/hello.txt\n\techo made >> "
                             "out/hello.txt\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"make", "--version"})) return;
  run_approved(repo, 1, {"make"});
  CHECK(repo.read("out/hello.txt") == "input\nmade\n");
}

TEST_CASE("a run of cmake configures and builds a small project", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(tiny C)\nadd_executable(tiny main.c)\n"},
                {"main.c", "int main(void) { return 0; }\n"},
                {".gitignore", "build/\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"cmake", "--version"})) return;
  run_approved(repo, 1, {"cmake", "-S", ".", "-B", "build"}, std::chrono::seconds(120));
  CHECK(repo.exists("build/CMakeCache.txt"));
  run_approved(repo, 2, {"cmake", "--build", "build"}, std::chrono::seconds(120));
  CHECK(repo.exists("build/tiny"));
  CHECK((repo.mode("build/tiny") & 0100u) != 0u);
}

TEST_CASE("a run of cmake into a build folder that is not ignored lands it too", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(tiny C)\nadd_executable(tiny main.c)\n"},
                {"main.c", "int main(void) { return 0; }\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"cmake", "--version"})) return;
  run_approved(repo, 1, {"cmake", "-S", ".", "-B", "out"}, std::chrono::seconds(120));
  run_approved(repo, 2, {"cmake", "--build", "out"}, std::chrono::seconds(120));
  CHECK(repo.exists("out/tiny"));
}

TEST_CASE("a run of python3 -m venv makes a virtual environment in the tree", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}, {".gitignore", ".venv/\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"python3", "-c", "import venv, ensurepip"})) return;
  run_approved(repo, 1, {"python3", "-m", "venv", ".venv"}, std::chrono::seconds(180));
  CHECK(repo.exists(".venv/pyvenv.cfg"));
  CHECK(repo.exists(".venv/bin/python"));
  CHECK(repo.exists(".venv/bin/pip"));
  // The environment works: its python runs from the tree.
  Run py = repo.spawn({repo.abs(".venv/bin/python").string(), "-c", "import sys; print(sys.prefix)"}).finish();
  INFO(py.all());
  CHECK(py.ok());
  CHECK_THAT(py.out, Contains(".venv"));
}

TEST_CASE("a run of cargo build builds a crate with no dependencies", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"},
                {"src/main.rs", "fn main() {}\n"},
                {".gitignore", "target/\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"cargo", "--version"})) return;
  run_approved(repo, 1, {"cargo", "build", "--offline", "-q"}, std::chrono::seconds(180));
  CHECK(repo.exists("target/debug/tiny"));
  CHECK(repo.exists("Cargo.lock"));
}

TEST_CASE("a run of go build builds a module with no dependencies", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"go.mod", "module example.com/tiny\n\ngo 1.18\n"},
                {"main.go", "package main\n\nfunc main() {}\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"go", "version"})) return;
  run_approved(repo, 1, {"go", "build", "-o", "tiny", "."}, std::chrono::seconds(180));
  CHECK(repo.exists("tiny"));
}

TEST_CASE("a run of npm install installs a local package", "[e2e][effects][tools]") {
  if (!full_level_or_warn()) return;
  TempRepo repo{{"package.json", R"({"name": "app", "version": "1.0.0", "private": true,
 "dependencies": {"local-lib": "file:./local-lib"}}
)"},
                {"local-lib/package.json", R"({"name": "local-lib", "version": "1.0.0", "main": "index.js"}
)"},
                {"local-lib/index.js", "module.exports = 42;\n"},
                {".gitignore", "node_modules/\n"}};
  init_and_commit(repo);
  if (!tool_works(repo, {"npm", "--version"})) return;
  run_approved(repo, 1, {"npm", "install", "--offline", "--no-audit", "--no-fund"}, std::chrono::seconds(180));
  CHECK(repo.exists("node_modules/local-lib"));
  CHECK(repo.exists("package-lock.json"));
  Run node = repo.spawn({"node", "-e", "console.log(require('local-lib'))"}).finish();
  INFO(node.all());
  CHECK(node.out == "42\n");
}
