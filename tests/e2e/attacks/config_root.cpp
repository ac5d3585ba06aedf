// Attacks on where the policy and the root come from (SPEC §1, §2): an agent
// that names its own config with --config, points HOME or XDG_CONFIG_HOME at
// an allow-everything file, picks `/` or a subfolder as --root, or works in a
// tree whose kaicoder.toml nobody trusted or that changed since. Every agent
// step runs with no controlling terminal; the owner's steps on a pty.

#include <filesystem>
#include <fstream>

#include "tests/support/checks.hpp"

namespace fs = std::filesystem;
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

// A policy that lets every mutation through without a person.
constexpr const char* k_allow_all =
    "[policy.default]\nedit = \"allow\"\nwrite = \"allow\"\ndelete = \"allow\"\nrun = \"allow\"\n"
    "[[policy.rule]]\naction = \"edit\"\npath = \"**\"\ndecision = \"allow\"\n";

void write_outside(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

// What must not change when an attack is refused: the tree, git's files and the store.
struct Unchanged {
  const TempRepo& repo;
  std::map<std::string, std::string> tree = repo.tree_snapshot();
  std::string git_config = repo.read(".git/config"), git_head = repo.read(".git/HEAD");
  std::vector<std::string> staged =
      repo.exists(".kaicoder/staging") ? repo.ls(".kaicoder/staging") : std::vector<std::string>{};

  void check() const {
    CHECK(repo.tree_snapshot() == tree);
    CHECK(repo.read(".git/config") == git_config);
    CHECK(repo.read(".git/HEAD") == git_head);
    CHECK((repo.exists(".kaicoder/staging") ? repo.ls(".kaicoder/staging") : std::vector<std::string>{}) == staged);
  }
};

std::string status_of(const TempRepo& repo, int id) { return show_json(repo, id).at("status"); }

}  // namespace

TEST_CASE("attack: --config naming a staged allow-everything proposal is refused", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  // The agent stages a file whose bytes are a policy that allows everything.
  json req = {{"path", "policy.toml"}, {"content", k_allow_all}, {"why", "docs"}};
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, req.dump()), 0);
  REQUIRE(repo.read(".kaicoder/staging/1/content") == k_allow_all);
  Unchanged before{repo};
  Run r = repo.kai({"--config", ".kaicoder/staging/1/content", "propose", "--path", "a.txt", "--target", "old",
                    "--replacement", "pwned", "--why", "x"});
  KAI_CHECK_EXIT(r, 2);
  CHECK_THAT(r.err, Contains(".kaicoder/staging/1/content:1") && Contains("policy.default") &&
                        Contains("may only add deny or ask rules"));
  before.check();
  CHECK(repo.read("a.txt") == "old\n");
  // An allow rule alone is refused the same way.
  write_outside(repo.home() / "allow-rule.toml",
                "[[policy.rule]]\naction = \"edit\"\npath = \"**\"\ndecision = \"allow\"\n");
  Run rule = repo.kai({"--config", (repo.home() / "allow-rule.toml").string(), "propose", "--path", "a.txt", "--target",
                       "old", "--replacement", "pwned", "--why", "x"});
  KAI_CHECK_EXIT(rule, 2);
  CHECK_THAT(rule.err, Contains("allow-rule.toml:1") && Contains("policy.rule.decision"));
  before.check();
}

