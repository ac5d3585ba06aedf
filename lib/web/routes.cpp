#include "lib/web/routes.hpp"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/run/hooks.hpp"
#include "lib/gate/propose.hpp"
#include "lib/store/proposal.hpp"
#include "lib/team/team.hpp"
#include "lib/web/assets.hpp"
#include "lib/web/html.hpp"
#include "lib/web/pages.hpp"
#include "lib/util/strings.hpp"

namespace kai::web {

namespace {

// "/p/12" → 12, "/p/12/approve" with `suffix` "/approve" → 12; nullopt
// for anything else. The digits are read by the one id parser every
// command reads an id with (lib/store/proposal): no sign, space, leading
// zero or other base, at most nine digits.
std::optional<int> proposal_id(std::string_view path, std::string_view suffix) {
  if (!path.starts_with("/p/") || !path.ends_with(suffix) || path.size() < 3 + suffix.size()) return std::nullopt;
  return parse_proposal_id(path.substr(3, path.size() - 3 - suffix.size()));
}

// "/rollback/20260709T142530Z-2" → the id; only the characters rollback ids have.
std::optional<std::string> rollback_id(std::string_view path) {
  if (!path.starts_with("/rollback/")) return std::nullopt;
  std::string_view id = path.substr(10);
  if (id.empty() || id.size() > 40) return std::nullopt;
  if (!std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-';
      }))
    return std::nullopt;
  return std::string(id);
}

Response asset(std::string_view body, std::string_view type) {
  Response r;
  r.content_type = std::string(type);
  r.body = std::string(body);
  return r;
}

// A post whose CSRF token is missing or belongs to another form.
Response form_refused(std::string_view verb, std::string_view again) {
  return error_page(403, "Form refused",
                    fmt::format("The form's CSRF token is missing or does not match it: only a form this page served "
                                "may {}.",
                                verb),
                    again);
}

}  // namespace

App::App(Opener open, Decider who, Guard guard)
    : m_open(std::move(open)), m_who(std::move(who)), m_guard(std::move(guard)) {}

Response App::handle(const Request& r) {
  Response out;
  try {
    if (auto no = m_guard.refusal(r)) {
      out = std::move(*no);
    } else if (r.path == "/app.css" || r.path == "/app.js" || r.path == "/login") {
      out = route(r);
    } else {
      m_ws.reset();
      auto ws = m_open();
      if (!ws) {
        out =
            error_page(ws.error().code == Errc::denied ? 403 : 500, "Cannot open the root",
                       make_visible(ws.error().message, Allow::nothing), make_visible(ws.error().hint, Allow::nothing));
      } else {
        m_ws.emplace(std::move(*ws));
        out = route(r);
      }
    }
  } catch (const std::exception& e) {
    out = error_page(500, "Internal error", make_visible(e.what(), Allow::nothing));
  }
  add_security_headers(out);
  return out;
}

Response App::route(const Request& r) {
  const std::string& path = r.path;
  if (r.method == "GET") {
    if (path == "/login") return login(r);
    if (path == "/app.css") return asset(stylesheet(), "text/css; charset=utf-8");
    if (path == "/app.js") return asset(script(), "text/javascript; charset=utf-8");
    if (path == "/") return list_page();
    if (path == "/log") return log_page();
    if (path == "/state.json") return state_json();
    if (auto id = proposal_id(path, "")) return proposal_page(*id);
    if (auto id = rollback_id(path)) return rollback_page(*id);
  } else if (r.method == "POST") {
    if (auto id = proposal_id(path, "/approve")) return approve(r, *id);
    if (auto id = proposal_id(path, "/reject")) return reject(r, *id);
    if (auto id = rollback_id(path)) return rollback(r, *id);
  } else {
    Response no = error_page(405, "Method not allowed", "The review page answers GET and POST only.");
    no.headers.emplace_back("Allow", "GET, POST");
    return no;
  }
  return error_page(404, "Not found", "There is no such page here.");
}

