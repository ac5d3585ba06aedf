// Two-user mode (issue 14): the agent runs as a Unix user of its own that
// can read the tree but write none of it, and reaches the owner only through
// the spool. The attacks of an agent that keeps a shell — writing the tree,
// the changelog or the store, reading secrets or the owner's key, answering
// `kaicoder approve` through `script`, approving its own proposal, planting
// malformed, symlinked, foreign or oversized spool entries — are performed
// as that user and shown refused; the owner approves through a
// pseudo-terminal and the change lands.
//
// The agent user is a throwaway account made by `kaicoder agent-user setup`
// (useradd) and removed after the case (userdel -r). That takes root, which
// CI has; elsewhere every case says why it is skipped and passes. ctest runs
// the [twouser] cases one at a time (tests/CMakeLists.txt).

#include "tests/e2e/attacks/two_user_support.hpp"

namespace {
using namespace kai::test;
using namespace kai::test::two_user;
using Catch::Matchers::Contains;
}  // namespace

TEST_CASE("two-user: the agent proposes through the spool, the owner approves at a terminal, the change lands",
          "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}};
  set_up(repo, agent);
  Run check = repo.kai({"agent-user", "check"});
  KAI_CHECK_EXIT(check, 0);
  CHECK_THAT(check.out, Contains("two-user: the agent cannot write the tree or approve"));

  Run p = agent_kai(repo, agent,
                    {"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "t",
                     "--agent", "someone-else"});
  KAI_REQUIRE_EXIT(p, 0);
  const std::string ticket = spooled_ticket(p);
  // A dry run is judged on the agent's side and spools nothing.
  Run dry = agent_kai(
      repo, agent, {"propose", "--dry-run", "--path", "a.txt", "--target", "old", "--replacement", "x", "--why", "t"});
  KAI_CHECK_EXIT(dry, 0);
  CHECK_THAT(dry.out, Contains("dry run"));
  // Not taken in yet: the agent's wait says so and exits 8.
  Run early = agent_kai(repo, agent, {"wait", ticket, "--timeout", "0"});
  KAI_CHECK_EXIT(early, 8);
  CHECK_THAT(early.err, Contains("waiting for intake"));

  // The owner's list only reads: it takes nothing in, and says what waits.
  Run owner_list = repo.kai({"list"});
  KAI_CHECK_EXIT(owner_list, 0);
  CHECK_THAT(owner_list.out, Contains("no proposals"));
  CHECK_THAT(owner_list.err, Contains("1 spool entry of the agent user waits for intake"));

  Run in = repo.kai({"--json", "intake"});
  KAI_REQUIRE_EXIT(in, 0);
  json j = json::parse(json_text(in.out));
  REQUIRE(j.at("taken").size() == 1);
  CHECK(j["taken"][0]["proposal"] == 1);
  // Who proposed is the entry's owner as the kernel says, not the name it claimed.
  CHECK(j["taken"][0]["proposer"] == agent.name);
  CHECK(j["taken"][0]["uid"] == agent.uid());
  CHECK(j.at("quarantined").empty());
  CHECK(names_in(repo.abs(".kaicoder/spool")).empty());

  Run shown = agent_kai(repo, agent, {"--json", "show", ticket});
  KAI_CHECK_EXIT(shown, 0);
  json sj = json::parse(json_text(shown.out));
  CHECK(sj.at("status") == "pending");
  CHECK(sj.at("agent") == agent.name);
  CHECK(sj.at("proposer_uid") == agent.uid());
  Run owner_show = repo.kai({"show", "1"});
  CHECK_THAT(owner_show.out, Contains("proposer: " + agent.name));

  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 0);
  CHECK(repo.read("a.txt") == "new\n");
  // The agent reads the status, never what binds the decision.
  Run copy = agent_sh(repo, agent, "cat .kaicoder/status/1.json");
  KAI_CHECK_EXIT(copy, 0);
  CHECK_THAT(copy.out, Contains("\"applied\""));
  CHECK(copy.out.find("approved_digest") == std::string::npos);
  CHECK(copy.out.find("seal") == std::string::npos);
  Run done = agent_kai(repo, agent, {"wait", ticket, "--timeout", "5"});
  KAI_CHECK_EXIT(done, 0);
  CHECK_THAT(done.out, Contains("proposal 1 is applied"));
  Run listed = agent_kai(repo, agent, {"list"});
  KAI_CHECK_EXIT(listed, 0);
  CHECK_THAT(listed.out, Contains("applied"));
  // The owner's wait accepts the ticket too.
  KAI_CHECK_EXIT(repo.kai({"wait", ticket, "--timeout", "0"}), 0);
}

