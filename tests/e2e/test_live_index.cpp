// The live index (lib/store/store.hpp Store::live): what proposing, deciding
// and `list --status pending` read instead of every proposal ever made. It
// survives kill -9 at each step of a proposal and of a decision, is made
// again when it is deleted, forged or an old copy is put back, and decided
// proposals stay readable by show, log and rollback.

#include <csignal>
#include <sstream>

#include "tests/support/checks.hpp"
#include "tests/support/live_file.hpp"

namespace {

using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

const std::string k_index = ".kaicoder/staging/live";

// Sets [limits] pending = 3 and trusts the changed config, as the owner does.
void limit_pending_to_three(const TempRepo& repo) {
  std::string config = repo.read("kaicoder.toml");
  const size_t limit = config.find("\npending = 100\n");
  REQUIRE(limit != std::string::npos);
  config.replace(limit, 15, "\npending = 3\n");
  repo.write("kaicoder.toml", config);
  repo.trust();
}

// The ids `list --status <status>` prints, in its order.
std::vector<int> listed(const TempRepo& repo, const std::string& status) {
  Run r = repo.kai({"--json", "list", "--status", status});
  if (!r.ok()) throw std::runtime_error("kaicoder list failed: " + r.all());
  const json listing = json_of(r);
  std::vector<int> out;
  for (const auto& p : listing.at("proposals")) out.push_back(p.at("id").get<int>());
  return out;
}

// The ids the index on disk names (whether or not it verifies).
std::vector<int> indexed(const TempRepo& repo) {
  std::vector<int> out;
  for (const auto& [id, line] : kai::test::live_file_entries(repo.read(k_index))) out.push_back(id);
  return out;
}

// The index's entries as they stand after its last line.
std::vector<std::string> entries(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [id, line] : kai::test::live_file_entries(text)) out.push_back(line);
  return out;
}

// The index with field `field` (0: the id; 3: the time, 4: the request's
// key, 5: the agent) of proposal `id`'s entry set to `value`: its seal kept,
// as an agent that cannot seal would forge it.
std::string forge_entry(const TempRepo& repo, int id, size_t field, const std::string& value) {
  return kai::test::forge_live_field(repo.read(k_index), id, field, value);
}

std::string doctor_live(const TempRepo& repo) {
  Run r = repo.kai({"--json", "doctor"});
  const json report = json_of(r);
  for (const auto& c : report.at("checks"))
    if (c.at("name") == "live index") return c.at("level").get<std::string>() + ": " + c.value("detail", "");
  return "(missing)";
}

Run propose_line(const TempRepo& repo, const std::string& n, const EnvOverrides& env = {}) {
  return repo.kai({"propose", "--path", "f" + n + ".txt", "--content-file", "-", "--why", "line " + n}, n + "\n", env);
}

}  // namespace

TEST_CASE("the live index names what is pending or approved and drops what is decided", "[e2e][live]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* n : {"1", "2", "3"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  CHECK(indexed(repo) == std::vector<int>{1, 2, 3});
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "3"}, "y"), 0);
  // Applied and rejected leave it; approved and not applied stays live.
  CHECK(indexed(repo) == std::vector<int>{2});
  CHECK(listed(repo, "approved") == std::vector<int>{2});
  CHECK(listed(repo, "pending").empty());
  // Decided proposals are still there for show, log and rollback.
  CHECK(show_json(repo, 1).at("status") == "applied");
  CHECK(show_json(repo, 3).at("status") == "rejected");
  CHECK(log_entries(repo).size() == 2);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK_FALSE(repo.exists("f1.txt"));
  CHECK(doctor_live(repo).rfind("ok", 0) == 0);
}

