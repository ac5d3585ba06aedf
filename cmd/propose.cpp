// kaicoder propose: stage a surgical edit, a whole-file write or a delete,
// or a changeset of many files (--patch, or --json-input with "changes").

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/gate/changeset.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/propose.hpp"
#include "lib/gate/reader.hpp"
#include "lib/team/team.hpp"
#include "lib/util/fs.hpp"

namespace kai::cmd {
namespace {

struct ProposeArgs {
  std::string path, target, replacement, target_file, replacement_file, content_file, patch, why, agent, summary;
  bool del = false, json_input = false, dry_run = false, wait = false, replace_all = false, publish = false;
};

// "-" is stdin (read once: it cannot be read twice); anything else a file
// under the rules of lib/gate/reader's read_input_file. Never more than max + 1
// bytes: one byte past the limit says it is too long.
Result<std::string> read_arg_file(Session& s, Workspace& ws, const std::string& f, size_t max) {
  if (f == "-") return read_all(0, max);
  return read_input_file(ws, s.env().cwd, f, ::getuid(), max);
}

// A patch or a changeset's JSON may hold many files: up to this much.
constexpr size_t k_changeset_max = size_t{64} << 20;

// The --json-input text: room for a target and a replacement at the limit
// and the rest, or for a changeset.
Result<std::string> read_json_input(const Config::Limits& limits) {
  const size_t json_max = std::max(2 * static_cast<size_t>(limits.content) + (size_t{1} << 20), k_changeset_max);
  auto text = read_all(0, json_max);
  if (!text) return text.error();
  if (text->size() > json_max)
    return make_error(Errc::usage, fmt::format("--json-input is over {} bytes", json_max),
                      "send large content with --content-file, or split the change; nothing was staged");
  return text;
}

Result<ProposeRequest> build_request(Session& s, Workspace& ws, ProposeArgs& a, CLI::App& sub,
                                     const std::optional<std::string>& json_text) {
  const Config::Limits& limits = ws.cfg.limits;
  ProposeRequest r;
  const auto content_max = static_cast<size_t>(limits.content);
  if (json_text) {
    auto j = request_from_json(*json_text);
    if (!j) return j.error();
    r = std::move(*j);
  }
  if (!a.path.empty()) r.path = a.path;
  if (!a.why.empty()) r.why = a.why;
  if (!a.summary.empty()) r.summary = a.summary;
  if (!a.agent.empty()) r.agent = a.agent;
  if (sub.count("--target")) r.target = a.target;
  if (sub.count("--replacement")) r.replacement = a.replacement;
  if (a.del) r.del = true;
  if (a.replace_all) r.replace_all = true;
  int stdin_uses = (a.target_file == "-") + (a.replacement_file == "-") + (a.content_file == "-") + a.json_input;
  if (stdin_uses > 1) return make_error(Errc::usage, "only one input can come from stdin ('-')");
  auto load = [&](const char* opt, const std::string& f, std::optional<std::string>& into) -> Status {
    if (f.empty()) return ok_status();
    auto t = read_arg_file(s, ws, f, content_max);
    // A missing file is a bad argument (2); a refused one stays denied (3).
    if (!t)
      return make_error(t.error().code == Errc::io ? Errc::usage : t.error().code,
                        fmt::format("{}: {}", opt, t.error().message), t.error().hint);
    if (t->size() > content_max)
      return make_error(Errc::usage,
                        fmt::format("'{}' is over the limit of {} bytes ([limits] content)", f, content_max),
                        "split the change into smaller proposals; nothing was staged");
    into = std::move(*t);
    return ok_status();
  };
  KAI_TRY(load("--target-file", a.target_file, r.target));
  KAI_TRY(load("--replacement-file", a.replacement_file, r.replacement));
  KAI_TRY(load("--content-file", a.content_file, r.content));
  if (r.agent.empty())
    if (const char* env_agent = std::getenv("KAICODER_AGENT")) r.agent = env_agent;
  return r;
}

// propose --patch, or --json-input with "changes".
Result<ChangesetRequest> build_changeset(Session& s, Workspace& ws, ProposeArgs& a, CLI::App& sub,
                                         const std::optional<std::string>& json_text) {
  for (const char* opt : {"--path", "--target", "--replacement", "--target-file", "--replacement-file",
                          "--content-file", "--delete", "--replace-all"})
    if (sub.count(opt))
      return make_error(Errc::usage,
                        fmt::format("{} does not go with a changeset (--patch, or \"changes\" in --json-input)", opt),
                        "a changeset names its files itself");
  ChangesetRequest r;
  if (json_text) {
    if (!a.patch.empty()) return make_error(Errc::usage, "give --patch or a changeset on --json-input, not both");
    auto j = changeset_from_json(*json_text);
    if (!j) return j.error();
    r = std::move(*j);
  } else {
    auto text = a.patch == "-" ? read_all(0, k_changeset_max)
                               : read_input_file(ws, s.env().cwd, a.patch, ::getuid(), k_changeset_max);
    if (!text)
      return make_error(text.error().code == Errc::io ? Errc::usage : text.error().code,
                        fmt::format("--patch: {}", text.error().message), text.error().hint);
    if (text->size() > k_changeset_max)
      return make_error(Errc::usage, fmt::format("the patch is over {} bytes", k_changeset_max),
                        "split it into smaller patches; nothing was staged");
    r.patch = std::move(*text);
  }
  if (!a.why.empty()) r.why = a.why;
  if (!a.summary.empty()) r.summary = a.summary;
  if (!a.agent.empty()) r.agent = a.agent;
  if (r.agent.empty())
    if (const char* env_agent = std::getenv("KAICODER_AGENT")) r.agent = env_agent;
  return r;
}

// `published`: propose --publish, what the publish did (or why it failed:
// the proposal is staged here all the same).
int print_staged(Session& s, const Staged& st, bool dry,
                 const std::optional<Result<team::Published>>& published = std::nullopt) {
  const Proposal& p = published && *published ? (*published)->proposal : st.proposal;
  if (s.json()) {
    nlohmann::json j = with_proposal(p);
    j["diff"] = st.diff.text;
    j["diff_info"] = diff_object(st.diff);
    j["dry_run"] = dry;
    j["existing"] = st.existing;
    if (st.applied) j["applied"] = outcome_object(*st.applied);
    if (published && *published) j["published"] = team::published_object(**published);
    if (published && !*published) return emit(s, std::move(j), exit_code(published->error().code), published->error());
    return emit(s, std::move(j));
  }
  if (dry) out("dry run: nothing staged\n");
  if (st.existing)
    out("the same change from the same agent is already waiting: proposal {}; nothing new was staged\n", p.id);
  print_proposal_header(s, p);
  if (p.kind == Kind::changeset) print_diffstat(s, p);
  print_diff(s, p, st.diff);
  if (st.applied) {
    out("\n");
    print_outcome(s, p, *st.applied);
  } else if (published) {
    out("\n");
    if (!*published) return report(s, published->error());
    print_published(**published);
  } else if (!dry) {
    out("\nwaiting for a person: kaicoder approve {}   (or: kaicoder reject {})\n", p.id, p.id);
  }
  return k_exit_ok;
}

}  // namespace

RunFn setup_propose(CLI::App& sub) {
  auto a = std::make_shared<ProposeArgs>();
  sub.add_option("--path", a->path, "file to change, relative to the working directory or root");
  sub.add_option("--target", a->target, "exact text to replace; must occur exactly once");
  sub.add_option("--replacement", a->replacement, "text to put in its place");
  sub.add_option("--target-file", a->target_file, "read the target from a file ('-' = stdin)");
  sub.add_option("--replacement-file", a->replacement_file, "read the replacement from a file ('-' = stdin)");
  sub.add_option("--content-file", a->content_file, "whole new content of the file ('-' = stdin)");
  sub.add_flag("--delete", a->del, "remove the file");
  sub.add_flag("--replace-all", a->replace_all, "replace every occurrence of the target (their count is recorded)");
  sub.add_option("--patch", a->patch,
                 "a changeset: a unified diff (git diff) or a *** Begin Patch envelope ('-' = stdin)");
  sub.add_flag("--json-input", a->json_input, "read one request object from stdin");
  sub.add_option("--why", a->why, "why the change is needed (goes into the changelog)");
  sub.add_option("--summary", a->summary, "one-line summary for the changelog (default: generated)");
  sub.add_option("--agent", a->agent, "name of the proposing agent (default: $KAICODER_AGENT)");
  sub.add_flag("--dry-run", a->dry_run, "print the diff and the decision; stage nothing");
  sub.add_flag("--wait", a->wait, "block until the proposal is decided and report the outcome");
  sub.add_flag("--publish", a->publish,
               "team mode: publish it to the [team] remote at once, for a person to decide from their clone");
  return [a, &sub](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    std::optional<std::string> json_text;
    if (a->json_input) {
      if (a->patch == "-" || a->target_file == "-" || a->replacement_file == "-" || a->content_file == "-")
        return report(s, make_error(Errc::usage, "only one input can come from stdin ('-')"));
      auto t = read_json_input((*ws)->cfg.limits);
      if (!t) return report(s, t.error());
      json_text = std::move(*t);
    }
    DiffOptions opts;
    const DryRun dry = a->dry_run ? DryRun::yes : DryRun::no;
    Result<Staged> st = make_error(Errc::usage, "");
    if (!a->patch.empty() || (json_text && is_changeset_json(*json_text))) {
      auto req = build_changeset(s, **ws, *a, sub, json_text);
      if (!req) return report(s, req.error());
      // Two-user mode, the agent user's side: the owner's intake stages it.
      if (s.agent_side() && !a->dry_run)
        return report_spooled(s, **ws, spool_changeset(**ws, *req, s.env().cwd), "propose", a->wait);
      st = propose_changeset(**ws, *req, s.env().cwd, dry, opts);
    } else {
      auto req = build_request(s, **ws, *a, sub, json_text);
      if (!req) return report(s, req.error());
      // Two-user mode, the agent user's side: the owner's intake stages it.
      if (s.agent_side() && !a->dry_run)
        return report_spooled(s, **ws, spool_propose(**ws, *req, s.env().cwd), "propose", a->wait);
      st = propose(**ws, std::move(*req), s.env().cwd, dry, opts);
    }
    if (!st) return report(s, st.error());
    std::optional<Result<team::Published>> published;
    if (a->publish && !a->dry_run && !st->applied) published = team::publish(**ws, st->proposal.id);
    if (a->wait && !a->dry_run && !st->applied && (!published || *published)) {
      print_waiting(st->proposal.id);
      if (!s.json()) {
        print_staged(s, *st, false, published);
        std::fflush(stdout);
      }
      return wait_and_report(s, **ws, st->proposal.id);
    }
    return print_staged(s, *st, a->dry_run, published);
  };
}

}  // namespace kai::cmd