Response App::login(const Request& r) {
  auto t = r.query.find("token");
  if (t == r.query.end() || !m_guard.token_ok(t->second))
    return error_page(403, "Sign-in refused", "The sign-in address is wrong, or belongs to an earlier kaicoder serve.",
                      "Open the address the running kaicoder serve wrote on its terminal.");
  // The token leaves the address bar at once; from now on the cookie carries it.
  Response out = redirect("/");
  out.headers.emplace_back("Set-Cookie", m_guard.session_cookie());
  return out;
}

Response App::list_page() {
  // staging/ from its records, the archive from its sealed listings (Store::catalog).
  auto all = m_ws->store.catalog(Store::Detail::listed);
  if (!all) return refused(all.error(), "/");
  std::vector<Row> rows;
  std::vector<std::pair<int, std::string>> corrupt = std::move(all->corrupt);
  // As `kaicoder list`: pending first (oldest first, they expire first), then
  // the rest newest first; the catalog is in ascending id, so one pass each
  // way places them, each record moved once.
  std::vector<Proposal>& ps = all->proposals;
  std::vector<char> late(ps.size());
  for (size_t i = 0; i < ps.size(); ++i) late[i] = past_timeout(*m_ws, ps[i]);
  auto waiting = [&](size_t i) { return ps[i].state == State::pending && !late[i]; };
  rows.reserve(ps.size());
  for (size_t i = 0; i < ps.size(); ++i)
    if (waiting(i)) rows.push_back({std::move(ps[i]), late[i] != 0});
  for (size_t i = ps.size(); i-- > 0;)
    if (!waiting(i)) rows.push_back({std::move(ps[i]), late[i] != 0});
  return html_response(200, document({"Proposals", Live::swap}, list_main(*m_ws, rows, corrupt)));
}

Response App::proposal_page(int id) {
  auto p = m_ws->store.load(id);
  if (!p) return refused(p.error(), "/");
  ProposalView v;
  v.expired = past_timeout(*m_ws, *p);
  if (p->team.remote() && p->state == State::pending && !v.expired) {
    // A team proposal of another clone: what the terminal's approve shows
    // before it asks, prepared by the same lib/team call.
    auto rv = team::prepare_decision(*m_ws, id, m_who, DiffOptions{});
    after_change();
    if (rv) {
      gate::ApprovalReview review;
      review.proposal = rv->proposal;
      review.diff = std::move(rv->diff);
      review.diff_cut = rv->diff_cut;
      review.digest = rv->digest;
      review.need = rv->need;
      v.proposal = std::move(rv->proposal);
      v.team_note = rv->base_note;
      v.review = std::move(review);
    } else {
      v.cannot_decide = rv.error();
    }
  } else if (p->state == State::pending && !v.expired) {
    // What the terminal's approve shows before it asks: the same call (as
    // `approve --no-apply` in propose-only mode, where nothing is applied).
    v.record_only = gate::propose_only(*m_ws);
    auto rv = gate::prepare_approval(*m_ws, id, m_who, {v.record_only ? ApplyNow::no : ApplyNow::yes, Force::no});
    after_change();
    if (rv) {
      v.proposal = rv->proposal;
      // What the terminal's `a` would add, offered the same way (never for
      // the confirm tier, protected paths, blocked leaves, changesets or team
      // proposals, nor when the approval cannot be carried out).
      if (!rv->refusal && !v.record_only)
        v.always = gate::always_rule(*m_ws, rv->proposal, rv->need.tier, ApplyNow::yes);
      v.review = std::move(*rv);
    } else {
      v.cannot_decide = rv.error();
      auto again = m_ws->store.load(id);  // preparing may have recorded it failed or expired
      if (!again) return refused(again.error(), "/");
      p = std::move(again);
    }
  }
  if (!v.review) {
    v.proposal = *p;
    if (p->kind == Kind::run) {
      v.output = run_output(*m_ws, id);
    } else if (p->team.remote()) {
      // Its diff is the commit against its base, in any state.
      auto d = team::remote_diff(*m_ws, *p, DiffOptions{});
      if (d)
        v.diff = std::move(*d);
      else
        v.diff_note = fmt::format("no diff: {}", d.error().message);
    } else if (p->state == State::approved || p->state == State::failed ||
               (p->state == State::pending && !v.cannot_decide)) {
      auto d = current_diff(*m_ws, *p, DiffOptions{});
      if (d)
        v.diff = std::move(*d);
      else
        v.diff_note = fmt::format("no diff: {}", d.error().message);
    }
  }
  PageMeta meta{fmt::format("Proposal {}", id), Live::watch, id, v.review ? v.review->digest : digest(v.proposal),
                std::string(to_string(v.proposal.state))};
  return html_response(200, document(meta, proposal_main(*m_ws, m_guard, v)));
}

