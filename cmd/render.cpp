#include "cmd/render.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cmd/progress.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/propose.hpp"
#include "lib/gate/status.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {
using json = nlohmann::json;

namespace {

// Text someone else wrote (an agent, a check, the reviewer), each line under
// a fixed prefix so that none of it can pass for kaicoder's own lines.
void print_quoted(std::string_view text) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.ends_with('\r') && nl != std::string_view::npos) line.remove_suffix(1);  // CRLF
    out("      | {}\n", line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// A field an agent wrote: its label on a line of its own, then the text quoted.
void print_field(std::string_view label, std::string_view text) {
  out("  {}:\n", Trusted{label});
  print_quoted(text.empty() ? std::string_view("\u2014") : text);
}

void print_validation(Session& s, const Validation& v) {
  if (v.status == "none") return;
  const bool failed = v.status == "failed";
  const char* mark = s.color() && failed ? "\x1b[1;31m" : "";
  const char* reset = s.color() && failed ? "\x1b[0m" : "";
  out("  validate: {}{}{}\n", Trusted{mark}, failed ? "FAILED" : v.status, Trusted{reset});
  for (const auto& c : v.checks) {
    std::string how = c.status == "failed"
                          ? (c.timed_out ? "failed: timed out" : fmt::format("failed: exit {}", c.exit_code))
                          : c.status;
    out("    {} = {}: {}\n", c.pattern, c.command, how);
    print_quoted(c.output);
  }
}

void print_review(const Review& r) {
  if (r.status == "none") return;
  out("  review:   advisory text from [hooks] review ({}); untrusted, it cannot approve anything\n", r.status);
  print_quoted(r.text);
}

}  // namespace

namespace {
constexpr size_t k_list_what = 32;  // characters of the WHAT column

// `text` (already visible) padded with blanks to `width` characters.
std::string padded(std::string text, size_t width) {
  const size_t n = utf8_length(text);
  if (n < width) text.append(width - n, ' ');
  return text;
}

// What a listed proposal changes: its file, its command, or its files.
std::string list_subject(const Proposal& p) {
  if (p.kind == Kind::run) return make_visible(command_text(p), Allow::nothing);
  if (p.kind != Kind::changeset) return make_visible(p.path, Allow::nothing);
  std::string s = count_of(p.changes.size(), "file") + ":";
  for (size_t i = 0; i < p.changes.size() && utf8_length(s) <= k_list_what; ++i)
    s += (i == 0 ? " " : ", ") + make_visible(change_name(p.changes[i]), Allow::nothing);
  return s;
}

// Risk and tier side by side: a run has no risk of its own, only a tier.
std::string grade_words(const Proposal& p) {
  if (p.kind == Kind::run) return fmt::format("tier {}", to_string(p.tier));
  return fmt::format("risk {} \u00b7 tier {}", to_string(p.risk), to_string(p.tier));
}
}  // namespace

void print_list_header() {
  out("{:>4}  {:<11}  {:<9}  {:<6}  {:<7}  {}  {}\n", "ID", "STATUS", "KIND", "RISK", "TIER",
      Trusted{padded("WHAT", k_list_what)}, "SUMMARY");
}

std::string list_row(const Proposal& p, std::string_view status) {
  // Team mode: another clone's proposal says where it came from.
  std::string team;
  if (p.team.remote())
    team = fmt::format("[team {}/{}] ", p.team.origin, p.team.remote_id);
  else if (p.team.published())
    team = "[published] ";
  return detail::format_shown("{:>4}  {:<11}  {:<9}  {:<6}  {:<7}  {}  {}{}\n", p.id, status, to_string(p.kind),
                              p.kind == Kind::run ? std::string_view("-") : to_string(p.risk), to_string(p.tier),
                              Trusted{padded(cut_to_length(list_subject(p), k_list_what), k_list_what)},
                              Trusted{team}, p.summary);
}

void print_list_row(const Proposal& p, std::string_view status) { write_text(list_row(p, status)); }

