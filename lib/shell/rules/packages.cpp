// Package managers: which verbs install, remove or run code, per manager.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

struct Manager {
  std::string_view name;
  List changes;  // verbs that install, remove or publish
  List runs;     // verbs that run another command: `poetry run CMD`
};

const Manager* manager(std::string_view name) {
  // clang-format off
  static const Manager k_managers[] = {
      {"apt", {"install", "remove", "purge", "upgrade", "full-upgrade", "dist-upgrade", "autoremove", "update", "reinstall", "build-dep", "autopurge"}, {}},
      {"apt-get", {"install", "remove", "purge", "upgrade", "dist-upgrade", "autoremove", "update", "reinstall", "build-dep", "autoclean", "clean"}, {}},
      {"aptitude", {"install", "remove", "purge", "upgrade", "safe-upgrade", "full-upgrade", "update", "reinstall"}, {}},
      {"dnf", {"install", "remove", "erase", "update", "upgrade", "downgrade", "reinstall", "autoremove", "groupinstall", "group", "swap", "distro-sync"}, {}},
      {"yum", {"install", "remove", "erase", "update", "upgrade", "downgrade", "reinstall", "autoremove", "groupinstall", "swap"}, {}},
      {"zypper", {"install", "in", "remove", "rm", "update", "up", "dist-upgrade", "dup", "patch"}, {}},
      {"apk", {"add", "del", "upgrade", "update", "fix"}, {}},
      {"brew", {"install", "uninstall", "remove", "rm", "reinstall", "upgrade", "update", "tap", "untap", "link", "unlink", "cleanup", "services", "pin", "unpin"}, {}},
      {"port", {"install", "uninstall", "upgrade", "selfupdate", "activate", "deactivate"}, {}},
      {"snap", {"install", "remove", "refresh", "revert", "enable", "disable"}, {}},
      {"flatpak", {"install", "uninstall", "update", "remove"}, {}},
      {"pip", {"install", "uninstall", "download", "wheel"}, {}},
      {"pipx", {"install", "uninstall", "upgrade", "upgrade-all", "inject", "reinstall", "uninstall-all"}, {"run"}},
      {"uv", {"add", "remove", "sync", "lock", "install", "uninstall", "publish"}, {"run"}},
      {"poetry", {"add", "remove", "install", "update", "lock", "publish", "self"}, {"run"}},
      {"pdm", {"add", "remove", "install", "update", "sync", "lock", "publish"}, {"run"}},
      {"pipenv", {"install", "uninstall", "update", "lock", "sync", "clean"}, {"run"}},
      {"hatch", {"publish"}, {"run"}},
      {"conda", {"install", "remove", "uninstall", "update", "upgrade", "create", "env"}, {"run"}},
      {"mamba", {"install", "remove", "uninstall", "update", "upgrade", "create", "env"}, {"run"}},
      {"micromamba", {"install", "remove", "uninstall", "update", "create", "env"}, {"run"}},
      {"npm", {"install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isntal", "isntall", "add", "ci", "uninstall", "un", "unlink", "remove", "rm", "r", "update", "up", "upgrade", "udpate", "link", "ln", "publish", "unpublish", "dedupe", "ddp", "prune", "version", "init", "create", "pkg", "deprecate", "dist-tag", "owner", "access", "login", "logout"}, {"exec", "x"}},
      {"yarn", {"add", "remove", "install", "upgrade", "up", "global", "link", "unlink", "publish", "dedupe", "init", "create", "import", "version"}, {"exec", "dlx"}},
      {"pnpm", {"add", "install", "i", "remove", "rm", "uninstall", "un", "update", "up", "upgrade", "link", "ln", "unlink", "publish", "prune", "import", "init", "create"}, {"exec", "dlx"}},
      {"bun", {"add", "install", "i", "remove", "rm", "update", "link", "unlink", "publish", "init", "create", "upgrade"}, {"x"}},
      {"deno", {"install", "uninstall", "add", "remove", "publish", "upgrade", "compile"}, {}},
      {"cargo", {"install", "uninstall", "add", "remove", "rm", "publish", "yank", "owner", "login", "logout", "fix", "clean", "new", "init", "update", "vendor"}, {}},
      {"go", {"install", "get", "fmt", "clean", "work", "mod"}, {}},
      {"gem", {"install", "uninstall", "update", "push", "yank", "owner", "cleanup"}, {}},
      {"bundle", {"install", "update", "add", "remove", "clean", "lock"}, {"exec"}},
      {"composer", {"install", "require", "remove", "update", "upgrade", "create-project", "global", "dump-autoload"}, {"exec"}},
      {"dotnet", {"add", "remove", "new", "publish", "pack", "nuget", "tool", "workload"}, {}},
      {"rustup", {"install", "update", "uninstall", "default", "toolchain", "component", "target", "override", "self", "set"}, {"run"}},
      {"nix-env", {"-i", "--install", "-e", "--uninstall", "-u", "--upgrade", "--set", "--delete-generations", "--rollback"}, {}},
      {"opam", {"install", "remove", "uninstall", "upgrade", "update", "switch", "pin", "init"}, {"exec"}},
      {"luarocks", {"install", "remove", "purge", "upload", "make", "build"}, {}},
      {"cpanm", {}, {}},
      {"cpan", {}, {}},
      {"twine", {"upload", "register"}, {}},
      {"dpkg", {"-i", "--install", "-r", "--remove", "-P", "--purge", "--configure", "--unpack", "-a", "--set-selections"}, {}},
      {"rpm", {"-i", "--install", "-U", "--upgrade", "-e", "--erase", "-F", "--freshen"}, {}},
      {"mix", {"deps.get", "deps.update", "archive.install", "escript.install", "local.hex", "hex.publish"}, {}},
      {"asdf", {"install", "uninstall", "global", "local", "plugin"}, {"exec"}},
      {"mise", {"install", "uninstall", "use", "upgrade", "plugins"}, {"exec", "x"}},
  };
  // clang-format on
  for (const Manager& m : k_managers)
    if (m.name == name) return &m;
  return nullptr;
}

