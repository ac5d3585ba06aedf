// git: pushes to protected branches, history rewrites, configuration that
// runs programs, and the subcommands that discard work.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

namespace {

bool git_exec_key(const std::string& key) {
  // clang-format off
  static constexpr std::string_view k_exact[] = {
      "core.sshcommand", "core.pager", "core.editor", "core.askpass", "core.fsmonitor", "core.hookspath",
      "core.gitproxy", "sequence.editor", "diff.external", "credential.helper", "gpg.program", "web.browser",
      "uploadpack.packobjectshook", "include.path", "interactive.difffilter", "gpg.ssh.program", "gpg.x509.program",
      "gpg.openpgp.program", "gpg.ssh.defaultkeycommand", "core.alternaterefscommand", "receive.procreceiverefs",
      "ssh.variant", "pager.", "alias.", "includeif."};
  for (std::string_view k : k_exact)
    if (key == k || (k.back() == '.' && sw(key, k))) return true;
  size_t last = key.rfind('.');
  std::string_view tail = last == std::string::npos ? std::string_view() : std::string_view(key).substr(last + 1);
  // Any other key whose last word names a program: sendemail.sendmailcmd,
  // sendemail.tocmd, trailer.<token>.command, instaweb.httpd, ...
  if (tail.ends_with("cmd") || tail.ends_with("command") || one_of(tail, {"program", "helper", "editor", "pager",
                                                                            "askpass", "textconv", "httpd", "hook"}))
    return true;
  if (sw(key, "submodule.") && tail == "update") return true;
  if (one_of(key, {"init.templatedir", "core.worktree"}) || (sw(key, "url.") && key.find("ext::") != std::string::npos))
    return true;
  return (sw(key, "filter.") && one_of(tail, {"clean", "smudge", "process"})) ||
         (sw(key, "diff.") && one_of(tail, {"textconv", "command"})) || (sw(key, "merge.") && tail == "driver") ||
         (one_of(tail, {"cmd", "path"}) && (sw(key, "mergetool.") || sw(key, "difftool.") || sw(key, "browser.") ||
                                             sw(key, "man."))) ||
         (sw(key, "remote.") && one_of(tail, {"uploadpack", "receivepack", "proxy"})) ||
         (sw(key, "credential.") && tail == "helper") || (sw(key, "protocol.") && tail == "allow");
}

// A configuration value that makes git run something: judged like the
// command itself; folders and files of hooks or config cannot be judged.
void git_config_value(Walker& w, Call& c, const std::string& key, const Field& value) {
  std::string what = "git config " + key;
  if (value.dynamic) {
    w.find(c, V::blocked, what + " runs a command only known at run time");
  } else if (sw(key, "protocol.")) {
    if (key == "protocol.ext.allow" && value.value != "never")
      w.find(c, V::blocked, what + " allows the ext:: transport, which runs commands");
  } else if (key == "core.worktree") {
    return;  // the work tree: rule_git judges the command there
  } else if (sw(key, "url.")) {
    w.find(c, V::blocked, what + " sends URLs to the ext:: transport, which runs commands");
  } else if (sw(key, "submodule.")) {
    if (sw(value.value, "!")) w.judge(c, what, with_value(value, value.value.substr(1)));
  } else if (one_of(key, {"core.hookspath", "include.path", "core.fsmonitor", "init.templatedir"}) ||
             sw(key, "includeif.")) {
    w.find(c, V::blocked, what + " makes git run programs from a place that cannot be judged");
  } else if (sw(key, "alias.") && !sw(value.value, "!")) {
    w.judge(c, what, with_value(value, "git " + value.value));
  } else {
    std::string cmd = sw(value.value, "!") ? value.value.substr(1) : value.value;
    w.judge(c, what, with_value(value, cmd));
  }
}

void git_config_pair(Walker& w, Call& c, const Field& pair) {
  size_t eq = pair.value.find('=');
  std::string key = ascii_lower(pair.value.substr(0, eq));
  if (!git_exec_key(key)) return;
  git_config_value(w, c, key, with_value(pair, eq == std::string::npos ? "" : pair.value.substr(eq + 1)));
}

void git_push(Walker& w, Call& c, const Args& a) {
  w.find(c, V::confirm, "pushes to a remote");
  // --force-with-lease and --force-if-includes refuse to overwrite work
  // they have not seen: never blocked, only confirmed.
  bool force = false, lease = false, del = false, mirror = false;
  std::vector<const Field*> pos;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& v = a[i].value;
    if (sw(v, "--")) {
      std::string name = v.substr(0, v.find('='));
      lease = lease || sw(name, "--force-with-lease") || name == "--force-if-includes";
      force = force || (long_is(name, "--force", 5) && !sw(name, "--force-"));
      del = del || long_is(name, "--delete", 5);
      mirror = mirror || name == "--mirror" || name == "--all" || name == "--branches";
      // the value of an option that takes a command was judged by git_options
      if (one_of(name, {"--repo", "--push-option", "--receive-pack", "--exec"}) && v.find('=') == std::string::npos) ++i;
    } else if (v.size() > 1 && v[0] == '-') {
      force = force || v.find('f') != std::string::npos;
      del = del || v.find('d') != std::string::npos;
      if (v.back() == 'o') ++i;
    } else {
      pos.push_back(&a[i]);
    }
  }
  const auto& prot = w.ctx().protected_branches;
  auto is_protected = [&](std::string b) {
    if (sw(b, "refs/heads/")) b = b.substr(11);
    return std::find(prot.begin(), prot.end(), b) != prot.end();
  };
  if (mirror && (force || lease)) w.find(c, V::blocked, "force push of every branch, protected ones included");
  if (pos.size() <= 1 && force) w.find(c, V::blocked, "force push of the current branch, which may be protected");
  if (pos.size() <= 1 && lease && !force)
    w.find(c, V::confirm, "force push (with lease) of the current branch: rewrites its history on the remote");
  for (size_t k = 1; k < pos.size(); ++k) {
    const Field& r = *pos[k];
    std::string spec = r.value;
    bool plus = sw(spec, "+");
    if (plus) spec = spec.substr(1);
    size_t colon = spec.find(':');
    std::string dst = colon == std::string::npos ? spec : spec.substr(colon + 1);
    bool deletes = del || (colon == 0);
    bool hard = force || plus;
    bool guarded = is_protected(dst) || dst == "HEAD" || dst == "@";
    if (r.dynamic && (hard || deletes)) {
      w.find(c, V::blocked, "force push to a branch only known at run time");
    } else if (hard && guarded) {
      w.find(c, V::blocked, "force push to the protected branch '" + dst + "'");
    } else if (deletes && is_protected(dst)) {
      w.find(c, V::blocked, "deletes the protected branch '" + dst + "'");
    } else if (hard || lease) {
      w.find(c, V::confirm,
             std::string(hard ? "force push" : "force push with lease") + " to '" + dst +
                 "': rewrites its history on the remote");
    } else if (deletes) {
      w.find(c, V::confirm, "deletes the branch '" + dst + "' on the remote");
    }
  }
}

