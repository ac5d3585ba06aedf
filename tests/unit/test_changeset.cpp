// Changeset proposals in the library: the request forms, the digest that
// binds every file, the record and its payload, and one staged and applied
// through the gate as a door calls it.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lib/gate/changeset.hpp"
#include "lib/gate/gate.hpp"
#include "unit/ws_fixture.hpp"

namespace {
using kai::Errc;
using kai::test::WsFixture;
using json = nlohmann::json;
using Catch::Matchers::Contains;

kai::Proposal two_file_changeset() {
  kai::Proposal p;
  p.kind = kai::Kind::changeset;
  p.path = "a.txt";
  kai::Change a;
  a.op = "edit";
  a.path = "a.txt";
  a.base = {true, "1111111111111111111111111111111111111111", 0644};
  a.after = "new a\n";
  a.after_mode = 0644;
  kai::Change b;
  b.op = "rename";
  b.path = "b.txt";
  b.to = "c.txt";
  b.base = {true, "2222222222222222222222222222222222222222", 0644};
  b.after = "b\n";
  b.after_mode = 0755;
  p.changes = {a, b};
  return p;
}

}  // namespace

TEST_CASE("a changeset's digest binds every file's op, paths, base and result", "[changeset]") {
  const kai::Proposal p = two_file_changeset();
  const std::string d = kai::digest(p);
  auto differs = [&](auto&& change) {
    kai::Proposal q = p;
    change(q);
    return kai::digest(q) != d;
  };
  CHECK(differs([](kai::Proposal& q) { q.changes[1].op = "create"; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[0].path = "x.txt"; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[1].to = "d.txt"; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[0].base.blob[0] = '3'; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[0].base.mode = 0755; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[0].base.exists = false; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[0].after += "x"; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[1].after_mode = 0644; }));
  CHECK(differs([](kai::Proposal& q) { q.changes[1].after_exists = false; }));
  CHECK(differs([](kai::Proposal& q) { q.changes.pop_back(); }));
  // The verdicts are metadata, sealed with the record, not part of what is approved.
  CHECK_FALSE(differs([](kai::Proposal& q) { q.changes[0].risk = kai::Risk::high; }));
}

TEST_CASE("a changeset's record keeps every file's metadata, and the bytes are a payload", "[changeset]") {
  kai::Proposal p = two_file_changeset();
  p.changes[1].tier = kai::Tier::confirm;
  p.changes[1].tier_reason = "confirm path";
  auto back = kai::from_json(kai::to_json(p));
  REQUIRE(back);
  REQUIRE(back->changes.size() == 2);
  CHECK(back->changes[1].op == "rename");
  CHECK(back->changes[1].to == "c.txt");
  CHECK(back->changes[1].after_mode == 0755u);
  CHECK(back->changes[1].tier == kai::Tier::confirm);
  CHECK(back->changes[0].base.blob == p.changes[0].base.blob);
  CHECK(back->changes[0].after.size() == p.changes[0].after.size());  // filled from the payload on load
  CHECK_FALSE(kai::to_json(kai::Proposal{}).contains("changes"));     // other records stay as they were
}

TEST_CASE("changes given with --json-input are checked field by field, naming the change", "[changeset]") {
  CHECK(kai::is_changeset_json(R"({"changes": [], "why": "w"})"));
  CHECK_FALSE(kai::is_changeset_json(R"({"path": "a", "why": "w"})"));
  auto ok = kai::changeset_from_json(
      R"({"why": "w", "changes": [{"op": "write", "path": "b", "content_base64": "AAE="},
                                  {"op": "mode", "path": "t", "mode": "100755"},
                                  {"op": "edit", "path": "a", "target": "x", "replacement": "y", "replace_all": true}]})");
  REQUIRE(ok);
  CHECK(*ok->changes[0].content == std::string("\x00\x01", 2));
  CHECK(*ok->changes[1].mode == 0755u);
  CHECK(ok->changes[2].replace_all);
  for (const char* bad : {R"({"changes": [{"op": "edit", "path": "a", "target": "x"}]})",
                          R"({"changes": [{"op": "write", "path": "a", "content": "x", "content_base64": "eA=="}]})",
                          R"({"changes": [{"op": "mode", "path": "a", "mode": "0777"}]})",
                          R"({"changes": [{"op": "move", "path": "a"}]})",
                          R"({"changes": [{"op": "delete", "path": "a", "colour": "red"}]})",
                          R"({"changes": [{"op": "rename", "path": "a"}]})", R"({"changes": [{"op": "delete"}]})",
                          R"({"changes": [{"op": "write", "path": "a", "content_base64": "!!"}]})"}) {
    INFO(bad);
    auto r = kai::changeset_from_json(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
    CHECK_THAT(r.error().message, Contains("changes[0]"));
  }
  auto later =
      kai::changeset_from_json(R"({"changes": [{"op": "delete", "path": "a"}, {"op": "delete", "path": ""}]})");
  REQUIRE_FALSE(later);
  CHECK_THAT(later.error().message, Contains("changes[1]"));
}

