// kaicoder list: proposals, pending first. Works whatever state the store is
// in: a corrupt record is listed as such, never a reason to fail. Only reads
// (completion runs it on every TAB): a pending proposal past its timeout is
// shown as expired, and recorded by the next command that proposes or decides.

#include <algorithm>

#include <fmt/format.h>

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/decide.hpp"

namespace kai::cmd {

RunFn setup_list(CLI::App& sub) {
  auto status = std::make_shared<std::string>();
  sub.add_option("--status", *status, "only proposals with this status")
      ->check(CLI::IsMember({"pending", "approved", "applied", "rejected", "timeout", "failed", "rolled-back"}));
  return [status](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (s.agent_side()) return agent_list(s, **ws, *status);
    auto ids = (*ws)->store.ids();
    if (!ids) return report(s, ids.error());
    std::vector<Proposal> rows;
    std::vector<std::pair<int, std::string>> corrupt;
    for (int id : *ids) {
      auto p = (*ws)->store.load(id, Store::Payloads::none);  // a listing never reads payloads
      if (!p) {
        corrupt.emplace_back(id, p.error().message);
        continue;
      }
      // Expired but not recorded yet counts as timeout, not pending.
      std::string shown = past_timeout(**ws, *p) ? "timeout" : std::string(to_string(p->state));
      if (status->empty() || shown == *status) rows.push_back(std::move(*p));
    }
    // Pending first (oldest first: they expire first), then the rest newest first.
    std::stable_sort(rows.begin(), rows.end(), [](const Proposal& x, const Proposal& y) {
      bool px = x.state == State::pending, py = y.state == State::pending;
      if (px != py) return px;
      return px ? x.id < y.id : x.id > y.id;
    });
    if (s.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& p : rows) {
        arr.push_back(proposal_json(p));
        if (past_timeout(**ws, p)) arr.back()["expired"] = true;
      }
      nlohmann::json bad = nlohmann::json::array();
      for (const auto& [id, why] : corrupt) bad.push_back({{"id", id}, {"error", why}});
      print_json({{"proposals", arr}, {"corrupt", bad}});
      return k_exit_ok;
    }
    if (rows.empty() && corrupt.empty()) {
      out("no proposals{}\n", status->empty() ? "" : " with status " + *status);
      return k_exit_ok;
    }
    bool any_expired = false;
    for (const auto& p : rows) {
      bool late = past_timeout(**ws, p);
      any_expired |= late;
      out("{:>4}  {:<11}  {:<6}  {:<6}  {:<30}  {}\n", p.id, late ? "expired*" : to_string(p.state),
          to_string(p.kind), p.kind == Kind::run ? std::string_view("-") : to_string(p.risk), p.path, p.summary);
    }
    for (const auto& [id, why] : corrupt) out("{:>4}  {:<11}  {}\n", id, "corrupt", why);
    if (any_expired)
      out("* expired: past [approval] timeout, not recorded yet (the next propose or decision records it)\n");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
