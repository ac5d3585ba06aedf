#pragma once
// Static classification of the commands `kaicoder run` stages (SPEC §2, §5,
// §7). No shell is ever run to decide: the text is parsed as POSIX sh (plus
// the bash extensions agents use), every leaf command is found — through
// chains, pipes, subshells, groups, substitutions, here-documents and
// wrappers such as sudo, env, xargs, find -exec and `bash -c` — and each leaf
// is judged on its own. The verdict is the worst over all leaves.
//
// Usage:
//   ShellContext ctx;
//   ctx.check_write_target = ...;   // root confinement + never-write list
//   ctx.is_secret = ...;            // the never-read list
//   ctx.extra_blocked = cfg.run.blocked;
//   Classification c = classify_shell("make && ./run.sh > out.txt", ctx);
//   blocked          -> refuse at once, log a `blocked` entry with c.reasons
//   confirm / ask    -> the policy decides; only the policy may return allow,
//                       and never for a classification with understood == false
//
// Pure functions: no I/O, no environment, no printing, no exceptions.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

// allow only ever comes from the policy; the classifier returns the others.
enum class RunVerdict { allow, ask, confirm, blocked };
std::string_view to_string(RunVerdict v);

struct Leaf {
  std::vector<std::string> argv;           // after quote removal and unwrapping
  std::string text;                        // the leaf as written
  std::vector<std::string> write_targets;  // what this leaf writes, as checked
  bool understood = true;                  // false: depends on run-time values
};

struct Classification {
  RunVerdict verdict = RunVerdict::ask;  // the worst over all leaves
  // One line per finding, "<verdict>: <what>: <leaf text>", e.g.
  // "blocked: deletion of '/': rm -rf /"; findings that make the command not
  // understood start "not understood: ". Never empty: an ask says why too
  // ("ask: unknown program: its effects are unknown: mytool", or that every
  // leaf is an ordinary command kaicoder knows). Ordered worst first:
  // blocked, confirm, not understood, ask.
  std::vector<std::string> reasons;
  std::vector<Leaf> leaves;                // every leaf command after unwrapping
  bool understood = true;                  // false: never auto-allowed, shown as such
  std::vector<std::string> write_targets;  // every statically visible write target
};

struct ShellContext {
  // Root confinement and never-write check for one write target (a path as the
  // command names it, relative to the run's cwd, or absolute; `~` is passed
  // as written). Returns Errc::denied with a reason to block the command.
  // Commands legitimately write build output, so unlike a proposal's check it
  // should not refuse build/, target/, dist/ or node_modules/. Not passed:
  // paths under /tmp, /var/tmp and /dev/shm (the sandbox lets runs write
  // there) and "." (the run's own folder, as in `cp x .`). A path is passed
  // lexically normalised and joined to any `cd` earlier in the command.
  std::function<Status(const std::string& path)> check_write_target;
  // The root, absolute and normalised: a temp folder is passed over only
  // outside it, so a root under /tmp keeps its own protection.
  std::string root;
  // The owner's home folder, absolute ("" when unknown): `~` names it, and
  // deleting it or anything in it (but its caches) is blocked.
  std::string home;
  // True for secret files (.env, keys, credentials): reading, copying,
  // encoding or sending one is blocked.
  std::function<bool(const std::string& path)> is_secret;
  // [run] blocked: globs or whole-word prefixes over each leaf's text (as
  // written, and with the program's path and quoting normalised).
  std::vector<std::string> extra_blocked;
  // [run] protected: process names and ":port" entries never to kill.
  std::vector<std::string> protected_processes;
  // Branches a force push (or a delete) may never reach.
  std::vector<std::string> protected_branches = {"main", "master"};
  // How many wrappers (sudo, env, bash -c, xargs, ...) may nest before the
  // command is refused: none of an agent's honest commands comes close.
  int max_depth = 8;
};

// Split one command line into words the way a shell would, honouring quotes
// and backslashes, without any expansion (globs, `~` and braces stay
// literal). Errc::usage for anything that needs a shell: operators,
// redirections, `$` expansions, substitutions, unterminated quotes.
Result<std::vector<std::string>> tokenize_argv(std::string_view text);

// Quote `argv` so that tokenize_argv (and sh) read it back word for word;
// used to show an argv-form command.
std::string quote_argv(const std::vector<std::string>& argv);

// The --shell form: `script` is what /bin/sh -c will run.
Classification classify_shell(std::string_view script, const ShellContext& ctx);

// What the checker knows, family by family, read from its own tables (for
// the coverage report in bench/ and the man page): the programs of each
// family and how many verbs (subcommands, options, statements) it judges.
struct FamilyCoverage {
  std::string family;  // "cloud", "database", "package runners", ...
  std::vector<std::string> programs;
  size_t verbs = 0;
};
std::vector<FamilyCoverage> checker_coverage();

// The argv form: executed without a shell, so the words are taken literally
// (no globs, no expansions); wrappers inside (`bash -c STRING`, `env`,
// `xargs`, ...) are still unwrapped and their strings parsed.
Classification classify_argv(const std::vector<std::string>& argv, const ShellContext& ctx);

}  // namespace kai
