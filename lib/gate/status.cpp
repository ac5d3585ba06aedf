#include "lib/gate/status.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "lib/gate/decide.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

Standing standing(const Proposal& p) {
  switch (p.state) {
    case State::pending:
    case State::held: return Standing::pending;
    case State::approved: return Standing::approved;
    case State::applied:
    case State::rejected:
    case State::timeout:
    case State::failed:
    case State::rolled_back: return Standing::settled;
  }
  return Standing::settled;
}

bool still_open(const Proposal& p) {
  return p.state == State::pending || p.state == State::approved || p.state == State::failed ||
         p.state == State::held;
}

Status names_file(const Proposal& p, const std::string& file) {
  if (file.empty() || file == p.path ||
      std::any_of(p.changes.begin(), p.changes.end(), [&](const Change& c) { return c.path == file || c.to == file; }))
    return ok_status();
  return make_error(Errc::not_found, fmt::format("proposal {} changes '{}', not '{}'", p.id, p.path, file));
}

std::string shown_state(const Workspace& ws, const Proposal& p) {
  return past_timeout(ws, p) ? "timeout" : std::string(to_string(p.state));
}

Result<Listing> list_proposals(const Workspace& ws, const std::string& status, Store::Detail detail) {
  Listing out;
  std::vector<Proposal> found;  // ascending id
  // What is pending or approved is the live set: read from the live index,
  // not from every proposal ever made.
  if (status == "pending" || status == "approved") {
    auto set = ws.store.live();
    if (!set) return set.error();
    out.corrupt = std::move(set->corrupt);
    found = std::move(set->proposals);
  } else {
    // Everything else: staging/ from its records, the archive from its
    // buckets' listings or summaries (Store::catalog), never every record.
    auto all = ws.store.catalog(detail);
    if (!all) return all.error();
    out.corrupt = std::move(all->corrupt);
    out.from_records = std::move(all->from_records);
    out.unlisted = std::move(all->unlisted);
    found = std::move(all->proposals);
  }
  // Pending first, oldest first (they expire first), then the rest newest
  // first. Reordered where they are, from the ascending ids: a second vector
  // of whole records (and a sort of them) costs more than the listing itself.
  auto pending = [](const Proposal& p) { return p.state == State::pending || p.state == State::held; };
  if (!status.empty())
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const Proposal& p) { return shown_state(ws, p) != status; }),
                found.end());
  std::vector<Proposal> first;  // the pending ones: few
  for (auto& p : found)
    if (pending(p)) first.push_back(std::move(p));
  if (!first.empty()) found.erase(std::remove_if(found.begin(), found.end(), pending), found.end());
  std::reverse(found.begin(), found.end());
  found.insert(found.begin(), std::make_move_iterator(first.begin()), std::make_move_iterator(first.end()));
  out.proposals = std::move(found);
  return out;
}

std::optional<Error> outcome_error(const Proposal& p) {
  const std::string why = p.result.empty() ? "" : ": " + p.result;
  switch (p.state) {
    case State::applied:
    case State::approved:
    case State::rolled_back: return std::nullopt;
    case State::rejected:
      return make_error(Errc::rejected, fmt::format("proposal {} was rejected by {}{}", p.id, p.decided_by, why),
                        "nothing was written; read the reason, change the proposal and propose again");
    case State::timeout:
      return make_error(Errc::timeout, fmt::format("proposal {} expired before a person decided", p.id),
                        "nothing was written; propose it again when someone can approve it");
    case State::failed: {
      const Errc code = p.outcome_code >= 1 && p.outcome_code <= 8 ? static_cast<Errc>(p.outcome_code) : Errc::io;
      return make_error(code, fmt::format("proposal {} failed{}", p.id, why),
                        code == Errc::conflict
                            ? "the file changed since it was proposed; read it again and propose anew"
                            : "nothing was written; see kaicoder show " + std::to_string(p.id));
    }
    case State::pending:
      return make_error(Errc::pending, fmt::format("proposal {} is still waiting for a person", p.id),
                        fmt::format("a person decides with kaicoder approve {}; wait for it again", p.id));
    case State::held:
      return make_error(Errc::pending,
                        fmt::format("proposal {} ran; some of its effects are held for a person to CONFIRM", p.id),
                        fmt::format("a person decides with kaicoder approve {}; wait for it again", p.id));
  }
  return std::nullopt;
}

}  // namespace kai