TEST_CASE("attack: --config setting the sandbox, a hook or the changelog path is refused", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const fs::path marker = repo.home() / "hook-ran";
  struct Case {
    std::string text, key;
    int line;
  };
  // A section it may not hold is refused at its header, a key at its line.
  const Case cases[] = {
      {"[run]\nsandbox = \"none\"\n", "run", 1},
      {"[hooks]\nnotify = \"touch " + marker.string() + "\"\n", "hooks", 1},
      {"[hooks]\nreview = \"cat .env\"\n", "hooks", 1},
      {"[changelog]\npath = \".git/config\"\n", "changelog", 1},
      {"[approval]\napprovers = [\"agent\"]\n", "approval", 1},
      {"[policy]\nmode = \"normal\"\n", "policy.mode", 2},
      {"[validate]\n\"*\" = \"true\"\n", "validate", 1},
      {"[paths]\nhardlinks = \"break\"\n", "paths.hardlinks", 2},
  };
  Unchanged before{repo};
  for (const auto& c : cases) {
    INFO(c.text);
    const fs::path cfg = repo.home() / "agent.toml";
    write_outside(cfg, c.text);
    Run r = repo.kai({"--config", cfg.string(), "propose", "--path", "a.txt", "--target", "old", "--replacement", "new",
                      "--why", "x"});
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains(cfg.string() + ":" + std::to_string(c.line) + ": " + c.key) && Contains("--config"));
    Run l = repo.kai({"--config", cfg.string(), "list"});
    KAI_CHECK_EXIT(l, 2);
  }
  // Nor can it exhaust memory or block on a device.
  write_outside(repo.home() / "huge.toml", std::string(2 << 20, '#'));
  Run huge = repo.kai({"--config", (repo.home() / "huge.toml").string(), "list"});
  KAI_CHECK_EXIT(huge, 2);
  CHECK_THAT(huge.err, Contains("larger than 1 MiB"));
  Run dev = repo.kai({"--config", "/dev/zero", "list"});
  KAI_CHECK_EXIT(dev, 2);
  CHECK_THAT(dev.err, Contains("is not a file"));
  before.check();
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("attack: a changelog path into .git/ or out of root is refused even from the trusted config",
          "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* bad : {".git/config", "../outside.md", "/tmp/log.md", ".kaicoder/log.md", "kaicoder.toml", ".env"}) {
    INFO(bad);
    repo.write("kaicoder.toml", std::string("[changelog]\npath = \"") + bad + "\"\n");
    repo.trust_as_before();  // kaicoder trust refuses it now
    Unchanged before{repo};
    Run r = repo.kai(edit("a.txt", "old", "new"));
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("changelog.path"));
    before.check();
  }
}

TEST_CASE("attack: HOME and XDG_CONFIG_HOME naming an allow-everything config are ignored", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const fs::path fake = repo.home() / "fake-home";
  write_outside(fake / ".config" / "kaicoder" / "config.toml", k_allow_all);
  write_outside(fake / "xdg" / "kaicoder" / "config.toml", k_allow_all);
  EnvOverrides env = {{"HOME", fake.string()}, {"XDG_CONFIG_HOME", (fake / "xdg").string()}};
  Run r = repo.kai(edit("a.txt", "old", "pwned"), "", env);
  KAI_CHECK_EXIT(r, 0);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(status_of(repo, 1) == "pending");
}

TEST_CASE("attack: --root / to read or list outside the tree is refused", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const fs::path sentinel = repo.home() / "passwd-like";
  write_outside(sentinel, "root:x:0:0:sentinel-secret:/root:/bin/sh\n");
  Unchanged before{repo};
  Run rd = repo.kai({"--root", "/", "read", sentinel.string()});
  KAI_CHECK_EXIT(rd, 3);
  CHECK_THAT(rd.err, Contains("filesystem root"));
  CHECK_THAT(rd.all(), !Contains("sentinel-secret"));
  Run ls = repo.kai({"--root", "/", "ls", repo.home().string()});
  KAI_CHECK_EXIT(ls, 3);
  CHECK_THAT(ls.all(), !Contains("passwd-like"));
  KAI_CHECK_EXIT(repo.kai({"--root", "/", "propose", "--path", sentinel.string(), "--delete", "--why", "x"}), 3);
  // Nor through a path that reaches / by a symlink.
  repo.symlink("to-slash", "/");
  KAI_CHECK_EXIT(repo.kai({"--root", "to-slash", "read", sentinel.string()}), 3);
  repo.remove("to-slash");
  before.check();
  CHECK(read_outside(sentinel) == "root:x:0:0:sentinel-secret:/root:/bin/sh\n");
}

TEST_CASE("attack: --root naming a subfolder of the root is refused", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}, {"sub/b.txt", "b\n"}};
  repo.init();
  Unchanged before{repo};
  for (const std::string& root : {std::string("sub"), repo.abs("sub").string(), repo.home().string()}) {
    INFO(root);
    Run r =
        repo.kai({"--root", root, "propose", "--path", "b.txt", "--target", "b", "--replacement", "x", "--why", "x"});
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("is not a trusted root"));
    KAI_CHECK_EXIT(repo.kai({"--root", root, "ls"}), 3);
  }
  before.check();
  CHECK_FALSE(repo.exists("sub/.kaicoder"));
  // The root itself, by a relative or absolute name, is fine.
  KAI_CHECK_EXIT(repo.kai({"--root", ".", "ls"}), 0);
  KAI_CHECK_EXIT(repo.kai({"--root", repo.path().string(), "ls"}), 0);
}

