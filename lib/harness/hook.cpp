#include "lib/harness/hook.hpp"

#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/two_user/agent_side.hpp"
#include "lib/gate/apply.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/harness/access.hpp"
#include "lib/patch/patch_envelope.hpp"
#include "lib/gate/propose.hpp"
#include "lib/gate/reader.hpp"
#include "lib/gate/runs.hpp"
#include "lib/util/json_bounded.hpp"

namespace kai::harness {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Command output handed back in a deny reason: enough to act on, not a flood.
constexpr size_t k_output_cap = 16 * 1024;

struct Said {
  bool allow = false;
  std::string reason;
  int proposal = 0;
};

Said allow() { return {true, "", 0}; }
Said deny(std::string reason, int id = 0) { return {false, std::move(reason), id}; }

Said refused(const Error& e) {
  std::string r = fmt::format("kaicoder refused this: {}", e.message);
  if (!e.hint.empty()) r += fmt::format(" (hint: {})", e.hint);
  return deny(std::move(r));
}

std::string cap(std::string_view text) {
  if (text.size() <= k_output_cap) return std::string(text);
  return fmt::format("{}\n[… {} more bytes: kaicoder show for the rest]", text.substr(0, k_output_cap),
                     text.size() - k_output_cap);
}

std::string what_of(const Proposal& p) {
  if (p.kind == Kind::run) return fmt::format("run of `{}`", command_text(p));
  if (p.kind == Kind::changeset) {
    std::string files;
    for (const Change& c : p.changes)
      files += (files.empty() ? "" : ", ") + (c.to.empty() ? c.path : c.path + " -> " + c.to);
    return fmt::format("changeset of {} file{}: {}", p.changes.size(), p.changes.size() == 1 ? "" : "s", files);
  }
  return fmt::format("{} of {}", to_string(p.kind), p.path);
}

std::string_view holds(const Proposal& p) {
  return p.kind == Kind::changeset && p.changes.size() > 1 ? "the files hold" : "the file holds";
}

std::string staged_text(const Proposal& p, bool existing) {
  return fmt::format(
      "{} as proposal {} ({}) — a person decides with `kaicoder approve {}`; call wait_for_decision / kaicoder wait {} "
      "to learn the outcome. Do not make this change another way: once approved, kaicoder writes it itself",
      existing ? "kaicoder already holds this change" : "kaicoder staged this", p.id, what_of(p), p.id, p.id);
}

std::string ran_text(const Proposal& p, const RunResult& r, std::string_view who) {
  std::string t = fmt::format("{} proposal {} ({}): exit code {}; it is done, do not run it again", who, p.id,
                              what_of(p), r.exit_code);
  if (!r.out.empty()) t += "\n--- stdout ---\n" + cap(r.out);
  if (!r.err.empty()) t += "\n--- stderr ---\n" + cap(r.err);
  return t;
}

// The outcome of a proposal after a bounded wait (SPEC §3 as `kaicoder wait` reports it).
Said after_wait(Workspace& ws, const Proposal& staged, long seconds) {
  auto p = wait_for_decision(ws, staged.id, std::chrono::seconds(seconds));
  if (!p) return deny(staged_text(staged, false) + fmt::format(" (waiting failed: {})", p.error().message), staged.id);
  switch (p->state) {
    case State::held:  // it ran; what stays of its effects waits for a person
    case State::applied:
      if (p->kind == Kind::run) {
        CapturedOutput o = run_output(ws, p->id);
        RunResult r;
        r.exit_code = p->outcome_code;
        r.out = std::move(o.out);
        r.err = std::move(o.err);
        return deny(ran_text(*p, r, "a person approved and kaicoder ran"), p->id);
      }
      return deny(fmt::format("a person approved proposal {} ({}) and kaicoder applied it{}: {} the change now; do not "
                              "write it again",
                              p->id, what_of(*p), p->rollback_id.empty() ? "" : " (rollback id " + p->rollback_id + ")",
                              holds(*p)),
                  p->id);
    case State::rejected:
      return deny(fmt::format("a person rejected proposal {} ({}){}; nothing was changed", p->id, what_of(*p),
                              p->reason.empty() ? "" : ": " + p->reason),
                  p->id);
    case State::timeout:
      return deny(
          fmt::format("proposal {} ({}) expired before anyone decided; nothing was changed", p->id, what_of(*p)),
          p->id);
    case State::failed:
    case State::rolled_back:
      return deny(fmt::format("proposal {} ({}) is {}: {}", p->id, what_of(*p), to_string(p->state), p->result), p->id);
    case State::pending:
    case State::approved: break;
  }
  return deny(staged_text(*p, false) + fmt::format(" (still undecided after {} s)", seconds), p->id);
}

// Two-user mode, the agent user's side: the call became a spool entry.
Said spooled(const Result<std::string>& ticket) {
  if (!ticket) return refused(ticket.error());
  const std::string& t = *ticket;
  return deny(fmt::format(
      "kaicoder staged this as ticket {} in the two-user spool — the owner's kaicoder takes it in as a proposal and a "
      "person decides at the owner's terminal; call wait_for_decision with ticket \"{}\" / kaicoder wait {} to learn "
      "the "
      "proposal id and the outcome. Do not make this change another way: once approved, kaicoder writes it itself",
      t, t, t));
}

Said staged_file(Workspace& ws, const Result<Staged>& st) {
  if (!st) return refused(st.error());
  const Proposal& p = st->proposal;
  if (st->applied)
    return deny(
        fmt::format("kaicoder applied this itself under the owner's policy (proposal {}, {}{}): {} the change "
                    "now; do not write it again",
                    p.id, what_of(p),
                    st->applied->rollback_id.empty() ? "" : ", rollback id " + st->applied->rollback_id, holds(p)),
        p.id);
  if (ws.cfg.hook_wait > 0) return after_wait(ws, p, ws.cfg.hook_wait);
  return deny(staged_text(p, st->existing), p.id);
}

Result<std::string> replaced(std::string current, const std::vector<TextEdit>& edits, const std::string& path) {
  for (const TextEdit& e : edits) {
    if (!e.all) {
      auto r = apply_edit(current, e.old_text, e.new_text, path);
      if (!r) return r.error();
      current = std::move(*r);
      continue;
    }
    if (e.old_text.empty()) return make_error(Errc::usage, "replace_all with an empty old_string");
    std::string out;
    size_t at = 0, n = 0;
    for (size_t hit; (hit = current.find(e.old_text, at)) != std::string::npos; at = hit + e.old_text.size(), ++n)
      out.append(current, at, hit - at).append(e.new_text);
    if (n == 0) return make_error(Errc::conflict, fmt::format("'{}': the text to replace was not found", path));
    out.append(current, at);
    current = std::move(out);
  }
  return current;
}

struct Call {
  Workspace& ws;
  const HookEnv& env;
  Harness h;
  const ToolCall& c;
  fs::path base;  // where relative paths start

