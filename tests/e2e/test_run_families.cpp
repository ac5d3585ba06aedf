// `kaicoder run --dry-run --json` over the families the checker knows
// (issue 28): the verdict and its reasons come out of the real binary, a
// blocked command exits 3 and nothing is staged.

#include <string>
#include <vector>

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using json = nlohmann::json;

struct Case {
  std::string shell;
  std::string verdict;
  std::string reason;  // part of one reason
};

bool any_reason(const json& j, const std::string& part) {
  for (const auto& r : j.at("reasons"))
    if (r.get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("run --dry-run --json gives each family's verdict and reasons", "[e2e][run][families]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  const std::vector<Case> cases = {
      // package runners and the deletion they hide
      {"npx rimraf /", "blocked", "deletion of '/'"},
      {"npx -y rimraf ~", "blocked", "home folder"},
      {"npx rimraf dist", "confirm", "dist"},
      // job runners
      {"parallel --pipe sh <<< 'rm -rf /'", "blocked", "deletion of '/'"},
      {"ls | parallel", "ask", "runs commands it reads at run time"},
      // options that take a command
      {"gdb -batch -ex 'shell rm -rf ~'", "blocked", "home folder"},
      {"git -c sendemail.sendmailcmd='rm -rf ~' send-email x.patch", "blocked", "home folder"},
      // git in another folder
      {"git -C / clean -fdx", "blocked", "'/'"},
      // deletion outside the root
      {"rm -rf /tmp/kaicoder-scratch", "confirm", "outside the root: the sandbox refuses it, and it cannot be undone"},
      // the family tables
      {"aws s3 rb s3://logs --force", "blocked", "every object"},
      {"kubectl delete namespace prod", "blocked", "namespaces"},
      {"terraform destroy", "confirm", "destroys every resource"},
      {"psql -c 'DROP TABLE users'", "confirm", "drops database objects"},
      {"echo FLUSHALL | redis-cli", "blocked", "every key"},
      {"docker volume rm pgdata", "confirm", "volumes"},
      // false positives gone
      {"git push --force-with-lease origin main", "confirm", "with lease"},
      {"rm -rf build/", "confirm", "build"},
      {"terraform destroy --help", "ask", "only describes"},
      // every ask says why
      {"frobnicate --all", "ask", "unknown program: its effects are unknown"},
      {"ls -la", "ask", "ordinary commands kaicoder knows (ls)"},
  };
  for (const Case& c : cases) {
    INFO("command: " << c.shell);
    Run r = repo.kai({"--json", "run", "--dry-run", "--why", "families", "--shell", c.shell});
    KAI_CHECK_EXIT(r, c.verdict == "blocked" ? 3 : 0);
    json j = json_of(r);
    INFO("json: " << j.dump());
    CHECK(j.at("verdict") == c.verdict);
    CHECK(j.at("ok") == (c.verdict != "blocked"));
    REQUIRE_FALSE(j.at("reasons").empty());
    CHECK(any_reason(j, c.reason));
  }
  // nothing was staged or logged by a dry run
  KAI_CHECK_EXIT(repo.kai({"show", "1"}), 7);
}

TEST_CASE("run --dry-run knows the owner's home folder", "[e2e][run][families]") {
  TempRepo repo{{"a.txt", "x\n"}};
  repo.init();
  Run home = repo.kai({"--json", "run", "--dry-run", "--why", "t", "--shell", "rm -rf ~/.ssh"});
  KAI_CHECK_EXIT(home, 3);
  CHECK(any_reason(json_of(home), "home folder"));
  Run cache = repo.kai({"--json", "run", "--dry-run", "--why", "t", "--shell", "rm -rf ~/.cache/kaicoder-test"});
  KAI_CHECK_EXIT(cache, 0);
  CHECK(json_of(cache).at("verdict") == "confirm");
}