TEST_CASE("attack: --config with an empty file does not drop the owner's deny_read", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}, {"private/notes.txt", "private-sentinel\n"}};
  repo.init();
  write_outside(repo.owner_dir() / "config.toml", "[paths]\ndeny_read = [\"private/**\"]\n");
  write_outside(repo.home() / "empty.toml", "");
  for (const std::vector<std::string>& pre :
       {std::vector<std::string>{}, {"--config", (repo.home() / "empty.toml").string()}}) {
    std::vector<std::string> args = pre;
    args.insert(args.end(), {"read", "private/notes.txt"});
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.all(), !Contains("private-sentinel"));
  }
  // And an overlay may add to it.
  write_outside(repo.home() / "more.toml", "[paths]\ndeny_read = [\"a.txt\"]\n");
  KAI_CHECK_EXIT(repo.kai({"--config", (repo.home() / "more.toml").string(), "read", "a.txt"}), 3);
  KAI_CHECK_EXIT(repo.kai({"read", "a.txt"}), 0);
}

TEST_CASE("attack: a cloned tree with a committed allow-everything kaicoder.toml is not trusted", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}, {"kaicoder.toml", k_allow_all}};
  Unchanged before{repo};
  for (const std::vector<std::string>& args : {edit("a.txt", "old", "pwned"),
                                               {"run", "--why", "x", "--", "true"},
                                               {"list"},
                                               {"show", "1"},
                                               {"log"},
                                               {"read", "a.txt"},
                                               {"ls"},
                                               {"apply", "1"},
                                               {"reject", "1"},
                                               {"rollback", "last"},
                                               {"--root", ".", "list"}}) {
    INFO(args[0]);
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("not a trusted root") && Contains("kaicoder trust"));
  }
  // The person at a terminal is refused too until they trust it.
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 3);
  // A trusted-roots list planted through HOME is not the owner's.
  const fs::path fake = repo.home() / "fake-home" / ".config" / "kaicoder";
  write_outside(fake / "trusted-roots.json",
                json{{"version", 1}, {"roots", {{{"root", repo.path().string()}, {"digest", "x"}}}}}.dump());
  KAI_CHECK_EXIT(repo.kai(edit("a.txt", "old", "pwned"), "", {{"HOME", (repo.home() / "fake-home").string()}}), 3);
  before.check();
  CHECK_FALSE(repo.exists(".kaicoder"));
  CHECK(repo.read("a.txt") == "old\n");
  // doctor works and says why.
  Run d = repo.kai({"doctor"});
  KAI_CHECK_EXIT(d, 1);
  CHECK_THAT(d.out, Contains("trust") && Contains("not a trusted root"));
  // Once the owner trusts it at a terminal, having been shown all of it, it is the policy.
  Run t = repo.kai_tty({"trust"}, "y");
  KAI_REQUIRE_EXIT(t, 0);
  CHECK_THAT(t.out, Contains("never been trusted") && Contains("| decision = \"allow\""));
  KAI_CHECK_EXIT(repo.kai({"ls"}), 0);
}

TEST_CASE("attack: a kaicoder.toml changed after trust stops every command until the owner trusts it again",
          "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  // A run or a `git pull` brings a new hook and an allow rule.
  std::string cfg = repo.read("kaicoder.toml");
  const size_t at = cfg.find("notify = \"\"");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("notify = \"\"").size(), "notify = \"touch hook-ran\"");
  repo.write("kaicoder.toml", cfg + "[[policy.rule]]\naction = \"edit\"\npath = \"**\"\ndecision = \"allow\"\n");
  Unchanged before{repo};
  for (const std::vector<std::string>& args : {edit("a.txt", "old", "pwned"), {"list"}, {"read", "a.txt"}}) {
    INFO(args[0]);
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("kaicoder.toml' changed since you trusted it") && Contains("kaicoder trust"));
  }
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 3);
  CHECK_FALSE(a.prompted);
  // The agent cannot trust it: there is no terminal.
  Run agent = repo.kai({"trust"});
  KAI_CHECK_EXIT(agent, 3);
  CHECK_THAT(agent.err, Contains("terminal"));
  // Answered no, nothing changes.
  KAI_CHECK_EXIT(repo.kai_tty({"trust"}, "n"), 4);
  KAI_CHECK_EXIT(repo.kai({"list"}), 3);
  before.check();
  CHECK(repo.read("a.txt") == "old\n");
  CHECK_FALSE(repo.exists("hook-ran"));
  // The owner is shown exactly what changed, as a diff, and says yes.
  Run t = repo.kai_tty({"trust"}, "y");
  KAI_REQUIRE_EXIT(t, 0);
  CHECK(t.prompted);
  CHECK_THAT(t.out, Contains("changed since you trusted it") && Contains("+notify = \"touch hook-ran\"") &&
                        Contains("+decision = \"allow\""));
  CHECK_THAT(t.out, !Contains(" [approval]"));  // unchanged lines far from the change are not shown
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);
  KAI_CHECK_EXIT(repo.kai({"trust"}), 0);  // already trusted: nothing to ask
}

