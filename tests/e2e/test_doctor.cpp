// kaicoder doctor: each check in the state that makes it ok and in the
// state that makes it warn or fail, with the verdict, the exit code (1 only
// when a check fails), the JSON and the way out it names. In every broken
// state the diagnostics (doctor, list, show, log, --help) still work: they
// never fail closed.

#include <csignal>
#include <filesystem>
#include <unistd.h>
#include <thread>

#include "lib/run/sandbox.hpp"
#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

struct Doctor {
  Run run;
  json checks;
  bool ok = false;
};

Doctor doctor(const TempRepo& repo) {
  Doctor d;
  d.run = repo.kai({"--json", "doctor"});
  json j = json_of(d.run);
  d.checks = j.at("checks");
  d.ok = j.at("ok");
  return d;
}

// The check called `name`; a null JSON when doctor did not report it.
json check(const Doctor& d, const std::string& name) {
  for (const auto& c : d.checks)
    if (c.at("name") == name) return c;
  return nullptr;
}

std::string field(const Doctor& d, const std::string& name, const char* key) {
  json c = check(d, name);
  return c.is_null() ? "(missing)" : c.value(key, "");
}
std::string detail(const Doctor& d, const std::string& name) { return field(d, name, "detail"); }
std::string fix(const Doctor& d, const std::string& name) { return field(d, name, "fix"); }

std::string level(const Doctor& d, const std::string& name) { return field(d, name, "level"); }

// Check `name` has verdict `want`, with a way out unless it is ok, and its
// detail and fix hold `in_detail` and `in_fix` (when not empty).
void verdict(const Doctor& d, const std::string& name, const std::string& want, const std::string& in_detail = "",
             const std::string& in_fix = "") {
  INFO("check '" << name << "': " << check(d, name).dump());
  CHECK(level(d, name) == want);
  if (want != "ok") CHECK_FALSE(fix(d, name).empty());
  if (!in_detail.empty()) CHECK_THAT(detail(d, name), Contains(in_detail));
  if (!in_fix.empty()) CHECK_THAT(fix(d, name), Contains(in_fix));
}

// Doctor exits 1 exactly when some check failed, and says so in "ok".
void check_exit_matches(const Doctor& d) {
  bool failed = false;
  for (const auto& c : d.checks) failed |= c.at("level") == "fail";
  INFO(d.run.all());
  CHECK(d.run.exit_code == (failed ? 1 : 0));
  CHECK(d.ok == !failed);
}

// The diagnostics still answer in this state: list, show `id` (with exit
// `show_exit`), log, --help and doctor itself, in text and in JSON.
void diagnostics_work(const TempRepo& repo, int id, int show_exit = 0) {
  Run list = repo.kai({"list"});
  KAI_CHECK_EXIT(list, 0);
  CHECK_FALSE(list.out.empty());
  KAI_CHECK_EXIT(repo.kai({"--json", "list"}), 0);
  Run show = repo.kai({"show", std::to_string(id)});
  KAI_CHECK_EXIT(show, show_exit);
  CHECK_FALSE((show.out + show.err).empty());
  Run log = repo.kai({"log"});
  KAI_CHECK_EXIT(log, 0);
  CHECK_FALSE(log.out.empty());
  KAI_CHECK_EXIT(repo.kai({"--json", "log"}), 0);
  Run help = repo.kai({"--help"});
  KAI_CHECK_EXIT(help, 0);
  CHECK_THAT(help.out, Contains("doctor"));
  Run text = repo.kai({"doctor"});
  CHECK((text.exit_code == 0 || text.exit_code == 1));
  CHECK_THAT(text.out, Contains("guardrail self-test"));
}

// A tree with one applied edit (proposal 1, with a backup and an entry)
// and one pending edit (proposal 2).
void applied_and_pending(TempRepo& repo) {
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "two", "TWO")), 0);
}

std::string backup_of(const TempRepo& repo) {
  auto baks = repo.find(".bak-kaicoder-");
  REQUIRE(baks.size() == 1);
  return baks[0];
}

// A process that holds the store lock until it is killed. flock -o keeps
// the lock in flock itself (not in the sleep it starts), so killing that one
// process is what releases it.
Process hold_lock(const TempRepo& repo) {
  const fs::path marker = repo.home() / "locked";
  Process p =
      repo.spawn({"flock", "-o", ".kaicoder/lock", "sh", "-c", "touch '" + marker.string() + "'; exec sleep 60"});
  for (int i = 0; i < 400 && !fs::exists(marker); ++i) std::this_thread::sleep_for(25ms);
  REQUIRE(fs::exists(marker));
  return p;
}

}  // namespace

