#pragma once
// Internal to lib/shell/: the walker that visits every command of a parsed
// script (walker.cpp, findings.cpp, unwrap.cpp) and the interface the
// per-command rules (rules/) use to report what a leaf does.
//
// Usage sequence (classify_shell):
//   Walker w(ctx, out, depth);
//   w.walk(parse(text));          // every pipeline, command, substitution
//     -> for each simple command: expand words, redirections, assignments
//     -> Walker::classify(call)   // argv[0] decides which rule runs
//        -> apply_rule(w, call)   // may report findings, write targets, or
//                                 // unwrap: w.run(call, inner argv)

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lib/shell/shell.hpp"
#include "lib/shell/expand.hpp"
#include "lib/shell/syntax.hpp"

namespace kai::shell {

using Args = std::vector<Field>;

// Whether a write replaces what a file holds (cp, >) or keeps it (chmod).
enum class Content { replaced, kept };
// The language of a program text: shell text is parsed and judged, any
// other is opaque.
enum class Lang { shell, other };
// Whether an assignment stays for the rest of the script (`X=1`, `export X=1`)
// or only reaches one command's environment (`X=1 make`).
enum class Scope { command, shell };

// Where a command's standard input comes from, as far as it matters: a shell
// or interpreter may read its program from it.
struct Stdin {
  enum class Kind { inherited, pipe, text, file } kind = Kind::inherited;
  std::optional<std::string> text;  // static content: echo piped in, a here-document
  bool computed = false;            // the content was decoded or evaluated here
  bool download = false;            // the content comes from a download
  // Fed by the program that runs it (tar --to-command, a pager, a
  // compressor) with data only known at run time: a shell or interpreter
  // reading its program from there runs that data.
  bool data = false;
};

// What a leaf tells the pipeline it sits in.
struct LeafInfo {
  std::optional<std::string> output;  // static standard output (echo, printf, base64 -d of it)
  bool output_computed = false;
  bool download = false;     // prints what it downloads
  bool kills = false;        // kill, pkill, killall, fuser -k: checked against the pipeline
  bool shell_input = false;  // a shell or interpreter runs what it reads from an unknown pipe
};

struct Call {
  Args argv;         // argv[0] is the command
  std::string name;  // basename of argv[0]
  std::string text;  // the leaf as written
  Stdin in;
  std::optional<Field> stdout_to;  // a file its standard output is redirected to
  bool stdout_append = false;
  int depth = 0;
  LeafInfo info;
  // Collected for the Leaf record; a wrapper hands them on to what it runs.
  std::vector<std::string> targets;
  bool understood = true;
  bool wrapper = false;  // unwrapped into another call: not a leaf itself
  bool noted = false;    // a finding (of any verdict) names this leaf
};

class Walker final : public ExpandEnv {
public:
  Walker(const ShellContext& ctx, Classification& out, int depth);

  void walk(const Parsed& p);
  LeafInfo classify(Call& c);

  // ExpandEnv
  std::optional<Value> param(const std::string& name) override;
  std::optional<std::vector<std::string>> positional() override;
  std::optional<std::string> ifs() override;
  SubResult sub(const Script& s, bool want_output) override;

  // ---- for the rules ----
  const ShellContext& ctx() const { return m_ctx; }
  // A finding on this leaf; the verdict is raised to at least `v`.
  void find(Call& c, RunVerdict v, const std::string& what);
  // The leaf cannot be fully judged: never auto-allowed.
  void unknown(Call& c, const std::string& what);
  // A write target: devices, root confinement and the never-write list;
  // raises the verdict to `tier` (confirm for writes, ask for build outputs).
  void write(Call& c, const Field& target, RunVerdict tier = RunVerdict::confirm, Content content = Content::replaced);
  // A write target recorded without the root check: the deletion rule has
  // judged it already (a deletion outside the root).
  void record_target(Call& c, const std::string& path);
  // What a write put into a file, when known (echo ... > f, tee f).
  void wrote(const Field& target, const std::optional<std::string>& text, bool computed);
  // A file the command reads: blocked when it is a secret.
  void read(Call& c, const Field& file);
  // Every argument from `from` on that may name a file (`--file=.env`,
  // `-d@.env`, `HEAD:.env`), checked as a read; --exclude/--ignore values
  // are skipped.
  void read_args(Call& c, size_t from);
  // Inside a build or temp folder within root (or under /tmp): the only
  // places a recursive or forced deletion may reach.
  bool disposable(const Field& f) const;
  // A static path strictly inside root (and not its own folder, ".").
  bool inside_root(const Field& f) const;
  // `abs` is the root or lies inside it ([ShellContext] root).
  bool in_root(std::string_view abs) const;
  // A static path as an absolute, normalised one: joined to any `cd`, the
  // root and the home folder when known; nullopt when it cannot be told.
  std::optional<std::string> absolute(const Field& f) const;
  // `path` as the caller resolves it: joined to any `cd` seen so far;
  // nullopt when that folder is only known at run time.
  std::optional<std::string> resolved(const std::string& path) const;

