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