TEST_CASE("replace_every counts what it replaces, left to right, never overlapping", "[changeset]") {
  auto r = kai::replace_every("aaaa", "aa", "b");
  CHECK(r.count == 2);
  CHECK(r.bytes == "bb");
  auto none = kai::replace_every("abc", "x", "y");
  CHECK(none.count == 0);
  CHECK(none.bytes == "abc");
}

TEST_CASE("a changeset staged through the library: its payload bytes are bound, and the gate applies it whole",
          "[changeset]") {
  WsFixture f("", {{"a.txt", "one\n"}, {"b.txt", "two\n"}});
  kai::ChangesetRequest req;
  req.why = "two files";
  req.patch =
      "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n"
      "diff --git a/b.txt b/c.txt\nsimilarity index 100%\nrename from b.txt\nrename to c.txt\n";
  auto st = kai::propose_changeset(*f.ws, req, f.dir.path(), kai::DryRun::no, {});
  REQUIRE(st);
  const int id = st->proposal.id;
  REQUIRE(id > 0);
  auto loaded = f.ws->store.load(id);
  REQUIRE(loaded);
  CHECK(loaded->sealed == kai::SealCheck::ok);
  CHECK_FALSE(loaded->payload_changed);
  REQUIRE(loaded->changes.size() == 2);
  CHECK(loaded->changes[0].after == "ONE\n");
  CHECK(loaded->changes[1].after == "two\n");

  SECTION("a payload changed after staging is found out") {
    f.dir.write(".kaicoder/staging/" + std::to_string(id) + "/changes", "ONE\ntwO\n");
    auto changed = f.ws->store.load(id);
    REQUIRE(changed);
    CHECK(changed->payload_changed);
    f.dir.write(".kaicoder/staging/" + std::to_string(id) + "/changes", "ONE\n");  // shorter: cannot be split
    CHECK(f.ws->store.load(id)->payload_changed);
  }
  SECTION("a record loaded once and changed on disk is checked again, byte for byte") {
    // A command loads one proposal several times (approve: before the
    // question and after the pause); what it parsed first is reused only
    // for the very same bytes.
    const std::string meta = ".kaicoder/staging/" + std::to_string(id) + "/meta.json";
    const std::string sealed = f.dir.read(meta);
    std::string forged = sealed;
    const size_t at = forged.find("two files");
    REQUIRE(at != std::string::npos);
    forged[at] = 'T';  // same size, still well-formed JSON
    f.dir.write(meta, forged);
    auto after = f.ws->store.load(id);
    REQUIRE(after);
    CHECK(after->sealed == kai::SealCheck::bad);
    CHECK(after->why == "Two files");
    f.dir.write(meta, sealed);
    auto back = f.ws->store.load(id, kai::Store::Payloads::none);
    REQUIRE(back);
    CHECK(back->sealed == kai::SealCheck::ok);
    CHECK(back->why == "two files");
    CHECK(back->changes[0].after == std::string(4, '\0'));  // its size only: no payload bytes carried over
    // A copy of the store with another sealer checks again too.
    kai::Store other = f.ws->store;
    other.use(kai::Sealer{});
    auto unkeyed = other.load(id);
    REQUIRE(unkeyed);
    CHECK(unkeyed->sealed != kai::SealCheck::ok);
    CHECK(f.ws->store.load(id)->sealed == kai::SealCheck::ok);
  }
  SECTION("approved and applied through the gate") {
    const kai::gate::Decider who{"tester", kai::gate::Channel::terminal};
    auto rv = kai::gate::prepare_approval(*f.ws, id, who, {});
    REQUIRE(rv);
    CHECK_THAT(rv->diff->text, Contains("rename from b.txt"));
    kai::gate::Request r{id, who, kai::gate::Answer::yes, rv->digest, rv->diff_cut, {}};
    auto done = kai::gate::approve(*f.ws, r);
    REQUIRE(done);
    REQUIRE(done->applied);
    CHECK(f.dir.read("a.txt") == "ONE\n");
    CHECK(f.dir.read("c.txt") == "two\n");
    CHECK_FALSE(std::filesystem::exists(f.dir.path() / "b.txt"));
    CHECK(done->applied->entry.kind == "changeset");
    CHECK(done->applied->entry.action == "apply_changeset");
    CHECK(done->applied->entry.files.size() == 3);
  }
}
