// The system: disks, power, processes, services, and commands that run later
// outside the sandbox (at, crontab, terminal multiplexers), and kaicoder itself.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

// ---- disks, power, processes ----

void rule_disk_format(Walker& w, Call& c) { w.find(c, V::blocked, "formats or wipes a disk (" + c.name + ")"); }

void rule_partition(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{});
  if (o.has({"-l", "--list", "-s"}) && c.name != "parted") return;
  if (c.name == "parted" && o.has({"-l", "--list"})) return;
  if (c.name == "wipefs" && !o.has({"-a", "--all", "-o", "--offset"})) return;
  w.find(c, V::blocked, "formats or wipes a disk (" + c.name + ")");
}

void rule_dd(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    if (sw(f.value, "of=")) {
      Field out = with_value(f, f.value.substr(3));
      if (sw(out.value, "/dev/") && !one_of(out.value, {"/dev/null", "/dev/stdout", "/dev/stderr"})) {
        w.find(c, V::blocked, "writes straight to a device (dd of=" + out.value + ")");
      } else {
        w.write(c, out);
      }
    } else if (sw(f.value, "if=")) {
      w.read(c, with_value(f, f.value.substr(3)));
    }
  }
}

void rule_power(Walker& w, Call& c) {
  if (c.name == "shutdown" && parse_opts(c.argv, 1, Spec{}).has({"-c"})) return;  // cancels one
  w.find(c, V::blocked, "power control (" + c.name + ")");
}

void rule_init(Walker& w, Call& c) {
  if (c.argv.size() > 1 && one_of(c.argv[1].value, {"0", "1", "6", "s", "S"}))
    w.find(c, V::blocked, "power control (" + c.name + " " + c.argv[1].value + ")");
}

void rule_kill(Walker& w, Call& c) {
  c.info.kills = true;
  bool signal = false, end = false, runtime = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (!end && one_of(v, {"-l", "-L", "--list", "--table"})) return;
    if (!end && v == "--") {
      end = true;
    } else if (!end && one_of(v, {"-s", "-n", "--signal"})) {
      ++i;
      signal = true;
    } else if (!end && !signal && v.size() > 1 && v[0] == '-') {
      signal = true;
    } else if (f.dynamic || f.computed || f.synthetic) {
      runtime = true;
    } else if (v == "1") {
      w.find(c, V::blocked, "kills PID 1 (init)");
    } else if (v == "-1") {
      w.find(c, V::blocked, "kills every process");
    }
  }
  if (runtime) {
    if (std::optional<std::string> hit = protected_in(w.ctx(), c.text)) {
      w.find(c, V::blocked, "kills a protected process (" + *hit + ")");
    } else {
      w.unknown(c, "kills processes only known at run time");
    }
  }
}

void rule_pkill(Walker& w, Call& c) {
  c.info.kills = true;
  if (c.name == "killall5") {
    w.find(c, V::blocked, "kills every process");
    return;
  }
  Opts o = parse_opts(c.argv, 1,
                      Spec{c.name == "killall" ? "sunoyYZ" : "dgGPstuUFn?",
                           {"--signal", "--user", "--older-than", "--younger-than", "--group", "--parent", "--session",
                            "--terminal", "--euid", "--uid", "--pidfile", "--ns", "--nslist"}});
  if (o.pos.empty() && o.has({"-u", "-U", "--user", "--euid", "--uid"}))
    w.find(c, V::blocked, "kills every process of a user");
  for (size_t i : o.pos) {
    const Field& f = c.argv[i];
    if (f.dynamic) {
      w.unknown(c, "kills processes matched at run time");
      continue;
    }
    std::string pat = ascii_lower(f.value);
    if (one_of(pat, {"init", "systemd", "1"})) w.find(c, V::blocked, "kills PID 1 (init)");
    if (pat.empty() || one_of(pat, {".", ".*", "^", "$", "*"})) w.find(c, V::blocked, "kills every process");
    for (const std::string& p : w.ctx().protected_processes) {
      std::string name = ascii_lower(p);
      bool port = !name.empty() && name[0] == ':';
      // pkill matches a pattern anywhere in the name: `pkill postg` kills postgres
      if (!port && !name.empty() && (name.find(pat) != std::string::npos || pat.find(name) != std::string::npos))
        w.find(c, V::blocked, "kills a protected process (" + p + ")");
    }
  }
  if (std::optional<std::string> hit = protected_in(w.ctx(), c.text))
    w.find(c, V::blocked, "kills a protected process (" + *hit + ")");
}

