#include "lib/gate/propose.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/config/policy.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/limits.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/risk/risk.hpp"
#include "lib/run/hooks.hpp"
#include "lib/util/git.hpp"
#include "lib/util/json_bounded.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"
#include "lib/run/validate.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

Result<ProposeRequest> request_from_json(std::string_view text) {
  json j = parse_bounded_json(text).value;  // discarded when not JSON or nested too deep
  if (j.is_discarded() || !j.is_object())
    return make_error(Errc::usage, "--json-input expects one JSON object on stdin",
                      R"(send {"path": …, "target": …, "replacement": …, "why": …})");
  static const char* k_known[] = {"path",        "target", "replacement", "content", "delete",
                                  "replace_all", "why",    "agent",       "summary"};
  ProposeRequest r;
  for (const auto& [key, v] : j.items()) {
    if (std::find_if(std::begin(k_known), std::end(k_known), [&name = key](const char* k) { return name == k; }) ==
        std::end(k_known))
      return make_error(Errc::usage, fmt::format("--json-input: unknown field '{}'", key));
    if (key == "delete" || key == "replace_all") {
      if (!v.is_boolean()) return make_error(Errc::usage, fmt::format("--json-input: '{}' must be true or false", key));
      (key == "delete" ? r.del : r.replace_all) = v.get<bool>();
      continue;
    }
    if (v.is_null()) continue;
    if (!v.is_string()) return make_error(Errc::usage, fmt::format("--json-input: '{}' must be a string", key));
    std::string s = v.get<std::string>();
    if (key == "path")
      r.path = s;
    else if (key == "target")
      r.target = s;
    else if (key == "replacement")
      r.replacement = s;
    else if (key == "content")
      r.content = s;
    else if (key == "why")
      r.why = s;
    else if (key == "agent")
      r.agent = s;
    else
      r.summary = s;
  }
  return r;
}

namespace {

Status validate(const ProposeRequest& r, const Config::Limits& l) {
  if (r.path.empty()) return make_error(Errc::usage, "no path given", "name the file with --path");
  // The record is JSON: bytes that are not UTF-8 cannot be stored or shown.
  for (auto [what, text] : {std::pair{"--why", &r.why}, {"--summary", &r.summary}, {"--agent", &r.agent}})
    if (auto bad = not_utf8(what, *text)) return make_error(Errc::usage, *bad);
  KAI_TRY(check_text_limits(l, r.why, r.summary, r.agent));
  KAI_TRY(check_path_limits(l, "--path", r.path));
  if (r.target) KAI_TRY(check_payload_limit(l, "--target", r.target->size()));
  if (r.replacement) KAI_TRY(check_payload_limit(l, "--replacement", r.replacement->size()));
  if (r.content) KAI_TRY(check_payload_limit(l, "the content", r.content->size()));
  if (r.why.find_first_not_of(" \t\r\n") == std::string::npos)
    return make_error(Errc::usage, "no reason given", "say why with --why; it goes into the changelog");
  int forms = (r.target || r.replacement) + (r.content.has_value()) + r.del;
  if (forms != 1)
    return make_error(Errc::usage, "give exactly one of --target/--replacement, --content-file, or --delete");
  if (r.target.has_value() != r.replacement.has_value())
    return make_error(Errc::usage, "a surgical edit needs both --target and --replacement");
  if (r.replace_all && !r.target) return make_error(Errc::usage, "--replace-all goes with --target and --replacement");
  if (r.target && r.target->empty())
    return make_error(Errc::usage, "the target is empty", "give the exact text to replace");
  return ok_status();
}

size_t count_lines(std::string_view s) {
  size_t n = static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
  return n + (!s.empty() && s.back() != '\n');
}

std::string default_summary(const Proposal& p, const FileState& cur, const FileDiff& d) {
  if (p.kind == Kind::del) return fmt::format("deleted {} ({})", p.path, count_of(count_lines(cur.bytes), "line"));
  if (p.kind == Kind::write && !cur.exists)
    return fmt::format("created {} ({})", p.path, count_of(count_lines(p.content), "line"));
  if (d.binary)
    return fmt::format("{} {} ({} \u2192 {} bytes)", p.kind == Kind::edit ? "edited" : "rewrote", p.path, d.old_size,
                       d.new_size);
  if (p.kind == Kind::edit && p.replace_all)
    return fmt::format("edited {}: {} occurrence{} replaced (+{}/\u2212{} lines)", p.path, p.occurrences,
                       p.occurrences == 1 ? "" : "s", d.added, d.removed);
  if (p.kind == Kind::edit) {
    size_t at = cur.bytes.find(p.target);
    size_t line =
        1 + static_cast<size_t>(std::count(cur.bytes.begin(), cur.bytes.begin() + static_cast<long>(at), '\n'));
    return fmt::format("edited {} at line {} (+{}/\u2212{} lines)", p.path, line, d.added, d.removed);
  }
  return fmt::format("rewrote {} (+{}/\u2212{} lines)", p.path, d.added, d.removed);
}

// The file as it is now; a write may name a file whose folder does not exist yet.
Result<FileState> read_current(Workspace& ws, const RootPath& rp, Kind kind) {
  auto d = open_parent(ws.root, rp.rel, CreateDirs::no);
  if (!d) {
    std::error_code ec;
    if (kind == Kind::write && !fs::exists(rp.abs.parent_path(), ec)) return FileState{};
    return d.error();
  }
  auto st = read_at(*d, rp.abs.filename().string());
  if (!st) return st.error();
  if (st->exists && !st->regular) return make_error(Errc::denied, fmt::format("'{}' is not a regular file", rp.rel));
  if (st->exists) KAI_TRY(check_links(ws.guards, rp.rel, st->nlink));
  return st;
}

// The bytes the proposal leaves: a view of a write's content or of an edit's
// result, kept in `edited`; nullopt for a deletion. Large files are not copied.
Result<std::optional<std::string_view>> proposed_bytes(const Proposal& p, const FileState& cur, std::string& edited) {
  if (p.kind == Kind::write) return std::optional<std::string_view>(p.content);
  if (!cur.exists)
    return make_error(Errc::conflict, fmt::format("'{}' does not exist", p.path),
                      p.kind == Kind::edit ? "create it with --content-file" : "");
  if (p.kind == Kind::del) return std::optional<std::string_view>{};
  if (p.replace_all) {
    ReplacedAll all = replace_every(cur.bytes, p.target, p.replacement);
    if (all.count == 0)
      return make_error(Errc::conflict, fmt::format("target not found in '{}'", p.path),
                        "read the file again ('kaicoder read') and copy the exact text, whitespace included");
    // Staged: the count the person saw. Later: the count must not have changed.
    if (p.occurrences != 0 && all.count != p.occurrences)
      return make_error(Errc::conflict,
                        fmt::format("target now occurs {} times in '{}', not {} as when it was proposed", all.count,
                                    p.path, p.occurrences),
                        "propose the change again against the file as it is now");
    edited = std::move(all.bytes);
    return std::optional<std::string_view>(edited);
  }
  auto r = apply_edit(cur.bytes, p.target, p.replacement, p.path);
  if (!r) return r.error();
  edited = std::move(*r);
  return std::optional<std::string_view>(edited);
}

}  // namespace

