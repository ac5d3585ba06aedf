#pragma once
// The `git` program as team mode runs it, for the transport only: push,
// ls-remote and fetch of refs under refs/kaicoder/ (libgit2 1.5's own
// transport knows neither credential helpers nor ~/.ssh/config, so the
// person's remote works only through git itself).
//
// It is the person's own command: it runs without the run sandbox (it must
// reach the network) but through lib/run/runner with a time limit, stdin
// from /dev/null and no terminal, and a clean, fixed environment: PATH,
// HOME from the password database (so git reads the owner's ~/.gitconfig
// and credential helpers, ssh its ~/.ssh/config and keys), LC_ALL=C,
// GIT_TERMINAL_PROMPT=0 (there is never a terminal to ask on) and the
// caller's SSH_AUTH_SOCK. Nothing else of the caller's environment (no
// GIT_*, no GIT_SSH_COMMAND) reaches it. The user's configuration is
// honoured (remote URLs, insteadOf, core.sshCommand, credentials); on top
// of it kaicoder switches off what would run code it did not choose:
// hooks (core.hooksPath=/dev/null), the ext:: transport, fsmonitor, and
// automatic gc and maintenance; received objects are checked
// (transfer.fsckObjects), and one larger than 16 MiB is streamed to disk,
// never held whole in memory (core.bigFileThreshold), so a remote's huge
// object costs no memory here; an object sent as a delta is resolved in
// memory by git, so a fetch runs with its heap bounded (GitCli::fetch_heap)
// and a delta that expands past it fails the fetch; kaicoder itself reads
// an object's size before its bytes (lib/team/objects, lib/certify/decision).

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "lib/config/workspace.hpp"
#include "lib/result.hpp"

namespace kai::team {

struct GitCli {
  std::filesystem::path workdir;  // where git runs: the root
  std::vector<std::string> env;
  std::chrono::milliseconds timeout{120'000};
  // What a fetch's git (and the index-pack or unpack-objects it starts) may
  // allocate (RLIMIT_DATA): a remote's object stored as a small delta that
  // expands to a huge one is resolved in memory by git, whatever
  // core.bigFileThreshold says; past this the fetch fails instead.
  size_t fetch_heap = 256u << 20;
  std::string remote;  // [team] remote
};

// The git program for `ws`'s team remote.
GitCli git_cli(const Workspace& ws);

struct RemoteRef {
  std::string name;  // refs/kaicoder/…
  std::string id;    // the object it points at
};

// `git ls-remote REMOTE PATTERN…`: the refs there are. Errc::io naming the
// remote and git's own complaint when it cannot be reached.
Result<std::vector<RemoteRef>> ls_remote(const GitCli& git, const std::vector<std::string>& patterns);

// `git fetch --no-tags REMOTE REFSPEC…` (refspecs read from stdin, so any
// number fit), git's memory bounded by `fetch_heap`. Errors as ls_remote;
// denied when the remote sent an object git could not unpack within that
// bound (nothing is fetched then).
Status fetch_refs(const GitCli& git, const std::vector<std::string>& refspecs);

// `git push REMOTE REFSPEC…` (ref deletions as ":refs/…"). Errors as
// ls_remote; conflict when the remote refused an update (a ref that
// exists with other content).
Status push_refs(const GitCli& git, const std::vector<std::string>& refspecs);

}  // namespace kai::team
