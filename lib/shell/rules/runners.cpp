// Runners: package runners (npx, npm exec, pnpm dlx, yarn dlx, bunx, pipx
// run, uvx, deno run npm:) run what they name, judged as the command it is;
// job runners (parallel, sem, rush, concurrently), file watchers and the
// environment wrappers of the JavaScript world (cross-env, shx, dotenv) run
// what they are given.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

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
    {"del-cli", "del"},
    {"trash-cli", "trash"},
    {"rimraf", "rimraf"},
    {"fkill-cli", "fkill"},
    {"kill-port", "kill-port"},
    {"cross-env", "cross-env"},
    {"shx", "shx"},
    {"dotenv-cli", "dotenv"},
    {"env-cmd", "env-cmd"},
    {"concurrently", "concurrently"},
    {"npm-run-all", "npm-run-all"},
    {"npm-run-all2", "npm-run-all"},
    {"empty-trash-cli", "empty-trash"},
    {"rm-rf", "rimraf"},
    {"premove", "rimraf"},
    {"del", "del"},
    {"trash", "trash"},
    {"kill-port-process", "kill-port"},
    {"shelljs", "shx"},
    {"cross-env-shell", "cross-env-shell"},
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
  Eco eco = n == "pnpm" || n == "pnpx"         ? Eco::pnpm
            : n == "yarn"                      ? Eco::yarn
            : n == "bun" || n == "bunx"        ? Eco::bun
            : n == "deno"                      ? Eco::deno
            : one_of(n, {"pipx", "uvx", "uv"}) ? Eco::python
                                               : Eco::npm;
  static const std::vector<std::string_view> k_values = {"-p",
                                                         "--package",
                                                         "-c",
                                                         "--call",
                                                         "-w",
                                                         "--workspace",
                                                         "--prefix",
                                                         "--registry",
                                                         "--cache",
                                                         "--userconfig",
                                                         "--node-options",
                                                         "--script-shell",
                                                         "--loglevel",
                                                         "--filter",
                                                         "-F",
                                                         "-C",
                                                         "--dir",
                                                         "--spec",
                                                         "--python",
                                                         "--pip-args",
                                                         "--index-url",
                                                         "-i",
                                                         "--from",
                                                         "--with",
                                                         "--with-requirements",
                                                         "--with-editable",
                                                         "--index",
                                                         "--extra-index-url",
                                                         "--default-index",
                                                         "--constraints",
                                                         "--overrides",
                                                         "--config",
                                                         "--import-map",
                                                         "--lock",
                                                         "--cert",
                                                         "--location",
                                                         "--env-file"};
  std::string_view shorts = eco == Eco::npm      ? "pcw"
                            : eco == Eco::pnpm   ? "pFC"
                            : eco == Eco::python ? "pi"
                            : eco == Eco::deno   ? "c"
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
  bool ok = std::all_of(body.begin(), body.end(),
                        [](char ch) { return is_digit(ch) || ch == '.' || ch == '/' || ch == '#' || ch == '%'; });
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
                           {"--jobs",       "--sshlogin",  "--arg-file",         "--replace",   "--delimiter",
                            "--eof",        "--max-procs", "--max-args",         "--id",        "--semaphorename",
                            "--timeout",    "--joblog",    "--results",          "--tmpdir",    "--workdir",
                            "--env",        "--basefile",  "--transferfile",     "--return",    "--block",
                            "--block-size", "--colsep",    "--max-replace-args", "--max-lines", "--load",
                            "--memfree",    "--delay",     "--retries",          "--halt",      "--sshloginfile",
                            "--tagstring",  "--header",    "--shebang-wrap"},
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
                      Spec{"jiDdvTrJIc",
                           {"--jobs", "--infile", "--records-delimiter", "--field-delimiter", "--assign", "--trim",
                            "--nrecords", "--succ-cmd-file", "--timeout", "--retries", "--retry-interval", "--eof"},
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
                      Spec{"ncpPs",
                           {"--names", "--prefix", "--prefix-colors", "--restart-tries", "--restart-after", "--success",
                            "--max-processes", "--kill-others-on-fail", "--handle-input", "--timestamp-format",
                            "--prefix-length", "--passthrough-arguments"}});
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
  Opts o =
      parse_opts(c.argv, 1,
                 Spec{"ewiEWdfpo",
                      {"--exts", "--watch", "--ignore", "--env", "--filter", "--debounce", "--delay-run", "--signal",
                       "--shell", "--project-origin", "--on-busy-update", "--workdir", "--emit-events-to"},
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
