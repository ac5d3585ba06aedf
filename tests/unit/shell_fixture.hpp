#pragma once
// The classifier tests' fixture (test_shell.cpp, test_shell_families.cpp):
// a fake root at /r, the owner's home at /home/u, a never-write list and a
// secret-file test like the caller's, and the table of rows each test walks.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/shell/shell.hpp"

namespace shell_fixture {

using kai::Classification;
using kai::RunVerdict;

inline std::vector<std::string> components(const std::string& p) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string::npos) slash = p.size();
    if (slash > start) out.push_back(p.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

inline bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

inline kai::Status deny(const std::string& p, const std::string& why) {
  return kai::make_error(kai::Errc::denied, "'" + p + "' " + why);
}

// Root confinement and the never-write list, as the caller provides them.
inline kai::Status check_write(const std::string& p) {
  if (p.empty() || p[0] == '~') return deny(p, "is outside the root");
  std::string rel = p;
  if (p[0] == '/') {
    if (p != "/r" && p.rfind("/r/", 0) != 0) return deny(p, "is outside the root");
    rel = p.size() > 3 ? p.substr(3) : "";
  }
  std::vector<std::string> parts;
  for (const std::string& c : components(rel)) {
    if (c == ".") continue;
    if (c == "..") {
      if (parts.empty()) return deny(p, "is outside the root");
      parts.pop_back();
      continue;
    }
    parts.push_back(c);
  }
  if (parts.empty()) return deny(p, "is the root itself");
  std::string joined;
  for (const std::string& c : parts) joined += (joined.empty() ? "" : "/") + c;
  for (const std::string& c : parts) {
    if (c == ".git" || c == ".kaicoder") return deny(p, "is on the never-write list");
    if (c.find(".bak") != std::string::npos) return deny(p, "is a backup, on the never-write list");
  }
  const std::string& base = parts.back();
  if (base == ".env" || base.rfind(".env.", 0) == 0 || ends_with(base, ".env"))
    return deny(p, "is a secret file, on the never-write list");
  if (joined == "KAI-CODER-CHANGELOG.md" || joined == "kaicoder.toml") return deny(p, "is kaicoder's own file");
  return kai::ok_status();
}

inline bool secret(const std::string& p) {
  std::string base = p.substr(p.rfind('/') + 1);
  return base == ".env" || base.rfind(".env.", 0) == 0 || ends_with(base, ".env") || base.rfind("id_rsa", 0) == 0 ||
         ends_with(base, ".pem") || ends_with(base, ".key");
}

inline kai::ShellContext context() {
  kai::ShellContext ctx;
  ctx.root = "/r";
  ctx.home = "/home/u";
  ctx.check_write_target = check_write;
  ctx.is_secret = secret;
  ctx.extra_blocked = {"terraform destroy*", "docker system prune"};
  ctx.protected_processes = {"postgres", ":5432"};
  return ctx;
}

inline std::string reasons_of(const Classification& c) {
  std::string out;
  for (const std::string& r : c.reasons) out += "\n  " + r;
  return out;
}

inline bool has_reason(const Classification& c, std::string_view part) {
  return std::any_of(c.reasons.begin(), c.reasons.end(),
                     [&](const std::string& r) { return r.find(part) != std::string::npos; });
}

struct Row {
  std::string_view cmd;
  RunVerdict want;
  std::string_view reason = {};  // for blocked rows: part of the reason
};

inline constexpr RunVerdict B = RunVerdict::blocked;
inline constexpr RunVerdict C = RunVerdict::confirm;
inline constexpr RunVerdict A = RunVerdict::ask;

// Every row gets its verdict and, when given, a reason containing `reason`.
template <typename Rows>
void check_rows(const Rows& rows, const kai::ShellContext& ctx) {
  for (const Row& row : rows) {
    Classification c = kai::classify_shell(row.cmd, ctx);
    INFO("command: " << row.cmd << "\nreasons:" << reasons_of(c));
    CHECK(std::string(kai::to_string(c.verdict)) == std::string(kai::to_string(row.want)));
    if (!row.reason.empty()) CHECK(has_reason(c, row.reason));
  }
}

}  // namespace shell_fixture
