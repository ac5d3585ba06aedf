#include "lib/web/pages.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "lib/util/strings.hpp"
#include "lib/util/time.hpp"
#include "lib/web/html.hpp"

namespace kai::web {

namespace {

// Agent-written text for the page: redacted as the terminal redacts it,
// hidden characters spelled out, escaped.
std::string say(const Workspace& ws, std::string_view text, Allow allow = Allow::nothing) {
  return shown(ws.redact(text), allow);
}

// Text of many lines someone else wrote, set apart from kaicoder's own.
std::string quoted(const Workspace& ws, std::string_view text) {
  if (text.empty()) return "<p class=\"quoted\">\u2014</p>\n";
  return fmt::format("<pre class=\"quoted\">{}</pre>\n", say(ws, text, Allow::tab_newline));
}

std::string fact(std::string_view label, const std::string& value_html) {
  return fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape(label), value_html);
}

// One cell of a table that narrow screens show as a stack of rows: its
// column's name goes with it (data-label, shown by the stylesheet there).
std::string cell(std::string_view label, std::string_view html, std::string_view cls = {}) {
  return fmt::format("<td data-label=\"{}\"{}>{}</td>", escape(label),
                     cls.empty() ? std::string() : fmt::format(" class=\"{}\"", escape(cls)), html);
}

std::string badge(std::string_view word) { return fmt::format("<span class=\"badge {0}\">{0}</span>", escape(word)); }

std::optional<long> age_seconds(const Workspace& ws, const Proposal& p) {
  TimePoint created;
  if (!parse_iso_utc(p.created, created)) return std::nullopt;
  return static_cast<long>(std::chrono::duration_cast<std::chrono::seconds>(ws.clock->now() - created).count());
}

std::string time_left(const Workspace& ws, const Proposal& p, bool expired) {
  if (p.state != State::pending) return "\u2014";
  if (expired) return "expired";
  auto age = age_seconds(ws, p);
  if (!age) return "unknown";
  return human_duration(std::max(0L, ws.cfg.timeout - *age));
}

std::string files_count(size_t n) { return fmt::format("{} file{}", n, n == 1 ? "" : "s"); }

std::string what_of(const Workspace& ws, const Proposal& p) {
  if (p.kind == Kind::run) return fmt::format("<code>{}</code>", say(ws, command_text(p)));
  if (p.kind == Kind::changeset) return files_count(p.changes.size());
  return fmt::format("<code>{}</code>", say(ws, p.path));
}

// A changeset in the list: how many files, and the first few of them.
constexpr size_t k_listed_files = 3;
std::string files_of(const Workspace& ws, const Proposal& p) {
  std::string out = files_count(p.changes.size()) + ":";
  for (size_t i = 0; i < p.changes.size() && i < k_listed_files; ++i)
    out += fmt::format("{} <code>{}</code>", i == 0 ? "" : ",", say(ws, change_name(p.changes[i])));
  if (p.changes.size() > k_listed_files) out += fmt::format(" and {} more", p.changes.size() - k_listed_files);
  return out;
}

std::string hidden(std::string_view name, std::string_view value) {
  return fmt::format("<input type=\"hidden\" name=\"{}\" value=\"{}\">\n", escape(name), escape(value));
}

std::string validation_html(const Workspace& ws, const Validation& v) {
  if (v.status == "none") return "<p>No [validate] check applies.</p>\n";
  std::string out =
      fmt::format("<p>Validation: <strong>{}</strong></p>\n", v.status == "failed" ? "FAILED" : escape(v.status));
  for (const auto& c : v.checks) {
    std::string how = c.status == "failed"
                          ? (c.timed_out ? "failed: timed out" : fmt::format("failed: exit {}", c.exit_code))
                          : c.status;
    out += fmt::format("<p><code>{}</code> = <code>{}</code>: {}</p>\n", say(ws, c.pattern), say(ws, c.command),
                       escape(how));
    out += quoted(ws, c.output);
  }
  return out;
}

std::string cut_note(const FileDiff& d, int id) {
  const size_t changed = d.added + d.removed;
  const size_t not_shown = changed - std::min(changed, d.shown_changed);
  return fmt::format(
      "<p class=\"warn\" role=\"note\">The diff was cut for display: {} of {} changed lines (+{}/\u2212{}) and {} of "
      "{} "
      "hunks were not shown{}. Approving it takes CONFIRM; see all of it with <code>kaicoder show {} "
      "--full</code>.</p>\n",
      not_shown, changed, d.added, d.removed, d.hunks - std::min(d.hunks, d.shown_hunks), d.hunks,
      not_shown == 0 ? "; long lines were shortened" : "", id);
}

constexpr const char* k_hidden_note =
    "<p class=\"warn\">The diff contains control or invisible characters; they are shown as \\e, \\xNN and "
    "&lt;U+XXXX&gt;.</p>\n";

std::string diff_section(const FileDiff& d, int id) {
  std::string out = fmt::format("<h2>Diff <span class=\"badge\">+{} \u2212{}</span></h2>\n", d.added, d.removed);
  if (d.text.empty()) return out + "<p>No change: the file already holds this content.</p>\n";
  out += diff_html(d.text);
  if (has_hidden_characters(d.text)) out += k_hidden_note;
  if (d.truncated) out += cut_note(d, id);
  return out;
}

std::string lines_of(const Change& c) {
  return c.binary ? std::string("binary") : fmt::format("+{} \u2212{}", c.added, c.removed);
}

// A changeset's files, one row each: its operation, path (both paths of a
// rename), lines added and removed, and its own risk, tier and policy
// verdict side by side, each with its reason.
std::string diffstat_html(const Workspace& ws, const Proposal& p) {
  size_t added = 0, removed = 0;
  for (const Change& c : p.changes) {
    added += c.added;
    removed += c.removed;
  }
  std::string out = fmt::format("<h2>Files <span class=\"badge\">{} changed, +{} \u2212{} lines</span></h2>\n",
                                files_count(p.changes.size()), added, removed);
  out +=
      "<table class=\"list diffstat\">\n<caption>What the changeset does, file by file</caption>\n"
      "<thead><tr><th scope=\"col\">Operation</th><th scope=\"col\">File</th><th scope=\"col\">Lines</th>"
      "<th scope=\"col\">Risk</th><th scope=\"col\">Tier</th><th scope=\"col\">Policy</th></tr></thead>\n"
      "<tbody>\n";
  for (const Change& c : p.changes) {
    std::string op = say(ws, c.op);
    if (c.base.exists && c.after_exists && (c.base.mode & 0111u) != (c.after_mode & 0111u))
      op += fmt::format("<br><small>mode {:o} \u2192 {:o}</small>", c.base.mode, c.after_mode);
    std::string file = c.op == "rename"
                           ? fmt::format("<code>{}</code> \u2192 <code>{}</code>", say(ws, c.path), say(ws, c.to))
                           : fmt::format("<code>{}</code>", say(ws, c.path));
    std::string risk = badge(to_string(c.risk));
    if (!c.risk_reason.empty()) risk += "<br><small>" + say(ws, c.risk_reason) + "</small>";
    std::string tier = badge(to_string(c.tier));
    if (c.tier == Tier::confirm && !c.tier_reason.empty()) tier += "<br><small>" + say(ws, c.tier_reason) + "</small>";
    std::string policy = escape(to_string(c.decision));
    if (!c.decision_rule.empty()) policy += " <small>(" + say(ws, c.decision_rule) + ")</small>";
    if (c.validation != "none") policy += "<br><small>validate " + say(ws, c.validation) + "</small>";
    out += "<tr>" + cell("Operation", op) + cell("File", file, "what") + cell("Lines", lines_of(c)) +
           cell("Risk", risk) + cell("Tier", tier) + cell("Policy", policy) + "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

// A changeset's summary of one verdict over every file: each distinct
// value once, after the files it holds for, in the files' order.
std::string per_file(const Workspace& ws, const Proposal& p, const std::function<std::string(const Change&)>& value) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const Change& c : p.changes) {
    std::string v = value(c);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == v; });
    if (g == groups.end()) {
      groups.push_back({std::move(v), {}});
      g = std::prev(groups.end());
    }
    g->second.push_back(change_name(c));
  }
  std::string out = "<ul class=\"per-file\">\n";
  for (const auto& [v, files] : groups) {
    std::string names;
    for (const auto& f : files) names += (names.empty() ? "" : ", ") + fmt::format("<code>{}</code>", say(ws, f));
    out += fmt::format("<li>{}: {}</li>\n", names, v);
  }
  return out + "</ul>\n";
}