  ProposeRequest request() const {
    ProposeRequest r;
    r.path = c.path;
    r.agent = std::string(harness_name(h));
    r.why =
        c.why.find_first_not_of(" \t\r\n") != std::string::npos
            ? c.why
            : fmt::format("{} called its {} tool (through kaicoder hook {})", harness_name(h), c.tool, harness_name(h));
    return r;
  }

  Said file(ProposeRequest r) const {
    if (on_agent_side(ws)) return spooled(spool_propose(ws, r, base));
    return staged_file(ws, propose(ws, std::move(r), base, DryRun::no, DiffOptions{}));
  }

  Result<std::string> current(const std::string& path) const {
    return read_input_file(ws, base, path, env.uid, static_cast<size_t>(ws.cfg.limits.content));
  }

  Said edit() const {
    ProposeRequest r = request();
    if (c.edits.size() == 1 && !c.edits[0].all) {
      r.target = c.edits[0].old_text;
      r.replacement = c.edits[0].new_text;
      return file(r);
    }
    // Several edits, or every occurrence: one whole-file write of the result,
    // which kaicoder applies only if the file is still what it was now.
    auto cur = current(c.path);
    if (!cur) return refused(cur.error());
    auto next = replaced(std::move(*cur), c.edits, c.path);
    if (!next) return refused(next.error());
    r.content = std::move(*next);
    return file(r);
  }

  Said shell() const {
    RunRequest r;
    if (c.argv.empty())
      r.shell = c.command;
    else
      r.argv = c.argv;
    ProposeRequest pr = request();
    r.why = pr.why;
    r.agent = pr.agent;
    if (on_agent_side(ws)) return spooled(spool_run(ws, r, base));
    auto st = propose_run(ws, r, base, DryRun::no, nullptr);
    if (!st) return refused(st.error());
    if (st->verdict == RunVerdict::blocked) {
      std::string why;
      for (const auto& reason : st->classification.reasons) why += "\n  " + reason;
      return deny("kaicoder blocks this command; it was not staged and cannot be approved:" + why);
    }
    const Proposal& p = st->proposal;
    if (st->ran)
      return deny(ran_text(p, st->ran->result, "kaicoder ran this itself under the owner's policy as"), p.id);
    if (ws.cfg.hook_wait > 0) return after_wait(ws, p, ws.cfg.hook_wait);
    return deny(staged_text(p, st->existing), p.id);
  }

