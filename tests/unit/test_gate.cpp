// The gate's transitions called as a door calls them, without a process:
// every re-check under the lock refuses on its own.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "lib/gate/gate.hpp"
#include "unit/ws_fixture.hpp"

namespace {
using kai::Errc;
using kai::test::WsFixture;
namespace gate = kai::gate;

const gate::Decider k_tester{"tester", gate::Channel::terminal};

int stage(WsFixture& f, const std::string& path, const std::string& content) {
  auto st = f.write(path, content);
  REQUIRE(st);
  REQUIRE(st->proposal.state == kai::State::pending);
  return st->proposal.id;
}

// What a door shows for pending proposal `id`.
gate::ApprovalReview shown(WsFixture& f, int id, const gate::ApprovalOptions& opts = {}) {
  auto rv = gate::prepare_approval(*f.ws, id, k_tester, opts);
  REQUIRE(rv);
  return std::move(*rv);
}

// The request a door sends after showing `rv` and hearing `answer`.
gate::Request request_for(const gate::ApprovalReview& rv, gate::Answer answer, const gate::ApprovalOptions& opts = {}) {
  gate::Request r;
  r.id = rv.proposal.id;
  r.who = k_tester;
  r.answer = answer;
  r.seen_digest = rv.digest;
  r.diff_cut = rv.diff_cut;
  r.opts = opts;
  return r;
}

kai::State state_of(WsFixture& f, int id) {
  auto p = f.ws->store.load(id, kai::Store::Payloads::none);
  REQUIRE(p);
  return p->state;
}

bool exists(WsFixture& f, const std::string& rel) { return std::filesystem::exists(f.dir.path() / rel); }
}  // namespace

TEST_CASE("gate: a plain yes on a normal proposal approves and applies it", "[gate]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  CHECK(rv->need.tier == kai::Tier::normal);
  CHECK(rv->diff);
  CHECK_FALSE(rv->refusal);
  auto r = gate::approve(*f.ws, request_for(*rv, gate::Answer::yes));
  REQUIRE(r);
  CHECK(r->applied);
  CHECK(state_of(f, id) == kai::State::applied);
  CHECK(exists(f, "a.txt"));
}

TEST_CASE("gate: a digest other than the one shown is a conflict", "[gate]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  auto req = request_for(*rv, gate::Answer::yes);
  req.seen_digest = std::string(rv->digest.size(), '0');
  auto r = gate::approve(*f.ws, req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::conflict);
  CHECK(state_of(f, id) == kai::State::pending);
  CHECK_FALSE(exists(f, "a.txt"));
}

TEST_CASE("gate: a plain yes on a confirm-tier proposal is refused, CONFIRM is accepted", "[gate]") {
  WsFixture f("[paths]\nconfirm = [\"deploy/**\"]\n");
  int id = stage(f, "deploy/x.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  CHECK(rv->need.tier == kai::Tier::confirm);
  auto r = gate::approve(*f.ws, request_for(*rv, gate::Answer::yes));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::denied);
  CHECK_THAT(r.error().message, Catch::Contains("CONFIRM"));
  CHECK(state_of(f, id) == kai::State::pending);
  CHECK_FALSE(exists(f, "deploy/x.txt"));
  auto ok = gate::approve(*f.ws, request_for(*rv, gate::Answer::confirm));
  REQUIRE(ok);
  CHECK(state_of(f, id) == kai::State::applied);
}

TEST_CASE("gate: a diff the door cut takes CONFIRM, not a plain yes", "[gate]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  auto req = request_for(*rv, gate::Answer::yes);
  req.diff_cut = true;  // the door cut what it showed: a plain yes is not enough
  auto r = gate::approve(*f.ws, req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::denied);
  CHECK(state_of(f, id) == kai::State::pending);
}

TEST_CASE("gate: a no never reaches the store", "[gate]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  auto r = gate::approve(*f.ws, request_for(*rv, gate::Answer::no));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::rejected);
  CHECK(state_of(f, id) == kai::State::pending);
}

