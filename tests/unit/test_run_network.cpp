// kaicoder run --network: a per-proposal request for network access that
// the approver sees, that makes the run confirm tier, and that is bound to
// the approval like the command itself.

#include "unit/ws_fixture.hpp"

#include <nlohmann/json.hpp>

#include "lib/gate/runs.hpp"

namespace {
using Catch::Matchers::Contains;
using kai::test::WsFixture;

kai::RunRequest echo_request(bool network) {
  kai::RunRequest r;
  r.argv = {"echo", "hi"};
  r.why = "test";
  r.network = network;
  return r;
}

}  // namespace

TEST_CASE("a network request survives the proposal record and is part of the approved digest", "[run][network]") {
  kai::Proposal p;
  p.kind = kai::Kind::run;
  p.argv = {"curl", "https://example.com"};
  const std::string without = kai::digest(p);
  auto back = kai::from_json(kai::to_json(p));
  REQUIRE(back);
  CHECK_FALSE(back->network);
  p.network = true;
  CHECK(kai::to_json(p).at("network") == true);
  back = kai::from_json(kai::to_json(p));
  REQUIRE(back);
  CHECK(back->network);
  // Granting the network after approval changes what was approved.
  CHECK(kai::digest(p) != without);
  // A record from before the field existed loads without network.
  auto old = kai::from_json(nlohmann::json{{"id", 4}, {"kind", "run"}, {"status", "pending"}});
  REQUIRE(old);
  CHECK_FALSE(old->network);
}

TEST_CASE("asking for the network makes a run confirm tier, even under an allow rule", "[run][network]") {
  WsFixture f(
      "[run]\nsandbox = \"none\"\n[[policy.rule]]\naction = \"run\"\ncommand = \"echo\"\ndecision = \"allow\"\n");
  auto plain = kai::propose_run(*f.ws, echo_request(false), f.dir.path(), kai::DryRun::yes, nullptr);
  REQUIRE(plain);
  CHECK(plain->verdict == kai::RunVerdict::allow);  // the twin: the same command without the request
  CHECK_FALSE(plain->proposal.network);

  auto st = kai::propose_run(*f.ws, echo_request(true), f.dir.path(), kai::DryRun::no, nullptr);
  REQUIRE(st);
  CHECK(st->verdict == kai::RunVerdict::confirm);
  CHECK_FALSE(st->ran);
  CHECK(st->proposal.tier == kai::Tier::confirm);
  CHECK_THAT(st->proposal.tier_reason, Contains("asks for network access"));
  auto stored = f.ws->store.load(st->proposal.id);
  REQUIRE(stored);
  CHECK(stored->network);
  CHECK(stored->state == kai::State::pending);
}

TEST_CASE("a command that is already confirm tier keeps its own reason first", "[run][network]") {
  WsFixture f("[run]\nsandbox = \"none\"\n");
  kai::RunRequest r;
  r.shell = "echo x > out.txt";
  r.why = "test";
  r.network = true;
  auto st = kai::propose_run(*f.ws, r, f.dir.path(), kai::DryRun::yes, nullptr);
  REQUIRE(st);
  CHECK(st->verdict == kai::RunVerdict::confirm);
  CHECK_THAT(st->proposal.tier_reason, Contains("out.txt"));
  const auto& reasons = st->classification.reasons;
  CHECK(std::find(reasons.begin(), reasons.end(), std::string(kai::k_network_reason)) != reasons.end());
}
