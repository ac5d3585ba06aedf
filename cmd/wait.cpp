// kaicoder wait: block until a proposal is decided (and carried out), as
// propose --wait and run --wait do; how a killed waiter resumes.

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/render.hpp"

namespace kai::cmd {

RunFn setup_wait(CLI::App& sub) {
  struct Args {
    std::string id;
    std::optional<long> timeout;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("id", a->id, "proposal (or ticket, in two-user mode) to wait for")->required();
  sub.add_option("--timeout", a->timeout, "give up after this many seconds and exit 8 if it is still undecided")
      ->check(whole_number(0, 7 * 24 * 3600));
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    std::optional<std::chrono::seconds> within;
    if (a->timeout) within = std::chrono::seconds(*a->timeout);
    if (s.agent_side()) return agent_wait(s, **ws, a->id, within);
    auto id = resolve_id(**ws, a->id);
    if (!id) return report(s, id.error());
    return wait_and_report(s, **ws, *id, within);
  };
}

}  // namespace kai::cmd
