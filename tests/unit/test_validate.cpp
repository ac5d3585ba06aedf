// [validate]: the proposed content is checked in a private copy, never the
// live file, and a failed check holds the apply back unless forced.

#include "unit/ws_fixture.hpp"

#include <nlohmann/json.hpp>

#include "lib/gate/decide.hpp"
#include "lib/shell/shell.hpp"
#include "lib/run/validate.hpp"

namespace {
using Catch::Matchers::Contains;
using kai::test::WsFixture;

kai::Validation validation_of(const kai::Result<kai::Staged>& st) {
  REQUIRE(st);
  return st->proposal.validation;
}

}  // namespace

TEST_CASE("{file} becomes the shell-quoted path, however it is spelled", "[validate]") {
  for (std::string path : {"/r/plain.json", "/r/with space.json", "/r/it's \"quoted\".json", "/r/$(touch x);.json"}) {
    std::string cmd = kai::substitute_file("check {file} --again {file}", path);
    auto words = kai::tokenize_argv(cmd);
    REQUIRE(words);
    CHECK(*words == std::vector<std::string>{"check", path, "--again", path});
  }
  CHECK(kai::names_file("x {file}"));
  CHECK_FALSE(kai::names_file("cargo check"));
}

TEST_CASE("only commands whose glob matches the path run", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"grep -q ok {file}\"\n\"docs/**\" = \"false {file}\"\n");
  CHECK(validation_of(f.write("a.txt", "x\n", kai::DryRun::yes)).status == "none");
  const auto v = validation_of(f.write("src/b.json", "ok\n", kai::DryRun::yes));
  CHECK(v.status == "ok");
  REQUIRE(v.checks.size() == 1);
  CHECK(v.checks[0].pattern == "*.json");
  CHECK(validation_of(f.write("docs/c.json", "ok\n", kai::DryRun::yes)).status == "failed");
}

TEST_CASE("the check sees the proposed bytes at a path with spaces and quotes", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"grep -q NEW {file}\"\n");
  f.dir.write("odd dir/it's.json", "OLD\n");
  const auto v = validation_of(f.write("odd dir/it's.json", "NEW\n", kai::DryRun::yes));
  CHECK(v.status == "ok");
  CHECK(f.dir.read("odd dir/it's.json") == "OLD\n");
}

TEST_CASE("a failing check keeps its exit code and output", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"echo 'broken at line 1' >&2; echo {file}; exit 3\"\n");
  const auto v = validation_of(f.write("x/a.json", "{\n", kai::DryRun::yes));
  CHECK(v.status == "failed");
  REQUIRE(v.checks.size() == 1);
  CHECK(v.checks[0].exit_code == 3);
  CHECK_THAT(v.checks[0].output, Contains("broken at line 1"));
  // The private copy is named by the file's own path.
  CHECK_THAT(v.checks[0].output, Contains("x/a.json"));
  CHECK_THAT(v.checks[0].output, !Contains(".kaicoder"));
}

TEST_CASE("a check that overstays its limit is killed and fails", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"sleep 30; true {file}\"\n");
  f.ws->cfg.validate_timeout = std::chrono::milliseconds(200);
  const auto v = validation_of(f.write("a.json", "{}\n", kai::DryRun::yes));
  CHECK(v.status == "failed");
  REQUIRE(v.checks.size() == 1);
  CHECK(v.checks[0].timed_out);
  CHECK_THAT(v.checks[0].output, Contains("timed out after 0.2 s"));
}

TEST_CASE("a command without {file} is not run against the live tree", "[validate]") {
  WsFixture f("[validate]\n\"*.rs\" = \"touch ran-against-live-tree\"\n");
  const auto v = validation_of(f.write("a.rs", "fn main() {}\n", kai::DryRun::yes));
  CHECK(v.status == "not-run");
  REQUIRE(v.checks.size() == 1);
  CHECK_THAT(v.checks[0].output, Contains("{file}"));
  CHECK_FALSE(f.dir.exists("ran-against-live-tree"));
}

TEST_CASE("a delete has nothing to validate", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"false {file}\"\n");
  f.dir.write("a.json", "{}\n");
  kai::ProposeRequest r;
  r.path = "a.json";
  r.del = true;
  r.why = "test";
  auto st = kai::propose(*f.ws, r, f.dir.path(), kai::DryRun::yes, {});
  CHECK(validation_of(st).status == "none");
}