void print_proposal_header(Session& s, const Proposal& p) {
  const char* bold = s.color() ? "\x1b[1m" : "";
  const char* reset = s.color() ? "\x1b[0m" : "";
  out("{}proposal {}{} \u00b7 {} \u00b7 {} \u00b7 {}\n", Trusted{bold}, p.id, Trusted{reset}, to_string(p.kind),
      grade_words(p), to_string(p.state));
  if (p.kind == Kind::changeset)
    out("  files:    {}\n", p.changes.size());
  else if (p.kind != Kind::run)
    out("  path:     {}\n", p.path);
  // What the agent wrote, each under its label and quoted line by line, so
  // that nothing in it can look like kaicoder's own lines.
  print_field("why", p.why);
  print_field("summary", p.summary);
  if (p.proposer_uid >= 0)
    out("  proposer: {} (uid {}, through the spool)\n", p.agent, p.proposer_uid);
  else if (!p.agent.empty())
    print_field("agent", p.agent);
  if (!p.reason.empty()) print_field("reason", p.reason);
  if (!p.risk_reason.empty()) out("  risk:     {} ({})\n", to_string(p.risk), p.risk_reason);
  if (p.tier == Tier::confirm) out("  tier:     confirm ({})\n", p.tier_reason);
  if (p.team.remote()) {
    out("  team:     proposal {} of clone {} (a {} there), commit {} on base {}\n", p.team.remote_id, p.team.origin,
        p.team.kind, p.team.commit.substr(0, 12), p.team.base.substr(0, 12));
    out("  expires:  {} (its origin's [approval] timeout)\n", p.team.expires);
  } else if (p.team.published()) {
    out("  team:     published by this clone ({}) as commit {} on base {}{}\n", p.team.origin,
        p.team.commit.substr(0, 12), p.team.base.substr(0, 12),
        p.team.pushed ? "" : "; not pushed yet: kaicoder publish " + std::to_string(p.id));
  }
  if (!p.team.signer.empty())
    out("  signed:   by {} (decision {}){}\n", p.team.signer, p.team.decision.substr(0, 12),
        p.team.remote() && !p.team.pushed ? "; not pushed yet: kaicoder publish " + std::to_string(p.id) : "");
  out("  policy:   {} ({})\n", to_string(p.decision), p.decision_rule);
  print_decided(p, DecidedLine::with_time);
  if (!p.result.empty()) out("  result:   {}\n", p.result);
  if (!p.rollback_id.empty()) out("  rollback: kaicoder rollback {}\n", p.rollback_id);
  print_validation(s, p.validation);
  print_review(p.review);
}

void print_run_header(Session& s, const Proposal& p) {
  print_proposal_header(s, p);
  out("  cwd:      {}\n", p.cwd.empty() ? "." : p.cwd);
  if (p.network)
    out("  network:  on for this run (asks for network access: it can reach the internet and local services)\n");
  print_field("command", command_text(p));
}

void print_diffstat(Session& s, const Proposal& p) {
  size_t width = 0, added = 0, removed = 0;
  std::vector<std::string> names;
  for (const Change& c : p.changes) {
    names.push_back(change_name(c));
    width = std::max(width, utf8_length(names.back()));
    added += c.added;
    removed += c.removed;
  }
  width = std::min<size_t>(width, 60);
  Batch batch;  // a line per file
  const char* bold = s.color() ? "\x1b[1m" : "";
  const char* reset = s.color() ? "\x1b[0m" : "";
  out("\n{}{} file{} changed, +{} \u2212{} lines{}\n", Trusted{bold}, p.changes.size(),
      p.changes.size() == 1 ? "" : "s", added, removed, Trusted{reset});
  for (size_t i = 0; i < p.changes.size(); ++i) {
    const Change& c = p.changes[i];
    const std::string& name = names[i];
    std::string pad(width > utf8_length(name) ? width - utf8_length(name) : 0, ' ');
    std::string counts = c.binary ? std::string("binary") : fmt::format("+{} \u2212{}", c.added, c.removed);
    out("  {:<6}  {}{}  {:<12}  {}\n", c.op, name, pad, counts, change_verdicts(c));
    if (c.tier == Tier::confirm && !c.tier_reason.empty()) out("          confirm: {}\n", c.tier_reason);
  }
}

void print_diff(Session& s, const Proposal& p, const FileDiff& d) {
  if (d.text.empty()) return;
  // Escape sequences in the proposed bytes must not repaint the reviewer's screen.
  const std::string text = make_visible(d.text);
  std::string colored;
  if (s.color()) {
    ProgressLine line;  // highlighting a diff of many thousand lines takes a moment
    colored = colorize_diff(text, line.callback());
  }
  out("\n{}", Trusted{s.color() ? colored : text});
  if (text.back() != '\n') out("\n");
  if (text.size() != d.text.size())
    out("[the diff contains control or invisible characters; they are shown as \\e, \\xNN and <U+XXXX>]\n");
  if (d.truncated) {
    const size_t changed = d.added + d.removed;
    const size_t hidden = changed - std::min(changed, d.shown_changed);
    const size_t files = p.kind == Kind::changeset ? p.changes.size() : 1;
    out("\n[diff cut for display: {} of {} changed lines (+{}/\u2212{}) and {} of {} hunks in {} file{} not shown{}]\n"
        "[see all of it: kaicoder show {} --full{}]\n",
        hidden, changed, d.added, d.removed, d.hunks - std::min(d.hunks, d.shown_hunks), d.hunks, files,
        files == 1 ? "" : "s", hidden == 0 ? "; long lines were shortened" : "", p.id,
        files > 1 ? fmt::format(", or one file: kaicoder show {} --file PATH", p.id) : "");
  }
}

