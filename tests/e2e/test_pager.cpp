// The pager: long `log` and `show` output goes through KAICODER_PAGER, else
// PAGER, else `less -FRX`, but only when stdout is a terminal; never with
// --json, --no-pager, an empty pager or `cat`; a pager that cannot start
// falls back to plain output.

#include <csignal>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;

// A pager that marks every line it shows.
const std::string k_marking = "sed 's/^/paged: /'";

// One applied edit (with a changelog entry) and one pending write.
std::string setup(TempRepo& repo) {
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  std::string big;
  for (int i = 0; i < 300; ++i) big += "line " + std::to_string(i) + "\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "big.txt", "--content-file", "-", "--why", "big"}, big), 0);
  return show_json(repo, 1).at("rollback_id");
}

// `args` on a terminal (stdout and stderr too), with `env`.
Run on_terminal(const TempRepo& repo, const std::vector<std::string>& args, const EnvOverrides& env) {
  EnvOverrides all{{"KAICODER_PAGER", std::nullopt}, {"PAGER", std::nullopt}};
  all.insert(all.end(), env.begin(), env.end());
  return repo.kai_tty(args, "", all, TtyOutput::terminal);
}

}  // namespace

TEST_CASE("on a terminal, log and show go through KAICODER_PAGER, else PAGER", "[e2e][pager]") {
  TempRepo repo{{"a.txt", "old\n"}};
  const std::string rid = setup(repo);

  Run log = on_terminal(repo, {"log"}, {{"KAICODER_PAGER", k_marking}});
  KAI_CHECK_EXIT(log, 0);
  CHECK_THAT(log.out, Contains("paged: " + rid));

  Run show = on_terminal(repo, {"show", "2"}, {{"KAICODER_PAGER", k_marking}});
  KAI_CHECK_EXIT(show, 0);
  CHECK_THAT(show.out, Contains("paged: +line 299"));

  Run pager = on_terminal(repo, {"log", "--full"}, {{"PAGER", k_marking}});
  KAI_CHECK_EXIT(pager, 0);
  CHECK_THAT(pager.out, Contains("paged: ## "));

  Run both = on_terminal(repo, {"log"}, {{"KAICODER_PAGER", k_marking}, {"PAGER", "sed 's/^/wrong: /'"}});
  CHECK_THAT(both.out, Contains("paged: " + rid));
  CHECK_THAT(both.out, !Contains("wrong: "));
}

TEST_CASE("no pager runs for a pipe, --json, --no-pager, an empty pager or cat", "[e2e][pager]") {
  TempRepo repo{{"a.txt", "old\n"}};
  const std::string rid = setup(repo);
  const EnvOverrides marking{{"KAICODER_PAGER", k_marking}};

  Run piped = repo.kai({"log"}, "", marking);
  KAI_CHECK_EXIT(piped, 0);
  CHECK_THAT(piped.out, Contains(rid));
  CHECK_THAT(piped.out, !Contains("paged: "));

  for (const char* verb : {"log", "show"}) {
    INFO(verb);
    std::vector<std::string> args{verb};
    if (args[0] == "show") args.push_back("2");
    std::vector<std::string> json_args{"--json"};
    json_args.insert(json_args.end(), args.begin(), args.end());
    Run json_run = on_terminal(repo, json_args, marking);
    KAI_CHECK_EXIT(json_run, 0);
    CHECK_THAT(json_run.out, !Contains("paged: "));
    CHECK_NOTHROW(json_of(json_run));

    args.push_back("--no-pager");
    Run off = on_terminal(repo, args, marking);
    KAI_CHECK_EXIT(off, 0);
    CHECK_THAT(off.out, !Contains("paged: "));
    CHECK_THAT(off.out, Contains(args[0] == "log" ? rid : "+line 299"));
  }

  for (const char* none : {"", "cat"}) {
    INFO("KAICODER_PAGER='" << none << "'");
    Run r = on_terminal(repo, {"log"}, {{"KAICODER_PAGER", none}, {"PAGER", k_marking}});
    KAI_CHECK_EXIT(r, 0);
    CHECK_THAT(r.out, Contains(rid));
    CHECK_THAT(r.out, !Contains("paged: "));
  }
}

