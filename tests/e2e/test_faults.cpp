// Faults other than a crash (SPEC §5): a disk that fills in the middle of a
// changeset, a stage cut short or killed, a state dir removed and made anew.
// The full disk is the KAICODER_FAULT "enospc:POINT:N" of lib/util/fault
// (compiled in with KAICODER_FAULTS): the Nth write there fails with ENOSPC.

#include <csignal>
#include <filesystem>
#include <map>
#include <optional>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int k_ten = 10;

std::string ten_name(int i) { return fmt::format("f{}.txt", i); }

// A changeset over ten files: eight replaced, one new in a new folder, one removed.
std::map<std::string, std::optional<std::string>> ten_before() {
  std::map<std::string, std::optional<std::string>> s;
  for (int i = 0; i < k_ten; ++i) s[ten_name(i)] = fmt::format("old {}\n", i);
  s["deep/er/new.txt"] = std::nullopt;
  return s;
}

void propose_ten(const TempRepo& repo) {
  json changes = json::array();
  for (int i = 0; i < k_ten - 1; ++i)
    changes.push_back({{"op", "write"}, {"path", ten_name(i)}, {"content", fmt::format("new {}\n", i)}});
  changes.push_back({{"op", "delete"}, {"path", ten_name(k_ten - 1)}});
  changes.push_back({{"op", "write"}, {"path", "deep/er/new.txt"}, {"content", "made\n"}});
  json req = {{"why", "ten files"}, {"changes", changes}};
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, req.dump()), 0);
}

std::map<std::string, std::optional<std::string>> ten_state(const TempRepo& repo) {
  std::map<std::string, std::optional<std::string>> s;
  for (const auto& [path, _] : ten_before())
    s[path] = repo.exists(path) ? std::optional<std::string>(repo.read(path)) : std::nullopt;
  return s;
}

std::vector<std::string> json_records_in(const TempRepo& repo, const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(repo.abs(dir), ec))
    if (e.path().extension() == ".json") out.push_back(e.path().filename().string());
  return out;
}

void fill_ten(TempRepo& repo) {
  for (int i = 0; i < k_ten; ++i) repo.write(ten_name(i), fmt::format("old {}\n", i));
  repo.init();
}

}  // namespace

TEST_CASE("a full disk at any write of a ten-file changeset leaves every file as it was, and the store clean",
          "[e2e][faults][enospc]") {
  TempRepo repo;
  fill_ten(repo);
  propose_ten(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto before = ten_state(repo);
  REQUIRE(before == ten_before());
  const std::string meta = show_json(repo, 1).at("status");
  REQUIRE(meta == "approved");

  // Every write the apply makes, one after the other, until one is not reached.
  int n = 1;
  for (; n < 100; ++n) {
    INFO("the write that fails: " << n);
    Run r = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", fmt::format("enospc:txn-write:{}", n)}});
    INFO(r.all());
    if (r.exit_code == 0) break;
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("No space left on device"));
    CHECK_THAT(r.err, Contains("nothing changed"));
    CHECK(ten_state(repo) == before);
    CHECK(repo.find(".bak-kaicoder-").empty());
    CHECK(repo.find("kaicoder-tmp").empty());
    CHECK_FALSE(repo.exists("deep"));
    CHECK(json_records_in(repo, ".kaicoder/intents").empty());
    CHECK(json_records_in(repo, ".kaicoder/journal").empty());
    CHECK_FALSE(repo.exists(".kaicoder/reserve"));
    // The failed apply is logged as one (no rollback id), and may be tried again.
    for (const auto& e : log_entries(repo)) {
      const std::string id = e.value("rollback_id", "");
      CHECK((id.empty() || id == "\u2014"));  // none: nothing to roll back
    }
    CHECK(show_json(repo, 1).at("status") == "failed");
  }
  // Intent, room, ten temps and nine backups, ten renames, four json_records_in.
  CHECK(n > 30);
  INFO("the apply that reached no armed write: " << n);
  // The last run reached no armed write: it applied, once.
  auto after = ten_state(repo);
  for (int i = 0; i < k_ten - 1; ++i) CHECK(after[ten_name(i)] == fmt::format("new {}\n", i));
  CHECK_FALSE(after[ten_name(k_ten - 1)]);
  CHECK(after["deep/er/new.txt"] == "made\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
  const std::string rid = show_json(repo, 1).at("rollback_id");
  size_t with_rid = 0;
  for (const auto& e : log_entries(repo)) with_rid += e.value("rollback_id", "") == rid;
  CHECK(with_rid == 1);
  // And the rollback removes the folders the changeset made.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(ten_state(repo) == before);
  CHECK_FALSE(repo.exists("deep"));
}

TEST_CASE("a full disk while a rollback writes leaves the tree as it was and the entry still undoable",
          "[e2e][faults][enospc][rollback]") {
  TempRepo repo;
  fill_ten(repo);
  propose_ten(repo);
  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  const std::string rid = json_of(a).at("applied").at("rollback_id");
  const auto applied = ten_state(repo);
  const auto backups = repo.find(".bak-kaicoder-");
  for (int n : {1, 3, 12, 20, 25}) {
    INFO("the write that fails: " << n);
    Run r = repo.kai_tty({"rollback", rid}, "y", {{"KAICODER_FAULT", fmt::format("enospc:txn-write:{}", n)}});
    INFO(r.all());
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.all(), Contains("nothing changed"));
    CHECK(ten_state(repo) == applied);
    CHECK(repo.find(".bak-kaicoder-") == backups);
    CHECK(json_records_in(repo, ".kaicoder/intents").empty());
    CHECK(log_entries(repo).size() == 1);
  }
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(ten_state(repo) == ten_before());
  CHECK_FALSE(repo.exists("deep"));
}