void print_outcome(Session&, const Proposal& p, const Outcome& o) {
  if (o.unchanged) {
    out("proposal {}: the file already holds this content; nothing written\n", p.id);
    return;
  }
  if (p.kind == Kind::changeset) {
    Batch batch;  // a line per file
    out("applied proposal {}: changeset of {} file{}\n", p.id, p.changes.size(), p.changes.size() == 1 ? "" : "s");
    for (size_t i = 0; i < o.entry.files.size(); ++i) out("  {}\n", o.entry.files[i]);
    out("  backups:     {}\n", o.backup.empty() ? "\u2014 (new files only)" : o.backup);
    out("  rollback-id: {}   (undo every file: kaicoder rollback {})\n", o.rollback_id, o.rollback_id);
    return;
  }
  out("applied proposal {} to {}\n", p.id, p.path);
  out("  backup:      {}\n", o.backup.empty() ? or_none("") + " (new file)" : o.backup);
  out("  rollback-id: {}   (undo: kaicoder rollback {})\n", o.rollback_id, o.rollback_id);
}

void print_decided(const Proposal& p, DecidedLine form) {
  if (p.decided_by.empty()) return;
  if (form == DecidedLine::with_time)
    out("  decided:  {} by {}\n", p.decided_at, p.decided_by);
  else
    out("  decided by:  {}\n", p.decided_by);
}

void print_expired_copy() { out("  expired:  past the owner's [approval] timeout; it can no longer be approved\n"); }

int wait_exit_code(const Proposal& p) {
  return standing(p) == Standing::settled ? outcome_exit_code(p) : exit_code(Errc::pending);
}

void print_waiting(int id) {
  err("kaicoder: proposal {} is waiting for a person: kaicoder approve {}\n", id, id);
  std::fflush(stderr);
}

int wait_and_report(Session& s, Workspace& ws, int id, std::optional<std::chrono::seconds> within) {
  // A published team proposal: a signed decision on the remote counts too.
  auto team_wait = team::wait_for_outcome(ws, id, within);
  if (!team_wait) return report(s, team_wait.error());
  const Proposal* p = &team_wait->proposal;
  const bool run = p->kind == Kind::run;
  // A waiter is done only once the proposal is decided and carried out:
  // pending, or approved but not applied yet, is "still pending" (8).
  const bool undecided = standing(*p) != Standing::settled;
  const int rc = wait_exit_code(*p);
  CapturedOutput captured;
  if (run) captured = run_output(ws, p->id);
  if (s.json()) {
    json j = with_proposal(*p);
    j["exit_code"] = rc;
    const bool ran = run && p->state == State::applied;
    if (run) {
      j["ran"] = ran;
      j["stdout"] = captured.out;
      j["stderr"] = captured.err;
    }
    if (ran && rc != k_exit_ok) j["error"] = exit_error(rc);
    if (team_wait->received) {
      j["team_decision"] = team::received_object(*team_wait->received);
    }
    if (!team_wait->remote_note.empty()) j["remote_note"] = team_wait->remote_note;
    std::optional<Error> e;
    if (undecided)
      e = make_error(
          Errc::pending,
          fmt::format("proposal {} is still {}", p->id,
                      p->state == State::pending ? "waiting for a person" : "approved and not carried out yet"),
          fmt::format("wait for it again with: kaicoder wait {}", p->id));
    else if (!ran && rc != k_exit_ok)
      e = outcome_error(*p);
    return emit(s, std::move(j), rc, e);
  }
  if (run) {
    write_content(captured.out, 1);
    write_content(captured.err, 2);
  }
  if (team_wait->received) print_received(*team_wait->received);
  out("proposal {} is {}{}\n", p->id, to_string(p->state), p->result.empty() ? "" : ": " + p->result);
  if (!p->backup.empty()) out("  backup:      {}\n", p->backup);
  if (!p->rollback_id.empty()) out("  rollback-id: {}\n", p->rollback_id);
  if (!team_wait->remote_note.empty() && undecided)
    err("kaicoder: note: the team remote could not be asked for a decision: {}\n", team_wait->remote_note);
  if (undecided) {
    std::fflush(stdout);
    err("kaicoder: proposal {} is still {}: {}\n", p->id,
        p->state == State::pending ? "waiting for a person" : "approved and not carried out yet",
        p->state == State::pending ? fmt::format("kaicoder approve {}", p->id)
                                   : fmt::format("kaicoder apply {}", p->id));
    err("hint: wait for it again with: kaicoder wait {}\n", p->id);
  }
  return rc;
}

