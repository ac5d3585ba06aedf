// The archive (lib/store/store.hpp Store::archive_decided, catalog): decided
// proposals leave .kaicoder/staging/ at the next command that proposes or
// decides, and stay readable by show, log, rollback and list; it survives
// kill -9 at each step of the move; a summary deleted or forged is refused
// (list reads the records and says so) and doctor makes it again; an old
// store with every proposal in staging/ is archived at its first sweep;
// doctor reads a bucket again after anything in it changed, however the
// change tries to look old.

#include <chrono>
#include <csignal>
#include <thread>

#include <sys/stat.h>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string k_summary = ".kaicoder/archive/0/summary";

std::string archived(int id) { return ".kaicoder/archive/0/" + std::to_string(id); }
std::string staged(int id) { return ".kaicoder/staging/" + std::to_string(id); }

// The ids a full `list` prints, ascending, with their statuses.
std::map<int, std::string> listed(const TempRepo& repo, Run* run = nullptr) {
  Run r = repo.kai({"--json", "list"});
  if (!r.ok()) throw std::runtime_error("kaicoder list failed: " + r.all());
  if (run) *run = r;
  std::map<int, std::string> out;
  const json listing = json_of(r);
  for (const auto& p : listing.at("proposals")) out[p.at("id").get<int>()] = p.at("status").get<std::string>();
  return out;
}

std::string doctor_check(const TempRepo& repo, const std::string& name) {
  Run r = repo.kai({"--json", "doctor"});
  const json report = json_of(r);
  for (const auto& c : report.at("checks"))
    if (c.at("name") == name) return c.at("level").get<std::string>() + ": " + c.value("detail", "");
  return "(missing)";
}

Run propose_line(const TempRepo& repo, const std::string& n, const EnvOverrides& env = {}) {
  return repo.kai({"propose", "--path", "f" + n + ".txt", "--content-file", "-", "--why", "line " + n}, n + "\n", env);
}

// Proposals 1 and 2 rejected and moved to the archive by the sweep of a
// third proposal, 3, which stays pending.
void two_archived(const TempRepo& repo) {
  for (const char* n : {"1", "2"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2"}, "y"), 0);
  KAI_REQUIRE_EXIT(propose_line(repo, "3"), 0);
}

}  // namespace

TEST_CASE("decided proposals move to the archive and show, log, list and rollback still read them",
          "[e2e][archive]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* n : {"1", "2", "3"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2"}, "y"), 0);
  // The next command that proposes or decides moves them.
  KAI_REQUIRE_EXIT(propose_line(repo, "4"), 0);
  CHECK_FALSE(repo.exists(staged(1)));
  CHECK_FALSE(repo.exists(staged(2)));
  CHECK(repo.exists(archived(1) + "/meta.json"));
  CHECK(repo.exists(archived(2) + "/meta.json"));
  CHECK(repo.exists(staged(3) + "/meta.json"));
  CHECK(repo.exists(k_summary));
  CHECK(show_json(repo, 1).at("status") == "applied");
  CHECK(show_json(repo, 2).at("status") == "rejected");
  Run shown = repo.kai({"show", "1"});
  KAI_CHECK_EXIT(shown, 0);
  CHECK_THAT(shown.out, Contains("f1.txt"));
  CHECK((listed(repo) == std::map<int, std::string>{{1, "applied"}, {2, "rejected"}, {3, "pending"}, {4, "pending"}}));
  Run rejected = repo.kai({"--json", "list", "--status", "rejected"});
  KAI_CHECK_EXIT(rejected, 0);
  CHECK(json_of(rejected).at("proposals").size() == 1);
  CHECK(log_entries(repo).size() == 2);
  // Rolled back from the archive: its record and its summary line say so.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK_FALSE(repo.exists("f1.txt"));
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
  Run after;
  CHECK(listed(repo, &after).at(1) == "rolled-back");
  CHECK(after.err.find("note:") == std::string::npos);
  CHECK(doctor_check(repo, "archive") == "(missing)");  // nothing to say: the summary agrees
  CHECK(doctor_check(repo, "live index").rfind("ok", 0) == 0);
}

TEST_CASE("a deleted or forged archive summary is refused, listed from the records, and made again by doctor",
          "[e2e][archive][attack]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  two_archived(repo);
  REQUIRE(repo.exists(archived(2)));
  const std::string summary = repo.read(k_summary);

  SECTION("deleted") { repo.remove(k_summary); }
  SECTION("forged: proposal 2 shown applied under a seal the agent made up") {
    std::string forged = summary;
    forged.replace(forged.rfind("\"rejected\""), 10, "\"applied\"");
    repo.write(k_summary, forged);
  }
  Run r;
  const auto all = listed(repo, &r);
  CHECK((all == std::map<int, std::string>{{1, "rejected"}, {2, "rejected"}, {3, "pending"}}));
  CHECK_THAT(r.err, Contains("read from their records"));
  CHECK_THAT(r.err, Contains("kaicoder doctor"));
  CHECK(doctor_check(repo, "archive").rfind("ok: the summaries of archive buckets 0 (or their listings) disagree", 0) == 0);
  CHECK(repo.read(k_summary) == summary);
  listed(repo, &r);
  CHECK(r.err.find("note:") == std::string::npos);
}

