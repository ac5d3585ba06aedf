#include "lib/mcp/tools.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/two_user/agent_side.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/envelope.hpp"
#include "lib/mcp/server.hpp"
#include "lib/mcp/spooled.hpp"
#include "lib/gate/propose.hpp"
#include "lib/gate/reader.hpp"
#include "lib/gate/runs.hpp"
#include "lib/gate/status.hpp"
#include "lib/config/workspace.hpp"
#include "lib/team/team.hpp"

namespace kai::mcp {
namespace {

using Reply = std::variant<ToolOutcome, RpcError>;

std::string str(const json& args, const char* key) { return args.contains(key) ? args.at(key).get<std::string>() : ""; }

ToolOutcome failure(const Error& e, json extra = json::object()) {
  extra["ok"] = false;
  extra["error"] = error_object(e);
  return {std::move(extra), true};
}

std::string approve_next(int id) {
  return fmt::format(
      "nothing is written until a person approves it at a terminal: kaicoder approve {} (or rejects it: kaicoder "
      "reject "
      "{}); call wait_for_decision with id {} to learn the outcome",
      id, id, id);
}

// A staged change, an allowed one already applied, or the pending twin of a retry.
json staged_object(const Staged& st) {
  const Proposal& p = st.proposal;
  json j = {{"ok", true},
            {"proposal", proposal_object(p)},
            {"diff", st.diff.text},
            {"diff_info", diff_object(st.diff)},
            {"existing", st.existing}};
  if (st.applied) {
    j["applied"] = outcome_object(*st.applied);
    j["next"] = "the policy allowed it: it is applied already; undo with kaicoder rollback " + st.applied->rollback_id;
  } else {
    j["next"] =
        (st.existing ? fmt::format("the same change is already waiting as proposal {}; ", p.id) : std::string()) +
        approve_next(p.id);
  }
  return j;
}

bool flag(const json& a, const char* key) {
  return a.is_object() && a.contains(key) && a[key].is_boolean() && a[key].get<bool>();
}

// One file's request from a tool's arguments.
ProposeRequest file_request(const json& a, std::optional<std::string> target, std::optional<std::string> replacement,
                            std::optional<std::string> content, bool del) {
  ProposeRequest r;
  r.path = str(a, "path");
  r.target = std::move(target);
  r.replacement = std::move(replacement);
  r.content = std::move(content);
  r.del = del;
  r.replace_all = flag(a, "replace_all");
  r.why = str(a, "why");
  r.summary = str(a, "summary");
  return r;
}

// A staged proposal, published to the team remote when the call asked for
// it (`publish`), as propose --publish does: the proposal is staged here
// whatever the publish did, and a failed publish is the call's error.
Reply staged_reply(Workspace& ws, const Staged& st, bool publish) {
  json j = staged_object(st);
  if (!publish || st.applied) return ToolOutcome{std::move(j), false};
  auto pub = team::publish(ws, st.proposal.id);
  if (!pub) {
    const Error& e = pub.error();
    // Published here and not pushed: the record says so; a publish refused
    // before it began leaves the proposal as it was staged.
    if (auto p = ws.store.load(st.proposal.id, Store::Payloads::none)) j["proposal"] = proposal_object(*p);
    const int id = st.proposal.id;
    j["next"] = fmt::format(
        "proposal {} is staged here, not published: {}; meanwhile a person at this clone's "
        "terminal can still decide it (kaicoder approve {})",
        id,
        e.code == Errc::io ? fmt::format("the team remote could not be reached; once it is back, publish it "
                                         "again (kaicoder publish {})",
                                         id)
                           : std::string("see error.hint"),
        id);
    return failure(e, std::move(j));
  }
  j["proposal"] = proposal_object(pub->proposal);
  j["published"] = team::published_object(*pub);
  j["next"] = fmt::format(
      "published to the team remote as {}: a person decides it from their own clone (kaicoder fetch, then kaicoder "
      "approve); call wait_for_decision with id {}: it asks the remote for their signed decision and applies only "
      "what they signed",
      pub->ref, st.proposal.id);
  return ToolOutcome{std::move(j), false};
}

Reply stage_file(Workspace& ws, const ServeOptions& opts, ProposeRequest req, bool publish) {
  req.agent = opts.agent.empty() ? "mcp" : opts.agent;
  if (on_agent_side(ws)) return spooled_outcome(spool_propose(ws, req, opts.cwd));
  auto st = propose(ws, req, opts.cwd, DryRun::no, DiffOptions{});
  if (!st) return failure(st.error());
  return staged_reply(ws, *st, publish);
}

Reply stage_patch(Workspace& ws, const ServeOptions& opts, const json& a) {
  ChangesetRequest req;
  req.patch = str(a, "patch");
  req.why = str(a, "why");
  req.summary = str(a, "summary");
  req.agent = opts.agent.empty() ? "mcp" : opts.agent;
  if (on_agent_side(ws)) return spooled_outcome(spool_changeset(ws, req, opts.cwd));
  auto st = propose_changeset(ws, req, opts.cwd, DryRun::no, DiffOptions{});
  if (!st) return failure(st.error());
  return staged_reply(ws, *st, flag(a, "publish"));
}

Reply read_file(Workspace& ws, const ServeOptions& opts, const json& args) {
  std::optional<LineRange> lines;
  if (args.contains("lines")) {
    auto r = parse_line_range(args.at("lines").get<std::string>());
    if (!r) return RpcError{k_invalid_params, r.error().message, error_object(r.error())};
    lines = *r;
  }
  auto r = read_for_agent(ws, opts.cwd, str(args, "path"), lines);
  if (!r) return failure(r.error());
  return ToolOutcome{{{"ok", true},
                      {"path", r->path},
                      {"text", r->text},
                      {"binary", r->binary},
                      {"cut", r->cut},
                      {"first_line", r->first_line},
                      {"last_line", r->last_line},
                      {"total_lines", r->total_lines},
                      {"total_bytes", r->total_bytes}},
                     false};
}

Reply list_dir(Workspace& ws, const ServeOptions& opts, const json& args) {
  auto r = list_for_agent(ws, opts.cwd, str(args, "path"), str(args, "glob"));
  if (!r) return failure(r.error());
  json entries = json::array();
  for (const auto& e : r->entries)
    entries.push_back({{"path", e.path}, {"type", std::string(1, e.type)}, {"size", e.size}});
  return ToolOutcome{{{"ok", true}, {"entries", entries}, {"cut", r->cut}}, false};
}

Reply run_command(Workspace& ws, const ServeOptions& opts, const json& args) {
  const bool has_argv = args.contains("argv"), has_shell = args.contains("shell");
  if (has_argv == has_shell)
    return RpcError{k_invalid_params, "give exactly one of 'argv' and 'shell'",
                    error_object(make_error(Errc::usage, "give exactly one of 'argv' and 'shell'",
                                            R"(argv: ["make", "test"], or shell: "make test | tail")"))};
  RunRequest req;
  if (has_argv) req.argv = args.at("argv").get<std::vector<std::string>>();
  req.shell = str(args, "shell");
  req.cwd = str(args, "cwd");
  req.timeout = args.value("timeout_s", 0L);
  req.network = args.value("network", false);
  req.why = str(args, "why");
  req.agent = opts.agent.empty() ? "mcp" : opts.agent;
  if (on_agent_side(ws)) return spooled_outcome(spool_run(ws, req, opts.cwd));
  auto st = propose_run(ws, req, opts.cwd, DryRun::no, nullptr);
  if (!st) return failure(st.error());
  const Proposal& p = st->proposal;
  json j = {{"verdict", to_string(st->verdict)}, {"reasons", st->classification.reasons}, {"network", p.network}};
  if (st->verdict == RunVerdict::blocked)
    return failure(make_error(Errc::denied, "the command is blocked and was not staged",
                              "see 'reasons'; a blocked command is never offered for approval"),
                   std::move(j));
  j["ok"] = true;
  j["proposal"] = proposal_object(p);
  j["existing"] = st->existing;
  if (st->ran) {
    j["ran"] = true;
    j["exit_code"] = st->ran->result.exit_code;
    j["stdout"] = st->ran->result.out;
    j["stderr"] = st->ran->result.err;
    j["next"] = "the policy allowed it: it ran already";
  } else {
    j["next"] = approve_next(p.id);
  }
  return ToolOutcome{std::move(j), false};
}

}  // namespace

ToolOutcome decided_outcome(const Proposal& p, bool expired, const CapturedOutput* ran) {
  json j = {{"proposal", proposal_object(p)}};
  j["proposal"]["status"] = expired ? std::string("timeout") : std::string(to_string(p.state));
  j["decided"] = standing(p) == Standing::settled && !expired;
  if (!p.backup.empty()) j["backup"] = p.backup;
  if (!p.rollback_id.empty()) j["rollback_id"] = p.rollback_id;
  if (ran) {
    j["ran"] = true;
    j["exit_code"] = p.outcome_code;
    j["stdout"] = ran->out;
    j["stderr"] = ran->err;
  }
  if (expired)
    return failure(make_error(Errc::timeout, fmt::format("proposal {} expired before a person decided", p.id),
                              "nothing was written; propose it again when someone can approve it"),
                   std::move(j));
  if (p.state == State::pending) {
    j["ok"] = true;
    j["next"] = fmt::format("still waiting for a person: kaicoder approve {}; call wait_for_decision again", p.id);
    return {std::move(j), false};
  }
  if (p.state == State::approved) {
    j["ok"] = true;
    j["next"] = fmt::format("approved and not carried out yet: a person runs kaicoder apply {}", p.id);
    return {std::move(j), false};
  }
  if (auto e = outcome_error(p)) return failure(*e, std::move(j));
  j["ok"] = true;
  return {std::move(j), false};
}

ToolOutcome tool_failure(const Error& e, json extra) { return failure(e, std::move(extra)); }

namespace {

// A proposal and what became of it, as proposal_status and wait_for_decision report it.
ToolOutcome decided_object(const Workspace& ws, const Proposal& p) {
  const bool ran = p.kind == Kind::run && p.state == State::applied;
  const CapturedOutput out = ran ? run_output(ws, p.id) : CapturedOutput{};
  return decided_outcome(p, past_timeout(ws, p), ran ? &out : nullptr);
}

// The proposal a status or wait call names: its "id", or the "ticket" a
// two-user spool entry got (the proposal it became, once taken in).
std::variant<std::string, RpcError> named(const json& args) {
  if (args.contains("id") == args.contains("ticket")) {
    const Error e = make_error(Errc::usage, "give exactly one of 'id' and 'ticket'",
                               "id: the proposal id a tool returned; ticket: the ticket a two-user spool entry got");
    return RpcError{k_invalid_params, e.message, error_object(e)};
  }
  return args.contains("id") ? std::to_string(args.at("id").get<int>()) : args.at("ticket").get<std::string>();
}

Reply proposal_status(Workspace& ws, const json& args) {
  auto which = named(args);
  if (auto* bad = std::get_if<RpcError>(&which)) return *bad;
  const std::string& name = std::get<std::string>(which);
  if (on_agent_side(ws)) return spooled_status(ws, name);
  auto id = resolve_id(ws, name);
  if (!id) return failure(id.error());
  auto p = ws.store.load(*id, Store::Payloads::none);  // reads only: no sweep
  if (!p) return failure(p.error());
  return decided_object(ws, *p);
}

Reply wait_decision(Workspace& ws, const json& args, const ToolCall& call, const Door& door) {
  auto which = named(args);
  if (auto* bad = std::get_if<RpcError>(&which)) return *bad;
  const std::string& id = std::get<std::string>(which);
  const long limit = args.value("timeout_s", k_wait_default_s);
  WaitControl control;
  control.stop = [&door] { return (door.cancelled && door.cancelled()) || (door.gone && door.gone()); };
  control.sleep = door.sleep;
  if (!call.progress_token.is_null() && door.notify) {
    const std::string message = args.contains("id")
                                    ? fmt::format("waiting for a person: kaicoder approve {}", id)
                                    : fmt::format("waiting for the owner to take ticket {} in and decide", id);
    control.tick = [&door, &call, message, limit](std::chrono::milliseconds waited) {
      door.notify({{"jsonrpc", "2.0"},
                   {"method", "notifications/progress"},
                   {"params",
                    {{"progressToken", call.progress_token},
                     {"progress", static_cast<double>(waited.count()) / 1000.0},
                     {"total", static_cast<double>(limit)},
                     {"message", message}}}});
    };
  }
  if (on_agent_side(ws)) return spooled_wait(ws, id, limit, control);
  auto n = resolve_id(ws, id);
  if (!n) return failure(n.error());
  // A proposal this clone published: a signed decision on the team remote
  // counts too, checked and carried out as kaicoder wait does.
  auto w = team::wait_for_outcome(ws, *n, std::chrono::seconds(limit), control);
  if (!w) return failure(w.error());
  ToolOutcome o = decided_object(ws, w->proposal);
  if (w->received) o.structured["team_decision"] = team::received_object(*w->received);
  if (!w->remote_note.empty()) o.structured["remote_note"] = w->remote_note;
  if (w->proposal.state == State::pending && w->proposal.team.published() && !o.is_error)
    o.structured["next"] = fmt::format(
        "still waiting for a person: their signed decision on the team remote (kaicoder fetch, then kaicoder approve "
        "in their own clone), or kaicoder approve {} at this clone's terminal; call wait_for_decision again{}",
        *n, w->remote_note.empty() ? "" : " (the team remote could not be asked: see remote_note)");
  return o;
}

Reply list(Workspace& ws, const json& args) {
  if (on_agent_side(ws)) return spooled_list(ws, str(args, "status"));
  auto l = list_proposals(ws, str(args, "status"));
  if (!l) return failure(l.error());
  json arr = json::array(), bad = json::array();
  for (const auto& p : l->proposals) {
    arr.push_back(proposal_object(p));
    if (past_timeout(ws, p)) arr.back()["expired"] = true;
  }
  for (const auto& [id, why] : l->corrupt) bad.push_back({{"id", id}, {"error", why}});
  return ToolOutcome{{{"ok", true}, {"proposals", arr}, {"corrupt", bad}}, false};
}

const json* find_tool(const json& tools, const std::string& name) {
  for (const auto& t : tools)
    if (t.at("name") == name) return &t;
  return nullptr;
}

Status check_value(const std::string& key, const json& schema, const json& v) {
  const std::string type = schema.value("type", "");
  auto bad = [&](const std::string& what) { return make_error(Errc::usage, fmt::format("'{}' {}", key, what)); };
  if (type == "string") {
    if (!v.is_string()) return bad("must be a string");
    if (v.get<std::string>().size() < schema.value("minLength", size_t{0})) return bad("must not be empty");
    if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end())
      return bad(fmt::format("must be one of {}", schema["enum"].dump()));
  } else if (type == "integer") {
    if (!v.is_number_integer()) return bad("must be a whole number");
    const auto n = v.get<long long>();
    if (schema.contains("minimum") && n < schema["minimum"].get<long long>())
      return bad(fmt::format("must be at least {}", schema["minimum"].dump()));
    if (schema.contains("maximum") && n > schema["maximum"].get<long long>())
      return bad(fmt::format("must be at most {}", schema["maximum"].dump()));
  } else if (type == "boolean") {
    if (!v.is_boolean()) return bad("must be true or false");
  } else if (type == "array") {
    if (!v.is_array()) return bad("must be an array");
    if (v.size() < schema.value("minItems", size_t{0})) return bad("must not be empty");
    for (const auto& item : v)
      if (!item.is_string()) return bad("must hold strings only");
  }
  return ok_status();
}

}  // namespace

