// Undo for runs (SPEC §5): a confirm-tier run is snapshotted, the files it
// created, changed and deleted are logged, and `rollback` puts them back
// byte for byte — without touching the user's git index, refs or stash —
// refusing where a later entry changed them unless --force.

#include <filesystem>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string git_out(const TempRepo& repo, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  Run r = repo.spawn(argv).finish();
  REQUIRE(r.ok());
  return r.out;
}

// The tree without what kaicoder itself adds: the changelog and backups.
template <typename Map>
Map users_only(Map t) {
  std::erase_if(t, [](const auto& kv) {
    return kv.first == "KAI-CODER-CHANGELOG.md" || kv.first.find(".bak-kaicoder-") != std::string::npos;
  });
  return t;
}
std::map<std::string, std::string> user_files(const TempRepo& repo) { return users_only(repo.tree_snapshot()); }

// The user's git state that a snapshot must never change.
struct GitState {
  std::string status, stash, refs, index;
  bool operator==(const GitState&) const = default;
};
GitState git_state(const TempRepo& repo) {
  GitState g;
  // First: `git status` itself refreshes the index when files have new mtimes.
  g.index = repo.read(".git/index");
  // The changelog appears with the first entry; it is kaicoder's, not the user's.
  std::string status = git_out(repo, {"status", "--porcelain", "--untracked-files=all"});
  for (size_t pos = 0, nl; pos < status.size(); pos = nl + 1) {
    nl = status.find('\n', pos);
    if (nl == std::string::npos) nl = status.size();
    std::string line = status.substr(pos, nl - pos);
    if (line.find("KAI-CODER-CHANGELOG.md") == std::string::npos) g.status += line + "\n";
  }
  g.stash = git_out(repo, {"stash", "list"});
  g.refs = git_out(repo, {"for-each-ref"});
  return g;
}

constexpr const char* k_edit_create_delete = "printf 'new\\n' > edit.txt; printf 'made\\n' > sub/made.txt; rm gone.txt";

// Stage `shell` as proposal `n` and approve it with CONFIRM; returns the
// run's rollback id.
std::string run_confirmed(TempRepo& repo, const std::string& shell, int n = 1) {
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "undo me", "--shell", shell}), 0);
  Run a = repo.kai_tty({"approve", std::to_string(n)}, "CONFIRM");
  KAI_REQUIRE_EXIT(a, 0);
  json e = log_entries(repo).at(0);
  REQUIRE(e.at("kind") == "run");
  std::string id = e.at("rollback_id");
  if (id != "\u2014") CHECK_THAT(a.out, Contains("kaicoder rollback " + id));
  return id;
}

}  // namespace

TEST_CASE("a confirm-tier run that edits, creates and deletes files is rolled back byte-exactly",
          "[e2e][run][rollback]") {
  TempRepo repo{{"edit.txt", "old\n"}, {"sub/keep.txt", "keep\n"}, {"tool", "#!/bin/sh\n"}};
  // Not *.sh: that is a confirm-tier path, whose mode change a run holds for CONFIRM.
  repo.chmod("tool", 0755);
  init_and_commit(repo);
  // Untracked: deleting a tracked file is held for CONFIRM (test_run_effects.cpp).
  repo.write("gone.txt", "bye\n");
  repo.write("untracked.txt", "not in git\n");
  (void)git_state(repo);  // let git settle its index first
  GitState git_before = git_state(repo);
  auto before = user_files(repo);
  auto modes = users_only(repo.mode_snapshot());
  std::string id = run_confirmed(repo, std::string(k_edit_create_delete) + "; rm untracked.txt; chmod 644 tool");
  CHECK(repo.read("edit.txt") == "new\n");
  CHECK_FALSE(repo.exists("gone.txt"));
  CHECK(repo.exists("sub/made.txt"));

  json e = log_entries(repo).at(0);
  CHECK(e.at("rollback") == "restore 5 files from snapshot " + id);
  CHECK(e.at("files") ==
        json::array({repo.abs("edit.txt").string(), repo.abs("gone.txt").string(), repo.abs("sub/made.txt").string(),
                     repo.abs("tool").string(), repo.abs("untracked.txt").string()}));
  CHECK(show_json(repo, 1).at("rollback_id") == id);

  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("from snapshot " + id));
  CHECK(user_files(repo) == before);
  CHECK(users_only(repo.mode_snapshot()) == modes);
  CHECK(git_state(repo) == git_before);
  json rb = log_entries(repo).at(0);
  CHECK(rb.at("kind") == "rollback");
  CHECK(rb.at("summary") == "rolled back " + id);
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
}

