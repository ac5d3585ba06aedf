#include "lib/gate/runs.hpp"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/config/policy.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/limits.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/run/confine.hpp"
#include "lib/run/hooks.hpp"
#include "lib/run/sandbox.hpp"
#include "lib/gate/run_effects.hpp"
#include "lib/run/tree_scripts.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"
#include "lib/util/time.hpp"

namespace kai {
namespace fs = std::filesystem;

CapturedOutput run_output(const Workspace& ws, int id) {
  CapturedOutput c;
  if (auto o = read_owned(ws.store.folder(id) / "stdout")) c.out = std::move(*o);
  if (auto e = read_owned(ws.store.folder(id) / "stderr")) c.err = std::move(*e);
  return c;
}

const std::string_view k_network_reason = "confirm: asks for network access";

ShellContext shell_context(const Workspace& ws, const std::string& cwd_rel) {
  ShellContext ctx;
  fs::path cwd = ws.root / cwd_rel;
  ctx.check_write_target = [&ws, cwd](const std::string& target) -> Status {
    if (!target.empty() && target[0] == '~')
      return make_error(Errc::denied, fmt::format("'{}' is outside the root", target));
    auto rp = resolve(ws.root, cwd, target);
    if (!rp) return rp.error();
    // Build output folders are a command's business; the rest of the
    // never-write list is not.
    for (std::string_view part : split(rp->rel, "/"))
      if (is_generated_dir(part)) return ok_status();
    return check_write(ws.guards, *rp);
  };
  ctx.is_secret = [&ws, cwd](const std::string& path) {
    auto rp = resolve(ws.root, cwd, path);
    if (!rp) return is_secret_file(path);
    return !check_read(ws.guards, *rp).ok();
  };
  ctx.root = ws.root.string();
  ctx.home = ws.home.lexically_normal().string();
  while (ctx.home.size() > 1 && ctx.home.back() == '/') ctx.home.pop_back();
  ctx.extra_blocked = ws.cfg.blocked;
  ctx.protected_processes = ws.cfg.protected_processes;
  return ctx;
}

namespace {

std::string cwd_label(const Proposal& p) { return p.cwd.empty() ? "." : p.cwd; }

Result<std::string> resolve_cwd(const Workspace& ws, const fs::path& caller_cwd, const std::string& cwd) {
  fs::path lexical =
      (cwd.empty() ? caller_cwd : (fs::path(cwd).is_absolute() ? fs::path(cwd) : caller_cwd / cwd)).lexically_normal();
  if (lexical == ws.root || lexical.string() == ws.root.string() + "/") return std::string{};
  auto rp = resolve(ws.root, caller_cwd, cwd.empty() ? caller_cwd.string() : cwd);
  if (!rp) return rp.error();
  std::error_code ec;
  if (!fs::is_directory(rp->abs, ec)) return make_error(Errc::usage, fmt::format("--cwd '{}' is not a folder", cwd));
  return rp->rel;
}

}  // namespace

Result<StagedRun> propose_run(Workspace& ws, const RunRequest& req, const fs::path& cwd, DryRun dry,
                              const std::function<void(std::string_view, int)>& on_output) {
  if (req.argv.empty() == req.shell.empty())
    return make_error(Errc::usage, "give the command after '--', or one --shell string",
                      "kaicoder run --why W -- make test");
  for (auto [what, text] : {std::pair{"--why", &req.why}, {"--agent", &req.agent}})
    if (auto bad = not_utf8(what, *text)) return make_error(Errc::usage, *bad);
  if (req.why.find_first_not_of(" \t\r\n") == std::string::npos)
    return make_error(Errc::usage, "no reason given", "say why with --why; it goes into the changelog");
  KAI_TRY(check_text_limits(ws.cfg.limits, req.why, "", req.agent));
  KAI_TRY(check_path_limits(ws.cfg.limits, "--cwd", req.cwd));
  auto cwd_rel = resolve_cwd(ws, cwd, req.cwd);
  if (!cwd_rel) return cwd_rel.error();
  StagedRun out;
  Proposal& p = out.proposal;
  p.kind = Kind::run;
  p.argv = req.argv;
  p.shell = req.shell;
  p.cwd = *cwd_rel;
  if (req.timeout < 0) return make_error(Errc::usage, "--timeout must be a positive number of seconds");
  p.timeout = req.timeout;
  p.network = req.network;
  p.why = ws.redact(req.why);
  p.agent = ws.redact(req.agent);
  p.proposer_uid = req.proposer_uid;
  p.created = iso_utc(ws.clock->now());
  ShellContext ctx = shell_context(ws, p.cwd);
  out.classification = req.shell.empty() ? classify_argv(req.argv, ctx) : classify_shell(req.shell, ctx);
  // Network access is the person's to grant: it makes the run confirm tier
  // (SPEC §8), whatever the command is.
  // The tier reason stays the classifier's own when it has one; the approver
  // sees the request on its own line as well (cmd/render).
  if (p.network) {
    Classification& cl = out.classification;
    auto at = cl.verdict == RunVerdict::confirm ? cl.reasons.end() : cl.reasons.begin();
    cl.reasons.insert(at, std::string(k_network_reason));
    if (cl.verdict != RunVerdict::blocked) cl.verdict = RunVerdict::confirm;
  }
  const Classification& c = out.classification;
  p.summary = ws.redact(cut_to_length(make_visible(command_text(p)), static_cast<size_t>(ws.cfg.limits.summary)));
  if (c.verdict == RunVerdict::blocked) {
    out.verdict = RunVerdict::blocked;
    if (dry == DryRun::no) {
      auto lock = ws.store.lock();
      if (!lock) return lock.error();
      std::string why = c.reasons.empty() ? "blocked" : c.reasons.front();
      KAI_TRY(ws.changelog.prepend(
          unreversible_entry(ws, p, "blocked", "", why, fmt::format("{} (in {})", p.summary, cwd_label(p)))));
      p.result = why;
      queue_notify(ws, p, "blocked");
    }
    flush_notify(ws);
    return out;
  }
  p.tier = c.verdict == RunVerdict::confirm ? Tier::confirm : Tier::normal;
  p.tier_reason = c.verdict == RunVerdict::confirm && !c.reasons.empty() ? c.reasons.front() : "";
  // Rules bound to the scripts a command runs (always allow) match only
  // while those files hold the bytes they were bound to.
  const FileBlobs runs = has_bound_rules(ws.cfg) ? tree_scripts(ws, c.leaves, p.cwd) : FileBlobs{};
  Verdict v = decide(ws.cfg, "run", command_text(p), &runs);
  // Only an ordinary, fully understood command may pass without a person.
  if (v.decision == Decision::allow && (c.verdict != RunVerdict::ask || !c.understood))
    v = {Decision::ask, v.rule + (c.understood ? ", confirm tier" : ", not fully understood")};
  p.decision = v.decision;
  p.decision_rule = v.rule;
  if (v.decision == Decision::deny)
    return make_error(Errc::denied, fmt::format("the policy denies running '{}' ({})", p.summary, v.rule));
  out.verdict = v.decision == Decision::allow ? RunVerdict::allow : c.verdict;
  if (dry == DryRun::yes) return out;
  // A run no person approves is refused, as approval would refuse it, where
  // its effects could not be held or put back (run_restorable).
  if (v.decision == Decision::allow && ws.cfg.mode == "normal") KAI_TRY(run_restorable(ws));
  p.review = review_proposal(ws, p, FileDiff{});  // slow: before the lock
  {
    auto swept = lock_and_sweep_live(ws);  // as propose does: recovery before the store changes
    if (!swept) return swept.error();
    const bool runs_now = v.decision == Decision::allow && ws.cfg.mode == "normal";
    // One proposal, once: a retry of a command still waiting gets its id.
    std::optional<Proposal> twin;
    if (!runs_now) twin = pending_twin(ws, swept->live, p);
    if (twin) {
      p = std::move(*twin);
      out.existing = true;
    } else {
      if (!runs_now) KAI_TRY(check_pending_limit(ws, swept->live, p.agent));
      swept->live = {};  // done with: the index is changed in place, not copied
      auto id = ws.store.next_id();
      if (!id) return id.error();
      p.id = *id;
      if (runs_now) {
        p.state = State::approved;
        p.decided_by = "policy";
        p.decided_at = p.created;
        p.approved_digest = digest(p);
      }
      KAI_TRY(ws.store.create(p));
      queue_notify(ws, p, "proposed");
    }
  }
  flush_notify(ws);
  if (p.state == State::approved) {
    auto ran = execute_run(ws, p.id, fmt::format("policy ({})", v.rule), on_output);
    if (!ran) return ran.error();
    out.ran = std::move(*ran);
    if (auto q = ws.store.load(p.id)) p = *q;
  }
  return out;
}

Result<RunOutcome> execute_run(Workspace& ws, int id, const std::string& approver,
                               const std::function<void(std::string_view, int)>& on_output) {
  Proposal p;
  std::optional<EffectsRun> fx;
  const SandboxMode mode = sandbox_mode(ws.cfg.sandbox);
  {
    auto lock = ws.store.lock();
    if (!lock) return lock.error();
    auto loaded = ws.store.load(id);
    if (!loaded) return loaded.error();
    p = std::move(*loaded);
    if (p.kind != Kind::run) return make_error(Errc::usage, fmt::format("proposal {} is not a command run", id));
    KAI_TRY(require_sealed(ws.store, p));
    if (p.state != State::approved)
      return make_error(Errc::conflict, fmt::format("proposal {} is {}, not approved", id, to_string(p.state)));
    if (digest(p) != p.approved_digest)
      return make_error(Errc::conflict, fmt::format("proposal {} was changed after it was approved", id));
    // Claiming the run under the lock makes it run once, however many
    // people approve or apply it at the same moment.
    // The owner's folder remembers it too, so an old approved record put
    // back with `started` removed does not run it again (lib/store/mac).
    if (ws.sealer.spent("run", std::to_string(id)))
      return make_error(Errc::conflict, fmt::format("proposal {} has already been started", id));
    auto claim = write_file_exclusive(ws.store.staging_dir(id) / "started", iso_utc(ws.clock->now()) + "\n", 0600);
    if (!claim) return make_error(Errc::conflict, fmt::format("proposal {} has already been started", id));
    KAI_TRY(ws.sealer.spend("run", std::to_string(id)));
    auto started = start_effects(ws, p, mode);
    if (!started) return started.error();
    fx.emplace(std::move(*started));
  }
  RunSpec spec;
  spec.argv = p.argv;
  spec.shell = p.shell;
  spec.cwd = ws.root / p.cwd;
  // --timeout (whole seconds) may only shorten [run] timeout
  spec.timeout = ws.cfg.run_timeout;
  if (p.timeout > 0 && p.timeout < std::chrono::duration_cast<std::chrono::seconds>(spec.timeout).count())
    spec.timeout = std::chrono::seconds(p.timeout);
  spec.max_output = static_cast<size_t>(ws.cfg.max_output);
  confine(ws, spec,
          ConfineOptions{
              .root_writable = true, .writable = {}, .network = p.network, .seen = fx->seen(), .effects = &fx->plan});
  spec.on_output = on_output;
  spec.redact = [&ws](std::string_view s) { return ws.redact(s); };
  // The landlock level cannot keep the run out of the store; it puts back
  // what the run changed there, which is exact only while no other kaicoder
  // changes the store meanwhile: that level holds the lock for the run.
  std::optional<FileLock> held;
  if (spec.sandbox == SandboxMode::landlock) {
    auto l = ws.store.lock();
    if (!l) return l.error();
    held.emplace(std::move(*l));
  }
  GuardWatch guard = watch_guards(ws, spec.sandbox);
  auto r = run_command(spec);
  if (r) r->guards = check_guards(guard);
  auto lock = held ? Result<FileLock>(std::move(*held)) : ws.store.lock();
  if (!lock) return lock.error();
  auto cur = ws.store.load(id);
  if (cur && cur->sealed == SealCheck::ok) p = std::move(*cur);
  if (!r) {
    discard_effects(ws, *fx);
    p.state = State::failed;
    p.result = fmt::format("failed: {}", ws.redact(r.error().message));
    p.outcome_code = static_cast<int>(r.error().code);
    (void)ws.store.save(p);
    queue_notify(ws, p, "failed");
    return r.error();
  }
  (void)write_file_atomic(ws.store.staging_dir(id) / "stdout", r->out, 0600);
  (void)write_file_atomic(ws.store.staging_dir(id) / "stderr", r->err, 0600);
  std::string result = r->timed_out ? fmt::format("timed out after {} s; killed", seconds_text(spec.timeout))
                                    : fmt::format("exit {}", r->exit_code);
  std::string summary =
      fmt::format("{} (in {}; {} bytes of output{}; {})", p.summary, cwd_label(p), r->out_bytes + r->err_bytes,
                  r->out_cut || r->err_cut ? ", cut" : "", r->sandbox_note);
  if (!r->guards.empty()) summary += fmt::format("; THE RUN TOUCHED GUARDED PATHS: {}", fmt::join(r->guards, "; "));
  p.result = result;
  p.outcome_code = r->exit_code;
  Entry e = unreversible_entry(ws, p, "run", approver, result, summary);
  e.summary = summary;  // made visible and redacted with the effects added
  auto done = finish_effects(ws, p, *fx, e);
  if (!done) return done.error();
  // Over an ordinary user's overlay the kernel refuses to rename a folder
  // that was in the tree before the run (EXDEV: no redirect_dir with
  // userxattr; root's overlay has it). mv copies instead; git mv of a folder
  // has no such fallback and fails.
  constexpr std::string_view k_exdev = "Invalid cross-device link";
  if (fx->way == EffectsWay::overlay && r->exit_code != 0 &&
      (r->out.find(k_exdev) != std::string::npos || r->err.find(k_exdev) != std::string::npos))
    done->notes.push_back(
        "the command met EXDEV: over the overlay a folder that was in the tree before the run cannot be renamed "
        "(git mv of a folder fails); move it with mv, which copies, and then git add -A, or have the owner set "
        "[run] overlay = false, which reads a run's effects from snapshots (kaicoder-run(1))");
  queue_notify(ws, p, p.state == State::held ? "held" : "applied");
  Entry logged = done->entry;
  return RunOutcome{std::move(*r), std::move(logged), std::move(*done)};
}

}  // namespace kai
