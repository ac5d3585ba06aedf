// kaicoder propose: stage a surgical edit, a whole-file write or a delete.

#include <unistd.h>

#include <fmt/format.h>

#include "cmd/agent_side.hpp"
#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/decide.hpp"
#include "lib/propose.hpp"
#include "lib/reader.hpp"
#include "lib/util/fs.hpp"

namespace kai::cmd {
namespace {

struct Args {
  std::string path, target, replacement, target_file, replacement_file, content_file, why, agent, summary;
  bool del = false, json_input = false, dry_run = false, wait = false;
};

// "-" is stdin (read once: it cannot be read twice); anything else a file
// under the rules of lib/reader's read_input_file. Never more than max + 1
// bytes: one byte past the limit says it is too long.
Result<std::string> read_arg_file(Session& s, Workspace& ws, const std::string& f, size_t max) {
  if (f == "-") return read_all(0, max);
  return read_input_file(ws, s.env().cwd, f, ::getuid(), max);
}

Result<ProposeRequest> build_request(Session& s, Workspace& ws, Args& a, CLI::App& sub) {
  const Config::Limits& limits = ws.cfg.limits;
  ProposeRequest r;
  const auto content_max = static_cast<size_t>(limits.content);
  if (a.json_input) {
    // Room for a target and a replacement at the limit, and the rest.
    const size_t json_max = 2 * content_max + (size_t{1} << 20);
    auto text = read_all(0, json_max);
    if (!text) return text.error();
    if (text->size() > json_max)
      return make_error(Errc::usage, fmt::format("--json-input is over {} bytes (twice [limits] content, plus 1 MiB)", json_max),
                        "send large content with --content-file; nothing was staged");
    auto j = request_from_json(*text);
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
      return make_error(Errc::usage, fmt::format("'{}' is over the limit of {} bytes ([limits] content)", f, content_max),
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

int print_staged(Session& s, const Staged& st, bool dry) {
  const Proposal& p = st.proposal;
  if (s.json()) {
    nlohmann::json j = proposal_json(p);
    j["diff"] = st.diff.text;
    j["diff_info"] = diff_json(st.diff);
    j["dry_run"] = dry;
    j["existing"] = st.existing;
    if (st.applied) j["applied"] = outcome_json(*st.applied);
    print_json(j);
    return k_exit_ok;
  }
  if (dry) out("dry run: nothing staged\n");
  if (st.existing) out("the same change from the same agent is already waiting: proposal {}; nothing new was staged\n", p.id);
  print_proposal_header(s, p);
  print_diff(s, p, st.diff);
  if (st.applied) {
    out("\n");
    print_outcome(s, p, *st.applied);
  } else if (!dry) {
    out("\nwaiting for a person: kaicoder approve {}   (or: kaicoder reject {})\n", p.id, p.id);
  }
  return k_exit_ok;
}

}  // namespace

RunFn setup_propose(CLI::App& sub) {
  auto a = std::make_shared<Args>();
  sub.add_option("--path", a->path, "file to change, relative to the working directory or root");
  sub.add_option("--target", a->target, "exact text to replace; must occur exactly once");
  sub.add_option("--replacement", a->replacement, "text to put in its place");
  sub.add_option("--target-file", a->target_file, "read the target from a file ('-' = stdin)");
  sub.add_option("--replacement-file", a->replacement_file, "read the replacement from a file ('-' = stdin)");
  sub.add_option("--content-file", a->content_file, "whole new content of the file ('-' = stdin)");
  sub.add_flag("--delete", a->del, "remove the file");
  sub.add_flag("--json-input", a->json_input, "read one request object from stdin");
  sub.add_option("--why", a->why, "why the change is needed (goes into the changelog)");
  sub.add_option("--summary", a->summary, "one-line summary for the changelog (default: generated)");
  sub.add_option("--agent", a->agent, "name of the proposing agent (default: $KAICODER_AGENT)");
  sub.add_flag("--dry-run", a->dry_run, "print the diff and the decision; stage nothing");
  sub.add_flag("--wait", a->wait, "block until the proposal is decided and report the outcome");
  return [a, &sub](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    auto req = build_request(s, **ws, *a, sub);
    if (!req) return report(s, req.error());
    // Two-user mode, the agent user's side: the owner's intake stages it.
    if (s.agent_side() && !a->dry_run)
      return submit_to_spool(s, **ws, SpoolEntry{EntryType::propose, "", request_json(*req)}, "propose", a->wait);
    DiffOptions opts;
    auto st = propose(**ws, *req, s.env().cwd, a->dry_run ? DryRun::yes : DryRun::no, opts);
    if (!st) return report(s, st.error());
    if (a->wait && !a->dry_run && !st->applied) {
      print_waiting(st->proposal.id);
      if (!s.json()) {
        print_staged(s, *st, false);
        std::fflush(stdout);
      }
      return wait_and_report(s, **ws, st->proposal.id);
    }
    return print_staged(s, *st, a->dry_run);
  };
}

}  // namespace kai::cmd
