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

void rule_man(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1, Spec{"PMLSmp", {"--pager", "--manpath", "--locale", "--sections", "--systems", "--preprocessor"}});
  if (const Field* pager = o.value({"-P", "--pager"})) w.judge(c, "man --pager", *pager);
}

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

// crontab installs commands that cron runs later, outside any run.
void rule_crontab(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"u", {}});
  if (o.has({"-l"}) && o.pos.empty()) return;
  w.find(c, V::confirm,
         "detached execution: installs or removes scheduled commands (crontab), which run later outside the sandbox");
}

void rule_multiplexer(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"SLc", {}});
  if (!o.pos.empty() && one_of(c.argv[o.pos[0]].value, {"ls", "list-sessions", "list-windows", "has-session", "-ls"}))
    return;
  w.find(c, V::confirm, "detached execution: starts or drives a terminal multiplexer session");
  w.unknown(c, "runs commands in a terminal multiplexer");
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
