#include "lib/two_user/intake.hpp"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/two_user/agent_side.hpp"
#include "lib/patch/patch.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/text.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

size_t max_entry_size(const Workspace& ws) {
  return 2 * static_cast<size_t>(ws.cfg.limits.content) + (size_t{1} << 20);
}

std::string uid_name(unsigned uid) {
  if (const passwd* pw = ::getpwuid(uid); pw && pw->pw_name && *pw->pw_name) return pw->pw_name;
  return fmt::format("uid{}", uid);
}

json request_json(const ProposeRequest& r) {
  json j{{"path", r.path}, {"delete", r.del},  {"replace_all", r.replace_all},
         {"why", r.why},   {"agent", r.agent}, {"summary", r.summary}};
  if (r.target) j["target"] = *r.target;
  if (r.replacement) j["replacement"] = *r.replacement;
  if (r.content) j["content"] = *r.content;
  return j;
}

json run_request_json(const RunRequest& r) {
  return {{"argv", r.argv},       {"shell", r.shell}, {"cwd", r.cwd},    {"timeout", r.timeout},
          {"network", r.network}, {"why", r.why},     {"agent", r.agent}};
}

Result<RunRequest> run_request_from_json(const json& j) {
  auto bad = [](const std::string& why) { return make_error(Errc::usage, "malformed run request: " + why); };
  if (!j.is_object()) return bad("not an object");
  RunRequest r;
  for (const auto& [key, v] : j.items()) {
    if (key == "argv") {
      if (!v.is_array()) return bad("'argv' must be a list of strings");
      for (const auto& a : v) {
        if (!a.is_string()) return bad("'argv' must be a list of strings");
        r.argv.push_back(a.get<std::string>());
      }
    } else if (key == "timeout") {
      if (!v.is_number_integer() || v.get<long>() < 0 || v.get<long>() > 24 * 3600)
        return bad("'timeout' must be 0 to 86400");
      r.timeout = v.get<long>();
    } else if (key == "network") {
      if (!v.is_boolean()) return bad("'network' must be true or false");
      r.network = v.get<bool>();
    } else if (key == "shell" || key == "cwd" || key == "why" || key == "agent") {
      if (!v.is_string()) return bad(fmt::format("'{}' must be a string", key));
      (key == "shell" ? r.shell : key == "cwd" ? r.cwd : key == "why" ? r.why : r.agent) = v.get<std::string>();
    } else {
      return bad(fmt::format("unknown field '{}'", key));
    }
  }
  return r;
}

namespace {

Status utf8_field(std::string_view what, std::string_view text) {
  if (auto bad = not_utf8(what, text))
    return make_error(Errc::usage, *bad + "; it cannot go through the spool", "send it as UTF-8 text");
  return ok_status();
}

}  // namespace

Result<json> changeset_request_json(const ChangesetRequest& r) {
  for (auto [what, text] : {std::pair{"why", &r.why}, {"summary", &r.summary}, {"agent", &r.agent}})
    KAI_TRY(utf8_field(what, *text));
  json j{{"why", r.why}, {"summary", r.summary}, {"agent", r.agent}};
  if (r.patch) {
    if (first_invalid_utf8(*r.patch))
      j["patch_base64"] = base64_encode(*r.patch);
    else
      j["patch"] = *r.patch;
    return j;
  }
  json changes = json::array();
  for (const ChangeRequest& c : r.changes) {
    json o{{"op", c.op}, {"path", c.path}};
    KAI_TRY(utf8_field("a path", c.path));
    if (!c.to.empty()) {
      KAI_TRY(utf8_field("a path", c.to));
      o["to"] = c.to;
    }
    if (c.target) {
      KAI_TRY(utf8_field("an edit's target", *c.target));
      o["target"] = *c.target;
    }
    if (c.replacement) {
      KAI_TRY(utf8_field("an edit's replacement", *c.replacement));
      o["replacement"] = *c.replacement;
    }
    if (c.replace_all) o["replace_all"] = true;
    if (c.content) {
      if (first_invalid_utf8(*c.content))
        o["content_base64"] = base64_encode(*c.content);
      else
        o["content"] = *c.content;
    }
    if (c.mode) o["mode"] = *c.mode == 0755u ? "0755" : "0644";
    changes.push_back(std::move(o));
  }
  j["changes"] = std::move(changes);
  return j;
}