Response App::approve(const Request& r, int id) {
  const std::string action = fmt::format("/p/{}/approve", id);
  const std::string seen = r.field("digest"), cut = r.field("cut");
  if (!m_guard.csrf_ok(r, approve_binding(action, seen, cut)))
    return form_refused("approve", "Open the proposal again and decide from there.");
  // Which button: apply now (the default), approve only (--no-apply),
  // apply with a failed validation overridden (--force), or approve and
  // always allow (the terminal's `a`).
  const std::string then = r.field("then");
  if (then != "" && then != "apply" && then != "record" && then != "force" && then != "always" && then != "sign")
    return error_page(400, "Bad request", "The form asked for something an approval cannot do.");
  const bool confirmed = trim(r.field("confirm")) == "CONFIRM";
  // A team proposal of another clone is decided with a signed decision,
  // through the lib/team calls the terminal's approve makes.
  if (auto peek = m_ws->store.load(id, Store::Payloads::none); peek && peek->team.remote())
    return approve_team(r, id, then, confirmed);
  if (then == "sign")
    return refused(
        make_error(Errc::usage, fmt::format("proposal {} was not approved: it is not a team proposal of another clone; "
                                            "nothing is signed for it",
                                            id)),
        fmt::format("/p/{}", id));
  gate::Request req;
  req.id = id;
  req.who = m_who;
  req.answer = confirmed ? gate::Answer::confirm : gate::Answer::yes;
  req.seen_digest = seen;
  req.diff_cut = cut == "1";
  req.opts = {then == "record" ? ApplyNow::no : ApplyNow::yes, then == "force" ? Force::yes : Force::no};
  const std::string back = fmt::format("/p/{}", id);
  auto refuse = [&](Errc code, const std::string& message, const std::string& hint) {
    return refused(make_error(code, fmt::format("proposal {} was not approved: {}", id, message), hint), back);
  };
  // Never approve unseen (pages.hpp): a long changeset's approval carries
  // every file's diff opened, or CONFIRM. The gate re-checks the digest and
  // the tier; this is the one rule only the page can break. The diff is
  // made again as the page made it; a changeset whose diff cannot be made
  // was not seen either.
  if (!confirmed) {
    auto p = m_ws->store.load(id);
    if (p && p->kind == Kind::changeset && p->state == State::pending && !past_timeout(*m_ws, *p)) {
      auto d = current_diff(*m_ws, *p, DiffOptions{});
      if (!d) return refused(d.error(), back);
      if (files_must_be_opened(*p, *d) && !opened_every_file(*d, r.field("opened")))
        return refuse(Errc::denied,
                      fmt::format("its diff is long (over {} lines) and not every file's diff was opened on the "
                                  "page, nor was CONFIRM typed",
                                  k_open_diff_lines),
                      "open each file's diff on the proposal's page, or type CONFIRM, then approve");
    }
  }
  std::optional<gate::AllowRule> always;
  std::string rule_entry;
  if (then == "always") {
    // The rule the terminal's `a` adds, computed again now as the page
    // computed it; written only when it is the one the page showed, for
    // the proposal the page showed, then approved as for a yes.
    auto shown = gate::prepare_approval(*m_ws, id, m_who, req.opts);
    after_change();
    if (!shown) return refused(shown.error(), back);
    if (shown->digest != seen)
      return refuse(Errc::conflict, "it changed while it was being reviewed; no rule was written",
                    "open the proposal again and decide on it as it is now");
    if (!shown->refusal) always = gate::always_rule(*m_ws, shown->proposal, shown->need.tier, ApplyNow::yes);
    if (!always)
      return refuse(Errc::denied,
                    "\"always allow\" is not offered for it (the confirm tier, a protected path, a blocked command, "
                    "a changeset, a team proposal or propose-only mode); no rule was written",
                    "approve it without the rule");
    if (!m_guard.token_ok_for(r.field("rule"), always_binding(action, *always)))
      return refuse(Errc::conflict,
                    "the rule \"always allow\" would add now is not the one the page showed; no rule was written",
                    "open the proposal again to see the rule as it is now");
    auto added = gate::add_allow_rule(*m_ws, *always, m_who, shown->proposal);
    after_change();
    if (!added) return refused(added.error(), back);
    rule_entry = *added;
  }
  auto a = gate::approve(*m_ws, req);
  after_change();
  if (!a) return refused(a.error(), back);
  std::vector<std::string> lines;
  if (always)
    lines.push_back(
        m_ws->redact(fmt::format("added to kaicoder.toml and trusted: always allow {} (undo: kaicoder "
                                 "rollback {})",
                                 always->words(), rule_entry)));
  const Proposal& p = a->proposal;
  if (a->ran) {
    lines.push_back(fmt::format("ran proposal {}: exit code {}", p.id, a->ran->result.exit_code));
  } else if (a->applied && a->applied->unchanged) {
    lines.push_back(fmt::format("proposal {}: the file already holds this content; nothing written", p.id));
  } else if (a->applied && p.kind == Kind::changeset) {
    lines.push_back(fmt::format("applied proposal {}: changeset of {} file{}", p.id, p.changes.size(),
                                p.changes.size() == 1 ? "" : "s"));
    for (const auto& f : a->applied->entry.files) lines.push_back(m_ws->redact(fmt::format("file: {}", f)));
    lines.push_back(m_ws->redact(
        fmt::format("backups: {}", a->applied->backup.empty() ? "\u2014 (new files only)" : a->applied->backup)));
    lines.push_back(fmt::format("rollback id: {} (undoes every file)", a->applied->rollback_id));
  } else if (a->applied) {
    lines.push_back(m_ws->redact(fmt::format("applied proposal {} to {}", p.id, p.path)));
    lines.push_back(
        m_ws->redact(fmt::format("backup: {}", a->applied->backup.empty() ? "\u2014 (new file)" : a->applied->backup)));
    lines.push_back(fmt::format("rollback id: {}", a->applied->rollback_id));
  } else {
    lines.push_back(fmt::format("approved proposal {}; {} it at a terminal with: kaicoder apply {}", p.id,
                                p.kind == Kind::run ? "run" : "apply", p.id));
  }
  lines.push_back(m_ws->redact(fmt::format("approver: {}", m_who.recorded())));
  return html_response(200, document({fmt::format("Proposal {} approved", id)},
                                     outcome_main(fmt::format("Proposal {} approved", id), lines,
                                                  fmt::format("/p/{}", id), "See the proposal as it is now")));
}