void git_config(Walker& w, Call& c, const Args& a) {
  std::vector<const Field*> pos;
  bool get = false, changes = false;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& v = a[i].value;
    if (v == "--global") {
      w.write(c, literal_field("~/.gitconfig"));
    } else if (v == "--system") {
      w.write(c, literal_field("/etc/gitconfig"));
    } else if ((v == "--file" || v == "-f") && i + 1 < a.size()) {
      w.write(c, a[++i]);
    } else if (sw(v, "--file=")) {
      w.write(c, with_value(a[i], v.substr(7)));
    } else if (one_of(v, {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--get-color",
                          "--get-colorbool", "--show-origin", "--show-scope", "get", "list"})) {
      get = true;
    } else if (one_of(v, {"--unset", "--unset-all", "--remove-section", "--rename-section", "--add", "--replace-all",
                          "unset", "set", "remove-section", "rename-section", "edit", "-e", "--edit"})) {
      changes = true;
    } else if (!sw(v, "-")) {
      pos.push_back(&a[i]);
    }
  }
  if (get) return;
  if (pos.size() >= 2 || changes) w.find(c, V::confirm, "changes git configuration");
  if (pos.size() >= 2 && !pos[0]->dynamic) {
    std::string key = ascii_lower(pos[0]->value);
    if (git_exec_key(key)) git_config_value(w, c, key, *pos[1]);
  }
}