TEST_CASE("a deleted, forged or old live index is made again from the records", "[e2e][live][attack]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(propose_line(repo, "1"), 0);
  const std::string old_copy = repo.read(k_index);
  KAI_REQUIRE_EXIT(propose_line(repo, "2"), 0);
  KAI_REQUIRE_EXIT(propose_line(repo, "3"), 0);
  const std::vector<int> all = {1, 2, 3};

  SECTION("deleted") { repo.remove(k_index); }
  SECTION("forged: it names nothing, under a seal the agent made up") {
    repo.write(k_index, json{{"next", 4}, {"ids", json::array()}, {"seal", std::string(64, 'a')}}.dump());
  }
  SECTION("forged: no seal") { repo.write(k_index, json{{"next", 4}, {"ids", json::array()}}.dump()); }
  SECTION("not JSON") { repo.write(k_index, "garbage"); }
  SECTION("an old sealed copy put back, which does not know 2 and 3") { repo.write(k_index, old_copy); }

  // Reading commands see every pending proposal without writing anything.
  CHECK(listed(repo, "pending") == all);
  // The per-agent limit still counts all three (the index cannot hide one).
  limit_pending_to_three(repo);
  Run over = propose_line(repo, "4");
  KAI_CHECK_EXIT(over, 3);
  CHECK_THAT(over.err, Contains("already has 3 proposals waiting"));
  // A retry of a waiting request still finds its twin: no new id.
  Run again = propose_line(repo, "2");
  KAI_CHECK_EXIT(again, 0);
  CHECK_FALSE(repo.exists(".kaicoder/staging/4"));
  // The command that proposed (under the lock) wrote it again, sealed.
  CHECK(indexed(repo) == all);
  CHECK(doctor_live(repo).rfind("ok", 0) == 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2"}, "y"), 0);
  CHECK(repo.read("f2.txt") == "2\n");
  CHECK(indexed(repo) == std::vector<int>{1, 3});
}

TEST_CASE("a forged index entry is never acted on: the record's own seal decides", "[e2e][live][attack]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(propose_line(repo, "1"), 0);
  // A record the agent wrote itself, at the next id, pending, named by no index.
  json forged = show_json(repo, 1);
  forged["id"] = 2;
  forged["path"] = "a.txt";
  repo.write(".kaicoder/staging/2/meta.json", forged.dump());
  for (const char* f : {"target", "replacement", "content"}) repo.write(std::string(".kaicoder/staging/2/") + f, "");
  // The index is older than the store now: made again, and the forged record
  // is listed (as before) but never approved.
  CHECK(listed(repo, "pending") == std::vector<int>{1, 2});
  Run a = repo.kai_tty({"approve", "2"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_THAT(a.all(), Contains("seal"));
  CHECK(repo.read("a.txt") == "old\n");
  // And the next id steps over it.
  KAI_REQUIRE_EXIT(propose_line(repo, "3"), 0);
  CHECK(repo.exists(".kaicoder/staging/3/meta.json"));
  CHECK(show_json(repo, 3).at("path") == "f3.txt");
}

TEST_CASE("the live index survives kill -9 at each step of proposing and deciding", "[e2e][live][crash]") {
  // after-live-index: the index names the new id, its folder not made yet.
  // after-record: a record saved, the index not told yet (the 2nd save of
  // an approve is the applied one).
  struct Step {
    std::string fault;
    bool in_approve;
  };
  const Step step = GENERATE(Step{"after-live-index", false}, Step{"after-record", false},
                             Step{"after-record:2", true});
  INFO("fault " << step.fault << (step.in_approve ? " during approve" : " during propose"));
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(propose_line(repo, "1"), 0);
  const EnvOverrides fault = {{"KAICODER_FAULT", step.fault}};
  if (step.in_approve) {
    Run crashed = repo.kai_tty({"approve", "1"}, "y", fault);
    REQUIRE(crashed.killed_by(SIGKILL));
  } else {
    Run crashed = propose_line(repo, "2", fault);
    REQUIRE(crashed.killed_by(SIGKILL));
  }
  // The next command that proposes finishes or undoes what was cut short,
  // and the index agrees with the records again.
  KAI_REQUIRE_EXIT(propose_line(repo, "9"), 0);
  std::vector<int> pending = listed(repo, "pending");
  for (int id : pending) CHECK(show_json(repo, id).at("status") == "pending");
  CHECK((std::find(pending.begin(), pending.end(), 1) != pending.end() ||
         show_json(repo, 1).at("status") != "pending"));
  // Every live record is named, nothing decided stays named for long.
  for (int id : indexed(repo)) {
    if (!repo.exists(".kaicoder/staging/" + std::to_string(id) + "/meta.json")) continue;
    const std::string s = show_json(repo, id).at("status");
    CHECK((s == "pending" || s == "approved"));
  }
  CHECK(doctor_live(repo).rfind("ok", 0) == 0);
  // Ids are never handed out twice.
  KAI_REQUIRE_EXIT(propose_line(repo, "10"), 0);
  CHECK(show_json(repo, listed(repo, "pending").back()).at("path") == "f10.txt");
}

TEST_CASE("a forged index entry cannot dodge the per-agent limit or the twin check", "[e2e][live][attack]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  limit_pending_to_three(repo);
  for (const char* n : {"1", "2", "3"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  REQUIRE(indexed(repo) == std::vector<int>{1, 2, 3});

  struct Forgery {
    std::string what;
    size_t field;
    std::string value;
  };
  const Forgery forgery = GENERATE(Forgery{"the agent, to dodge the per-agent limit", 5, "someone-else"},
                                   Forgery{"the request's key, to dodge the twin check", 4, std::string(16, '0')},
                                   Forgery{"the state, to dodge both", 1, "approved"},
                                   Forgery{"the time, to make it read as expired", 3, "r0"});
  INFO("forged: " << forgery.what);
  const std::string good = repo.read(k_index);
  auto forge = [&] {
    repo.write(k_index, good);
    for (int id : {1, 2, 3}) repo.write(k_index, forge_entry(repo, id, forgery.field, forgery.value));
    REQUIRE(repo.read(k_index) != good);
  };

  // Not believed: made again from the records, so the agent still has 3 waiting.
  forge();
  Run over = propose_line(repo, "4");
  KAI_CHECK_EXIT(over, 3);
  CHECK_THAT(over.err, Contains("already has 3 proposals waiting"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/4"));
  // And a retry of a waiting request still gets its id, no new proposal.
  forge();
  Run again = propose_line(repo, "2");
  KAI_CHECK_EXIT(again, 0);
  CHECK_FALSE(repo.exists(".kaicoder/staging/4"));
  CHECK(listed(repo, "pending") == std::vector<int>{1, 2, 3});
  // Nothing expired on the forged time's word.
  for (int id : {1, 2, 3}) CHECK(show_json(repo, id).at("status") == "pending");
  CHECK(indexed(repo) == std::vector<int>{1, 2, 3});
  // made again: each entry as the records say, as before the forgery
  CHECK(entries(repo.read(k_index)) == entries(good));
  // doctor says what was wrong and makes it again.
  forge();
  CHECK_THAT(doctor_live(repo), Contains("does not verify") && Contains("made again"));
  CHECK(doctor_live(repo).rfind("ok: names every", 0) == 0);
}

TEST_CASE("doctor makes a deleted or forged index again, with every entry's fields", "[e2e][live]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* n : {"1", "2"}) KAI_REQUIRE_EXIT(propose_line(repo, n), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
  const std::string good = repo.read(k_index);
  SECTION("deleted") { repo.remove(k_index); }
  SECTION("an entry's agent forged") { repo.write(k_index, forge_entry(repo, 1, 5, "other")); }
  SECTION("an entry's state forged") { repo.write(k_index, forge_entry(repo, 2, 1, "pending")); }
  CHECK_THAT(doctor_live(repo), Contains("made again from the records"));
  CHECK(doctor_live(repo).rfind("ok: names every", 0) == 0);
  // Made again from the records: the same entries as before, in another seal or the same.
  CHECK(entries(repo.read(k_index)) == entries(good));
}