void rule_pkg(Walker& w, Call& c, std::string_view manager_name, size_t from) {
  const Manager* m = manager(manager_name);
  if (!m) return;
  // yarn, pnpm and bun run a project's bins by name (`yarn rimraf dist`,
  // `bun run rimraf /`): one of the well-known ones is judged as itself
  if (one_of(manager_name, {"yarn", "pnpm", "bun"})) {
    size_t i = from;
    while (i < c.argv.size() && sw(c.argv[i].value, "-")) ++i;
    if (i < c.argv.size() && c.argv[i].value == "run") ++i;
    if (i < c.argv.size() && !c.argv[i].dynamic && package_bin(c.argv[i].value)) {
      c.info = w.run(c, slice(c.argv, i), c.in);
      return;
    }
  }
  // the verb: the first word that is one of the manager's verbs, or the
  // first positional when none is
  std::optional<size_t> verb;
  for (size_t i = from; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, m->changes) || one_of(v, m->runs)) {
      verb = i;
      break;
    }
    if (!sw(v, "-") && v.find('=') == std::string::npos && v.find("::") == std::string::npos) {
      if (!verb) verb = i;
      if (one_of(manager_name, {"apt", "apt-get", "dnf", "yum", "npm", "cargo", "pip", "go", "gem", "brew", "docker",
                                "kubectl", "gh", "uv", "poetry"}))
        break;
    }
  }
  std::string v = verb ? c.argv[*verb].value : "";
  if (manager_name == "uv" && verb && (v == "pip" || v == "tool"))
    return rule_pkg(w, c, v == "pip" ? "pip" : "pipx", *verb + 1);
  if (verb && one_of(v, m->runs) && one_of(manager_name, {"npm", "pnpm", "yarn", "bun", "pipx"})) {
    // npm exec, pnpm dlx, yarn dlx, bun x, pipx run: package runners
    if (!(manager_name == "yarn" && v == "exec") && !(manager_name == "pnpm" && v == "exec"))
      return rule_package_runner(w, c, *verb + 1);
    unwrap_at(w, c, *verb + 1);  // yarn exec, pnpm exec: the project's own programs
    return;
  }
  if (verb && one_of(v, m->runs)) {
    Opts o = parse_opts(c.argv, *verb + 1,
                        Spec{"npw",
                             {"--with", "--python", "--package", "--name", "--prefix", "--env-file", "--directory",
                              "--project", "--cwd"},
                             true});
    unwrap_at(w, c, o.rest);
    return;
  }
  bool yarn_bare = manager_name == "yarn" && !verb;
  bool pacman_like = false;
  if (manager_name == "dpkg" || manager_name == "rpm" || manager_name == "nix-env") {
    pacman_like = std::any_of(c.argv.begin() + 1, c.argv.end(), [&](const Field& f) {
      return one_of(f.value, m->changes) ||
             (f.value.size() > 1 && f.value[0] == '-' && f.value[1] != '-' &&
              f.value.find_first_of(manager_name == "rpm" ? "iUeF" : "") != std::string::npos);
    });
  }
  if (!(verb && one_of(v, m->changes)) && !yarn_bare && !pacman_like) return;
  // `go mod graph`, `docker image ls`, `gh pr list`: listing forms read
  if (verb && *verb + 1 < c.argv.size()) {
    std::string_view next = c.argv[*verb + 1].value;
    if (one_of(next,
               {"list",   "ls", "view", "status", "show",   "graph",  "why", "verify", "inspect", "diff",   "checks",
                "--list", "-l", "ps",   "logs",   "config", "images", "top", "port",   "version", "history"}))
      return;
  }
  if (manager_name == "cargo" && v == "fmt") return;
  w.find(c, V::confirm,
         "installs, removes, publishes or changes packages or services (" + std::string(manager_name) + " " + v + ")");
}

