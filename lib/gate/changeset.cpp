#include "lib/gate/changeset.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "lib/paths/beneath.hpp"
#include "lib/util/git.hpp"
#include "lib/run/hooks.hpp"
#include "lib/gate/limits.hpp"
#include "lib/patch/patch.hpp"
#include "lib/config/policy.hpp"
#include "lib/risk/risk.hpp"
#include "lib/gate/txn.hpp"
#include "lib/util/text.hpp"
#include "lib/run/validate.hpp"

namespace kai {
namespace fs = std::filesystem;

// ----- propose ---------------------------------------------------------------

namespace {

// Every refusal of one file refuses the whole changeset: the message says so.
Error whole(const Error& e) {
  return make_error(e.code, fmt::format("{}; the whole changeset is refused", e.message), e.hint);
}

// Where a path to read comes from: given (an agent's, at propose: resolved
// on disk) or stored (a sealed record's, resolved when it was proposed:
// checked as it stands, txn::check_stored, and not walked again).
enum class PathFrom { given, stored };

// The file at root-relative `rel` as it is now, its guardrails checked:
// nullopt when it (or its folder) does not exist. Its folder is opened
// once for all the files of one look at the changeset (`folders`), beneath
// root with no symlink followed and no mount crossed.
Result<std::optional<CurrentFile>> read_checked(Workspace& ws, txn::Folders& folders, const std::string& given,
                                                PathFrom from = PathFrom::given) {
  // The guardrail's refusal, as a single file's (check_name): such a name
  // can neither be shown as it is nor stored in a record.
  if (auto bad = not_utf8(fmt::format("the path '{}'", make_visible(given)), given))
    return make_error(Errc::denied, *bad, "rename the file by hand if it must change");
  KAI_TRY(check_path_limits(ws.cfg.limits, fmt::format("the path '{}'", given), given));
  std::string rel = given;
  if (from == PathFrom::stored) {
    KAI_TRY(txn::check_stored(ws, rel));
  } else {
    auto rp = resolve(ws.root, ws.root, given);
    if (!rp) return rp.error();
    KAI_TRY(check_write(ws.guards, *rp));
    rel = std::move(rp->rel);
  }
  auto d = folders.parent(rel, CreateDirs::no);
  if (!d) {
    if (d.error().code == Errc::conflict) return std::optional<CurrentFile>{};  // its folder is missing
    return d.error();
  }
  auto st = read_at(*d, txn::base_of(rel));
  if (!st) return st.error();
  if (!st->exists) return std::optional<CurrentFile>{};
  if (!st->regular)
    return make_error(Errc::denied, fmt::format("'{}' is not a regular file", rel),
                      "kaicoder changes regular files only");
  KAI_TRY(check_links(ws.guards, rel, st->nlink));
  return std::optional<CurrentFile>(CurrentFile{std::move(st->bytes), static_cast<unsigned>(st->mode)});
}

// What the JSON ops ask beyond the model of lib/patch: the edits' targets.
struct EditAsk {
  std::string target, replacement;
  bool replace_all = false;
};

// The ops of a --json-input changeset, paths resolved against `cwd`.
Result<Changeset> ops_from(Workspace& ws, const ChangesetRequest& req, const fs::path& cwd,
                           std::map<size_t, EditAsk>& edits,
                           const std::function<Result<std::optional<CurrentFile>>(const std::string&)>& read) {
  Changeset cs;
  for (size_t i = 0; i < req.changes.size(); ++i) {
    const ChangeRequest& c = req.changes[i];
    auto rp = resolve(ws.root, cwd, c.path);
    if (!rp) return whole(rp.error());
    FileOp op;
    op.format = PatchFormat::envelope;  // a delete names the file only, as in an envelope
    op.path = rp->rel;
    op.patch_line = i;
    if (c.mode) op.new_mode = *c.mode == 0755u ? k_mode_executable : k_mode_regular;
    if (c.op == "edit") {
      op.kind = FileOpKind::edit;
      edits[cs.ops.size()] = {*c.target, *c.replacement, c.replace_all};
    } else if (c.op == "write") {
      auto cur = read(op.path);
      if (!cur) return cur.error();
      op.kind = *cur ? FileOpKind::write : FileOpKind::create;
      op.content = *c.content;
    } else if (c.op == "delete") {
      op.kind = FileOpKind::remove;
    } else if (c.op == "rename") {
      auto to = resolve(ws.root, cwd, c.to);
      if (!to) return whole(to.error());
      op.kind = FileOpKind::rename;
      op.to = to->rel;
    } else {
      op.kind = FileOpKind::mode;
    }
    cs.ops.push_back(std::move(op));
  }
  return cs;
}

unsigned git_mode(unsigned perms) { return perms & 0111u ? k_mode_executable : k_mode_regular; }

// One file's diff for display: git's headers for a rename and a mode change.
Result<FileDiff> diff_of(const Change& c, const std::optional<std::string_view>& before, const DiffOptions& opts) {
  std::optional<std::string_view> after;
  if (c.after_exists) after = c.after;
  auto d = diff_buffers(c.target(), before, after, c.after_exists ? c.after_mode : c.base.mode, opts);
  if (!d) return d.error();
  const std::string from = c.path, to = c.target();
  std::string head = fmt::format("diff --git a/{} b/{}\n", from, to);
  if (c.op == "rename") head += fmt::format("rename from {}\nrename to {}\n", from, to);
  if (c.base.exists && c.after_exists && git_mode(c.base.mode) != git_mode(c.after_mode))
    head += fmt::format("old mode {:o}\nnew mode {:o}\n", git_mode(c.base.mode), git_mode(c.after_mode));
  if (d->text.empty()) {
    if (head.find('\n') + 1 != head.size()) d->text = head;
    return d;
  }
  size_t nl = d->text.find('\n');
  std::string rest = d->text.substr(nl + 1);
  if (c.op == "rename" && rest.find("--- a/") != std::string::npos) {
    size_t at = rest.find("--- a/");
    size_t end = rest.find('\n', at);
    rest.replace(at, end - at, "--- a/" + from);
  }
  d->text = head + rest;
  return d;
}

// Diffs of all `changes`, their changed lines counted against one budget.
// `counted`, when given, gets each file's whole counts (added, removed,
// binary), cut or not. Each file's share of the text is one of `parts`.
Result<FileDiff> diffs_of(const std::vector<Change>& changes, const std::vector<std::optional<std::string>>& befores,
                          const DiffOptions& opts, std::vector<Change>* counted = nullptr) {
  FileDiff all;
  size_t budget = opts.max_changed_lines;
  for (size_t i = 0; i < changes.size(); ++i) {
    DiffOptions o = opts;
    o.max_changed_lines = std::max<size_t>(budget, 1);
    std::optional<std::string_view> before;
    if (befores[i]) before = *befores[i];
    auto d = diff_of(changes[i], before, o);
    if (!d) return d.error();
    if (counted) {
      (*counted)[i].added = d->added;
      (*counted)[i].removed = d->removed;
      (*counted)[i].binary = d->binary;
    }
    all.added += d->added;
    all.removed += d->removed;
    all.hunks += d->hunks;
    all.binary = all.binary || d->binary;
    all.old_size += d->old_size;
    all.new_size += d->new_size;
    DiffPart part{i, all.text.size(), 0, true, d->truncated, d->added, d->removed, d->hunks, 0, 0};
    if (!opts.full && budget == 0 && (d->added + d->removed) > 0) {
      all.truncated = true;  // past the budget: this file's diff is not shown
      part.shown = part.truncated = false;
      all.parts.push_back(part);
      continue;
    }
    all.truncated = all.truncated || d->truncated;
    part.shown_changed = d->truncated ? d->shown_changed : d->added + d->removed;
    part.shown_hunks = d->truncated ? d->shown_hunks : d->hunks;
    all.shown_changed += part.shown_changed;
    all.shown_hunks += part.shown_hunks;
    budget -= std::min(budget, part.shown_changed);
    part.length = d->text.size();
    all.parts.push_back(part);
    all.text += d->text;
  }
  return all;
}

// The subjects the policy, the tiers, risk and validation look at for one
// change: a rename is a delete of its old path and a write of its new one.
struct Subject {
  size_t change = 0;
  Kind kind = Kind::edit;
  std::string path;
  std::optional<std::string_view> after;
  std::optional<std::string_view> before;
};

std::vector<Subject> subjects_of(const std::vector<Change>& changes,
                                 const std::vector<std::optional<std::string>>& befores) {
  std::vector<Subject> out;
  for (size_t i = 0; i < changes.size(); ++i) {
    const Change& c = changes[i];
    std::optional<std::string_view> before;
    if (befores[i]) before = *befores[i];
    if (c.op == "delete")
      out.push_back({i, Kind::del, c.path, std::nullopt, before});
    else if (c.op == "rename") {
      out.push_back({i, Kind::del, c.path, std::nullopt, before});
      out.push_back({i, Kind::write, c.to, std::string_view(c.after), std::nullopt});
    } else {
      out.push_back(
          {i, c.op == "edit" || c.op == "mode" ? Kind::edit : Kind::write, c.path, std::string_view(c.after), before});
    }
  }
  return out;
}

void add_reason(std::string& into, std::string_view more) {
  if (more.empty() || into.find(more) != std::string::npos) return;
  into += into.empty() ? std::string(more) : fmt::format("; {}", more);
}

Decision stricter(Decision a, Decision b) {
  auto rank = [](Decision d) { return d == Decision::deny ? 2 : d == Decision::ask ? 1 : 0; };
  return rank(b) > rank(a) ? b : a;
}

// Grade every file and the changeset as a whole: strictest verdict wins.
Result<Verdict> grade(Workspace& ws, Proposal& p, const std::vector<std::optional<std::string>>& befores) {
  std::vector<Subject> subjects = subjects_of(p.changes, befores);
  std::vector<Proposal> qs;
  for (const Subject& s : subjects) {
    Proposal q;
    q.kind = s.kind;
    q.path = s.path;
    std::string why;
    q.tier = path_tier(ws.cfg, q.path, &why);
    q.tier_reason = why;
    qs.push_back(std::move(q));
  }
  assess_risk_each(ws, qs, [&ws](size_t done, size_t total) {
    if (ws.progress) ws.progress("scanning dependencies", done, total);
  });
  if (ws.progress) ws.progress("", 0, 0);
  for (Change& c : p.changes) c.decision = Decision::allow;
  Verdict all{Decision::allow, ""};
  for (size_t k = 0; k < subjects.size(); ++k) {
    const Subject& s = subjects[k];
    Proposal& q = qs[k];
    Change& c = p.changes[s.change];
    // SPEC §7: secret values the change brings in are hidden in the diff.
    if (s.after) {
      size_t n = ws.redactor.hidden(*s.after), was = s.before ? ws.redactor.hidden(*s.before) : 0;
      if (n > was) {
        add_reason(q.tier_reason,
                   fmt::format("the proposed text holds {} secret value{}, hidden in the diff as [REDACTED:…]", n - was,
                               n - was == 1 ? "" : "s"));
        q.tier = Tier::confirm;
      }
    }
    Verdict v = decide(ws.cfg, to_string(q.kind), q.path);
    if (v.decision == Decision::deny)
      return make_error(Errc::denied, fmt::format("the policy denies {} of '{}' ({}); the whole changeset is refused",
                                                  to_string(q.kind), q.path, v.rule));
    Validation val = validate_content(ws, q.path, s.after);
    if (q.risk > c.risk || c.risk_reason.empty()) {
      c.risk = std::max(c.risk, q.risk);
      add_reason(c.risk_reason, q.risk_reason);
    }
    if (q.tier == Tier::confirm) {
      c.tier = Tier::confirm;
      add_reason(c.tier_reason, q.tier_reason);
    }
    if (c.decision_rule.empty() || stricter(c.decision, v.decision) != c.decision) c.decision_rule = v.rule;
    c.decision = stricter(c.decision, v.decision);
    if (val.status == "failed" || c.validation == "none" || (c.validation == "not-run" && val.status == "ok"))
      c.validation = val.status;
    for (ValidationCheck& check : val.checks) {
      check.pattern = fmt::format("{} ({})", check.pattern, q.path);
      p.validation.checks.push_back(std::move(check));
    }
    if (stricter(all.decision, v.decision) != all.decision || all.rule.empty())
      all = {stricter(all.decision, v.decision), fmt::format("{}: {}", q.path, v.rule)};
  }
  // The changeset: its highest risk, confirm when any file is, every check.
  for (const Change& c : p.changes) {
    if (c.risk > p.risk || p.risk_reason.empty()) {
      p.risk = std::max(p.risk, c.risk);
      p.risk_reason = fmt::format("{}: {}", c.target(), c.risk_reason);
    }
    if (c.tier == Tier::confirm) {
      p.tier = Tier::confirm;
      add_reason(p.tier_reason, fmt::format("{}: {}", c.target(), c.tier_reason));
    }
  }
  std::string status = "none";
  for (const ValidationCheck& check : p.validation.checks) {
    if (check.status == "failed")
      status = "failed";
    else if (check.status == "ok" && status != "failed")
      status = "ok";
    else if (check.status == "not-run" && status == "none")
      status = "not-run";
  }
  p.validation.status = status;
  // Confirm-tier files always need a person, whatever an allow rule says;
  // so does content that failed its validation.
  if (all.decision == Decision::allow && p.tier == Tier::confirm)
    all = {Decision::ask, all.rule + ", " + p.tier_reason};
  if (all.decision == Decision::allow && status == "failed") all = {Decision::ask, all.rule + ", validation failed"};
  return all;
}

std::string default_summary(const Proposal& p) {
  std::map<std::string, size_t> by_op;
  size_t added = 0, removed = 0;
  for (const Change& c : p.changes) {
    ++by_op[c.op];
    added += c.added;
    removed += c.removed;
  }
  static const std::pair<const char*, const char*> k_words[] = {{"edit", "edited"},    {"write", "rewritten"},
                                                                {"create", "created"}, {"delete", "deleted"},
                                                                {"rename", "renamed"}, {"mode", "mode changed"}};
  std::string parts;
  for (const auto& [op, word] : k_words)
    if (by_op.count(op)) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", by_op[op], word);
  return fmt::format("changeset of {} file{} (+{}/\u2212{} lines): {}", p.changes.size(),
                     p.changes.size() == 1 ? "" : "s", added, removed, parts);
}

// A change built from one applied op of the patch model.
// Takes the op's new bytes: the record keeps them, the op is not read again.
Change change_of(FileOp& op) {
  Change c;
  c.path = op.kind == FileOpKind::copy ? op.to : op.path;
  switch (op.kind) {
    case FileOpKind::edit: c.op = "edit"; break;
    case FileOpKind::write: c.op = "write"; break;
    case FileOpKind::create:
    case FileOpKind::copy: c.op = "create"; break;
    case FileOpKind::remove: c.op = "delete"; break;
    case FileOpKind::rename: c.op = "rename"; break;
    case FileOpKind::mode: c.op = "mode"; break;
  }
  if (op.kind == FileOpKind::rename) c.to = op.to;
  if (op.before && op.kind != FileOpKind::copy)
    c.base = {true, blob_id(*op.before), op.before_mode};
  else
    c.base = {false, "", 0644};
  c.after_exists = op.after.has_value();
  if (op.after) c.after = std::move(*op.after);
  c.after_mode = c.after_exists ? op.after_mode : 0;
  c.binary = c.after.find('\0') != std::string::npos || (op.before && op.before->find('\0') != std::string::npos);
  return c;
}

// Refusals of one change that no policy can lift.
Status check_change(Workspace& ws, const Change& c, const std::optional<std::string>& before) {
  const Config::Limits& l = ws.cfg.limits;
  for (const std::string* path : {&c.path, &c.to}) {
    if (path->empty()) continue;
    if (is_protected(ws.cfg, *path) && !(c.op == "edit" && c.after_mode == c.base.mode && path == &c.path))
      return make_error(Errc::denied,
                        fmt::format("'{}' is a protected path: surgical edits only, and the changeset would {} it; "
                                    "the whole changeset is refused",
                                    *path,
                                    c.op == "mode"     ? "change the mode of"
                                    : c.op == "create" ? "create"
                                                       : c.op),
                        "propose hunks or an edit of the file's text instead, and leave its name and mode as they are");
  }
  if (c.after_exists)
    KAI_TRY(check_payload_limit(l, fmt::format("the new content of '{}'", c.target()), c.after.size()));
  if (c.op != "rename" && c.op != "delete" && c.op != "create" && before && *before == c.after &&
      c.after_mode == c.base.mode)
    return make_error(Errc::usage,
                      fmt::format("the changeset does not change '{}': it already holds that content", c.path),
                      "leave the file out of the changeset; nothing was staged");
  return ok_status();
}

}  // namespace

Result<Staged> propose_changeset(Workspace& ws, const ChangesetRequest& req, const fs::path& cwd, DryRun dry,
                                 const DiffOptions& opts) {
  const Config::Limits& l = ws.cfg.limits;
  for (auto [what, text] : {std::pair{"--why", &req.why}, {"--summary", &req.summary}, {"--agent", &req.agent}})
    if (auto bad = not_utf8(what, *text)) return make_error(Errc::usage, *bad);
  KAI_TRY(check_text_limits(l, req.why, req.summary, req.agent));
  if (req.why.find_first_not_of(" \t\r\n") == std::string::npos)
    return make_error(Errc::usage, "no reason given", "say why with --why; it goes into the changelog");
  if (req.patch.has_value() == !req.changes.empty())
    return make_error(Errc::usage, "a changeset is a patch or a list of changes, not both and not neither");

  std::map<std::string, std::optional<CurrentFile>> seen;
  txn::Folders folders(ws);
  auto read = [&](const std::string& rel) -> Result<std::optional<CurrentFile>> {
    if (auto it = seen.find(rel); it != seen.end()) return it->second;
    auto cur = read_checked(ws, folders, rel);
    if (!cur) return whole(cur.error());
    seen.emplace(rel, *cur);
    return cur;
  };
  std::map<size_t, EditAsk> edits;
  Changeset cs;
  if (req.patch) {
    auto parsed = parse_patch(*req.patch);
    if (!parsed) return parsed.error();
    cs = std::move(*parsed);
  } else {
    auto built = ops_from(ws, req, cwd, edits, read);
    if (!built) return built.error();
    cs = std::move(*built);
  }
  KAI_TRY(apply_changeset(cs, read));
  // The edits of --json-input: their target in the file as it is.
  for (auto& [i, e] : edits) {
    FileOp& op = cs.ops[i];
    if (e.replace_all) {
      ReplacedAll all = replace_every(*op.before, e.target, e.replacement);
      if (all.count == 0)
        return make_error(Errc::conflict,
                          fmt::format("target not found in '{}'; the whole changeset is refused", op.path),
                          "read the file again ('kaicoder read') and copy the exact text, whitespace included");
      op.after = std::move(all.bytes);
    } else {
      auto r = apply_edit(*op.before, e.target, e.replacement, op.path);
      if (!r) return whole(r.error());
      op.after = std::move(*r);
    }
  }

  Proposal p;
  p.kind = Kind::changeset;
  p.why = ws.redact(req.why);
  p.agent = ws.redact(req.agent);
  p.proposer_uid = req.proposer_uid;
  p.created = iso_utc(ws.clock->now());
  std::vector<std::optional<std::string>> befores;
  for (FileOp& op : cs.ops) {
    Change c = change_of(op);
    std::optional<std::string> before;
    if (op.kind != FileOpKind::copy) before = std::move(op.before);
    KAI_TRY(check_change(ws, c, before));
    p.changes.push_back(std::move(c));
    befores.push_back(std::move(before));
  }
  if (p.changes.empty()) return make_error(Errc::usage, "the changeset changes no file");
  p.path = p.changes.front().path;
  // The diffstat: each file's whole counts, however much of it is shown.
  auto diff = diffs_of(p.changes, befores, opts, &p.changes);
  if (!diff) return diff.error();
  auto verdict = grade(ws, p, befores);
  if (!verdict) return verdict.error();
  p.decision = verdict->decision;
  p.decision_rule = verdict->rule;
  p.summary =
      ws.redact(req.summary.empty() ? cut_to_length(default_summary(p), static_cast<size_t>(l.summary)) : req.summary);
  Staged out{std::move(p), std::move(*diff), std::nullopt};
  if (dry == DryRun::yes) return out;
  out.proposal.review = review_proposal(ws, out.proposal, out.diff);  // slow: before the lock
  auto staged = stage(ws, out, *verdict);
  flush_notify(ws);
  if (!staged) return staged.error();
  return out;
}

Result<FileDiff> changes_diff(const std::vector<Change>& changes,
                              const std::vector<std::optional<std::string>>& befores, const DiffOptions& opts) {
  return diffs_of(changes, befores, opts);
}

Result<FileDiff> changeset_diff(Workspace& ws, const Proposal& p, const DiffOptions& opts,
                                const std::optional<std::string>& only) {
  std::vector<Change> shown;
  std::vector<size_t> index;  // of each shown change in p.changes
  std::vector<std::optional<std::string>> befores;
  txn::Folders folders(ws);  // closed before the question is asked
  // A sealed record's paths were resolved when it was proposed; any other
  // record's (one that does not verify, shown for what it is) are resolved
  // here as an agent's would be.
  const PathFrom from = p.sealed == SealCheck::ok ? PathFrom::stored : PathFrom::given;
  for (const Change& c : p.changes) {
    if (only && *only != c.path && *only != c.to) continue;
    index.push_back(static_cast<size_t>(&c - p.changes.data()));
    auto cur = read_checked(ws, folders, c.path, from);
    if (!cur) return cur.error();
    const bool same =
        c.base.exists ? (*cur && blob_id((*cur)->bytes) == c.base.blob && (*cur)->mode == c.base.mode) : !*cur;
    if (!same)
      return make_error(
          Errc::conflict,
          fmt::format("'{}' changed since proposal {} was made (stale base): the changeset can no longer apply", c.path,
                      p.id),
          "propose the changeset again against the files as they are now");
    if (c.op == "rename") {
      auto there = read_checked(ws, folders, c.to, from);
      if (!there) return there.error();
      if (*there)
        return make_error(Errc::conflict,
                          fmt::format("'{}', where proposal {} renames '{}' to, exists now", c.to, p.id, c.path),
                          "propose the changeset again against the files as they are now");
    }
    shown.push_back(c);
    befores.push_back(*cur ? std::optional<std::string>(std::move((*cur)->bytes)) : std::nullopt);
  }
  if (only && shown.empty())
    return make_error(Errc::not_found, fmt::format("proposal {} does not change '{}'", p.id, *only),
                      fmt::format("see the files it changes: kaicoder show {}", p.id));
  auto d = diffs_of(shown, befores, opts);
  if (!d) return d.error();
  for (DiffPart& part : d->parts) part.change = index[part.change];
  return d;
}

}  // namespace kai
