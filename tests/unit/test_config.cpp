// Configuration is strict: every malformed input names file, line and key.

#include "unit/temp_dir.hpp"

#include "lib/config/config.hpp"
#include "lib/config/policy.hpp"
#include "lib/util/time.hpp"

namespace {
using kai::test::TempDir;

kai::Result<kai::Config> load_text(TempDir& d, const std::string& text) {
  d.write("kaicoder.toml", text);
  return kai::load_config({d / "kaicoder.toml"});
}
}  // namespace

TEST_CASE("the shipped example is a valid config with the documented defaults", "[config]") {
  TempDir d;
  auto c = load_text(d, kai::default_config_text());
  REQUIRE(c);
  CHECK(c->timeout == 300);
  CHECK(c->mode == "normal");
  CHECK(c->defaults.at("read") == "allow");
  CHECK(c->defaults.at("edit") == "ask");
  // written in seconds, kept in milliseconds
  CHECK(c->run_timeout == std::chrono::seconds(600));
  CHECK(c->validate_timeout == std::chrono::seconds(60));
  CHECK(c->notify_timeout == std::chrono::seconds(10));
  CHECK(c->review_timeout == std::chrono::seconds(60));
  CHECK(c->notify.empty());
  CHECK(c->validate.empty());
  CHECK(c->snapshots_keep == 50);
  CHECK(c->changelog == "KAI-CODER-CHANGELOG.md");
  CHECK(std::find(c->confirm.begin(), c->confirm.end(), "*.sh") != c->confirm.end());
  CHECK(c->limits.why == 4096);
  CHECK(c->limits.summary == 200);
  CHECK(c->limits.agent == 64);
  CHECK(c->limits.path == 4096);
  CHECK(c->limits.path_component == 255);
  CHECK(c->limits.content == 64L << 20);
  CHECK(c->limits.pending == 100);
}

TEST_CASE("time limits are written in seconds, kept in milliseconds and shown in seconds", "[config]") {
  TempDir d;
  auto c = load_text(d, "[run]\ntimeout = 2\nvalidate_timeout = 3\n[hooks]\ntimeout = 4\nreview_timeout = 5\n");
  REQUIRE(c);
  CHECK(c->run_timeout == std::chrono::milliseconds(2000));
  CHECK(c->validate_timeout == std::chrono::milliseconds(3000));
  CHECK(c->notify_timeout == std::chrono::milliseconds(4000));
  CHECK(c->review_timeout == std::chrono::milliseconds(5000));
  CHECK(kai::seconds_text(c->run_timeout) == "2");
  CHECK(kai::seconds_text(std::chrono::milliseconds(200)) == "0.2");
  CHECK(kai::seconds_text(std::chrono::milliseconds(1250)) == "1.25");
  CHECK(kai::seconds_text(std::chrono::milliseconds(86'400'000)) == "86400");
  CHECK(kai::seconds_text(std::chrono::milliseconds(7)) == "0.007");
}

TEST_CASE("[limits] keys are read and bounded", "[config][limits]") {
  TempDir d;
  auto c = load_text(d, "[limits]\nwhy = 100\ncontent = 2048\npending = 3\n");
  REQUIRE(c);
  CHECK(c->limits.why == 100);
  CHECK(c->limits.content == 2048);
  CHECK(c->limits.pending == 3);
  CHECK(c->limits.agent == 64);
  for (const char* bad : {"[limits]\nwhy = -1\n", "[limits]\npath_component = 256\n", "[limits]\npath = 5000\n",
                          "[limits]\npending = 0\n", "[limits]\nwhy = \"4k\"\n", "[limits]\nsize = 1\n"}) {
    INFO(bad);
    auto r = load_text(d, bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::usage);
  }
}

