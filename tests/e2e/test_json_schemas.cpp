// Every command's --json output against its JSON Schema in schemas/ (SPEC
// §2): one object on stdout, "ok" true exactly when the exit code is 0, the
// command named, an error object on every failure — usage errors from the
// argument parser included. The schemas are checked with python3-jsonschema
// (scripts/deps.sh --test installs Debian's).

#include <fstream>
#include <thread>

#include "tests/support/checks.hpp"
#include "tests/support/team.hpp"
#include "tests/support/command_table.hpp"

namespace {
using namespace kai::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

const fs::path k_source(KAICODER_SOURCE_DIR);

// The outputs to validate, each written to a file of its own.
struct Outputs {
  fs::path dir;
  std::vector<std::string> files;
  std::map<std::string, int> per_command;

  // `r` printed exactly one JSON object, with the envelope's ok and command.
  json add(const Run& r, const std::string& command) {
    INFO(command << ": exit " << r.exit_code << "\n" << r.all());
    json j = json::parse(json_text(r.out));  // after any prompt: approve and friends ask on the same terminal
    CHECK(j.at("ok") == (r.exit_code == 0));
    CHECK(j.at("command") == command);
    CHECK(j.contains("error") == (r.exit_code != 0));
    if (r.exit_code != 0) CHECK(j.at("error").at("code") == r.exit_code);
    fs::path f = dir / (std::to_string(files.size()) + "-" + command + ".json");
    std::ofstream(f) << j.dump(2);
    files.push_back(f.string());
    ++per_command[command];
    return j;
  }
};

}  // namespace

