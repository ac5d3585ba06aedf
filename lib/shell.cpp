// The entry points of lib/shell.hpp and the per-command rules: what each
// known program does with its arguments (writes, deletes, runs another
// program, sends data). A program without a rule is an ordinary command
// (ask); a rule only ever makes a verdict stricter.

#include "lib/shell.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <utility>

#include "lib/shell_classify.hpp"
#include "lib/shell_parse.hpp"
#include "lib/util/text.hpp"

namespace kai {

std::string_view to_string(RunVerdict v) {
  switch (v) {
    case RunVerdict::allow: return "allow";
    case RunVerdict::ask: return "ask";
    case RunVerdict::confirm: return "confirm";
    case RunVerdict::blocked: return "blocked";
  }
  return "blocked";
}

}  // namespace kai

namespace kai::shell {
namespace {

using V = RunVerdict;
using List = std::initializer_list<std::string_view>;

bool sw(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool one_of(std::string_view x, List l) { return std::find(l.begin(), l.end(), x) != l.end(); }
bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

Field literal_field(std::string v) {
  Field f;
  f.raw = quote_argv({v});
  f.value = std::move(v);
  return f;
}

Field with_value(const Field& f, std::string v) {
  Field g = f;
  g.value = std::move(v);
  return g;
}

Field joined(const Args& a, size_t from) {
  Field f;
  for (size_t i = from; i < a.size(); ++i) {
    if (i > from) {
      f.value += ' ';
      f.raw += ' ';
    }
    f.value += a[i].value;
    f.raw += a[i].raw;
    f.dynamic = f.dynamic || a[i].dynamic;
    f.computed = f.computed || a[i].computed;
    f.download = f.download || a[i].download;
  }
  return f;
}

Args slice(const Args& a, size_t from) { return from < a.size() ? Args(a.begin() + static_cast<long>(from), a.end()) : Args{}; }

std::string path_basename(std::string v) {
  while (v.size() > 1 && v.back() == '/') v.pop_back();
  size_t slash = v.rfind('/');
  return slash == std::string::npos ? v : v.substr(slash + 1);
}

bool split_assignment(const std::string& v, std::string& name, std::string& value) {
  size_t eq = v.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    char ch = v[i];
    bool ok = ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (i > 0 && is_digit(ch));
    if (!ok) return false;
  }
  name = v.substr(0, eq);
  value = v.substr(eq + 1);
  return true;
}

// A placeholder for what xargs / find substitute at run time: an unknown
// variable, so that `sh -c 'rm -rf {}'` still parses and is judged.
constexpr std::string_view k_runtime_arg = "${__kaicoder_runtime_arg__}";

Field runtime_arg() {
  Field f;
  f.value = std::string(k_runtime_arg);
  f.synthetic = true;
  return f;
}

Field replace_token(const Field& f, const std::string& token) {
  if (token.empty() || f.value.find(token) == std::string::npos) return f;
  Field g = f;
  g.value.clear();
  for (size_t at = 0;;) {
    size_t hit = f.value.find(token, at);
    if (hit == std::string::npos) {
      g.value += f.value.substr(at);
      break;
    }
    g.value += f.value.substr(at, hit - at);
    g.value += k_runtime_arg;
    at = hit + token.size();
  }
  g.synthetic = true;
  return g;
}

// ---- option parsing ----

struct Opt {
  std::string name;
  std::optional<Field> value;
};

struct Opts {
  std::vector<Opt> opts;
  std::vector<size_t> pos;  // indices of positional arguments
  size_t rest = 0;          // Spec::stop: index where the wrapped command starts

  bool has(List names) const {
    return std::any_of(opts.begin(), opts.end(), [&](const Opt& o) { return one_of(o.name, names); });
  }
  bool has(const std::vector<std::string_view>& names) const {
    return std::any_of(opts.begin(), opts.end(),
                       [&](const Opt& o) { return std::find(names.begin(), names.end(), o.name) != names.end(); });
  }
  const Field* value(List names) const {
    for (auto it = opts.rbegin(); it != opts.rend(); ++it)
      if (one_of(it->name, names) && it->value) return &*it->value;
    return nullptr;
  }
  std::vector<const Field*> values(List names) const {
    std::vector<const Field*> out;
    for (const Opt& o : opts)
      if (one_of(o.name, names) && o.value) out.push_back(&*o.value);
    return out;
  }
};

struct Spec {
  std::string_view short_arg;              // short options taking a value: "-u root", "-uroot"
  std::vector<std::string_view> long_arg;  // long options taking a value: "--user root"
  bool stop = false;                       // options end at the first positional (wrappers)
  std::string_view short_attached;         // value only when attached: sed -i[SUFFIX]

  Spec() = default;
  Spec(std::string_view s, std::vector<std::string_view> l = {}, bool st = false, std::string_view attached = {})
      : short_arg(s), long_arg(std::move(l)), stop(st), short_attached(attached) {}
};

Opts parse_opts(const Args& a, size_t from, const Spec& spec) {
  Opts o;
  o.rest = a.size();
  bool end = false;
  for (size_t i = from; i < a.size(); ++i) {
    const std::string& v = a[i].value;
    // `--rsh="$X"` is still an option; `$X` alone is not
    bool literal_dash = !a[i].dynamic || (!a[i].raw.empty() && a[i].raw[0] == '-');
    if (end || v.size() < 2 || v[0] != '-' || !literal_dash) {
      o.pos.push_back(i);
      if (spec.stop) {
        o.rest = i;
        break;
      }
      continue;
    }
    if (v == "--") {
      end = true;
      if (spec.stop) {
        o.rest = i + 1;
        break;
      }
      continue;
    }
    if (v[1] == '-') {
      size_t eq = v.find('=');
      std::string name = v.substr(0, eq);
      if (eq != std::string::npos) {
        o.opts.push_back({name, with_value(a[i], v.substr(eq + 1))});
      } else if (std::find(spec.long_arg.begin(), spec.long_arg.end(), name) != spec.long_arg.end() && i + 1 < a.size()) {
        o.opts.push_back({name, a[i + 1]});
        ++i;
      } else {
        o.opts.push_back({name, std::nullopt});
      }
      continue;
    }
    for (size_t j = 1; j < v.size(); ++j) {
      char ch = v[j];
      std::string name{'-', ch};
      bool takes = spec.short_arg.find(ch) != std::string_view::npos;
      if (takes || spec.short_attached.find(ch) != std::string_view::npos) {
        if (j + 1 < v.size()) {
          o.opts.push_back({name, with_value(a[i], v.substr(j + 1))});
        } else if (takes && i + 1 < a.size()) {
          o.opts.push_back({name, a[i + 1]});
          ++i;
        } else {
          o.opts.push_back({name, std::nullopt});
        }
        break;
      }
      o.opts.push_back({name, std::nullopt});
    }
  }
  return o;
}

// GNU long options may be abbreviated: `--recur` is `--recursive`.
bool long_is(std::string_view v, std::string_view full, size_t min) { return v.size() >= min && sw(full, v); }

// ---- static output: what echo/printf print, followed through pipes ----

size_t decode_escape(std::string_view s, size_t k, std::string& out) {
  if (k + 1 >= s.size()) {
    out += '\\';
    return k;
  }
  char e = s[k + 1];
  static constexpr std::string_view k_from = "nrtabfve\\";
  static constexpr std::string_view k_to = "\n\r\t\a\b\f\v\x1b\\";
  if (size_t at = k_from.find(e); at != std::string_view::npos) {
    out += k_to[at];
    return k + 1;
  }
  if (e == 'x' || (e >= '0' && e <= '7')) {
    int base = e == 'x' ? 16 : 8;
    size_t j = e == 'x' || e == '0' ? k + 2 : k + 1;
    size_t max = e == 'x' ? 2 : 3;
    unsigned v = 0;
    size_t n = 0;
    for (; n < max && j < s.size(); ++n, ++j) {
      char ch = s[j];
      int d = is_digit(ch) && (base == 16 || ch <= '7') ? ch - '0'
              : base == 16 && ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
              : base == 16 && ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
      if (d < 0) break;
      v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    }
    out += static_cast<char>(v & 0xFF);
    return j - 1;
  }
  out += '\\';
  out += e;
  return k + 1;
}

std::string decode_escapes(std::string_view s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\\') {
      k = decode_escape(s, k, out);
    } else {
      out += s[k];
    }
  }
  return out;
}

bool all_static(const Args& a, size_t from) {
  for (size_t i = from; i < a.size(); ++i)
    if (a[i].dynamic || a[i].glob || a[i].synthetic || a[i].procsub) return false;
  return true;
}

void rule_echo(Walker&, Call& c) {
  size_t i = 1;
  bool newline = true, escapes = false;
  while (i < c.argv.size() && c.argv[i].value.size() > 1 && c.argv[i].value[0] == '-' &&
         c.argv[i].value.find_first_not_of("neE", 1) == std::string::npos) {
    for (char ch : c.argv[i].value.substr(1)) {
      newline = newline && ch != 'n';
      if (ch == 'e') escapes = true;
      if (ch == 'E') escapes = false;
    }
    ++i;
  }
  if (!all_static(c.argv, i)) return;
  std::string text = joined(c.argv, i).value;
  bool computed = false;
  for (size_t k = i; k < c.argv.size(); ++k) computed = computed || c.argv[k].computed;
  // dash's echo decodes escapes even without -e: take the decoded form and
  // call it computed, so a shell fed by it is never understood
  if (escapes || text.find('\\') != std::string::npos) {
    text = decode_escapes(text);
    computed = true;
  }
  if (newline) text += '\n';
  c.info.output = std::move(text);
  c.info.output_computed = computed;
}

void rule_printf(Walker& w, Call& c) {
  size_t i = 1;
  if (i < c.argv.size() && c.argv[i].value == "-v" && i + 1 < c.argv.size()) {
    w.forget_var(c.argv[i + 1].value);
    return;
  }
  if (i < c.argv.size() && c.argv[i].value == "--") ++i;
  if (i >= c.argv.size() || !all_static(c.argv, i)) return;
  const std::string& fmt = c.argv[i].value;
  std::vector<std::string> args;
  for (size_t k = i + 1; k < c.argv.size(); ++k) args.push_back(c.argv[k].value);
  std::string out;
  bool computed = fmt.find('\\') != std::string::npos;
  size_t ai = 0;
  for (int round = 0; round < 64 && out.size() < 65536; ++round) {
    bool conversion = false;
    for (size_t k = 0; k < fmt.size(); ++k) {
      if (fmt[k] == '\\') {
        k = decode_escape(fmt, k, out);
        continue;
      }
      if (fmt[k] != '%') {
        out += fmt[k];
        continue;
      }
      size_t j = k + 1;
      while (j < fmt.size() && std::string_view("-+ #0123456789.*").find(fmt[j]) != std::string_view::npos) ++j;
      if (j >= fmt.size()) break;
      k = j;
      if (fmt[j] == '%') {
        out += '%';
        continue;
      }
      conversion = true;
      std::string arg = ai < args.size() ? args[ai++] : "";
      if (fmt[j] == 'b') {
        out += decode_escapes(arg);
        computed = true;
      } else if (fmt[j] == 'c') {
        out += arg.substr(0, 1);
      } else {
        out += arg;
      }
    }
    if (!conversion || ai >= args.size()) break;
  }
  c.info.output = std::move(out);
  c.info.output_computed = computed;
}

std::optional<std::string> hex_decode(std::string_view s) {
  std::string out;
  int hi = -1;
  for (char ch : s) {
    int d = is_digit(ch) ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
    if (d < 0) {
      if (ch == ' ' || ch == '\n' || ch == '\t') continue;
      return std::nullopt;
    }
    if (hi < 0) {
      hi = d;
    } else {
      out += static_cast<char>(hi * 16 + d);
      hi = -1;
    }
  }
  return out;
}