void rule_fuser(Walker& w, Call& c) {
  if (!parse_opts(c.argv, 1, Spec{}).has({"-k", "--kill"})) return;
  c.info.kills = true;
  if (std::optional<std::string> hit = protected_in(w.ctx(), c.text))
    w.find(c, V::blocked, "kills a protected process (" + *hit + ")");
}

// ---- services ----

void service_verb(Walker& w, Call& c, std::string_view verb, const std::vector<std::string>& units) {
  if (one_of(verb, {"poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep",
                    "suspend-then-hibernate", "rescue", "emergency", "isolate", "default", "soft-reboot"})) {
    w.find(c, V::blocked, "power control (" + c.name + " " + std::string(verb) + ")");
    return;
  }
  // clang-format off
  if (one_of(verb, {"start", "stop", "restart", "reload", "try-restart", "reload-or-restart", "try-reload-or-restart",
                    "force-reload", "enable", "disable", "reenable", "mask", "unmask", "kill", "reset-failed",
                    "daemon-reload", "daemon-reexec", "edit", "set-property", "revert", "preset", "link", "condrestart",
                    "zap", "load", "unload", "bootout", "bootstrap", "kickstart", "remove", "delete", "up", "down"})) {
    // clang-format on
    w.find(c, V::confirm, "starts, stops or changes a service");
    if (one_of(verb, {"stop", "restart", "kill", "mask", "disable", "try-restart", "reload-or-restart", "force-reload",
                      "condrestart", "zap", "unload", "bootout", "down", "remove", "delete"}))
      for (const std::string& u : units)
        if (std::optional<std::string> hit = protected_in(w.ctx(), u))
          w.find(c, V::blocked, "stops a protected process (" + *hit + ")");
  }
}

void rule_systemctl(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1,
      Spec{"HMtpPosn", {"--host", "--machine", "--type", "--property", "--signal", "--output", "--lines", "--root"}});
  if (o.pos.empty()) return;
  std::vector<std::string> units;
  for (size_t k = 1; k < o.pos.size(); ++k) units.push_back(c.argv[o.pos[k]].value);
  service_verb(w, c, c.argv[o.pos[0]].value, units);
}

void rule_service(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{});
  if (o.pos.size() < 2) return;
  service_verb(w, c, c.argv[o.pos[1]].value, {c.argv[o.pos[0]].value});
}

void rule_service_tool(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{});
  if (o.pos.empty()) return;
  std::vector<std::string> units;
  for (size_t k = 1; k < o.pos.size(); ++k) units.push_back(c.argv[o.pos[k]].value);
  service_verb(w, c, c.argv[o.pos[0]].value, units);
}

void rule_loginctl(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"HMp", {"--host", "--machine", "--property"}});
  if (o.pos.empty()) return;
  std::string_view verb = c.argv[o.pos[0]].value;
  if (one_of(verb, {"poweroff", "reboot", "halt", "suspend", "hibernate", "hybrid-sleep", "kexec"})) {
    w.find(c, V::blocked, "power control (loginctl " + std::string(verb) + ")");
  } else if (sw(verb, "kill-") || sw(verb, "terminate-")) {
    w.find(c, V::confirm, "ends sessions or processes");
  }
}

void rule_man(Walker&, Call&) {}  // man -P, -H: the table (rules/commands.cpp)

void rule_at(Walker& w, Call& c) {
  w.find(c, V::confirm,
         "detached execution: schedules a command (" + c.name + "), which runs later outside the sandbox");
  Opts o = parse_opts(c.argv, 1, Spec{"fqt", {}});
  if (o.has({"-l", "-d", "-r", "-c"})) return;
  if (o.has({"-f"})) {
    w.unknown(c, "schedules commands from a file");
    return;
  }
  w.run_stdin(c, Lang::shell);
}