TEST_CASE("gate: someone not on the approvers list is denied at every transition", "[gate]") {
  WsFixture f("[approval]\napprovers = [\"alice\"]\n");
  int id = stage(f, "a.txt", "new\n");
  CHECK(gate::prepare_approval(*f.ws, id, k_tester, {}).error().code == Errc::denied);
  CHECK(gate::prepare_reject(*f.ws, id, k_tester).error().code == Errc::denied);
  CHECK(gate::prepare_rollback(*f.ws, "last", k_tester, kai::Force::no).error().code == Errc::denied);
  // A request built without the preparing call is refused all the same.
  auto p = f.ws->store.load(id);
  REQUIRE(p);
  gate::Request req;
  req.id = id;
  req.who = k_tester;
  req.answer = gate::Answer::confirm;
  req.seen_digest = kai::digest(*p);
  CHECK(gate::approve(*f.ws, req).error().code == Errc::denied);
  CHECK(gate::reject(*f.ws, req, "no").error().code == Errc::denied);
  CHECK(gate::apply(*f.ws, req).error().code == Errc::denied);
  CHECK(state_of(f, id) == kai::State::pending);
  // alice may.
  gate::Request as_alice = req;
  as_alice.who.user = "alice";
  auto r = gate::approve(*f.ws, as_alice);
  REQUIRE(r);
  CHECK(state_of(f, id) == kai::State::applied);
}

TEST_CASE("gate: propose-only mode denies applying and allows recording an approval", "[gate]") {
  WsFixture f("[policy]\nmode = \"propose-only\"\n");
  int id = stage(f, "a.txt", "new\n");
  auto denied = gate::prepare_approval(*f.ws, id, k_tester, {});
  REQUIRE_FALSE(denied);
  CHECK(denied.error().code == Errc::denied);
  CHECK_THAT(denied.error().message, Catch::Contains("propose-only"));
  const gate::ApprovalOptions record_only{kai::ApplyNow::no, kai::Force::no};
  auto rv = gate::prepare_approval(*f.ws, id, k_tester, record_only);
  REQUIRE(rv);
  // The same request with ApplyNow::yes is refused by approve itself.
  auto r = gate::approve(*f.ws, request_for(*rv, gate::Answer::yes, {}));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::denied);
  CHECK(state_of(f, id) == kai::State::pending);
  auto rec = gate::approve(*f.ws, request_for(*rv, gate::Answer::yes, record_only));
  REQUIRE(rec);
  CHECK_FALSE(rec->applied);
  CHECK(state_of(f, id) == kai::State::approved);
  auto ap = gate::apply(*f.ws, request_for(*rv, gate::Answer::yes));
  REQUIRE_FALSE(ap);
  CHECK(ap.error().code == Errc::denied);
  CHECK_FALSE(exists(f, "a.txt"));
}

TEST_CASE("gate: a rejected proposal cannot be approved, rejected again or prepared", "[gate][reject]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  auto shown = gate::prepare_reject(*f.ws, id, k_tester);
  REQUIRE(shown);
  gate::Request req;
  req.id = id;
  req.who = k_tester;
  CHECK(gate::reject(*f.ws, req, "no").error().code == Errc::rejected);  // no yes: nothing happens
  CHECK(state_of(f, id) == kai::State::pending);
  req.answer = gate::Answer::yes;
  auto rj = gate::reject(*f.ws, req, "not this");
  REQUIRE(rj);
  CHECK(rj->state == kai::State::rejected);
  auto r = gate::approve(*f.ws, request_for(*rv, gate::Answer::confirm));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::conflict);
  CHECK(gate::prepare_approval(*f.ws, id, k_tester, {}).error().code == Errc::conflict);
  CHECK(gate::prepare_reject(*f.ws, id, k_tester).error().code == Errc::conflict);
  CHECK(state_of(f, id) == kai::State::rejected);
  CHECK_FALSE(exists(f, "a.txt"));
}

