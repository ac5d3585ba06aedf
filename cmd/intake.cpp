// kaicoder intake: take the spool in (two-user mode), once or as entries
// arrive, so that allow rules and notifications act at once.

#include <chrono>
#include <csignal>
#include <thread>

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "lib/run/hooks.hpp"

namespace kai::cmd {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

void render(Session& s, const IntakeReport& r, bool always) {
  if (s.json()) {
    if (!always && r.taken.empty() && r.quarantined.empty()) return;
    emit(s, intake_json(r));
  } else {
    print_intake(r);
  }
  std::fflush(stdout);
}

}  // namespace

RunFn setup_intake(CLI::App& sub) {
  struct Args {
    bool watch = false;
    long interval = 1;
  };
  auto a = std::make_shared<Args>();
  sub.add_flag("--watch", a->watch, "keep taking entries in as they arrive, until interrupted");
  sub.add_option("--interval", a->interval, "seconds between looks at the spool with --watch (default 1)")
      ->check(whole_number(1, 3600));
  return [a](Session& s) {
    auto ws = s.workspace();  // takes in what is waiting (Session)
    if (!ws) return report(s, ws.error());
    if (!two_user(**ws))
      return report(s, make_error(Errc::usage, "two-user mode is off here: [two_user] agent is not set",
                                  "set it up with: sudo kaicoder agent-user setup NAME (kaicoder-agent-user(1))"));
    render(s, s.taken_in(), !a->watch);
    if (!a->watch) return k_exit_ok;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    while (!g_stop) {
      for (long i = 0; i < a->interval * 10 && !g_stop; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (g_stop) break;
      auto r = intake(**ws);
      if (!r) {
        report(s, r.error());
        continue;
      }
      render(s, *r, false);
      flush_notify(**ws);  // no lock is held between rounds
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