// What of a cut changeset diff was not shown, file by file, in words.
std::string changeset_cut_note(const Workspace& ws, const Proposal& p, const FileDiff& d) {
  const size_t changed = d.added + d.removed;
  const size_t not_shown = changed - std::min(changed, d.shown_changed);
  size_t files = 0;
  std::string items;
  for (const DiffPart& part : d.parts) {
    const size_t lines = part.added + part.removed;
    if (part.shown && !part.truncated) continue;
    ++files;
    const std::string name = say(ws, change_name(p.changes.at(part.change)));
    if (!part.shown)
      items += fmt::format("<li><code>{}</code>: not shown at all ({} changed lines)</li>\n", name, lines);
    else if (part.shown_changed < lines)
      items += fmt::format("<li><code>{}</code>: {} of {} changed lines not shown</li>\n", name,
                           lines - part.shown_changed, lines);
    else
      items += fmt::format("<li><code>{}</code>: long lines shortened</li>\n", name);
  }
  return fmt::format(
      "<div class=\"warn\" role=\"note\"><p>The diff was cut for display: {} of {} changed lines (+{}/\u2212{}) and {} "
      "of {} "
      "hunks were not shown, in {} of {}:</p>\n<ul>\n{}</ul>\n<p>Approving it takes CONFIRM; see all of it with "
      "<code>kaicoder show {} --full</code>, or one file with <code>kaicoder show {} --file PATH</code>.</p></div>\n",
      not_shown, changed, d.added, d.removed, d.hunks - std::min(d.hunks, d.shown_hunks), d.hunks, files,
      files_count(p.changes.size()), items, p.id, p.id);
}

