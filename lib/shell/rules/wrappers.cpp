// Wrappers: commands that run another command (sudo, env, xargs, parallel,
// nice, timeout, ...), unwrapped so that what they run is judged.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

void unwrap_at(Walker& w, Call& c, size_t start, const std::optional<std::string>& cwd) {
  if (start >= c.argv.size()) return;  // the wrapper alone is an ordinary command
  c.info = w.run(c, slice(c.argv, start), c.in, cwd);
}

namespace {

std::optional<std::string> cwd_of(const Field* f) {
  if (!f) return std::nullopt;
  return f->dynamic ? std::string() : f->value;
}

// NAME=value words before the command (sudo, env).
size_t skip_assignments(Walker& w, Call& c, size_t i) {
  std::string name, value;
  while (i < c.argv.size() && !c.argv[i].dynamic && split_assignment(c.argv[i].value, name, value)) {
    w.check_assignment(c, name, with_value(c.argv[i], value), Scope::command);
    ++i;
  }
  return i;
}
}  // namespace

void rule_sudo(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"CDgpRrTtUu",
                           {"--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type",
                            "--other-user", "--command-timeout", "--host", "--chroot"},
                           true});
  w.find(c, V::confirm, "runs as another user");
  if (c.name == "sudoedit" || o.has({"-e", "--edit"})) {
    for (size_t i = o.rest; i < c.argv.size(); ++i) w.write(c, c.argv[i]);
    return;
  }
  size_t i = skip_assignments(w, c, o.rest);
  if (o.has({"-s", "--shell", "-i", "--login"}) && i < c.argv.size()) {  // sudo -s CMD: $SHELL -c 'CMD'
    w.run_shell(c, joined(c.argv, i), {});
    return;
  }
  unwrap_at(w, c, i, cwd_of(o.value({"-D", "--chdir"})));
}

void rule_doas(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"uC", {}, true});
  w.find(c, V::confirm, "runs as another user");
  unwrap_at(w, c, o.rest);
}

void rule_env(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"uCSP", {"--unset", "--chdir", "--split-string"}, true});
  // `env -` is `env -i`; -P DIR looks the program up in DIR instead of PATH.
  if (o.rest < c.argv.size() && c.argv[o.rest].value == "-" && !c.argv[o.rest].dynamic) ++o.rest;
  if (const Field* p = o.value({"-P"}))
    w.find(c, V::confirm, "looks the program up in '" + p->value + "' instead of PATH");
  Args inner;
  if (const Field* s = o.value({"-S", "--split-string"})) {
    // env -S splits one string into words (shebang lines)
    Result<std::vector<std::string>> words = tokenize_argv(s->value);
    if (!words || s->dynamic) {
      w.unknown(c, "env -S splits text it cannot be judged ('" + s->raw + "')");
      return;
    }
    for (const std::string& word : *words) {
      Field f = with_value(*s, word);
      f.raw = quote_argv({word});  // shown as the word it became, not the whole string
      inner.push_back(std::move(f));
    }
  }
  Args rest = slice(c.argv, o.rest);
  inner.insert(inner.end(), rest.begin(), rest.end());
  std::string name, value;
  size_t i = 0;
  while (i < inner.size() && !inner[i].dynamic && split_assignment(inner[i].value, name, value)) {
    w.check_assignment(c, name, with_value(inner[i], value), Scope::command);
    ++i;
  }
  if (i >= inner.size()) return;  // prints the environment
  c.info = w.run(c, slice(inner, i), c.in, cwd_of(o.value({"-C", "--chdir"})));
}

// Wrappers that take options, maybe some fixed positionals, then a command.
struct WrapperSpec {
  std::string_view name;
  Spec spec;
  size_t skip = 0;                           // positionals before the command (timeout DURATION)
  std::vector<std::string_view> no_command;  // options after which there is no command
  std::string_view note;                     // a confirm-tier finding, when the wrapper itself matters
  // Runs a command only after this verb (alternatives separated by '|'):
  // `pyenv exec CMD`, `perf stat CMD`; `skip` then counts the verb.
  std::string_view verb;

