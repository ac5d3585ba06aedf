// kaicoder publish: team mode (kaicoder-team(7)). A pending proposal
// becomes a commit on its base, pushed to the [team] remote for a person to
// decide from their own clone; for a decided proposal of another clone,
// our signed decision is pushed again.

#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

RunFn setup_publish(CLI::App& sub) {
  auto id = std::make_shared<std::string>();
  sub.add_option("id", *id, "pending proposal to publish (or a decided team proposal whose decision to push again)")
      ->required();
  return [id](Session& s) {
    auto n = read_proposal_id(*id);
    if (!n) return report(s, n.error());
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    auto r = team::publish(**ws, *n);
    if (!r) return report(s, r.error());
    if (s.json()) {
      nlohmann::json j = with_proposal(r->proposal);
      j["published"] = team::published_object(*r);
      return emit(s, std::move(j));
    }
    print_published(*r);
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