  Said patch() const {
    // Codex names files by absolute path; the envelope's are root-relative.
    std::string text;
    const std::string prefix = ws.root.string() + "/";
    for (size_t pos = 0; pos < c.command.size();) {
      size_t nl = c.command.find('\n', pos);
      std::string line = c.command.substr(pos, nl == std::string::npos ? std::string::npos : nl + 1 - pos);
      pos = nl == std::string::npos ? c.command.size() : nl + 1;
      for (std::string_view marker : {"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "})
        if (line.starts_with(marker) && std::string_view(line).substr(marker.size()).starts_with(prefix))
          line.erase(marker.size(), prefix.size());
      text += line;
    }
    auto cs = parse_envelope(text);
    if (!cs) return refused(cs.error());
    // Several files, a rename or a mode change: one changeset, one decision.
    if (cs->ops.size() != 1 || cs->ops.front().new_mode || !cs->ops.front().to.empty() ||
        (cs->ops.front().kind != FileOpKind::create && cs->ops.front().kind != FileOpKind::remove &&
         cs->ops.front().kind != FileOpKind::edit)) {
      ChangesetRequest req;
      req.patch = std::move(text);
      ProposeRequest r = request();
      req.agent = r.agent;
      req.why = r.why;
      if (on_agent_side(ws)) return spooled(spool_changeset(ws, req, ws.root));
      return staged_file(ws, propose_changeset(ws, req, ws.root, DryRun::no, DiffOptions{}));
    }
    const FileOp& op = cs->ops.front();
    ProposeRequest r = request();
    r.path = op.path;
    if (op.kind == FileOpKind::create && !op.new_mode) {
      r.content = op.content;
      return file(r);
    }
    if (op.kind == FileOpKind::remove) {
      r.del = true;
      return file(r);
    }
    auto cur = current(op.path);
    if (!cur) return refused(cur.error());
    uint64_t steps = 0;
    auto after = apply_envelope_hunks(op, *cur, steps, PatchLimits{});
    if (!after) return refused(after.error());
    r.content = std::move(*after);
    return file(r);
  }

  Said decide() const {
    // A path the harness would rewrite (trim, expand, normalise) before it
    // opens it is not the path kaicoder would judge.
    if (c.op == Op::write || c.op == Op::edit || c.op == Op::remove)
      if (auto s = check_harness_path(c.path, "path"); !s) return refused(s.error());
    switch (c.op) {
      case Op::pass: return allow();
      case Op::read: {
        auto s = check_read_path(ws, base, c.path);
        return s ? allow() : refused(s.error());
      }
      case Op::list: {
        auto s = check_list_path(ws, base, c.path);
        return s ? allow() : refused(s.error());
      }
      case Op::search: {
        auto s = check_search(ws, base, Search{c.path, c.glob, c.skips_vcs});
        if (s) return allow();
        Said d = refused(s.error());
        d.reason += "; read files one by one with kaicoder's read_file tool, or search a folder without secret files";
        return d;
      }
      case Op::write: {
        ProposeRequest r = request();
        r.content = c.content;
        return file(r);
      }
      case Op::edit: return edit();
      case Op::remove: {
        ProposeRequest r = request();
        r.del = true;
        return file(r);
      }
      case Op::shell: return shell();
      case Op::patch: return patch();
      case Op::unknown: break;
    }
    return deny(
        fmt::format("kaicoder does not let the {} tool '{}' through{}: denied, as every tool it cannot judge. "
                    "Use kaicoder's MCP tools (read_file, list_dir, propose_edit, write_file, run_command) instead",
                    harness_name(h), c.tool, c.refusal.empty() ? "" : " (" + c.refusal + ")"));
  }
};

std::string event_of(std::string_view payload) {
  BoundedJson p = parse_bounded_json(payload);
  const json& j = p.value;
  if (p.status == JsonStatus::ok && j.is_object()) {
    auto it = j.find("hook_event_name");
    if (it != j.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

HookAnswer render(Harness h, const std::string& event, Said said) {
  HookAnswer a;
  a.allowed = said.allow;
  a.reason = said.reason;
  a.proposal = said.proposal;
  json j = json::object();
  switch (h) {
    case Harness::claude_code:
    case Harness::codex:
      // Codex refuses an explicit "allow" without a rewritten input: a pass is an empty object.
      if (!said.allow)
        j["hookSpecificOutput"] = {
            {"hookEventName", "PreToolUse"}, {"permissionDecision", "deny"}, {"permissionDecisionReason", said.reason}};
      break;
    case Harness::gemini:
      if (!said.allow) j = {{"decision", "deny"}, {"reason", said.reason}};
      break;
    case Harness::cursor:
      j["permission"] = said.allow ? "allow" : "deny";
      if (!said.allow) j["user_message"] = said.reason, j["agent_message"] = said.reason;
      if (event == "preToolUse") {
        j["decision"] = said.allow ? "allow" : "deny";
        if (!said.allow) j["reason"] = said.reason;
      }
      break;
  }
  a.out = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return a;
}

}  // namespace

HookAnswer refuse_hook(Harness h, std::string_view payload, const std::string& reason) {
  return render(h, event_of(payload), deny("kaicoder refused this: " + reason));
}

HookAnswer answer_hook(Harness h, std::string_view payload, Workspace& ws, const HookEnv& env) {
  auto c = parse_tool_call(h, payload);
  if (!c) {
    Said s = refused(c.error());
    s.reason = ws.redact(s.reason);
    return render(h, event_of(payload), std::move(s));
  }
  fs::path base = env.cwd;
  if (!c->cwd.empty()) base = fs::path(c->cwd).is_absolute() ? fs::path(c->cwd) : env.cwd / c->cwd;
  Call call{ws, env, h, *c, base.lexically_normal()};
  Said said = call.decide();
  said.reason = ws.redact(said.reason);
  return render(h, c->event, std::move(said));
}

}  // namespace kai::harness