TEST_CASE("rolling back a run refuses where a later entry changed its file, and --force overrides",
          "[e2e][run][rollback]") {
  TempRepo repo{{"edit.txt", "old\n"}, {"sub/keep.txt", "keep\n"}};
  init_and_commit(repo);
  repo.write("gone.txt", "bye\n");  // untracked: its deletion lands with the rest
  auto before = user_files(repo);
  std::string id = run_confirmed(repo, k_edit_create_delete);
  KAI_REQUIRE_EXIT(repo.kai(edit("sub/made.txt", "made", "remade")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2"}, "y"), 0);
  std::string later = log_entries(repo).at(0).at("rollback_id");
  auto after_later = user_files(repo);

  Run refused = repo.kai_tty({"rollback", id}, "y");
  KAI_CHECK_EXIT(refused, 6);
  CHECK_THAT(refused.all(), Contains("sub/made.txt") && Contains(later));
  CHECK_FALSE(refused.prompted);
  CHECK(user_files(repo) == after_later);

  Run forced = repo.kai_tty({"rollback", "--force", id}, "y");
  KAI_REQUIRE_EXIT(forced, 0);
  CHECK(user_files(repo) == before);
  std::string rid = log_entries(repo).at(0).at("rollback_id");

  // The rollback is itself reversible: undoing it applies the run's files again.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(user_files(repo) == after_later);
}

TEST_CASE("a run's changes under a never-write folder are named as not restorable", "[e2e][run][rollback]") {
  TempRepo repo{{"edit.txt", "old\n"}};
  init_and_commit(repo);
  std::string id = run_confirmed(repo, "mkdir -p build && printf 'o\\n' > build/out.o; printf 'new\\n' > edit.txt");
  json e = log_entries(repo).at(0);
  CHECK(e.at("rollback") == "restore 1 file from snapshot " + id);
  CHECK_THAT(e.at("summary").get<std::string>(), Contains("not restorable: build/out.o"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read("edit.txt") == "old\n");
  CHECK(repo.read("build/out.o") == "o\n");  // kaicoder never writes there
}

TEST_CASE("a run with snapshots turned off stays irreversible", "[e2e][run][rollback]") {
  TempRepo repo{{"edit.txt", "old\n"}, {"kaicoder.toml", "[run]\nsnapshots_keep = 0\n"}};
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "t", "--shell", "printf 'new\\n' > edit.txt"}), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "CONFIRM"), 0);
  json e = log_entries(repo).at(0);
  CHECK(e.at("rollback_id") == "\u2014");
  CHECK(e.at("rollback") == "\u2014");
  CHECK_FALSE(repo.exists(".kaicoder/snapshots.git"));
}

TEST_CASE("an ordinary ask-tier run that edits, creates and deletes files is rolled back too", "[e2e][run][rollback]") {
  TempRepo repo{{"edit.txt", "old\n"},
                {"sub/keep.txt", "keep\n"},
                {"gen.py",
                 "import os\nopen('edit.txt', 'w').write('new\\n')\nopen('sub/made.txt', 'w').write('made\\n')\n"
                 "os.remove('gone.txt')\n"}};
  init_and_commit(repo);
  repo.write("gone.txt", "bye\n");  // untracked: its deletion lands with the rest
  auto before = user_files(repo);
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "generate", "--", "python3", "gen.py"}), 0);
  REQUIRE(show_json(repo, 1).at("tier") == "normal");
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(repo.read("edit.txt") == "new\n");
  CHECK(repo.exists("sub/made.txt"));
  CHECK_FALSE(repo.exists("gone.txt"));
  json e = log_entries(repo).at(0);
  REQUIRE(e.at("kind") == "run");
  std::string id = e.at("rollback_id");
  REQUIRE(id != "\u2014");
  CHECK(e.at("files") ==
        json::array({repo.abs("edit.txt").string(), repo.abs("gone.txt").string(), repo.abs("sub/made.txt").string()}));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(user_files(repo) == before);
}