// A changeset's diff: one collapsible section a file (<details>, no script
// needed), each with its own part of the diff as it was cut for display.
std::string changeset_diff_section(const Workspace& ws, const Proposal& p, const FileDiff& d, bool gate_open) {
  std::string out = fmt::format("<h2>Diff <span class=\"badge\">+{} \u2212{}</span></h2>\n", d.added, d.removed);
  if (d.truncated) out += changeset_cut_note(ws, p, d);
  if (has_hidden_characters(d.text)) out += k_hidden_note;
  const bool closed = files_must_be_opened(p, d);
  if (!closed)
    out += fmt::format("<p>The whole diff is short (at most {} lines): every file is open.</p>\n", k_open_diff_lines);
  else if (gate_open)
    out += fmt::format(
        "<p id=\"open-each\">The diff is long (over {} lines{}): open each file to see its diff. Approving is possible "
        "once every file has been opened, or with CONFIRM typed out. <span id=\"opened-count\">0 of {} "
        "opened</span>.</p>\n",
        k_open_diff_lines, d.truncated ? ", and cut for display" : "", d.parts.size());
  else
    out += "<p>Open a file to see its diff.</p>\n";
  for (size_t n = 0; n < d.parts.size(); ++n) {
    const DiffPart& part = d.parts[n];
    const Change& c = p.changes.at(part.change);
    const std::string name = ws.redact(change_name(c));
    std::string mark;
    if (!part.shown)
      mark = " <span class=\"badge confirm\">not shown</span>";
    else if (part.truncated)
      mark = " <span class=\"badge confirm\">cut</span>";
    out += fmt::format(
        "<details class=\"file\" data-part=\"{}\"{}>\n<summary>{} <code>{}</code> <span "
        "class=\"badge\">{}</span>{}</summary>\n",
        n, closed ? "" : " open", say(ws, c.op), shown(name, Allow::nothing), lines_of(c), mark);
    if (!part.shown) {
      out += fmt::format(
          "<p>Not shown: its changed lines are past the display limit. See it with <code>kaicoder show "
          "{} --file {}</code>.</p>\n",
          p.id, say(ws, c.target()));
    } else {
      const std::string_view text = std::string_view(d.text).substr(part.offset, part.length);
      if (text.empty())
        out += "<p>No change to its lines.</p>\n";
      else
        out += diff_html(text, "diff of " + name);
      if (part.truncated)
        out += fmt::format("<p class=\"warn\">Cut: {} of {} changed lines of this file are shown.</p>\n",
                           part.shown_changed, part.added + part.removed);
    }
    out += "</details>\n";
  }
  return out;
}