// Decoders fed static text pass their (decoded) output down the pipe, so
// `echo cm0gLXJmIC8= | base64 -d | sh` is judged as `rm -rf /`.
void rule_base64(Walker&, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"w", {"--wrap"}});
  bool decode = o.has({"-d", "--decode", "-D"});
  if (!decode || !o.pos.empty() || !c.in.text) return;
  if (std::optional<std::string> out = base64_decode(*c.in.text)) {
    c.info.output = out;
    c.info.output_computed = true;
  }
}

void rule_xxd(Walker&, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"cglos", {}});
  if (o.has({"-r", "-revert"}) && o.has({"-p", "-ps", "-plain"}) && o.pos.empty() && c.in.text) {
    if (std::optional<std::string> out = hex_decode(*c.in.text)) {
      c.info.output = out;
      c.info.output_computed = true;
    }
  }
}

void rule_rev(Walker&, Call& c) {
  if (c.argv.size() > 1 || !c.in.text) return;
  std::string out, line;
  for (char ch : *c.in.text) {
    if (ch == '\n') {
      out.append(line.rbegin(), line.rend());
      out += '\n';
      line.clear();
    } else {
      line += ch;
    }
  }
  out.append(line.rbegin(), line.rend());
  c.info.output = out;
  c.info.output_computed = true;
}

void rule_cat(Walker&, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i)
    if (c.argv[i].value != "-" && c.argv[i].value[0] != '-') return;
  c.info.output = c.in.text;
  c.info.output_computed = c.in.computed;
  c.info.download = c.in.download;
}

void rule_tee(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"", {}, false});
  for (size_t i : o.pos) {
    w.write(c, c.argv[i]);
    if (c.in.download) w.download(c, c.argv[i]);
    if (!o.has({"-a", "--append"})) w.wrote(c.argv[i], c.in.text, c.in.computed);
  }
  c.info.output = c.in.text;  // tee passes its input on
  c.info.output_computed = c.in.computed;
  c.info.download = c.in.download;
}

// ---- wrappers ----

void unwrap_at(Walker& w, Call& c, size_t start, const std::optional<std::string>& cwd = std::nullopt) {
  if (start >= c.argv.size()) return;  // the wrapper alone is an ordinary command
  c.info = w.run(c, slice(c.argv, start), c.in, cwd);
}

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

void rule_sudo(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"CDgpRrTtUu",
                           {"--user", "--group", "--prompt", "--close-from", "--chdir", "--role", "--type", "--other-user",
                            "--command-timeout", "--host", "--chroot"},
                           true});
  w.find(c, V::confirm, "runs as another user");
  if (c.name == "sudoedit" || o.has({"-e", "--edit"})) {
    for (size_t i = o.rest; i < c.argv.size(); ++i) w.write(c, c.argv[i]);
    return;
  }
  size_t i = skip_assignments(w, c, o.rest);
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
  if (const Field* p = o.value({"-P"})) w.find(c, V::confirm, "looks the program up in '" + p->value + "' instead of PATH");
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
  size_t skip = 0;                            // positionals before the command (timeout DURATION)
  std::vector<std::string_view> no_command;   // options after which there is no command
  std::string_view note;                      // a confirm-tier finding, when the wrapper itself matters

  WrapperSpec(std::string_view n, Spec s, size_t sk = 0, std::vector<std::string_view> no = {}, std::string_view nt = {})
      : name(n), spec(std::move(s)), skip(sk), no_command(std::move(no)), note(nt) {}
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
      {"ionice", {"cnpPu", {"--class", "--classdata", "--pid", "--pgid", "--uid"}, true}, 0, {"-p", "-P", "-u", "--pid"}},
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
      {"nsenter", {"tSGrw", {"--target", "--setuid", "--setgid", "--root", "--wd"}, true}, 0, {}, "enters another process's namespaces"},
      {"firejail", {"", {}, true}},
      {"systemd-run", {"pEu", {"--property", "--setenv", "--unit", "--description", "--slice", "--on-calendar", "--on-active"}, true}, 0, {}, "detached execution: starts a system unit, which runs outside the sandbox"},
      {"chroot", {"", {"--userspec", "--groups"}, true}, 1, {}, "runs in another root folder"},
      {"pkexec", {"", {"--user"}, true}, 0, {}, "runs as another user"},
      {"caffeinate", {"tw", {}, true}},
      {"with-contenv", {"", {}, true}},
  };
  for (const WrapperSpec& s : k_wrappers)
    if (s.name == name) return &s;
  return nullptr;
}

void rule_wrapper(Walker& w, Call& c, const WrapperSpec& s) {
  Opts o = parse_opts(c.argv, 1, s.spec);
  if (!s.note.empty()) w.find(c, V::confirm, std::string(s.note));
  if (o.has(s.no_command)) return;
  unwrap_at(w, c, o.rest + s.skip);
}

void rule_time(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"fo", {"--format", "--output"}, true});
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  unwrap_at(w, c, o.rest);
}

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
  Opts o = parse_opts(c.argv, 1,
                      Spec{"cEIOBTm", {"--command", "--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format"}});
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
                           {"--command", "--group", "--supp-group", "--shell", "--whitelist-environment", "--session-command",
                            "--user"},
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

// npx / pnpx / bunx run a package's program; -c runs a shell string.
void rule_npx(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"pc", {"--package", "--call"}, true});
  if (const Field* cmd = o.value({"-c", "--call"})) {
    w.run_shell(c, *cmd, {});
    return;
  }
  unwrap_at(w, c, o.rest);
}

void rule_xargs(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"adEILnPs",
                           {"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars",
                            "--process-slot-var"},
                           true, "eil"});
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

// GNU parallel and sem run a command once per argument: `parallel rm -rf
// ::: a b` is `rm -rf a` and `rm -rf b`; without ::: the arguments come from
// the input, as with xargs. The command is judged with every argument.
void rule_parallel(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"jSaIdEPN",
                           {"--jobs", "--sshlogin", "--arg-file", "--replace", "--delimiter", "--eof", "--max-procs",
                            "--max-args", "--id", "--semaphorename", "--timeout", "--joblog", "--results", "--tmpdir",
                            "--workdir", "--env", "--basefile", "--transferfile", "--return"},
                           true});
  if (o.value({"-S", "--sshlogin"})) w.find(c, V::confirm, "runs commands on other machines");
  Args inner, args;
  bool after = false;
  for (size_t i = o.rest; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == ":::" || v == "::::" || v == ":::+" || v == "::::+") {
      after = true;
    } else {
      (after ? args : inner).push_back(c.argv[i]);
    }
  }
  if (inner.empty()) {
    w.unknown(c, "runs commands read from its input");
    return;
  }
  bool placeholder = false;
  for (Field& f : inner) {
    if (f.value.find("{}") != std::string::npos) placeholder = true;
    if (args.empty()) f = replace_token(f, "{}");
  }
  if (args.empty()) {
    if (!placeholder) inner.push_back(runtime_arg());
    exec_inner(w, c, std::move(inner), "parallel", std::nullopt);
    return;
  }
  for (const Field& a : args) {
    Args one = inner;
    if (placeholder) {
      for (Field& f : one) {
        std::string v = f.value;
        for (size_t at = v.find("{}"); at != std::string::npos; at = v.find("{}", at + a.value.size()))
          v.replace(at, 2, a.value);
        f = with_value(f, v);
      }
    } else {
      one.push_back(a);
    }
    exec_inner(w, c, std::move(one), "parallel", std::nullopt);
  }
}

// ---- shells, eval, source, interpreters ----

void rule_shell(Walker& w, Call& c) {
  size_t i = 1;
  bool cflag = false, sflag = false;
  while (i < c.argv.size()) {
    const std::string& v = c.argv[i].value;
    if (v == "--" || v == "-") {
      sflag = sflag || v == "-";
      ++i;
      break;
    }
    if (sw(v, "--")) {
      if (one_of(v, {"--rcfile", "--init-file"})) {
        w.unknown(c, "runs a start-up file");
        ++i;
      }
      ++i;
      continue;
    }
    if (v.size() < 2 || (v[0] != '-' && v[0] != '+')) break;
    bool takes = false;
    for (char ch : v.substr(1)) {
      cflag = cflag || ch == 'c';
      sflag = sflag || ch == 's';
      takes = takes || ch == 'o' || ch == 'O';
    }
    i += takes ? 2 : 1;
  }
  if (cflag) {
    if (i >= c.argv.size()) return;
    Args pos = slice(c.argv, i + 1);
    if (pos.empty()) pos.push_back(literal_field(c.name));
    w.run_shell(c, c.argv[i], pos);
    return;
  }
  if (i < c.argv.size() && !sflag) {
    const Field& f = c.argv[i];
    if (f.procsub) {
      w.run_procsub(c, f, Lang::shell);
    } else if (f.value == "/dev/stdin") {
      w.run_stdin(c, Lang::shell);
    } else {
      w.run_file(c, f, Lang::shell);  // otherwise a script in the tree: an ordinary command
    }
    return;
  }
  w.run_stdin(c, Lang::shell);
}

void rule_eval(Walker& w, Call& c) {
  if (c.argv.size() < 2) return;
  Field code = joined(c.argv, 1);
  if (code.dynamic) {
    if (code.download) {
      w.find(c, V::blocked, "runs a download through eval");
    } else {
      w.unknown(c, "eval of text only known at run time");
    }
    return;
  }
  if (code.computed) w.unknown(c, "eval of computed text");
  w.run_shell(c, code, {});
}

void rule_source(Walker& w, Call& c) {
  if (c.argv.size() < 2) return;
  const Field& f = c.argv[1];
  if (f.procsub) {
    w.run_procsub(c, f, Lang::shell);
  } else if (f.value == "/dev/stdin" || f.value == "-") {
    w.run_stdin(c, Lang::shell);
  } else {
    w.run_file(c, f, Lang::shell);
  }
}

void rule_alias(Walker& w, Call& c) {
  std::string name, value;
  for (size_t i = 1; i < c.argv.size(); ++i)
    if (split_assignment(c.argv[i].value, name, value)) w.judge(c, "alias " + name, with_value(c.argv[i], value));
}

void rule_trap(Walker& w, Call& c) {
  size_t i = 1;
  if (i < c.argv.size() && c.argv[i].value == "--") ++i;
  if (i + 1 >= c.argv.size() || c.argv[i].value.empty() || c.argv[i].value == "-" || sw(c.argv[i].value, "-")) return;
  w.run_shell(c, c.argv[i], {});
}

void rule_declare(Walker& w, Call& c) {
  std::string name, value;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    if (sw(f.value, "-") || sw(f.value, "+")) continue;
    if (split_assignment(f.value, name, value)) w.check_assignment(c, name, with_value(f, value), Scope::shell);
  }
}

void rule_unset(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i)
    if (!sw(c.argv[i].value, "-")) w.forget_var(c.argv[i].value);
}

// read and mapfile set variables from their input: unknown, but tainted
// when the input is a download (`curl ... | while read l; do eval "$l"; done`).
void rule_read(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{c.name == "read" ? "adinNptu" : "dnOsuCc", {}});
  Field value;
  value.dynamic = true;
  value.download = c.in.download;
  std::vector<std::string> names;
  for (size_t i : o.pos) names.push_back(c.argv[i].value);
  if (const Field* a = o.value({"-a"})) names.push_back(a->value);
  if (names.empty()) names.push_back(c.name == "read" ? "REPLY" : "MAPFILE");
  for (const std::string& n : names) w.set_var(n, value);
}

void rule_cd(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{});
  std::optional<Field> dir;
  if (!o.pos.empty()) dir = c.argv[o.pos[0]];
  if (dir && (dir->dynamic || dir->computed)) w.unknown(c, "changes to a folder only known at run time");
  if (c.name == "cd") {
    w.set_cwd(dir);
  } else if (c.name == "pushd") {
    if (dir) {
      w.push_dir(dir);
    } else {
      w.set_cwd(literal_field("-"));
    }
  } else {
    w.pop_dir();
  }
}

