// Every refusal kaicoder makes today: each one exits with its code, says why,
// and leaves the tree byte for byte as it was.

#include <chrono>
#include <ctime>
#include <fstream>
#include <iterator>
#include <thread>

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// Rollback ids for the seconds around now: 20260709T142530Z.
std::string compact_utc(std::time_t t) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

// The changelog holds nothing but `failed` entries: refusals, no change.
bool only_failures_logged(const TempRepo& repo) {
  for (const auto& e : log_entries(repo))
    if (e.at("kind") != "failed") return false;
  return true;
}

// Propose a write of `content` to `path` (content goes through stdin).
Run propose_write(const TempRepo& repo, const std::string& path, const std::string& content) {
  return repo.kai({"propose", "--path", path, "--content-file", "-", "--why", "w"}, content);
}

// ----- confinement -------------------------------------------------------------------------------

TEST_CASE("propose refuses paths outside the root", "[e2e][refusal][paths]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  for (const std::string p : {"../x", "../repo2/x", "sub/../../x", "/etc/passwd", "/tmp/x"}) {
    INFO("path " << p);
    Run w = propose_write(repo, p, "pwned\n");
    KAI_CHECK_EXIT(w, 3);
    CHECK_THAT(w.err, Contains("outside the root"));
  }
  Run e = repo.kai(edit("/etc/passwd", "root", "toor"));
  KAI_CHECK_EXIT(e, 3);
  CHECK_THAT(e.err, Contains("outside the root"));
  Run d = repo.kai({"propose", "--path", "/etc/hostname", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(d, 3);
  Run dry = repo.kai({"--json", "propose", "--path", "../x", "--content-file", "-", "--why", "w", "--dry-run"}, "x");
  KAI_CHECK_EXIT(dry, 3);
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists("../x"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("propose refuses a symlink that leads out of the root", "[e2e][refusal][paths]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  std::filesystem::create_directories(repo.home() / "outside");
  { std::ofstream(repo.home() / "outside" / "victim.txt") << "victim\n"; }
  repo.symlink("escape", (repo.home() / "outside").string());
  repo.symlink("victim-link.txt", (repo.home() / "outside" / "victim.txt").string());
  repo.symlink("inner-link.txt", "a.txt");
  auto before = repo.tree_snapshot();

  Run through_dir = propose_write(repo, "escape/new.txt", "x\n");
  KAI_CHECK_EXIT(through_dir, 3);
  CHECK_THAT(through_dir.err, Contains("outside the root"));
  Run edit_through = repo.kai(edit("escape/victim.txt", "victim", "pwned"));
  KAI_CHECK_EXIT(edit_through, 3);
  Run final_link = repo.kai(edit("victim-link.txt", "victim", "pwned"));
  KAI_CHECK_EXIT(final_link, 3);
  CHECK_THAT(final_link.err, Contains("symlink"));
  // Even a link that stays inside root is never followed for a write.
  Run inner = repo.kai(edit("inner-link.txt", "a", "b"));
  KAI_CHECK_EXIT(inner, 3);
  CHECK_THAT(inner.err, Contains("symlink"));

  CHECK(repo.tree_snapshot() == before);
  std::ifstream in(repo.home() / "outside" / "victim.txt");
  std::string victim((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(victim == "victim\n");
  CHECK_FALSE(std::filesystem::exists(repo.home() / "outside" / "new.txt"));
}

TEST_CASE("propose refuses every never-write path", "[e2e][refusal][paths]") {
  TempRepo repo{{"a.txt", "a\n"},
                {".env", "TOKEN=1\n"},
                {"node_modules/x", "x\n"},
                {"build/x", "x\n"},
                {"old.bak", "someone's backup\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  approve(repo, 1);
  auto before = repo.tree_snapshot();
  const std::string never[] = {
      ".git/config",
      ".git/hooks/pre-commit",
      ".kaicoder/x",
      ".kaicoder/staging/1/replacement",
      "KAI-CODER-CHANGELOG.md",
      "kaicoder.toml",
      "sub/kaicoder.toml",
      "a.txt.bak-kaicoder-x",
      "old.bak",
      ".env",
      "x.env",
      ".env.local",
      "node_modules/x",
      "build/x",
      "dist/x",
      "target/x",
      "src/node_modules/y",
      ".GIT/config",
      ".Env",
      "id_rsa",
  };
  for (const std::string& p : never) {
    INFO("path " << p);
    Run w = propose_write(repo, p, "pwned\n");
    KAI_CHECK_EXIT(w, 3);
    CHECK_THAT(w.err, Contains("never"));
    Run d = repo.kai({"propose", "--path", p, "--delete", "--why", "w"});
    KAI_CHECK_EXIT(d, 3);
  }
  Run e = repo.kai(edit(".git/config", "[core]", "[core]\n\thooksPath = /tmp"));
  KAI_CHECK_EXIT(e, 3);
  CHECK_THAT(e.err, Contains(".git"));
  CHECK(repo.tree_snapshot() == before);
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  CHECK(json_of(l).at("proposals").size() == 1);
}

TEST_CASE("propose refuses a never-write path reached through a symlinked folder", "[e2e][refusal][paths]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  repo.symlink("docs", ".git");
  repo.symlink("state", ".kaicoder");
  auto before = repo.tree_snapshot();
  Run g = propose_write(repo, "docs/config", "pwned\n");
  KAI_CHECK_EXIT(g, 3);
  CHECK_THAT(g.err, Contains(".git"));
  Run s = propose_write(repo, "state/x", "pwned\n");
  KAI_CHECK_EXIT(s, 3);
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("a file swapped for a symlink after it was proposed is never written through", "[e2e][refusal][paths]") {
  TempRepo repo{{"a.txt", "old\n"}, {"sub/b.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("sub/b.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
  // Same bytes outside root, so only the link itself can stop the write.
  const auto outside = repo.home() / "outside";
  std::filesystem::create_directories(outside);
  std::ofstream(outside / "a.txt") << "old\n";
  std::ofstream(outside / "b.txt") << "old\n";
  repo.remove("a.txt");
  repo.symlink("a.txt", (outside / "a.txt").string());
  std::filesystem::rename(repo.abs("sub"), repo.home() / "sub-moved");
  repo.symlink("sub", outside.string());
  auto before = tree_but_log(repo);

  Run a = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(a, 3);
  CHECK_THAT(a.err, Contains("symlink"));
  Run b = repo.kai({"apply", "2"});
  KAI_CHECK_EXIT(b, 3);
  CHECK_THAT(b.err, Contains("outside the root"));
  CHECK(tree_but_log(repo) == before);
  for (const char* f : {"a.txt", "b.txt"}) {
    std::ifstream in(outside / f);
    std::string v((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(v == "old\n");
  }
  CHECK(std::distance(std::filesystem::directory_iterator(outside), std::filesystem::directory_iterator{}) == 2);
}

TEST_CASE("propose refuses what is not a regular file", "[e2e][refusal][paths]") {
  TempRepo repo{{"dir/a.txt", "a\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run w = propose_write(repo, "dir", "x\n");
  KAI_CHECK_EXIT(w, 3);
  CHECK_THAT(w.err, Contains("not a regular file"));
  Run d = repo.kai({"propose", "--path", "dir", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(d, 3);
  CHECK_THAT(d.err, Contains("not a regular file"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("apply refuses a file with several hard links", "[e2e][refusal][paths]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  std::filesystem::create_hard_link(repo.abs("a.txt"), repo.home() / "other-name.txt");
  auto before = tree_but_log(repo);
  Run a = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(a, 3);
  CHECK_THAT(a.err, Contains("hard links"));
  CHECK(tree_but_log(repo) == before);
}

TEST_CASE("with hardlinks = break a hard-linked file is written under its own name only", "[e2e][paths]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  repo.write("kaicoder.toml", "[paths]\nhardlinks = \"break\"\n");
  repo.trust();
  std::filesystem::create_hard_link(repo.abs("a.txt"), repo.home() / "other-name.txt");
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  std::string id = approve(repo, 1);
  CHECK(repo.read("a.txt") == "A\n");
  CHECK(repo.read("a.txt.bak-kaicoder-" + id) == "a\n");
  std::ifstream other(repo.home() / "other-name.txt");
  CHECK(std::string(std::istreambuf_iterator<char>(other), {}) == "a\n");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read("a.txt") == "a\n");
}

TEST_CASE("a hardlinks value other than refuse or break is a config error", "[e2e][refusal][config]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  repo.write("kaicoder.toml", "[paths]\nhardlinks = \"follow\"\n");
  repo.trust_as_before();  // kaicoder trust refuses it now
  auto before = repo.tree_snapshot();
  Run r = repo.kai(edit("a.txt", "a", "A"));
  KAI_CHECK_EXIT(r, 2);
  CHECK_THAT(r.err, Contains("kaicoder.toml:2") && Contains("paths.hardlinks"));
  CHECK(repo.tree_snapshot() == before);
}

// ----- edit targets ------------------------------------------------------------------------------

TEST_CASE("propose refuses an edit whose target is not found", "[e2e][refusal][target]") {
  TempRepo repo{{"a.txt", "alpha\nbeta\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai(edit("a.txt", "gamma", "GAMMA"));
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("not found"));
  Run ws = repo.kai(edit("a.txt", "alpha \n", "x"));  // whitespace counts
  KAI_CHECK_EXIT(ws, 6);
  Run missing = repo.kai(edit("nope.txt", "a", "b"));
  KAI_CHECK_EXIT(missing, 6);
  CHECK_THAT(missing.err, Contains("does not exist"));
  Run del = repo.kai({"propose", "--path", "nope.txt", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(del, 6);
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("propose refuses an edit whose target is found more than once, with line numbers", "[e2e][refusal][target]") {
  TempRepo repo{{"a.txt", "x = 1\ny = 2\nx = 1\n"}, {"b.txt", "aaa\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai(edit("a.txt", "x = 1", "x = 3"));
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("found 2 times"));
  CHECK_THAT(r.err, Contains("lines 1, 3"));
  Run overlap = repo.kai(edit("b.txt", "aa", "b"));
  KAI_CHECK_EXIT(overlap, 6);
  CHECK_THAT(overlap.err, Contains("found 2 times"));
  Run empty = repo.kai(edit("a.txt", "", "z"));
  CHECK(empty.exit_code != 0);
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("approve refuses a write whose file changed since it was proposed", "[e2e][refusal][stale]") {
  TempRepo repo{{"a.txt", "original\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(propose_write(repo, "a.txt", "from the agent\n"), 0);
  repo.write("a.txt", "hand edit\n");
  auto before = tree_but_log(repo);
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_THAT(a.err, Contains("stale"));
  CHECK(repo.read("a.txt") == "hand edit\n");
  CHECK(tree_but_log(repo) == before);
  CHECK(only_failures_logged(repo));
  CHECK(show_json(repo, 1).at("status") != "applied");
}

TEST_CASE("apply refuses a write whose file appeared or vanished since it was proposed", "[e2e][refusal][stale]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(propose_write(repo, "new.txt", "agent\n"), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--delete", "--why", "w"}), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
  repo.write("new.txt", "somebody made it first\n");
  repo.write("a.txt", "a\nmore\n");
  auto before = tree_but_log(repo);
  Run w = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(w, 6);
  Run d = repo.kai({"apply", "2"});
  KAI_CHECK_EXIT(d, 6);
  CHECK_THAT(d.err, Contains("stale"));
  CHECK(tree_but_log(repo) == before);
  CHECK(only_failures_logged(repo));
}

TEST_CASE("approve refuses an edit whose target vanished before approval", "[e2e][refusal][stale]") {
  TempRepo repo{{"a.txt", "keep\ntarget line\nkeep\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "target line", "new line")), 0);
  repo.write("a.txt", "keep\nsomething else\nkeep\n");
  auto before = tree_but_log(repo);
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_THAT(a.err, Contains("not found"));
  CHECK(tree_but_log(repo) == before);
  // It can never be applied as proposed: failed and logged, not left pending.
  CHECK(show_json(repo, 1).at("status") == "failed");
  CHECK(only_failures_logged(repo));
  CHECK(log_entries(repo).size() == 1);

  SECTION("and apply after --no-apply refuses the same way") {
    repo.write("a.txt", "keep\ntarget line\nkeep\n");
    KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "target line", "new line")), 0);
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
    repo.write("a.txt", "keep\ntarget line\ntarget line\n");
    auto before2 = tree_but_log(repo);
    Run ap = repo.kai({"apply", "2"});
    KAI_CHECK_EXIT(ap, 6);
    CHECK_THAT(ap.err, Contains("found 2 times"));
    CHECK(tree_but_log(repo) == before2);
    CHECK(show_json(repo, 2).at("status") == "failed");
    // Once the file is fixed, the failed apply can be retried.
    repo.write("a.txt", "keep\ntarget line\nkeep\n");
    KAI_CHECK_EXIT(repo.kai({"apply", "2"}), 0);
    CHECK(repo.read("a.txt") == "keep\nnew line\nkeep\n");
  }
}

// ----- the human gate ----------------------------------------------------------------------------

TEST_CASE("approve, reject and rollback refuse without a terminal", "[e2e][refusal][gate]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B")), 0);
  approve(repo, 2);
  auto before = repo.tree_snapshot();
  // "y" on stdin must not count: the answer comes from the terminal only.
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"approve", "1"}, {"approve", "1", "--no-apply"}, {"reject", "1"}, {"rollback", "last"}}) {
    INFO(args[0]);
    Run r = repo.kai(args, "y\ny\n");
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("no terminal"));
  }
  Run j = repo.kai({"--json", "approve", "1"}, "y\n");
  KAI_CHECK_EXIT(j, 3);
  CHECK_THAT(json_of(j).at("error").at("message").get<std::string>(), Contains("no terminal"));
  CHECK(repo.tree_snapshot() == before);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(log_entries(repo).size() == 1);
}

TEST_CASE("a confirm-tier file needs CONFIRM typed, not y", "[e2e][refusal][gate]") {
  TempRepo repo{{"deploy.sh", "echo old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("deploy.sh", "old", "new")), 0);
  CHECK(show_json(repo, 1).at("tier") == "confirm");
  Run y = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(y, 4);  // not CONFIRM: declined
  CHECK_THAT(y.tty, Contains("CONFIRM"));
  CHECK(repo.read("deploy.sh") == "echo old\n");
  CHECK(show_json(repo, 1).at("status") == "pending");
  Run c = repo.kai_tty({"approve", "1"}, "CONFIRM");
  KAI_CHECK_EXIT(c, 0);
  CHECK(repo.read("deploy.sh") == "echo new\n");
}

TEST_CASE("only configured approvers may decide", "[e2e][refusal][gate]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  size_t at = cfg.find("approvers = []");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("approvers = []").size(), "approvers = [\"somebody-else\"]");
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  auto before = repo.tree_snapshot();
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 3);
  CHECK_FALSE(a.prompted);
  CHECK_THAT(a.err, Contains("not an approver"));
  Run r = repo.kai_tty({"reject", "1"}, "y");
  KAI_CHECK_EXIT(r, 3);
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("a proposal that expired can no longer be approved", "[e2e][refusal][gate]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  size_t at = cfg.find("timeout = 300");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("timeout = 300").size(), "timeout = 1");
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  std::vector<std::string> args = edit("a.txt", "a", "A");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  // The waiting proposer notices the expiry by itself.
  Run w = waiter.finish(15s);
  KAI_CHECK_EXIT(w, 5);
  auto before = repo.tree_snapshot();
  before.erase("KAI-CODER-CHANGELOG.md");
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 5);
  CHECK_FALSE(a.prompted);
  auto after = repo.tree_snapshot();
  after.erase("KAI-CODER-CHANGELOG.md");
  CHECK(after == before);
  CHECK(show_json(repo, 1).at("status") == "timeout");
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  CHECK(entries.at(0).at("kind") == "timeout");
  // Logged once, however many commands look at it afterwards.
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 5);
  KAI_CHECK_EXIT(repo.kai({"apply", "1"}), 6);
  CHECK(log_entries(repo).size() == 1);
}

TEST_CASE("a malformed config refuses every command and names the file, line and key", "[e2e][refusal][config]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  repo.write("kaicoder.toml", "[approval]\ntimeout = 300\ntimout = 5\n");
  repo.trust_as_before();  // kaicoder trust refuses it now
  auto before = repo.tree_snapshot();
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"list"}, {"log"}, {"show", "1"}, {"apply", "1"}, edit("a.txt", "a", "B")}) {
    INFO(args[0]);
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains(repo.abs("kaicoder.toml").string() + ":3"));
    CHECK_THAT(r.err, Contains("timout"));
  }
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 2);
  CHECK_FALSE(a.prompted);
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("the policy can deny an action outright", "[e2e][refusal][policy]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  size_t at = cfg.find("delete = \"ask\"");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("delete = \"ask\"").size(), "delete = \"deny\"");
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  auto before = repo.tree_snapshot();
  Run d = repo.kai({"propose", "--path", "a.txt", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(d, 3);
  CHECK_THAT(d.err, Contains("denies"));
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("protected paths take surgical edits only and deny_write adds never-write paths", "[e2e][refusal][policy]") {
  TempRepo repo{{"oracle.html", "<p>old</p>\n"}, {"secrets/db.txt", "x\n"}};
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  for (auto [from, to] : {std::pair<std::string, std::string>{"protected = []", "protected = [\"oracle.html\"]"},
                          {"deny_write = []", "deny_write = [\"secrets/**\"]"}}) {
    size_t at = cfg.find(from);
    REQUIRE(at != std::string::npos);
    cfg.replace(at, from.size(), to);
  }
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  auto before = repo.tree_snapshot();
  Run w = propose_write(repo, "oracle.html", "<p>new</p>\n");
  KAI_CHECK_EXIT(w, 3);
  CHECK_THAT(w.err, Contains("protected"));
  Run d = repo.kai({"propose", "--path", "oracle.html", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(d, 3);
  Run s = propose_write(repo, "secrets/db.txt", "y\n");
  KAI_CHECK_EXIT(s, 3);
  CHECK_THAT(s.err, Contains("deny_write"));
  Run n = propose_write(repo, "secrets/new.txt", "y\n");
  KAI_CHECK_EXIT(n, 3);
  CHECK(repo.tree_snapshot() == before);
  // A surgical edit is allowed, and needs CONFIRM.
  KAI_REQUIRE_EXIT(repo.kai(edit("oracle.html", "old", "new")), 0);
  CHECK(show_json(repo, 1).at("tier") == "confirm");
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 4);  // not CONFIRM: declined
  CHECK(repo.read("oracle.html") == "<p>old</p>\n");
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "CONFIRM"), 0);
  CHECK(repo.read("oracle.html") == "<p>new</p>\n");
}

TEST_CASE("propose-only mode stages and records decisions but never applies", "[e2e][refusal][policy]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  size_t at = cfg.find("mode = \"normal\"");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("mode = \"normal\"").size(), "mode = \"propose-only\"");
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  auto before = repo.tree_snapshot();
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 3);
  CHECK_THAT(a.err, Contains("propose-only"));
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  Run ap = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(ap, 3);
  CHECK_THAT(ap.err, Contains("propose-only"));
  CHECK(repo.tree_snapshot() == before);
  CHECK(log_entries(repo).empty());
}

TEST_CASE("a --wait proposer learns that the apply was refused", "[e2e][refusal][stale]") {
  TempRepo repo{{"a.txt", "original\n"}};
  repo.init();
  Process waiter =
      repo.spawn_kai({"propose", "--path", "a.txt", "--content-file", "-", "--why", "w", "--wait"}, "from the agent\n");
  REQUIRE(staged(repo, 1));
  repo.write("a.txt", "hand edit\n");
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 6);
  Run w = waiter.finish(15s);
  KAI_CHECK_EXIT(w, 6);
  CHECK_THAT(w.out, Contains("failed"));
  CHECK(repo.read("a.txt") == "hand edit\n");
}

TEST_CASE("approve refuses a proposal that is already decided", "[e2e][refusal][gate]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  approve(repo, 1);
  auto before = repo.tree_snapshot();
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_FALSE(a.prompted);
  CHECK_THAT(a.err, Contains("applied"));
  Run r = repo.kai_tty({"reject", "1"}, "y");
  KAI_CHECK_EXIT(r, 6);
  CHECK(repo.tree_snapshot() == before);
  CHECK(log_entries(repo).size() == 1);
}

// ----- tampering ---------------------------------------------------------------------------------

TEST_CASE("apply refuses a proposal changed after approval", "[e2e][refusal][tamper]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "reviewed")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);

  std::string why = "changed after it was approved";
  SECTION("the replacement payload") { repo.write(".kaicoder/staging/1/replacement", "evil"); }
  SECTION("the target payload") { repo.write(".kaicoder/staging/1/target", "ol"); }
  SECTION("the path in the record") {
    repo.write("b.txt", "old\n");
    std::string meta = repo.read(".kaicoder/staging/1/meta.json");
    json j = json::parse(meta);
    j["path"] = "b.txt";
    repo.write(".kaicoder/staging/1/meta.json", j.dump(2));
    why = "the record of proposal 1 was not written by kaicoder (its seal does not verify)";
  }
  SECTION("the content payload of a write") {
    KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
    KAI_REQUIRE_EXIT(propose_write(repo, "a.txt", "reviewed\n"), 0);
    KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "2", "--no-apply"}, "y"), 0);
    repo.write(".kaicoder/staging/2/content", "evil\n");
  }
  int id = repo.exists(".kaicoder/staging/2") ? 2 : 1;
  auto before = tree_but_log(repo);
  Run a = repo.kai({"apply", std::to_string(id)});
  KAI_CHECK_EXIT(a, 6);
  CHECK_THAT(a.err, Contains(why));
  CHECK(tree_but_log(repo) == before);
  CHECK(repo.find(".bak-kaicoder-").empty());
}

// ----- rollback ----------------------------------------------------------------------------------

TEST_CASE("rollback refuses when the file was edited by hand since, and --force keeps the hand edit",
          "[e2e][refusal][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  repo.write("a.txt", "new\nhand edit\n");
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("a.txt"));
  CHECK_THAT(r.err, Contains("changed by hand"));
  CHECK_THAT(r.err, Contains("--force"));
  CHECK(repo.tree_snapshot() == before);

  Run f = repo.kai_tty({"--json", "rollback", id, "--force"}, "y");
  KAI_REQUIRE_EXIT(f, 0);
  json j = json_of(f);
  std::string rid = j.at("rollback_id");
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(repo.read("a.txt.bak-kaicoder-" + rid) == "new\nhand edit\n");
  CHECK(j.at("entry").at("why") == "undo " + id + " (forced)");
  // The forced rollback is itself reversible: the hand edit comes back.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(repo.read("a.txt") == "new\nhand edit\n");
}

TEST_CASE("rollback refuses when a later entry changed the file, naming it", "[e2e][refusal][rollback]") {
  TempRepo repo{{"a.txt", "1\n2\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "1", "one")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "2", "two")), 0);
  std::string first = approve(repo, 1);
  std::string second = approve(repo, 2);
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", first}, "y");
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("later entry " + second));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("rollback refuses when the file was removed by hand since", "[e2e][refusal][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  repo.remove("a.txt");
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("removed"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("rollback refuses a backup that was changed, removed or swapped for a symlink", "[e2e][refusal][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  const std::string bak = "a.txt.bak-kaicoder-" + id;
  REQUIRE(repo.read(bak) == "old\n");
  std::string why;

  SECTION("changed") {
    repo.write(bak, "tampered\n");
    why = "changed";
  }
  SECTION("removed") {
    repo.remove(bak);
    why = "missing";
  }
  SECTION("a symlink to a file with the same bytes outside root") {
    std::ofstream(repo.home() / "same.txt") << "old\n";
    repo.remove(bak);
    repo.symlink(bak, (repo.home() / "same.txt").string());
  }
  SECTION("a symlink to a file with the same bytes inside root") {
    repo.write("same.txt", "old\n");
    repo.remove(bak);
    repo.symlink(bak, "same.txt");
  }
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains(bak));
  if (!why.empty()) CHECK_THAT(r.err, Contains(why));
  CHECK(repo.tree_snapshot() == before);
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("a symlink planted at the backup name is never written through", "[e2e][refusal][backup]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto victim = repo.home() / "victim.txt";
  std::ofstream(victim) << "victim\n";
  // Plant a link at every name the backup could take in the next seconds.
  std::time_t now = std::time(nullptr);
  std::vector<std::string> planted;
  for (std::time_t t = now - 1; t <= now + 15; ++t) {
    std::string id = compact_utc(t);
    for (const std::string& suffix : {std::string{}, std::string("-2")}) {
      std::string name = "a.txt.bak-kaicoder-" + id + suffix;
      repo.symlink(name, victim.string());
      planted.push_back(name);
    }
  }
  Run a = repo.kai({"--json", "apply", "1"});
  KAI_REQUIRE_EXIT(a, 0);
  std::string rid = json_of(a).at("applied").at("rollback_id");
  std::string bak = "a.txt.bak-kaicoder-" + rid;
  CHECK_FALSE(repo.is_symlink(bak));
  CHECK(repo.read(bak) == "old\n");
  CHECK(repo.read("a.txt") == "new\n");
  std::ifstream in(victim);
  std::string v((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(v == "victim\n");
  for (const std::string& name : planted) {
    INFO(name);
    CHECK(repo.is_symlink(name));
  }
}

}  // namespace
