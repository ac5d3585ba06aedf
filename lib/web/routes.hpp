#pragma once
// The review page of `kaicoder serve` as request → response, without a
// socket: cmd/serve.cpp parses HTTP with cpp-httplib and hands each request
// to App::handle; the unit tests call it directly.
//
//   GET  /login?token=T    sets the session cookie, redirects to /
//   GET  /                 the proposals, pending first
//   GET  /p/N              one proposal: diff or command, checks, review, forms
//   POST /p/N/approve      csrf, digest, cut, confirm   → gate::approve
//                          (a team proposal of another clone: → team::decide, a signed decision)
//   POST /p/N/reject       csrf, reason                 → gate::reject (team: team::decide)
//   GET  /log              the changelog, a Roll back button per reversible entry
//   GET  /rollback/ID      what the rollback restores, and its form
//   POST /rollback/ID      csrf                         → gate::rollback
//   GET  /state.json       what the pages poll: a version and each proposal's status and digest
//   GET  /app.css, /app.js the page's own stylesheet and script
//
// Every decision is the terminal's: the same gate call, the same lock and
// re-checks, the decider recorded as "<user> (web)". A page decides
// nothing: it shows what lib/gate prepared and posts back the digest it
// showed. The workspace is opened anew for every request, as every
// terminal command opens its own: a kaicoder.toml changed since (approvers,
// policy) or a root no longer trusted counts at once. Not thread-safe: the
// server loop calls it one request at a time.

#include <functional>
#include <optional>

#include "lib/gate/gate.hpp"
#include "lib/team/team.hpp"
#include "lib/web/http.hpp"
#include "lib/web/session.hpp"

namespace kai::web {

class App {
public:
  // Opens the workspace (Workspace::open with the process's Env and Clock).
  using Opener = std::function<Result<Workspace>()>;
  // `who` is the user running serve, with Channel::web.
  App(Opener open, Decider who, Guard guard);

  // The response to `r`, security headers included. Never throws.
  Response handle(const Request& r);

  const Guard& guard() const { return m_guard; }

private:
  Response route(const Request& r);
  Response login(const Request& r);
  Response list_page();
  Response proposal_page(int id);
  Response approve(const Request& r, int id);
  Response reject(const Request& r, int id);
  // A team proposal of another clone: a signed decision (lib/team), as at a terminal.
  Response approve_team(const Request& r, int id, const std::string& then, bool confirmed);
  Response team_decided(const team::Decided& d, std::string_view verb);
  Response log_page();
  Response rollback_page(const std::string& id);
  Response rollback(const Request& r, const std::string& id);
  Response state_json();
  // The page for a refusal from the gate, with the status that fits it.
  Response refused(const Error& e, std::string_view back_href);
  // Send the notify events a transition queued (no lock is held now).
  void after_change();

  Opener m_open;
  std::optional<Workspace> m_ws;
  Decider m_who;
  Guard m_guard;
};

}  // namespace kai::web
