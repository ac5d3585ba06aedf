// The review page in a real browser: headless Chromium (Debian's package)
// driven by playwright-core (tests/browser/review.cjs) signs in with the
// address `kaicoder serve` wrote on its terminal, checks labels and focus
// order at 1280 px and the list's and file table's column labels at 390 px,
// approves one proposal (its "always allow" offered) and rejects another,
// sees a confirm-tier run without the offer, approves a short changeset
// (every diff open, Approve enabled at once) and a long one (Approve
// disabled until each file's diff was opened, or CONFIRM typed); the tree
// shows it. Screenshots at both widths land in <build>/tests/artifacts/.
// scripts/browser-deps.sh installs Chromium and playwright-core (the test
// command runs it); without them this case says so and is skipped.

#include <filesystem>

#include "tests/support/checks.hpp"
#include "tests/support/serve.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

bool have_browser() {
  const fs::path modules = fs::path(KAICODER_BROWSER_DIR) / "node_modules" / "playwright-core";
  for (const fs::path& need : {fs::path("/usr/bin/chromium"), fs::path("/usr/bin/node"), modules})
    if (!fs::exists(need)) {
      WARN("SKIPPED: " << need.string() << " is missing; scripts/browser-deps.sh installs it");
      return false;
    }
  return true;
}

}  // namespace

TEST_CASE(
    "browser: sign in, list, open, approve and reject, and approve a changeset in headless Chromium, and labels and "
    "focus order hold",
    "[e2e][serve][web][browser]") {
  if (!have_browser()) return;
  TempRepo repo{{"a.txt", "old\n"}, {"x.txt", "one\n"}, {"y.txt", "moved\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "a second file"}, "b\n"), 0);
  const std::string patch =
      "*** Begin Patch\n*** Update File: x.txt\n@@\n-one\n+ONE\n"
      "*** Update File: y.txt\n*** Move to: z.txt\n*** Add File: w.txt\n+fresh\n*** End Patch\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "three files"}, patch), 0);
  // 4: a run that asks for the network, the confirm tier: "always allow" is never offered.
  KAI_REQUIRE_EXIT(repo.kai({"run", "--network", "--why", "fetch", "--", "true"}), 0);
  // 5: a changeset longer than the page opens at once (two files of 60 lines).
  std::string long_patch = "*** Begin Patch\n";
  for (const char* name : {"l1.txt", "l2.txt"}) {
    long_patch += std::string("*** Add File: ") + name + "\n";
    for (int i = 0; i < 60; ++i) long_patch += "+" + std::string(name) + " line " + std::to_string(i) + "\n";
  }
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "two long files"}, long_patch + "*** End Patch\n"), 0);
  ServePage page(repo);
  const fs::path artifacts = fs::path(KAICODER_ARTIFACTS_DIR);
  fs::create_directories(artifacts);
  const auto shots = {
      "list.png",      "list-phone.png",      "proposal.png",       "proposal-phone.png",      "run-confirm.png",
      "changeset.png", "changeset-phone.png", "changeset-long.png", "changeset-long-phone.png"};
  for (const char* shot : shots) fs::remove(artifacts / shot);

  Process node =
      repo.spawn({"/usr/bin/node", std::string(KAICODER_SOURCE_DIR) + "/tests/browser/review.cjs"}, "",
                 {{"NODE_PATH", std::string(KAICODER_BROWSER_DIR) + "/node_modules"},
                  {"KAI_URL", "http://127.0.0.1:" + std::to_string(page.port) + "/login?token=" + page.token},
                  {"KAI_BIN", kaicoder_bin()},
                  {"KAI_ARTIFACTS", artifacts.string()}});
  Run r = node.finish(std::chrono::seconds(120));
  INFO(r.all());
  KAI_CHECK_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("\"ok\":true") && Contains("\"live_update\":true"));
  CHECK(repo.read("a.txt") == "new\n");
  CHECK_FALSE(repo.exists("b.txt"));
  CHECK(show_json(repo, 1).at("decided_by") == current_user() + " (web)");
  CHECK(show_json(repo, 2).at("status") == "rejected");
  CHECK(show_json(repo, 2).at("reason") == "not this one");
  CHECK(repo.read("x.txt") == "ONE\n");
  CHECK(repo.read("z.txt") == "moved\n");
  CHECK(repo.read("w.txt") == "fresh\n");
  CHECK_FALSE(repo.exists("y.txt"));
  CHECK(show_json(repo, 3).at("status") == "applied");
  CHECK(show_json(repo, 3).at("decided_by") == current_user() + " (web)");
  CHECK(show_json(repo, 4).at("status") == "pending");
  CHECK(show_json(repo, 5).at("status") == "applied");
  CHECK(repo.exists("l1.txt"));
  CHECK(repo.exists("l2.txt"));
  for (const char* shot : shots) {
    CHECK(fs::exists(artifacts / shot));
    if (fs::exists(artifacts / shot)) CHECK(fs::file_size(artifacts / shot) > 1000);
  }
  KAI_CHECK_EXIT(page.stop(), 0);
}