// crontab installs commands that cron runs later, outside any run; the
// commands of a table given on its input are judged.
void rule_crontab(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"u", {}});
  if (o.has({"-l"}) && o.pos.empty()) return;
  w.find(c, V::confirm,
         "detached execution: installs or removes scheduled commands (crontab), which run later outside the sandbox");
  bool from_input = o.pos.empty() || c.argv[o.pos[0]].value == "-";
  if (!from_input || o.has({"-r", "-e", "-l"})) return;
  if (!c.in.text) {
    if (c.in.kind == Stdin::Kind::pipe) w.unknown(c, "installs scheduled commands read from its input");
    return;
  }
  size_t start = 0;
  const std::string& t = *c.in.text;
  while (start < t.size()) {
    size_t end = t.find('\n', start);
    if (end == std::string::npos) end = t.size();
    std::string line(trim(std::string_view(t).substr(start, end - start)));
    start = end + 1;
    std::string name, value;
    if (line.empty() || line[0] == '#' || split_assignment(line.substr(0, line.find(' ')), name, value)) continue;
    // five time fields, or one @word
    size_t fields = line[0] == '@' ? 1 : 5, at = 0;
    for (size_t f = 0; f < fields && at != std::string::npos; ++f) {
      at = line.find_first_of(" \t", at);
      if (at != std::string::npos) at = line.find_first_not_of(" \t", at);
    }
    if (at != std::string::npos) w.judge(c, "a crontab entry", literal_field(line.substr(at)), Walker::Feed::none);
  }
}

namespace {

// tmux's command words: one word is shell text, several are joined.
void tmux_command(Walker& w, Call& c, const Args& a, size_t from) {
  if (from >= a.size()) return;
  w.run_shell(c, joined(a, from), {});
}

// send-keys: the keys typed, Enter running what was typed.
void typed_keys(Walker& w, Call& c, const Args& a, size_t from, bool literal) {
  std::string text;
  for (size_t i = from; i < a.size(); ++i) {
    const std::string& k = a[i].value;
    if (a[i].dynamic) {
      w.unknown(c, "types keys only known at run time");
      return;
    }
    if (!literal && one_of(k, {"Enter", "C-m", "KPEnter", "C-j"})) {
      text += '\n';
    } else if (!literal && k.size() > 2 && (sw(k, "C-") || sw(k, "M-"))) {
      continue;
    } else {
      text += k;
    }
  }
  if (!trim(text).empty()) w.judge(c, "keys typed into a terminal", literal_field(text), Walker::Feed::none);
}

}  // namespace