Result<ChangesetRequest> changeset_request_from_json(const json& j) {
  auto bad = [](const std::string& why) { return make_error(Errc::usage, "malformed changeset request: " + why); };
  if (!j.is_object()) return bad("not an object");
  const int bodies = int(j.contains("patch")) + int(j.contains("patch_base64")) + int(j.contains("changes"));
  if (bodies != 1) return bad("it needs exactly one of 'patch', 'patch_base64' and 'changes'");
  if (j.contains("changes")) {
    const json& c = j["changes"];
    if (!c.is_array() || c.empty()) return bad("'changes' must be a non-empty list");
    if (c.size() > PatchLimits{}.max_files) return bad(fmt::format("more than {} changes", PatchLimits{}.max_files));
    // The --json-input reader is as strict: unknown fields, wrong types, an unknown op are errors.
    auto r = changeset_from_json(j.dump());
    if (!r) return bad(r.error().message);
    return r;
  }
  ChangesetRequest r;
  for (const auto& [key, v] : j.items()) {
    if (key != "patch" && key != "patch_base64" && key != "why" && key != "summary" && key != "agent")
      return bad(fmt::format("unknown field '{}'", key));
    if (!v.is_string()) return bad(fmt::format("'{}' must be a string", key));
    const std::string s = v.get<std::string>();
    if (key == "patch")
      r.patch = s;
    else if (key == "patch_base64") {
      r.patch = base64_decode(s);
      if (!r.patch) return bad("'patch_base64' is not base64");
    } else
      (key == "why" ? r.why : key == "summary" ? r.summary : r.agent) = s;
  }
  if (r.patch->empty()) return bad("the patch is empty");
  if (r.patch->size() > PatchLimits{}.max_patch_bytes)
    return bad(fmt::format("the patch is over {} bytes", PatchLimits{}.max_patch_bytes));
  return r;
}

namespace {

// Move `from` into the quarantine under a name that is not taken yet.
void quarantine_file(const fs::path& state, const fs::path& from, const std::string& name) {
  const fs::path q = spool::quarantine(state);
  for (int i = 0; i < 1000; ++i) {
    fs::path to = q / (i == 0 ? name : fmt::format("{}.{}", name, i));
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0 || errno != EEXIST) return;
  }
}

// The uid an entry may come from: the agent user's or the owner's own.
Status entry_owner_ok(const Workspace& ws, unsigned uid) {
  if (uid == ::getuid()) return ok_status();
  const passwd* pw = ::getpwnam(ws.cfg.two_user_agent.c_str());
  if (pw && pw->pw_uid == uid) return ok_status();
  return make_error(Errc::denied,
                    fmt::format("the entry is owned by uid {} ({}), neither the agent user '{}' nor the owner", uid,
                                uid_name(uid), ws.cfg.two_user_agent));
}

// Stage what one checked entry asks for. A refusal of the request itself (a
// guardrail, a target not found) is the ticket's error: the entry was sound.
Result<TicketInfo> stage(Workspace& ws, const SpoolEntry& e, TicketInfo t) {
  const fs::path cwd = (ws.root / e.cwd).lexically_normal();
  auto staged = [&](const Result<Staged>& st) {
    if (st) {
      t.proposal = st->proposal.id;
      // What the agent's `show` shows, written before its ticket names the id.
      if (!st->existing) (void)mirror_diff(ws, st->proposal, st->diff);
    } else
      t.error = Error{st.error().code, ws.redact(st.error().message), ws.redact(st.error().hint)};
    return t;
  };
  if (e.type == EntryType::propose) {
    auto r = request_from_json(e.request.dump());
    if (!r) return r.error();
    r->agent = t.proposer;  // who proposed is the entry's owner, never a name it claims
    r->proposer_uid = t.uid;
    return staged(propose(ws, std::move(*r), cwd, DryRun::no, DiffOptions{}));
  }
  if (e.type == EntryType::changeset) {
    auto r = changeset_request_from_json(e.request);
    if (!r) return r.error();
    r->agent = t.proposer;
    r->proposer_uid = t.uid;
    return staged(propose_changeset(ws, *r, cwd, DryRun::no, DiffOptions{}));
  }
  auto r = run_request_from_json(e.request);
  if (!r) return r.error();
  r->agent = t.proposer;
  r->proposer_uid = t.uid;
  auto st = propose_run(ws, *r, cwd, DryRun::no, nullptr);
  if (!st) {
    t.error = Error{st.error().code, ws.redact(st.error().message), ws.redact(st.error().hint)};
    return t;
  }
  t.proposal = st->proposal.id;
  t.verdict = std::string(to_string(st->verdict));
  if (st->verdict == RunVerdict::blocked)
    t.error = make_error(Errc::denied, "the command is blocked and was not staged");
  return t;
}

