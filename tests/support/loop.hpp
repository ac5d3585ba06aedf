#pragma once
// The steps of the core loop that end-to-end cases share: wait until a
// background proposer has staged its proposal, approve at a terminal and
// read back the rollback id, find an entry in the changelog.

#include <chrono>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/checks.hpp"

namespace kai::test {

// 20260709T142530Z[-N] → 2026-07-09T14:25:30Z
inline std::string iso_of(const std::string& id) {
  return id.substr(0, 4) + "-" + id.substr(4, 2) + "-" + id.substr(6, 2) + "T" + id.substr(9, 2) + ":" +
         id.substr(11, 2) + ":" + id.substr(13, 2) + "Z";
}

inline bool is_rollback_id(const std::string& id) {
  static const std::regex shape(R"(\d{8}T\d{6}Z(-\d+)?)");
  return std::regex_match(id, shape);
}

// The lines of the changelog entry whose heading names `id`.
inline std::vector<std::string> entry_lines(const TempRepo& repo, const std::string& id) {
  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].starts_with("## ") && lines[i].ends_with("rollback-id: " + id))
      return {lines.begin() + static_cast<long>(i), lines.begin() + static_cast<long>(std::min(lines.size(), i + 10))};
  return {};
}

// The rollback id an approve or apply printed, empty when none.
inline std::string applied_id(const Run& r) {
  std::smatch m;
  static const std::regex id_re(R"(rollback-id: (\d{8}T\d{6}Z(?:-\d+)?))");
  return std::regex_search(r.out, m, id_re) ? m[1].str() : std::string{};
}

// Approve proposal `id` at a terminal (answering y); returns its rollback id.
inline std::string approve(const TempRepo& repo, int id) {
  Run a = repo.kai_tty({"approve", std::to_string(id)}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  std::string rid = applied_id(a);
  REQUIRE(is_rollback_id(rid));
  return rid;
}

// Wait (up to `limit`) until proposal `id` is staged by a proposer running
// in the background; false when it never is.
inline bool staged(const TempRepo& repo, int id, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  const std::string meta = ".kaicoder/staging/" + std::to_string(id) + "/meta.json";
  while (!repo.exists(meta)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return true;
}

}  // namespace kai::test