  WrapperSpec(std::string_view n, Spec s, size_t sk = 0, std::vector<std::string_view> no = {},
              std::string_view nt = {}, std::string_view vb = {})
      : name(n), spec(std::move(s)), skip(sk), no_command(std::move(no)), note(nt), verb(vb) {}
};

const WrapperSpec* wrapper_spec(std::string_view name) {
  static const WrapperSpec k_wrappers[] = {
      {"nice", {"n", {"--adjustment"}, true}},
      {"nohup", {"", {}, true}, 0, {}, "keeps running when its session ends (detached execution)"},
      {"timeout", {"ks", {"--kill-after", "--signal"}, true}, 1},
      {"gtimeout", {"ks", {"--kill-after", "--signal"}, true}, 1},
      {"builtin", {"", {}, true}},
      {"exec", {"a", {}, true}},
      {"stdbuf", {"ioe", {"--input", "--output", "--error"}, true}},
      {"unbuffer", {"", {}, true}},
      // A new session is a new process group: the time limit, which kills
      // the run's group, would not reach it.
      {"setsid", {"", {}, true}, 0, {}, "leaves the run's process group, so the time limit cannot stop it"},
      {"daemonize", {"ceEoplu", {}, true}, 0, {}, "detaches from the run, so the time limit cannot stop it"},
      {"ionice",
       {"cnpPu", {"--class", "--classdata", "--pid", "--pgid", "--uid"}, true},
       0,
       {"-p", "-P", "-u", "--pid"}},
      {"chrt", {"TPD", {"--sched-runtime", "--sched-period", "--sched-deadline"}, true}, 1, {"-p", "--pid"}},
      {"taskset", {"", {}, true}, 1, {"-p", "--pid"}},
      {"busybox", {"", {}, true}},
      {"valgrind", {"", {}, true}},
      {"catchsegv", {"", {}, true}},
      {"xvfb-run", {"afnesp", {"--server-num", "--error-file", "--server-args", "--xauth-protocol"}, true}},
      {"dbus-run-session", {"", {"--config-file"}, true}},
      {"fakeroot", {"ils", {}, true}},
      {"torsocks", {"aPu", {}, true}},
      {"proxychains", {"f", {}, true}},
      {"proxychains4", {"f", {}, true}},
      {"unshare", {"SGRw", {"--setuid", "--setgid", "--root", "--wd"}, true}, 0, {}, "runs in new namespaces"},
      {"nsenter",
       {"tSGrw", {"--target", "--setuid", "--setgid", "--root", "--wd"}, true},
       0,
       {},
       "enters another process's namespaces"},
      {"firejail", {"", {}, true}},
      {"systemd-run",
       {"pEu", {"--property", "--setenv", "--unit", "--description", "--slice", "--on-calendar", "--on-active"}, true},
       0,
       {},
       "detached execution: starts a system unit, which runs outside the sandbox"},
      {"chroot", {"", {"--userspec", "--groups"}, true}, 1, {}, "runs in another root folder"},
      {"pkexec", {"", {"--user"}, true}, 0, {}, "runs as another user"},
      {"caffeinate", {"tw", {}, true}},
      {"with-contenv", {"", {}, true}},
      {"rlwrap", {"aAbcCfHlOoPqRrsSzgtw", {}, true}},
      {"eatmydata", {"", {}, true}},
      {"nq", {"c", {}, true}, 0, {}, "queues the command to run later in the background (nq)"},
      {"chpst", {"ugUenlmdostpf", {}, true}},
      {"setpriv", {"", {"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--selinux-label", "--apparmor-profile", "--pdeathsig"}, true}},
      {"runcon", {"turl", {}, true}},
      {"faketime", {"f", {}, true}, 1},
      {"ccache", {"", {}, true}},
      {"sccache", {"", {}, true}},
      {"distcc", {"", {}, true}},
      {"ssh-agent", {"aEPt", {}, true}, 0, {"-k", "-s", "-c", "-D", "-d"}},
      {"dbus-launch", {"", {"--config-file"}, true}},
      {"vglrun", {"", {}, true}},
      {"prime-run", {"", {}, true}},
      {"gamemoderun", {"", {}, true}},
      {"mpirun", {"npHc", {"--hostfile", "--host", "-np", "--map-by", "--bind-to"}, true}},
      {"srun", {"NnpcJtAw", {"--nodes", "--ntasks", "--partition", "--job-name", "--time", "--account"}, true}},
      {"perf", {"", {}, true}, 1, {}, {}, "stat|record|trace|kvm"},
      {"direnv", {"", {}, true}, 2, {}, {}, "exec"},
      {"pyenv", {"", {}, true}, 1, {}, {}, "exec"},
      {"rbenv", {"", {}, true}, 1, {}, {}, "exec"},
      {"nodenv", {"", {}, true}, 1, {}, {}, "exec"},
      {"goenv", {"", {}, true}, 1, {}, {}, "exec"},
      {"volta", {"", {}, true}, 1, {}, {}, "run"},
      {"fnm", {"", {}, true}, 1, {}, {}, "exec"},
      {"stack", {"", {}, true}, 1, {}, {}, "exec"},
      {"cabal", {"", {}, true}, 1, {}, {}, "exec"},
      {"devbox", {"", {}, true}, 1, {}, {}, "run"},
      {"nvm", {"", {}, true}, 2, {}, {}, "exec"},
      {"rye", {"", {}, true}, 1, {}, {}, "run"},
  };
  for (const WrapperSpec& s : k_wrappers)
    if (s.name == name) return &s;
  return nullptr;
}