void take_one(Workspace& ws, const std::string& name, IntakeReport& out) {
  const fs::path state = ws.store.dir();
  const fs::path claimed = spool::claimed(state) / name;
  TicketInfo t;
  t.ticket = name.substr(0, name.size() - 5);
  // Taken in before a crash cut the clean-up short: the ticket says what became of it.
  if (auto done = read_ticket(state, t.ticket); done && *done && ((*done)->proposal > 0 || (*done)->error)) {
    ::unlink(claimed.c_str());
    return;
  }
  (void)write_ticket(state, t, Replace::no);  // being taken in (a leftover may not have one yet)
  auto refuse = [&](const Error& e) {
    quarantine_file(state, claimed, name);
    t.quarantined = true;
    t.error = Error{e.code, ws.redact(e.message), e.hint};
    (void)write_ticket(state, t);
    out.quarantined.push_back(t);
  };
  auto rd = read_claimed_entry(spool::claimed(state), name, max_entry_size(ws));
  if (!rd) return refuse(rd.error());
  t.uid = rd->uid;
  t.proposer = uid_name(rd->uid);
  if (auto owner = entry_owner_ok(ws, rd->uid); !owner) return refuse(owner.error());
  auto e = parse_entry(rd->bytes);
  if (!e) return refuse(e.error());
  auto staged = stage(ws, *e, t);
  if (!staged) return refuse(staged.error());
  t = std::move(*staged);
  if (auto w = write_ticket(state, t); !w) {
    // Without a ticket the agent would wait forever: keep the entry claimed, report it.
    t.error = w.error();
    out.taken.push_back(t);
    return;
  }
  ::unlink(claimed.c_str());
  out.taken.push_back(t);
}

bool entry_name(const std::string& name) {
  return name.size() > 5 && name.substr(name.size() - 5) == ".json" && is_ticket(name.substr(0, name.size() - 5));
}

}  // namespace

Result<IntakeReport> intake(Workspace& ws, size_t at_most) {
  IntakeReport out;
  const fs::path state = ws.store.dir();
  if (!two_user(ws) || !has_spool(state)) return out;
  KAI_TRY(make_dirs(spool::claimed(state), 0700));
  KAI_TRY(make_dirs(spool::quarantine(state), 0700));
  struct stat st {};
  if (::lstat(spool::tickets(state).c_str(), &st) != 0) KAI_TRY(make_dirs(spool::tickets(state), 0750));
  // Leftovers a crash left claimed come first: they are the oldest.
  std::vector<std::string> leftovers;
  std::error_code ec;
  for (fs::directory_iterator it(spool::claimed(state), ec), end; !ec && it != end; it.increment(ec))
    leftovers.push_back(it->path().filename().string());
  std::sort(leftovers.begin(), leftovers.end());
  size_t done = 0;
  const auto full = [&] { return at_most > 0 && done >= at_most; };
  for (const auto& name : leftovers) {
    if (full()) {
      ++out.still_waiting;
      continue;
    }
    ++done;
    if (entry_name(name))
      take_one(ws, name, out);
    else
      quarantine_file(state, spool::claimed(state) / name, name);
  }
  for (const auto& name : waiting_entries(state)) {
    if (full()) {
      ++out.still_waiting;
      continue;
    }
    ++done;
    const fs::path from = spool::dir(state) / name;
    if (!entry_name(name)) {
      quarantine_file(state, from, name);
      TicketInfo t;
      t.quarantined = true;
      t.error = make_error(Errc::usage, "the entry's name is not <ticket>.json");
      out.quarantined.push_back(std::move(t));
      continue;
    }
    // Before the entry leaves the spool, where its writer sees it: a ticket
    // that names nothing yet says it is being taken in.
    TicketInfo taking;
    taking.ticket = name.substr(0, name.size() - 5);
    (void)write_ticket(state, taking, Replace::no);
    // The rename is the claim: of two intakes at once, one wins each entry.
    const fs::path to = spool::claimed(state) / name;
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) continue;
    take_one(ws, name, out);
  }
  return out;
}

Result<TicketStanding> ticket_standing(const fs::path& state, const std::string& ticket) {
  auto t = read_ticket(state, ticket);
  if (!t) return t.error();
  if (!*t) {
    struct stat st {};
    const bool waiting = ::lstat((spool::dir(state) / (ticket + ".json")).c_str(), &st) == 0 ||
                         ::lstat((spool::claimed(state) / (ticket + ".json")).c_str(), &st) == 0;
    if (!waiting) return make_error(Errc::not_found, fmt::format("no ticket {}", ticket));
    return TicketStanding{0, TicketWait::in_spool};
  }
  if ((*t)->proposal > 0) return TicketStanding{(*t)->proposal, TicketWait::no};
  if ((*t)->error) return *(*t)->error;
  return TicketStanding{0, TicketWait::being_taken_in};
}

Result<int> proposal_of_ticket(const fs::path& state, const std::string& ticket) {
  auto t = ticket_standing(state, ticket);
  if (!t) return t.error();
  switch (t->waiting) {
    case TicketWait::no: return t->proposal;
    case TicketWait::in_spool:
      return make_error(Errc::not_found, fmt::format("ticket {} is waiting for intake", ticket),
                        "the owner's next kaicoder command, or kaicoder intake --watch, takes it in");
    case TicketWait::being_taken_in:
      return make_error(Errc::not_found, fmt::format("ticket {} is waiting for intake (being taken in)", ticket),
                        "the owner's kaicoder is taking it in now");
  }
  return t->proposal;
}

}  // namespace kai
