#pragma once
// Removing a throwaway Unix user a test made. userdel refuses a user who
// still has a process (a tmux server on its way out, a late child), and a
// user left behind takes its name from a later case: every process of the
// user is killed first, and userdel is tried again for up to two seconds.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/repo.hpp"

namespace kai::test {

// `userdel_args` goes before the name ("-r" to remove the home too).
inline void remove_user(const std::string& name, const std::string& userdel_args = "") {
  const std::string kill = "pkill -KILL -u " + name + " >/dev/null 2>&1";
  const std::string del = "userdel " + userdel_args + " " + name + " >/dev/null 2>&1";
  for (int i = 0; i < 20; ++i) {
    (void)!std::system(kill.c_str());
    if (std::system(del.c_str()) == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// A throwaway user, for the cases that run kaicoder as an unprivileged user
// (root is needed to make one). Its home in the password database is the
// case's home, so the root trusted there and its key are that user's own;
// it owns the case's folder, and is removed at the end. Cases that make one
// are tagged [users]: ctest runs them one at a time (tests/CMakeLists.txt).
struct UnprivilegedUser {
  std::string name;
  std::filesystem::path home;
  bool made = false;

  static bool available() {
    if (::geteuid() == 0 && std::system("command -v setpriv useradd userdel >/dev/null 2>&1") == 0) return true;
    WARN("SKIPPED: needs root, setpriv, useradd and userdel to become a throwaway user");
    return false;
  }
  explicit UnprivilegedUser(const TempRepo& repo)
      : name("kaisbx" + std::to_string(::getpid() % 100000)), home(repo.home()) {
    REQUIRE(std::system(("useradd -M -N -d '" + home.string() + "' -s /bin/sh " + name).c_str()) == 0);
    made = true;
    REQUIRE(std::system(("chown -R " + name + " '" + repo.path().parent_path().string() + "'").c_str()) == 0);
  }
  UnprivilegedUser(const UnprivilegedUser&) = delete;
  UnprivilegedUser& operator=(const UnprivilegedUser&) = delete;
  ~UnprivilegedUser() {
    if (made) remove_user(name);
  }
  // argv that runs `argv` as this user, no groups, with a minimal environment.
  std::vector<std::string> as(const std::vector<std::string>& argv) const {
    std::vector<std::string> out = {"setpriv",
                                    "--reuid=" + name,
                                    "--regid=nogroup",
                                    "--clear-groups",
                                    "env",
                                    "-i",
                                    "HOME=" + home.string(),
                                    "PATH=/usr/local/bin:/usr/bin:/bin",
                                    "TERM=xterm"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }
  // The same as a shell command line (the words single-quoted).
  std::string shell(const std::vector<std::string>& argv) const {
    std::string cmd;
    for (const auto& w : as(argv)) cmd += (cmd.empty() ? "'" : " '") + w + "'";
    return cmd;
  }
};

}  // namespace kai::test