TEST_CASE("a run's entry flags a guarded file it changed and counts its changes in ignored trees", "[e2e][run][undo]") {
  // gen.sh's content is invisible to the classifier: only the snapshot sees what it did.
  TempRepo repo{
      {"edit.txt", "old\n"},
      {".gitignore", "build/\n.env\n"},
      {".env", "TOKEN=one\n"},
      {"gen.sh", "printf 'TOKEN=two\\n' > .env\nmkdir -p build && printf o > build/a.o && printf o > build/b.o\n"}};
  init_and_commit(repo);
  // The full sandbox keeps a run away from .env altogether; the flag is for
  // the levels where only the snapshot sees what a run did to a guarded file.
  std::string cfg = repo.read("kaicoder.toml");
  const std::string full = "sandbox = \"full\"";
  REQUIRE(cfg.find(full) != std::string::npos);
  repo.write("kaicoder.toml", cfg.replace(cfg.find(full), full.size(), "sandbox = \"none\""));
  repo.trust();
  std::string id = run_confirmed(repo, "sh gen.sh; printf 'new\\n' > edit.txt");
  json e = log_entries(repo).at(0);
  std::string summary = e.at("summary");
  CHECK_THAT(summary, Contains("GUARDED FILE CHANGED: .env"));
  CHECK_THAT(summary, Contains("build/: 2 files changed (ignored, not restorable)"));
  CHECK_THAT(summary, !Contains("TOKEN"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read("edit.txt") == "old\n");
  CHECK(repo.read("build/a.o") == "o");  // ignored: counted, never touched
}

TEST_CASE("a rollback removes the empty folders a run created", "[e2e][run][undo]") {
  TempRepo repo{{"edit.txt", "old\n"}};
  init_and_commit(repo);
  std::string id = run_confirmed(repo, "mkdir -p made/deeper/still && mkdir kept && printf 'new\\n' > edit.txt");
  repo.write("kept/mine.txt", "the user's\n");  // a folder that is no longer empty stays
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read("edit.txt") == "old\n");
  CHECK_FALSE(repo.exists("made"));
  CHECK(repo.read("kept/mine.txt") == "the user's\n");
}

TEST_CASE("a run in a tree with a tracked file whose name is not UTF-8 says before it is approved that it cannot be "
          "restored",
          "[e2e][run][rollback]") {
  const std::string name = "n\xff.txt";
  TempRepo repo{{"keep.txt", "keep\n"}, {name, "x\n"}};
  init_and_commit(repo);
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "remove it", "--shell", "rm n*.txt; printf 'new\\n' > keep.txt"}), 0);
  // Declined: the person read why before answering, and nothing ran.
  Run no = repo.kai_tty({"approve", "1"}, "n");
  if (no.exit_code == 3) {
    // No overlay here: the effects would come from snapshots, which could
    // not put it back, so the run is refused (tests/e2e/attacks/effects.cpp).
    CHECK_THAT(no.all(), Contains("not run:") && Contains("n\\xff.txt"));
    CHECK(repo.read(name) == "x\n");
    return;
  }
  KAI_CHECK_EXIT(no, 4);
  CHECK_THAT(no.all(), Contains("restore:  not possible for 1 tracked file") && Contains("n\\xff.txt") &&
                           Contains("no rollback puts it back"));
  CHECK(repo.read(name) == "x\n");
  // Approved: it ran; the log names the file it could not restore, and the
  // rollback puts back what it can.
  Run a = repo.kai_tty({"approve", "1"}, "CONFIRM");
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.all(), Contains("restore:  not possible"));
  json e = log_entries(repo).at(0);
  const std::string summary = e.at("summary");
  // Read from the run's overlay (the full level), the deletion of a name
  // that is not UTF-8 never lands: the file stays. Read from the snapshots,
  // it happened, and is named as not restorable.
  const bool overlay = Contains("not applied: a name that is not UTF-8: n\\xff.txt").match(summary);
  CHECK(repo.exists(name) == overlay);
  if (!overlay) CHECK_THAT(summary, Contains("changed, not restorable: n\\xff.txt"));
  const std::string rid = e.at("rollback_id");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(repo.read("keep.txt") == "keep\n");
  // A run in a tree without such names says nothing of it.
  TempRepo plain{{"keep.txt", "keep\n"}};
  init_and_commit(plain);
  KAI_REQUIRE_EXIT(plain.kai({"run", "--why", "w", "--shell", "printf 'new\\n' > keep.txt"}), 0);
  Run b = plain.kai_tty({"approve", "1"}, "n");
  CHECK_THAT(b.all(), !Contains("restore:"));
}

TEST_CASE("a file larger than kaicoder reads whole, made by a run, is rolled back without reading it whole",
          "[e2e][run][rollback]") {
  // Its rollback judges it by a stat after the answer and hashes it as a
  // stream where it is moved aside (take_backup): 72 MiB, past the 64 MiB
  // kaicoder reads whole.
  TempRepo repo{{"edit.txt", "old\n"}};
  init_and_commit(repo);
  std::string id = run_confirmed(repo, "head -c 75497472 /dev/zero > big.bin; printf 'new\\n' > edit.txt");
  REQUIRE(fs::file_size(repo.abs("big.bin")) == 75497472u);
  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_FALSE(repo.exists("big.bin"));
  CHECK(repo.read("edit.txt") == "old\n");
  // Undone again: the big file comes back from where the rollback kept it.
  std::string rid = log_entries(repo).at(0).at("rollback_id");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(fs::file_size(repo.abs("big.bin")) == 75497472u);
  CHECK(repo.read("edit.txt") == "new\n");
}