TEST_CASE("gate: a second approval of the same review is a conflict", "[gate]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = gate::prepare_approval(*f.ws, id, k_tester, {gate::ApprovalOptions{kai::ApplyNow::no, kai::Force::no}});
  REQUIRE(rv);
  REQUIRE(gate::approve(*f.ws, request_for(*rv, gate::Answer::yes, {kai::ApplyNow::no, kai::Force::no})));
  auto again = gate::approve(*f.ws, request_for(*rv, gate::Answer::yes, {kai::ApplyNow::no, kai::Force::no}));
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::conflict);
  // Applied later through the apply door.
  auto ap = gate::apply(*f.ws, request_for(*rv, gate::Answer::no));
  REQUIRE(ap);
  CHECK(ap->applied);
  CHECK(state_of(f, id) == kai::State::applied);
}

TEST_CASE("gate: rollback resolves last, asks for a yes and names the entry it undid", "[gate][rollback]") {
  WsFixture f("");
  int id = stage(f, "a.txt", "new\n");
  auto rv = std::optional(shown(f, id));
  auto ap = gate::approve(*f.ws, request_for(*rv, gate::Answer::yes));
  REQUIRE(ap);
  REQUIRE(ap->applied);
  auto rb = gate::prepare_rollback(*f.ws, "last", k_tester, kai::Force::no);
  REQUIRE(rb);
  CHECK(rb->id == ap->applied->rollback_id);
  CHECK(rb->decision == kai::Decision::ask);
  gate::Request req;
  req.who = k_tester;
  auto no = gate::rollback(*f.ws, *rb, req);
  REQUIRE_FALSE(no);
  CHECK(no.error().code == Errc::rejected);
  CHECK(exists(f, "a.txt"));
  req.answer = gate::Answer::yes;
  auto done = gate::rollback(*f.ws, *rb, req);
  REQUIRE(done);
  CHECK(done->undone == ap->applied->rollback_id);
  CHECK_FALSE(exists(f, "a.txt"));
}

TEST_CASE("gate: a rollback the policy denies is refused before anything is shown", "[gate][rollback]") {
  WsFixture f("[policy.default]\nrollback = \"deny\"\n");
  auto rb = gate::prepare_rollback(*f.ws, "last", k_tester, kai::Force::no);
  REQUIRE_FALSE(rb);
  CHECK(rb.error().code == Errc::denied);
  // A review forged by a door is decided again.
  gate::RollbackReview forged;
  forged.asked = forged.id = "20260709T141530Z";
  forged.decision = kai::Decision::allow;
  gate::Request req;
  req.who = k_tester;
  req.answer = gate::Answer::yes;
  auto r = gate::rollback(*f.ws, forged, req);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::denied);
}

TEST_CASE("gate: answers meet tiers", "[gate]") {
  using gate::Answer;
  CHECK(gate::answer_meets(kai::Tier::normal, Answer::yes));
  CHECK(gate::answer_meets(kai::Tier::normal, Answer::confirm));
  CHECK(gate::answer_meets(kai::Tier::confirm, Answer::confirm));
  CHECK(gate::answer_meets(kai::Tier::confirm, Answer::yes).error().code == Errc::denied);
  CHECK(gate::answer_meets(kai::Tier::normal, Answer::no).error().code == Errc::rejected);
  CHECK(gate::answer_meets(kai::Tier::confirm, Answer::no).error().code == Errc::rejected);
}