namespace {
const char* verdict_label(const Effect& e) {
  if (e.conflict) return "CONFLICT";
  switch (e.verdict) {
    case EffectVerdict::lands: return "lands";
    case EffectVerdict::held: return "HELD";
    case EffectVerdict::never: return "NEVER";
  }
  return "NEVER";
}
}  // namespace

void print_effects(Session& s, const Proposal& p, const Effects& fx, const std::string& diff,
                   const std::vector<std::string>& notes, bool only_held) {
  std::vector<const Effect*> shown = shown_effects(fx);
  if (only_held)
    std::erase_if(shown, [](const Effect* e) { return e->verdict != EffectVerdict::held || e->conflict; });
  const char* bold = s.color() ? "\x1b[1m" : "";
  const char* reset = s.color() ? "\x1b[0m" : "";
  if (shown.empty() && notes.empty()) {
    out("\n{}effects:{} none\n", Trusted{bold}, Trusted{reset});
    return;
  }
  {
    Batch batch;  // a line or two per effect
    out("\n{}{}:{}\n", Trusted{bold}, only_held ? "held for CONFIRM" : "effects", Trusted{reset});
    for (const Effect* e : shown) {
      out("  {:<8}  {}\n", verdict_label(*e), describe(*e));
      if (e->verdict != EffectVerdict::lands && !e->conflict)
        out("            {}: {}\n", e->rule, effect_rule(e->rule).text);
    }
    for (const auto& n : notes) out("  note:     {}\n", n);
  }
  if (!diff.empty()) {
    FileDiff d;
    d.text = diff;
    print_diff(s, p, d);
  }
}

json effects_json(const Effects& fx, const std::string& diff, const std::vector<std::string>& notes) {
  json list = json::array();
  size_t held = 0, dropped = 0, conflicts = 0;
  for (const Effect* e : shown_effects(fx)) {
    list.push_back(to_json(*e));
    held += e->verdict == EffectVerdict::held && !e->conflict;
    dropped += e->verdict == EffectVerdict::never;
    conflicts += e->conflict;
  }
  return {{"effects", list}, {"held", held}, {"dropped", dropped}, {"conflicts", conflicts},
          {"diff", diff},    {"notes", notes}};
}

void print_published(const team::Published& p) {
  if (p.proposal.team.remote()) {
    out("pushed the decision on proposal {} ({}) to {}\n", p.proposal.id, p.proposal.team.decision.substr(0, 12),
        p.ref);
    return;
  }
  out("published proposal {} as commit {} on base {}{}\n", p.proposal.id, p.proposal.team.commit.substr(0, 12),
      p.proposal.team.base.substr(0, 12), p.again ? " (again)" : "");
  out("  ref:      {}\n", p.ref);
  out("  expires:  {}\n", p.proposal.team.expires);
  out("a person decides it from their clone: kaicoder fetch, then kaicoder approve (or reject); wait for it here with: "
      "kaicoder wait {}\n",
      p.proposal.id);
}

int report_team_decision(Session& s, const team::Decided& d, std::string_view verb) {
  if (s.json()) {
    nlohmann::json j = with_proposal(d.proposal);
    j["team_decision"] = {{"commit", d.decision}, {"signer", d.signer}, {"pushed", !d.push_error}};
    if (d.push_error) return emit(s, std::move(j), exit_code(d.push_error->code), d.push_error);
    return emit(s, std::move(j));
  }
  out("{} team proposal {}: decision {} signed by {}\n", verb, d.proposal.id, d.decision.substr(0, 12), d.signer);
  if (d.push_error) return report(s, *d.push_error);
  return k_exit_ok;
}

void print_received(const team::Received& r) {
  const Proposal& p = r.proposal;
  out("proposal {}: a decision signed by {} {} it\n", p.id, p.team.signer,
      p.state == State::rejected ? "rejected" : "approved");
  if (!r.forwarded.empty())
    out("  {} now points at the proposal commit {}\n", r.forwarded, p.team.commit.substr(0, 12));
  else if (!r.note.empty())
    out("  not committed: {}\n", r.note);
}

json proposal_json(const Proposal& p) { return proposal_object(p); }

