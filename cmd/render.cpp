#include "cmd/render.hpp"

#include <fmt/format.h>

#include "lib/propose.hpp"

namespace kai::cmd {
using json = nlohmann::json;

void print_proposal_header(Session& s, const Proposal& p) {
  const char* bold = s.color() ? "\x1b[1m" : "";
  const char* reset = s.color() ? "\x1b[0m" : "";
  fmt::print("{}proposal {}{} \u00b7 {} \u00b7 risk {} \u00b7 {}\n", bold, p.id, reset, to_string(p.kind), p.risk,
             to_string(p.state));
  fmt::print("  path:     {}\n", p.path);
  fmt::print("  why:      {}\n", p.why);
  fmt::print("  summary:  {}\n", p.summary);
  if (!p.agent.empty()) fmt::print("  agent:    {}\n", p.agent);
  if (p.tier == "confirm") fmt::print("  tier:     confirm ({})\n", p.tier_reason);
  fmt::print("  policy:   {} ({})\n", p.decision, p.decision_rule);
  if (!p.decided_by.empty()) fmt::print("  decided:  {} by {}\n", p.decided_at, p.decided_by);
  if (!p.result.empty()) fmt::print("  result:   {}\n", p.result);
  if (!p.rollback_id.empty()) fmt::print("  rollback: kaicoder rollback {}\n", p.rollback_id);
}

void print_diff(Session& s, const Proposal& p, const FileDiff& d) {
  if (d.text.empty()) return;
  fmt::print("\n{}", s.color() ? colorize_diff(d.text) : d.text);
  if (!d.text.empty() && d.text.back() != '\n') fmt::print("\n");
  if (d.truncated)
    fmt::print("\n[diff too large to review here: +{}/\u2212{} lines in {} hunks; the first hunks are shown]\n"
               "[see all of it: kaicoder show --full {}]\n",
               d.added, d.removed, d.hunks, p.id);
}

void print_outcome(Session&, const Proposal& p, const Outcome& o) {
  if (o.unchanged) {
    fmt::print("proposal {}: the file already holds this content; nothing written\n", p.id);
    return;
  }
  fmt::print("applied proposal {} to {}\n", p.id, p.path);
  fmt::print("  backup:      {}\n", o.backup.empty() ? "\u2014 (new file)" : o.backup);
  fmt::print("  rollback-id: {}   (undo: kaicoder rollback {})\n", o.rollback_id, o.rollback_id);
}

json proposal_json(const Proposal& p) { return to_json(p); }

json diff_json(const FileDiff& d) {
  return {{"text", d.text},         {"binary", d.binary},   {"truncated", d.truncated}, {"added", d.added},
          {"removed", d.removed},   {"hunks", d.hunks},     {"old_blob", d.old_blob},   {"new_blob", d.new_blob},
          {"old_size", d.old_size}, {"new_size", d.new_size}};
}

json entry_json(const Entry& e) {
  return {{"time", e.time},       {"kind", e.kind},       {"rollback_id", e.rollback_id}, {"files", e.files},
          {"action", e.action},   {"summary", e.summary}, {"why", e.why},                 {"backup", e.backup},
          {"approver", e.approver}, {"result", e.result}, {"rollback", e.rollback}};
}

json outcome_json(const Outcome& o) {
  return {{"rollback_id", o.rollback_id}, {"backup", o.backup}, {"unchanged", o.unchanged}, {"entry", entry_json(o.entry)}};
}

Result<FileDiff> diff_for_display(Session&, Workspace& ws, const Proposal& p, bool full) {
  DiffOptions opts;
  opts.full = full;
  return current_diff(ws, p, opts);
}

}  // namespace kai::cmd