TEST_CASE("config errors name the file, the line and the key", "[config]") {
  struct Case {
    const char* text;
    const char* key;
    int line;
  };
  const Case cases[] = {
      {"[approval]\ntimeout = \"soon\"\n", "approval.timeout", 2},
      {"[approval]\ntimout = 3\n", "approval.timout", 2},
      {"[policy]\nmode = \"yolo\"\n", "policy.mode", 2},
      {"[policy.default]\nedit = \"maybe\"\n", "policy.default.edit", 2},
      {"[policy.default]\nfly = \"allow\"\n", "policy.default.fly", 2},
      {"[paths]\ndeny_write = \"secrets\"\n", "paths.deny_write", 2},
      {"[paths]\nprotected = [\"a[b\"]\n", "paths.protected", 2},
      {"[run]\nmax_output = -1\n", "run.max_output", 2},
      {"[run]\nsandbox = \"chroot\"\n", "run.sandbox", 2},
      {"[run]\nsnapshots_keep = -1\n", "run.snapshots_keep", 2},
      {"[run]\nsnapshots_keep = \"all\"\n", "run.snapshots_keep", 2},
      {"[[policy.rule]]\naction = \"fly\"\ndecision = \"allow\"\n", "policy.rule.action", 2},
      {"[[policy.rule]]\naction = \"run\"\ndecision = \"allow\"\npath = \"x\"\n", "policy.rule", 1},
      {"[[policy.rule]]\naction = \"edit\"\n", "policy.rule", 1},
      {"[surprise]\n", "surprise", 1},
      {"[run]\nvalidate_timeout = 0\n", "run.validate_timeout", 2},
      {"[hooks]\ntimeout = 301\n", "hooks.timeout", 2},
      {"[hooks]\nreview_timeout = \"long\"\n", "hooks.review_timeout", 2},
      {"[hooks]\nnotify = [\"a\"]\n", "hooks.notify", 2},
      {"[validate]\n\"*.json\" = \"  \"\n", "validate.\"*.json\"", 2},
      {"[validate]\n\"a[b\" = \"check {file}\"\n", "validate.\"a[b\"", 2},
      {"[validate]\n\"*.json\" = 3\n", "validate.\"*.json\"", 2},
      {"[[policy.rule]]\naction = \"edit\"\ndecision = \"allow\"\n", "policy.rule", 1},
      {"[[policy.rule]]\naction = \"delete\"\ndecision = \"deny\"\n", "policy.rule", 1},
      {"[[policy.rule]]\naction = \"run\"\ndecision = \"allow\"\n", "policy.rule", 1},
  };
  for (const auto& c : cases) {
    TempDir d;
    auto r = load_text(d, c.text);
    INFO(c.text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::usage);
    CHECK(r.error().message.find((d / "kaicoder.toml").string() + ":" + std::to_string(c.line) + ":") == 0);
    CHECK(r.error().message.find(c.key) != std::string::npos);
  }
}

TEST_CASE("approvers, run.env names and the changelog path are validated", "[config]") {
  TempDir d;
  const std::string refused[] = {
      "[approval]\napprovers = [\"\"]\n",
      "[approval]\napprovers = [\"al ice\"]\n",
      "[approval]\napprovers = [\"al\\u0007ice\"]\n",
      "[run]\nenv = [\"A\\u0000B\"]\n",
      "[run]\nenv = [\"1ABC\"]\n",
      "[run]\nenv = [\"A-B\"]\n",
      "[changelog]\npath = \"bogus\"\n",
      "[changelog]\npath = \"docs/.md\"\n",
      "[changelog]\npath = \"log\\u0001.md\"\n",
  };
  for (const auto& text : refused) {
    INFO(text);
    auto c = load_text(d, text);
    REQUIRE_FALSE(c);
    CHECK(c.error().code == kai::Errc::usage);
  }
  for (const std::string ok : {"[approval]\napprovers = [\"alice\", \"bob.smith\"]\n",
                               "[run]\nenv = [\"CARGO_HOME\", \"_X1\"]\n", "[changelog]\npath = \"docs/CHANGES.md\"\n"}) {
    INFO(ok);
    CHECK(load_text(d, ok));
  }
}

TEST_CASE("a TOML syntax error names the file and the line", "[config]") {
  TempDir d;
  auto r = load_text(d, "[approval]\napprovers = [\"a\"\n");
  REQUIRE_FALSE(r);
  CHECK(r.error().message.find((d / "kaicoder.toml").string() + ":") == 0);
}

TEST_CASE("lists from the user's and the root's config add up", "[config]") {
  TempDir d;
  d.write("user.toml", "[paths]\ndeny_write = [\"secrets/**\"]\n[approval]\ntimeout = 10\n");
  d.write("kaicoder.toml", "[paths]\ndeny_write = [\"private/**\"]\n[approval]\ntimeout = 20\n");
  auto c = kai::load_config({d / "user.toml", d / "kaicoder.toml"});
  REQUIRE(c);
  CHECK(c->deny_write == std::vector<std::string>{"secrets/**", "private/**"});
  CHECK(c->timeout == 20);  // the root's file wins for single values
}