void rule_hash(Walker& w, Call& c) {
  if (parse_opts(c.argv, 1, Spec{"p", {}}).has({"-p"})) w.unknown(c, "maps a command name to another program");
}

void rule_enable(Walker& w, Call& c) {
  if (parse_opts(c.argv, 1, Spec{"f", {}}).has({"-f"}))
    w.find(c, V::blocked, "loads a shell builtin from a shared library");
}

// Interpreters: the option that takes program text, the options that take
// a value, and whether -i edits files in place (perl, ruby).
struct Interpreter {
  std::string_view name;
  std::string_view code_short;  // -c, -e ...
  List code_long;
  std::string_view arg_short;   // options taking a value
  List arg_long;
  std::string_view inplace;     // -i[SUFFIX]
};

const Interpreter* interpreter(std::string_view name) {
  static const Interpreter k_interp[] = {
      {"python", "c", {}, "mWXQ", {"--check-hash-based-pycs"}, ""},
      {"pypy", "c", {}, "mWXQ", {}, ""},
      {"perl", "eE", {}, "IMmFxC0l", {}, "i"},
      {"ruby", "e", {}, "rIECFTx0", {"--encoding"}, "i"},
      {"node", "ep", {"--eval", "--print"}, "r", {"--require", "--import", "--loader", "--input-type"}, ""},
      {"nodejs", "ep", {"--eval", "--print"}, "r", {"--require", "--import", "--loader"}, ""},
      {"bun", "ep", {"--eval", "--print"}, "r", {"--preload"}, ""},
      {"php", "rBRE", {}, "cdfFz", {}, ""},
      {"lua", "e", {}, "l", {}, ""},
      {"luajit", "e", {}, "lbj", {}, ""},
      {"Rscript", "e", {}, "", {}, ""},
      {"R", "e", {}, "", {}, ""},
      {"julia", "eE", {"--eval", "--print"}, "", {}, ""},
      {"osascript", "e", {}, "l", {}, ""},
      {"pwsh", "c", {"-Command", "-EncodedCommand"}, "", {}, ""},
      {"powershell", "c", {"-Command", "-EncodedCommand"}, "", {}, ""},
      {"tclsh", "", {}, "", {}, ""},
      {"expect", "c", {}, "f", {}, ""},
      {"gdb", "", {"-ex", "--eval-command", "-iex"}, "x", {"--command"}, ""},
  };
  for (const Interpreter& s : k_interp)
    if (s.name == name) return &s;
  return nullptr;
}

void rule_pkg(Walker& w, Call& c, std::string_view manager, size_t from);

void rule_interpreter(Walker& w, Call& c, const Interpreter& s) {
  std::vector<std::string> code;
  bool inplace = false;
  size_t i = 1;
  for (; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "--" || v == "-" || v.size() < 2 || v[0] != '-' || c.argv[i].dynamic) break;
    if (one_of(v, s.code_long) || (sw(v, "--") && one_of(v.substr(0, v.find('=')), s.code_long))) {
      size_t eq = v.find('=');
      if (eq != std::string::npos) {
        code.push_back(v.substr(eq + 1));
      } else if (i + 1 < c.argv.size()) {
        code.push_back(c.argv[++i].value);
      }
      continue;
    }
    if (sw(v, "--")) {
      if (one_of(v, s.arg_long) && i + 1 < c.argv.size()) ++i;
      continue;
    }
    for (size_t j = 1; j < v.size(); ++j) {
      char ch = v[j];
      std::string rest = v.substr(j + 1);
      if (s.code_short.find(ch) != std::string_view::npos) {
        code.push_back(!rest.empty() ? rest : i + 1 < c.argv.size() ? c.argv[++i].value : "");
        break;
      }
      // perl -0[octal], -0xHEX and -l[octal], ruby -0[octal]: only digits
      // belong to the option; the rest of the cluster goes on (-lne, -0pe).
      if ((ch == '0' && (s.name == "perl" || s.name == "ruby")) || (ch == 'l' && s.name == "perl")) {
        if (ch == '0' && j + 1 < v.size() && (v[j + 1] == 'x' || v[j + 1] == 'X')) {
          ++j;
          while (j + 1 < v.size() && std::isxdigit(static_cast<unsigned char>(v[j + 1]))) ++j;
        }
        while (j + 1 < v.size() && is_digit(v[j + 1])) ++j;
        continue;
      }
      if (s.inplace.find(ch) != std::string_view::npos) {
        inplace = true;
        break;
      }
      if (s.arg_short.find(ch) != std::string_view::npos) {
        if (ch == 'm' && (s.name == "python" || s.name == "pypy")) {
          size_t at = i;
          if (rest.empty() && i + 1 < c.argv.size()) rest = c.argv[++i].value;
          Args inner;
          inner.push_back(with_value(c.argv[at], rest));
          Args more = slice(c.argv, i + 1);
          inner.insert(inner.end(), more.begin(), more.end());
          // python -m pip / -m venv / -m black ... behave like the program
          c.info = w.run(c, std::move(inner), c.in);
          return;
        }
        if (rest.empty() && i + 1 < c.argv.size()) ++i;
        break;
      }
    }
  }
  if (!code.empty()) {
    std::string all;
    for (const std::string& part : code) all += part + "\n";
    w.opaque(c, all);
    if (inplace)
      for (size_t k = i; k < c.argv.size(); ++k) w.write(c, c.argv[k]);
    return;
  }
  if (i < c.argv.size() && c.argv[i].value == "--") ++i;
  if (i < c.argv.size() && c.argv[i].value != "-") {
    const Field& script = c.argv[i];
    if (script.procsub) {
      w.run_procsub(c, script, Lang::other);
    } else if (sw(script.value, "http://") || sw(script.value, "https://")) {
      w.unknown(c, "runs a script from the network");
    } else {
      w.run_file(c, script, Lang::other);
    }
    return;  // a script in the tree: an ordinary command
  }
  if (s.name == "gdb" || s.name == "pwsh" || s.name == "powershell") return;
  w.run_stdin(c, Lang::other);
}

// awk programs: system() and pipes run commands, `print > "file"` writes.
void rule_awk(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"fvFeilE", {"--file", "--assign", "--field-separator", "--source", "--include", "--load", "--exec"}});
  std::vector<const Field*> progs = o.values({"-e", "--source"});
  size_t first_file = 0;
  if (o.has({"-f", "--file", "-E", "--exec"})) {
    w.unknown(c, "runs an awk program from a file");
  } else if (progs.empty() && !o.pos.empty()) {
    progs.push_back(&c.argv[o.pos[0]]);
    first_file = 1;
  }
  for (const Field* lib : o.values({"-i", "--include", "-l", "--load"})) {
    if (lib->value == "inplace") {
      for (size_t k = first_file; k < o.pos.size(); ++k) w.write(c, c.argv[o.pos[k]]);
    } else {
      w.unknown(c, "loads an awk extension");
    }
  }
  for (const Field* p : progs) {
    const std::string& prog = p->value;
    if (p->dynamic) w.unknown(c, "runs an awk program only known at run time");
    bool in_string = false;
    for (size_t k = 0; k < prog.size(); ++k) {
      char ch = prog[k];
      if (in_string) {
        if (ch == '\\') ++k;
        if (ch == '"') in_string = false;
        continue;
      }
      if (ch == '"') in_string = true;
      bool pipe = ch == '|' && (k + 1 >= prog.size() || prog[k + 1] != '|') && (k == 0 || prog[k - 1] != '|');
      if (pipe) w.unknown(c, "the awk program pipes to or from commands");
      if (ch == '>' && k + 1 < prog.size()) {
        size_t q = prog.find_first_not_of(" >", k + 1);
        if (q != std::string::npos && prog[q] == '"') {
          size_t e = prog.find('"', q + 1);
          w.write(c, literal_field(prog.substr(q + 1, e == std::string::npos ? std::string::npos : e - q - 1)));
        }
      }
    }
    if (prog.find("system") != std::string::npos) {
      w.opaque(c, prog);
      w.unknown(c, "the awk program runs commands");
    }
  }
}

struct SedScan {
  std::vector<std::string> exec;  // `e command`
  bool exec_pattern = false;      // `e` alone or s///e: runs the text being edited
  std::vector<std::string> writes, reads;
  bool ok = true;
};

// Enough of sed's grammar to find the commands that run programs (e, s///e)
// and touch files (w, W, r, R, s///w).
SedScan scan_sed(std::string_view s) {
  SedScan r;
  size_t i = 0;
  auto rest_of_line = [&] {
    size_t e = s.find('\n', i);
    std::string t = trim(s.substr(i, e == std::string_view::npos ? std::string_view::npos : e - i));
    i = e == std::string_view::npos ? s.size() : e + 1;
    return t;
  };
  auto delimited = [&](char d) {
    while (i < s.size() && s[i] != d) i += s[i] == '\\' ? 2 : 1;
    if (i >= s.size()) return false;
    ++i;
    return true;
  };
  while (i < s.size()) {
    while (i < s.size() && std::string_view(" \t\n;").find(s[i]) != std::string_view::npos) ++i;
    while (i < s.size()) {  // addresses
      char ch = s[i];
      if (is_digit(ch) || std::string_view("$,~+! \t").find(ch) != std::string_view::npos) {
        ++i;
      } else if (ch == '/') {
        ++i;
        if (!delimited('/')) return r.ok = false, r;
        while (i < s.size() && (s[i] == 'I' || s[i] == 'M')) ++i;
      } else if (ch == '\\' && i + 1 < s.size()) {
        char d = s[i + 1];
        i += 2;
        if (!delimited(d)) return r.ok = false, r;
      } else {
        break;
      }
    }
    if (i >= s.size()) break;
    char cmd = s[i++];
    if (std::string_view("{}=dDgGhHnNpPxzF").find(cmd) != std::string_view::npos) continue;
    switch (cmd) {
      case '#': rest_of_line(); break;
      case ':': case 'b': case 't': case 'T': case 'v':
        while (i < s.size() && s[i] != ';' && s[i] != '\n' && s[i] != '}') ++i;
        break;
      case 'q': case 'Q': case 'l': case 'L':
        while (i < s.size() && (is_digit(s[i]) || s[i] == ' ')) ++i;
        break;
      case 'a': case 'i': case 'c': {
        std::string t = rest_of_line();
        while (!t.empty() && t.back() == '\\' && i < s.size()) t = rest_of_line();
        break;
      }
      case 'e': {
        std::string t = rest_of_line();
        if (t.empty()) {
          r.exec_pattern = true;
        } else {
          r.exec.push_back(t);
        }
        break;
      }
      case 'w': case 'W': r.writes.push_back(rest_of_line()); break;
      case 'r': case 'R': r.reads.push_back(rest_of_line()); break;
      case 's': case 'y': {
        if (i >= s.size()) return r.ok = false, r;
        char d = s[i++];
        if (!delimited(d) || !delimited(d)) return r.ok = false, r;
        while (cmd == 's' && i < s.size() && s[i] != ';' && s[i] != '\n' && s[i] != '}') {
          char f = s[i++];
          if (f == 'e') r.exec_pattern = true;
          if (f == 'w') {
            r.writes.push_back(rest_of_line());
            break;
          }
        }
        break;
      }
      default: return r.ok = false, r;
    }
  }
  return r;
}