void git_paths(Walker& w, Call& c, const Args& a, bool after_dashdash_only) {
  bool after = false;
  for (const Field& f : a) {
    if (!after && f.value == "--") {
      after = true;
    } else if ((after || !after_dashdash_only) && (after || !sw(f.value, "-"))) {
      w.write(c, f);
    }
  }
}

bool has_opt(const Args& a, List names) {
  return std::any_of(a.begin(), a.end(),
                     [&](const Field& f) { return one_of(f.value.substr(0, f.value.find('=')), names); });
}

// Options of a git subcommand that run programs, write files or read
// secrets (show HEAD:.env, add .env); untracking or moving a secret is
// judged as a write instead.
void git_options(Walker& w, Call& c, const std::string& sub, const Args& a) {
  if (!one_of(sub, {"rm", "mv", "restore", "checkout", "check-ignore", "ls-files", "status", "check-attr"}))
    for (const Field& f : a)
      for (const std::string& cand : {f.value, f.value.substr(f.value.rfind(':') + 1)}) w.read(c, with_value(f, cand));
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& v = a[i].value;
    std::string name = v.substr(0, v.find('='));
    bool inline_value = v.find('=') != std::string::npos;
    auto value = [&]() -> std::optional<Field> {
      if (inline_value) return with_value(a[i], v.substr(v.find('=') + 1));
      if (i + 1 < a.size()) return a[++i];
      return std::nullopt;
    };
    if (sw(v, "-") && takes_command("git", sub, name)) {  // the table of options that take a command
      if (std::optional<Field> prog = value()) run_command_option(w, c, sub, name, *prog);
    } else if (sub == "clone" && one_of(name, {"-c", "--config"})) {
      if (std::optional<Field> pair = value()) git_config_pair(w, c, *pair);
    } else if (one_of(name, {"--output", "-o"}) && one_of(sub, {"archive", "format-patch", "diff", "log", "show"})) {
      if (std::optional<Field> out = value()) w.write(c, *out);
    } else if (sw(v, "ext::")) {
      w.find(c, V::blocked, "the ext:: transport runs a command");
    }
  }
}

// Files a changing subcommand writes, and the commands it runs.
void git_targets(Walker& w, Call& c, const std::string& sub, const Args& a) {
  if (sub == "rm" && !has_opt(a, {"--cached"})) git_paths(w, c, a, false);
  if (sub == "mv") git_paths(w, c, a, false);
  if (sub == "restore" && (!has_opt(a, {"--staged", "-S"}) || has_opt(a, {"--worktree", "-W"})))
    git_paths(w, c, a, false);
  if (sub == "checkout") git_paths(w, c, a, true);
  if (sub == "bisect" && !a.empty() && a[0].value == "run") {
    exec_inner(w, c, slice(a, 1), "git bisect run", std::nullopt);
    c.wrapper = false;
  }
  if (sub == "submodule" && !a.empty() && a[0].value == "foreach") {
    size_t k = 1;
    while (k < a.size() && sw(a[k].value, "-")) ++k;
    if (k < a.size()) w.run_shell(c, joined(a, k), {});
    c.wrapper = false;
  }
  if (sub == "clone" || sub == "init") {
    std::vector<const Field*> pos;
    for (size_t i = 0; i < a.size(); ++i) {
      if (one_of(a[i].value, {"-b", "--branch", "-o", "--origin", "--depth", "--reference", "--separate-git-dir",
                              "--template", "-c", "--config", "-u", "--upload-pack", "--jobs", "-j", "--filter",
                              "--initial-branch", "--object-format"})) {
        ++i;
      } else if (!sw(a[i].value, "-")) {
        pos.push_back(&a[i]);
      }
    }
    size_t dir = sub == "clone" ? 1 : 0;
    if (pos.size() > dir) w.write(c, *pos[dir]);
    if (sub == "clone" && pos.size() == 1) {  // clones into the repository's name
      std::string name = path_basename(pos[0]->value);
      if (name.size() > 4 && name.substr(name.size() - 4) == ".git") name.resize(name.size() - 4);
      w.write(c, with_value(*pos[0], name));
    }
  }
  if (sub == "worktree" && a.size() >= 2 && a[0].value == "add") {
    auto path = std::find_if(a.begin() + 1, a.end(), [](const Field& f) { return !sw(f.value, "-"); });
    if (path != a.end()) w.write(c, *path);
  }
}