void rule_pacman(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v.size() < 2 || v[0] != '-' || v[1] == '-') continue;
    char op = v[1];
    bool query = op == 'Q' || op == 'F' || op == 'T' ||
                 (op == 'S' && v.find_first_of("silgp", 2) != std::string::npos &&
                  v.find_first_of("uy", 2) == std::string::npos);
    if ((op == 'S' || op == 'R' || op == 'U' || op == 'D') && !query)
      w.find(c, V::confirm, "installs or removes packages");
  }
}

void rule_cargo(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"Zj", {"--config", "--color", "--manifest-path"}});
  if (o.pos.empty()) return;
  std::string_view sub = c.argv[o.pos[0]].value;
  bool check = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "--check"; });
  if (sub == "fmt" && !check) w.find(c, V::confirm, "rewrites files in place (cargo fmt)");
  if (sub == "clippy" && std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "--fix"; }))
    w.find(c, V::confirm, "rewrites files in place (cargo clippy --fix)");
  for (const Field* cfg : o.values({"--config"}))
    if (cfg->value.find('=') != std::string::npos) w.unknown(c, "cargo --config may set programs it runs");
  if (sub == "install" && std::any_of(c.argv.begin(), c.argv.end(),
                                      [](const Field& f) { return f.value == "--git" || sw(f.value, "--git="); }))
    w.find(c, V::confirm, "installs a crate from a git repository and runs its build script (cargo install --git)");
  rule_pkg(w, c, "cargo", 1);
}