TEST_CASE("doctor on a healthy tree: every store check ok, exit 0, one JSON entry per check", "[e2e][doctor]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  Doctor d = doctor(repo);
  for (const char* name : {"trust", "config", "root", "state dir", "store lock", "changelog", "backups", "proposals",
                           "half-done changes", "git", "guardrail self-test"})
    verdict(d, name, "ok");
  for (const char* name : {"isolation", "sandbox", "installation"}) CHECK(level(d, name) != "(missing)");
  for (const char* name : {"orphan backups", "expired proposals", "corrupt proposals", "corrupt journal records"})
    CHECK(level(d, name) == "(missing)");
  CHECK_THAT(detail(d, "proposals"), Contains("1 pending"));
  CHECK_THAT(detail(d, "backups"), Contains("1 backups"));
  check_exit_matches(d);
  CHECK(d.run.exit_code == 0);

  Run text = repo.kai({"doctor"});
  KAI_CHECK_EXIT(text, 0);
  CHECK_THAT(text.out, Contains("ok    guardrail self-test"));
  CHECK_THAT(text.out, Contains("warn  installation"));
  CHECK_THAT(text.out, Contains("fix: sudo cmake --install build"));
}

TEST_CASE("doctor names the file, line and key of a malformed config and still runs every other check",
          "[e2e][doctor][config]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", "[approval]\ntimeout = \"soon\"\n"}};
  repo.trust_as_before();  // kaicoder trust refuses it now
  Doctor d = doctor(repo);
  verdict(d, "config", "fail", "kaicoder.toml:2: approval.timeout");
  verdict(d, "guardrail self-test", "ok");
  CHECK(level(d, "git") != "(missing)");
  CHECK(level(d, "state dir") == "warn");  // never initialised
  check_exit_matches(d);
  CHECK(d.run.exit_code == 1);
  // The other commands refuse to guess at rules they cannot read, and say where the error is.
  Run list = repo.kai({"list"});
  KAI_CHECK_EXIT(list, 2);
  CHECK_THAT(list.err, Contains("kaicoder.toml:2: approval.timeout"));
  KAI_CHECK_EXIT(repo.kai({"--help"}), 0);
  KAI_CHECK_EXIT(repo.kai({"log", "--help"}), 0);
}

TEST_CASE("doctor: a state dir others can write fails, one others can read warns, a missing one says init",
          "[e2e][doctor]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  SECTION("missing") {
    repo.init();
    fs::remove_all(repo.abs(".kaicoder"));
    Doctor d = doctor(repo);
    verdict(d, "state dir", "warn", "", "kaicoder init");
    check_exit_matches(d);
    KAI_CHECK_EXIT(repo.kai({"list"}), 0);
    KAI_CHECK_EXIT(repo.kai({"log"}), 0);
    KAI_CHECK_EXIT(repo.kai({"show", "1"}), 7);
  }
  SECTION("not a folder") {
    applied_and_pending(repo);
    fs::rename(repo.abs(".kaicoder"), repo.home() / "state");
    repo.write(".kaicoder", "not a folder\n");
    Doctor d = doctor(repo);
    verdict(d, "state dir", "fail", "not a folder", "kaicoder init");
    check_exit_matches(d);
    KAI_CHECK_EXIT(repo.kai({"list"}), 0);
    Run log = repo.kai({"log"});
    KAI_CHECK_EXIT(log, 0);
    CHECK_THAT(log.out, Contains("edit"));
    KAI_CHECK_EXIT(repo.kai({"show", "1"}), 7);
  }
  SECTION("open") {
    applied_and_pending(repo);
    repo.chmod(".kaicoder", 0755);
    Doctor d = doctor(repo);
    verdict(d, "state dir", "warn", "", "chmod 700");
    check_exit_matches(d);
    repo.chmod(".kaicoder", 0777);
    d = doctor(repo);
    verdict(d, "state dir", "fail", "777", "chmod 700");
    check_exit_matches(d);
    CHECK(d.run.exit_code == 1);
    diagnostics_work(repo, 2);
    repo.chmod(".kaicoder", 0700);
  }
}