// The listing forms of subcommands that otherwise change the repository.
bool git_listing(const std::string& sub, const Args& a) {
  std::string_view first = a.empty() ? std::string_view() : std::string_view(a[0].value);
  if (one_of(sub, {"stash", "notes"})) return one_of(first, {"list", "show"});
  if (sub == "tag") return a.empty() || has_opt(a, {"-l", "--list", "-n", "--contains", "--points-at", "--merged"});
  if (sub == "branch")
    return a.empty() || (has_opt(a, {"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--contains",
                                     "--merged", "--no-merged", "--all"}) &&
                         !has_opt(a, {"-d", "-D", "-m", "-M", "-c", "-C", "--delete"}));
  if (one_of(sub, {"remote", "worktree"})) return a.empty() || one_of(first, {"-v", "show", "get-url", "list"});
  if (sub == "reflog") return !one_of(first, {"expire", "delete"});
  if (sub == "bisect") return one_of(first, {"log", "view", "visualize"});
  if (sub == "submodule") return a.empty() || one_of(first, {"status", "summary"});
  if (sub == "hash-object") return !has_opt(a, {"-w"});
  if (sub == "apply") return has_opt(a, {"--check", "--stat", "--numstat", "--summary"});
  return false;
}

// Subcommands that only add commits, refs or index entries: the snapshot
// around the run covers the work tree, and nothing is lost.
bool git_only_adds(const std::string& sub, const Args& a) {
  std::string_view first = a.empty() ? std::string_view() : std::string_view(a[0].value);
  if (sub == "add") return !has_opt(a, {"-f", "--force"});
  if (sub == "commit") return !has_opt(a, {"--amend"});
  if (sub == "restore") return has_opt(a, {"--staged", "-S"}) && !has_opt(a, {"--worktree", "-W"});
  if (sub == "branch")
    return has_opt(a, {"-d", "--delete"}) && !has_opt(a, {"-D", "-f", "--force", "-m", "-M", "-c", "-C"});
  if (sub == "checkout") return has_opt(a, {"-b"}) && !has_opt(a, {"-B", "-f", "--force"});
  if (sub == "switch")
    return has_opt(a, {"-c", "--create"}) &&
           !has_opt(a, {"-C", "--force-create", "-f", "--force", "--discard-changes"});
  if (sub == "stash") return one_of(first, {"push", "save"}) || a.empty();
  return false;
}

// What a snapshot cannot give back: refs, reflogs, the stash, ignored files.
std::string git_not_undoable(const std::string& sub, const Args& a) {
  std::string_view first = a.empty() ? std::string_view() : std::string_view(a[0].value);
  if (sub == "stash" && one_of(first, {"drop", "clear", "pop"})) return "drops stash entries";
  if (sub == "branch" && has_opt(a, {"-D"})) return "deletes a branch that may not be merged";
  if (sub == "tag" && has_opt(a, {"-d", "--delete"})) return "deletes tags";
  if (sub == "update-ref" && has_opt(a, {"-d"})) return "deletes a ref";
  if (sub == "reset" && has_opt(a, {"--hard"})) return "moves the branch and may drop commits";
  if (sub == "clean")
    for (const Field& f : a)
      if (f.value.size() > 1 && f.value[0] == '-' && f.value[1] != '-' &&
          f.value.find_first_of("xX") != std::string::npos)
        return "deletes ignored files";
  if (sub == "reflog" && one_of(first, {"expire", "delete"})) return "deletes reflog entries";
  return {};
}

