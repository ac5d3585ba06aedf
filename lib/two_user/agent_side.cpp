#include "lib/two_user/agent_side.hpp"

#include <algorithm>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/two_user/agent_user.hpp"
#include "lib/two_user/intake.hpp"
#include "lib/paths/paths.hpp"
#include "lib/store/spool.hpp"
#include "lib/util/git_quote.hpp"
#include "lib/util/json_bounded.hpp"
#include "lib/util/text.hpp"
#include "lib/util/time.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

bool on_agent_side(const Workspace& ws) {
  struct stat st {};
  const fs::path state = ws.store.dir();
  return ::lstat(state.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid != ::getuid() && has_spool(state);
}

Result<std::string> entry_cwd(const Workspace& ws, const fs::path& cwd) {
  std::error_code ec;
  const fs::path at = fs::weakly_canonical(cwd, ec);
  const std::string rel = at.lexically_relative(ws.root).generic_string();
  if (rel.empty() || rel == ".." || rel.rfind("../", 0) == 0)
    return make_error(Errc::usage, fmt::format("the working folder '{}' is outside root", cwd.string()));
  return rel == "." ? std::string() : rel;
}

namespace {

Result<std::string> spool_entry(Workspace& ws, EntryType type, json request, const fs::path& cwd) {
  auto rel = entry_cwd(ws, cwd);
  if (!rel) return rel.error();
  return write_entry(ws.store.dir(), entry_text(SpoolEntry{type, *rel, std::move(request)}), max_entry_size(ws),
                     ws.clock->now());
}

}  // namespace

Result<std::string> spool_propose(Workspace& ws, const ProposeRequest& r, const fs::path& cwd) {
  // The entry is JSON: bytes that are not UTF-8 go as a changeset, whose content may be base64.
  const bool text = !first_invalid_utf8(r.target.value_or("")) && !first_invalid_utf8(r.replacement.value_or("")) &&
                    !first_invalid_utf8(r.content.value_or(""));
  if (text) {
    for (auto [what, s] :
         {std::pair{"--path", &r.path}, {"--why", &r.why}, {"--summary", &r.summary}, {"--agent", &r.agent}})
      if (auto bad = not_utf8(what, *s)) return make_error(Errc::usage, *bad);
    return spool_entry(ws, EntryType::propose, request_json(r), cwd);
  }
  if (!r.content)
    return make_error(Errc::usage, "an edit's target and replacement must be UTF-8 text to go through the spool",
                      "propose the whole file's content instead");
  ChangesetRequest cs;
  cs.changes.push_back(ChangeRequest{"write", r.path, "", std::nullopt, std::nullopt, false, r.content, std::nullopt});
  cs.why = r.why;
  cs.summary = r.summary;
  cs.agent = r.agent;
  return spool_changeset(ws, cs, cwd);
}

Result<std::string> spool_changeset(Workspace& ws, const ChangesetRequest& r, const fs::path& cwd) {
  auto j = changeset_request_json(r);
  if (!j) return j.error();
  return spool_entry(ws, EntryType::changeset, std::move(*j), cwd);
}

Result<std::string> spool_run(Workspace& ws, const RunRequest& r, const fs::path& cwd) {
  auto judged = propose_run(ws, r, cwd, DryRun::yes, nullptr);
  if (!judged) return judged.error();
  if (judged->verdict == RunVerdict::blocked) {
    std::string why;
    for (const auto& reason : judged->classification.reasons) why += (why.empty() ? "" : "; ") + reason;
    return make_error(Errc::denied, "the command is blocked and was not spooled" + (why.empty() ? "" : ": " + why),
                      "a blocked command is never offered for approval");
  }
  for (const auto& a : r.argv)
    if (auto bad = not_utf8("an argument", a)) return make_error(Errc::usage, *bad);
  if (auto bad = not_utf8("the shell string", r.shell)) return make_error(Errc::usage, *bad);
  return spool_entry(ws, EntryType::run, run_request_json(r), cwd);
}

namespace {
// resolve_id, with a ticket that intake has not staged yet as nullopt. A
// ticket has a dash (20260709T142530Z-1000-a1b2c3); anything else is read
// as a proposal id by the one parser (lib/proposal), so "010" or "1e3" is a
// malformed id here as in every other command, never a ticket.
Result<std::optional<int>> taken_in_id(const Workspace& ws, const std::string& id_or_ticket) {
  // Tickets exist only where there is a spool; elsewhere an id is a number, as it always was.
  const bool ticket =
      has_spool(ws.store.dir()) && is_ticket(id_or_ticket) && id_or_ticket.find('-') != std::string::npos;
  if (!ticket) {
    auto id = read_proposal_id(id_or_ticket);
    if (!id) return id.error();
    return std::optional<int>(*id);
  }
  auto t = ticket_standing(ws.store.dir(), id_or_ticket);
  if (!t) return t.error();
  if (t->waiting != TicketWait::no) return std::optional<int>();
  return std::optional<int>(t->proposal);
}

}  // namespace

Result<int> resolve_id(const Workspace& ws, const std::string& id_or_ticket) {
  auto id = taken_in_id(ws, id_or_ticket);
  if (!id) return id.error();
  if (*id) return **id;
  return proposal_of_ticket(ws.store.dir(), id_or_ticket);  // says how it waits for intake
}

Result<StatusCopy> read_status_copy(const Workspace& ws, int id) {
  auto text = read_status(ws.store.dir(), id);
  if (!text) return text.error();
  json j = parse_bounded_json(*text).value;
  if (j.is_discarded() || !j.is_object())
    return make_error(Errc::io, fmt::format("the status of proposal {} is malformed", id));
  auto p = from_json(j);
  if (!p) return make_error(Errc::io, fmt::format("the status of proposal {} is malformed: {}", id, p.error().message));
  StatusCopy c{std::move(*p), false};
  // The owner's timeout, as the copy carries it: the agent's own config is
  // not the one that counts, and the owner's next command records the expiry.
  const json& t = j.contains("approval_timeout") ? j["approval_timeout"] : json();
  TimePoint created;
  if (c.proposal.state == State::pending && t.is_number_integer() && t.get<long>() > 0 &&
      parse_iso_utc(c.proposal.created, created))
    c.expired = ws.clock->now() - created > std::chrono::seconds(t.get<long>());
  if (c.expired) {
    c.proposal.state = State::timeout;
    c.proposal.result = fmt::format("timeout: not decided within {} s", t.get<long>());
  }
  return c;
}

std::vector<StatusCopy> status_copies(const Workspace& ws, const std::string& status) {
  std::vector<StatusCopy> rows;
  for (int id : status_ids(ws.store.dir()))
    if (auto c = read_status_copy(ws, id); c && (status.empty() || to_string(c->proposal.state) == status))
      rows.push_back(std::move(*c));
  std::stable_sort(rows.begin(), rows.end(), [](const StatusCopy& x, const StatusCopy& y) {
    const bool px = x.proposal.state == State::pending, py = y.proposal.state == State::pending;
    if (px != py) return px;
    return px ? x.proposal.id < y.proposal.id : x.proposal.id > y.proposal.id;
  });
  return rows;
}

bool copy_done(const StatusCopy& c) { return standing(c.proposal) == Standing::settled; }

Standing standing(const AgentWaited& w) {
  if (!w.id) return Standing::in_spool;
  if (!w.status) return Standing::no_status;
  return standing(w.status->proposal);
}

Result<AgentWaited> wait_on_agent_side(const Workspace& ws, const std::string& id_or_ticket,
                                       std::optional<std::chrono::seconds> within, const WaitControl& control) {
  const auto start = std::chrono::steady_clock::now();
  auto ticked = start;
  auto over = [&] {
    const auto now = std::chrono::steady_clock::now();
    if (control.tick && now - ticked >= std::chrono::seconds(1)) {
      ticked = now;
      control.tick(std::chrono::duration_cast<std::chrono::milliseconds>(now - start));
    }
    return (within && now - start >= *within) || (control.stop && control.stop());
  };
  // The caller's sleep when it gives one: the MCP server lends the workspace
  // to its other calls while a wait sleeps.
  auto pause = [&control] {
    if (control.sleep)
      control.sleep(std::chrono::milliseconds(200));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
  };
  AgentWaited w;
  for (;;) {
    auto id = taken_in_id(ws, id_or_ticket);
    if (!id) return id.error();
    if (*id) {
      w.id = **id;
      break;
    }
    // Not taken in yet: wait as for a decision.
    if (over()) return w;
    pause();
  }
  for (;;) {
    auto c = read_status_copy(ws, w.id);
    if (!c && c.error().code != Errc::not_found) return c.error();
    if (c) w.status = std::move(*c);
    if (standing(w) == Standing::settled || over()) return w;
    pause();
  }
}

std::optional<std::string> read_status_diff(const Workspace& ws, int id) {
  const fs::path p = spool::status(ws.store.dir()) / fmt::format("{}.diff", id);
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return read_status_output(ws.store.dir(), id, "diff");
}

std::string diff_of_file(std::string_view diff, const std::string& path) {
  // Built by append: GCC 12 warns falsely (-Wstringop-overflow) about
  // `" " + std::string` when optimising.
  std::string a = quote_c_style("a/", path), b = " ";
  a += ' ';
  b += quote_c_style("b/", path);
  std::string out;
  bool keep = false;
  for (size_t at = 0; at < diff.size();) {
    const size_t nl = diff.find('\n', at);
    const size_t end = nl == std::string_view::npos ? diff.size() : nl + 1;
    const std::string_view line = diff.substr(at, end - at);
    if (line.starts_with("diff --git ")) {
      const std::string_view names = line.substr(11, line.size() - 11 - (line.ends_with('\n') ? 1 : 0));
      keep = names.starts_with(a) || names.ends_with(b);
    }
    if (keep) out.append(line);
    at = end;
  }
  return out;
}

Status mirror_diff(const Workspace& ws, const Proposal& p, const FileDiff& d) {
  if (p.proposer_uid < 0 || p.kind == Kind::run || !two_user(ws) || d.text.empty()) return ok_status();
  auto agent = lookup_user(ws.cfg.two_user_agent);
  if (!agent) return agent.error();
  std::vector<std::string> paths{p.path};
  for (const Change& c : p.changes) {
    paths.push_back(c.path);
    if (!c.to.empty()) paths.push_back(c.to);
  }
  for (const auto& rel : paths) {
    if (!check_read(ws.guards, RootPath{rel, ws.root / rel}))
      return make_error(Errc::denied, fmt::format("'{}' is never-read: its diff stays with the owner", rel));
    // What the diff's context shows of a file the agent user could not read itself.
    if (!user_may_read(ws.root / rel, *agent))
      return make_error(Errc::denied,
                        fmt::format("the agent user cannot read '{}': its diff stays with the owner", rel));
  }
  return mirror_status_diff(ws.store.dir(), p.id, ws.redact(d.text));
}

}  // namespace kai