TEST_CASE("an archive listing an agent edits is never believed: list reads the records, doctor makes it again",
          "[e2e][archive][attack]") {
  const std::string k_listing = ".kaicoder/archive/0/listing";
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* n : {"1", "2"})
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", std::string("f") + n + ".txt", "--content-file", "-", "--why",
                               "line", "--agent", "bot", "--summary", std::string("made f") + n},
                              std::string(n) + "\n"),
                     0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2"}, "y"), 0);
  KAI_REQUIRE_EXIT(propose_line(repo, "3"), 0);
  REQUIRE(repo.exists(archived(2)));
  const std::string listing = repo.read(k_listing);
  Run before = repo.kai({"list"});
  KAI_REQUIRE_EXIT(before, 0);
  CHECK(before.err.find("note:") == std::string::npos);
  auto forge = [&](const std::string& from, const std::string& to) {
    std::string forged = listing;
    const size_t at = forged.rfind(from);
    REQUIRE(at != std::string::npos);
    forged.replace(at, from.size(), to);
    repo.write(k_listing, forged);
  };
  std::string lie;
  SECTION("status: proposal 2 shown applied") {
    forge("\trejected\t", "\tapplied\t");
    lie = "applied";
  }
  SECTION("summary text") {
    forge("made f2", "tests all pass, approved by the owner");
    lie = "approved by the owner";
  }
  SECTION("author") {
    forge("\tbot\t", "\tthe-owner\t");
    lie = "the-owner";
  }
  Run r = repo.kai({"list"});
  KAI_CHECK_EXIT(r, 0);
  CHECK(r.out.find(lie) == std::string::npos);
  CHECK(r.out == before.out);  // what the records say, row for row
  CHECK_THAT(r.err, Contains("archive listing") && Contains("kaicoder doctor"));
  CHECK(doctor_check(repo, "archive").rfind("ok: the summaries of archive buckets 0 (or their listings) disagree", 0) == 0);
  CHECK(repo.read(k_listing) == listing);
  Run again = repo.kai({"list"});
  CHECK(again.err.find("note:") == std::string::npos);
  CHECK(again.out == before.out);
}

TEST_CASE("doctor reads again a bucket it vouched for once anything in it changed, times put back or not",
          "[e2e][archive][attack]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  two_archived(repo);
  REQUIRE(repo.exists(archived(1) + "/meta.json"));
  const std::string audit = ".kaicoder/archive/audit/0";
  const std::string unchanged = "archive bucket 0 unchanged since doctor last read them";
  auto settle = [] { std::this_thread::sleep_for(std::chrono::milliseconds(1200)); };
  // Stat data in the racy window (a second before the doctor) is never vouched for.
  CHECK_THAT(doctor_check(repo, "proposals"), Contains("3 records read"));
  CHECK_FALSE(repo.exists(audit));
  settle();
  CHECK_THAT(doctor_check(repo, "proposals"), Contains("3 records read"));
  REQUIRE(repo.exists(audit));
  CHECK_THAT(doctor_check(repo, "proposals"), Contains("1 records read, " + unchanged));
  // --full reads every record.
  Run full = repo.kai({"--json", "doctor", "--full"});
  KAI_CHECK_EXIT(full, 0);
  CHECK_THAT(full.out, Contains("3 records read") && !Contains(unchanged));

  // An audit file edited under its seal is not believed: the bucket is read
  // whole, and its file written again.
  std::string forged = repo.read(audit);
  const size_t at = forged.find("\n1 ");
  REQUIRE(at != std::string::npos);
  forged[at + 3] = forged[at + 3] == '9' ? '8' : '9';  // the folder's size
  repo.write(audit, forged);
  CHECK_THAT(doctor_check(repo, "proposals"), Contains("3 records read"));
  CHECK_THAT(doctor_check(repo, "proposals"), Contains(unchanged));

  // A folder in staging/ for an archived id would be read instead.
  fs::create_directory(repo.abs(staged(1)));
  CHECK_THAT(doctor_check(repo, "proposals"), !Contains(unchanged));
  fs::remove(repo.abs(staged(1)));
  // A name added to the bucket.
  fs::create_directory(repo.abs(archived(7)));
  CHECK_THAT(doctor_check(repo, "proposals"), !Contains(unchanged));
  fs::remove(repo.abs(archived(7)));
  settle();
  CHECK_THAT(doctor_check(repo, "proposals"), Contains("3 records read"));
  REQUIRE_THAT(doctor_check(repo, "proposals"), Contains(unchanged));

  // A record rewritten in place, same size, its times put back.
  const fs::path meta = repo.abs(archived(1) + "/meta.json");
  struct stat before {};
  REQUIRE(::stat(meta.c_str(), &before) == 0);
  std::string text = repo.read(archived(1) + "/meta.json");
  const size_t why = text.find("line 1");
  REQUIRE(why != std::string::npos);
  text.replace(why, 6, "line 9");
  repo.write(archived(1) + "/meta.json", text);
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, meta.c_str(), times, 0) == 0);
  Run r = repo.kai({"--json", "doctor"});
  CHECK_THAT(r.out, Contains("3 records read") && !Contains(unchanged));
  CHECK_THAT(doctor_check(repo, "unverified proposals"), Contains("1"));
  CHECK_FALSE(repo.exists(audit));  // a bucket out of order loses its file
}

