#pragma once
// What the two-user end-to-end cases share (tests/e2e/attacks/two_user*.cpp):
// a throwaway agent user made by `kaicoder agent-user setup` and removed
// after the case, and kaicoder or a shell run as that user with setpriv.
// Making users takes root, which CI has; elsewhere each case says why it is
// skipped (KAI_NEED_USERS) and passes.

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "tests/support/checks.hpp"
#include "tests/support/throwaway_user.hpp"

namespace kai::test::two_user {
using json = nlohmann::json;
namespace fs = std::filesystem;

inline bool can_make_users() {
  return ::geteuid() == 0 && ::access("/usr/sbin/useradd", X_OK) == 0 && ::access("/usr/sbin/userdel", X_OK) == 0 &&
         ::access("/usr/bin/setpriv", X_OK) == 0;
}

#define KAI_NEED_USERS()                                                                              \
  do {                                                                                                \
    if (!can_make_users()) {                                                                          \
      WARN("skipped: two-user cases create a throwaway user, which needs root, useradd and setpriv"); \
      return;                                                                                         \
    }                                                                                                 \
  } while (0)

// A user name nobody has; the account (made by setup) is removed at the end.
struct ThrowawayUser {
  std::string name;
  ThrowawayUser() {
    std::random_device rd;
    name = "kaitest" + std::to_string(rd() % 1000000);
  }
  ~ThrowawayUser() {
    remove_user(name, "-r");
    (void)!std::system(("groupdel " + name + " >/dev/null 2>&1").c_str());
  }
  uid_t uid() const {
    const passwd* pw = ::getpwnam(name.c_str());
    return pw ? pw->pw_uid : static_cast<uid_t>(-1);
  }
};

// A trusted root with two-user mode set up for `agent` by the owner (root here).
inline void set_up(TempRepo& repo, const ThrowawayUser& agent) {
  repo.init();
  // The case's folder is made private by mkdtemp; the agent must reach the repo.
  fs::permissions(repo.path().parent_path(), fs::perms(0755));
  Run s = repo.kai({"agent-user", "setup", agent.name});
  KAI_REQUIRE_EXIT(s, 0);
  REQUIRE(agent.uid() != static_cast<uid_t>(-1));
}

inline std::vector<std::string> as_user(const ThrowawayUser& u, std::vector<std::string> argv) {
  std::vector<std::string> all{"setpriv", "--reuid=" + u.name, "--regid=" + u.name, "--init-groups"};
  all.insert(all.end(), argv.begin(), argv.end());
  return all;
}

// kaicoder run as the agent user, with no terminal.
inline Run agent_kai(const TempRepo& repo, const ThrowawayUser& u, std::vector<std::string> args,
                     const std::string& in = "") {
  args.insert(args.begin(), kaicoder_bin());
  return repo.spawn(as_user(u, args), in).finish();
}

// A shell command run as the agent user.
inline Run agent_sh(const TempRepo& repo, const ThrowawayUser& u, const std::string& script) {
  return repo.spawn(as_user(u, {"/bin/sh", "-c", script})).finish();
}

inline std::string spooled_ticket(const Run& r) {
  json j = json::parse(json_text(r.out));
  REQUIRE(j.value("spooled", false));
  return j.at("ticket").get<std::string>();
}

inline std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kai::test::two_user