Response App::approve_team(const Request& r, int id, const std::string& then, bool confirmed) {
  const std::string back = fmt::format("/p/{}", id);
  if (then != "" && then != "sign")
    return refused(make_error(Errc::usage,
                              fmt::format("proposal {} was not approved: approve only, force and always allow do not "
                                          "go with a team proposal",
                                          id),
                              "it is applied where it was proposed, once the signed decision arrives there"),
                   back);
  // What the terminal's approve prepares, checked again now: the page's own
  // rule (never approve unseen) on the diff of the commit the page showed.
  auto rv = team::prepare_decision(*m_ws, id, m_who, DiffOptions{});
  after_change();
  if (!rv) return refused(rv.error(), back);
  if (!confirmed && files_must_be_opened(rv->proposal, rv->diff) && !opened_every_file(rv->diff, r.field("opened")))
    return refused(
        make_error(Errc::denied,
                   fmt::format("proposal {} was not approved: its diff is long (over {} lines) and not every file's "
                               "diff was opened on the page, nor was CONFIRM typed; nothing was signed",
                               id, k_open_diff_lines),
                   "open each file's diff on the proposal's page, or type CONFIRM, then approve"),
        back);
  // The tier (CONFIRM), the digest the page showed and the cut flag its
  // form carried are checked by team::decide under the lock, before the key signs.
  team::DecisionRequest req{
      id, m_who, true, confirmed ? gate::Answer::confirm : gate::Answer::yes, r.field("digest"), r.field("cut") == "1",
      {}};
  auto d = team::decide(*m_ws, req);
  after_change();
  if (!d) return refused(d.error(), back);
  return team_decided(*d, "approved");
}