void rule_sed(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"efl", {"--expression", "--file", "--line-length"}, false, "i"});
  bool inplace = o.has({"-i", "--in-place"});
  std::vector<const Field*> scripts = o.values({"-e", "--expression"});
  size_t first_file = 0;
  if (o.has({"-f", "--file"})) {
    w.unknown(c, "runs a sed script from a file");
  } else if (scripts.empty() && !o.pos.empty()) {
    scripts.push_back(&c.argv[o.pos[0]]);
    first_file = 1;
  }
  for (const Field* script : scripts) {
    if (script->dynamic) {
      w.unknown(c, "runs a sed script only known at run time");
      continue;
    }
    SedScan r = scan_sed(script->value);
    if (!r.ok) w.unknown(c, "the sed script is not understood");
    if (r.exec_pattern) w.find(c, V::blocked, "sed's e command runs text only known at run time");
    for (const std::string& cmd : r.exec) w.judge(c, "sed's e command", literal_field(cmd));
    for (const std::string& f : r.writes) w.write(c, literal_field(f));
    for (const std::string& f : r.reads) w.read(c, literal_field(f));
  }
  if (inplace)
    for (size_t k = first_file; k < o.pos.size(); ++k) w.write(c, c.argv[o.pos[k]]);
}

// ---- deletion ----

void rule_rm(Walker& w, Call& c) {
  bool recursive = false, force = false, no_preserve = false, end = false;
  std::vector<size_t> targets;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (!end && v == "--") {
      end = true;
    } else if (!end && v.size() > 1 && v[0] == '-' && !c.argv[i].dynamic) {
      if (v[1] == '-') {
        recursive = recursive || long_is(v, "--recursive", 3);
        force = force || long_is(v, "--force", 3);
        no_preserve = no_preserve || long_is(v, "--no-preserve-root", 4);
      } else {
        recursive = recursive || v.find_first_of("rR") != std::string::npos;
        force = force || v.find('f') != std::string::npos;
      }
    } else {
      targets.push_back(i);
    }
  }
  if (no_preserve) w.find(c, V::blocked, "deletion with --no-preserve-root");
  if (recursive || force) {
    for (size_t t : targets) {
      const Field& f = c.argv[t];
      if (w.disposable(f)) continue;
      if (f.dynamic || f.synthetic) {
        std::string what = f.raw.empty() ? "names read from its input" : "'" + f.raw + "'";
        w.find(c, V::blocked, "recursive or forced deletion of a path only known at run time (" + what + ")");
      } else if (f.glob || f.tilde || !w.inside_root(f)) {
        w.find(c, V::blocked, "recursive or forced deletion outside a build or temp folder ('" + f.value + "')");
      }
      // A static path inside root: confirm tier through write() below, which
      // blocks guarded paths; the run's snapshot undoes the rest.
    }
  }
  for (size_t t : targets) w.write(c, c.argv[t]);
}

void rule_write_positionals(Walker& w, Call& c, const Spec& spec) {
  Opts o = parse_opts(c.argv, 1, spec);
  for (size_t i : o.pos) w.write(c, c.argv[i]);
}

void rule_shred(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"nsx", {"--iterations", "--size", "--random-source"}});
  for (size_t i : o.pos) {
    if (sw(c.argv[i].value, "/dev/")) {
      w.find(c, V::blocked, "wipes the device '" + c.argv[i].value + "'");
    } else {
      w.write(c, c.argv[i]);
    }
  }
}

void rule_find(Walker& w, Call& c) {
  size_t i = 1;
  while (i < c.argv.size() && (one_of(c.argv[i].value, {"-H", "-L", "-P", "-D"}) || sw(c.argv[i].value, "-O")))
    i += c.argv[i].value == "-D" ? 2 : 1;
  std::vector<size_t> starts;
  for (; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (sw(v, "-") || one_of(v, {"(", ")", "!", ","})) break;
    starts.push_back(i);
  }
  bool del = false, secret_name = false;
  for (; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"-exec", "-execdir", "-ok", "-okdir"})) {
      Args inner;
      size_t j = i + 1;
      for (; j < c.argv.size() && c.argv[j].value != ";" && c.argv[j].value != "+"; ++j)
        inner.push_back(replace_token(c.argv[j], "{}"));
      i = j;
      if (secret_name && !inner.empty() && !names_without_reading(basename_of(inner[0].value)))
        w.find(c, V::blocked, "reads secret files found by name");
      bool dir = v == "-execdir" || v == "-okdir";
      exec_inner(w, c, std::move(inner), "find " + v, dir ? std::optional<std::string>("") : std::nullopt);
      c.wrapper = false;  // find itself is a leaf too
    } else if (v == "-delete") {
      del = true;
    } else if (one_of(v, {"-fprint", "-fprint0", "-fls", "-fprintf"}) && i + 1 < c.argv.size()) {
      w.write(c, c.argv[++i]);
      if (v == "-fprintf") ++i;
    } else if (one_of(v, {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"}) && i + 1 < c.argv.size()) {
      const Field& pat = c.argv[++i];
      secret_name = secret_name || (w.ctx().is_secret && !pat.dynamic && w.ctx().is_secret(pat.value));
    }
  }
  if (!del) return;
  std::vector<Field> roots;
  for (size_t s : starts) roots.push_back(c.argv[s]);
  if (roots.empty()) roots.push_back(literal_field("."));  // find's default
  for (const Field& r : roots) {
    if (!w.disposable(r))
      w.find(c, V::blocked, "recursive deletion (find -delete) outside a build or temp folder ('" + r.value + "')");
    w.write(c, r);
  }
}

// ---- copies and moves ----

void rule_copy(Walker& w, Call& c) {
  bool install = c.name == "install";
  Opts o = parse_opts(c.argv, 1,
                      Spec{install ? "gmoSt" : "tS",
                           {"--target-directory", "--suffix", "--mode", "--owner", "--group", "--strip-program", "--context"}});
  if (const Field* prog = o.value({"--strip-program"})) w.judge(c, "install --strip-program", *prog);
  std::vector<const Field*> pos;
  for (size_t i : o.pos) pos.push_back(&c.argv[i]);
  if (install && o.has({"-d", "--directory"})) {
    for (const Field* p : pos) w.write(c, *p);
    return;
  }
  const Field* dir = o.value({"-t", "--target-directory"});
  std::vector<const Field*> srcs = pos;
  std::optional<Field> dest;
  if (dir) {
    dest = *dir;
  } else if (c.name == "ln" && pos.size() == 1) {
    dest = literal_field(".");
  } else if (!pos.empty()) {
    dest = *pos.back();
    srcs.pop_back();
  }
  if (!dest) return;
  bool into_dir = dir || srcs.size() > 1 || dest->value == "." || dest->value == ".." ||
                  (!dest->value.empty() && dest->value.back() == '/');
  if (!into_dir) w.write(c, *dest);
  for (const Field* s : srcs) {
    if (into_dir || o.has({"-r", "-R", "-a", "--recursive", "--archive"})) {
      std::string d = dest->value;
      if (!d.empty() && d.back() != '/') d += '/';
      Field t = with_value(*dest, d + path_basename(s->value));
      t.glob = t.glob || s->glob;
      t.dynamic = t.dynamic || s->dynamic || s->synthetic;
      if (into_dir || !t.dynamic) w.write(c, t);
    }
    if (c.name == "mv") w.write(c, *s);  // moved away: its old place changes too
  }
}

// ---- permissions ----

bool world_writable(std::string_view mode) {
  if (!mode.empty() && std::all_of(mode.begin(), mode.end(), is_digit)) {
    char others = mode.back();
    return mode.size() >= 3 && (others == '2' || others == '3' || others == '6' || others == '7');
  }
  size_t start = 0;
  while (start <= mode.size()) {
    size_t comma = mode.find(',', start);
    std::string_view clause = mode.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t op = clause.find_first_of("+=");
    std::string_view who = clause.substr(0, op == std::string_view::npos ? 0 : op);
    if (op != std::string_view::npos && clause.find('w', op) != std::string_view::npos &&
        (who.empty() || who.find_first_of("oa") != std::string_view::npos))
      return true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return false;
}

void rule_chmod(Walker& w, Call& c) {
  bool recursive = false, reference = false;
  std::optional<std::string> mode;
  std::vector<size_t> targets;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "-R" || long_is(v, "--recursive", 4)) {
      recursive = true;
    } else if (sw(v, "--reference")) {
      reference = true;
    } else if (sw(v, "-") && v.size() > 1 && v.find_first_not_of("Rcfvh", 1) == std::string::npos) {
      recursive = recursive || v.find('R') != std::string::npos;
    } else if (sw(v, "--")) {
      continue;
    } else if (!mode && !reference && c.name != "chattr") {
      mode = v;
    } else {
      targets.push_back(i);
    }
  }
  for (size_t t : targets) {
    const Field& f = c.argv[t];
    bool broad = one_of(f.value, {"/", "~", ".", "..", "*"}) || f.tilde || f.dynamic ||
                 (sw(f.value, "/") && !w.disposable(f)) || sw(normalize(f.value), "..");
    if (recursive && (broad || (c.name == "chmod" && mode && world_writable(*mode))))
      w.find(c, V::blocked, "permission blast: recursive " + c.name + " of '" + f.value + "'");
    w.write(c, f, V::confirm, Content::kept);
  }
}

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
    std::string pat = lower(f.value);
    if (one_of(pat, {"init", "systemd", "1"})) w.find(c, V::blocked, "kills PID 1 (init)");
    if (pat.empty() || one_of(pat, {".", ".*", "^", "$", "*"})) w.find(c, V::blocked, "kills every process");
    for (const std::string& p : w.ctx().protected_processes) {
      std::string name = lower(p);
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
  if (one_of(verb, {"start", "stop", "restart", "reload", "try-restart", "reload-or-restart", "try-reload-or-restart",
                    "force-reload", "enable", "disable", "reenable", "mask", "unmask", "kill", "reset-failed",
                    "daemon-reload", "daemon-reexec", "edit", "set-property", "revert", "preset", "link", "condrestart",
                    "zap", "load", "unload", "bootout", "bootstrap", "kickstart", "remove", "delete", "up", "down"})) {
    w.find(c, V::confirm, "starts, stops or changes a service");
    if (one_of(verb, {"stop", "restart", "kill", "mask", "disable", "try-restart", "reload-or-restart", "force-reload",
                      "condrestart", "zap", "unload", "bootout", "down", "remove", "delete"}))
      for (const std::string& u : units)
        if (std::optional<std::string> hit = protected_in(w.ctx(), u))
          w.find(c, V::blocked, "stops a protected process (" + *hit + ")");
  }
}

void rule_systemctl(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"HMtpPosn", {"--host", "--machine", "--type", "--property", "--signal", "--output", "--lines", "--root"}});
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

// ---- git ----

bool git_exec_key(const std::string& key) {
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
  } else if (one_of(key, {"core.hookspath", "include.path", "core.fsmonitor"}) || sw(key, "includeif.")) {
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
  std::string key = lower(pair.value.substr(0, eq));
  if (!git_exec_key(key)) return;
  git_config_value(w, c, key, with_value(pair, eq == std::string::npos ? "" : pair.value.substr(eq + 1)));
}