// The CONFIRM field of an approval form; `id` tells two forms' fields apart.
std::string confirm_field(std::string_view id, std::string_view reason) {
  return fmt::format(
      "<p class=\"warn\">This approval takes CONFIRM typed out: {}.</p>\n"
      "<label for=\"{}\">Type CONFIRM to approve</label>\n"
      "<input type=\"text\" id=\"{}\" name=\"confirm\" autocomplete=\"off\" autocapitalize=\"characters\" "
      "spellcheck=\"false\" required>\n",
      escape(reason), escape(id), escape(id));
}

// A long changeset's normal-tier approval: CONFIRM instead of opening
// every file, as the terminal asks for a diff it did not show whole.
std::string confirm_instead_field(std::string_view id) {
  return fmt::format(
      "<label for=\"{0}\">Or type CONFIRM to approve without opening every file</label>\n"
      "<input type=\"text\" id=\"{0}\" name=\"confirm\" autocomplete=\"off\" autocapitalize=\"characters\" "
      "spellcheck=\"false\">\n",
      escape(id));
}

// The opening of a form posting to /p/N/approve: its token binds the
// digest shown and whether the diff was cut.
// `gated`: its buttons start disabled and its "opened" field empty; the
// page's script fills the field in as files are opened and enables them
// once every file was, or CONFIRM is typed.
std::string approve_form_head(const Guard& g, const gate::ApprovalReview& rv, bool gated) {
  const std::string action = fmt::format("/p/{}/approve", rv.proposal.id);
  const std::string cut = rv.diff_cut ? "1" : "0";
  std::string out = fmt::format("<form class=\"decide\" method=\"post\" action=\"{}\"{}>\n", action,
                                gated ? " data-gate=\"open-all\"" : "");
  out += hidden("csrf", g.csrf_for(approve_binding(action, rv.digest, cut)));
  out += hidden("digest", rv.digest);
  out += hidden("cut", cut);
  if (gated) out += hidden("opened", "");
  return out;
}

std::string approve_button(std::string_view cls, std::string_view then, std::string_view text, bool gated) {
  return fmt::format("<button class=\"{}\" type=\"submit\" name=\"then\" value=\"{}\"{}>{}</button>\n", cls, then,
                     gated ? " disabled" : "", text);
}

// The "always allow this" offer: the rule the terminal's `a` would add,
// shown whole before it is written; its form carries the rule under the
// CSRF key so that the server writes only the rule shown.
std::string always_form(const Guard& g, const gate::ApprovalReview& rv, const gate::AllowRule& rule) {
  const std::string action = fmt::format("/p/{}/approve", rv.proposal.id);
  std::string out = "<h3 id=\"always\">Always allow this</h3>\n";
  out += fmt::format(
      "<p>Approve, {}, and always allow <strong>{}</strong> from now on without asking. This rule goes into the "
      "root's kaicoder.toml (backed up, logged, trusted again; undo it with kaicoder rollback):</p>\n",
      rv.proposal.kind == Kind::run ? "run it" : "apply it", shown(rule.words(), Allow::nothing));
  out += fmt::format("<pre class=\"quoted rule\">{}</pre>\n", shown(rule.toml("always allow"), Allow::tab_newline));
  out += approve_form_head(g, rv, false);
  out += hidden("rule", g.csrf_for(always_binding(action, rule)));
  out += approve_button("always", "always", "Approve and always allow", false);
  return out + "</form>\n";
}

// The reject form of proposal `id`, with its reason field.
std::string reject_form(const Guard& g, int id, std::string_view reason_for, std::string_view button) {
  const std::string reject = fmt::format("/p/{}/reject", id);
  std::string out = fmt::format("<form class=\"decide\" method=\"post\" action=\"{}\">\n", reject);
  out += hidden("csrf", g.csrf_for(reject));
  out += fmt::format(
      "<label for=\"reason\">Reason for rejecting ({})</label>\n"
      "<input type=\"text\" id=\"reason\" name=\"reason\" autocomplete=\"off\">\n"
      "<button class=\"reject\" type=\"submit\">{}</button>\n</form>\n",
      escape(reason_for), escape(button));
  return out;
}