bool git_subcommand(Walker& w, Call& c, const std::string& sub, const Args& a) {
  // clang-format off
  static const List k_read = {"status", "log", "diff", "show", "blame", "annotate", "ls-files", "ls-tree", "rev-parse",
                              "rev-list", "describe", "shortlog", "grep", "cat-file", "show-ref", "for-each-ref",
                              "merge-base", "name-rev", "whatchanged", "count-objects", "fsck", "check-ignore",
                              "check-attr", "check-ref-format", "help", "version", "var", "verify-commit",
                              "verify-tag", "verify-pack", "cherry", "range-diff", "diff-tree", "diff-files",
                              "diff-index", "show-branch", "get-tar-commit-id", "fetch", "ls-remote", "--version",
                              "--help", "bugreport", "show-index", "column"};
  // clang-format on
  static const List k_change = {"commit",
                                "reset",
                                "switch",
                                "rebase",
                                "merge",
                                "pull",
                                "clean",
                                "cherry-pick",
                                "revert",
                                "am",
                                "apply",
                                "gc",
                                "prune",
                                "repack",
                                "update-ref",
                                "symbolic-ref",
                                "replace",
                                "update-index",
                                "read-tree",
                                "commit-tree",
                                "mktag",
                                "mktree",
                                "maintenance",
                                "sparse-checkout",
                                "add",
                                "lfs",
                                "restore",
                                "checkout",
                                "rm",
                                "mv",
                                "stash",
                                "tag",
                                "branch",
                                "worktree",
                                "remote",
                                "reflog",
                                "notes",
                                "format-patch",
                                "init",
                                "clone",
                                "mergetool",
                                "filter-branch",
                                "submodule",
                                "bisect",
                                "send-email",
                                "archive",
                                "hash-object",
                                "fast-import",
                                "pack-refs",
                                "prune-packed",
                                "difftool",
                                "config",
                                "push",
                                "filter-repo",
                                "checkout-index",
                                "merge-file",
                                "annex",
                                "interpret-trailers",
                                "unpack-objects",
                                "read-tree"};
  bool changes = one_of(sub, k_change);
  if (!changes && !one_of(sub, k_read)) {
    w.unknown(c, "'git " + sub + "' may be an alias defined in the configuration");
    return true;
  }
  git_options(w, c, sub, a);
  if (!changes) return false;
  if (sub == "push") {
    git_push(w, c, a);
    return false;  // the remote, not the work tree
  }
  if (sub == "config") {
    git_config(w, c, a);
    return false;
  }
  git_targets(w, c, sub, a);
  if (std::string lost = git_not_undoable(sub, a); !lost.empty())
    w.find(c, V::confirm, "not undoable: " + lost + " (git " + sub + "); rollback cannot bring it back");
  else if (!git_listing(sub, a) && !git_only_adds(sub, a))
    w.find(c, V::confirm, "changes the repository (git " + sub + ")");
  return !git_listing(sub, a);
}
}  // namespace

namespace {

// Subcommands that delete or overwrite files of the work tree.
bool git_overwrites_tree(const std::string& sub, const Args& a) {
  if (one_of(sub, {"clean", "rm", "mv", "merge", "pull", "rebase", "cherry-pick", "revert", "am", "apply", "read-tree",
                   "checkout-index", "stash", "restore", "checkout", "switch"}))
    return !git_listing(sub, a) && !(sub == "restore" && git_only_adds(sub, a));
  if (sub == "reset") return has_opt(a, {"--hard", "--merge", "--keep"});
  return false;
}

// git -C DIR, --work-tree, --git-dir: a repository outside the root gets
// the verdict of the command run there.
void git_elsewhere(Walker& w, Call& c, const std::string& sub, const Args& a, const Field& tree, bool changes) {
  Reach r = deletion_reach(w, tree);
  if (r.kind == Reach::inside || r.kind == Reach::root || !changes) return;
  std::string where = " ('" + tree.value + "')";
  if (git_overwrites_tree(sub, a) && r.kind != Reach::outside) {
    w.find(
        c, V::blocked,
        "git " + sub + " deletes or overwrites files in " + r.what + (r.what == "'" + tree.value + "'" ? "" : where));
  } else if (r.kind == Reach::runtime) {
    w.find(c, V::confirm, "git " + sub + " changes a repository in a folder only known at run time");
    w.unknown(c, "git works in a folder only known at run time");
  } else {
    w.find(c, V::confirm,
           "git " + sub + " changes a repository outside the root: the sandbox refuses it, and it cannot be undone" +
               where);
  }
}

}  // namespace