void rule_wrapper(Walker& w, Call& c, const WrapperSpec& s) {
  Opts o = parse_opts(c.argv, 1, s.spec);
  if (!s.verb.empty()) {
    if (o.rest >= c.argv.size()) return;
    bool verb = false;
    std::string_view alts = s.verb;
    for (size_t start = 0; start <= alts.size();) {
      size_t bar = alts.find('|', start);
      if (bar == std::string_view::npos) bar = alts.size();
      verb = verb || alts.substr(start, bar - start) == c.argv[o.rest].value;
      start = bar + 1;
    }
    if (!verb) return;  // its other verbs run nothing given on the command line
    Opts after = parse_opts(c.argv, o.rest + 1, Spec{"", {"--using", "--node", "--npm", "--yarn"}, true});
    unwrap_at(w, c, after.rest + s.skip - 1);
    return;
  }
  if (!s.note.empty()) w.find(c, V::confirm, std::string(s.note));
  if (o.has(s.no_command)) return;
  unwrap_at(w, c, o.rest + s.skip);
}

void rule_time(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"fo", {"--format", "--output"}, true});
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  unwrap_at(w, c, o.rest);
}

namespace {

// `command -v rm`, `which rm`, `type -P rm` print where a program is:
// $(which rm) -rf / is judged as rm.
void print_names(Call& c, size_t from) {
  std::string out;
  for (size_t i = from; i < c.argv.size(); ++i) {
    if (c.argv[i].dynamic || sw(c.argv[i].value, "-")) continue;
    out += c.argv[i].value + "\n";
  }
  c.info.output = out;
  c.info.output_computed = true;
}
}  // namespace

void rule_command(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"", {}, true});
  if (o.has({"-v", "-V"})) {
    print_names(c, o.rest);
    return;
  }
  unwrap_at(w, c, o.rest);
}

void rule_which(Walker&, Call& c) { print_names(c, 1); }

void rule_strace(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"abeEIoOpPsSuUX", {"--output"}, true});
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  if (o.has({"-p"})) return;
  unwrap_at(w, c, o.rest);
}