// The approval forms, with the choices `kaicoder approve` has: approve and
// apply (or run), approve only (--no-apply), and after a failed validation
// approve and apply anyway (--force, with CONFIRM). Each button names its
// choice in the field "then"; the gate checks the tier the choice needs.
std::string forms(const Guard& g, const gate::ApprovalReview& rv, bool record_only,
                  const std::optional<gate::AllowRule>& always) {
  const Proposal& p = rv.proposal;
  const bool run = p.kind == Kind::run;
  const bool gated = rv.diff && files_must_be_opened(p, *rv.diff);
  const std::string later = run ? "Approve only (run later)" : "Approve only (apply later)";
  std::string out = approve_form_head(g, rv, gated);
  if (rv.refusal) out += fmt::format("<p class=\"warn\" role=\"alert\">{}</p>\n", escape(rv.refusal->message));
  if (record_only)
    out += "<p>The policy mode is propose-only: an approval is recorded, and nothing is applied or run.</p>\n";
  if (rv.need.tier == Tier::confirm)
    out += confirm_field("confirm", rv.need.reason);
  else if (gated)
    out += confirm_instead_field("confirm");
  if (!rv.refusal && !record_only)
    out += approve_button("approve", "apply", run ? "Approve and run" : "Approve and apply", gated);
  out += approve_button("later", "record", record_only ? "Approve (record only)" : later, gated) + "</form>\n";
  if (rv.refusal && !record_only) {
    // As `kaicoder approve --force`: the failed validation overridden, with CONFIRM.
    const RequiredTier forced = required_tier(p, rv.diff_cut, ApplyNow::yes, Force::yes);
    out += "<h3>Override the failed validation</h3>\n" + approve_form_head(g, rv, gated);
    out += confirm_field("confirm-force", forced.reason);
    out += approve_button("approve", "force", "Approve and apply anyway", gated) + "</form>\n";
  }
  if (always && !rv.refusal && !record_only) out += always_form(g, rv, *always);
  return out + reject_form(g, p.id, "for the agent and the changelog", "Reject");
}

// A team proposal of another clone: the answer is a decision signed with
// the owner's SSH key and pushed to the team remote, as at a terminal
// (kaicoder-team(7)). One approval (no "approve only", no override, no
// "always allow": it is applied where it was proposed), and the rejection.
std::string team_forms(const Guard& g, const gate::ApprovalReview& rv) {
  const Proposal& p = rv.proposal;
  const bool gated = rv.diff && files_must_be_opened(p, *rv.diff);
  std::string out = fmt::format(
      "<p>Your answer is a decision signed with your SSH key (the key <code>kaicoder certify</code> uses) and "
      "pushed to the team remote; clone <code>{}</code> applies it there when it next waits or fetches. "
      "Nothing is written in this clone.</p>\n",
      escape(p.team.origin));
  out += approve_form_head(g, rv, gated);
  if (rv.need.tier == Tier::confirm)
    out += confirm_field("confirm", rv.need.reason);
  else if (gated)
    out += confirm_instead_field("confirm");
  out += approve_button("approve", "sign", "Approve and sign", gated) + "</form>\n";
  return out + reject_form(g, p.id, "for the agent and its changelog; signed with the decision", "Reject and sign");
}

// Where a team proposal comes from, and the decision that settled it.
std::string team_facts(const Workspace& ws, const Proposal& p) {
  const TeamLink& t = p.team;
  std::string out;
  if (t.remote())
    out += fact("Team", fmt::format("proposal {} of clone <code>{}</code> (a {} there), commit <code>{}</code> on "
                                    "base <code>{}</code>; expires {} (its origin's [approval] timeout)",
                                    t.remote_id, escape(t.origin), say(ws, t.kind), escape(t.commit.substr(0, 12)),
                                    escape(t.base.substr(0, 12)), escape(t.expires)));
  else if (t.published())
    out += fact("Team", fmt::format("published by this clone (<code>{}</code>) as commit <code>{}</code> on base "
                                    "<code>{}</code>{}",
                                    escape(t.origin), escape(t.commit.substr(0, 12)), escape(t.base.substr(0, 12)),
                                    t.pushed ? "" : fmt::format("; not pushed yet: kaicoder publish {}", p.id)));
  if (!t.signer.empty())
    out += fact(
        "Signed",
        fmt::format("by {} (decision <code>{}</code>){}", say(ws, t.signer), escape(t.decision.substr(0, 12)),
                    t.remote() && !t.pushed ? fmt::format("; not pushed yet: it is pushed by the next kaicoder fetch, "
                                                          "or kaicoder publish {}",
                                                          p.id)
                                            : std::string(t.remote() ? "; pushed to the team remote" : "")));
  return out;
}

}  // namespace