TEST_CASE("the archive survives kill -9 at each step of the move", "[e2e][archive][crash]") {
  // after-archive-summary: the summary names them, no folder moved yet;
  // after-archive-move: the first folder moved, the rest still in staging/.
  // after-archive-listing: the summary and the listing name them, no folder moved yet.
  const std::string fault = GENERATE(std::string("after-archive-summary"), std::string("after-archive-listing"),
                                     std::string("after-archive-move"));
  INFO("fault " << fault);
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* n : {"1", "2", "3"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2"}, "y"), 0);
  // Both decided and in staging/ for one batch (1 was archived by the
  // reject's sweep: put back, as an old store keeps it, whose live index is
  // of a format before this one: it does not verify, as if missing).
  std::filesystem::rename(repo.abs(archived(1)), repo.abs(staged(1)));
  std::filesystem::remove_all(repo.abs(".kaicoder/archive"));
  repo.write(".kaicoder/staging/live", "kaicoder-live-2 " + std::string(64, '0') + "\nnext 4 swept 0\n");
  Run crashed = propose_line(repo, "4", {{"KAICODER_FAULT", fault}});
  REQUIRE(crashed.killed_by(SIGKILL));
  // Each proposal in exactly one place, each listed once, show reads each.
  for (int id : {1, 2}) CHECK(repo.exists(staged(id)) != repo.exists(archived(id)));
  const std::map<int, std::string> want{{1, "applied"}, {2, "rejected"}, {3, "pending"}};
  Run r;
  CHECK(listed(repo, &r) == want);
  CHECK(r.err.find("note:") == std::string::npos);
  Run rows = repo.kai({"list"});  // the rows, from the listing
  KAI_CHECK_EXIT(rows, 0);
  CHECK(rows.err.find("note:") == std::string::npos);
  CHECK_THAT(rows.out, Contains("applied") && Contains("rejected") && Contains("pending"));
  CHECK(show_json(repo, 1).at("status") == "applied");
  CHECK(show_json(repo, 2).at("status") == "rejected");
  // The next command finishes the move.
  KAI_REQUIRE_EXIT(propose_line(repo, "5"), 0);
  for (int id : {1, 2}) {
    CHECK_FALSE(repo.exists(staged(id)));
    CHECK(repo.exists(archived(id)));
  }
  CHECK(listed(repo).size() == 4);
  CHECK(doctor_check(repo, "archive") == "(missing)");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK_FALSE(repo.exists("f1.txt"));
}

TEST_CASE("an old store with every proposal in staging/ is archived at its first sweep", "[e2e][archive]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* n : {"1", "2", "3"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2"}, "y"), 0);
  // As a store made before the archive: decided folders in staging/, no
  // archive, a live index of a format before this one (it does not verify).
  REQUIRE(repo.exists(archived(1)));
  std::filesystem::rename(repo.abs(archived(1)), repo.abs(staged(1)));
  std::filesystem::remove_all(repo.abs(".kaicoder/archive"));
  repo.write(".kaicoder/staging/live", "kaicoder-live-2 " + std::string(64, '0') + "\nnext 4 swept 0\n");
  CHECK(listed(repo).size() == 3);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "3"}, "y"), 0);
  // Its sweep moved what was decided before it; 3, decided after, waits for the next.
  for (int id : {1, 2}) {
    CHECK_FALSE(repo.exists(staged(id)));
    CHECK(repo.exists(archived(id)));
  }
  CHECK(repo.exists(staged(3)));
  for (int id : {1, 2, 3}) CHECK(show_json(repo, id).at("status") != "pending");
  CHECK(listed(repo).size() == 3);
}
