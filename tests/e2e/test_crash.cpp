// Crash safety (SPEC §5): kaicoder is killed with SIGKILL at each step of an
// apply or a rollback (the KAICODER_FAULT points of lib/gate/apply.cpp, compiled
// in with KAICODER_FAULTS), then any next command must leave the tree wholly
// old or wholly new, with every applied change backed up and logged once.

#include <csignal>
#include <filesystem>
#include <optional>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using json = nlohmann::json;

const char* const k_points[] = {"after-intent",  "after-backup",  "after-replace", "after-journal",
                                "after-pointer", "after-changelog", "after-status"};

const std::string k_original = "line one\nline two\nline three\n";

// What one scenario changes: `path` goes from `before` to `after` (nullopt = no file).
struct Change {
  std::string path;
  std::optional<std::string> before, after;
};

std::optional<std::string> state_of(const TempRepo& repo, const std::string& path) {
  if (!repo.exists(path)) return std::nullopt;
  return repo.read(path);
}

std::string show(const std::optional<std::string>& s) { return s ? "\"" + *s + "\"" : "(no file)"; }

// Names anywhere under the repo, .kaicoder/ included, that contain `part`.
std::vector<std::string> anywhere(const TempRepo& repo, const std::string& part) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(repo.path())) {
    if (e.path().filename() == ".git") continue;
    if (e.path().filename().string().find(part) != std::string::npos)
      out.push_back(e.path().lexically_relative(repo.path()).string());
  }
  return out;
}

std::vector<std::string> intents(const TempRepo& repo) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(repo.abs(".kaicoder/intents"), ec))
    out.push_back(e.path().filename().string());
  return out;
}

// The next command that proposes or decides finishes or undoes whatever a
// crash left half done (list, show and log only read); a new proposal of an
// unrelated file is the least an agent would run.
Run recover(const TempRepo& repo) {
  return repo.kai({"propose", "--path", "unrelated.txt", "--content-file", "-", "--why", "next"}, "next\n");
}

// Entries whose rollback id is `id`.
size_t entries_with_id(const json& entries, const std::string& id) {
  size_t n = 0;
  for (const auto& e : entries) n += e.at("rollback_id") == id;
  return n;
}

// After a crash: the next command recovers, and leaves `c`'s file wholly
// before or wholly after, with no temp file or intent behind and the log
// readable. Whether it is the after.
bool recovered_new(TempRepo& repo, const Change& c) {
  KAI_REQUIRE_EXIT(recover(repo), 0);
  auto now = state_of(repo, c.path);
  INFO("file is " << show(now));
  const bool is_old = now == c.before, is_new = now == c.after;
  REQUIRE((is_old || is_new));
  CHECK(anywhere(repo, "kaicoder-tmp").empty());
  CHECK(intents(repo).empty());
  KAI_CHECK_EXIT(repo.kai({"log"}), 0);
  return is_new;
}

TEST_CASE(
    "a crash at any step of an apply leaves the file wholly old or wholly new, and the next command "
    "finishes or undoes it",
    "[e2e][crash][long]") {
  const std::string action = GENERATE(as<std::string>{}, "edit", "create", "overwrite", "delete");
  INFO("during " << action);

  // Made, proposed and approved once, then restored before each fault point.
  TempRepo repo{{"f.txt", k_original}};
  repo.init();
  repo.chmod("f.txt", 0640);
  Change c;
  if (action == "edit") {
    c = {"f.txt", k_original, "line one\nline TWO\nline three\n"};
    KAI_REQUIRE_EXIT(repo.kai(edit("f.txt", "two", "TWO")), 0);
  } else if (action == "create") {
    c = {"sub/new.txt", std::nullopt, "brand new\n"};
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "sub/new.txt", "--content-file", "-", "--why", "w"}, "brand new\n"),
                     0);
  } else if (action == "overwrite") {
    c = {"f.txt", k_original, "rewritten\n"};
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "rewritten\n"), 0);
  } else {
    c = {"f.txt", k_original, std::nullopt};
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "f.txt", "--delete", "--why", "w"}), 0);
  }
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  repo.save();

  for (const std::string point : k_points) {
    INFO("fault " << point);
    repo.restore();
    Run crashed = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", point}});
    INFO(crashed.all());
    REQUIRE(crashed.killed_by(SIGKILL));

    const bool is_new = recovered_new(repo, c);
    json entries = log_entries(repo);
    json p = show_json(repo, 1);

    if (is_new) {
      CHECK(p.at("status") == "applied");
      std::string rid = p.at("rollback_id");
      REQUIRE_FALSE(rid.empty());
      CHECK(entries.size() == 1);
      CHECK(entries_with_id(entries, rid) == 1);
      std::vector<std::string> baks = repo.find(".bak-kaicoder-");
      if (c.before) {
        REQUIRE(baks.size() == 1);
        CHECK(baks[0] == c.path + ".bak-kaicoder-" + rid);
        CHECK(repo.read(baks[0]) == *c.before);
      } else {
        CHECK(baks.empty());
      }
      if (c.after && c.before) CHECK(repo.mode(c.path) == 0640u);
      // The finished change is as reversible as one that never crashed.
      KAI_CHECK_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
      CHECK(state_of(repo, c.path) == c.before);
    } else {
      CHECK(repo.find(".bak-kaicoder-").empty());
      CHECK(entries.empty());
      CHECK(p.at("status") == "approved");
      // Nothing happened, so the approval still stands and applying works.
      Run again = repo.kai({"--json", "apply", "1"});
      KAI_REQUIRE_EXIT(again, 0);
      CHECK(state_of(repo, c.path) == c.after);
      CHECK(log_entries(repo).size() == 1);
      if (c.after && c.before) CHECK(repo.mode(c.path) == 0640u);
    }
  }
}