std::string approve_binding(std::string_view action, std::string_view digest, std::string_view cut) {
  return fmt::format("{}\n{}\n{}", action, digest, cut);
}

bool files_must_be_opened(const Proposal& p, const FileDiff& d) {
  if (p.kind != Kind::changeset || d.parts.empty()) return false;
  if (d.truncated) return true;
  size_t lines = static_cast<size_t>(std::count(d.text.begin(), d.text.end(), '\n'));
  if (!d.text.empty() && d.text.back() != '\n') ++lines;
  return lines > k_open_diff_lines;
}

bool opened_every_file(const FileDiff& d, std::string_view opened) {
  std::vector<bool> seen(d.parts.size(), false);
  for (std::string_view item : split(opened, ",")) {
    auto n = parse_proposal_id(item);  // a plain decimal number, as ids are
    if (n && static_cast<size_t>(*n) < seen.size()) seen[static_cast<size_t>(*n)] = true;
  }
  return std::all_of(seen.begin(), seen.end(), [](bool b) { return b; });
}

std::string always_binding(std::string_view action, const gate::AllowRule& rule) {
  return fmt::format("{}\nalways\n{}", action, rule.toml("always allow"));
}

std::string human_duration(long s) {
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m {}s", s / 60, s % 60);
  if (s < 86400) return fmt::format("{}h {}m", s / 3600, (s % 3600) / 60);
  return fmt::format("{}d {}h", s / 86400, (s % 86400) / 3600);
}

std::string list_main(const Workspace& ws, const std::vector<Row>& rows,
                      const std::vector<std::pair<int, std::string>>& corrupt) {
  std::string out = "<h1>Proposals</h1>\n";
  if (rows.empty() && corrupt.empty()) return out + "<p>No proposals yet.</p>\n";
  // As `kaicoder list`: risk and tier side by side, never one for the other
  // (a run has a tier and no risk).
  out +=
      "<table class=\"list proposals\">\n<thead><tr><th scope=\"col\">#</th><th scope=\"col\">Status</th>"
      "<th scope=\"col\">Kind</th><th scope=\"col\">Path or command</th><th scope=\"col\">Risk</th>"
      "<th scope=\"col\">Tier</th><th scope=\"col\">Age</th><th scope=\"col\">Time left</th>"
      "<th scope=\"col\">Proposer</th></tr></thead>\n<tbody>\n";
  for (const auto& [p, expired] : rows) {
    auto age = age_seconds(ws, p);
    out += "<tr>" + cell("#", fmt::format("<a href=\"/p/{0}\">{0}</a>", p.id)) +
           cell("Status", expired ? "expired" : escape(to_string(p.state))) + cell("Kind", escape(to_string(p.kind))) +
           cell("Path or command",
                fmt::format("<a href=\"/p/{}\">{}</a>", p.id,
                            p.kind == Kind::changeset ? files_of(ws, p) : what_of(ws, p)),
                "what") +
           cell("Risk", p.kind == Kind::run ? std::string("\u2014") : badge(to_string(p.risk))) +
           cell("Tier", badge(to_string(p.tier))) + cell("Age", age ? human_duration(*age) : "?") +
           cell("Time left", time_left(ws, p, expired)) +
           cell("Proposer", p.agent.empty() ? "\u2014" : say(ws, p.agent)) + "</tr>\n";
  }
  for (const auto& [id, why] : corrupt)
    out += fmt::format("<tr>{}{}<td data-label=\"Why\" colspan=\"7\">{}</td></tr>\n", cell("#", std::to_string(id)),
                       cell("Status", "corrupt"), say(ws, why));
  out += "</tbody>\n</table>\n";
  return out;
}

