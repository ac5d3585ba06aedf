#pragma once
// [limits] (SPEC §2, kaicoder.toml(5)): the most one proposal may carry.
// propose and run check every field an agent writes before anything is
// staged, so nothing unbounded reaches the store, the changelog, a screen
// or the memory of a later command.
//
// A field over its limit is a usage error (exit 2): the request itself is
// malformed, and sending it again can never succeed. A proposer with too
// many proposals pending is denied (exit 3): its request is fine, it must
// wait for the person.
//
// Usage: KAI_TRY(check_text_limits(ws.cfg.limits, why, summary, agent));
//        auto swept = lock_and_sweep_live(ws);
//        KAI_TRY(check_pending_limit(ws, swept->live, p.agent));

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/config/config.hpp"
#include "lib/store/proposal.hpp"
#include "lib/store/store.hpp"
#include "lib/result.hpp"

namespace kai {

class Workspace;

// usage: `why` longer than [limits] why bytes, `summary` or `agent` longer
// than their limits in characters.
Status check_text_limits(const Config::Limits& l, std::string_view why, std::string_view summary,
                         std::string_view agent);

// usage: `path` (named `what` in the message: "--path", "--cwd") longer than
// [limits] path bytes, or one of its names longer than path_component bytes.
Status check_path_limits(const Config::Limits& l, std::string_view what, std::string_view path);

// usage: a payload (`what`: "--content-file", …) of `bytes` over [limits] content.
Status check_payload_limit(const Config::Limits& l, std::string_view what, size_t bytes);

// denied when `agent` (as recorded: redacted, "" for none) already has
// [limits] pending proposals pending that have not expired. Counts in
// `live`, the live index's entries a sweep left (lib/gate/decide
// lock_and_sweep_live), under the store lock that sweep took: no record read.
Status check_pending_limit(const Workspace& ws, const Store::LiveView& live, const std::string& agent);

// The pending proposal from the same proposer (`p.agent` as recorded) that
// `p` repeats: same kind, path and base (the file as it was), and a sealed
// record whose payload digest is digest(p) — a retry of a request still waiting for the person. Reads
// metadata only; expired and unsealed records never match. Looks in `live`,
// as check_pending_limit does, for an entry of the same agent and request
// key (Store live_key), and reads only such a candidate's record, which
// decides.
std::optional<Proposal> pending_twin(const Workspace& ws, const Store::LiveView& live,
                                     const Proposal& p);

}  // namespace kai
