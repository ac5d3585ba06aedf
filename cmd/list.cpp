// kaicoder list: proposals, pending first. Works whatever state the store is
// in: a corrupt record is listed as such, never a reason to fail. Only reads
// (completion runs it on every TAB): a pending proposal past its timeout is
// shown as expired, and recorded by the next command that proposes or decides.

#include <fmt/format.h>

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/status.hpp"

namespace kai::cmd {

RunFn setup_list(CLI::App& sub) {
  auto status = std::make_shared<std::string>();
  sub.add_option("--status", *status, "only proposals with this status")
      ->check(CLI::IsMember({"pending", "approved", "applied", "rejected", "timeout", "failed", "rolled-back", "held"}));
  return [status](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    if (s.agent_side()) return agent_list(s, **ws, *status);
    // A row shows a few fields: archived proposals are read from their
    // buckets' sealed listings. --json gives every field of every record.
    auto listing = list_proposals(**ws, *status, s.json() ? Store::Detail::records : Store::Detail::listed);
    if (!listing) return report(s, listing.error());
    const std::vector<Proposal>& rows = listing->proposals;
    const auto& corrupt = listing->corrupt;
    if (!listing->unlisted.empty())
      err("kaicoder: note: {} archived proposals (from {}) were not read from their archive listing: it is missing "
          "or does not verify\nhint: kaicoder doctor makes the listing again from the records\n",
          listing->unlisted.size(), listing->unlisted.front());
    if (!listing->from_records.empty())
      err("kaicoder: note: {} archived proposals (from {}) were read from their records: their archive summary "
          "is missing or does not verify\nhint: kaicoder doctor makes the summary again from the records\n",
          listing->from_records.size(), listing->from_records.front());
    if (s.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& p : rows) {
        arr.push_back(proposal_json(p));
        if (past_timeout(**ws, p)) arr.back()["expired"] = true;
      }
      nlohmann::json bad = nlohmann::json::array();
      for (const auto& [id, why] : corrupt) bad.push_back({{"id", id}, {"error", why}});
      return emit(s, {{"proposals", arr}, {"corrupt", bad}});
    }
    if (rows.empty() && corrupt.empty()) {
      out("no proposals{}\n", status->empty() ? "" : " with status " + *status);
      return k_exit_ok;
    }
    bool any_expired = false;
    print_list_header();
    // The rows in one text, redacted and written once, not row by row.
    std::string text;
    for (const auto& p : rows) {
      bool late = past_timeout(**ws, p);
      any_expired |= late;
      text += list_row(p, late ? "expired*" : to_string(p.state));
    }
    write_text(text);
    for (const auto& [id, why] : corrupt) out("{:>4}  {:<11}  {}\n", id, "corrupt", why);
    if (any_expired)
      out("* expired: past [approval] timeout, not recorded yet (the next propose or decision records it)\n");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