TEST_CASE("two-user: a run proposed by the agent is taken in and runs in the owner's process once approved",
          "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}};
  set_up(repo, agent);
  // A blocked command is refused on the agent's side at once and never spooled.
  Run blocked = agent_kai(repo, agent, {"run", "--why", "t", "--", "rm", "-rf", "/"});
  KAI_CHECK_EXIT(blocked, 3);
  CHECK_THAT(blocked.err, Contains("blocked"));
  CHECK(names_in(repo.abs(".kaicoder/spool")).empty());
  Run r = agent_kai(repo, agent, {"--json", "run", "--why", "t", "--shell", "touch made-by-run && echo said-so"});
  KAI_REQUIRE_EXIT(r, 0);
  const std::string ticket = spooled_ticket(r);
  Run a = repo.kai_tty({"approve", "1"}, "CONFIRM");  // takes the spool in first
  KAI_CHECK_EXIT(a, 0);
  CHECK_THAT(a.all(), Contains("took in ticket " + ticket));
  CHECK(repo.exists("made-by-run"));
  struct stat st {};
  REQUIRE(::stat(repo.abs("made-by-run").c_str(), &st) == 0);
  CHECK(st.st_uid == ::getuid());  // the owner's process ran it, not the agent's
  Run w = agent_kai(repo, agent, {"wait", ticket, "--timeout", "5"});
  KAI_CHECK_EXIT(w, 0);
  CHECK_THAT(w.out, Contains("said-so"));  // the run's output reaches the agent
}

TEST_CASE("two-user: intake --watch takes entries in as they arrive, and the agent's --wait hears the outcome",
          "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}};
  set_up(repo, agent);
  Process watcher = repo.spawn_kai({"intake", "--watch"});
  Process waiter = repo.spawn(as_user(agent, {kaicoder_bin(), "propose", "--path", "a.txt", "--target", "old",
                                              "--replacement", "new", "--why", "t", "--wait"}));
  // Taken in by the watcher alone: no other command of the owner runs meanwhile.
  for (int i = 0; i < 150 && !repo.exists(".kaicoder/staging/1/meta.json"); ++i) std::this_thread::sleep_for(100ms);
  REQUIRE(repo.exists(".kaicoder/staging/1/meta.json"));
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 0);
  Run w = waiter.finish();
  KAI_CHECK_EXIT(w, 0);
  CHECK_THAT(w.err, Contains("is in the spool for the owner"));
  CHECK_THAT(w.out, Contains("proposal 1 is applied"));
  REQUIRE(::kill(watcher.pid(), SIGTERM) == 0);
  Run wr = watcher.finish();
  KAI_CHECK_EXIT(wr, 0);
  CHECK_THAT(wr.out, Contains("proposal 1"));
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("two-user: the agent user cannot write the tree, the changelog or the store, nor read secrets or the key",
          "[e2e][attack][twouser]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {".env", "TOKEN=s3cr3t-value\n"}, {"src/b.txt", "b\n"}};
  set_up(repo, agent);
  // Something in the changelog and the store first.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "src/b.txt", "--target", "b", "--replacement", "c", "--why", "t"}),
                   0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  REQUIRE(repo.exists("KAI-CODER-CHANGELOG.md"));
  const auto before = repo.tree_snapshot();
  const std::string key = (repo.owner_dir() / "key").string();
  for (const std::string& attack :
       {std::string("echo x > a.txt"), std::string("echo x >> KAI-CODER-CHANGELOG.md"), std::string("touch new-file"),
        std::string("touch src/new-file"), std::string("mv a.txt a2.txt"), std::string("rm -f src/b.txt"),
        std::string("echo x > .kaicoder/lock"), std::string("ls .kaicoder/staging"),
        std::string("cat .kaicoder/staging/1/meta.json"), std::string("echo x > .kaicoder/status/1.json"),
        std::string("echo x > .kaicoder/tickets/forged.json"), std::string("touch .git/forged"),
        std::string("cat .env"), "cat '" + key + "'", "ls '" + repo.owner_dir().string() + "'"}) {
    INFO(attack);
    Run r = agent_sh(repo, agent, attack);
    CHECK(r.exit_code != 0);
  }
  CHECK(repo.tree_snapshot() == before);
  // kaicoder's own reads refuse the secret too, and the agent can read the rest.
  Run secret = agent_kai(repo, agent, {"read", ".env"});
  KAI_CHECK_EXIT(secret, 3);
  CHECK(secret.all().find("s3cr3t-value") == std::string::npos);
  Run plain = agent_kai(repo, agent, {"read", "a.txt"});
  KAI_CHECK_EXIT(plain, 0);
  CHECK_THAT(plain.out, Contains("old"));
  KAI_CHECK_EXIT(agent_kai(repo, agent, {"ls"}), 0);
}