TEST_CASE("doctor: a corrupt proposal record is reported, listed as corrupt, and the rest still works",
          "[e2e][doctor][corrupt]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  repo.write(".kaicoder/staging/2/meta.json", "{\"id\": 2, \"kind\": ");
  Doctor d = doctor(repo);
  verdict(d, "corrupt proposals", "warn", "2", "staging/2");
  check_exit_matches(d);
  CHECK(d.run.exit_code == 0);

  diagnostics_work(repo, 1);
  Run list = repo.kai({"list"});
  CHECK_THAT(list.out, Contains("corrupt"));
  json lj = json_of(repo.kai({"--json", "list"}));
  REQUIRE(lj.at("corrupt").size() == 1);
  CHECK(lj.at("corrupt")[0].at("id") == 2);
  Run show = repo.kai({"show", "2"});
  KAI_CHECK_EXIT(show, 1);
  CHECK_THAT(show.err, Contains("corrupt record"));
  // Nothing is ever applied from a record that cannot be read.
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "2"}, "y"), 1);
  CHECK(repo.read("b.txt") == "one\ntwo\n");
}

TEST_CASE("doctor: a corrupt journal record is reported with the entry it breaks", "[e2e][doctor][corrupt]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  const std::string rid = show_json(repo, 1).at("rollback_id");
  repo.write(".kaicoder/journal/" + rid + ".json", "not json at all");
  Doctor d = doctor(repo);
  verdict(d, "corrupt journal records", "fail", rid);
  check_exit_matches(d);
  diagnostics_work(repo, 1);
}

TEST_CASE("doctor: a lock held by a live process is busy, and one of a killed process is free", "[e2e][doctor][lock]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  Process holder = hold_lock(repo);

  Doctor busy = doctor(repo);
  verdict(busy, "store lock", "warn", "process " + std::to_string(holder.pid()),
          "kill " + std::to_string(holder.pid()));
  check_exit_matches(busy);
  CHECK(busy.run.exit_code == 0);
  // Reads never wait for the lock.
  diagnostics_work(repo, 2);

  ::kill(holder.pid(), SIGKILL);
  Run killed = holder.finish();
  CHECK(killed.killed_by(SIGKILL));
  REQUIRE(repo.exists(".kaicoder/lock"));  // the file stays; the lock does not

  Doctor free = doctor(repo);
  verdict(free, "store lock", "ok");
  check_exit_matches(free);
  diagnostics_work(repo, 2);
  // A change of state goes through at once.
  KAI_CHECK_EXIT(repo.kai_tty({"reject", "2"}, "y"), 0);
  CHECK(show_json(repo, 2).at("status") == "rejected");
}

TEST_CASE("doctor: a malformed changelog entry is named by its line, and log still shows the good ones",
          "[e2e][doctor][changelog]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  const size_t first = text.find("\n## ");
  REQUIRE(first != std::string::npos);
  const size_t line =
      static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(first) + 1, '\n')) + 1;
  text.insert(first + 1, "## 2026-13-45T99:99:99Z  ·  edit  ·  rollback-id: nonsense\n- file(s): who knows\n\n");
  repo.write("KAI-CODER-CHANGELOG.md", text);

  Doctor d = doctor(repo);
  verdict(d, "changelog", "warn", "line " + std::to_string(line));
  check_exit_matches(d);
  CHECK(d.run.exit_code == 0);

  diagnostics_work(repo, 1);
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].at("rollback_id") == show_json(repo, 1).at("rollback_id"));
}

TEST_CASE("doctor: a backup that an entry names and that is gone or changed fails", "[e2e][doctor][backups]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  const std::string bak = backup_of(repo);
  SECTION("removed") { repo.remove(bak); }
  SECTION("changed") { repo.write(bak, "not what was backed up\n"); }
  Doctor d = doctor(repo);
  verdict(d, "backups", "fail", bak);
  check_exit_matches(d);
  CHECK(d.run.exit_code == 1);
  diagnostics_work(repo, 1);
  // The rollback that would need it refuses instead of restoring the wrong bytes.
  CHECK(repo.kai_tty({"rollback", "last"}, "y").exit_code != 0);
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("doctor: a backup file no entry names is listed as an orphan", "[e2e][doctor][backups]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  repo.write("sub/c.txt.bak-kaicoder-20200101T000000Z", "left over\n");
  Doctor d = doctor(repo);
  verdict(d, "orphan backups", "warn", "sub/c.txt.bak-kaicoder-20200101T000000Z");
  verdict(d, "backups", "ok");
  check_exit_matches(d);
  CHECK(d.run.exit_code == 0);
  diagnostics_work(repo, 1);
}

TEST_CASE("doctor: a pending proposal past its timeout is reported, and the next proposal expires it",
          "[e2e][doctor][proposals]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  json meta = json::parse(repo.read(".kaicoder/staging/2/meta.json"));
  meta["created"] = "2020-01-01T00:00:00Z";
  write_sealed_record(repo, 2, meta);

  Doctor d = doctor(repo);
  verdict(d, "expired proposals", "warn", "1 pending", "proposes or decides");
  check_exit_matches(d);
  // Doctor changes nothing.
  CHECK(level(doctor(repo), "expired proposals") == "warn");
  // show only reads: it says the proposal expired but records nothing.
  json shown = show_json(repo, 2);
  CHECK(shown.at("status") == "pending");
  CHECK(shown.at("expired") == true);
  CHECK(level(doctor(repo), "expired proposals") == "warn");
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "c.txt", "--content-file", "-", "--why", "w"}, "c\n"), 0);
  CHECK(show_json(repo, 2).at("status") == "timeout");

  Doctor after = doctor(repo);
  CHECK(level(after, "expired proposals") == "(missing)");
  CHECK_THAT(detail(after, "proposals"), Contains("1 pending"));  // c.txt
  diagnostics_work(repo, 2);
}