void rule_git(Walker& w, Call& c) {
  size_t i = 1;
  std::optional<std::string> cwd;
  std::optional<Field> tree, gitdir;
  auto join_cwd = [&](const Field& d) {
    if (d.dynamic) return std::string();
    return cwd && !cwd->empty() && !d.value.empty() && d.value[0] != '/' && d.value[0] != '~' ? *cwd + "/" + d.value
                                                                                              : d.value;
  };
  while (i < c.argv.size()) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    std::string name = v.substr(0, v.find('='));
    bool inline_value = v.find('=') != std::string::npos;
    if (v == "-C" && i + 1 < c.argv.size()) {
      cwd = join_cwd(c.argv[i + 1]);
      i += 2;
    } else if (v == "-c" && i + 1 < c.argv.size()) {
      git_config_pair(w, c, c.argv[i + 1]);
      const std::string& pair = c.argv[i + 1].value;
      size_t eq = pair.find('=');
      if (eq != std::string::npos && ascii_lower(pair.substr(0, eq)) == "core.worktree")
        tree = with_value(c.argv[i + 1], pair.substr(eq + 1));
      i += 2;
    } else if (sw(v, "--config-env=")) {
      std::string key = ascii_lower(v.substr(13, v.find('=', 13) - 13));
      if (git_exec_key(key))
        w.find(c, V::blocked, "git --config-env sets " + key + " from a variable that cannot be judged");
      ++i;
    } else if (sw(v, "--exec-path=")) {
      w.find(c, V::blocked, "git --exec-path runs git programs from another folder");
      ++i;
    } else if (one_of(name, {"--git-dir", "--work-tree"})) {
      Field val = inline_value ? with_value(f, v.substr(v.find('=') + 1)) : i + 1 < c.argv.size() ? c.argv[i + 1] : f;
      (name == "--work-tree" ? tree : gitdir) = val;
      i += inline_value ? 1 : 2;
    } else if (one_of(v, {"--namespace", "--super-prefix", "--list-cmds", "--attr-source"}) && i + 1 < c.argv.size()) {
      i += 2;
    } else if (sw(v, "-")) {
      ++i;
    } else {
      break;
    }
  }
  if (i >= c.argv.size()) return;
  std::optional<std::string> saved;
  if (cwd) saved = w.enter_cwd(*cwd);
  const std::string& sub = c.argv[i].value;
  Args rest = slice(c.argv, i + 1);
  bool changes = git_subcommand(w, c, sub, rest);
  // The work tree: --work-tree (or core.worktree), else the folder git runs
  // in, which --git-dir makes the top of the tree.
  Field where = tree ? *tree : literal_field(cwd ? (cwd->empty() ? std::string("$PWD") : *cwd) : std::string("."));
  if (!tree && cwd && cwd->empty()) where.dynamic = true;
  if (tree && !tree->dynamic && cwd && !cwd->empty() && !tree->value.empty() && tree->value[0] != '/' &&
      tree->value[0] != '~')
    where = with_value(*tree, *cwd + "/" + tree->value);
  git_elsewhere(w, c, sub, rest, where, changes);
  if (gitdir && changes) {
    Field g = *gitdir;
    if (cwd && !cwd->empty() && !g.value.empty() && g.value[0] != '/' && g.value[0] != '~')
      g.value = *cwd + "/" + g.value;
    Reach r = deletion_reach(w, g);
    if (r.kind != Reach::inside && r.kind != Reach::root)
      w.find(c, V::confirm, "git " + sub + " changes a repository outside the root ('" + gitdir->value + "')");
  }
  if (cwd) w.restore_cwd(saved);
}

}  // namespace kai::shell