TEST_CASE("gate: grades are stored as text and a value kaicoder never writes reads the cautious way", "[gate]") {
  kai::Proposal p;
  p.id = 1;
  p.risk = kai::Risk::medium;
  p.tier = kai::Tier::confirm;
  p.decision = kai::Decision::allow;
  nlohmann::json j = kai::to_json(p);
  CHECK(j.at("risk") == "medium");
  CHECK(j.at("tier") == "confirm");
  CHECK(j.at("decision") == "allow");
  auto back = kai::from_json(j);
  REQUIRE(back);
  CHECK(back->risk == kai::Risk::medium);
  CHECK(back->tier == kai::Tier::confirm);
  CHECK(back->decision == kai::Decision::allow);
  j["risk"] = "negligible";
  j["tier"] = "Normal";
  auto odd = kai::from_json(j);
  REQUIRE(odd);
  CHECK(odd->risk == kai::Risk::high);
  CHECK(odd->tier == kai::Tier::confirm);
}

TEST_CASE("gate: an approved run is carried out once, through approve or through apply", "[gate][run]") {
  WsFixture f("[run]\nsandbox = \"none\"\n");
  auto stage_run = [&](const std::string& file) {
    kai::RunRequest r;
    r.argv = {"touch", file};
    r.why = "test";
    auto st = kai::propose_run(*f.ws, r, f.dir.path(), kai::DryRun::no, nullptr);
    REQUIRE(st);
    REQUIRE(st->proposal.state == kai::State::pending);
    return st->proposal.id;
  };
  int now = stage_run("now.txt");
  auto rv = gate::prepare_approval(*f.ws, now, k_tester, {});
  REQUIRE(rv);
  CHECK_FALSE(rv->diff);
  CHECK(rv->need.tier == kai::Tier::confirm);  // a run that writes a file
  auto r = gate::approve(*f.ws, request_for(*rv, gate::Answer::confirm));
  REQUIRE(r);
  REQUIRE(r->ran);
  CHECK(r->ran->result.exit_code == 0);
  CHECK(exists(f, "now.txt"));
  // Applying it again does not run it again.
  auto again = gate::apply(*f.ws, request_for(*rv, gate::Answer::no));
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::conflict);

  const gate::ApprovalOptions later{kai::ApplyNow::no, kai::Force::no};
  int id = stage_run("later.txt");
  auto rl = gate::prepare_approval(*f.ws, id, k_tester, later);
  REQUIRE(rl);
  auto approved = gate::approve(*f.ws, request_for(*rl, gate::Answer::confirm, later));
  REQUIRE(approved);
  CHECK_FALSE(approved->ran);
  CHECK_FALSE(exists(f, "later.txt"));
  auto ran = gate::apply(*f.ws, request_for(*rl, gate::Answer::no));
  REQUIRE(ran);
  REQUIRE(ran->ran);
  CHECK(exists(f, "later.txt"));
}

TEST_CASE(
    "gate: a rollback the policy allows is checked against the approvers as the person who asked, and logged as the "
    "rule",
    "[gate][rollback]") {
  WsFixture f("[approval]\napprovers = [\"alice\"]\n[policy.default]\nrollback = \"allow\"\n");
  int id = stage(f, "a.txt", "new\n");
  auto p = f.ws->store.load(id);
  REQUIRE(p);
  gate::Request req;
  req.id = id;
  req.who.user = "alice";
  req.answer = gate::Answer::yes;
  req.seen_digest = kai::digest(*p);
  REQUIRE(gate::approve(*f.ws, req));
  // Someone not on the list is still refused, even though no question is asked.
  CHECK(gate::prepare_rollback(*f.ws, "last", k_tester, kai::Force::no).error().code == Errc::denied);
  auto rb = gate::prepare_rollback(*f.ws, "last", req.who, kai::Force::no);
  REQUIRE(rb);
  CHECK(rb->decision == kai::Decision::allow);
  gate::Request undo;
  undo.who.user = "alice";
  undo.answer = gate::Answer::no;  // allowed by the policy: no answer is needed
  auto done = gate::rollback(*f.ws, *rb, undo);
  REQUIRE(done);
  CHECK_FALSE(exists(f, "a.txt"));
  CHECK_THAT(done->outcome.entry.approver, Catch::StartsWith("policy ("));
}
