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
// npx / pnpx / bunx run a package's program; -c runs a shell string.
void rule_npx(Walker& w, Call& c);

void rule_xargs(Walker& w, Call& c);
// GNU parallel and sem run a command once per argument: `parallel rm -rf
// ::: a b` is `rm -rf a` and `rm -rf b`; without ::: the arguments come from
// the input, as with xargs. The command is judged with every argument.
void rule_parallel(Walker& w, Call& c);

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

void rule_rm(Walker& w, Call& c);
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
void rule_editor(Walker& w, Call& c);

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