std::string proposal_main(const Workspace& ws, const Guard& g, const ProposalView& v) {
  const Proposal& p = v.proposal;
  std::string out =
      fmt::format("<h1>Proposal {} \u00b7 {} \u00b7 {}</h1>\n", p.id, escape(to_string(p.kind)), what_of(ws, p));
  out += "<dl class=\"facts\">\n";
  out += fact("Status", v.expired ? std::string("expired (past [approval] timeout; it can no longer be approved)")
                                  : escape(to_string(p.state)));
  if (p.kind == Kind::run) {
    out += fact("Command", what_of(ws, p));
    out += fact("Working folder", fmt::format("<code>{}</code>", say(ws, p.cwd.empty() ? "." : p.cwd)));
    out += fact("Verdict", fmt::format("<span class=\"badge {0}\">{0}</span>{1}", escape(to_string(p.tier)),
                                       p.tier_reason.empty() ? "" : " \u2014 " + say(ws, p.tier_reason)));
    if (p.network) out += fact("Network", "on for this run: it can reach the internet and local services");
  } else {
    out += fact(p.kind == Kind::changeset ? "Files" : "Path", what_of(ws, p));
    out += fact("Risk", badge(to_string(p.risk)) + (p.kind == Kind::changeset ? " (its highest file's)" : ""));
    out +=
        fact("Tier", badge(to_string(p.tier)) + (p.tier == Tier::confirm ? " \u2014 " + say(ws, p.tier_reason) : ""));
  }
  if (p.kind == Kind::changeset) {
    // Every file's blast radius and policy verdict, not the first file's.
    out += fact("Blast radius", per_file(ws, p, [&ws](const Change& c) {
                  return badge(to_string(c.risk)) + (c.risk_reason.empty() ? "" : " " + say(ws, c.risk_reason));
                }));
    out += fact("Policy", escape(to_string(p.decision)) + per_file(ws, p, [&ws](const Change& c) {
                            return escape(to_string(c.decision)) +
                                   (c.decision_rule.empty() ? "" : " (" + say(ws, c.decision_rule) + ")");
                          }));
  } else {
    if (p.kind != Kind::run) out += fact("Blast radius", p.risk_reason.empty() ? "\u2014" : say(ws, p.risk_reason));
    out += fact("Policy", fmt::format("{} ({})", escape(to_string(p.decision)), say(ws, p.decision_rule)));
  }
  out += fact("Proposer", p.agent.empty() ? "\u2014" : say(ws, p.agent));
  auto age = age_seconds(ws, p);
  out += fact("Proposed", fmt::format("{} ({} ago)", escape(p.created), age ? human_duration(*age) : "?"));
  if (p.state == State::pending) out += fact("Time left", time_left(ws, p, v.expired));
  if (!p.decided_by.empty())
    out += fact("Decided", fmt::format("{} by {}", escape(p.decided_at), say(ws, p.decided_by)));
  if (!p.result.empty()) out += fact("Result", say(ws, p.result));
  if (!p.rollback_id.empty()) out += fact("Rollback id", fmt::format("<code>{}</code>", say(ws, p.rollback_id)));
  out += team_facts(ws, p);
  out += "</dl>\n";
  if (!v.team_note.empty()) out += fmt::format("<p class=\"warn\" role=\"note\">{}</p>\n", say(ws, v.team_note));
  out += "<h2>Why</h2>\n" + quoted(ws, p.why);
  out += "<h2>Summary</h2>\n" + quoted(ws, p.summary);
  if (!p.reason.empty()) out += "<h2>Reason</h2>\n" + quoted(ws, p.reason);
  if (p.kind != Kind::run) out += "<h2>Validation</h2>\n" + validation_html(ws, p.validation);
  if (p.review.status != "none") {
    out += fmt::format(
        "<h2>Review</h2>\n<p>Advisory text from [hooks] review ({}); untrusted, it cannot approve "
        "anything.</p>\n",
        escape(p.review.status));
    out += quoted(ws, p.review.text);
  }
  if (p.kind == Kind::changeset) out += diffstat_html(ws, p);
  const FileDiff* d = v.review && v.review->diff ? &*v.review->diff : v.diff ? &*v.diff : nullptr;
  if (d && p.kind == Kind::changeset && !d->parts.empty())
    out += changeset_diff_section(ws, p, *d, v.review && !v.cannot_decide);
  else if (d)
    out += diff_section(*d, p.id);
  else if (!v.diff_note.empty())
    out += fmt::format("<p>{}</p>\n", say(ws, v.diff_note));
  if (!v.output.out.empty() || !v.output.err.empty()) {
    out += "<h2>Output</h2>\n";
    out += quoted(ws, v.output.out + v.output.err);
  }
  if (v.cannot_decide)
    out += fmt::format("<p class=\"warn\" role=\"note\">No decision from this page: {}</p>\n",
                       say(ws, v.cannot_decide->message));
  else if (v.review && p.team.remote())
    out += "<h2>Decide</h2>\n" + team_forms(g, *v.review);
  else if (v.review)
    out += "<h2>Decide</h2>\n" + forms(g, *v.review, v.record_only, v.always);
  return out;
}