ReplacedAll replace_every(std::string_view current, std::string_view target, std::string_view replacement) {
  ReplacedAll r;
  if (target.empty()) {
    r.bytes = current;
    return r;
  }
  size_t from = 0;
  for (size_t at = current.find(target); at != std::string_view::npos; at = current.find(target, from)) {
    r.bytes.append(current.substr(from, at - from)).append(replacement);
    from = at + target.size();
    ++r.count;
  }
  r.bytes.append(current.substr(from));
  return r;
}

// Store the proposal under the lock and, for an allow, apply it at once.
Status stage(Workspace& ws, Staged& out, const Verdict& v) {
  // Proposing changes the store, so it first finishes or undoes what a crash
  // left (and sets aside intents that must not be obeyed), as deciding does.
  // One pass over the live set: the sweep, the twin and the limit.
  auto swept = lock_and_sweep_live(ws);
  if (!swept) return swept.error();
  const bool applies_now = v.decision == Decision::allow && ws.cfg.mode == "normal";
  if (!applies_now) {
    // One proposal, once: a retry of a request still waiting gets its id.
    if (auto twin = pending_twin(ws, swept->live, out.proposal)) {
      out.proposal = std::move(*twin);
      out.existing = true;
      return ok_status();
    }
    KAI_TRY(check_pending_limit(ws, swept->live, out.proposal.agent));
  }
  swept->live = {};  // done with: the index is changed in place, not copied
  auto id = ws.store.next_id();
  if (!id) return id.error();
  out.proposal.id = *id;
  KAI_TRY(ws.store.create(out.proposal));
  queue_notify(ws, out.proposal, "proposed");
  if (v.decision == Decision::allow && ws.cfg.mode == "normal") {
    Proposal& q = out.proposal;
    q.state = State::approved;
    q.decided_by = "policy";
    q.decided_at = q.created;
    q.approved_digest = digest(q);
    KAI_TRY(ws.store.save(q));
    auto o = apply_proposal(ws, q, fmt::format("policy ({})", v.rule));
    if (!o) return o.error();
    out.applied = std::move(*o);
  }
  return ok_status();
}

Result<FileDiff> current_diff(Workspace& ws, const Proposal& p, const DiffOptions& opts) {
  if (p.kind == Kind::changeset) return changeset_diff(ws, p, opts);
  auto rp = resolve(ws.root, ws.root, p.path);
  if (!rp) return rp.error();
  auto cur = read_current(ws, *rp, p.kind);
  if (!cur) return cur.error();
  std::string edited;
  auto next = proposed_bytes(p, *cur, edited);
  if (!next) return next.error();
  std::optional<std::string_view> before;
  if (cur->exists) before = cur->bytes;
  return diff_buffers(p.path, before, *next, cur->exists ? cur->mode : 0644u, opts);
}

