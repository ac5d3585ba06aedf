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
      {"setpriv",
       {"",
        {"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits",
         "--selinux-label", "--apparmor-profile", "--pdeathsig"},
        true}},
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

}  // namespace kai::shell