TEST_CASE(
    "a crash at any step of a rollback leaves the file wholly old or wholly new, and the next command "
    "finishes or undoes it",
    "[e2e][crash][rollback][long]") {
  const std::string undone = GENERATE(as<std::string>{}, "edit", "create");
  INFO("while rolling back " << undone);

  // Made, proposed, approved and applied once, then restored before each fault point.
  TempRepo repo{{"f.txt", k_original}};
  repo.init();
  Change c;  // what the rollback changes
  if (undone == "edit") {
    c = {"f.txt", "line one\nline TWO\nline three\n", k_original};
    KAI_REQUIRE_EXIT(repo.kai(edit("f.txt", "two", "TWO")), 0);
  } else {
    c = {"new.txt", "made\n", std::nullopt};
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "new.txt", "--content-file", "-", "--why", "w"}, "made\n"), 0);
  }
  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  const std::string applied = json_of(a).at("applied").at("rollback_id");
  const auto backups_before = repo.find(".bak-kaicoder-");
  repo.save();

  for (const std::string point : k_points) {
    INFO("fault " << point);
    repo.restore();
    Run crashed = repo.kai_tty({"rollback", applied}, "y", {{"KAICODER_FAULT", point}});
    INFO(crashed.all());
    REQUIRE(crashed.prompted);
    REQUIRE(crashed.killed_by(SIGKILL));

    const bool is_new = recovered_new(repo, c);
    json entries = log_entries(repo);

    if (is_new) {
      REQUIRE(entries.size() == 2);
      json r = entries.at(0);
      CHECK(r.at("kind") == "rollback");
      std::string rid = r.at("rollback_id");
      CHECK(entries_with_id(entries, rid) == 1);
      CHECK(entries_with_id(entries, applied) == 1);
      CHECK(show_json(repo, 1).at("status") == "rolled-back");
      // The rollback snapshotted the bytes it replaced: beside the file, or
      // for a file it removed, in the state dir (so its folder can go).
      const bool removed = !c.after;
      std::string bak = c.path + ".bak-kaicoder-" + rid;
      if (removed) {
        const auto kept = repo.ls(".kaicoder/kept/" + rid);
        REQUIRE(kept.size() == 1);
        bak = ".kaicoder/kept/" + rid + "/" + kept[0];
      }
      REQUIRE(repo.exists(bak));
      CHECK(repo.read(bak) == *c.before);
      CHECK(repo.find(".bak-kaicoder-").size() == backups_before.size() + (removed ? 0 : 1));
      // And it can be undone in turn.
      KAI_CHECK_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
      CHECK(state_of(repo, c.path) == c.before);
    } else {
      CHECK(repo.find(".bak-kaicoder-") == backups_before);
      REQUIRE(entries.size() == 1);
      CHECK(entries.at(0).at("rollback_id") == applied);
      CHECK(show_json(repo, 1).at("status") == "applied");
      // Nothing happened: the rollback can simply be asked for again.
      KAI_CHECK_EXIT(repo.kai_tty({"rollback", applied}, "y"), 0);
      CHECK(state_of(repo, c.path) == c.after);
      CHECK(log_entries(repo).size() == 2);
    }
  }
}

// SPEC §5: the next command that proposes or decides finishes or undoes a
// half-done apply. The read-only ones (list, log, show) change nothing, not
// even that: recovery writes and can run hooks, and they run on every TAB.
TEST_CASE("a read-only command run first after a crash changes nothing, and the next proposal finishes the change",
          "[e2e][crash]") {
  const std::string reader = GENERATE(as<std::string>{}, "list", "log", "show");
  INFO("first command after the crash: " << reader);
  TempRepo repo{{"f.txt", k_original}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("f.txt", "two", "TWO")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  Run crashed = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", "after-replace"}});
  REQUIRE(crashed.killed_by(SIGKILL));
  REQUIRE(repo.read("f.txt") == "line one\nline TWO\nline three\n");

  std::vector<std::string> args = {reader};
  if (reader == "show") args.push_back("1");
  const auto left = intents(repo);
  REQUIRE_FALSE(left.empty());
  const std::string meta = repo.read(".kaicoder/staging/1/meta.json");
  KAI_REQUIRE_EXIT(repo.kai(args), 0);
  CHECK(intents(repo) == left);
  CHECK(repo.read(".kaicoder/staging/1/meta.json") == meta);
  KAI_REQUIRE_EXIT(recover(repo), 0);
  CHECK(intents(repo).empty());
  json entries = log_entries(repo);
  CHECK(entries.size() == 1);
  CHECK(show_json(repo, 1).at("status") == "applied");
}

TEST_CASE("an armed fault point that is never reached changes nothing", "[e2e][crash]") {
  TempRepo repo{{"f.txt", k_original}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("f.txt", "two", "TWO")), 0);
  Run a = repo.kai_tty({"approve", "1"}, "y", {{"KAICODER_FAULT", "no-such-point"}});
  KAI_REQUIRE_EXIT(a, 0);
  CHECK(repo.read("f.txt") == "line one\nline TWO\nline three\n");
}

}  // namespace