void git_push(Walker& w, Call& c, const Args& a) {
  w.find(c, V::confirm, "pushes to a remote");
  bool force = false, del = false, mirror = false;
  std::vector<const Field*> pos;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& v = a[i].value;
    if (sw(v, "--")) {
      std::string name = v.substr(0, v.find('='));
      force = force || long_is(name, "--force", 5) || sw(name, "--force-with-lease") || name == "--force-if-includes";
      del = del || long_is(name, "--delete", 5);
      mirror = mirror || name == "--mirror" || name == "--all" || name == "--branches";
      if (one_of(name, {"--receive-pack", "--exec"})) {
        const Field& prog = v.find('=') != std::string::npos ? with_value(a[i], v.substr(v.find('=') + 1)) : a[std::min(i + 1, a.size() - 1)];
        w.judge(c, "git push " + name, prog);
        if (v.find('=') == std::string::npos) ++i;
      }
      if (one_of(name, {"--repo", "--push-option"}) && v.find('=') == std::string::npos) ++i;
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
  if (mirror && force) w.find(c, V::blocked, "force push of every branch, protected ones included");
  if (pos.size() <= 1 && force) w.find(c, V::blocked, "force push of the current branch, which may be protected");
  for (size_t k = 1; k < pos.size(); ++k) {
    const Field& r = *pos[k];
    std::string spec = r.value;
    bool plus = sw(spec, "+");
    if (plus) spec = spec.substr(1);
    size_t colon = spec.find(':');
    std::string dst = colon == std::string::npos ? spec : spec.substr(colon + 1);
    bool deletes = del || (colon == 0);
    if (r.dynamic && (force || plus || deletes)) {
      w.find(c, V::blocked, "force push to a branch only known at run time");
    } else if ((force || plus) && (is_protected(dst) || dst == "HEAD" || dst == "@")) {
      w.find(c, V::blocked, "force push to the protected branch '" + dst + "'");
    } else if (deletes && is_protected(dst)) {
      w.find(c, V::blocked, "deletes the protected branch '" + dst + "'");
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
    std::string key = lower(pos[0]->value);
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
  return std::any_of(a.begin(), a.end(), [&](const Field& f) { return one_of(f.value.substr(0, f.value.find('=')), names); });
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
    if (one_of(name, {"--upload-pack", "--receive-pack", "--exec", "--extcmd", "--tree-filter", "--index-filter",
                      "--msg-filter", "--env-filter", "--commit-filter", "--parent-filter", "--tag-name-filter",
                      "--sendmail-cmd", "--open-files-in-pager"}) ||
        (one_of(sub, {"rebase", "difftool"}) && v == "-x") || (sub == "clone" && v == "-u")) {
      if (std::optional<Field> prog = value()) w.judge(c, "git " + sub + " " + name, *prog);
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
  if (sub == "restore" && (!has_opt(a, {"--staged", "-S"}) || has_opt(a, {"--worktree", "-W"}))) git_paths(w, c, a, false);
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
    return a.empty() || (has_opt(a, {"-a", "-r", "-v", "-vv", "--list", "-l", "--show-current", "--contains", "--merged",
                                     "--no-merged", "--all"}) &&
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
  if (sub == "branch") return has_opt(a, {"-d", "--delete"}) && !has_opt(a, {"-D", "-f", "--force", "-m", "-M", "-c", "-C"});
  if (sub == "checkout") return has_opt(a, {"-b"}) && !has_opt(a, {"-B", "-f", "--force"});
  if (sub == "switch") return has_opt(a, {"-c", "--create"}) && !has_opt(a, {"-C", "--force-create", "-f", "--force", "--discard-changes"});
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
      if (f.value.size() > 1 && f.value[0] == '-' && f.value[1] != '-' && f.value.find_first_of("xX") != std::string::npos)
        return "deletes ignored files";
  if (sub == "reflog" && one_of(first, {"expire", "delete"})) return "deletes reflog entries";
  return {};
}

void git_subcommand(Walker& w, Call& c, const std::string& sub, const Args& a) {
  static const List k_read = {"status", "log", "diff", "show", "blame", "annotate", "ls-files", "ls-tree", "rev-parse",
                              "rev-list", "describe", "shortlog", "grep", "cat-file", "show-ref", "for-each-ref",
                              "merge-base", "name-rev", "whatchanged", "count-objects", "fsck", "check-ignore",
                              "check-attr", "check-ref-format", "help", "version", "var", "verify-commit",
                              "verify-tag", "verify-pack", "cherry", "range-diff", "diff-tree", "diff-files",
                              "diff-index", "show-branch", "get-tar-commit-id", "fetch", "ls-remote", "--version",
                              "--help", "bugreport", "show-index", "column"};
  static const List k_change = {"commit", "reset", "switch", "rebase", "merge", "pull", "clean", "cherry-pick",
                                "revert", "am", "apply", "gc", "prune", "repack", "update-ref", "symbolic-ref",
                                "replace", "update-index", "read-tree", "commit-tree", "mktag", "mktree", "maintenance",
                                "sparse-checkout", "add", "lfs", "restore", "checkout", "rm", "mv", "stash", "tag",
                                "branch", "worktree", "remote", "reflog", "notes", "format-patch", "init", "clone",
                                "mergetool", "filter-branch", "submodule", "bisect", "send-email", "archive",
                                "hash-object", "fast-import", "pack-refs", "prune-packed", "difftool", "config", "push"};
  bool changes = one_of(sub, k_change);
  if (!changes && !one_of(sub, k_read)) {
    w.unknown(c, "'git " + sub + "' may be an alias defined in the configuration");
    return;
  }
  git_options(w, c, sub, a);
  if (!changes) return;
  if (sub == "push") return git_push(w, c, a);
  if (sub == "config") return git_config(w, c, a);
  git_targets(w, c, sub, a);
  if (std::string lost = git_not_undoable(sub, a); !lost.empty())
    w.find(c, V::confirm, "not undoable: " + lost + " (git " + sub + "); rollback cannot bring it back");
  else if (!git_listing(sub, a) && !git_only_adds(sub, a))
    w.find(c, V::confirm, "changes the repository (git " + sub + ")");
}

void rule_git(Walker& w, Call& c) {
  size_t i = 1;
  std::optional<std::string> cwd;
  while (i < c.argv.size()) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (v == "-C" && i + 1 < c.argv.size()) {
      const Field& d = c.argv[i + 1];
      cwd = d.dynamic ? std::string() : (cwd && !cwd->empty() && d.value[0] != '/' ? *cwd + "/" + d.value : d.value);
      i += 2;
    } else if (v == "-c" && i + 1 < c.argv.size()) {
      git_config_pair(w, c, c.argv[i + 1]);
      i += 2;
    } else if (sw(v, "--config-env=")) {
      std::string key = lower(v.substr(13, v.find('=', 13) - 13));
      if (git_exec_key(key)) w.find(c, V::blocked, "git --config-env sets " + key + " from a variable that cannot be judged");
      ++i;
    } else if (sw(v, "--exec-path=")) {
      w.find(c, V::blocked, "git --exec-path runs git programs from another folder");
      ++i;
    } else if (one_of(v, {"--git-dir", "--work-tree", "--namespace", "--super-prefix"}) && i + 1 < c.argv.size()) {
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
  git_subcommand(w, c, c.argv[i].value, slice(c.argv, i + 1));
  if (cwd) w.restore_cwd(saved);
}

// ---- archives and compression ----

void rule_tar(Walker& w, Call& c) {
  bool create = false, extract = false, absolute = false;
  std::optional<Field> file, dir;
  auto value_opt = [&](char ch, const Field& v) {
    if (ch == 'f') file = v;
    if (ch == 'C') dir = v;
    if (ch == 'I') w.judge(c, "tar --use-compress-program", v);
    if (ch == 'F') w.judge(c, "tar --info-script", v);
  };
  auto mode = [&](char ch) {
    create = create || ch == 'c' || ch == 'r' || ch == 'u' || ch == 'A';
    extract = extract || ch == 'x';
    absolute = absolute || ch == 'P';
  };
  static constexpr std::string_view k_takes = "fCTXbKNVLgHIF";
  size_t i = 1;
  if (c.argv.size() > 1 && !c.argv[1].value.empty() && c.argv[1].value[0] != '-') {  // old style: tar xzf a.tar
    std::string cluster = c.argv[1].value;
    i = 2;
    for (char ch : cluster) {
      mode(ch);
      if (k_takes.find(ch) != std::string_view::npos && i < c.argv.size()) value_opt(ch, c.argv[i++]);
    }
  }
  static const std::map<std::string_view, char> k_long = {
      {"--file", 'f'}, {"--directory", 'C'}, {"--use-compress-program", 'I'}, {"--info-script", 'F'},
      {"--new-volume-script", 'F'}, {"--to-command", 'T'}, {"--rsh-command", 'R'}, {"--checkpoint-action", 'K'},
      {"--index-file", 'W'}, {"--files-from", 'Z'}, {"--exclude-from", 'Z'}};
  for (; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (sw(v, "--")) {
      std::string name = v.substr(0, v.find('='));
      mode(name == "--create" || name == "--append" || name == "--update" ? 'c' : name == "--extract" || name == "--get" ? 'x'
           : name == "--absolute-names" ? 'P' : ' ');
      auto it = k_long.find(name);
      if (it == k_long.end()) continue;
      Field val = v.find('=') != std::string::npos ? with_value(f, v.substr(v.find('=') + 1))
                  : i + 1 < c.argv.size() ? c.argv[++i] : Field{};
      if (it->second == 'T') w.judge(c, "tar --to-command", val);
      if (it->second == 'R') w.judge(c, "tar --rsh-command", val);
      if (it->second == 'W') w.write(c, val);
      if (it->second == 'K' && sw(val.value, "exec=")) w.judge(c, "tar --checkpoint-action=exec", with_value(val, val.value.substr(5)));
      if (one_of(std::string_view(&it->second, 1), {"f", "C", "I", "F"})) value_opt(it->second, val);
    } else if (v.size() > 1 && v[0] == '-') {
      for (size_t j = 1; j < v.size(); ++j) {
        mode(v[j]);
        if (k_takes.find(v[j]) == std::string_view::npos) continue;
        if (j + 1 < v.size()) {
          value_opt(v[j], with_value(f, v.substr(j + 1)));
        } else if (i + 1 < c.argv.size()) {
          value_opt(v[j], c.argv[++i]);
        }
        break;
      }
    }
  }
  if (create && file && file->value != "-") w.write(c, *file);
  if (extract) {
    w.find(c, V::confirm, "extracts files");
    if (dir) w.write(c, *dir);
    if (absolute) w.unknown(c, "extracts absolute paths named in the archive");
  }
}

void rule_unzip(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"dPxX", {}});
  if (o.has({"-p", "-l", "-t", "-v", "-Z", "-z"})) return;
  w.find(c, V::confirm, "extracts files");
  if (const Field* d = o.value({"-d"})) w.write(c, *d);
}

void rule_zip(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"bnPtxiO", {"--unzip-command"}});
  if (const Field* cmd = o.value({"--unzip-command"})) w.judge(c, "zip --unzip-command", *cmd);
  if (!o.pos.empty()) w.write(c, c.argv[o.pos[0]]);
}

void rule_compress(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"oSbLT", {"--suffix", "--output"}});
  if (o.has({"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"})) return;
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  for (size_t i : o.pos) w.write(c, c.argv[i]);
}

void rule_patch(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"BDdFgiopruVYzR", {"--output", "--input", "--directory", "--strip", "--backup-if-mismatch"}});
  if (o.has({"--dry-run", "-C", "--check"})) return;
  w.find(c, V::confirm, "patches files");
  std::optional<std::string> saved;
  if (const Field* d = o.value({"-d", "--directory"})) saved = w.enter_cwd(d->dynamic ? "" : d->value);
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  if (!o.pos.empty()) w.write(c, c.argv[o.pos[0]]);
  if (o.value({"-d", "--directory"})) w.restore_cwd(saved);
}

// ---- other writers ----

void rule_sort(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"kotST", {"--key", "--output", "--field-separator", "--buffer-size",
                                                 "--temporary-directory", "--compress-program", "--files0-from",
                                                 "--batch-size", "--parallel", "--random-source"}});
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  if (const Field* prog = o.value({"--compress-program"})) w.judge(c, "sort --compress-program", *prog);
}

void rule_uniq(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"fsw", {"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"}});
  if (o.pos.size() >= 2) w.write(c, c.argv[o.pos[1]]);
}

void rule_split(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"abCln", {"--bytes", "--lines", "--line-bytes", "--number", "--suffix-length",
                                                 "--additional-suffix", "--filter"}});
  if (const Field* filter = o.value({"--filter"})) w.judge(c, "split --filter", *filter);
  w.write(c, o.pos.size() >= 2 ? c.argv[o.pos[1]] : literal_field("x"));
}