void rule_flock(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"wEc", {"--timeout", "--conflict-exit-code", "--command"}, true});
  if (const Field* cmd = o.value({"-c", "--command"})) {
    w.run_shell(c, *cmd, {});
    return;
  }
  if (o.rest >= c.argv.size()) return;
  w.write(c, c.argv[o.rest], V::ask);  // the lock file
  size_t next = o.rest + 1;
  if (next + 1 < c.argv.size() && one_of(c.argv[next].value, {"-c", "--command"})) {
    w.run_shell(c, c.argv[next + 1], {});
    return;
  }
  unwrap_at(w, c, next);
}

// watch joins its arguments and runs them with sh -c (unless -x).
void rule_watch(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"ndq", {"--interval", "--differences", "--equexit"}, true});
  if (o.rest >= c.argv.size()) return;
  if (o.has({"-x", "--exec"})) {
    unwrap_at(w, c, o.rest);
    return;
  }
  w.run_shell(c, joined(c.argv, o.rest), {});
}

void rule_script(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1,
      Spec{"cEIOBTm",
           {"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"}});
  for (const Field* log : o.values({"-I", "-O", "-B", "-T", "--log-in", "--log-out", "--log-io", "--log-timing"}))
    w.write(c, *log);
  for (size_t i : o.pos) w.write(c, c.argv[i]);  // the typescript file
  if (const Field* cmd = o.value({"-c", "--command"})) {
    w.run_shell(c, *cmd, {});
    c.wrapper = false;
  } else {
    w.unknown(c, "starts an interactive shell in a pseudo-terminal");
  }
}

void rule_su(Walker& w, Call& c) {
  bool runuser = c.name == "runuser";
  Opts o = parse_opts(c.argv, 1,
                      Spec{runuser ? "ugGcsw" : "cgGsw",
                           {"--command", "--group", "--supp-group", "--shell", "--whitelist-environment",
                            "--session-command", "--user"},
                           false});
  w.find(c, V::confirm, "runs as another user");
  if (const Field* cmd = o.value({"-c", "--command", "--session-command"})) {
    w.run_shell(c, *cmd, {});
    return;
  }
  if (runuser && o.has({"-u", "--user"})) {
    Opts r = parse_opts(c.argv, 1, Spec{"ugGcsw", {"--user", "--group", "--supp-group", "--shell"}, true});
    unwrap_at(w, c, r.rest);
    return;
  }
  w.unknown(c, "starts a shell as another user");
}

void rule_sg(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"c", {}});
  w.find(c, V::confirm, "runs with another group");
  if (const Field* cmd = o.value({"-c"})) {
    w.run_shell(c, *cmd, {});
  } else if (o.pos.size() >= 2) {
    w.run_shell(c, c.argv[o.pos[1]], {});
  }
}

void exec_inner(Walker& w, Call& c, Args inner, const std::string& what, const std::optional<std::string>& cwd) {
  if (inner.empty()) return;
  if (inner[0].dynamic || inner[0].synthetic) {
    w.find(c, V::blocked, what + " runs a program only known at run time ('" + inner[0].raw + "')");
    return;
  }
  LeafInfo info = w.run(c, std::move(inner), Stdin{}, cwd);
  c.info.download = c.info.download || info.download;
  c.info.kills = c.info.kills || info.kills;
}

// ---- package runners ----