Response App::team_decided(const team::Decided& d, std::string_view verb) {
  const Proposal& p = d.proposal;
  std::vector<std::string> lines{m_ws->redact(
      fmt::format("{} team proposal {}: decision {} signed by {}", verb, p.id, d.decision.substr(0, 12), d.signer))};
  std::string heading;
  if (d.push_error) {
    heading = fmt::format("Proposal {} {}: signed, waiting to push", p.id, verb);
    lines.push_back(m_ws->redact(fmt::format("not pushed yet: {}", d.push_error->message)));
    lines.push_back(fmt::format(
        "the decision is kept here and pushed by the next kaicoder fetch, or now with: kaicoder publish {}", p.id));
  } else {
    heading = fmt::format("Proposal {} {}: signed and pushed", p.id, verb);
    lines.push_back(m_ws->redact(fmt::format("pushed to the team remote; clone {} {} it when it next waits or fetches",
                                             p.team.origin, verb == "approved" ? "applies" : "drops")));
  }
  lines.push_back(m_ws->redact(fmt::format("decider: {}", m_who.recorded())));
  // 202: decided and signed here, not yet where it counts.
  return html_response(
      d.push_error ? 202 : 200,
      document({heading}, outcome_main(heading, lines, fmt::format("/p/{}", p.id), "See the proposal as it is now")));
}

Response App::reject(const Request& r, int id) {
  const std::string action = fmt::format("/p/{}/reject", id);
  if (!m_guard.csrf_ok(r, action)) return form_refused("reject", "Open the proposal again and decide from there.");
  if (auto peek = m_ws->store.load(id, Store::Payloads::none); peek && peek->team.remote()) {
    // As the terminal's reject of a team proposal: prepared, then a signed decision.
    const std::string back = fmt::format("/p/{}", id);
    auto rv = team::prepare_decision(*m_ws, id, m_who, DiffOptions{});
    after_change();
    if (!rv) return refused(rv.error(), back);
    team::DecisionRequest req{id, m_who, false, gate::Answer::yes, rv->digest, rv->diff_cut, r.field("reason")};
    auto d = team::decide(*m_ws, req);
    after_change();
    if (!d) return refused(d.error(), back);
    return team_decided(*d, "rejected");
  }
  gate::Request req;
  req.id = id;
  req.who = m_who;
  req.answer = gate::Answer::yes;
  auto p = gate::reject(*m_ws, req, r.field("reason"));
  after_change();
  if (!p) return refused(p.error(), fmt::format("/p/{}", id));
  return html_response(200, document({fmt::format("Proposal {} rejected", id)},
                                     outcome_main(fmt::format("Proposal {} rejected", id),
                                                  {fmt::format("rejected proposal {}; nothing was written", id)}, "/",
                                                  "Back to the proposals")));
}