void rule_editor(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    std::optional<Field> cmd;
    if (one_of(v, {"-c", "--cmd"}) && i + 1 < c.argv.size()) {
      cmd = c.argv[++i];
    } else if (sw(v, "+") && v.size() > 1) {
      cmd = with_value(c.argv[i], v.substr(1));
    } else if (one_of(v, {"-S", "-s", "-u", "-x"})) {
      w.unknown(c, "runs editor commands from a file");
      ++i;
    }
    if (cmd) {
      // `:!cmd` runs a shell command; other editor commands may too
      std::string text = trim(cmd->value);
      while (!text.empty() && text[0] == ':') text = text.substr(1);
      if (sw(text, "!")) {
        w.judge(c, c.name + " :!", with_value(*cmd, text.substr(1)));
      } else if (!text.empty() && !std::all_of(text.begin(), text.end(), is_digit)) {
        w.unknown(c, "runs editor commands");
      }
    } else if (!sw(v, "-") && !sw(v, "+")) {
      w.write(c, c.argv[i]);
    }
  }
  w.find(c, V::confirm, "edits files");
}

struct Formatter {
  std::string_view name;
  List writes_with;   // writes only with one of these
  List read_only;     // never writes with one of these
  size_t skip = 0;    // positionals that are not files (yq's expression)
};

const Formatter* formatter(std::string_view name) {
  static const Formatter k_fmt[] = {
      {"clang-format", {"-i"}, {}},  {"gofmt", {"-w"}, {}}, {"rustfmt", {}, {"--check"}},
      {"black", {}, {"--check", "--diff"}}, {"prettier", {"--write", "-w"}, {}}, {"eslint", {"--fix"}, {}},
      {"isort", {}, {"--check-only", "-c", "--check", "--diff"}}, {"autopep8", {"-i", "--in-place"}, {}},
      {"yapf", {"-i", "--in-place"}, {}}, {"shfmt", {"-w", "--write"}, {}}, {"stylua", {}, {"--check"}},
      {"dos2unix", {}, {}}, {"unix2dos", {}, {}}, {"biome", {"--write", "--apply", "--fix"}, {}},
      {"clang-tidy", {"--fix", "-fix", "--fix-errors", "-fix-errors"}, {}}, {"standard", {"--fix"}, {}},
      {"yq", {"-i", "--inplace"}, {}, 1}, {"sponge", {}, {}}, {"ruff", {"--fix", "format"}, {"--check", "--diff"}},
  };
  for (const Formatter& f : k_fmt)
    if (f.name == name) return &f;
  return nullptr;
}

void rule_formatter(Walker& w, Call& c, const Formatter& f) {
  bool writes = f.writes_with.size() == 0;
  std::vector<size_t> files;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    std::string name = c.argv[i].value.substr(0, c.argv[i].value.find('='));
    if (one_of(name, f.writes_with)) writes = true;
    if (one_of(name, f.read_only)) return;
    if (!sw(c.argv[i].value, "-")) files.push_back(i);
  }
  if (!writes) return;
  w.find(c, V::confirm, "rewrites files in place");
  for (size_t k = f.skip; k < files.size(); ++k) w.write(c, c.argv[files[k]]);
}

void rule_compiler(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "-o" && i + 1 < c.argv.size()) {
      w.write(c, c.argv[++i], V::ask);
    } else if (sw(v, "-o") && v.size() > 2 && c.name != "go") {
      w.write(c, with_value(c.argv[i], v.substr(2)), V::ask);
    } else if (sw(v, "-wrapper") || sw(v, "-fplugin=") || sw(v, "-specs=")) {
      w.unknown(c, "loads or runs another program (" + v + ")");
    }
  }
}

void rule_make(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"CfIjloW", {"--directory", "--file", "--makefile", "--include-dir", "--jobs",
                                                   "--load-average", "--old-file", "--what-if", "--eval"}});
  if (o.has({"--eval"})) w.unknown(c, "make --eval adds rules that cannot be judged");
  for (const Field* f : o.values({"-f", "--file", "--makefile"}))
    if (f->value == "-" || f->value == "/dev/stdin" || f->procsub || f->dynamic)
      w.unknown(c, "make reads rules that cannot be judged");
  for (size_t i : o.pos)
    if (one_of(c.argv[i].value, {"install", "uninstall"})) w.find(c, V::confirm, "installs files (" + c.argv[i].value + ")");
}

void rule_cmake(Walker& w, Call& c) {
  if (c.argv.size() > 2 && c.argv[1].value == "-E") {
    std::string tool = c.argv[2].value;
    Args rest = slice(c.argv, 3);
    Args inner;
    if (one_of(tool, {"rm", "remove", "remove_directory", "rmdir"})) {
      inner.push_back(literal_field("rm"));
      if (tool == "remove_directory" || tool == "rmdir") inner.push_back(literal_field("-r"));
    } else if (one_of(tool, {"env", "tar", "chdir", "copy", "copy_directory", "copy_if_different", "make_directory",
                             "touch", "touch_nocreate", "rename", "create_symlink", "create_hardlink", "time"})) {
      static const std::map<std::string_view, std::string_view> k_as = {
          {"copy", "cp"}, {"copy_directory", "cp"}, {"copy_if_different", "cp"}, {"make_directory", "mkdir"},
          {"touch_nocreate", "touch"}, {"rename", "mv"}, {"create_symlink", "ln"}, {"create_hardlink", "ln"},
          {"chdir", "env"}};
      auto it = k_as.find(tool);
      inner.push_back(literal_field(std::string(it == k_as.end() ? std::string_view(tool) : it->second)));
      if (tool == "chdir" && !rest.empty()) {
        inner.push_back(literal_field("-C"));
      }
    } else {
      return;  // cat, echo, compare_files, sha256sum, ...
    }
    inner.insert(inner.end(), rest.begin(), rest.end());
    c.info = w.run(c, std::move(inner), c.in);
    return;
  }
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "--install" || (v == "--target" && i + 1 < c.argv.size() && c.argv[i + 1].value == "install"))
      w.find(c, V::confirm, "installs files");
  }
}

// ---- package managers ----

struct Manager {
  std::string_view name;
  List changes;   // verbs that install, remove or publish
  List runs;      // verbs that run another command: `poetry run CMD`
};

const Manager* manager(std::string_view name) {
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
      {"helm", {"install", "uninstall", "upgrade", "rollback", "delete", "repo", "push", "plugin"}, {}},
      {"docker", {"run", "rm", "rmi", "stop", "kill", "restart", "start", "exec", "build", "push", "pull", "compose", "create", "system", "volume", "network", "container", "image", "tag", "commit", "cp", "login", "buildx", "prune", "swarm", "service", "stack", "update"}, {}},
      {"podman", {"run", "rm", "rmi", "stop", "kill", "restart", "start", "exec", "build", "push", "pull", "compose", "create", "system", "volume", "network", "container", "image", "tag", "commit", "cp", "login", "pod"}, {}},
      {"kubectl", {"apply", "delete", "create", "edit", "patch", "scale", "rollout", "exec", "run", "replace", "set", "label", "annotate", "drain", "cordon", "uncordon", "taint", "expose", "cp", "autoscale"}, {}},
      {"terraform", {"apply", "destroy", "import", "state", "taint", "untaint", "force-unlock", "workspace", "init"}, {}},
      {"gh", {"pr", "issue", "release", "repo", "gist", "secret", "variable", "workflow", "run", "label", "api", "ssh-key", "gpg-key", "auth", "codespace"}, {}},
  };
  for (const Manager& m : k_managers)
    if (m.name == name) return &m;
  return nullptr;
}

void rule_pkg(Walker& w, Call& c, std::string_view manager_name, size_t from) {
  const Manager* m = manager(manager_name);
  if (!m) return;
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
      if (one_of(manager_name, {"apt", "apt-get", "dnf", "yum", "npm", "cargo", "pip", "go", "gem", "brew", "docker", "kubectl", "gh", "uv", "poetry"}))
        break;
    }
  }
  std::string v = verb ? c.argv[*verb].value : "";
  if (manager_name == "uv" && verb && (v == "pip" || v == "tool")) return rule_pkg(w, c, v == "pip" ? "pip" : "pipx", *verb + 1);
  if (verb && one_of(v, m->runs)) {
    Opts o = parse_opts(c.argv, *verb + 1,
                        Spec{"npw", {"--with", "--python", "--package", "--name", "--prefix", "--env-file", "--directory", "--project", "--cwd"}, true});
    unwrap_at(w, c, o.rest);
    return;
  }
  bool yarn_bare = manager_name == "yarn" && !verb;
  bool pacman_like = false;
  if (manager_name == "dpkg" || manager_name == "rpm" || manager_name == "nix-env") {
    pacman_like = std::any_of(c.argv.begin() + 1, c.argv.end(), [&](const Field& f) {
      return one_of(f.value, m->changes) || (f.value.size() > 1 && f.value[0] == '-' && f.value[1] != '-' &&
                                             f.value.find_first_of(manager_name == "rpm" ? "iUeF" : "") != std::string::npos);
    });
  }
  if (!(verb && one_of(v, m->changes)) && !yarn_bare && !pacman_like) return;
  // `go mod graph`, `docker image ls`, `gh pr list`: listing forms read
  if (verb && *verb + 1 < c.argv.size()) {
    std::string_view next = c.argv[*verb + 1].value;
    if (one_of(next, {"list", "ls", "view", "status", "show", "graph", "why", "verify", "inspect", "diff", "checks", "--list",
                      "-l", "ps", "logs", "config", "images", "top", "port", "version", "history"}))
      return;
  }
  if (manager_name == "gh" && v == "auth" && c.argv.size() > *verb + 1 && c.argv[*verb + 1].value == "token") {
    w.find(c, V::blocked, "prints a credential (gh auth token)");
    return;
  }
  if (manager_name == "cargo" && v == "fmt") return;
  w.find(c, V::confirm, "installs, removes, publishes or changes packages or services (" + std::string(manager_name) + " " + v + ")");
}

void rule_pacman(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v.size() < 2 || v[0] != '-' || v[1] == '-') continue;
    char op = v[1];
    bool query = op == 'Q' || op == 'F' || op == 'T' ||
                 (op == 'S' && v.find_first_of("silgp", 2) != std::string::npos && v.find_first_of("uy", 2) == std::string::npos);
    if ((op == 'S' || op == 'R' || op == 'U' || op == 'D') && !query) w.find(c, V::confirm, "installs or removes packages");
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
  rule_pkg(w, c, "cargo", 1);
}

void rule_go(Walker& w, Call& c) {
  if (c.argv.size() > 1 && c.argv[1].value == "generate") w.unknown(c, "go generate runs commands written in the sources");
  if (c.argv.size() > 1 && c.argv[1].value == "build") rule_compiler(w, c);
  if (c.argv.size() > 1 && c.argv[1].value == "run") return;
  rule_pkg(w, c, "go", 1);
}

// ---- network ----

// The file a download without an explicit name is saved as: the last part
// of the URL's path (wget URL, curl -O URL).
Field url_file(const Field& url, const Field* dir) {
  std::string path = url.value.substr(0, url.value.find_first_of("?#"));
  std::string name = path_basename(path);
  if (dir) name = dir->value + "/" + name;
  return with_value(url, name);
}

