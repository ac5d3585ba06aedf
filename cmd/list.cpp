// kaicoder list: proposals, pending first. Works whatever state the store is
// in: a corrupt record is listed as such, never a reason to fail.

#include <algorithm>

#include <fmt/format.h>

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
    (void)try_sweep(**ws);  // best effort: a read never fails on a busy or broken store
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
      if (status->empty() || to_string(p->state) == *status) rows.push_back(std::move(*p));
    }
    // Pending first (oldest first: they expire first), then the rest newest first.
    std::stable_sort(rows.begin(), rows.end(), [](const Proposal& x, const Proposal& y) {
      bool px = x.state == State::pending, py = y.state == State::pending;
      if (px != py) return px;
      return px ? x.id < y.id : x.id > y.id;
    });
    if (s.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& p : rows) arr.push_back(proposal_json(p));
      nlohmann::json bad = nlohmann::json::array();
      for (const auto& [id, why] : corrupt) bad.push_back({{"id", id}, {"error", why}});
      print_json({{"proposals", arr}, {"corrupt", bad}});
      return k_exit_ok;
    }
    if (rows.empty() && corrupt.empty()) {
      out("no proposals{}\n", status->empty() ? "" : " with status " + *status);
      return k_exit_ok;
    }
    for (const auto& p : rows)
      out("{:>4}  {:<11}  {:<6}  {:<6}  {:<30}  {}\n", p.id, to_string(p.state), to_string(p.kind),
          p.kind == Kind::run ? "-" : p.risk, p.path, p.summary);
    for (const auto& [id, why] : corrupt) out("{:>4}  {:<11}  {}\n", id, "corrupt", why);
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
