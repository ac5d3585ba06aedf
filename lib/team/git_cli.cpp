#include "lib/team/git_cli.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "lib/run/runner.hpp"
#include "lib/util/fs.hpp"

namespace kai::team {
namespace fs = std::filesystem;

namespace {

// kaicoder's settings, given with -c so that they win over every config file.
const std::vector<std::string> k_safe_settings = {"core.hooksPath=/dev/null", "protocol.ext.allow=never",
                                                  "core.fsmonitor=false", "gc.auto=0", "maintenance.auto=false",
                                                  "transfer.fsckObjects=true", "fetch.writeCommitGraph=false",
                                                  "fetch.recurseSubmodules=false", "push.recurseSubmodules=no",
                                                  "submodule.recurse=false", "credential.interactive=false",
                                                  // A received object larger than this is streamed to disk,
                                                  // never held whole in memory: a hostile remote's huge blob
                                                  // costs disk (bounded by the time limit), not memory.
                                                  "core.bigFileThreshold=16m"};

// git's complaint on one line, without the "fatal: " in front.
std::string git_complaint(const RunResult& r) {
  std::string_view s = r.err.empty() ? std::string_view(r.out) : std::string_view(r.err);
  std::string last;
  size_t start = 0;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    std::string_view line = s.substr(start, end - start);
    start = end + 1;
    if (line.starts_with("fatal: ") || line.starts_with("error: ")) {
      line.remove_prefix(line.find(' ') + 1);
      return std::string(line);
    }
    if (!line.empty() && !line.starts_with("hint:")) last = line;
  }
  return last.empty() ? fmt::format("git exited with {}", r.exit_code) : last;
}

Error unreachable(const GitCli& git, const std::string& what, const RunResult& r) {
  return make_error(
      Errc::io,
      fmt::format("cannot {} the team remote '{}': {}", what, git.remote,
                  r.timed_out ? fmt::format("git did not finish within {} s",
                                            std::chrono::duration_cast<std::chrono::seconds>(git.timeout).count())
                              : git_complaint(r)),
      "nothing was lost: local work goes on; check the remote (git remote -v) and try again");
}

Result<RunResult> run_git(const GitCli& git, std::vector<std::string> args, const fs::path& stdin_path = {},
                          size_t heap_limit = 0) {
  RunSpec spec;
  spec.argv = {"git"};
  for (const auto& s : k_safe_settings) {
    spec.argv.push_back("-c");
    spec.argv.push_back(s);
  }
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = git.workdir;
  spec.env = git.env;
  spec.stdin_path = stdin_path;
  spec.timeout = git.timeout;
  spec.max_output = 4 << 20;
  spec.heap_limit = heap_limit;
  // The person's own command on their own remote: it needs the network and
  // their keys, so no run sandbox; the environment above is all it gets.
  spec.sandbox = SandboxMode::none;
  auto r = run_command(spec);
  if (!r) return r.error();
  if (r->exit_code == 127 || r->exit_code == 126)
    return make_error(Errc::io, "cannot run git", "install git: team mode moves proposals with the git program");
  return r;
}

}  // namespace

GitCli git_cli(const Workspace& ws) {
  GitCli g;
  g.workdir = ws.root;
  g.remote = ws.cfg.team_remote;
  g.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0",
           fmt::format("HOME={}", ws.home.string())};
  for (const auto& [name, value] : ws.env_vars)
    if (name == "SSH_AUTH_SOCK") g.env.push_back(name + "=" + value);
  // A proposal's file may hold [limits] content bytes; git may need a few
  // times that to resolve it from a delta.
  const size_t content = ws.cfg.limits.content > 0 ? static_cast<size_t>(ws.cfg.limits.content) : 0;
  g.fetch_heap = std::max(g.fetch_heap, 4 * content);
  return g;
}

Result<std::vector<RemoteRef>> ls_remote(const GitCli& git, const std::vector<std::string>& patterns) {
  std::vector<std::string> args = {"ls-remote", "--refs", "--", git.remote};
  args.insert(args.end(), patterns.begin(), patterns.end());
  auto r = run_git(git, args);
  if (!r) return r.error();
  if (r->exit_code != 0 || r->timed_out) return unreachable(git, "read", *r);
  std::vector<RemoteRef> out;
  size_t start = 0;
  const std::string& s = r->out;
  while (start < s.size()) {
    size_t end = s.find('\n', start);
    if (end == std::string::npos) end = s.size();
    std::string line = s.substr(start, end - start);
    start = end + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) continue;
    out.push_back(RemoteRef{line.substr(tab + 1), line.substr(0, tab)});
  }
  return out;
}

Status fetch_refs(const GitCli& git, const std::vector<std::string>& refspecs) {
  if (refspecs.empty()) return ok_status();
  auto dir = PrivateTempDir::make("/tmp", "kaicoder-fetch");
  if (!dir) return dir.error();
  std::string list;
  for (const auto& r : refspecs) list += r + "\n";
  const fs::path specs = dir->path() / "refspecs";
  KAI_TRY(write_file_exclusive(specs, list, 0600));
  auto r = run_git(git,
                   {"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--stdin",
                    "--", git.remote},
                   specs, git.fetch_heap);
  if (!r) return r.error();
  if (r->exit_code != 0 && !r->timed_out &&
      (r->err.find("Out of memory") != std::string::npos || r->err.find("malloc failed") != std::string::npos))
    return make_error(Errc::denied,
                      fmt::format("the team remote '{}' sent an object that git could not unpack within {} MiB of "
                                  "memory (a small delta that expands to a huge object, say): refused, nothing was "
                                  "fetched ({})",
                                  git.remote, git.fetch_heap >> 20, git_complaint(*r)),
                      "whoever can push to the remote put it there: remove the ref it came with "
                      "(git ls-remote shows the refs/kaicoder/ refs), then fetch again");
  if (r->exit_code != 0 || r->timed_out) return unreachable(git, "fetch from", *r);
  return ok_status();
}

Status push_refs(const GitCli& git, const std::vector<std::string>& refspecs) {
  if (refspecs.empty()) return ok_status();
  std::vector<std::string> args = {"push", "--quiet", "--porcelain", "--no-verify", "--no-recurse-submodules",
                                   "--",   git.remote};
  args.insert(args.end(), refspecs.begin(), refspecs.end());
  auto r = run_git(git, args);
  if (!r) return r.error();
  if (r->exit_code == 0 && !r->timed_out) return ok_status();
  // --porcelain: one line per ref, "!" before one the remote refused.
  if (!r->timed_out && r->out.find("\n!\t") != std::string::npos)
    return make_error(Errc::conflict,
                      fmt::format("the team remote '{}' refused the update: {}", git.remote, git_complaint(*r)),
                      "a ref of that name holds something else there; see kaicoder-team(7)");
  return unreachable(git, "push to", *r);
}

}  // namespace kai::team