void rule_go(Walker& w, Call& c) {
  std::string_view sub = c.argv.size() > 1 ? std::string_view(c.argv[1].value) : std::string_view();
  if (sub == "generate") w.unknown(c, "go generate runs commands written in the sources");
  if (sub == "build") rule_compiler(w, c);
  // -exec and -toolexec run the program built, or each tool, through another
  for (size_t i = 2; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    for (std::string_view opt : {"-exec", "-toolexec"}) {
      if (v == opt && i + 1 < c.argv.size()) w.judge(c, "go " + std::string(opt), c.argv[i + 1], Walker::Feed::none);
      if (sw(v, std::string(opt) + "="))
        w.judge(c, "go " + std::string(opt), with_value(c.argv[i], v.substr(opt.size() + 1)), Walker::Feed::none);
    }
  }
  if (sub == "run") {
    // go run [build flags] PACKAGE@VERSION ARGS: a package runner, like npx
    size_t i = 2;
    while (i < c.argv.size() && sw(c.argv[i].value, "-")) {
      const std::string& v = c.argv[i].value;
      bool takes =
          v.find('=') == std::string::npos &&
          one_of(v, {"-C",         "-exec",       "-gcflags",   "-ldflags",  "-asmflags",      "-tags", "-mod",
                     "-modfile",   "-overlay",    "-pkgdir",    "-p",        "-toolexec",      "-o",    "-coverpkg",
                     "-covermode", "-gccgoflags", "-buildmode", "-compiler", "-installsuffix", "-pgo"});
      i += takes ? 2 : 1;
    }
    if (i >= c.argv.size()) return;
    const Field& pkg = c.argv[i];
    size_t at = pkg.value.find('@');
    if (pkg.dynamic || at == std::string::npos || pkg.value.ends_with(".go")) return;  // the tree's own program
    std::string path = pkg.value.substr(0, at);
    std::string name = path_basename(path);
    if (name.size() > 1 && name[0] == 'v' && std::all_of(name.begin() + 1, name.end(), is_digit))
      name = path_basename(path.substr(0, path.rfind('/')));  // example.com/x/tool/v2
    Args inner;
    inner.push_back(with_value(pkg, name));
    Args rest = slice(c.argv, i + 1);
    inner.insert(inner.end(), rest.begin(), rest.end());
    c.info = w.run(c, std::move(inner), c.in);
    return;
  }
  rule_pkg(w, c, "go", 1);
}

// nix run INSTALLABLE -- ARGS: the package's program, judged as that
// command; nix shell/develop -c CMD run a command.
void rule_nix(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"fIL",
                           {"--file", "--expr", "--include", "--option", "--arg", "--argstr", "--override-input",
                            "--profile", "--inputs-from"},
                           false});
  if (o.pos.empty()) return;
  std::string_view sub = c.argv[o.pos[0]].value;
  if (one_of(sub, {"shell", "develop"})) {
    for (size_t i = o.pos[0] + 1; i < c.argv.size(); ++i)
      if (one_of(c.argv[i].value, {"-c", "--command"})) {
        unwrap_at(w, c, i + 1);
        return;
      }
    return;
  }
  if (one_of(sub, {"profile", "store"}) && o.pos.size() > 1 &&
      one_of(c.argv[o.pos[1]].value,
             {"install", "remove", "upgrade", "gc", "delete", "rollback", "wipe-history", "optimise", "repair"})) {
    w.find(c, V::confirm,
           "installs, removes or deletes packages (nix " + std::string(sub) + " " + c.argv[o.pos[1]].value + ")");
    return;
  }
  if (sub != "run" || o.pos.size() < 2) return;
  const Field& inst = c.argv[o.pos[1]];
  size_t hash = inst.value.find('#');
  if (inst.dynamic || hash == std::string::npos) {
    w.find(c, V::ask, "runs a flake's default program, which is not judged");
    return;
  }
  std::string attr = inst.value.substr(hash + 1);
  if (attr.rfind('.') != std::string::npos) attr = attr.substr(attr.rfind('.') + 1);
  Args inner;
  inner.push_back(with_value(inst, attr));
  size_t from = o.pos[1] + 1;
  if (from < c.argv.size() && c.argv[from].value == "--") ++from;
  Args rest = slice(c.argv, from);
  inner.insert(inner.end(), rest.begin(), rest.end());
  c.info = w.run(c, std::move(inner), c.in);
}

}  // namespace kai::shell
