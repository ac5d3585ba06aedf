#include "cmd/agent_side.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "cmd/render.hpp"

namespace kai::cmd {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* k_agent_commands[] = {"propose", "run", "wait", "list", "show", "read", "ls", "log"};

bool is_number(const std::string& s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

// A proposal as its status copy says it is, or not_found.
Result<Proposal> status_of(const Workspace& ws, int id) {
  auto text = read_status(ws.store.dir(), id);
  if (!text) return text.error();
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(Errc::io, fmt::format("the status of proposal {} is malformed", id));
  return from_json(j);
}

}  // namespace

Result<Workspace> open_agent_workspace(const Env& env, const Clock& clock, const AgentSide& side, const std::string& command) {
  if (std::none_of(std::begin(k_agent_commands), std::end(k_agent_commands), [&](const char* c) { return command == c; }))
    return make_error(Errc::denied,
                      fmt::format("two-user mode: '{}' belongs to the owner of this tree (uid {}); the agent user proposes "
                                  "and reads, it never decides or applies",
                                  command, side.owner),
                      "ask the owner to review it: kaicoder list, then kaicoder approve ID at their own terminal");
  Env e = env;
  e.root_override = side.root;
  return Workspace::open_without_config(e, clock);
}

bool takes_in_first(const std::string& command) {
  static const char* k[] = {"propose", "run", "wait", "approve", "reject", "apply", "rollback", "intake"};
  return std::any_of(std::begin(k), std::end(k), [&](const char* c) { return command == c; });
}

void take_in_spool(Workspace& ws, const std::string& command, IntakeReport& into) {
  if (!two_user(ws)) return;
  auto r = intake(ws);
  if (!r) {
    err("kaicoder: warning: the spool was not taken in: {}\n", r.error().message);
    return;
  }
  into = std::move(*r);
  if (command == "intake") return;
  for (const auto& t : into.taken)
    if (t.proposal) err("kaicoder: took in ticket {} from {} as proposal {}\n", t.ticket, t.proposer, t.proposal);
  for (const auto& t : into.quarantined)
    err("kaicoder: quarantined spool entry {}: {}\n", t.ticket.empty() ? "(bad name)" : t.ticket, t.error ? t.error->message : "");
}

void note_waiting_spool(const Workspace& ws) {
  if (!two_user(ws)) return;
  if (size_t n = waiting_entries(ws.store.dir()).size())
    err("kaicoder: {} spool entr{} of the agent user wait{} for intake: kaicoder intake (or any command that decides)\n", n,
        n == 1 ? "y" : "ies", n == 1 ? "s" : "");
}

json intake_json(const IntakeReport& r) {
  json taken = json::array(), quarantined = json::array();
  for (const auto& t : r.taken) taken.push_back(to_json(t));
  for (const auto& t : r.quarantined) quarantined.push_back(to_json(t));
  return {{"taken", taken}, {"quarantined", quarantined}};
}

void print_intake(const IntakeReport& r) {
  for (const auto& t : r.taken) {
    if (t.proposal) out("ticket {} from {} (uid {}): proposal {}{}\n", t.ticket, t.proposer, t.uid, t.proposal,
                        t.verdict.empty() ? "" : " (" + t.verdict + ")");
    else out("ticket {} from {} (uid {}): refused: {}\n", t.ticket, t.proposer, t.uid, t.error ? t.error->message : "");
  }
  for (const auto& t : r.quarantined)
    out("quarantined {}: {}\n", t.ticket.empty() ? "an entry with a bad name" : "ticket " + t.ticket,
        t.error ? t.error->message : "");
}

Result<std::string> cwd_in_root(const Session& s, const Workspace& ws) {
  std::error_code ec;
  fs::path cwd = fs::weakly_canonical(s.env().cwd, ec);
  std::string rel = cwd.lexically_relative(ws.root).generic_string();
  if (rel.empty() || rel == "..") return make_error(Errc::usage, "the working folder is outside root");
  if (rel.rfind("../", 0) == 0) return make_error(Errc::usage, "the working folder is outside root");
  return rel == "." ? std::string() : rel;
}

int submit_to_spool(Session& s, Workspace& ws, SpoolEntry e, const char* command, bool wait) {
  auto cwd = cwd_in_root(s, ws);
  if (!cwd) return report(s, cwd.error());
  e.cwd = *cwd;
  const size_t max = 2 * static_cast<size_t>(ws.cfg.limits.content) + (size_t{1} << 20);
  auto ticket = write_entry(ws.store.dir(), entry_text(e), max, s.clock().now());
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
  out("  the owner's next kaicoder command takes it in; then: kaicoder wait {}   (or: kaicoder show {})\n", *ticket, *ticket);
  return k_exit_ok;
}

int submit_run_to_spool(Session& s, Workspace& ws, const RunRequest& req, bool wait) {
  auto judged = propose_run(ws, req, s.env().cwd, DryRun::yes, nullptr);
  if (!judged) return report(s, judged.error());
  if (judged->verdict == RunVerdict::blocked) {
    std::string why;
    for (const auto& r : judged->classification.reasons) why += (why.empty() ? "" : "; ") + r;
    return report(s, make_error(Errc::denied, "the command is blocked and was not spooled" + (why.empty() ? "" : ": " + why)));
  }
  return submit_to_spool(s, ws, SpoolEntry{EntryType::run, "", run_request_json(req)}, "run", wait);
}

Result<int> resolve_id(const Workspace& ws, const std::string& id_or_ticket) {
  if (is_number(id_or_ticket)) return std::stoi(id_or_ticket);
  // Tickets exist only where there is a spool; elsewhere an id is a number, as it always was.
  if (!has_spool(ws.store.dir())) return make_error(Errc::usage, fmt::format("'{}' is not a proposal id", id_or_ticket));
  if (!is_ticket(id_or_ticket))
    return make_error(Errc::usage, fmt::format("'{}' is neither a proposal id nor a ticket", id_or_ticket));
  return proposal_of_ticket(ws.store.dir(), id_or_ticket);
}

int agent_wait(Session& s, Workspace& ws, const std::string& id_or_ticket, std::optional<std::chrono::seconds> within) {
  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] { return within && std::chrono::steady_clock::now() - start >= *within; };
  auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(200)); };
  int id = 0;
  for (;;) {
    auto r = resolve_id(ws, id_or_ticket);
    if (r) {
      id = *r;
      break;
    }
    // Not taken in yet: wait like for a decision; anything else is the answer.
    if (r.error().code != Errc::not_found || r.error().message.find("waiting for intake") == std::string::npos)
      return report(s, r.error());
    if (out_of_time())
      return report(s, make_error(Errc::pending, fmt::format("ticket {} is still waiting for intake", id_or_ticket),
                                  "the owner's kaicoder takes it in; wait again with: kaicoder wait " + id_or_ticket));
    pause();
  }
  for (;;) {
    auto p = status_of(ws, id);
    if (!p && p.error().code != Errc::not_found) return report(s, p.error());
    const bool done = p && p->state != State::pending && p->state != State::approved;
    if (done || out_of_time()) {
      if (!p) return report(s, make_error(Errc::pending, fmt::format("proposal {} has no status yet", id)));
      const int rc = done ? outcome_exit_code(*p) : exit_code(Errc::pending);
      const bool run = p->kind == Kind::run;
      const std::string so = run ? read_status_output(ws.store.dir(), id, "stdout") : "",
                        se = run ? read_status_output(ws.store.dir(), id, "stderr") : "";
      if (s.json()) {
        json j = proposal_json(*p);
        j["exit_code"] = rc;
        if (run) j["ran"] = p->state == State::applied, j["stdout"] = so, j["stderr"] = se;
        print_json(j);
        return rc;
      }
      write_content(so, 1);
      write_content(se, 2);
      out("proposal {} is {}{}\n", p->id, to_string(p->state), p->result.empty() ? "" : ": " + p->result);
      if (!p->decided_by.empty()) out("  decided by:  {}\n", p->decided_by);
      if (!p->rollback_id.empty()) out("  rollback-id: {}\n", p->rollback_id);
      if (!done) err("kaicoder: proposal {} is still waiting for the owner\nhint: wait for it again with: kaicoder wait {}\n", id, id);
      return rc;
    }
    pause();
  }
}