namespace {

// Packages that are well-known commands under another name: run through a
// package runner they are judged as that command (`npx rimraf /` is a
// deletion of /).
struct PackageBin {
  std::string_view package;
  std::string_view bin;
};
constexpr PackageBin k_package_bins[] = {
    {"del-cli", "del"},           {"trash-cli", "trash"},         {"rimraf", "rimraf"},
    {"fkill-cli", "fkill"},       {"kill-port", "kill-port"},     {"cross-env", "cross-env"},
    {"shx", "shx"},               {"dotenv-cli", "dotenv"},       {"env-cmd", "env-cmd"},
    {"concurrently", "concurrently"}, {"npm-run-all", "npm-run-all"}, {"npm-run-all2", "npm-run-all"},
    {"empty-trash-cli", "empty-trash"}, {"rm-rf", "rimraf"},     {"premove", "rimraf"},
    {"del", "del"},               {"trash", "trash"},             {"kill-port-process", "kill-port"},
    {"shelljs", "shx"},           {"cross-env-shell", "cross-env-shell"},
};
// The same for Python packages run with pipx run or uvx.
constexpr PackageBin k_python_bins[] = {{"trash-cli", "trash-put"}, {"send2trash", "trash"}};

enum class Eco { npm, pnpm, yarn, bun, python, deno };

// The program a package spec names: `rimraf@5` -> rimraf, `@scope/x@1` -> x
// (or its known bin), `npm:rimraf` -> rimraf, `black==24.1` -> black.
std::string package_program(std::string spec, Eco eco, bool is_bin) {
  for (std::string_view p : {"npm:", "jsr:"})
    if (sw(spec, p)) spec = spec.substr(p.size());
  size_t at = spec.find('@', spec.starts_with("@") ? 1 : 0);
  if (at != std::string::npos) spec.resize(at);
  for (std::string_view cut : {"==", ">=", "<=", "~=", "[", "#"}) {
    size_t k = spec.find(cut);
    if (k != std::string::npos) spec.resize(k);
  }
  if (!is_bin) {
    const PackageBin* first = eco == Eco::python ? std::begin(k_python_bins) : std::begin(k_package_bins);
    const PackageBin* last = eco == Eco::python ? std::end(k_python_bins) : std::end(k_package_bins);
    for (const PackageBin* b = first; b != last; ++b)
      if (b->package == spec) return std::string(b->bin);
  }
  while (spec.size() > 1 && spec.back() == '/') spec.pop_back();
  std::string name = path_basename(spec);
  if (name.ends_with(".git")) name.resize(name.size() - 4);
  return name.empty() ? spec : name;
}

}  // namespace

// npx, npm exec, pnpm dlx|exec, pnpx, yarn dlx|exec, bunx, bun x, pipx run,
// uvx, uv tool run, deno run npm:...: what the package runs is judged, as
// the command it is. `from`: the first word after the runner's own verb.
void rule_package_runner(Walker& w, Call& c, size_t from) {
  std::string_view n = c.name;
  Eco eco = n == "pnpm" || n == "pnpx" ? Eco::pnpm
            : n == "yarn"              ? Eco::yarn
            : n == "bun" || n == "bunx" ? Eco::bun
            : n == "deno"              ? Eco::deno
            : one_of(n, {"pipx", "uvx", "uv"}) ? Eco::python
                                       : Eco::npm;
  static const std::vector<std::string_view> k_values = {
      "-p",       "--package", "-c",      "--call",   "-w",        "--workspace", "--prefix", "--registry",
      "--cache",  "--userconfig", "--node-options", "--script-shell", "--loglevel", "--filter", "-F", "-C",
      "--dir",    "--spec",    "--python", "--pip-args", "--index-url", "-i", "--from", "--with",
      "--with-requirements", "--with-editable", "--index", "--extra-index-url", "--default-index",
      "--constraints", "--overrides", "--config", "--import-map", "--lock", "--cert", "--location", "--env-file"};
  std::string_view shorts = eco == Eco::npm      ? "pcw"
                           : eco == Eco::pnpm    ? "pFC"
                           : eco == Eco::python  ? "pi"
                           : eco == Eco::deno    ? "c"
                                                 : "p";
  std::vector<std::string_view> values = k_values;
  if (eco == Eco::pnpm) values.erase(std::remove(values.begin(), values.end(), "-c"), values.end());
  Opts o = parse_opts(c.argv, from, Spec{shorts, values, true});
  bool named = !o.values({"-p", "--package", "--spec", "--from"}).empty() && eco != Eco::python;
  if (eco == Eco::python) named = !o.values({"--spec", "--from"}).empty();
  const Field* call = eco == Eco::npm ? o.value({"-c", "--call"}) : nullptr;
  if (call) {
    w.run_shell(c, *call, {});
    return;
  }
  if (o.rest >= c.argv.size()) return;
  if (eco == Eco::pnpm && o.has({"-c", "--shell-mode"})) {
    w.run_shell(c, joined(c.argv, o.rest), {});
    return;
  }
  const Field& spec = c.argv[o.rest];
  if (spec.dynamic) {
    w.find(c, V::blocked, c.name + " runs a package only known at run time ('" + spec.raw + "')");
    return;
  }
  if (sw(spec.value, "http://") || sw(spec.value, "https://") || sw(spec.value, "git+")) {
    w.unknown(c, "runs a package or script from the network ('" + spec.value + "')");
    return;
  }
  if (eco == Eco::deno && !sw(spec.value, "npm:") && !sw(spec.value, "jsr:")) return;  // a script in the tree
  Args inner;
  inner.push_back(with_value(spec, package_program(spec.value, eco, named)));
  Args rest = slice(c.argv, o.rest + 1);
  inner.insert(inner.end(), rest.begin(), rest.end());
  c.info = w.run(c, std::move(inner), c.in);
}