TEST_CASE("doctor: a half-done apply is reported, the diagnostics work around it, and the next command finishes it",
          "[e2e][doctor][crash]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
  Run crashed = repo.kai({"apply", "2"}, "", {{"KAICODER_FAULT", "after-replace"}});
  REQUIRE(crashed.killed_by(SIGKILL));

  Doctor d = doctor(repo);
  verdict(d, "half-done changes", "warn", "", "proposes or decides");
  verdict(d, "proposals", "ok", "1 approved and not applied yet");
  check_exit_matches(d);
  CHECK(d.run.exit_code == 0);

  {
    // While another process holds the lock nothing can finish it, and the
    // reads still answer.
    Process holder = hold_lock(repo);
    diagnostics_work(repo, 2);
    CHECK(level(doctor(repo), "half-done changes") == "warn");
    ::kill(holder.pid(), SIGKILL);
    holder.finish();
  }

  // The way out doctor names; list only reads.
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);
  CHECK(level(doctor(repo), "half-done changes") == "warn");
  KAI_CHECK_EXIT(repo.kai({"propose", "--path", "c.txt", "--content-file", "-", "--why", "w"}, "c\n"), 0);
  Doctor after = doctor(repo);
  verdict(after, "half-done changes", "ok");
  verdict(after, "backups", "ok");
  CHECK(repo.read("b.txt") == "one\nTWO\n");
  CHECK(show_json(repo, 2).at("status") == "applied");
  CHECK(log_entries(repo).size() == 2);
}

TEST_CASE("doctor: a failed apply is reported with the command that tries again", "[e2e][doctor][proposals]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
  repo.write("b.txt", "one\nthree\n");  // the target is gone
  KAI_REQUIRE_EXIT(repo.kai({"apply", "2"}), 6);
  REQUIRE(show_json(repo, 2).at("status") == "failed");
  Doctor d = doctor(repo);
  verdict(d, "failed applies", "warn", "2", "kaicoder apply 2");
  check_exit_matches(d);
  diagnostics_work(repo, 2);
}

TEST_CASE("doctor: the git check warns outside a repository and during a merge, and fails on a corrupt index", "[e2e][doctor][git]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\ntwo\n"}};
  applied_and_pending(repo);
  SECTION("merge in progress") {
    Run head = repo.spawn({"git", "rev-parse", "HEAD"}).finish();
    REQUIRE(head.ok());
    repo.write(".git/MERGE_HEAD", head.out);
    Doctor d = doctor(repo);
    verdict(d, "git", "warn", "merge");
    check_exit_matches(d);
  }
  SECTION("not a repository") {
    fs::remove_all(repo.abs(".git"));
    Doctor d = doctor(repo);
    verdict(d, "git", "warn", "not the top of a git work tree");
    check_exit_matches(d);
  }
  SECTION("backups not ignored") {
    repo.write(".gitignore", "");
    Doctor d = doctor(repo);
    verdict(d, "git", "warn", "", ".gitignore");
  }
  SECTION("a corrupt index fails") {
    std::string index = repo.read(".git/index");
    REQUIRE(index.size() > 40);
    index[0] = 'X';  // no longer "DIRC": git says "index file corrupt"
    repo.write(".git/index", index);
    REQUIRE_FALSE(repo.spawn({"git", "status", "--porcelain"}).finish().ok());
    Doctor d = doctor(repo);
    verdict(d, "git", "fail", "git index is unreadable", "git reset");
    check_exit_matches(d);
    CHECK(d.run.exit_code == 1);
  }
  diagnostics_work(repo, 1);
}