int agent_list(Session& s, Workspace& ws, const std::string& status) {
  std::vector<Proposal> rows;
  for (int id : status_ids(ws.store.dir()))
    if (auto p = status_of(ws, id); p && (status.empty() || to_string(p->state) == status)) rows.push_back(std::move(*p));
  std::stable_sort(rows.begin(), rows.end(), [](const Proposal& x, const Proposal& y) {
    bool px = x.state == State::pending, py = y.state == State::pending;
    if (px != py) return px;
    return px ? x.id < y.id : x.id > y.id;
  });
  const size_t spooled = waiting_entries(ws.store.dir()).size();
  if (s.json()) {
    json arr = json::array();
    for (const auto& p : rows) arr.push_back(proposal_json(p));
    print_json({{"proposals", arr}, {"corrupt", json::array()}, {"spooled", spooled}});
    return k_exit_ok;
  }
  if (rows.empty()) out("no proposals{}\n", status.empty() ? "" : " with status " + status);
  for (const auto& p : rows)
    out("{:>4}  {:<11}  {:<6}  {:<6}  {:<30}  {}\n", p.id, to_string(p.state), to_string(p.kind),
        p.kind == Kind::run ? std::string_view("-") : to_string(p.risk), p.path, p.summary);
  if (spooled) out("{} spool entr{} waiting for the owner's intake\n", spooled, spooled == 1 ? "y" : "ies");
  return k_exit_ok;
}

int agent_show(Session& s, Workspace& ws, const std::string& id_or_ticket) {
  auto id = resolve_id(ws, id_or_ticket);
  if (!id) return report(s, id.error());
  auto p = status_of(ws, *id);
  if (!p) return report(s, p.error());
  if (s.json()) {
    json j = proposal_json(*p);
    j["diff"] = "";
    j["diff_note"] = "two-user mode: the agent user sees the status; the diff is shown to the owner";
    print_json(j);
    return k_exit_ok;
  }
  print_proposal_header(s, *p);
  out("\n(two-user mode: the agent user sees the status; the diff is shown to the owner)\n");
  return k_exit_ok;
}

}  // namespace kai::cmd