size_t package_bin_count() { return std::size(k_package_bins) + std::size(k_python_bins); }

bool package_bin(std::string_view name) {
  return std::any_of(std::begin(k_package_bins), std::end(k_package_bins),
                     [&](const PackageBin& b) { return b.bin == name; });
}

// npx / pnpx / bunx / uvx: runners by name.
void rule_npx(Walker& w, Call& c) { rule_package_runner(w, c, 1); }

void rule_xargs(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"adEILnPs",
                           {"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs",
                            "--max-chars", "--process-slot-var"},
                           true,
                           "eil"});
  std::string token;
  if (const Field* t = o.value({"-I", "-i", "--replace"})) {
    token = t->value;
  } else if (o.has({"-i", "--replace"})) {
    token = "{}";
  }
  Args inner = slice(c.argv, o.rest);
  if (inner.empty()) inner.push_back(literal_field("echo"));
  for (Field& f : inner) {
    f = replace_token(f, token);
    f.download = f.download || (f.synthetic && c.in.download);  // arguments read from a download
  }
  if (token.empty()) {
    inner.push_back(runtime_arg());
    inner.back().download = c.in.download;
  }
  exec_inner(w, c, std::move(inner), "xargs", std::nullopt);
}

// ---- job runners ----

namespace {

constexpr std::string_view k_runtime_word = "\"${ARGUMENT_FROM_INPUT}\"";
constexpr size_t k_max_jobs = 64;  // arguments judged one by one; beyond, as one unknown

// The replacement strings of GNU parallel and rush: {}, {.}, {/}, {//},
// {/.}, {#}, {%}, {1}, {2.} ...
bool replacement_at(std::string_view s, size_t at, size_t& len) {
  if (s[at] != '{') return false;
  size_t close = s.find('}', at);
  if (close == std::string_view::npos || close - at > 6) return false;
  std::string_view body = s.substr(at + 1, close - at - 1);
  bool ok = std::all_of(body.begin(), body.end(), [](char ch) { return is_digit(ch) || ch == '.' || ch == '/' || ch == '#' || ch == '%'; });
  if (!ok) return false;
  len = close - at + 1;
  return true;
}

// The command text with each replacement string given `arg` (shell-quoted,
// as parallel does); without one, the argument is appended.
std::string with_argument(const std::string& text, const std::string& arg) {
  std::string out;
  bool replaced = false;
  for (size_t k = 0; k < text.size(); ++k) {
    size_t len = 0;
    if (replacement_at(text, k, len)) {
      out += arg;
      k += len - 1;
      replaced = true;
    } else {
      out += text[k];
    }
  }
  if (!replaced) out += " " + arg;
  return out;
}

// The words of a job's command as parallel joins them: one shell text.
std::string command_text(const Args& words) {
  std::string text;
  for (const Field& f : words) {
    if (!text.empty()) text += ' ';
    text += f.dynamic ? std::string(k_runtime_word) : f.value;
  }
  return text;
}

// The lines of a static input: the arguments (or commands) of the jobs.
std::vector<std::string> input_lines(const std::optional<std::string>& text) {
  std::vector<std::string> out;
  if (!text) return out;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string line(trim(std::string_view(*text).substr(start, end - start)));
    if (!line.empty()) out.push_back(line);
    start = end + 1;
  }
  return out;
}