Response App::log_page() {
  auto entries = m_ws->changelog.newest(100);
  if (!entries) return refused(entries.error(), "/");
  return html_response(200, document({"Changelog", Live::swap}, log_main(*m_ws, m_guard, *entries)));
}

Response App::rollback_page(const std::string& id) {
  auto rv = gate::prepare_rollback(*m_ws, id, m_who, Force::no);
  after_change();
  if (!rv) return refused(rv.error(), "/log");
  return html_response(200, document({fmt::format("Roll back {}", id)}, rollback_main(*m_ws, m_guard, *rv)));
}

Response App::rollback(const Request& r, const std::string& id) {
  const std::string action = fmt::format("/rollback/{}", id);
  if (!m_guard.csrf_ok(r, action))
    return form_refused("roll back", "Open the changelog again and roll back from there.");
  auto shown = gate::prepare_rollback(*m_ws, id, m_who, Force::no);
  after_change();
  if (!shown) return refused(shown.error(), "/log");
  gate::Request req;
  req.who = m_who;
  req.answer = gate::Answer::yes;
  auto done = gate::rollback(*m_ws, *shown, req);
  after_change();
  if (!done) return refused(done.error(), "/log");
  std::vector<std::string> lines{fmt::format("rolled back {}", done->undone)};
  if (!done->outcome.rollback_id.empty()) lines.push_back(fmt::format("rollback id: {}", done->outcome.rollback_id));
  return html_response(
      200, document({fmt::format("Rolled back {}", id)},
                    outcome_main(fmt::format("Rolled back {}", id), lines, "/log", "Back to the changelog")));
}

Response App::state_json() {
  nlohmann::json proposals = nlohmann::json::object();
  std::string all;
  if (auto every = m_ws->store.catalog(Store::Detail::listed)) {
    for (const Proposal& q : every->proposals) {
      const Proposal* p = &q;
      const int id = q.id;
      std::string status(to_string(p->state));
      if (past_timeout(*m_ws, *p)) status = "timeout";
      std::string dg;
      // What a proposal's page shows as its digest: a team proposal of
      // another clone binds to its commit.
      if (p->state == State::pending && p->team.remote())
        dg = p->team.commit;
      else if (p->state == State::pending)
        if (auto full = m_ws->store.load(id)) dg = digest(*full);
      proposals[std::to_string(id)] = {{"status", status}, {"digest", dg}};
      all += fmt::format("{}:{}:{}\n", id, status, dg);
    }
  }
  if (auto last = m_ws->journal.last()) all += *last;
  Response r;
  r.content_type = "application/json";
  r.body = nlohmann::json{{"version", fmt::format("{:016x}", std::hash<std::string>{}(all))}, {"proposals", proposals}}
               .dump();
  return r;
}

Response App::refused(const Error& e, std::string_view back_href) {
  int status = 500;
  std::string title = "Refused";
  switch (e.code) {
    case Errc::denied:
      status = 403;
      title = "Denied";
      break;
    case Errc::rejected:
      status = 403;
      title = "Not confirmed";
      break;
    case Errc::conflict:
      status = 409;
      title = "Conflict";
      break;
    case Errc::timeout:
      status = 410;
      title = "Expired";
      break;
    case Errc::not_found:
      status = 404;
      title = "Not found";
      break;
    case Errc::usage:
      status = 400;
      title = "Bad request";
      break;
    case Errc::pending:
      status = 409;
      title = "Still pending";
      break;
    case Errc::io:
      status = 500;
      title = "Error";
      break;
  }
  Response out = error_page(status, title, make_visible(m_ws->redact(e.message), Allow::nothing),
                            make_visible(m_ws->redact(e.hint), Allow::nothing));
  out.body.insert(out.body.rfind("</main>"), fmt::format("<p><a href=\"{}\">Back</a></p>\n", escape(back_href)));
  return out;
}

void App::after_change() { flush_notify(*m_ws); }

}  // namespace kai::web
