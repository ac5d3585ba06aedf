#pragma once
// Internal to lib/shell/rules/: what the rule files share, and the rules each
// family file defines for the table (rules/table.cpp).

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/shell/chars.hpp"
#include "lib/shell/walker.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai::shell {

// ---- rules/args.cpp ----

using V = RunVerdict;

using List = std::initializer_list<std::string_view>;

inline bool sw(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

inline bool one_of(std::string_view x, List l) { return std::find(l.begin(), l.end(), x) != l.end(); }

// The tables write lists as one string: words separated by `sep`.
template <typename F>
void each_word(std::string_view list, char sep, F f) {
  size_t start = 0;
  while (start < list.size()) {
    size_t end = list.find(sep, start);
    if (end == std::string_view::npos) end = list.size();
    if (end > start) f(list.substr(start, end - start));
    start = end + 1;
  }
}
inline bool in_words(std::string_view list, std::string_view word, char sep = ' ') {
  bool hit = false;
  each_word(list, sep, [&](std::string_view w) { hit = hit || w == word; });
  return hit;
}

Field literal_field(std::string v);
Field with_value(const Field& f, std::string v);
Field joined(const Args& a, size_t from);
Args slice(const Args& a, size_t from);
std::string path_basename(std::string v);
bool split_assignment(const std::string& v, std::string& name, std::string& value);
Field runtime_arg();
Field replace_token(const Field& f, const std::string& token);
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

Opts parse_opts(const Args& a, size_t from, const Spec& spec);
// GNU long options may be abbreviated: `--recur` is `--recursive`.
bool long_is(std::string_view v, std::string_view full, size_t min);

// ---- rules/output.cpp ----

void rule_echo(Walker&, Call& c);
void rule_printf(Walker& w, Call& c);
// Decoders fed static text pass their (decoded) output down the pipe, so
// `echo cm0gLXJmIC8= | base64 -d | sh` is judged as `rm -rf /`.
void rule_base64(Walker&, Call& c);

void rule_xxd(Walker&, Call& c);
void rule_rev(Walker&, Call& c);
void rule_cat(Walker&, Call& c);
void rule_tee(Walker& w, Call& c);

// ---- rules/wrappers.cpp ----

void unwrap_at(Walker& w, Call& c, size_t start, const std::optional<std::string>& cwd = std::nullopt);
void rule_sudo(Walker& w, Call& c);
void rule_doas(Walker& w, Call& c);
void rule_env(Walker& w, Call& c);
struct WrapperSpec;
const WrapperSpec* wrapper_spec(std::string_view name);
void rule_wrapper(Walker& w, Call& c, const WrapperSpec& s);
void rule_time(Walker& w, Call& c);
void rule_command(Walker& w, Call& c);
void rule_which(Walker&, Call& c);
void rule_strace(Walker& w, Call& c);
void rule_flock(Walker& w, Call& c);
// watch joins its arguments and runs them with sh -c (unless -x).
void rule_watch(Walker& w, Call& c);

void rule_script(Walker& w, Call& c);
void rule_su(Walker& w, Call& c);
void rule_sg(Walker& w, Call& c);
void exec_inner(Walker& w, Call& c, Args inner, const std::string& what, const std::optional<std::string>& cwd);
void rule_xargs(Walker& w, Call& c);

// ---- rules/runners.cpp ----

// npx, npm exec, pnpm dlx, yarn dlx, bunx, bun x, pipx run, uvx, uv tool
// run, deno run npm:X: the package's program is judged as the command it
// is (`npx rimraf /` as a deletion of /). `from`: the word after the verb.
void rule_package_runner(Walker& w, Call& c, size_t from);
void rule_npx(Walker& w, Call& c);
size_t package_bin_count();               // the packages judged as the command they are
bool package_bin(std::string_view name);  // rimraf, del, trash, shx, cross-env, ...

// GNU parallel and sem run a command once per argument: `parallel rm -rf
// ::: a b` is `rm -rf a` and `rm -rf b`; without ::: the arguments come from
// the input, as with xargs. The command is judged with every argument.
void rule_parallel(Walker& w, Call& c);
// rush 'CMD {}': shell text run for each line of the input.
void rule_rush(Walker& w, Call& c);
// concurrently 'CMD1' 'CMD2': each argument is shell text.
void rule_concurrently(Walker& w, Call& c);
// entr, watchexec: a command run on every change of the files they watch.
void rule_watcher(Walker& w, Call& c);
// cross-env, shx, dotenv, env-cmd: assignments or options, then a command.
void rule_env_wrapper(Walker& w, Call& c);

// ---- rules/interpreters.cpp ----

void rule_shell(Walker& w, Call& c);
void rule_eval(Walker& w, Call& c);
void rule_source(Walker& w, Call& c);
void rule_alias(Walker& w, Call& c);
void rule_trap(Walker& w, Call& c);
void rule_declare(Walker& w, Call& c);
void rule_unset(Walker& w, Call& c);
// read and mapfile set variables from their input: unknown, but tainted
// when the input is a download (`curl ... | while read l; do eval "$l"; done`).
void rule_read(Walker& w, Call& c);

void rule_cd(Walker& w, Call& c);
void rule_hash(Walker& w, Call& c);
void rule_enable(Walker& w, Call& c);
struct Interpreter;
const Interpreter* interpreter(std::string_view name);
void rule_interpreter(Walker& w, Call& c, const Interpreter& s);
// awk programs: system() and pipes run commands, `print > "file"` writes.
void rule_awk(Walker& w, Call& c);

void rule_sed(Walker& w, Call& c);

// ---- rules/files.cpp ----

// The one deletion rule: what deleting a path reaches. Inside the root the
// run's snapshot undoes it (confirm, guarded paths blocked by the write
// check); the root itself, its parents, `/`, the home folder (but its
// caches) and the system folders are blocked; any other path outside the
// root is confirm: the sandbox refuses it, and nothing undoes it.
struct Reach {
  enum Kind { inside, root, outside, guarded, runtime } kind;
  std::string what;  // guarded, runtime: what it reaches ("the home folder")
  std::string path;  // the absolute path, when known
  Reach(Kind k, std::string w = {}, std::string p = {}) : kind(k), what(std::move(w)), path(std::move(p)) {}
};
Reach deletion_reach(const Walker& w, const Field& f);
// Deleting `f`; `forced`: recursive or forced, so that a target only known
// at run time is blocked.
void judge_deletion(Walker& w, Call& c, const Field& f, bool forced);
void rule_rm(Walker& w, Call& c);
// rimraf, del, trash, trash-put, ...: recursive deletion of their arguments.
void rule_deleter(Walker& w, Call& c);
void rule_write_positionals(Walker& w, Call& c, const Spec& spec);
void rule_shred(Walker& w, Call& c);
void rule_find(Walker& w, Call& c);
void rule_copy(Walker& w, Call& c);
void rule_chmod(Walker& w, Call& c);
void rule_tar(Walker& w, Call& c);
void rule_unzip(Walker& w, Call& c);
void rule_zip(Walker& w, Call& c);
void rule_compress(Walker& w, Call& c);
void rule_patch(Walker& w, Call& c);
void rule_sort(Walker& w, Call& c);
void rule_uniq(Walker& w, Call& c);
void rule_split(Walker& w, Call& c);

// ---- rules/editors.cpp ----

void rule_editor(Walker& w, Call& c);
// Ex commands (vim -c, +cmd, :g, :exe): `:!cmd`, `:r !cmd`, `:w !cmd`,
// `:terminal`, system() and the script languages run commands.
void ex_commands(Walker& w, Call& c, const Field& value, int depth = 0);

// ---- rules/commands.cpp: options that take a command, one table ----

// Every option of the leaf's program that takes a command, judged (git's
// per subcommand: run_command_option).
void command_options(Walker& w, Call& c);
bool takes_command(std::string_view program, std::string_view sub, std::string_view option);
void run_command_option(Walker& w, Call& c, std::string_view sub, std::string_view option, const Field& value);
size_t command_option_count();
bool command_option_program(std::string_view name);
std::vector<std::string> command_option_programs();

// ---- rules/system.cpp ----

void rule_disk_format(Walker& w, Call& c);
void rule_partition(Walker& w, Call& c);
void rule_dd(Walker& w, Call& c);
void rule_power(Walker& w, Call& c);
void rule_init(Walker& w, Call& c);
void rule_kill(Walker& w, Call& c);
void rule_pkill(Walker& w, Call& c);
void rule_fuser(Walker& w, Call& c);
void service_verb(Walker& w, Call& c, std::string_view verb, const std::vector<std::string>& units);
void rule_systemctl(Walker& w, Call& c);
void rule_service(Walker& w, Call& c);
void rule_service_tool(Walker& w, Call& c);
void rule_loginctl(Walker& w, Call& c);
void rule_man(Walker& w, Call& c);
void rule_at(Walker& w, Call& c);
// crontab installs commands that cron runs later, outside any run.
void rule_crontab(Walker& w, Call& c);

void rule_multiplexer(Walker& w, Call& c);
// kill-port PORT, fkill NAME|:PORT: kill what holds a port or has a name.
void rule_kill_port(Walker& w, Call& c);
// gdb --args PROG ARGS runs PROG; -x FILE runs commands from a file (-ex:
// the table of options that take a command).
void rule_gdb(Walker& w, Call& c);
// kaicoder's own deciding subcommands: an agent must never approve its own work.
void rule_kaicoder(Walker& w, Call& c);

// ---- rules/build.cpp ----

struct Formatter;
const Formatter* formatter(std::string_view name);
void rule_formatter(Walker& w, Call& c, const Formatter& f);
void rule_compiler(Walker& w, Call& c);
void rule_make(Walker& w, Call& c);
void rule_cmake(Walker& w, Call& c);

// ---- rules/packages.cpp ----

struct Manager;
const Manager* manager(std::string_view name);
void rule_pkg(Walker& w, Call& c, std::string_view manager_name, size_t from);
void rule_pacman(Walker& w, Call& c);
void rule_cargo(Walker& w, Call& c);
void rule_go(Walker& w, Call& c);
void rule_nix(Walker& w, Call& c);

// ---- rules/families.cpp, family_rule.cpp, statements.cpp: one data table per family ----

// cloud, platform, container, kubernetes, infrastructure, storage, backup,
// database, secrets, system: the tools and their destroying verbs.
bool family_tool(std::string_view name);
void rule_family(Walker& w, Call& c);
std::vector<FamilyCoverage> family_coverage();

// ---- rules/network.cpp ----

void rule_curl(Walker& w, Call& c);
void rule_wget(Walker& w, Call& c);
void rule_http_client(Walker& w, Call& c);
void rule_ssh(Walker& w, Call& c);
void rule_scp(Walker& w, Call& c);
void rule_rsync(Walker& w, Call& c);
void rule_netcat(Walker& w, Call& c);
void rule_mail(Walker& w, Call& c);
// ssh-keygen -f FILE writes a key pair there, unless it only reads one.
void rule_ssh_keygen(Walker& w, Call& c);

void rule_openssl(Walker& w, Call& c);

// ---- rules/git.cpp ----

void rule_git(Walker& w, Call& c);

}  // namespace kai::shell