TEST_CASE("a proposal whose record cannot be written leaves no staging folder", "[e2e][faults][staging]") {
  TempRepo repo{{"f.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "new\n",
                   {{"KAICODER_FAULT", "enospc:stage-write:1"}});
  INFO(r.all());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Contains("No space left on device"));
  // Beside the id counter only the live index (derived data, rebuilt from
  // the records), which may still name the id that was never made.
  std::vector<std::string> left = repo.ls(".kaicoder/staging");
  std::erase(left, "live");
  CHECK(left == std::vector<std::string>{"next-id"});
}

TEST_CASE("a stage killed before its record leaves a folder that doctor names and the next command removes",
          "[e2e][faults][staging]") {
  TempRepo repo{{"f.txt", "old\n"}};
  repo.init();
  Run killed = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "new\n",
                        {{"KAICODER_FAULT", "after-payloads"}});
  REQUIRE(killed.killed_by(SIGKILL));
  REQUIRE(repo.exists(".kaicoder/staging/1"));
  REQUIRE_FALSE(repo.exists(".kaicoder/staging/1/meta.json"));

  Run doc = repo.kai({"doctor"});
  CHECK_THAT(doc.all(), Contains("interrupted proposals"));
  CHECK_THAT(doc.all(), Contains("hold no record"));
  // list only reads.
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);
  CHECK(repo.exists(".kaicoder/staging/1"));

  Run next = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "again"}, "new\n");
  KAI_REQUIRE_EXIT(next, 0);
  CHECK_THAT(next.err, Contains("removed"));
  CHECK_THAT(next.err, Contains("without a record"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  Run doc2 = repo.kai({"doctor"});
  CHECK_THAT(doc2.all(), !Contains("interrupted proposals"));
}

TEST_CASE("a state dir removed and made anew is a new store: its ids are not refused as applied before",
          "[e2e][faults][identity]") {
  TempRepo repo{{"f.txt", "one\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "two\n"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  REQUIRE(repo.read("f.txt") == "two\n");
  // Kept by whoever reset the store, to be put back into the new one.
  const std::string old_meta = repo.read(".kaicoder/staging/1/meta.json");
  std::map<std::string, std::string> old_payloads;
  for (const auto& name : repo.ls(".kaicoder/staging/1"))
    old_payloads[name] = repo.read(".kaicoder/staging/1/" + name);

  fs::remove_all(repo.abs(".kaicoder"));  // git clean -xdf, or a clone into the same folder
  Run p = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "again"}, "three\n");
  KAI_REQUIRE_EXIT(p, 0);
  CHECK_THAT(p.err, Contains("made anew"));
  CHECK(show_json(repo, 1).at("status") == "pending");
  Run a = repo.kai_tty({"approve", "1"}, "y");
  INFO(a.all());
  KAI_REQUIRE_EXIT(a, 0);
  CHECK(repo.read("f.txt") == "three\n");
  Run doc = repo.kai({"doctor"});
  CHECK_THAT(doc.all(), Contains("made anew"));

  // A record of the store before never verifies in the new one.
  for (const auto& [name, bytes] : old_payloads) repo.write(".kaicoder/staging/1/" + name, bytes);
  Run replayed = repo.kai({"doctor"});
  INFO(replayed.all());
  CHECK_THAT(replayed.all(), Contains("unverified proposals"));
  Run again = repo.kai({"apply", "1"});
  CHECK(again.exit_code != 0);
  CHECK(repo.read("f.txt") == "three\n");
}

TEST_CASE("a changeset killed half-applied is undone by the next command while the disk stays full",
          "[e2e][faults][enospc][crash]") {
  // Killed after 5 of its files were replaced, or after all of them.
  const std::string point = GENERATE(as<std::string>{}, "after-replace:5", "after-replace:11");
  INFO("killed at " << point);
  TempRepo repo;
  fill_ten(repo);
  propose_ten(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto before = ten_state(repo);
  Run crashed = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", point}});
  INFO(crashed.all());
  REQUIRE(crashed.killed_by(SIGKILL));
  REQUIRE(ten_state(repo) != before);

  // Every write of a transaction now fails: recovery needs none to undo.
  Run full = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", "enospc:txn-write:1+"}});
  INFO(full.all());
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.err, Contains("undid the interrupted change of proposal 1"));
  CHECK_THAT(full.err, Contains("nothing changed"));
  CHECK(ten_state(repo) == before);
  CHECK(repo.find(".bak-kaicoder-").empty());
  CHECK(repo.find("kaicoder-tmp").empty());
  CHECK(json_records_in(repo, ".kaicoder/intents").empty());
  CHECK(json_records_in(repo, ".kaicoder/journal").empty());
  CHECK(show_json(repo, 1).at("status") == "failed");  // this apply failed, and says so

  // With room again the same approval applies.
  KAI_REQUIRE_EXIT(repo.kai({"apply", "1"}), 0);
  CHECK(ten_state(repo).at(ten_name(0)) == "new 0\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
}