void rule_curl(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"AbcCdDeEFHKmoPQrtTuUwxXYyz",
                           {"--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "--form",
                            "--form-string", "--upload-file", "--output", "--output-dir", "--request", "--header", "--user",
                            "--config", "--cookie", "--cookie-jar", "--dump-header", "--trace", "--trace-ascii", "--url",
                            "--proxy", "--referer", "--user-agent", "--max-time", "--connect-timeout", "--retry", "--cacert",
                            "--cert", "--key", "--resolve", "--libcurl", "--write-out", "--stderr", "--netrc-file", "--range",
                            "--continue-at", "--interface", "--local-port", "--limit-rate", "--max-filesize"}});
  if (o.has({"-d", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json", "-F", "--form",
             "--form-string", "-T", "--upload-file"}))
    w.find(c, V::confirm, "sends data over the network");
  if (const Field* m = o.value({"-X", "--request"}))
    if (one_of(lower(m->value), {"post", "put", "patch", "delete"})) w.find(c, V::confirm, "sends a " + m->value + " request");
  if (o.has({"-K", "--config"})) w.unknown(c, "reads curl options from a file");
  for (const Field* f : o.values({"-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl", "--stderr"}))
    if (f->value != "-") w.write(c, *f);
  if (const Field* d = o.value({"--output-dir"})) w.write(c, *d);
  std::optional<Field> saved;
  for (const Field* out : o.values({"-o", "--output"})) {
    if (out->value == "-") continue;
    w.write(c, *out);
    saved = *out;
  }
  if (o.has({"-O", "--remote-name", "--remote-name-all", "-J"})) {
    w.find(c, V::confirm, "saves a download into a file");
    if (!o.pos.empty()) saved = url_file(c.argv[o.pos.back()], o.value({"--output-dir"}));
  }
  w.download(c, saved);
}

void rule_wget(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"aADeiIlOoPQRtTUwXB",
                           {"--output-document", "--output-file", "--append-output", "--directory-prefix", "--input-file",
                            "--post-data", "--post-file", "--body-data", "--body-file", "--method", "--execute", "--header",
                            "--user-agent", "--tries", "--timeout", "--user", "--password", "--load-cookies",
                            "--save-cookies"}});
  if (o.has({"--post-data", "--post-file", "--body-data", "--body-file"}))
    w.find(c, V::confirm, "sends data over the network");
  if (const Field* m = o.value({"--method"}))
    if (one_of(lower(m->value), {"post", "put", "patch", "delete"})) w.find(c, V::confirm, "sends a " + m->value + " request");
  if (o.has({"-e", "--execute"})) w.unknown(c, "wget -e runs configuration commands");
  for (const Field* f : o.values({"-o", "--output-file", "-a", "--append-output", "--save-cookies"})) w.write(c, *f);
  std::optional<Field> saved;
  const Field* doc = o.value({"-O", "--output-document"});
  if (doc && doc->value != "-") {
    w.write(c, *doc);
    saved = *doc;
  } else if (!doc) {
    w.find(c, V::confirm, "saves a download into a file");
    const Field* dir = o.value({"-P", "--directory-prefix"});
    if (dir) w.write(c, *dir);
    if (!o.pos.empty()) saved = url_file(c.argv[o.pos.back()], dir);
  }
  w.download(c, saved);
}

void rule_http_client(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"POST", "PUT", "PATCH", "DELETE", "--form", "-f"}) || v.find(":=") != std::string::npos ||
        (v.find('=') != std::string::npos && !sw(v, "-") && v.find("://") == std::string::npos) || v.find('@') == 0)
      w.find(c, V::confirm, "sends data over the network");
  }
  w.download(c, std::nullopt);
}

bool remote_path(const Field& f) {
  size_t colon = f.value.find(':');
  size_t slash = f.value.find('/');
  return sw(f.value, "rsync://") || (colon != std::string::npos && colon > 0 && (slash == std::string::npos || colon < slash));
}

void ssh_options(Walker& w, Call& c, const Opts& o) {
  for (const Field* opt : o.values({"-o"})) {
    std::string key = lower(opt->value.substr(0, opt->value.find_first_of("= ")));
    size_t at = opt->value.find_first_of("= ");
    if (one_of(key, {"proxycommand", "localcommand", "knownhostscommand", "remotecommand", "match"}) && at != std::string::npos)
      w.judge(c, "ssh -o " + key, with_value(*opt, trim(opt->value.substr(at + 1))));
    if (one_of(key, {"proxyjump", "include"})) w.unknown(c, "ssh -o " + key + " cannot be judged");
  }
  if (const Field* prog = o.value({"-S"}))
    if (c.name != "ssh") w.judge(c, c.name + " -S", *prog);
}

void rule_ssh(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"BbcDEeFIiJLlmOopQRSWw", {}, true});
  ssh_options(w, c, o);
  w.find(c, V::confirm, "runs commands on another machine");
  w.download(c, std::nullopt);
  if (o.rest + 1 < c.argv.size()) {
    w.run_shell(c, joined(c.argv, o.rest + 1), {});
    c.wrapper = false;
  }
}

void rule_scp(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"cFiJloPSDX", {}});
  ssh_options(w, c, o);
  bool remote = false;
  for (size_t i : o.pos) remote = remote || remote_path(c.argv[i]);
  if (remote || c.name == "sftp") w.find(c, V::confirm, "copies files over the network");
  if (o.has({"-b"}) && c.name == "sftp") w.unknown(c, "sftp runs a batch file");
  if (c.name == "scp" && o.pos.size() >= 2 && !remote_path(c.argv[o.pos.back()])) w.write(c, c.argv[o.pos.back()]);
}

void rule_rsync(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"eBfTM",
                           {"--rsh", "--rsync-path", "--filter", "--exclude", "--exclude-from", "--include", "--include-from",
                            "--files-from", "--temp-dir", "--backup-dir", "--suffix", "--log-file", "--password-file",
                            "--out-format", "--chmod", "--chown", "--compare-dest", "--copy-dest", "--link-dest"}});
  if (const Field* rsh = o.value({"-e", "--rsh"})) w.judge(c, "rsync -e", *rsh);
  if (const Field* path = o.value({"--rsync-path"})) w.judge(c, "rsync --rsync-path", *path);
  bool remote = false;
  for (size_t i : o.pos) remote = remote || remote_path(c.argv[i]);
  if (remote) w.find(c, V::confirm, "copies files over the network");
  if (o.pos.size() < 2) return;
  const Field& dest = c.argv[o.pos.back()];
  if (remote_path(dest)) return;
  w.write(c, dest);
  bool deletes = std::any_of(o.opts.begin(), o.opts.end(), [](const Opt& x) { return sw(x.name, "--delete") || x.name == "--remove-source-files"; });
  if (deletes && !w.disposable(dest))
    w.find(c, V::blocked, "recursive deletion (rsync --delete) outside a build or temp folder ('" + dest.value + "')");
}

void rule_netcat(Walker& w, Call& c) {
  w.find(c, V::confirm, "opens a network connection that can send data");
  w.download(c, std::nullopt);
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    std::optional<Field> prog;
    if (one_of(f.value, {"-e", "-c", "--exec", "--sh-exec", "--lua-exec"}) && i + 1 < c.argv.size()) prog = c.argv[++i];
    std::string low = lower(f.value);
    for (std::string_view kind : {"exec:", "system:"}) {
      size_t at = low.find(kind);
      if (at != std::string::npos) {
        std::string cmd = f.value.substr(at + kind.size());
        prog = with_value(f, cmd.substr(0, cmd.find(',')));
      }
    }
    if (!prog) continue;
    std::string program = basename_of(trim(prog->value).substr(0, trim(prog->value).find(' ')));
    if (is_shell(program) || interpreter(program)) {
      w.find(c, V::blocked, "connects a shell to the network");
    } else {
      w.judge(c, c.name + " " + f.value, *prog);
    }
  }
}

void rule_mail(Walker& w, Call& c) { w.find(c, V::confirm, "sends mail"); }

// ssh-keygen -f FILE writes a key pair there, unless it only reads one.
void rule_ssh_keygen(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"abCEfFIJjKmNnOPrRsSttVwYZz", {}});
  if (o.has({"-l", "-y", "-F", "-R", "-B", "-Q", "-H"})) return;
  if (const Field* f = o.value({"-f"})) {
    w.write(c, *f);
    Field pub = *f;
    pub.value += ".pub";
    w.write(c, pub);
  } else {
    w.write(c, literal_field("~/.ssh/id_" + std::string(o.value({"-t"}) ? o.value({"-t"})->value : "ed25519")));
  }
}

void rule_man(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"PMLSmp", {"--pager", "--manpath", "--locale", "--sections", "--systems", "--preprocessor"}});
  if (const Field* pager = o.value({"-P", "--pager"})) w.judge(c, "man --pager", *pager);
}

void rule_at(Walker& w, Call& c) {
  w.find(c, V::confirm, "detached execution: schedules a command (" + c.name + "), which runs later outside the sandbox");
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
  w.find(c, V::confirm, "detached execution: installs or removes scheduled commands (crontab), which run later outside the sandbox");
}

void rule_multiplexer(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"SLc", {}});
  if (!o.pos.empty() && one_of(c.argv[o.pos[0]].value, {"ls", "list-sessions", "list-windows", "has-session", "-ls"})) return;
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

void rule_openssl(Walker& w, Call& c) {
  if (c.argv.size() < 2) return;
  std::string_view sub = c.argv[1].value;
  if (sub == "s_client") w.download(c, std::nullopt);
  bool decode = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "-d"; });
  if ((sub == "base64" || sub == "enc") && decode) {
    bool any_file = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "-in"; });
    if (!any_file && c.in.text) {
      if (std::optional<std::string> out = base64_decode(*c.in.text)) {
        c.info.output = out;
        c.info.output_computed = true;
      }
    }
  }
  for (size_t i = 1; i + 1 < c.argv.size(); ++i)
    if (c.argv[i].value == "-out") w.write(c, c.argv[i + 1]);
}

// ---- the table ----

using RuleFn = void (*)(Walker&, Call&);