TEST_CASE("a pager that cannot start falls back to plain output", "[e2e][pager]") {
  TempRepo repo{{"a.txt", "old\n"}};
  const std::string rid = setup(repo);
  Run r = on_terminal(repo, {"log"}, {{"KAICODER_PAGER", "/nonexistent/pager --flag"}});
  KAI_CHECK_EXIT(r, 0);
  CHECK_THAT(r.out, Contains(rid));
  Run s = on_terminal(repo, {"show", "2"}, {{"PAGER", "no-such-pager-anywhere"}});
  KAI_CHECK_EXIT(s, 0);
  CHECK_THAT(s.out, Contains("+line 299"));
}

TEST_CASE("quitting the pager early ends the command cleanly", "[e2e][pager]") {
  TempRepo repo{{"a.txt", "old\n"}};
  setup(repo);
  Run r = on_terminal(repo, {"show", "2", "--full"}, {{"KAICODER_PAGER", "head -n 3"}});
  KAI_CHECK_EXIT(r, 0);
  CHECK_FALSE(r.killed_by(SIGPIPE));
  CHECK_THAT(r.out, !Contains("+line 299"));
}

TEST_CASE("the default pager is less, and short output still shows", "[e2e][pager]") {
  TempRepo repo{{"a.txt", "old\n"}};
  const std::string rid = setup(repo);
  Run r = on_terminal(repo, {"log"}, {});
  KAI_CHECK_EXIT(r, 0);
  CHECK_THAT(r.out, Contains(rid));
}

// ----- a diff before a prompt (SPEC §11) ------------------------------------

namespace {

// A pending write of big.txt with `n` lines (a new file: every line added).
void propose_lines(const TempRepo& repo, int n) {
  std::string big;
  for (int i = 0; i < n; ++i) big += "line " + std::to_string(i) + "\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "big.txt", "--content-file", "-", "--why", "big"}, big), 0);
}

EnvOverrides pager_env(const std::string& pager) { return {{"KAICODER_PAGER", pager}, {"PAGER", std::nullopt}}; }

}  // namespace

TEST_CASE("approve pages a diff longer than the screen and asks once the pager is done", "[e2e][pager][approve]") {
  TempRepo repo;
  repo.init();
  propose_lines(repo, 300);
  Run a = repo.kai_tty({"--no-color", "approve", "1"}, "y", pager_env(k_marking + "; echo PAGER-DONE"),
                       TtyOutput::terminal);
  KAI_REQUIRE_EXIT(a, 0);
  REQUIRE(a.prompted);
  const size_t paged = a.tty.find("paged: +line 299"), done = a.tty.find("PAGER-DONE"),
               asked = a.tty.find("Apply proposal 1 to big.txt?");
  REQUIRE(paged != std::string::npos);
  REQUIRE(done != std::string::npos);
  REQUIRE(asked != std::string::npos);
  CHECK(paged < done);
  CHECK(done < asked);
  CHECK(repo.read("big.txt").size() > 1000);
}

TEST_CASE("a diff that fits on the screen is printed, not paged", "[e2e][pager][approve]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"--no-color", "approve", "1"}, "y", pager_env(k_marking), TtyOutput::terminal);
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.tty, Contains("\n+new\n"));
  CHECK_THAT(a.tty, !Contains("paged: "));
}

TEST_CASE("with a pager the whole diff is shown, without one it is cut and takes CONFIRM", "[e2e][pager][approve]") {
  TempRepo repo;
  repo.init();
  propose_lines(repo, 2500);  // over the 2000 changed lines a diff is cut at
  // Sized terminal, a pager: all of it, and y is enough.
  SECTION("a sized terminal pages all of it") {
    Run a = repo.kai_tty({"--no-color", "approve", "1"}, "y", pager_env(k_marking), TtyOutput::terminal);
    KAI_REQUIRE_EXIT(a, 0);
    CHECK_THAT(a.tty, Contains("paged: +line 2499"));
    CHECK_THAT(a.tty, !Contains("not shown"));
    CHECK_THAT(a.tty, !Contains("CONFIRM"));
  }
  // No size known, KAICODER_PAGER empty, or --json: no pager, the diff cut,
  // how much was not shown said, and CONFIRM asked for.
  SECTION("no size known") {
    Run a = repo.kai_tty({"--no-color", "approve", "1"}, "y", pager_env(k_marking), TtyOutput::terminal,
                         k_default_limit, k_unsized);
    KAI_CHECK_EXIT(a, 4);
    CHECK_THAT(a.tty, !Contains("paged: "));
    CHECK_THAT(a.tty, Contains("not shown"));
    CHECK_THAT(a.tty, Contains("Type CONFIRM"));
    CHECK(show_json(repo, 1).at("status") == "pending");
  }
  SECTION("KAICODER_PAGER empty") {
    Run a = repo.kai_tty({"--no-color", "approve", "1"}, "CONFIRM", {{"KAICODER_PAGER", ""}, {"PAGER", k_marking}},
                         TtyOutput::terminal);
    KAI_CHECK_EXIT(a, 0);
    CHECK_THAT(a.tty, !Contains("paged: "));
    CHECK_THAT(a.tty, Contains("not shown"));
    CHECK_THAT(a.tty, Contains("Type CONFIRM"));
  }
  SECTION("--json") {
    Run a = repo.kai_tty({"--json", "approve", "1"}, "y", pager_env(k_marking), TtyOutput::terminal);
    KAI_CHECK_EXIT(a, 4);
    CHECK_THAT(a.tty, !Contains("paged: "));
    CHECK_THAT(a.tty, Contains("Type CONFIRM"));
  }
}

