#include "cmd/agent_side.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cmd/render.hpp"
#include "lib/gate/status.hpp"

namespace kai::cmd {
using json = nlohmann::json;

namespace {

// kaicoder mcp and kaicoder hook take the agent side's path inside lib/
// (lib/two_user/agent_side): their writes go to the spool too.
constexpr const char* k_agent_commands[] = {"propose", "run", "wait", "list", "show",
                                            "read",    "ls",  "log",  "mcp",  "hook"};

}  // namespace

Result<Workspace> open_agent_workspace(const Env& env, const Clock& clock, const AgentSide& side,
                                       const std::string& command) {
  if (std::none_of(std::begin(k_agent_commands), std::end(k_agent_commands),
                   [&](const char* c) { return command == c; }))
    return make_error(
        Errc::denied,
        fmt::format("two-user mode: '{}' belongs to the owner of this tree (uid {}); the agent user proposes "
                    "and reads, it never decides or applies",
                    command, side.owner),
        "ask the owner to review it: kaicoder list, then kaicoder approve ID at their own terminal");
  Env e = env;
  e.root_override = side.root;
  return Workspace::open_without_config(e, clock);
}

bool takes_in_first(const std::string& command) {
  static const char* k[] = {"propose", "run", "wait", "approve", "reject", "apply", "rollback", "intake", "serve"};
  return std::any_of(std::begin(k), std::end(k), [&](const char* c) { return command == c; });
}

void take_in_spool(Workspace& ws, const std::string& command, IntakeReport& into) {
  if (!two_user(ws)) return;
  // intake and serve take in everything; every other command a bounded
  // batch, so that a flooded spool never keeps the owner from their prompt.
  const bool all = command == "intake" || command == "serve";
  auto r = intake(ws, all ? 0 : k_intake_batch);
  if (!r) {
    err("kaicoder: warning: the spool was not taken in: {}\n", r.error().message);
    return;
  }
  into = std::move(*r);
  if (command == "intake") return;
  if (size_t n = into.still_waiting)
    err("kaicoder: took in {} spool entries; {} more wait: kaicoder intake takes them all in\n",
        into.taken.size() + into.quarantined.size(), n);
  for (const auto& t : into.taken)
    if (t.proposal) err("kaicoder: took in ticket {} from {} as proposal {}\n", t.ticket, t.proposer, t.proposal);
  for (const auto& t : into.quarantined)
    err("kaicoder: quarantined spool entry {}: {}\n", t.ticket.empty() ? "(bad name)" : t.ticket,
        t.error ? t.error->message : "");
}

void note_waiting_spool(const Workspace& ws) {
  if (!two_user(ws)) return;
  if (size_t n = waiting_entries(ws.store.dir()).size())
    err("kaicoder: {} spool entr{} of the agent user wait{} for intake: kaicoder intake (or any command that "
        "decides)\n",
        n, n == 1 ? "y" : "ies", n == 1 ? "s" : "");
}

json intake_json(const IntakeReport& r) {
  json taken = json::array(), quarantined = json::array();
  for (const auto& t : r.taken) taken.push_back(to_json(t));
  for (const auto& t : r.quarantined) quarantined.push_back(to_json(t));
  return {{"taken", taken}, {"quarantined", quarantined}};
}

void print_intake(const IntakeReport& r) {
  for (const auto& t : r.taken) {
    if (t.proposal)
      out("ticket {} from {} (uid {}): proposal {}{}\n", t.ticket, t.proposer, t.uid, t.proposal,
          t.verdict.empty() ? "" : " (" + t.verdict + ")");
    else
      out("ticket {} from {} (uid {}): refused: {}\n", t.ticket, t.proposer, t.uid, t.error ? t.error->message : "");
  }
  for (const auto& t : r.quarantined)
    out("quarantined {}: {}\n", t.ticket.empty() ? "an entry with a bad name" : "ticket " + t.ticket,
        t.error ? t.error->message : "");
}

int report_spooled(Session& s, Workspace& ws, const Result<std::string>& ticket, const char* command, bool wait) {
  if (!ticket) return report(s, ticket.error());
  if (wait) {
    err("kaicoder: ticket {} is in the spool for the owner: resume with kaicoder wait {}\n", *ticket, *ticket);
    std::fflush(stderr);
    return agent_wait(s, ws, *ticket, std::nullopt);
  }
  if (s.json()) {
    print_json({{"ok", true}, {"command", command}, {"ticket", *ticket}, {"spooled", true}});
    return k_exit_ok;
  }
  out("ticket {}: in the spool for the owner (two-user mode)\n", *ticket);
  out("  the owner's next kaicoder command takes it in; then: kaicoder wait {}   (or: kaicoder show {})\n", *ticket,
      *ticket);
  return k_exit_ok;
}

int agent_wait(Session& s, Workspace& ws, const std::string& id_or_ticket, std::optional<std::chrono::seconds> within) {
  auto w = wait_on_agent_side(ws, id_or_ticket, within);
  if (!w) return report(s, w.error());
  const Standing at = standing(*w);
  if (at == Standing::in_spool)
    return report(s, make_error(Errc::pending, fmt::format("ticket {} is still waiting for intake", id_or_ticket),
                                "the owner's kaicoder takes it in; wait again with: kaicoder wait " + id_or_ticket));
  if (at == Standing::no_status)
    return report(s, make_error(Errc::pending, fmt::format("proposal {} has no status yet", w->id)));
  const Proposal& p = w->status->proposal;
  const bool done = at == Standing::settled;
  const int rc = wait_exit_code(p);
  const bool run = p.kind == Kind::run;
  const std::string so = run ? read_status_output(ws.store.dir(), p.id, "stdout") : "",
                    se = run ? read_status_output(ws.store.dir(), p.id, "stderr") : "";
  if (s.json()) {
    json j = with_proposal(p);
    j["exit_code"] = rc;
    if (w->status->expired) j["expired"] = true;
    if (run) j["ran"] = p.state == State::applied, j["stdout"] = so, j["stderr"] = se;
    const std::optional<Error> e =
        done ? outcome_error(p)
             : std::optional<Error>(
                   make_error(Errc::pending, fmt::format("proposal {} is still waiting for the owner", p.id)));
    return emit(s, std::move(j), rc, run && p.state == State::applied ? std::nullopt : e);
  }
  write_content(so, 1);
  write_content(se, 2);
  out("proposal {} is {}{}\n", p.id, to_string(p.state), p.result.empty() ? "" : ": " + p.result);
  if (w->status->expired) print_expired_copy();
  print_decided(p, DecidedLine::who_only);
  if (!p.rollback_id.empty()) out("  rollback-id: {}\n", p.rollback_id);
  if (!done)
    err("kaicoder: proposal {} is still waiting for the owner\nhint: wait for it again with: kaicoder wait {}\n", p.id,
        p.id);
  return rc;
}

int agent_list(Session& s, Workspace& ws, const std::string& status) {
  std::vector<Proposal> rows;
  for (auto& c : status_copies(ws, status)) rows.push_back(std::move(c.proposal));
  const size_t spooled = waiting_entries(ws.store.dir()).size();
  if (s.json()) {
    json arr = json::array();
    for (const auto& p : rows) arr.push_back(proposal_json(p));
    return emit(s, {{"proposals", arr}, {"corrupt", json::array()}, {"spooled", spooled}});
  }
  if (rows.empty()) out("no proposals{}\n", status.empty() ? "" : " with status " + status);
  if (!rows.empty()) print_list_header();
  for (const auto& p : rows) print_list_row(p, to_string(p.state));
  if (spooled) out("{} spool entr{} waiting for the owner's intake\n", spooled, spooled == 1 ? "y" : "ies");
  return k_exit_ok;
}

int agent_show(Session& s, Workspace& ws, const std::string& id_or_ticket, const std::string& file) {
  auto id = resolve_id(ws, id_or_ticket);
  if (!id) return report(s, id.error());
  auto c = read_status_copy(ws, *id);
  if (!c) return report(s, c.error());
  const Proposal& p = c->proposal;
  if (auto named = names_file(p, file); !named) return report(s, named.error());
  // The diff the owner's side left for the agent while it can still apply; never a secret file's.
  const bool live = still_open(p);
  std::optional<std::string> diff = live ? read_status_diff(ws, p.id) : std::nullopt;
  if (diff && !file.empty() && p.kind == Kind::changeset) diff = diff_of_file(*diff, file);
  const std::string note = diff   ? ""
                           : live ? "two-user mode: no diff was left for the agent user (a proposal it did not make, "
                                    "or a file it may not read); the owner sees it"
                                  : "";
  if (s.json()) {
    json j = with_proposal(p);
    if (c->expired) j["expired"] = true;
    j["diff"] = diff.value_or("");
    if (!note.empty()) j["diff_note"] = note;
    return emit(s, std::move(j));
  }
  if (p.kind == Kind::run)
    print_run_header(s, p);
  else
    print_proposal_header(s, p);
  if (c->expired) print_expired_copy();
  if (p.kind == Kind::changeset) print_diffstat(s, p);
  if (diff) {
    FileDiff d;
    d.text = std::move(*diff);
    print_diff(s, p, d);
  }
  if (!note.empty() && p.kind != Kind::run) out("\n({})\n", note);
  return k_exit_ok;
}

}  // namespace kai::cmd
