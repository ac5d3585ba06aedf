// Usage errors and unknown ids: exit codes, messages, nothing staged.

#include <map>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

TEST_CASE("usage errors exit 2 and stage nothing", "[e2e][usage]") {
  TempRepo repo{{"a.txt", "old\n"}, {"c.in", "c\n"}};
  repo.init();
  auto before = repo.tree_snapshot();

  Run no_why = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new"});
  KAI_CHECK_EXIT(no_why, 2);
  CHECK_THAT(no_why.err, Contains("--why"));

  Run blank_why = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "  "});
  KAI_CHECK_EXIT(blank_why, 2);

  Run two_forms = repo.kai({"propose", "--path", "a.txt", "--content-file", "c.in", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(two_forms, 2);
  CHECK_THAT(two_forms.err, Contains("exactly one"));

  Run half_edit = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--why", "w"});
  KAI_CHECK_EXIT(half_edit, 2);

  Run no_path = repo.kai({"propose", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_CHECK_EXIT(no_path, 2);

  Run unknown = repo.kai({"propose", "--path", "a.txt", "--bogus", "--why", "w"});
  KAI_CHECK_EXIT(unknown, 2);
  Run unknown_verb = repo.kai({"frobnicate"});
  KAI_CHECK_EXIT(unknown_verb, 2);
  Run no_verb = repo.kai({});
  KAI_CHECK_EXIT(no_verb, 2);

  Run two_stdins =
      repo.kai({"propose", "--path", "a.txt", "--target-file", "-", "--replacement-file", "-", "--why", "w"}, "x");
  KAI_CHECK_EXIT(two_stdins, 2);

  Run bad_json = repo.kai({"propose", "--json-input"}, "{not json");
  KAI_CHECK_EXIT(bad_json, 2);
  Run unknown_field = repo.kai({"propose", "--json-input"}, R"({"path":"a.txt","delete":true,"why":"w","x":1})");
  KAI_CHECK_EXIT(unknown_field, 2);
  CHECK_THAT(unknown_field.err, Contains("'x'"));

  Run missing_file = repo.kai({"propose", "--path", "a.txt", "--content-file", "nope.in", "--why", "w"});
  KAI_CHECK_EXIT(missing_file, 2);

  Run same = repo.kai({"propose", "--path", "a.txt", "--content-file", "-", "--why", "w"}, "old\n");
  KAI_CHECK_EXIT(same, 2);
  CHECK_THAT(same.err, Contains("already holds"));

  Run approve_no_id = repo.kai({"approve"});
  KAI_CHECK_EXIT(approve_no_id, 2);
  Run show_word = repo.kai({"show", "one"});
  KAI_CHECK_EXIT(show_word, 2);

  Run json_usage = repo.kai({"--json", "propose", "--path", "a.txt", "--delete"});
  KAI_CHECK_EXIT(json_usage, 2);
  json e = json_of(json_usage);
  CHECK(e.at("ok") == false);
  CHECK(e.at("error").at("code") == 2);

  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("unknown proposal and rollback ids exit 7", "[e2e][unknown]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  auto before = repo.tree_snapshot();

  Run show = repo.kai({"show", "99"});
  KAI_CHECK_EXIT(show, 7);
  CHECK_THAT(show.err, Contains("no proposal 99"));

  Run approve99 = repo.kai_tty({"approve", "99"}, "y");
  KAI_CHECK_EXIT(approve99, 7);
  CHECK_FALSE(approve99.prompted);

  Run apply99 = repo.kai({"apply", "99"});
  KAI_CHECK_EXIT(apply99, 7);

  Run reject99 = repo.kai_tty({"reject", "99"}, "y");
  KAI_CHECK_EXIT(reject99, 7);

  Run rb = repo.kai_tty({"rollback", "20990101T000000Z"}, "y");
  KAI_CHECK_EXIT(rb, 7);
  CHECK_THAT(rb.all(), Contains("20990101T000000Z"));

  Run last = repo.kai_tty({"rollback", "last"}, "y");
  KAI_CHECK_EXIT(last, 7);

  Run show0 = repo.kai({"show", "0"});
  KAI_CHECK_EXIT(show0, 7);
  // Ids never name a file: a path-like id is simply unknown.
  Run sneaky = repo.kai_tty({"rollback", "../../KAI-CODER-CHANGELOG"}, "y");
  KAI_CHECK_EXIT(sneaky, 7);

  Run rb_json = repo.kai_tty({"--json", "rollback", "20990101T000000Z"}, "y");
  KAI_CHECK_EXIT(rb_json, 7);
  CHECK(json_of(rb_json).at("error").at("code") == 7);

  CHECK(repo.tree_snapshot() == before);
}

}  // namespace

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// One kaicoder: error: line for a usage error, with a hint, exit 2.
void check_usage(const Run& r, const std::string& message) {
  KAI_CHECK_EXIT(r, 2);
  CHECK_THAT(r.err, Contains("kaicoder: error: " + message));
  CHECK_THAT(r.err, Contains("hint: "));
  CHECK(r.out.empty());
}
}  // namespace

TEST_CASE("an unknown command names the closest one, as git does", "[e2e][usage]") {
  TempRepo repo;
  check_usage(repo.kai({"lsit"}), "unknown command 'lsit'; did you mean 'list'?");
  check_usage(repo.kai({"appove", "7"}), "unknown command 'appove'; did you mean 'approve'?");
  check_usage(repo.kai({"--root", "/tmp", "rollbak", "last"}), "unknown command 'rollbak'; did you mean 'rollback'?");
  Run far = repo.kai({"frobnicate"});
  check_usage(far, "unknown command 'frobnicate'");
  CHECK_THAT(far.err, !Contains("did you mean"));
  // What was typed is quoted, never obeyed: hidden characters are shown.
  Run odd = repo.kai({"l\x1b[2Jst"});
  KAI_CHECK_EXIT(odd, 2);
  CHECK_THAT(odd.err, Contains("\\e[2J"));
  CHECK(odd.err.find('\x1b') == std::string::npos);
  // No command at all.
  check_usage(repo.kai({}), "no command given");
  CHECK_FALSE(repo.exists(".kaicoder"));
}

TEST_CASE("with --json a usage error is the envelope, naming the command that was typed", "[e2e][usage][json]") {
  TempRepo repo;
  Run lsit = repo.kai({"--json", "lsit"});
  KAI_CHECK_EXIT(lsit, 2);
  json j = json_of(lsit);
  CHECK(j.at("ok") == false);
  CHECK(j.at("command") == "lsit");
  CHECK(j.at("error").at("code") == 2);
  CHECK(j.at("error").at("kind") == "usage");
  CHECK(j.at("error").at("message") == "unknown command 'lsit'; did you mean 'list'?");
  Run opt = repo.kai({"--json", "propose", "--replacment", "y"});
  KAI_CHECK_EXIT(opt, 2);
  json o = json_of(opt);
  CHECK(o.at("command") == "propose");
  CHECK_THAT(o.at("error").at("message").get<std::string>(), Contains("did you mean '--replacement'?"));
}

TEST_CASE("an unknown option names the closest option of that command", "[e2e][usage]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacment", "y", "--why", "w"});
  check_usage(r, "unknown option '--replacment' for 'propose'; did you mean '--replacement'?");
  check_usage(repo.kai({"list", "--staus", "pending"}), "unknown option '--staus' for 'list'; did you mean '--status'?");
  check_usage(repo.kai({"approve", "1", "--no-aply"}),
              "unknown option '--no-aply' for 'approve'; did you mean '--no-apply'?");
  check_usage(repo.kai({"log", "--fulll=1"}), "unknown option '--fulll' for 'log'; did you mean '--full'?");
  check_usage(repo.kai({"approve", "1", "2"}), "unexpected argument '2' for 'approve'");
  check_usage(repo.kai({"approve"}), "approve: ");
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("kaicoder help COMMAND is kaicoder COMMAND --help, and -v and --version both work", "[e2e][usage][help]") {
  TempRepo repo;
  for (const char* verb : {"approve", "list", "rollback", "propose"}) {
    INFO(verb);
    Run help = repo.kai({"help", verb});
    Run flag = repo.kai({verb, "--help"});
    KAI_CHECK_EXIT(help, 0);
    KAI_CHECK_EXIT(flag, 0);
    CHECK(help.out == flag.out);
    CHECK_THAT(help.out, Contains(verb));
    CHECK(help.err.empty());
  }
  Run approve = repo.kai({"help", "approve"});
  CHECK_THAT(approve.out, Contains("--no-apply"));
  CHECK_THAT(approve.out, !Contains("is required"));
  Run top = repo.kai({"help"});
  KAI_CHECK_EXIT(top, 0);
  CHECK(top.out == repo.kai({"--help"}).out);
  CHECK_THAT(top.out, Contains("approve"));
  check_usage(repo.kai({"help", "lsit"}), "unknown command 'lsit'; did you mean 'list'?");
  Run v = repo.kai({"-v"});
  Run version = repo.kai({"--version"});
  KAI_CHECK_EXIT(v, 0);
  KAI_CHECK_EXIT(version, 0);
  CHECK_THAT(v.out, Contains("kaicoder "));
  CHECK(v.out == version.out);
  CHECK_FALSE(repo.exists(".kaicoder"));
}

TEST_CASE("every command that takes a proposal id refuses what is not decimal", "[e2e][usage][ids][long]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  // Proposals up to 10, so that each malformed id would name one if read loosely.
  for (int i = 0; i < 10; ++i) KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new" + std::to_string(i))), 0);
  auto before = repo.tree_snapshot();
  for (const char* id : {"010", "0x8", "+8", " 8", "1e3", "8 "}) {
    const std::vector<std::vector<std::string>> calls = {
        {"approve", id}, {"reject", id}, {"apply", id}, {"show", id}, {"wait", id, "--timeout", "0"}, {"rollback", id}};
    for (const auto& args : calls) {
      INFO(args[0] << " '" << id << "'");
      Run r = repo.kai_tty(args, "y");
      KAI_CHECK_EXIT(r, 2);
      CHECK_FALSE(r.prompted);
      CHECK_THAT(r.err, Contains("is not a proposal id"));
      CHECK_THAT(r.err, Contains("decimal numbers like 8"));
      Run j = repo.kai({"--json", args[0], id});
      KAI_CHECK_EXIT(j, 2);
      CHECK(json_of(j).at("error").at("kind") == "usage");
    }
  }
  CHECK(repo.tree_snapshot() == before);
  // All ten still pending, read in one list instead of ten shows.
  const json listed = json_of(repo.kai({"--json", "list"}));
  CHECK(listed.at("corrupt").empty());
  std::map<int, std::string> status;
  for (const auto& p : listed.at("proposals")) status[p.at("id").get<int>()] = p.at("status").get<std::string>();
  std::map<int, std::string> pending;
  for (int i = 1; i <= 10; ++i) pending[i] = "pending";
  CHECK(status == pending);
  // The well-formed id still works.
  KAI_CHECK_EXIT(repo.kai({"show", "8"}), 0);
}

TEST_CASE("declining at any prompt exits 4 and changes nothing", "[e2e][usage][decline]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "newer")), 0);
  auto before = repo.tree_snapshot();
  for (const auto& args : std::vector<std::vector<std::string>>{{"approve", "1"}, {"reject", "2"}}) {
    INFO(args[0]);
    Run r = repo.kai_tty(args, "n");
    KAI_CHECK_EXIT(r, 4);
    CHECK(r.prompted);
    Run j = repo.kai_tty({"--json", args[0], args[1]}, "n");
    KAI_CHECK_EXIT(j, 4);
    json o = json_of(j);
    CHECK(o.at("ok") == false);
    CHECK(o.at("error").at("code") == 4);
    CHECK(o.at("error").at("kind") == "rejected");
  }
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(show_json(repo, 2).at("status") == "pending");
  CHECK(repo.tree_snapshot() == before);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  auto applied = repo.tree_snapshot();
  Run rb = repo.kai_tty({"rollback", "1"}, "n");
  KAI_CHECK_EXIT(rb, 4);
  CHECK(repo.tree_snapshot() == applied);
  // trust, with a changed kaicoder.toml.
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") + "\n# changed\n");
  Run t = repo.kai_tty({"trust"}, "n");
  KAI_CHECK_EXIT(t, 4);
  // integrate: CONFIRM not typed.
  repo.trust();
  Run i = repo.kai_tty({"integrate", "claude-code"}, "n");
  KAI_CHECK_EXIT(i, 4);
  CHECK_FALSE(repo.exists(".claude/settings.json"));
}
