// Usage errors and unknown ids: exit codes, messages, nothing staged.

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