TEST_CASE("two-user: the agent user cannot approve, not even by answering kaicoder approve through script",
          "[e2e][attack][twouser]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}};
  set_up(repo, agent);
  Run p =
      agent_kai(repo, agent, {"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "t"});
  KAI_REQUIRE_EXIT(p, 0);
  KAI_REQUIRE_EXIT(repo.kai({"intake"}), 0);
  const std::string bin = kaicoder_bin();
  // The attack of issue 14: a pseudo-terminal of its own that answers y.
  Run scripted =
      agent_sh(repo, agent, "setsid bash -c \"printf 'y\\n' | script -qec '" + bin + " approve 1' /dev/null\"");
  CHECK(scripted.exit_code != 0);
  CHECK_THAT(scripted.all(), Contains("never decides"));
  for (const char* verb : {"approve", "apply", "reject"}) {
    Run r = agent_kai(repo, agent, {verb, "1"});
    INFO(verb);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("belongs to the owner"));
  }
  Run rb = agent_kai(repo, agent, {"rollback", "last"});
  KAI_CHECK_EXIT(rb, 3);
  CHECK(repo.read("a.txt") == "old\n");
  Run st = repo.kai({"--json", "show", "1"});
  CHECK(json::parse(json_text(st.out)).at("status") == "pending");
}

TEST_CASE("two-user: the uid that proposed a spooled proposal cannot approve it", "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}};
  set_up(repo, agent);
  // The owner drops an entry into the spool by hand: its proposer is the owner's uid.
  const std::string entry =
      R"({"version":1,"type":"propose","cwd":"","request":{"path":"a.txt","target":"old","replacement":"new","why":"t"}})";
  repo.write(".kaicoder/spool/20260101T000000Z-own-1.json", entry);
  KAI_REQUIRE_EXIT(repo.kai({"intake"}), 0);
  Run shown = repo.kai({"--json", "show", "1"});
  CHECK(json::parse(json_text(shown.out)).at("proposer_uid") == ::getuid());
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 3);
  CHECK_THAT(a.all(), Contains("who may not approve it"));
  CHECK(repo.read("a.txt") == "old\n");
  // A proposal the owner makes in their own process is theirs to approve, as in single-user mode.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "mine", "--why", "t"}),
                   0);
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "2"}, "y"), 0);
  CHECK(repo.read("a.txt") == "mine\n");
}