// tmux and screen start shells and commands in sessions that outlive the
// run: detached execution, and what they are told to run is judged.
void rule_multiplexer(Walker& w, Call& c) {
  if (c.name == "tmux") {
    Opts o = parse_opts(c.argv, 1, Spec{"LSfcT", {}, true});
    if (const Field* cmd = o.value({"-c"})) {
      w.find(c, V::confirm, "detached execution: starts or drives a terminal multiplexer session");
      w.run_shell(c, *cmd, {});
      c.wrapper = false;
      return;
    }
    if (o.rest >= c.argv.size()) {
      w.find(c, V::confirm, "detached execution: starts or drives a terminal multiplexer session");
      w.unknown(c, "starts an interactive shell in a terminal multiplexer");
      return;
    }
    std::string_view sub = c.argv[o.rest].value;
    if (one_of(sub, {"ls",
                     "list-sessions",
                     "list-windows",
                     "list-panes",
                     "has-session",
                     "has",
                     "capture-pane",
                     "capturep",
                     "show-options",
                     "show",
                     "display-message",
                     "display",
                     "list-keys",
                     "lsk",
                     "list-clients",
                     "lsc",
                     "info",
                     "kill-server",
                     "kill-session",
                     "kill-window",
                     "kill-pane",
                     "detach-client",
                     "detach",
                     "rename-session",
                     "rename-window",
                     "select-window",
                     "select-pane",
                     "resize-pane",
                     "attach-session",
                     "attach",
                     "a",
                     "switch-client"})) {
      if (sw(sub, "kill-")) w.find(c, V::confirm, "ends terminal multiplexer sessions and what runs in them");
      return;
    }
    w.find(c, V::confirm, "detached execution: starts or drives a terminal multiplexer session");
    Opts so = parse_opts(c.argv, o.rest + 1, Spec{"cefnstxyFlNT", {}, true});
    if (one_of(sub,
               {"new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
                "respawn-window", "respawnw", "run-shell", "run", "pipe-pane", "pipep", "display-popup", "popup"})) {
      if (so.rest >= c.argv.size()) {
        w.unknown(c, "starts an interactive shell in a terminal multiplexer");
      } else {
        tmux_command(w, c, c.argv, so.rest);
        c.wrapper = false;
      }
    } else if (one_of(sub, {"send-keys", "send"})) {
      bool literal = std::any_of(c.argv.begin() + static_cast<long>(o.rest), c.argv.end(),
                                 [](const Field& f) { return f.value == "-l"; });
      typed_keys(w, c, c.argv, so.rest, literal);
    } else if (one_of(sub, {"if-shell", "if"})) {
      tmux_command(w, c, Args(c.argv.begin(), c.argv.begin() + static_cast<long>(std::min(so.rest + 1, c.argv.size()))),
                   so.rest);
      c.wrapper = false;
    } else {
      w.unknown(c, "runs commands in a terminal multiplexer");
    }
    return;
  }
  // screen [options] [command args]: the command runs without a shell;
  // -X stuff TEXT types text, -X exec runs a command
  Opts o = parse_opts(c.argv, 1, Spec{"SLcsthpelXTr", {"-Logfile"}, true});
  if (!o.pos.empty() && one_of(c.argv[o.pos[0]].value, {"-ls", "-list"})) return;
  if (o.has({"-ls", "-list", "-r", "-x", "-wipe"}) && o.rest >= c.argv.size()) return;
  w.find(c, V::confirm, "detached execution: starts or drives a terminal multiplexer session");
  if (const Field* x = o.value({"-X"})) {
    if (x->value == "stuff") {
      typed_keys(w, c, c.argv, o.rest, true);
    } else if (x->value == "exec") {
      size_t k = o.rest;
      while (k < c.argv.size() && sw(c.argv[k].value, ".")) ++k;
      exec_inner(w, c, slice(c.argv, k), "screen -X exec", std::nullopt);
      c.wrapper = false;
    }
    return;
  }
  if (o.rest >= c.argv.size()) {
    w.unknown(c, "starts an interactive shell in a terminal multiplexer");
    return;
  }
  exec_inner(w, c, slice(c.argv, o.rest), "screen", std::nullopt);
  c.wrapper = false;
}

void rule_kill_port(Walker& w, Call& c) {
  c.info.kills = true;
  Opts o = parse_opts(c.argv, 1, Spec{"m", {"--method", "--timeout"}});
  bool any = false;
  for (size_t i : o.pos) {
    const Field& f = c.argv[i];
    if (f.dynamic) {
      w.unknown(c, "kills processes only known at run time");
      continue;
    }
    any = true;
    std::string port = f.value;
    if (sw(port, ":")) port = port.substr(1);
    bool is_port = c.name == "kill-port" || sw(f.value, ":");
    std::string probe = is_port ? ":" + port : f.value;
    for (const std::string& p : w.ctx().protected_processes)
      if ((is_port && p == probe) || (!is_port && (name_hit(p, f.value) || name_hit(f.value, p))))
        w.find(c, V::blocked, "kills a protected process (" + p + ")");
  }
  if (any) w.find(c, V::confirm, "kills processes (" + c.name + ")");
}

void rule_gdb(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"--args", "-args"})) {
      exec_inner(w, c, slice(c.argv, i + 1), c.name + " --args", std::nullopt);
      c.wrapper = false;
      return;
    }
    if (one_of(v, {"-x", "--command", "-ix", "--init-command", "-s", "--source"}) || sw(v, "--command=") ||
        sw(v, "--init-command=")) {
      w.unknown(c, "runs debugger commands from a file");
    }
  }
}

// kaicoder's own deciding subcommands: an agent must never approve its own work.
void rule_kaicoder(Walker& w, Call& c) {
  size_t i = 1;
  while (i < c.argv.size()) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"--root", "--config"})) {
      i += 2;
    } else if (sw(v, "-")) {
      ++i;
    } else {
      break;
    }
  }
  if (i < c.argv.size() && one_of(c.argv[i].value, {"approve", "reject", "apply", "rollback", "serve"}))
    w.find(c, V::blocked, "runs kaicoder's deciding subcommand '" + c.argv[i].value + "'");
  if (i < c.argv.size() && c.argv[i].dynamic) w.unknown(c, "kaicoder subcommand only known at run time");
}

}  // namespace kai::shell