TEST_CASE("a --config overlay may only add deny and ask rules and the restricting path lists", "[config]") {
  TempDir d;
  d.write("kaicoder.toml", "[paths]\ndeny_read = [\"owner/**\"]\n[approval]\ntimeout = 20\n");
  d.write("overlay.toml",
          "[[policy.rule]]\naction = \"edit\"\npath = \"vendor/**\"\ndecision = \"deny\"\n"
          "[[policy.rule]]\naction = \"run\"\ncommand = \"make\"\ndecision = \"ask\"\n"
          "[paths]\ndeny_read = [\"private/**\"]\ndeny_write = [\"docs/**\"]\nprotected = [\"a.c\"]\nconfirm = "
          "[\"b.c\"]\n");
  auto c = kai::load_config({d / "kaicoder.toml", {d / "overlay.toml", kai::ConfigRole::overlay}});
  REQUIRE(c);
  CHECK(c->deny_read == std::vector<std::string>{"owner/**", "private/**"});
  CHECK(c->deny_write == std::vector<std::string>{"docs/**"});
  CHECK(c->rules.size() == 2);
  CHECK(c->timeout == 20);
  CHECK(kai::decide(*c, "edit", "vendor/x.c").decision == kai::Decision::deny);

  struct Case {
    const char* text;
    const char* key;
    int line;
  };
  const Case refused[] = {
      {"[[policy.rule]]\naction = \"edit\"\npath = \"**\"\ndecision = \"allow\"\n", "policy.rule.decision", 1},
      {"[policy]\nmode = \"normal\"\n", "policy.mode", 2},
      {"[policy.default]\nedit = \"deny\"\n", "policy.default", 1},
      {"[approval]\ntimeout = 5\n", "approval", 1},
      {"[run]\nsandbox = \"none\"\n", "run", 1},
      {"[hooks]\nnotify = \"x\"\n", "hooks", 1},
      {"[validate]\n\"*\" = \"true\"\n", "validate", 1},
      {"[changelog]\npath = \".git/config\"\n", "changelog", 1},
      {"[risk]\nmedium = 1\n", "risk", 1},
      {"[paths]\nhardlinks = \"break\"\n", "paths.hardlinks", 2},
      {"[paths]\ndeny_read = []\n[paths.extra]\n", "paths.extra", 3},
  };
  for (const auto& r : refused) {
    INFO(r.text);
    d.write("overlay.toml", r.text);
    auto bad = kai::load_config({d / "kaicoder.toml", {d / "overlay.toml", kai::ConfigRole::overlay}});
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == kai::Errc::usage);
    CHECK(bad.error().message.find((d / "overlay.toml").string() + ":" + std::to_string(r.line) + ": " + r.key) == 0);
    // The same text is fine (or at least not refused for its origin) in the trusted file.
    auto trusted = kai::load_config({d / "overlay.toml"});
    if (!trusted) CHECK(trusted.error().message.find("--config") == std::string::npos);
  }
}

TEST_CASE("config text given by the caller is parsed instead of the file", "[config]") {
  TempDir d;
  d.write("kaicoder.toml", "[approval]\ntimeout = 20\n");
  auto c =
      kai::load_config({{d / "kaicoder.toml", kai::ConfigRole::trusted, std::string("[approval]\ntimeout = 30\n")}});
  REQUIRE(c);
  CHECK(c->timeout == 30);
  // Even when the file is gone: the bytes whose digest was checked are what counts.
  auto g =
      kai::load_config({{d / "gone.toml", kai::ConfigRole::trusted, std::string("[approval]\ntimeout = \"x\"\n")}});
  REQUIRE_FALSE(g);
  CHECK(g.error().message.find((d / "gone.toml").string() + ":2: approval.timeout") == 0);
}

TEST_CASE("policy: deny beats ask beats allow, defaults decide otherwise", "[policy]") {
  kai::Config c;
  auto rule = [](const char* action, const char* path, const char* command, const char* decision, const char* origin) {
    kai::PolicyRule r;
    r.action = action;
    r.path = path;
    r.command = command;
    r.decision = decision;
    r.origin = origin;
    return r;
  };
  c.rules = {rule("edit", "docs/**", "", "allow", "f:1"), rule("edit", "docs/secret/**", "", "deny", "f:2"),
             rule("run", "", "cargo test", "allow", "f:3"), rule("run", "", "npm run test*", "allow", "f:4")};
  CHECK(kai::decide(c, "edit", "docs/a.md").decision == kai::Decision::allow);
  CHECK(kai::decide(c, "edit", "docs/a.md").rule == "f:1");
  CHECK(kai::decide(c, "edit", "docs/secret/a.md").decision == kai::Decision::deny);
  CHECK(kai::decide(c, "edit", "src/a.c").decision == kai::Decision::ask);
  CHECK(kai::decide(c, "read", "src/a.c").decision == kai::Decision::allow);
  CHECK(kai::decide(c, "teleport", "x").decision == kai::Decision::deny);
  CHECK(kai::decide(c, "run", "cargo test --all").decision == kai::Decision::allow);
  CHECK(kai::decide(c, "run", "cargo testify").decision == kai::Decision::ask);
  CHECK(kai::decide(c, "run", "npm run test:unit").decision == kai::Decision::allow);
}