const std::map<std::string_view, RuleFn>& rules() {
  static const std::map<std::string_view, RuleFn> k_rules = {
      {"sudo", rule_sudo}, {"sudoedit", rule_sudo}, {"doas", rule_doas}, {"env", rule_env}, {"time", rule_time},
      {"command", rule_command}, {"which", rule_which}, {"type", rule_which}, {"whereis", rule_which}, {"strace", rule_strace}, {"ltrace", rule_strace}, {"flock", rule_flock},
      {"watch", rule_watch}, {"script", rule_script}, {"su", rule_su}, {"runuser", rule_su}, {"sg", rule_sg},
      {"xargs", rule_xargs}, {"parallel", rule_parallel}, {"sem", rule_parallel}, {"npx", rule_npx}, {"pnpx", rule_npx}, {"bunx", rule_npx},
      {"eval", rule_eval}, {"source", rule_source}, {".", rule_source}, {"alias", rule_alias}, {"trap", rule_trap},
      {"export", rule_declare}, {"declare", rule_declare}, {"typeset", rule_declare}, {"local", rule_declare},
      {"readonly", rule_declare}, {"unset", rule_unset}, {"read", rule_read}, {"mapfile", rule_read},
      {"readarray", rule_read}, {"cd", rule_cd}, {"pushd", rule_cd}, {"popd", rule_cd}, {"hash", rule_hash},
      {"enable", rule_enable},
      {"echo", rule_echo}, {"printf", rule_printf}, {"base64", rule_base64}, {"base32", rule_base64},
      {"basenc", rule_base64}, {"xxd", rule_xxd}, {"rev", rule_rev}, {"cat", rule_cat}, {"tee", rule_tee},
      {"awk", rule_awk}, {"gawk", rule_awk}, {"mawk", rule_awk}, {"nawk", rule_awk}, {"sed", rule_sed},
      {"gsed", rule_sed},
      {"rm", rule_rm}, {"shred", rule_shred}, {"wipe", rule_shred}, {"srm", rule_shred}, {"find", rule_find},
      {"cp", rule_copy}, {"mv", rule_copy}, {"ln", rule_copy}, {"install", rule_copy},
      {"chmod", rule_chmod}, {"chown", rule_chmod}, {"chgrp", rule_chmod}, {"chattr", rule_chmod},
      {"setfacl", [](Walker& w, Call& c) { rule_write_positionals(w, c, Spec{"mMxX", {"--modify", "--remove", "--set", "--modify-file", "--set-file", "--remove-file"}}); }},
      {"mkfs", rule_disk_format}, {"mke2fs", rule_disk_format}, {"mkswap", rule_disk_format},
      {"mkdosfs", rule_disk_format}, {"mkntfs", rule_disk_format}, {"blkdiscard", rule_disk_format},
      {"lvremove", rule_disk_format}, {"vgremove", rule_disk_format}, {"pvremove", rule_disk_format},
      {"fdisk", rule_partition}, {"sfdisk", rule_partition}, {"cfdisk", rule_partition}, {"parted", rule_partition},
      {"gdisk", rule_partition}, {"sgdisk", rule_partition}, {"wipefs", rule_partition}, {"dd", rule_dd},
      {"shutdown", rule_power}, {"reboot", rule_power}, {"poweroff", rule_power}, {"halt", rule_power},
      {"init", rule_init}, {"telinit", rule_init}, {"systemctl", rule_systemctl}, {"service", rule_service},
      {"loginctl", rule_loginctl}, {"launchctl", rule_service_tool}, {"rc-service", rule_service},
      {"supervisorctl", rule_service_tool}, {"pm2", rule_service_tool}, {"sv", rule_service_tool},
      {"kill", rule_kill}, {"pkill", rule_pkill}, {"killall", rule_pkill}, {"killall5", rule_pkill},
      {"fuser", rule_fuser},
      {"git", rule_git}, {"tar", rule_tar}, {"gtar", rule_tar}, {"bsdtar", rule_tar}, {"unzip", rule_unzip},
      {"zip", rule_zip}, {"patch", rule_patch}, {"sort", rule_sort}, {"uniq", rule_uniq}, {"split", rule_split},
      {"make", rule_make}, {"gmake", rule_make}, {"cmake", rule_cmake}, {"pacman", rule_pacman},
      {"yay", rule_pacman}, {"paru", rule_pacman}, {"cargo", rule_cargo}, {"go", rule_go},
      {"curl", rule_curl}, {"wget", rule_wget}, {"http", rule_http_client}, {"https", rule_http_client},
      {"xh", rule_http_client}, {"aria2c", rule_http_client}, {"axel", rule_http_client}, {"fetch", rule_http_client},
      {"lwp-request", rule_http_client}, {"GET", rule_http_client}, {"POST", rule_http_client},
      {"ssh", rule_ssh}, {"scp", rule_scp}, {"sftp", rule_scp}, {"rsync", rule_rsync},
      {"nc", rule_netcat}, {"ncat", rule_netcat}, {"netcat", rule_netcat}, {"socat", rule_netcat},
      {"telnet", rule_netcat}, {"ftp", rule_netcat}, {"tftp", rule_netcat}, {"lftp", rule_netcat},
      {"mail", rule_mail}, {"man", rule_man}, {"ssh-keygen", rule_ssh_keygen}, {"mailx", rule_mail}, {"sendmail", rule_mail}, {"mutt", rule_mail}, {"at", rule_at},
      {"batch", rule_at}, {"crontab", rule_crontab}, {"tmux", rule_multiplexer}, {"screen", rule_multiplexer}, {"kaicoder", rule_kaicoder},
      {"openssl", rule_openssl},
  };
  return k_rules;
}

// `python3.11` -> `python`, `gcc-12` -> `gcc`, `pip3` -> `pip`
std::string family(std::string_view name) {
  std::string f(name);
  while (!f.empty() && (is_digit(f.back()) || f.back() == '.')) f.pop_back();
  while (!f.empty() && (f.back() == '-' || f.back() == '_')) f.pop_back();
  return f.empty() ? std::string(name) : f;
}

void write_rule(Walker& w, Call& c) {
  static const std::map<std::string_view, Spec> k_writers = {
      {"touch", Spec{"dtr", {"--date", "--reference", "--time"}}},
      {"truncate", Spec{"sr", {"--size", "--reference"}}},
      {"mkdir", Spec{"m", {"--mode", "--context"}}},
      {"rmdir", Spec{}},
      {"unlink", Spec{}},
      {"mkfifo", Spec{"m", {"--mode"}}},
      {"mknod", Spec{"m", {"--mode"}}},
  };
  auto it = k_writers.find(c.name);
  if (it != k_writers.end()) rule_write_positionals(w, c, it->second);
}

}  // namespace

bool is_shell(std::string_view name) {
  return one_of(name, {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh", "tcsh",
                       "oksh", "loksh", "pdksh", "ksh93", "bash5", "busybox-sh"});
}

bool prints_only(std::string_view name) {
  return one_of(name, {"echo", "printf", "true", "false", ":", "test", "[", "exit", "return", "shift", "sleep", "wait",
                       "set", "shopt", "type", "which", "hash", "ulimit", "umask", "seq", "expr", "basename", "dirname",
                       "date", "let", "break", "continue", "getopts", "pwd", "whoami", "id", "uname", "nproc", "kill",
                       "pkill", "killall", "cd", "pushd", "popd", "export", "declare", "typeset", "local", "readonly",
                       "unset", "read", "mapfile", "readarray", "alias", "trap", "eval", "source", ".", "printenv",
                       "logger", "tput", "clear", "notify-send"}) ||
         is_shell(name);
}

bool names_without_reading(std::string_view name) {
  return one_of(name, {"ls", "ll", "la", "dir", "exa", "eza", "stat", "test", "[", "file", "du", "touch", "rm", "unlink",
                       "rmdir", "shred", "wipe", "srm", "chmod", "chown", "chgrp", "chattr", "mkdir", "realpath", "readlink",
                       "basename", "dirname", "echo", "printf", "find", "fd", "ssh", "git", "which", "type", "command",
                       "cd", "pushd", "mv", "lsattr", "getfacl", "namei"});
}

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == path.size()) return std::string(path);
  return std::string(path.substr(slash + 1));
}

// A command that only describes itself: `--help` (GNU tools and git act on
// it before anything else and change nothing) and the dry runs of the
// commands that honour one. Only static words count.
bool only_describes(const Call& c) {
  const std::string& n = c.name;
  const Args& a = c.argv;
  for (const Field& f : a)
    if (f.dynamic || f.synthetic) return false;
  auto has = [&](List names, size_t from) {
    for (size_t i = from; i < a.size(); ++i)
      if (one_of(a[i].value, names) || (a[i].value.rfind("--dry-run=", 0) == 0 && one_of("--dry-run", names))) return true;
    return false;
  };
  // -n inside a cluster of short flags (`rsync -avn`, `git clean -fdn`)
  auto short_n = [&](size_t from) {
    for (size_t i = from; i < a.size(); ++i) {
      const std::string& v = a[i].value;
      if (v.size() > 1 && v[0] == '-' && v[1] != '-' && v.find('n') != std::string::npos) return true;
    }
    return false;
  };
  if (one_of(n, {"rm", "rmdir", "shred", "dd", "chmod", "chown", "chgrp", "mv", "cp", "truncate", "sed", "ln"}))
    return has({"--help", "--version"}, 1);
  if (n == "git") {
    if (a.size() == 2 && one_of(a[1].value, {"--help", "--version", "help"})) return true;
    if (a.size() >= 3 && (a[2].value == "--help" || a[1].value == "help")) return true;
    if (a.size() >= 2 && a[1].value == "push") return has({"--dry-run", "-n"}, 2);
    if (a.size() >= 2 && a[1].value == "clean") return has({"--dry-run"}, 2) || short_n(2);
    return false;
  }
  if (n == "rsync") return has({"--dry-run", "--help"}, 1) || short_n(1);
  if (n == "make") return has({"--dry-run", "--just-print", "--recon", "-n", "--help"}, 1);
  if (n == "kubectl") return has({"--dry-run", "--help"}, 1);
  return false;
}

void apply_rule(Walker& w, Call& c) {
  const std::string& n = c.name;
  if (only_describes(c)) return;
  if (const auto& table = rules(); table.count(n) > 0) return table.at(n)(w, c);
  if (const WrapperSpec* s = wrapper_spec(n)) return rule_wrapper(w, c, *s);
  if (is_shell(n)) return rule_shell(w, c);
  if (sw(n, "mkfs")) return rule_disk_format(w, c);
  if (sw(c.argv[0].value, "/etc/init.d/") && c.argv.size() > 1) {
    service_verb(w, c, c.argv[1].value, {n});
    return;
  }
  std::string fam = family(n);
  // bun and deno are package managers and runners as well as interpreters
  if ((fam == "bun" || fam == "deno") && c.argv.size() > 1 && !sw(c.argv[1].value, "-")) {
    if (fam == "deno" && c.argv[1].value == "eval") {
      w.opaque(c, joined(c.argv, 2).value);
      return;
    }
    return rule_pkg(w, c, fam, 1);
  }
  if (const Interpreter* s = interpreter(fam)) return rule_interpreter(w, c, *s);
  if (const Interpreter* s = interpreter(n)) return rule_interpreter(w, c, *s);
  if (const Formatter* f = formatter(fam)) return rule_formatter(w, c, *f);
  if (one_of(fam, {"gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "ld.lld", "ld.gold", "rustc", "tcc", "javac"}))
    return rule_compiler(w, c);
  if (one_of(fam, {"vi", "vim", "nvim", "nano", "emacs", "pico", "joe", "micro", "ed", "ex", "kak", "hx", "helix"}))
    return rule_editor(w, c);
  if (one_of(fam, {"gzip", "gunzip", "bzip", "bunzip", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz",
                   "unlz", "compress", "uncompress", "pigz", "unpigz", "brotli", "lzip"}))
    return rule_compress(w, c);
  if (one_of(fam, {"ninja", "samu"})) {
    for (size_t i = 1; i < c.argv.size(); ++i)
      if (c.argv[i].value == "install") w.find(c, V::confirm, "installs files");
    return;
  }
  if (fam == "ruff") {
    bool format = c.argv.size() > 1 && c.argv[1].value == "format";
    bool fix = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "--fix"; });
    bool check = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return one_of(f.value, {"--check", "--diff"}); });
    if ((format && !check) || fix) w.find(c, V::confirm, "rewrites files in place (ruff)");
    return;
  }
  if (manager(fam)) return rule_pkg(w, c, fam, 1);
  write_rule(w, c);
}

}  // namespace kai::shell

namespace kai {
namespace {

// Characters that make what the approver sees differ from what runs
// (lib/util/text.hpp lists them): control characters other than tab and
// newline (a CR too, even before a newline), bidi controls, invisible
// characters, line separators, invalid UTF-8.
std::optional<std::string> disguise(std::string_view s) {
  std::optional<HiddenChar> h = find_hidden(s, Allow::script);
  if (!h) return std::nullopt;
  if (h->invalid) return "invalid UTF-8 at byte " + std::to_string(h->at);
  return std::string(h->kind) + " (" + code_point_name(h->cp) + ") at byte " + std::to_string(h->at);
}

Classification disguised(const std::string& what) {
  Classification out;
  out.verdict = RunVerdict::blocked;
  out.understood = false;
  out.reasons.push_back("blocked: contains a " + what + ", which can make what the approver sees differ from what runs");
  return out;
}

}  // namespace

Classification classify_shell(std::string_view script, const ShellContext& ctx) {
  if (std::optional<std::string> d = disguise(script)) return disguised(*d);
  Classification out;
  shell::Walker w(ctx, out, 0);
  w.walk(shell::parse(script));
  return out;
}

Classification classify_argv(const std::vector<std::string>& argv, const ShellContext& ctx) {
  Classification out;
  if (argv.empty()) {
    out.understood = false;
    out.reasons.push_back("not understood: empty command: ");
    return out;
  }
  for (const std::string& a : argv)
    if (std::optional<std::string> d = disguise(a)) return disguised(*d);
  shell::Walker w(ctx, out, 0);
  shell::Call c;
  for (const std::string& a : argv) {
    shell::Field f;
    f.value = a;
    f.raw = quote_argv({a});
    c.argv.push_back(std::move(f));
  }
  c.text = quote_argv(argv);
  w.classify(c);
  return out;
}

}  // namespace kai