TEST_CASE(
    "two-user: malformed, symlinked, foreign-owned and oversized spool entries are quarantined, the good one is taken "
    "in",
    "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"secret.txt", "do not read\n"}};
  set_up(repo, agent);
  const fs::path spool = repo.abs(".kaicoder/spool");
  // The largest entry intake reads is twice [limits] content plus 1 MiB.
  std::string toml = repo.read("kaicoder.toml");
  const auto at = toml.find("\ncontent = 67108864\n");
  REQUIRE(at != std::string::npos);
  repo.write("kaicoder.toml", toml.replace(at, 20, "\ncontent = 1024\n"));
  repo.trust();
  const std::string good =
      R"({"version":1,"type":"propose","cwd":"","request":{"path":"a.txt","target":"old","replacement":"new","why":"t"}})";
  // As the agent: malformed JSON, an unknown field, a symlink to a file it cannot write, an oversized entry.
  KAI_REQUIRE_EXIT(agent_sh(repo, agent, "printf '{not json' > .kaicoder/spool/t-bad-json.json"), 0);
  KAI_REQUIRE_EXIT(agent_sh(repo, agent,
                            "printf '{\"version\":1,\"type\":\"propose\",\"cwd\":\"\",\"request\":{},\"x\":1}' > "
                            ".kaicoder/spool/t-unknown.json"),
                   0);
  KAI_REQUIRE_EXIT(agent_sh(repo, agent, "ln -s ../../secret.txt .kaicoder/spool/t-link.json"), 0);
  KAI_REQUIRE_EXIT(agent_sh(repo, agent, "head -c 3000000 /dev/zero | tr '\\0' ' ' > .kaicoder/spool/t-big.json"), 0);
  KAI_REQUIRE_EXIT(agent_sh(repo, agent, "echo x > .kaicoder/spool/not-an-entry"), 0);
  // Owned by a third uid, neither the agent nor the owner.
  repo.write(".kaicoder/spool/t-foreign.json", good);
  REQUIRE(::chown((spool / "t-foreign.json").c_str(), 65534, 65534) == 0);
  // And one good entry through kaicoder itself.
  Run p = agent_kai(repo, agent,
                    {"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "t"});
  KAI_REQUIRE_EXIT(p, 0);
  const std::string ticket = spooled_ticket(p);

  Run in = repo.kai({"--json", "intake"});
  KAI_REQUIRE_EXIT(in, 0);
  json j = json::parse(json_text(in.out));
  REQUIRE(j.at("taken").size() == 1);
  CHECK(j["taken"][0]["ticket"] == ticket);
  CHECK(j["taken"][0]["proposal"] == 1);
  REQUIRE(j.at("quarantined").size() == 6);
  std::string reasons;
  for (const auto& q : j["quarantined"]) reasons += q.at("error").at("message").get<std::string>() + "\n";
  CHECK_THAT(reasons, Contains("not one JSON value"));
  CHECK_THAT(reasons, Contains("unknown field 'x'"));
  CHECK_THAT(reasons, Contains("symlink"));
  CHECK_THAT(reasons, Contains("over the limit"));
  CHECK_THAT(reasons, Contains("neither the agent user"));
  CHECK_THAT(reasons, Contains("not <ticket>.json"));
  CHECK(names_in(spool).empty());
  CHECK(names_in(repo.abs(".kaicoder/spool-quarantine")).size() == 6);
  CHECK(repo.read("secret.txt") == "do not read\n");
  CHECK(repo.read("a.txt") == "old\n");  // nothing half-applied
  Run ids = repo.kai({"--json", "list"});
  CHECK(json::parse(json_text(ids.out)).at("proposals").size() == 1);
  // The agent learns why its bad entry went nowhere.
  Run w = agent_kai(repo, agent, {"wait", "t-bad-json"});
  KAI_CHECK_EXIT(w, 2);
  CHECK_THAT(w.err, Contains("malformed spool entry"));
}

TEST_CASE(
    "two-user: check and doctor name what the agent user can still write, and setup puts it right and is idempotent",
    "[e2e][attack][twouser]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"config/.env", "PASSWORD=x\n"}};
  set_up(repo, agent);
  CHECK((repo.mode("config/.env") & 0007) == 0);
  Run d = repo.kai({"doctor"});
  CHECK_THAT(d.out, Contains("two-user: the agent cannot write the tree or approve"));
  CHECK_THAT(d.out, Contains("mode 711: the agent user passes through to the spool"));
  CHECK_THAT(d.out, Contains("nothing waiting for intake"));
  repo.chmod("a.txt", 0666);
  repo.chmod("config/.env", 0644);
  Run c = repo.kai({"agent-user", "check"});
  KAI_CHECK_EXIT(c, 3);
  CHECK_THAT(c.out, Contains("writable:       a.txt"));
  CHECK_THAT(c.out, Contains("config/.env"));
  Run d2 = repo.kai({"doctor"});
  CHECK_THAT(d2.out, Contains("two-user mode does not hold"));
  CHECK_THAT(d2.out, Contains("a.txt"));
  Run again = repo.kai({"agent-user", "setup", agent.name});
  KAI_CHECK_EXIT(again, 0);
  KAI_CHECK_EXIT(repo.kai({"agent-user", "check"}), 0);
  Run third = repo.kai({"agent-user", "setup", agent.name});
  KAI_CHECK_EXIT(third, 0);
  CHECK_THAT(third.out, Contains("already set up"));
  // Not root: setup says the exact command to run with sudo and does nothing.
  Run nonroot = agent_kai(repo, agent, {"agent-user", "setup", agent.name});
  KAI_CHECK_EXIT(nonroot, 3);
  CHECK_THAT(nonroot.out,
             Contains("sudo kaicoder --root '" + repo.path().string() + "' agent-user setup " + agent.name));
}

TEST_CASE("two-user: the agent user reads no file of the owner's from the snapshots, backups or any store folder",
          "[e2e][attack][twouser]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"notes/private.md", "owner-only-marker-7f3a\n"}};
  set_up(repo, agent);
  REQUIRE(::chmod(repo.abs("notes/private.md").c_str(), 0600) == 0);
  // A run of the owner's: the snapshots before and after it hold the private file.
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "t", "--shell", "printf 'new\\n' > a.txt"}), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "CONFIRM"), 0);
  REQUIRE(repo.exists(".kaicoder/snapshots.git/HEAD"));
  // Every folder of the store that holds file contents lets the agent user
  // pass no further; only the spool's folders are the agent's to use.
  for (const auto& e : fs::directory_iterator(repo.abs(".kaicoder"))) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || e.is_symlink() || name == "spool" || name == "tickets" || name == "status") continue;
    struct stat st {};
    REQUIRE(::lstat(e.path().c_str(), &st) == 0);
    INFO(name);
    CHECK((st.st_mode & 07777) == 0700);
  }
  // What the agent would do: inflate every object it can reach.
  const fs::path script = repo.path().parent_path() / "inflate.py";
  std::ofstream(script) << R"(import os, sys, zlib