TEST_CASE("an answer typed ahead is never read by the pager", "[e2e][pager][approve]") {
  TempRepo repo;
  repo.init();
  propose_lines(repo, 300);
  // A pager that would take a line from the terminal if it ran.
  TtyProcess p =
      repo.spawn_kai_tty({"--no-color", "approve", "1"},
                         pager_env("cat >/dev/null; read line </dev/tty; echo pager-read:$line"), TtyOutput::terminal);
  p.answer("y");  // typed before anything is shown
  Run a = p.finish();
  KAI_CHECK_EXIT(a, 0);
  CHECK_THAT(a.tty, !Contains("pager-read:"));
  CHECK_THAT(a.tty, Contains("+line 299"));
  CHECK(show_json(repo, 1).at("status") == "applied");
}

TEST_CASE("keys typed into the pager are no answer to the question after it", "[e2e][pager][approve]") {
  TempRepo repo;
  repo.init();
  propose_lines(repo, 300);
  // The pager shows, says it is ready, and leaves what is typed unread.
  TtyProcess p = repo.spawn_kai_tty({"--no-color", "approve", "1"},
                                    pager_env("cat >/dev/null; echo PAGER-READY; sleep 1"), TtyOutput::terminal);
  REQUIRE(p.wait_for_text("PAGER-READY"));
  p.answer("y");  // typed into the pager
  REQUIRE(p.wait_for_prompt());
  p.answer("n");  // the answer to the question
  Run a = p.finish();
  KAI_CHECK_EXIT(a, 4);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK_FALSE(repo.exists("big.txt"));
}

TEST_CASE("a person pages through less, quits it, and answers", "[e2e][pager][approve]") {
  TempRepo repo;
  if (!repo.spawn({"sh", "-c", "command -v less"}).finish().ok()) {
    WARN("less is not installed: the default pager not driven");
    return;
  }
  repo.init();
  propose_lines(repo, 300);
  TtyProcess p = repo.spawn_kai_tty({"--no-color", "approve", "1"},
                                    {{"KAICODER_PAGER", std::nullopt}, {"PAGER", std::nullopt}}, TtyOutput::terminal);
  REQUIRE(p.wait_for_text("+line 20"));  // less shows the first screen
  CHECK(p.tty().find("[y/N") == std::string::npos);
  p.answer("q");
  REQUIRE(p.wait_for_prompt());
  p.answer("y");
  Run a = p.finish();
  KAI_CHECK_EXIT(a, 0);
  CHECK(show_json(repo, 1).at("status") == "applied");
}

TEST_CASE("trust pages a kaicoder.toml longer than the screen before it asks", "[e2e][pager][trust]") {
  std::string cfg = "[approval]\ntimeout = 300\n";
  for (int i = 0; i < 80; ++i) cfg += "# note " + std::to_string(i) + "\n";
  TempRepo repo{{"kaicoder.toml", cfg}};
  Run t = repo.kai_tty({"trust"}, "y", pager_env(k_marking), TtyOutput::terminal);
  KAI_REQUIRE_EXIT(t, 0);
  CHECK_THAT(t.tty, Contains("paged:   | # note 79"));
  CHECK(t.tty.find("paged:   | # note 79") < t.tty.find("Trust "));
  Run small = repo.kai_tty({"trust"}, "y", pager_env(k_marking), TtyOutput::terminal, k_default_limit, k_unsized);
  KAI_CHECK_EXIT(small, 0);  // already trusted: nothing to show
}
