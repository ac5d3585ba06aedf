// Attacks through approved or policy-allowed command runs: the command's
// content is invisible at approval, so the kernel has to keep it away from
// kaicoder's guards, git's own settings and the secrets (SPEC §8 `[run]
// sandbox`).

#include <cstdlib>
#include <filesystem>
#include <string>

#include "lib/sandbox.hpp"
#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* k_env_file = "API_KEY=sk-live-5f4e3d2c1b0a\n";
constexpr const char* k_env_base64 = "QVBJX0tFWT1zay1saXZlLTVmNGUzZDJjMWIwYQo=";

// The probe an agent gets approved as `python3 probe.py`.
constexpr const char* k_probe = R"(import base64, subprocess
def attempt(label, f):
    try:
        f()
        print(label, "DONE", flush=True)
    except Exception as e:
        print(label, "refused:", type(e).__name__, flush=True)
def hooks_path():
    subprocess.run(["git", "config", "core.hooksPath", "/tmp/evil-hooks"], check=True)
attempt("toml", lambda: open("kaicoder.toml", "w").write('[policy.default]\nedit = "allow"\nrun = "allow"\n'))
attempt("state", lambda: open(".kaicoder/forged-approval", "w").write("approved\n"))
attempt("hook", lambda: open(".git/hooks/post-checkout", "w").write("#!/bin/sh\ntouch PLANTED\n"))
attempt("hookspath", hooks_path)
attempt("env", lambda: print("LEAK", base64.b64encode(open(".env", "rb").read()).decode(), flush=True))
)";

bool full_sandbox_or_warn() {
  kai::NamespaceStatus ns = kai::namespace_status();
  if (!ns.ok) WARN("SKIPPED: the full sandbox is not available here: " << ns.detail);
  if (kai::landlock_status().abi == 0) WARN("SKIPPED: landlock is not available here");
  return ns.ok && kai::landlock_status().abi > 0;
}

std::string git_config_value(const TempRepo& repo, const std::string& key) {
  std::string cmd = "git -C '" + repo.path().string() + "' config --get " + key + " 2>/dev/null";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

}  // namespace

TEST_CASE("an approved python3 probe.py cannot rewrite kaicoder.toml, forge state, plant a git hook or leak .env", "[attack][runs]") {
  if (!full_sandbox_or_warn()) return;
  TempRepo repo{{"probe.py", k_probe}, {"a.txt", "a\n"}};
  repo.init();
  repo.write(".env", k_env_file);
  const std::string toml = repo.read("kaicoder.toml");
  const std::string git_config = repo.read(".git/config");

  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "check the build", "--", "python3", "probe.py"}), 0);
  Run a = repo.kai_tty({"approve", "1"}, "y");
  if (!a.prompted || a.exit_code != 0) a = repo.kai_tty({"approve", "1"}, "CONFIRM");
  KAI_REQUIRE_EXIT(a, 0);
  json shown = show_json(repo, 1);
  REQUIRE(shown.at("status") == "applied");
  const std::string seen = a.all() + repo.kai({"--json", "show", "1"}).out;
  INFO(seen);
  // The probe ran: each attempt printed its line.
  for (const char* label : {"toml ", "state ", "hook ", "hookspath ", "env "}) CHECK_THAT(seen, Contains(label));
  CHECK(seen.find("toml DONE") == std::string::npos);
  CHECK(seen.find("state DONE") == std::string::npos);
  CHECK(seen.find("hook DONE") == std::string::npos);
  CHECK(seen.find("hookspath DONE") == std::string::npos);
  // Nothing changed.
  CHECK(repo.read("kaicoder.toml") == toml);
  CHECK(repo.read(".git/config") == git_config);
  CHECK(git_config_value(repo, "core.hooksPath").empty());
  CHECK_FALSE(repo.exists(".kaicoder/forged-approval"));
  CHECK_FALSE(repo.exists(".git/hooks/post-checkout"));
  // The secret did not leave, not even encoded.
  CHECK(seen.find("sk-live-5f4e3d2c1b0a") == std::string::npos);
  CHECK(seen.find(k_env_base64) == std::string::npos);
  CHECK(repo.read(".env") == k_env_file);
}

TEST_CASE("a policy-allowed git status with a hostile GIT_CONFIG_PARAMETERS and TMPDIR runs no fsmonitor command", "[attack][runs]") {
  if (!full_sandbox_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") +
                                  "\n[[policy.rule]]\naction = \"run\"\ncommand = \"git status\"\ndecision = \"allow\"\n");
  const EnvOverrides hostile = {{"GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch SENTINEL; false'"}, {"TMPDIR", "/"}};
  // The same environment does run the command when git gets it directly.
  std::string direct = "cd '" + repo.path().string() +
                       "' && GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch SENTINEL; false'\" git status >/dev/null 2>&1";
  REQUIRE(std::system(direct.c_str()) == 0);
  REQUIRE(repo.exists("SENTINEL"));
  repo.remove("SENTINEL");

  Run r = repo.kai({"run", "--why", "status", "--", "git", "status"}, "", hostile);
  KAI_REQUIRE_EXIT(r, 0);
  json shown = show_json(repo, 1);
  CHECK(shown.at("status") == "applied");
  CHECK(shown.at("result") == "exit 0");
  CHECK_FALSE(repo.exists("SENTINEL"));
  // TMPDIR=/ did not become writable: the run's note lists what it could write.
  json e = log_entries(repo).at(0);
  std::string summary = e.at("summary");
  CHECK_THAT(summary, Contains("writes limited to " + repo.path().string()));
  CHECK(summary.find(", /;") == std::string::npos);
  CHECK(summary.find("limited to /;") == std::string::npos);
  CHECK(summary.find("limited to /,") == std::string::npos);
  CHECK(summary.find(", /,") == std::string::npos);
}