Result<Staged> propose(Workspace& ws, ProposeRequest req, const fs::path& cwd, DryRun dry, const DiffOptions& opts) {
  KAI_TRY(validate(req, ws.cfg.limits));
  auto rp = resolve(ws.root, cwd, req.path);
  if (!rp) return rp.error();
  KAI_TRY(check_path_limits(ws.cfg.limits, "--path", rp->rel));
  KAI_TRY(check_write(ws.guards, *rp));
  Proposal p;
  p.kind = req.del ? Kind::del : req.content ? Kind::write : Kind::edit;
  p.path = rp->rel;
  // Metadata is stored and shown; payloads are the bytes to write and stay raw.
  p.why = ws.redact(req.why);
  p.agent = ws.redact(req.agent);
  p.proposer_uid = req.proposer_uid;
  // The payloads are moved, not copied: a whole-file write can be megabytes.
  if (req.target) p.target = std::move(*req.target);
  if (req.replacement) p.replacement = std::move(*req.replacement);
  if (req.content) p.content = std::move(*req.content);
  p.replace_all = req.replace_all;
  p.created = iso_utc(ws.clock->now());
  if (p.kind != Kind::edit && is_protected(ws.cfg, p.path))
    return make_error(Errc::denied, fmt::format("'{}' is a protected path: surgical edits only", p.path),
                      "propose an edit with --target/--replacement instead");
  auto cur = read_current(ws, *rp, p.kind);
  if (!cur) return cur.error();
  if (p.replace_all && cur->exists) p.occurrences = replace_every(cur->bytes, p.target, p.replacement).count;
  std::string edited;
  auto after = proposed_bytes(p, *cur, edited);
  if (!after) return after.error();
  const std::optional<std::string_view> next = *after;
  if (next && cur->exists && *next == cur->bytes)
    return make_error(Errc::usage, fmt::format("the proposed content of '{}' is what the file already holds", p.path),
                      "nothing to change; nothing was staged");
  std::optional<std::string_view> before;
  if (cur->exists) before = cur->bytes;
  auto diff = diff_buffers(p.path, before, next, cur->exists ? cur->mode : 0644u, opts);
  if (!diff) return diff.error();
  // The diff has hashed the current bytes already.
  p.base = {cur->exists, cur->exists ? diff->old_blob : "", cur->exists ? cur->mode : 0644u};
  p.summary = ws.redact(req.summary.empty()
                            ? cut_to_length(default_summary(p, *cur, *diff), static_cast<size_t>(ws.cfg.limits.summary))
                            : req.summary);
  std::string why_tier;
  p.tier = path_tier(ws.cfg, p.path, &why_tier);
  p.tier_reason = why_tier;
  // Never fails; a high risk puts the proposal in the confirm tier.
  assess_risk(ws, p, [&ws](size_t done, size_t total) {
    if (ws.progress) ws.progress("scanning dependencies", done, total);
  });
  if (ws.progress) ws.progress("", 0, 0);
  // SPEC §7: text that holds a secret value is shown redacted, so the person
  // cannot see what would be written: confirm tier, and the header says so.
  if (size_t n = ws.redactor.hidden(p.kind == Kind::edit ? p.replacement : p.content); n > 0) {
    std::string why = fmt::format("the proposed text holds {} secret value{}, hidden in the diff as [REDACTED:…]", n,
                                  n == 1 ? "" : "s");
    p.tier_reason = p.tier == Tier::confirm && !p.tier_reason.empty() ? p.tier_reason + "; " + why : why;
    p.tier = Tier::confirm;
  }
  Verdict v = decide(ws.cfg, to_string(p.kind), p.path);
  // Confirm-tier files always need a person, whatever an allow rule says.
  if (v.decision == Decision::allow && p.tier == Tier::confirm) v = {Decision::ask, v.rule + ", " + p.tier_reason};
  if (v.decision == Decision::deny)
    return make_error(Errc::denied,
                      fmt::format("the policy denies {} of '{}' ({})", to_string(p.kind), p.path, v.rule));
  p.validation = validate_content(ws, p.path, next);
  // So does content that failed its validation: it is offered, never applied unseen.
  if (v.decision == Decision::allow && p.validation.status == "failed")
    v = {Decision::ask, v.rule + ", validation failed"};
  p.decision = v.decision;
  p.decision_rule = v.rule;
  Staged out{std::move(p), std::move(*diff), std::nullopt};
  if (dry == DryRun::yes) return out;
  out.proposal.review = review_proposal(ws, out.proposal, out.diff);  // slow: before the lock
  auto staged = stage(ws, out, v);
  flush_notify(ws);  // the lock is released: a slow hook holds up nobody
  if (!staged) return staged.error();
  return out;
}

}  // namespace kai