TEST_CASE("doctor reports the guardrail self-test, the sandbox and the isolation level", "[e2e][doctor]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Doctor d = doctor(repo);
  verdict(d, "guardrail self-test", "ok", "refused");
  // The tests run as the tree's owner, so the gate is advisory, and doctor says so.
  verdict(d, "isolation", "warn", "advisory");
  CHECK(level(d, "sandbox") != "(missing)");
  // What runs get here, line by line, at the level kaicoder init sets (full).
  for (const char* part :
       {"writes", "reads", "processes", "terminals", "network", "environment", "process lifetime", "capabilities",
        "hard links"}) {
    INFO(part);
    CHECK(level(d, std::string("sandbox: ") + part) != "(missing)");
  }
  if (kai::namespace_status().ok && kai::landlock_status().abi > 0) {
    verdict(d, "sandbox", "ok", "level \"full\"");
    verdict(d, "sandbox: process lifetime", "ok", "PID namespace");
    verdict(d, "sandbox: capabilities", "ok", "bounding set empty");
    verdict(d, "sandbox: hard links", "ok", "EXDEV");
    // How a run's effects are read; root's overlay moves folders.
    CHECK(level(d, "sandbox: effects") != "(missing)");
    if (::geteuid() == 0 && kai::overlay_status(repo.path() / ".kaicoder" / "runs").redirect)
      verdict(d, "sandbox: effects", "ok", "folders can be moved");
    // The guarded paths by name, signed approvals included.
    verdict(d, "sandbox: writes", "ok",
            "read-only (mounts): .kaicoder/, kaicoder.toml, KAI-CODER-CHANGELOG.md, kaicoder-approvals/");
  }
  json inst = check(d, "installation");
  REQUIRE_FALSE(inst.is_null());
  CHECK(inst.at("level") != "fail");
}

TEST_CASE("doctor names what the landlock level puts back after a run, signed approvals included", "[e2e][doctor]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::string toml = repo.read("kaicoder.toml");
  toml.replace(toml.find("sandbox = \"full\""), 16, "sandbox = \"landlock\"");
  repo.write("kaicoder.toml", toml);
  repo.trust();
  Doctor d = doctor(repo);
  verdict(d, "sandbox", "warn", "level \"landlock\"");
  json w = check(d, "sandbox: writes");
  REQUIRE_FALSE(w.is_null());
  CHECK(w.at("level") == "warn");
  const std::string text = w.at("detail");
  CHECK_THAT(text, Contains("put back after each run"));
  for (const char* name :
       {".kaicoder/", "kaicoder.toml", "kaicoder-approvals/", ".git/config", ".git/hooks/", "store lock"}) {
    INFO(name);
    CHECK_THAT(text, Contains(name));
  }
  // What the level enforces is ok; what stays visible is said, never ok.
  verdict(d, "sandbox: capabilities", "ok", "also as root");
  verdict(d, "sandbox: process lifetime", "ok", "subreaper");
  json procs = check(d, "sandbox: processes");
  REQUIRE_FALSE(procs.is_null());
  CHECK(procs.at("level") == "warn");
  CHECK_THAT(procs.at("detail").get<std::string>(), Contains("/proc/*/cmdline") && Contains("memory"));
}

TEST_CASE("doctor works in a tree nobody trusted and says so, without reading its config", "[e2e][doctor][trust]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", "[approval]\ntimeout = \"soon\"\n"}};
  Doctor d = doctor(repo);
  verdict(d, "trust", "fail", "not a trusted root", "kaicoder trust");
  verdict(d, "config", "warn", "not read");
  verdict(d, "root", "ok", repo.path().string());
  verdict(d, "guardrail self-test", "ok");
  check_exit_matches(d);
  CHECK(d.run.exit_code == 1);
  repo.trust_as_before();  // kaicoder trust refuses it now
  repo.write("kaicoder.toml", "[approval]\ntimeout = 30\n");
  d = doctor(repo);
  verdict(d, "trust", "fail", "changed since you trusted it", "kaicoder trust");
  repo.trust();
  d = doctor(repo);
  verdict(d, "trust", "ok");
  verdict(d, "config", "ok");
}

TEST_CASE("doctor takes no arguments and answers --help outside a repository", "[e2e][doctor]") {
  TempRepo repo;
  KAI_CHECK_EXIT(repo.kai({"doctor", "extra"}), 2);
  Run h = repo.kai({"doctor", "--help"}, "", {}, k_default_limit);
  KAI_CHECK_EXIT(h, 0);
  CHECK_THAT(h.out, Contains("doctor"));
}
