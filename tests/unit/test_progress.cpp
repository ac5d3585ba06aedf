#include <catch2/catch.hpp>

#include "lib/diff/diff.hpp"
#include "lib/util/progress.hpp"

using namespace kai;
using namespace std::chrono_literals;

TEST_CASE("progress is not drawn for short work, then at most once per interval", "[progress]") {
  const ProgressThrottle::TimePoint t0{};
  ProgressThrottle th(t0, 250ms, 100ms);
  CHECK_FALSE(th.due(t0));
  CHECK_FALSE(th.due(t0 + 249ms));
  CHECK(th.due(t0 + 250ms));
  CHECK_FALSE(th.due(t0 + 300ms));
  CHECK_FALSE(th.due(t0 + 349ms));
  CHECK(th.due(t0 + 350ms));
  // After a long gap the next slot counts from the update, not from the start.
  CHECK(th.due(t0 + 2s));
  CHECK_FALSE(th.due(t0 + 2s + 50ms));
  CHECK(th.due(t0 + 2s + 100ms));
}

TEST_CASE("progress text shows done of total with a percentage, or a count when the total is not known", "[progress]") {
  CHECK(progress_text("checking backups", 120, 400, 80) == "checking backups  120/400 (30%)");
  CHECK(progress_text("checking backups", 400, 400, 80) == "checking backups  400/400 (100%)");
  CHECK(progress_text("looking for files", 2048, 0, 80) == "looking for files  2048");
  CHECK(progress_text("checking backups", 1, 3, 10) == "checking b");
  CHECK(progress_text("x", 5, 3, 80) == "x  5/3 (100%)");
}

TEST_CASE("highlighting a diff reports its lines as progress and ends with a done call", "[progress][diff]") {
  std::string text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n-three\n+THREE\n";
  std::vector<std::pair<size_t, size_t>> calls;
  bool ended = false;
  std::string colored = colorize_diff(text, [&](std::string_view what, size_t done, size_t total) {
    if (what.empty())
      ended = true;
    else
      calls.emplace_back(done, total);
  });
  CHECK(ended);
  REQUIRE_FALSE(calls.empty());
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].second == 9);
    CHECK(calls[i].first < 9);
    if (i) CHECK(calls[i].first > calls[i - 1].first);
  }
  CHECK(colored == colorize_diff(text));  // the callback changes nothing
}
