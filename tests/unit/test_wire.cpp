// Writing an integration: one transaction for every file, inside root or
// (--user) in the owner's home, where lib/gate/txn accepts only the harnesses'
// user settings files by name.

#include "unit/temp_dir.hpp"

#include <fstream>

#include "lib/gate/apply.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/gate.hpp"
#include "lib/harness/integrate.hpp"
#include "lib/harness/wire.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/fs.hpp"
#include "unit/trusted_root.hpp"

namespace {
using kai::test::TempDir;
namespace h = kai::harness;

struct WireFixture {
  TempDir dir, home;
  kai::Clock clock;
  std::optional<kai::Workspace> ws;

  explicit WireFixture(const std::string& config = "") {
    if (!config.empty()) std::ofstream(dir.path() / "kaicoder.toml") << config;
    kai::Env env;
    env.cwd = dir.path();
    env.root_override = dir.path();
    env.user_config_dir = dir.path() / ".no-user-config";
    env.home = home.path();
    kai::test::trust_for_test(dir.path(), env.user_config_dir);
    env.user = "tester";
    REQUIRE(kai::create_key(env.user_config_dir));
    auto w = kai::Workspace::open(env, clock);
    REQUIRE(w);
    ws.emplace(std::move(*w));
  }
  std::string read_home(const std::string& rel) const {
    auto b = kai::read_file(home.path() / rel);
    return b ? *b : std::string("<missing>");
  }
};

}  // namespace

TEST_CASE("only the harnesses' user settings files may be written in the owner's home", "[integrate][txn]") {
  for (const char* ok :
       {"~/.claude.json", "~/.claude/settings.json", "~/.codex/config.toml", "~/.codex/hooks.json",
        "~/.gemini/settings.json", "~/.cursor/mcp.json", "~/.cursor/hooks.json", "~/.claude", "~/.gemini"})
    CHECK(kai::txn::user_settings_file(ok));
  for (const char* no :
       {"~/", "~", "~/.bashrc", "~/.claude/other.json", "~/.claude/../.bashrc", "~/.ssh/authorized_keys",
        ".claude.json", "~/.claude.json.bak-kaicoder-20260709T141530Z", "~/.cla", "~/.claude/"})
    CHECK_FALSE(kai::txn::user_settings_file(no));
  WireFixture f;
  auto bad = kai::txn::open_target(*f.ws, "~/.bashrc", kai::CreateDirs::no);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == kai::Errc::denied);
  f.ws->home.clear();
  auto nohome = kai::txn::open_target(*f.ws, "~/.claude.json", kai::CreateDirs::no);
  REQUIRE_FALSE(nohome);
  CHECK(nohome.error().code == kai::Errc::denied);
}

TEST_CASE("every user-scope plan names only files lib/gate/txn accepts in the home", "[integrate][txn]") {
  WireFixture f;
  for (auto harness : {h::Harness::claude_code, h::Harness::codex, h::Harness::gemini, h::Harness::cursor}) {
    INFO(h::harness_name(harness));
    auto plan = h::plan_integration(*f.ws, harness, h::Scope::user, f.home.path());
    REQUIRE(plan);
    REQUIRE_FALSE(plan->files.empty());
    for (const auto& file : plan->files) {
      CHECK(file.user);
      CHECK(kai::txn::user_settings_file(file.rel));
      CHECK(kai::txn::abs_path(*f.ws, file.rel) == file.abs);
    }
  }
}

TEST_CASE("a user-level integration is one journal record, and its rollback restores every file", "[integrate][txn]") {
  WireFixture f;
  std::filesystem::create_directories(f.home.path() / ".claude");
  const std::string state = "{\n  \"numStartups\": 3,\n  \"projects\": {}\n}\n";
  std::ofstream(f.home.path() / ".claude.json") << state;
  auto plan = h::plan_integration(*f.ws, h::Harness::claude_code, h::Scope::user, f.home.path());
  REQUIRE(plan);
  auto w = h::write_plan(*f.ws, *plan, kai::Decider("tester"));
  REQUIRE(w);
  CHECK(w->proposal == 0);
  REQUIRE(w->files.size() == 2);
  CHECK(w->files[0].backup == (f.home.path() / (".claude.json.bak-kaicoder-" + w->rollback_id)).string());
  CHECK(w->files[1].backup.empty());  // settings.json was new
  auto rec = f.ws->journal.load(w->rollback_id);
  REQUIRE(rec);
  REQUIRE(rec->files.size() == 2);
  CHECK(rec->files[0].rel == "~/.claude.json");
  CHECK(rec->files[1].rel == "~/.claude/settings.json");
  CHECK(f.read_home(".claude.json").find("\"kaicoder\"") != std::string::npos);
  auto again = h::plan_integration(*f.ws, h::Harness::claude_code, h::Scope::user, f.home.path());
  REQUIRE(again);
  CHECK(again->wired());
  auto o = kai::rollback(*f.ws, w->rollback_id, kai::Decider("tester"), kai::Force::no);
  REQUIRE(o);
  CHECK(f.read_home(".claude.json") == state);
  CHECK(f.read_home(".claude/settings.json") == "<missing>");
}

TEST_CASE("a rollback outside root is asked at a terminal whatever the policy allows, and never from the review page",
          "[integrate][txn][gate]") {
  WireFixture f("[policy.default]\nrollback = \"allow\"\n");
  auto user = h::plan_integration(*f.ws, h::Harness::gemini, h::Scope::user, f.home.path());
  REQUIRE(user);
  auto wu = h::write_plan(*f.ws, *user, kai::Decider("tester"));
  REQUIRE(wu);
  auto project = h::plan_integration(*f.ws, h::Harness::gemini, h::Scope::project, f.home.path());
  REQUIRE(project);
  auto wp = h::write_plan(*f.ws, *project, kai::Decider("tester"));
  REQUIRE(wp);
  CHECK(wp->proposal == 1);
  // Inside root the policy's allow holds: no question.
  auto inside = kai::gate::prepare_rollback(*f.ws, wp->rollback_id, kai::Decider("tester"), kai::Force::no);
  REQUIRE(inside);
  CHECK(inside->decision == kai::Decision::allow);
  // Outside root: asked, at a terminal only.
  auto outside = kai::gate::prepare_rollback(*f.ws, wu->rollback_id, kai::Decider("tester"), kai::Force::no);
  REQUIRE(outside);
  CHECK(outside->decision == kai::Decision::ask);
  auto web =
      kai::gate::prepare_rollback(*f.ws, wu->rollback_id, kai::Decider("tester", kai::Channel::web), kai::Force::no);
  REQUIRE_FALSE(web);
  CHECK(web.error().code == kai::Errc::denied);
  // A door that skips the question gets no further: the answer is checked again.
  kai::gate::Request req;
  req.who = kai::Decider("tester");
  auto unanswered = kai::gate::rollback(*f.ws, *outside, req);
  REQUIRE_FALSE(unanswered);
  CHECK(f.read_home(".gemini/settings.json").find("kaicoder") != std::string::npos);
  req.answer = kai::gate::Answer::yes;
  REQUIRE(kai::gate::rollback(*f.ws, *outside, req));
  CHECK(f.read_home(".gemini/settings.json") == "<missing>");
}