Status check_arguments(const json& schema, const json& args) {
  if (!args.is_object()) return make_error(Errc::usage, "arguments must be an object");
  const json& props = schema.contains("properties") ? schema["properties"] : json::object();
  if (schema.contains("required"))
    for (const auto& r : schema["required"])
      if (!args.contains(r.get<std::string>()))
        return make_error(Errc::usage, fmt::format("'{}' is required", r.get<std::string>()));
  for (const auto& [key, v] : args.items()) {
    if (!props.contains(key)) {
      if (schema.value("additionalProperties", true)) continue;
      return make_error(Errc::usage, fmt::format("unknown argument '{}'", key));
    }
    KAI_TRY(check_value(key, props[key], v));
  }
  return ok_status();
}

std::variant<ToolOutcome, RpcError> call_tool(Workspace& ws, const ServeOptions& opts, const ToolCall& call,
                                              const Door& door) {
  static const json tools = tool_definitions(false);
  const json* tool = find_tool(tools, call.name);
  if (!tool) return RpcError{k_invalid_params, fmt::format("unknown tool: {}", call.name), nullptr};
  if (auto ok = check_arguments(tool->at("inputSchema"), call.arguments); !ok)
    return RpcError{k_invalid_params, fmt::format("invalid arguments for tool {}: {}", call.name, ok.error().message),
                    error_object(ok.error())};
  const json& a = call.arguments;
  Reply r;
  if (call.name == "read_file")
    r = read_file(ws, opts, a);
  else if (call.name == "list_dir")
    r = list_dir(ws, opts, a);
  else if (call.name == "propose_edit")
    r = stage_file(ws, opts, file_request(a, str(a, "old_text"), str(a, "new_text"), std::nullopt, false),
                   flag(a, "publish"));
  else if (call.name == "propose_patch")
    r = stage_patch(ws, opts, a);
  else if (call.name == "write_file")
    r = stage_file(ws, opts, file_request(a, std::nullopt, std::nullopt, str(a, "content"), false), flag(a, "publish"));
  else if (call.name == "delete_file")
    r = stage_file(ws, opts, file_request(a, std::nullopt, std::nullopt, std::nullopt, true), flag(a, "publish"));
  else if (call.name == "run_command")
    r = run_command(ws, opts, a);
  else if (call.name == "proposal_status")
    r = proposal_status(ws, a);
  else if (call.name == "wait_for_decision")
    r = wait_decision(ws, a, call, door);
  else
    r = list(ws, a);
  if (auto* o = std::get_if<ToolOutcome>(&r)) o->structured = redacted_json(std::move(o->structured), ws.redactor);
  return r;
}

Server::Server(Workspace& ws, ServeOptions opts, std::string server_version)
    : Server([&ws](const ServeOptions& o, const ToolCall& c, const Door& d) { return call_tool(ws, o, c, d); },
             std::move(opts), std::move(server_version)) {}

}  // namespace kai::mcp