TEST_CASE("attack: propose in a subfolder of an untrusted tree is refused and creates no state", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}, {"sub/b.txt", "b\n"}};
  const std::string bin = kaicoder_bin();
  Run r =
      repo.spawn({"sh", "-c", "cd sub && exec '" + bin + "' propose --path b.txt --target b --replacement x --why x"})
          .finish();
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("no trusted root"));
  CHECK_FALSE(repo.exists("sub/.kaicoder"));
  CHECK_FALSE(repo.exists(".kaicoder"));
  CHECK(repo.read("sub/b.txt") == "b\n");
}

TEST_CASE("attack: a kaicoder.toml the agent writes into a subfolder is ignored under a trusted root",
          "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}, {"sub/b.txt", "b\n"}};
  repo.init();
  // With a shell of its own the agent plants a policy below the root.
  repo.write("sub/kaicoder.toml", k_allow_all);
  const std::string bin = kaicoder_bin();
  Run r = repo.spawn({"sh", "-c",
                      "cd sub && exec '" + bin + "' --json propose --path b.txt --target b --replacement x --why x"})
              .finish();
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(json_of(r).at("status") == "pending");
  CHECK(repo.read("sub/b.txt") == "b\n");
  CHECK_FALSE(repo.exists("sub/.kaicoder"));
  CHECK(status_of(repo, 1) == "pending");
}

TEST_CASE("attack: init and trust without a terminal are refused", "[attack][config]") {
  TempRepo fresh{{"a.txt", "old\n"}};
  Unchanged before{fresh};
  Run i = fresh.kai({"init"});
  KAI_CHECK_EXIT(i, 3);
  CHECK_THAT(i.err, Contains("kaicoder init asks its owner at a terminal"));
  before.check();
  CHECK_FALSE(fresh.exists("kaicoder.toml"));
  CHECK_FALSE(fs::exists(fresh.owner_dir() / "trusted-roots.json"));

  TempRepo clone{{"a.txt", "old\n"}, {"kaicoder.toml", k_allow_all}};
  Run t = clone.kai({"trust"});
  KAI_CHECK_EXIT(t, 3);
  CHECK_THAT(t.err, Contains("kaicoder trust asks its owner at a terminal"));
  CHECK_FALSE(fs::exists(clone.owner_dir() / "trusted-roots.json"));
  KAI_CHECK_EXIT(clone.kai({"list"}), 3);
}

TEST_CASE("attack: a kaicoder.toml every command would refuse is never trusted", "[attack][config]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const std::string list = repo.read((repo.owner_dir() / "trusted-roots.json").string());
  const std::string good = repo.read("kaicoder.toml");
  struct Bad {
    std::string text, names;
  };
  const Bad cases[] = {
      {"[approval]\napprovers = [\"\"]\n", "approvers"},
      {"[run]\nenv = [\"A\\u0000B\"]\n", "run.env"},
      {"[changelog]\npath = \"bogus\"\n", "changelog.path"},
      {"[approval]\napprovers = [\"a\"\n", "kaicoder.toml:2"},  // does not parse
  };
  for (const auto& c : cases) {
    INFO(c.text);
    repo.write("kaicoder.toml", c.text);
    Unchanged before{repo};
    Run r = repo.kai_tty({"trust"}, "y");
    INFO(r.all());
    KAI_CHECK_EXIT(r, 2);
    CHECK_FALSE(r.prompted);  // shown, then refused before the question
    CHECK_THAT(r.all(), Contains(c.names));
    CHECK_THAT(r.all(), Contains("every command would refuse it"));
    before.check();
    CHECK(repo.read((repo.owner_dir() / "trusted-roots.json").string()) == list);
    // Still the config trusted before: every command says it changed.
    Run l = repo.kai({"list"});
    KAI_CHECK_EXIT(l, 3);
    CHECK_THAT(l.err, Contains("changed since you trusted it"));
  }
  repo.write("kaicoder.toml", good);
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);
}