json with_proposal(const Proposal& p) {
  json j = proposal_object(p);
  json copy = j;  // built once: a changeset's is thousands of values
  j["proposal"] = std::move(copy);
  return j;
}

json ran_json(const Proposal& p, const RunOutcome& o) {
  json j = with_proposal(p);
  j.update({{"id", p.id},
            {"ran", true},
            {"exit_code", o.result.exit_code},
            {"stdout", o.result.out},
            {"stderr", o.result.err},
            {"entry", entry_object(o.entry)},
            {"effects", effects_json(o.effects.fx, o.effects.diff, o.effects.notes)}});
  return j;
}

Result<FileDiff> diff_for_display(Session&, Workspace& ws, const Proposal& p, bool full) {
  DiffOptions opts;
  opts.full = full;
  return current_diff(ws, p, opts);
}

namespace {
std::string change_words(const CertChange& c) {
  std::string what = c.from.empty() ? fmt::format("{:<7} {}", c.kind, make_visible(c.path))
                                    : fmt::format("{:<7} {} -> {}", c.kind, make_visible(c.from), make_visible(c.path));
  if (!c.detail.empty()) what += fmt::format(" ({})", c.detail);
  return what;
}
}  // namespace

void print_change(const CertChange& c) {
  out("  {}\n", change_words(c));
  if (c.covered) {
    out("      signed by {}\n", make_visible(c.signer));
    return;
  }
  if (!c.commit.empty())
    out("      introduced by {}\n", make_visible(c.introduced));
  else if (c.introduced == "uncommitted")
    out("      not committed yet\n");
  else if (!c.introduced.empty())
    out("      introducing commit {}\n", c.introduced);
  out("      {}\n", make_visible(c.reason));
}

void print_certification(const Certification& c) {
  out("base {} ({})\nhead {}{}\n", c.base.substr(0, 12), c.base_from, c.head.substr(0, 12),
      c.worktree ? " and the work tree" : "");
  if (c.paths.empty()) {
    out("nothing is certified: the base has no [certify] paths\n");
    return;
  }
  for (const auto& m : c.manifests)
    if (!m.problem.empty())
      out("manifest {} ({}) does not count: {}\n", make_visible(m.path), m.where, make_visible(m.problem));
  size_t bad = c.uncovered();
  if (bad > 0) {
    out("{} of {} to certified paths {} a signed approval:\n", bad, count_of(c.changes.size(), "change"),
        bad == 1 ? "lacks" : "lack");
    for (const auto& ch : c.changes)
      if (!ch.covered) print_change(ch);
  }
  if (bad < c.changes.size()) {
    out("{} to certified paths signed:\n", count_of(c.changes.size() - bad, "change"));
    for (const auto& ch : c.changes)
      if (ch.covered) print_change(ch);
  }
  if (c.changes.empty()) out("no change to certified paths\n");
}

nlohmann::json certification_json(const Certification& c) {
  nlohmann::json changes = nlohmann::json::array(), manifests = nlohmann::json::array();
  for (const auto& ch : c.changes) {
    nlohmann::json needs = nlohmann::json::array();
    for (const auto& b : ch.needs)
      needs.push_back(b.deleted() ? nlohmann::json{{"path", b.path}, {"deleted", true}}
                                  : nlohmann::json{{"path", b.path}, {"blob", b.blob}, {"mode", b.mode}});
    nlohmann::json j = {{"kind", ch.kind},         {"path", ch.path},         {"detail", ch.detail},
                        {"old_mode", ch.old_mode}, {"new_mode", ch.new_mode}, {"blob", ch.blob},
                        {"covered", ch.covered},   {"needs", needs}};
    if (!ch.from.empty()) j["from"] = ch.from;
    if (ch.covered)
      j["signer"] = ch.signer;
    else {
      j["reason"] = ch.reason;
      j["commit"] = ch.commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(ch.commit);
      j["introduced"] = ch.introduced;
    }
    changes.push_back(std::move(j));
  }
  for (const auto& m : c.manifests)
    manifests.push_back({{"path", m.path},
                         {"where", m.where},
                         {"valid", m.problem.empty()},
                         {"signer", m.signer},
                         {"problem", m.problem},
                         {"entries", m.entries}});
  return {{"base", c.base},
          {"base_from", c.base_from},
          {"head", c.head},
          {"worktree", c.worktree},
          {"paths", c.paths},
          {"allowed_signers", c.allowed_signers},
          {"signers_problem", c.signers_problem},
          {"changes", changes},
          {"uncovered", c.uncovered()},
          {"manifests", manifests}};
}

}  // namespace kai::cmd