// Run `text` once for each argument (as shell text), or once with an
// argument only known at run time.
void run_jobs(Walker& w, Call& c, const std::string& text, const std::vector<std::string>& args, bool known) {
  Field code = literal_field("");
  if (!known || args.size() > k_max_jobs) {
    code.value = with_argument(text, std::string(k_runtime_word));
    w.run_shell(c, code, {});
    return;
  }
  for (const std::string& a : args) {
    code.value = with_argument(text, quote_argv({a}));
    w.run_shell(c, code, {});
  }
}

}  // namespace

// GNU parallel and sem: the command words are joined into shell text, run
// once per argument (`::: a b`, `:::: file`, or lines of the input) with
// the replacement strings filled in; with --pipe the input is the job's
// input. Without a command, each line of the input is a command.
void rule_parallel(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"jSaIdEPNnlrkCXLms",
                           {"--jobs", "--sshlogin", "--arg-file", "--replace", "--delimiter", "--eof", "--max-procs",
                            "--max-args", "--id", "--semaphorename", "--timeout", "--joblog", "--results", "--tmpdir",
                            "--workdir", "--env", "--basefile", "--transferfile", "--return", "--block", "--block-size",
                            "--colsep", "--max-replace-args", "--max-lines", "--load", "--memfree", "--delay",
                            "--retries", "--halt", "--sshloginfile", "--tagstring", "--header", "--shebang-wrap"},
                           true});
  if (o.value({"-S", "--sshlogin", "--sshloginfile"})) w.find(c, V::confirm, "runs commands on other machines");
  bool pipe = o.has({"--pipe", "--pipepart", "--spreadstdin"});
  bool quote = o.has({"-q", "--quote"});
  std::string token = "{}";
  if (const Field* t = o.value({"-I", "--replace"})) token = t->value;
  Args words;
  std::vector<std::string> args;
  bool after = false, known = true;
  for (size_t i = o.rest; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    if (one_of(f.value, {":::", "::::", ":::+", "::::+"})) {
      after = true;
      known = known && (f.value == ":::" || f.value == ":::+");
      continue;
    }
    if (!after) {
      words.push_back(f);
    } else {
      args.push_back(f.value);
      known = known && !f.dynamic;
    }
  }
  if (o.value({"-a", "--arg-file"})) known = false;
  if (words.empty()) {
    // the jobs are the lines of the input
    if (c.in.download) {
      w.find(c, V::blocked, "runs a download as commands");
    } else if (c.in.text && !c.in.computed) {
      for (const std::string& line : input_lines(c.in.text)) w.run_shell(c, literal_field(line), {});
    } else {
      w.unknown(c, "runs commands it reads at run time");
    }
    return;
  }
  if (words[0].dynamic || words[0].synthetic) {
    w.find(c, V::blocked, c.name + " runs a program only known at run time ('" + words[0].raw + "')");
    return;
  }
  std::string text = command_text(words);
  if (token != "{}") {  // -I TOKEN: the token is the replacement string
    for (size_t at = text.find(token); !token.empty() && at != std::string::npos; at = text.find(token, at + 2))
      text.replace(at, token.size(), "{}");
  }
  if (quote) {  // -q: the words are the program and its arguments, not shell text
    std::string q;
    for (const Field& f : words) {
      if (!q.empty()) q += ' ';
      q += f.dynamic ? std::string(k_runtime_word) : quote_argv({f.value});
    }
    text = q;
  }
  if (pipe || c.name == "sem" || o.has({"--semaphore"})) {  // one job; with --pipe it reads blocks of the input
    c.wrapper = true;
    w.run_shell(c, literal_field(text), {});
    return;
  }
  if (!after) {  // the arguments are the lines of the input
    if (c.in.text && !c.in.computed) {
      args = input_lines(c.in.text);
    } else {
      known = false;
    }
  }
  if (c.in.download && !after) {
    w.find(c, V::blocked, "runs commands with arguments from a download");
    return;
  }
  run_jobs(w, c, text, args, known);
}

