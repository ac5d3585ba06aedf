// kaicoder fetch: team mode (kaicoder-team(7)). The [team] remote's
// refs/kaicoder/* brought here and checked: the other clones' proposals get
// local ids, decisions update them, and decisions on this clone's own
// proposals are carried out; --prune drops the refs of settled proposals.

#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/team/team.hpp"

namespace kai::cmd {

RunFn setup_fetch(CLI::App& sub) {
  auto prune = std::make_shared<bool>(false);
  sub.add_flag("--prune", *prune,
               "also drop the refs of proposals rejected or expired longer than [team] keep ago (never a decision "
               "whose proposal is in the history)");
  return [prune](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    auto r = team::fetch(**ws, team::FetchOptions{*prune});
    if (!r) return report(s, r.error());
    if (s.json()) {
      nlohmann::json received = nlohmann::json::array();
      for (const auto& x : r->received)
        received.push_back({{"proposal", proposal_json(x.proposal)}, {"forwarded", x.forwarded}, {"note", x.note}});
      return emit(s, {{"added", r->added},
                      {"decided", r->decided},
                      {"received", received},
                      {"refused", r->refused},
                      {"pruned", r->pruned},
                      {"pushed", r->pushed}});
    }
    for (int id : r->added) {
      auto p = (*ws)->store.load(id, Store::Payloads::none);
      if (p)
        out("new team proposal {}: {} ({} file(s)) from clone {}, agent {}\n", id, p->path, p->changes.size(),
            p->team.origin, p->agent.empty() ? "-" : p->agent);
    }
    for (int id : r->decided) out("team proposal {} was decided from another clone\n", id);
    for (const auto& x : r->received) print_received(x);
    for (int id : r->pushed) out("pushed the decision on proposal {}\n", id);
    for (const auto& p : r->pruned) out("pruned {}\n", p);
    for (const auto& why : r->refused) err("kaicoder: refused {}\n", why);
    if (r->added.empty() && r->decided.empty() && r->received.empty() && r->pruned.empty() && r->pushed.empty())
      out("nothing new from the team remote\n");
    else if (!r->added.empty())
      out("review with: kaicoder show ID, then kaicoder approve ID (or kaicoder reject ID)\n");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