TEST_CASE("a check cannot write the live file, and its private copy is removed", "[validate]") {
  if (!kai::test::have_landlock()) return;
  // The check runs from root, so a.json names the live file.
  WsFixture f("[validate]\n\"*.json\" = \"echo mine > {file} && echo pwned > a.json\"\n");
  f.dir.write("a.json", "{\"live\": true}\n");
  const auto v = validation_of(f.write("a.json", "{}\n", kai::DryRun::yes));
  CHECK(v.status == "failed");
  CHECK(f.dir.read("a.json") == "{\"live\": true}\n");
  CHECK(std::filesystem::is_empty(f.dir.path() / ".kaicoder" / "scratch"));
}

TEST_CASE("apply refuses a failed validation unless forced, and the entry says it was forced", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"grep -q '^{' {file}\"\n");
  auto st = f.write("a.json", "not json\n");
  REQUIRE(validation_of(st).status == "failed");
  const int id = st->proposal.id;
  auto seen = kai::digest(st->proposal);
  auto refused = kai::approve(*f.ws, id, seen, "tester", kai::ApplyNow::yes);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == kai::Errc::conflict);
  CHECK(f.ws->store.load(id)->state == kai::State::pending);
  CHECK_FALSE(f.dir.exists("a.json"));
  auto forced = kai::approve(*f.ws, id, seen, "tester", kai::ApplyNow::yes, kai::Force::yes);
  REQUIRE(forced);
  CHECK(f.dir.read("a.json") == "not json\n");
  REQUIRE(forced->applied);
  CHECK_THAT(forced->applied->entry.result, Contains("forced"));
  CHECK_THAT(f.ws->store.load(id)->result, Contains("forced"));
}

TEST_CASE("apply of an approved proposal whose validation failed needs --force", "[validate]") {
  WsFixture f("[validate]\n\"*.json\" = \"false {file}\"\n");
  auto st = f.write("a.json", "{}\n");
  REQUIRE(st);
  const int id = st->proposal.id;
  REQUIRE(kai::approve(*f.ws, id, kai::digest(st->proposal), "tester", kai::ApplyNow::no));
  auto refused = kai::apply_approved(*f.ws, id, "tester");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == kai::Errc::conflict);
  CHECK_FALSE(f.dir.exists("a.json"));
  REQUIRE(kai::apply_approved(*f.ws, id, "tester", kai::Force::yes));
  CHECK(f.dir.read("a.json") == "{}\n");
}

TEST_CASE("an allow rule does not apply content that failed validation", "[validate]") {
  WsFixture f(
      "[policy.default]\nwrite = \"allow\"\n[validate]\n\"*.json\" = \"false {file}\"\n\"*.txt\" = \"true {file}\"\n");
  auto bad = f.write("a.json", "{}\n");
  REQUIRE(bad);
  CHECK_FALSE(bad->applied);
  CHECK(bad->proposal.decision == kai::Decision::ask);
  CHECK_THAT(bad->proposal.decision_rule, Contains("validation failed"));
  CHECK(f.ws->store.load(bad->proposal.id)->state == kai::State::pending);
  auto good = f.write("b.txt", "ok\n");
  REQUIRE(good);
  CHECK(good->applied);
  CHECK(f.dir.read("b.txt") == "ok\n");
}

TEST_CASE("a record from before validation existed loads as none", "[validate]") {
  auto p = kai::from_json(nlohmann::json{{"id", 3}, {"kind", "edit"}, {"status", "pending"}});
  REQUIRE(p);
  CHECK(p->validation.status == "none");
  CHECK(p->review.status == "none");
  kai::Proposal q;
  q.validation.status = "failed";
  q.validation.checks.push_back({"*.json", "false {file}", "failed", 1, false, "out\n"});
  q.review = {"ok", 0, "looks fine\n"};
  auto back = kai::from_json(kai::to_json(q));
  REQUIRE(back);
  CHECK(back->validation.status == "failed");
  REQUIRE(back->validation.checks.size() == 1);
  CHECK(back->validation.checks[0].output == "out\n");
  CHECK(back->review.text == "looks fine\n");
}