  // Unwrap: classify `inner` as the command `c` runs (sudo, env, xargs, ...),
  // in folder `cwd` when given ("" for a folder only known at run time).
  LeafInfo run(Call& c, Args inner, Stdin in, const std::optional<std::string>& cwd = std::nullopt);
  // Change the folder relative paths are judged against ("" for unknown);
  // returns the previous one for restore_cwd.
  std::optional<std::string> enter_cwd(const std::string& dir);
  void restore_cwd(std::optional<std::string> previous);
  // A shell program given as a string (`bash -c`, `eval`, `su -c`, trap, ...).
  void run_shell(Call& c, const Field& code, const std::vector<Field>& positional);
  // The program is read from standard input (`curl ... | sh`, `sh <<EOF`).
  void run_stdin(Call& c, Lang lang);
  // Options that make a program run another one (git -c core.pager=, tar
  // --to-command=, PAGER=..., vim -c '!...'): what they run is judged as
  // shell text. Blocked when it is blocked or only known at run time; not
  // understood (never auto-allowed) when it cannot be judged. Feed::data:
  // the program feeds it data only known at run time (an archive member, a
  // page of output), so a shell or interpreter reading its program from
  // there is blocked.
  enum class Feed { none, data };
  void judge(Call& c, const std::string& what, const Field& code, Feed feed = Feed::data);
  // Program text of another language (python -c, perl -e, awk): never
  // understood; blocked when it visibly reaches for kaicoder, secrets or forks.
  void opaque(Call& c, const std::string& code);
  // A download: remembered so that a pipe or a later run of the file is caught.
  void download(Call& c, const std::optional<Field>& saved_to);
  bool downloaded(const Field& f) const;
  // Running a file: one written earlier by the same command is judged by
  // what was written into it (`echo 'rm -rf /' > x.sh; sh x.sh`), or is not
  // understood when that is unknown; a downloaded one is blocked. False when
  // the file comes from the tree.
  bool run_file(Call& c, const Field& file, Lang lang);
  // A script behind a pipe (`bash <(...)`, `source <(...)`).
  void run_procsub(Call& c, const Field& f, Lang lang);

  // Shell state the rules change.
  void set_var(const std::string& name, const Field& value);
  void forget_var(const std::string& name);
  void set_cwd(const std::optional<Field>& dir);  // nullopt: home
  void push_dir(const std::optional<Field>& dir);
  void pop_dir();
  void check_assignment(Call& c, const std::string& name, const Field& value, Scope scope);

private:
  struct State {
    std::map<std::string, Value> vars;
    std::optional<std::vector<std::string>> positional;
    std::optional<std::string> cwd = std::string();  // "" = where the run starts; nullopt = unknown
    std::vector<std::optional<std::string>> dirs;
  };
  // A file written earlier in the same command, and what it holds.
  struct Written {
    std::optional<std::string> content;
    bool computed = false;
  };

  std::optional<std::string> walk_script(const Script& s);
  std::optional<std::string> walk_pipeline(const Pipeline& p);
  LeafInfo walk_command(const Command& cmd, const Stdin& in);
  LeafInfo walk_simple(const Command& cmd, const Stdin& in);
  void walk_function(const Command& cmd);
  void walk_for(const Command& cmd);
  void redirections(Call& c, const Command& cmd);
  void check_glob_target(Call& c, const std::string& path, RunVerdict tier);
  void check_protected_kill(const Pipeline& p);
  void finish_leaf(Call& c);
  Classification nested(Call& c, std::string_view code, const std::vector<Field>& positional);
  void merge(const Classification& sub);

  const ShellContext& m_ctx;
  Classification& m_out;
  int m_depth;
  State m_st;
  Stdin m_stdin;  // the standard input of the list being walked
  size_t m_downloads = 0;
  // Files survive subshells and pipes, so these are not part of State.
  std::set<std::string> m_downloaded;
  std::map<std::string, Written> m_written;
};

// The commands program text of another language hands to the system, as
// shell text (languages.cpp): Tcl's exec, spawn, system, open "|..." and
// file delete (tclsh, wish, expect); Emacs Lisp's shell-command,
// call-process, start-process, delete-directory ... (emacs --eval).
std::vector<std::string> tcl_commands(std::string_view code);
std::vector<std::string> elisp_commands(std::string_view code);

// The per-command rules (rules/table.cpp).
void apply_rule(Walker& w, Call& c);
// Commands whose arguments are only printed or compared, never opened: an
// argument known only at run time does not make them unjudgeable.
bool prints_only(std::string_view name);
// Commands that may name a secret file without reading it (ls .env, rm .env
// is judged as a write).
bool names_without_reading(std::string_view name);
bool is_shell(std::string_view name);
// A program some rule or table of the checker knows (what it reads, writes
// or runs); any other is judged `ask` as an unknown program.
bool known_program(std::string_view name);
// What the tables know, family by family (kai::checker_coverage).
std::vector<FamilyCoverage> coverage();
std::string basename_of(std::string_view path);
std::string shown(std::string_view text);  // control characters escaped, long text cut
// The [run] protected entry (process name or ":port") that `text` names.
std::optional<std::string> protected_in(const ShellContext& ctx, std::string_view text);
// The components of a path, without empty ones: "/a//b/" -> {"a", "b"}.
std::vector<std::string> split_components(std::string_view p);
// Lexical normalisation: "./a/b/../c" -> "a/c"; a relative path that climbs
// out keeps its leading ".."; "" is the starting folder itself.
std::string normalize(std::string_view path);

// ---- shared by the walker's files (findings.cpp) ----

// The order of verdicts: allow < ask < confirm < blocked.
int rank(RunVerdict v);
bool word_char(char c);
bool has_glob_chars(std::string_view s);
// How an argument is named in a reason: as written, or where it comes from.
std::string what_of(const Field& f);
// `name` appears in `text` as a whole word.
bool name_hit(std::string_view text, std::string_view name);
// A URL's path or a public key names no secret file of the run's.
bool not_a_secret_file(std::string_view v);

}  // namespace kai::shell