TEST_CASE("command prefixes match whole words only", "[policy]") {
  CHECK(kai::command_matches("git log", "git log"));
  CHECK(kai::command_matches("git log", "git log -3"));
  CHECK_FALSE(kai::command_matches("git log", "git logout"));
  CHECK_FALSE(kai::command_matches("git log", "git"));
}

TEST_CASE("protected and confirm paths put a proposal in the confirm tier", "[policy]") {
  kai::Config c;
  c.protected_paths = {"oracle.html"};
  c.confirm = {"*.sh", "scripts/**"};
  std::string why;
  CHECK(kai::path_tier(c, "oracle.html", &why) == kai::Tier::confirm);
  CHECK(why.find("protected") != std::string::npos);
  CHECK(kai::path_tier(c, "tools/run.sh") == kai::Tier::confirm);
  CHECK(kai::path_tier(c, "scripts/x.py") == kai::Tier::confirm);
  CHECK(kai::path_tier(c, "src/a.c") == kai::Tier::normal);
  CHECK(kai::path_tier(c, "ORACLE.html") == kai::Tier::confirm);
  CHECK(kai::is_protected(c, "Oracle.HTML"));
  // The first pattern that matches names the reason: protected before confirm.
  c.confirm.push_back("oracle.*");
  CHECK(kai::path_tier(c, "oracle.html", &why) == kai::Tier::confirm);
  CHECK(why == "protected path (oracle.html)");
  CHECK(kai::path_tier(c, "oracle.txt", &why) == kai::Tier::confirm);
  CHECK(why == "confirm path (oracle.*)");
  // Another configuration's lists are asked about as they are, not as the
  // last ones were.
  kai::Config other;
  other.confirm = {"src/**"};
  CHECK(kai::path_tier(other, "src/a.c") == kai::Tier::confirm);
  CHECK(kai::path_tier(other, "tools/run.sh") == kai::Tier::normal);
  CHECK(kai::path_tier(c, "src/a.c") == kai::Tier::normal);
  CHECK(kai::path_tier(c, "tools/run.sh") == kai::Tier::confirm);
  other.confirm.clear();
  CHECK(kai::path_tier(other, "src/a.c") == kai::Tier::normal);
  CHECK_FALSE(kai::is_protected(other, "oracle.html"));
}

TEST_CASE("a run rule bound to files is validated strictly", "[config][always]") {
  const std::string blob(40, 'a');
  const std::string head = "[[policy.rule]]\naction = \"run\"\ncommand = \"python3 tools/gen.py\"\n";
  struct Case {
    std::string text, key;
  };
  const Case bad[] = {
      {head + "exact = \"yes\"\ndecision = \"allow\"\n", "policy.rule.exact"},
      {head + "files = \"tools/gen.py\"\ndecision = \"allow\"\n", "policy.rule.files"},
      {head + "files = {}\ndecision = \"allow\"\n", "policy.rule.files"},
      {head + "files = { \"/etc/passwd\" = \"" + blob + "\" }\ndecision = \"allow\"\n", "policy.rule.files"},
      {head + "files = { \"../x.py\" = \"" + blob + "\" }\ndecision = \"allow\"\n", "policy.rule.files"},
      {head + "files = { \"a/./x.py\" = \"" + blob + "\" }\ndecision = \"allow\"\n", "policy.rule.files"},
      {head + "files = { \"tools/gen.py\" = \"abc\" }\ndecision = \"allow\"\n", "policy.rule.files.tools/gen.py"},
      {head + "files = { \"tools/gen.py\" = \"" + std::string(40, 'A') + "\" }\ndecision = \"allow\"\n",
       "policy.rule.files.tools/gen.py"},
      {head + "files = { \"tools/gen.py\" = 3 }\ndecision = \"allow\"\n", "policy.rule.files.tools/gen.py"},
      {head + "files = { \"tools/gen.py\" = \"" + blob + "\" }\ndecision = \"deny\"\n", "policy.rule.files"},
      {"[[policy.rule]]\naction = \"edit\"\npath = \"a\"\nexact = true\ndecision = \"allow\"\n", "policy.rule"},
  };
  for (const auto& c : bad) {
    TempDir d;
    INFO(c.text);
    auto r = load_text(d, c.text);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == kai::Errc::usage);
    CHECK(r.error().message.find(c.key) != std::string::npos);
  }
  TempDir d;
  auto ok = load_text(d, head + "exact = true\nfiles = { \"tools/gen.py\" = \"" + blob + "\" }\ndecision = \"allow\"\n");
  REQUIRE(ok);
  REQUIRE(ok->rules.size() == 1);
  CHECK(ok->rules[0].exact);
  CHECK(ok->rules[0].files == kai::FileBlobs{{"tools/gen.py", blob}});
}

