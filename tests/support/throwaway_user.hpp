#pragma once
// Removing a throwaway Unix user a test made. userdel refuses a user who
// still has a process (a tmux server on its way out, a late child), and a
// user left behind takes its name from a later case: every process of the
// user is killed first, and userdel is tried again for up to two seconds.

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

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

}  // namespace kai::test