std::string log_main(const Workspace& ws, const Guard& g, const std::vector<Entry>& entries) {
  std::string out = "<h1>Changelog</h1>\n";
  if (entries.empty()) return out + "<p>Nothing has been logged yet.</p>\n";
  for (const auto& e : entries) {
    out += fmt::format("<section class=\"entry\" aria-label=\"{} {}\">\n<h2>{} \u00b7 {}</h2>\n<dl class=\"facts\">\n",
                       escape(e.kind), escape(e.time), escape(e.time), escape(e.kind));
    std::string files;
    for (const auto& f : e.files) files += (files.empty() ? "" : "<br>") + fmt::format("<code>{}</code>", say(ws, f));
    out += fact("File(s)", files.empty() ? "\u2014" : files);
    out += fact("Action", say(ws, e.action));
    out += fact("Summary", say(ws, e.summary));
    out += fact("Why", say(ws, e.why));
    out += fact("Approver", say(ws, e.approver));
    out += fact("Result", say(ws, e.result));
    out += fact("Rollback", say(ws, e.rollback));
    out += fact("Rollback id", fmt::format("<code>{}</code>", say(ws, e.rollback_id)));
    out += "</dl>\n";
    if (!e.rollback_id.empty() && !e.rollback.empty())
      out += fmt::format(
          "<form method=\"get\" action=\"/rollback/{0}\"><button class=\"rollback\" type=\"submit\" "
          "aria-label=\"Roll back {0}\">Roll back\u2026</button></form>\n",
          escape(e.rollback_id));
    out += "</section>\n";
  }
  (void)g;
  return out;
}

std::string rollback_main(const Workspace& ws, const Guard& g, const gate::RollbackReview& r) {
  std::string out = fmt::format(
      "<h1>Roll back {}</h1>\n<p>This restores every file the entry changed to what it was "
      "before, with its own backup and changelog entry:</p>\n<ul>\n",
      say(ws, r.id));
  for (const auto& f : r.record.files) out += fmt::format("<li><code>{}</code></li>\n", say(ws, f.rel));
  out += "</ul>\n";
  if (r.decision == Decision::allow)
    out += fmt::format("<p>The policy allows this rollback without a question ({}).</p>\n", say(ws, r.rule));
  const std::string action = fmt::format("/rollback/{}", r.id);
  out += fmt::format("<form class=\"decide\" method=\"post\" action=\"{}\">\n", escape(action));
  out += hidden("csrf", g.csrf_for(action));
  out += "<button class=\"rollback\" type=\"submit\">Roll back</button>\n</form>\n";
  out += "<p><a href=\"/log\">Back to the changelog</a></p>\n";
  return out;
}

std::string outcome_main(std::string_view heading, const std::vector<std::string>& lines, std::string_view back_href,
                         std::string_view back_text) {
  std::string out = fmt::format("<h1>{}</h1>\n", escape(heading));
  for (const auto& l : lines)
    out += fmt::format("<p role=\"status\">{}</p>\n", escape(make_visible(l, Allow::nothing)));
  out += fmt::format("<p><a href=\"{}\">{}</a></p>\n", escape(back_href), escape(back_text));
  return out;
}

}  // namespace kai::web