TEST_CASE("an exact rule matches the whole command; a bound rule only the files it was bound to", "[config][always]") {
  const std::string blob(40, 'a'), other(40, 'b');
  TempDir d;
  auto c = load_text(d, "[[policy.rule]]\naction = \"run\"\ncommand = \"cargo test\"\nexact = true\ndecision = "
                        "\"allow\"\n[[policy.rule]]\naction = \"run\"\ncommand = \"python3 tools/gen.py\"\nexact = "
                        "true\nfiles = { \"tools/gen.py\" = \"" +
                            blob + "\" }\ndecision = \"allow\"\n");
  REQUIRE(c);
  using kai::Decision;
  CHECK(kai::decide(*c, "run", "cargo test").decision == Decision::allow);
  CHECK(kai::decide(*c, "run", "cargo test --release").decision == Decision::ask);
  CHECK(kai::decide(*c, "run", "cargo test && rm x").decision == Decision::ask);
  const kai::FileBlobs same{{"tools/gen.py", blob}}, changed{{"tools/gen.py", other}}, none;
  CHECK(kai::decide(*c, "run", "python3 tools/gen.py", &same).decision == Decision::allow);
  CHECK(kai::decide(*c, "run", "python3 tools/gen.py", &changed).decision == Decision::ask);
  CHECK(kai::decide(*c, "run", "python3 tools/gen.py", &none).decision == Decision::ask);
  CHECK(kai::decide(*c, "run", "python3 tools/gen.py").decision == Decision::ask);
  CHECK(kai::has_bound_rules(*c));
}

TEST_CASE("emptying comment lines before parsing changes neither meaning, acceptance nor line numbers", "[config]") {
  const auto given = [](const std::string& text) {
    return kai::load_config({{"kaicoder.toml", kai::ConfigRole::trusted, text}});
  };
  TempDir d;
  SECTION("the shipped example reads the same from its text as from its file") {
    auto from_text = given(kai::default_config_text());
    auto from_file = load_text(d, kai::default_config_text());
    REQUIRE(from_text);
    REQUIRE(from_file);
    CHECK(from_text->timeout == from_file->timeout);
    CHECK(from_text->confirm == from_file->confirm);
    CHECK(from_text->defaults == from_file->defaults);
  }
  SECTION("a comment line inside an array is a comment") {
    auto c = given("[paths]\nconfirm = [\n  # \"*.not-a-value\",\n  \"*.sh\",\n]\n");
    REQUIRE(c);
    CHECK(std::find(c->confirm.begin(), c->confirm.end(), "*.sh") != c->confirm.end());
    CHECK(std::find(c->confirm.begin(), c->confirm.end(), "*.not-a-value") == c->confirm.end());
  }
  SECTION("a line starting with # inside a multi-line string stays in the value") {
    auto c = given("# a comment\n[approval]\ntimeout = 30\n[paths]\nconfirm = [\'\'\'\n#kept\'\'\']\n");
    REQUIRE(c);
    CHECK(c->timeout == 30);
    CHECK(std::find(c->confirm.begin(), c->confirm.end(), "#kept") != c->confirm.end());
  }
  SECTION("an error after comment lines names its own line") {
    auto c = given("# one\n# two\n\n[approval]\n# four\ntimeout = \"x\"\n");
    REQUIRE_FALSE(c);
    CHECK(c.error().message.find("kaicoder.toml:6: approval.timeout") == 0);
  }
  SECTION("a comment TOML refuses is still refused") {
    auto c = given("# a control character \x01 here\n[approval]\ntimeout = 30\n");
    REQUIRE_FALSE(c);
    CHECK(c.error().message.find("kaicoder.toml:1:") == 0);
  }
}