// rush 'CMD {}': a shell command run once for each line of its input.
void rule_rush(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"jiDdvTrJIc", {"--jobs", "--infile", "--records-delimiter", "--field-delimiter", "--assign",
                                            "--trim", "--nrecords", "--succ-cmd-file", "--timeout", "--retries",
                                            "--retry-interval", "--eof"},
                           true});
  if (o.rest >= c.argv.size()) {
    w.unknown(c, "runs commands it reads at run time");
    return;
  }
  std::string text = command_text(slice(c.argv, o.rest));
  bool known = !o.value({"-i", "--infile"}) && c.in.text && !c.in.computed;
  if (c.in.download) {
    w.find(c, V::blocked, "runs commands with arguments from a download");
    return;
  }
  run_jobs(w, c, text, known ? input_lines(c.in.text) : std::vector<std::string>{}, known);
}

// concurrently 'CMD1' 'CMD2', npm-run-all's run-p: each argument is a shell
// command (concurrently) or a package.json script (run-p, run-s).
void rule_concurrently(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"ncpPs", {"--names", "--prefix", "--prefix-colors", "--restart-tries", "--restart-after",
                                     "--success", "--max-processes", "--kill-others-on-fail", "--handle-input",
                                     "--timestamp-format", "--prefix-length", "--passthrough-arguments"}});
  for (size_t i : o.pos) {
    const Field& f = c.argv[i];
    if (sw(f.value, "npm:") || sw(f.value, "yarn:") || sw(f.value, "pnpm:") || sw(f.value, "bun:")) continue;
    w.run_shell(c, f, {});
  }
  c.wrapper = false;
}

// File watchers run a command on every change: entr UTILITY ARGS (entr -s
// TEXT: the table), watchexec [options] [--] COMMAND (shell text).
void rule_watcher(Walker& w, Call& c) {
  if (c.name == "entr") {
    Opts o = parse_opts(c.argv, 1, Spec{"", {}, true});
    if (o.has({"-s"})) return;  // the shell text: rules/commands.cpp
    unwrap_at(w, c, o.rest);
    return;
  }
  Opts o = parse_opts(c.argv, 1,
                      Spec{"ewiEWdfpo",
                           {"--exts", "--watch", "--ignore", "--env", "--filter", "--debounce", "--delay-run",
                            "--signal", "--shell", "--project-origin", "--on-busy-update", "--workdir", "--emit-events-to"},
                           true});
  if (o.rest >= c.argv.size()) return;
  c.wrapper = true;
  w.run_shell(c, joined(c.argv, o.rest), {});
}

// cross-env A=1 CMD, shx CMD ARGS, dotenv [-e FILE] -- CMD, env-cmd [-f FILE] CMD.
void rule_env_wrapper(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"efvc", {"--file", "--environments", "-e", "-f", "-v", "-c"}, true});
  size_t i = o.rest;
  if (c.name == "dotenv" || c.name == "env-cmd")
    for (const Field* f : o.values({"-e", "-f", "--file"})) w.read(c, *f);
  std::string name, value;
  while (i < c.argv.size() && !c.argv[i].dynamic && split_assignment(c.argv[i].value, name, value)) {
    w.check_assignment(c, name, with_value(c.argv[i], value), Scope::command);
    ++i;
  }
  if (c.name == "cross-env-shell" && i < c.argv.size()) {
    w.run_shell(c, joined(c.argv, i), {});
    return;
  }
  unwrap_at(w, c, i);
}

}  // namespace kai::shell