found = 0
for top, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        try:
            data = open(os.path.join(top, f), 'rb').read()
        except OSError:
            continue
        try:
            data = zlib.decompress(data)
        except zlib.error:
            pass
        if b'owner-only-marker' in data:
            found += 1
print('FOUND', found)
)";
  fs::permissions(script, fs::perms(0644));
  Run r = agent_sh(repo, agent, "python3 '" + script.string() + "' .kaicoder; ls .kaicoder/snapshots.git && echo LISTED; true");
  INFO(r.all());
  CHECK_THAT(r.out, Contains("FOUND 0"));
  CHECK(r.out.find("LISTED") == std::string::npos);
}

TEST_CASE("two-user: a flood of spool entries delays the owner's prompt by one bounded batch, and intake takes "
          "in the rest",
          "[e2e][attack][twouser][spool]") {
  KAI_NEED_USERS();
  ThrowawayUser agent;
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "one\n"}};
  set_up(repo, agent);
  // The agent may have 40 proposals pending ([limits] pending, 100 by
  // default; tests/e2e/attacks/limits.cpp holds that one): the flood below
  // is more than one intake batch (25) and more than a batch and the limit
  // together, so it shows both bounds, the batch that delays the owner's
  // prompt and the limit that refuses the rest. It was 400 against the
  // default limit: each entry intake takes in counts the pending ones, so
  // the flood's size was the case's cost, not what it proves.
  std::string config = repo.read("kaicoder.toml");
  const size_t limit = config.find("\npending = 100\n");
  REQUIRE(limit != std::string::npos);
  config.replace(limit, 15, "\npending = 40\n");
  repo.write("kaicoder.toml", config);
  repo.trust();
  constexpr int k_limit = 40;
  // The owner's own proposal, made before the flood.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "mine"}, "two\n"), 0);
  // As the agent: 80 tiny valid entries, each another proposal (the
  // same one again would be the pending one), straight into the spool. The
  // batch an owner's command takes in is 25 whatever the flood's size.
  constexpr int k_flood = 80;
  static_assert(k_flood > 25 + k_limit);
  KAI_REQUIRE_EXIT(agent_sh(repo, agent,
                            "i=0; while [ $i -lt " + std::to_string(k_flood) +
                                " ]; do i=$((i+1)); printf '{\"version\":1,\"type\":\"propose\",\"cwd\":"
                                "\"\",\"request\":{\"path\":\"a.txt\",\"target\":\"old\",\"replacement\":\"new "
                                "%s\",\"why\":\"t\"}}' "
                                "$i > .kaicoder/spool/flood-$i.json; done"),
                   0);
  REQUIRE(names_in(repo.abs(".kaicoder/spool")).size() == k_flood);
  auto proposals = [&] {
    Run l = repo.kai({"--json", "list"});
    return json::parse(json_text(l.out)).at("proposals").size();
  };

  // The owner's approve takes in one batch, says how many wait, then asks.
  Run a = repo.kai_tty({"approve", "1"}, "y");
  INFO(a.all());
  KAI_REQUIRE_EXIT(a, 0);
  CHECK(a.prompted);
  CHECK(repo.read("b.txt") == "two\n");
  CHECK_THAT(a.all(), Contains(std::to_string(k_flood - 25) + " more wait") && Contains("kaicoder intake"));
  CHECK(names_in(repo.abs(".kaicoder/spool")).size() == k_flood - 25);
  CHECK(proposals() == 1 + 25);
  // A read takes none in, and says how many wait.
  Run l = repo.kai({"list"});
  CHECK_THAT(l.err, Contains(std::to_string(k_flood - 25) + " spool entries"));
  CHECK(proposals() == 1 + 25);

  // intake takes in every one: staged up to the agent's [limits] pending
  // (40), each later one refused with its ticket.
  Run in = repo.kai({"--json", "intake"}, "", {}, std::chrono::seconds(550));
  INFO(in.err);
  KAI_REQUIRE_EXIT(in, 0);
  const json took = json::parse(json_text(in.out));
  CHECK(took.at("taken").size() == k_flood - 25);
  CHECK(took.at("quarantined").empty());
  CHECK(names_in(repo.abs(".kaicoder/spool")).empty());
  CHECK(proposals() == 1 + k_limit);
}