TEST_CASE("every command's --json output fits its schema, failures and usage errors included", "[e2e][json][long]") {
  TempRepo repo{{"a.txt", "old\n"}, {"b.txt", "b\n"}, {".env", "API_TOKEN=abcdef123456\n"}};
  Outputs o;
  o.dir = repo.home() / "json-out";
  fs::create_directories(o.dir);

  o.add(repo.kai_tty({"--json", "init"}, "y"), "init");
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") + "\n# reviewed\n");
  o.add(repo.kai_tty({"--json", "trust"}, "y"), "trust");

  o.add(repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w"}),
        "propose");
  o.add(repo.kai({"--json", "propose", "--dry-run", "--path", "b.txt", "--content-file", "-", "--why", "w"}, "x\n"),
        "propose");
  o.add(repo.kai({"--json", "propose", "--path", "a.txt", "--target", "absent", "--replacement", "x", "--why", "w"}),
        "propose");
  o.add(repo.kai({"--json", "propose", "--path", ".env", "--content-file", "-", "--why", "w"}, "X=1\n"), "propose");
  o.add(repo.kai({"--json", "propose", "--bogus"}), "propose");  // the parser's usage error

  o.add(repo.kai({"--json", "run", "--dry-run", "--why", "w", "--", "ls"}), "run");
  o.add(repo.kai({"--json", "run", "--why", "w", "--shell", "rm -rf /"}), "run");
  json run = o.add(repo.kai({"--json", "run", "--why", "w", "--", "ls"}), "run");
  CHECK(run.at("proposal").at("id") == 2);

  o.add(repo.kai({"--json", "list"}), "list");
  o.add(repo.kai({"--json", "list", "--status", "nonsense"}), "list");
  json shown = o.add(repo.kai({"--json", "show", "1"}), "show");
  CHECK(shown.at("proposal").at("id") == 1);
  o.add(repo.kai({"--json", "show", "2"}), "show");
  o.add(repo.kai({"--json", "show", "99"}), "show");

  o.add(repo.kai_tty({"--json", "approve", "1"}, "y"), "approve");
  o.add(repo.kai({"--json", "approve", "2"}), "approve");  // no terminal: denied
  o.add(repo.kai_tty({"--json", "reject", "2", "--reason", "no"}, "y"), "reject");
  o.add(repo.kai_tty({"--json", "reject", "2"}, "y"), "reject");  // already rejected

  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "c")), 0);  // 3
  o.add(repo.kai_tty({"--json", "approve", "3", "--no-apply"}, "y"), "approve");
  o.add(repo.kai({"--json", "apply", "3"}), "apply");
  o.add(repo.kai({"--json", "apply", "3"}), "apply");  // applied already

  o.add(repo.kai({"--json", "wait", "1"}), "wait");
  o.add(repo.kai({"--json", "wait", "2"}), "wait");                    // rejected: 4
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "new", "newer")), 0);        // 4
  o.add(repo.kai({"--json", "wait", "4", "--timeout", "0"}), "wait");  // still pending: 8
  {
    Process waiting = repo.spawn_kai(
        {"--json", "propose", "--wait", "--path", "b.txt", "--target", "c", "--replacement", "d", "--why", "w"});
    for (int i = 0; i < 400 && waiting.so_far().err.find('\n') == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "5"}, "y"), 0);
    o.add(waiting.finish(30s), "propose");  // the outcome of --wait: rejected, 4
  }

  o.add(repo.kai({"--json", "log"}), "log");
  o.add(repo.kai_tty({"--json", "rollback", "last"}, "y"), "rollback");
  o.add(repo.kai({"--json", "rollback", "29990101T000000Z"}), "rollback");

  o.add(repo.kai({"--json", "read", "a.txt"}), "read");
  o.add(repo.kai({"--json", "read", ".env"}), "read");
  o.add(repo.kai({"--json", "ls"}), "ls");
  o.add(repo.kai({"--json", "ls", "../"}), "ls");

  o.add(repo.kai({"--json", "verify", "--base", "HEAD"}), "verify");
  o.add(repo.kai({"--json", "verify", "--base", "no-such-revision"}), "verify");
  o.add(repo.kai({"--json", "certify", "--base", "HEAD"}), "certify");  // no terminal to sign from
  o.add(repo.kai({"--json", "doctor"}), "doctor");
  o.add(repo.kai({"--json", "serve"}), "serve");                                    // no terminal: refused
  o.add(repo.kai({"--json", "integrate", "claude-code", "--check"}), "integrate");  // not wired: 6
  o.add(repo.kai_tty({"--json", "integrate", "cursor"}, "CONFIRM"), "integrate");   // written: one transaction
  o.add(repo.kai({"--json", "intake"}), "intake");
  o.add(repo.kai({"--json", "agent-user", "check", "no-such-agent-user"}), "agent-user");

  // Team mode (kaicoder-team(7)): off here, then on in a remote and two clones.
  o.add(repo.kai({"--json", "publish", "1"}), "publish");  // no [team]: 2
  o.add(repo.kai({"--json", "fetch"}), "fetch");
  {
    TeamRepos t;
    o.add(t.agent.kai({"--json", "propose", "--path", "a.txt", "--target", "alpha", "--replacement", "beta", "--why",
                       "w", "--publish"}),
          "propose");
    o.add(t.agent.kai({"--json", "publish", "1"}), "publish");  // again: the same commit
    o.add(t.person.kai({"--json", "fetch"}), "fetch");
    o.add(t.person.kai({"--json", "list"}), "list");
    o.add(t.person.kai({"--json", "show", "1"}), "show");
    o.add(t.person.kai_tty({"--json", "approve", "1"}, "y"), "approve");
    o.add(t.agent.kai({"--json", "wait", "1", "--timeout", "60"}), "wait");
    KAI_REQUIRE_EXIT(t.agent.kai(edit("b.txt", "bravo", "BRAVO")), 0);  // 2
    o.add(t.agent.kai({"--json", "publish", "2"}), "publish");          // on the proposal commit HEAD now is
    o.add(t.person.kai({"--json", "fetch", "--prune"}), "fetch");
    o.add(t.person.kai_tty({"--json", "reject", "2"}, "y"), "reject");
  }

  // Every command has a schema, and this case covered each one; but for the
  // doors whose stdout belongs to someone else's format: mcp (the protocol)
  // and hook (the harness's decision JSON).
  for (const auto& verb : command_table_verbs(k_source)) {
    if (verb == "mcp" || verb == "hook") continue;
    INFO(verb);
    CHECK(fs::exists(k_source / "schemas" / (verb + ".schema.json")));
    CHECK(o.per_command[verb] > 0);
  }

  // Debian's interpreter, where python3-jsonschema lives; another python3 first on PATH may lack it.
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  std::vector<std::string> argv{python, (k_source / "tests" / "schemas" / "validate.py").string(),
                                (k_source / "schemas").string()};
  argv.insert(argv.end(), o.files.begin(), o.files.end());
  Run v = repo.spawn(argv).finish(120s);
  INFO(v.all());
  REQUIRE_FALSE(v.err.find("No module named 'jsonschema'") != std::string::npos);  // scripts/deps.sh --test installs it
  KAI_CHECK_EXIT(v, 0);
  CHECK(v.out.find("unused schemas: none") != std::string::npos);
}
