#include "lib/shell_classify.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <utility>

namespace kai::shell {
namespace {

constexpr size_t k_max_output = 65536;  // static output followed through pipes
constexpr size_t k_max_leaves = 4096;   // beyond this the command is not understood
constexpr size_t k_shown_max = 160;

int rank(RunVerdict v) {
  switch (v) {
    case RunVerdict::allow: return 0;
    case RunVerdict::ask: return 1;
    case RunVerdict::confirm: return 2;
    case RunVerdict::blocked: return 3;
  }
  return 3;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

std::vector<std::string> split_components(std::string_view p) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t slash = p.find('/', start);
    if (slash == std::string_view::npos) slash = p.size();
    if (slash > start) out.emplace_back(p.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Folders whose whole content a build recreates: deleting them (or anything
// in them) recursively is routine.
bool is_build_name(std::string_view c) {
  static constexpr std::string_view k_names[] = {
      "build",        "builds",      "_build",        ".build",     "target",        "dist",
      "out",          "node_modules", ".cache",       "__pycache__", ".pytest_cache", ".mypy_cache",
      ".ruff_cache",  ".tox",        ".nox",          "coverage",   "htmlcov",       ".nyc_output",
      ".next",        ".nuxt",       ".svelte-kit",   ".parcel-cache", ".turbo",     ".gradle",
      ".dart_tool",   "obj",         "tmp",           "temp",       ".tmp",          "zig-cache",
      "zig-out",      ".zig-cache",  ".stack-work",   "dist-newstyle", "elm-stuff",  "DerivedData",
      ".eggs",        ".angular",    ".expo",         "storybook-static", ".docusaurus", "cmake-build",
  };
  if (std::find(std::begin(k_names), std::end(k_names), c) != std::end(k_names)) return true;
  return starts_with(c, "build-") || starts_with(c, "build_") || starts_with(c, "cmake-build-") ||
         starts_with(c, "bazel-") || ends_with(c, ".egg-info");
}

bool under_temp(std::string_view norm) {
  for (std::string_view t : {"/tmp/", "/var/tmp/", "/dev/shm/"})
    if (starts_with(norm, t) && norm.size() > t.size()) return true;
  return false;
}

// Devices a command may write to: the null device and its own streams.
bool harmless_device(std::string_view p) {
  static constexpr std::string_view k_ok[] = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"};
  if (std::find(std::begin(k_ok), std::end(k_ok), p) != std::end(k_ok)) return true;
  return starts_with(p, "/dev/fd/") || starts_with(p, "/proc/self/fd/");
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// Names a glob may reach that must never be written: `rm *` reaches the
// changelog and kaicoder.toml, `chmod 777 .*` reaches .env and .git.
constexpr std::string_view k_write_probes[] = {
    "KAI-CODER-CHANGELOG.md", "kaicoder.toml", ".kaicoder", ".git", "x.bak-kaicoder-20260101T000000Z",
    ".env", ".env.local", "x.env", "x.pem", "x.key", "id_rsa",
};
// Secret files a glob argument may reach (`cat .e*`). Only hidden names:
// `grep x *` reaching a key file by name is left to output redaction.
constexpr std::string_view k_read_probes[] = {".env", ".env.local", ".env.production", ".netrc", ".npmrc", ".pypirc",
                                              ".git-credentials"};

std::string join_text(const Args& a) {
  std::string out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].synthetic && a[i].raw.empty()) continue;  // appended by xargs
    // one word split into several fields is shown once
    if (i > 0 && a[i].raw == a[i - 1].raw && (a[i].braced || a[i].from_var || a[i].computed)) continue;
    if (!out.empty()) out += ' ';
    out += a[i].raw.empty() ? quote_argv({a[i].value}) : a[i].raw;
  }
  return out;
}

// How an argument is named in a reason: as written, or where it comes from.
std::string what_of(const Field& f) {
  if (f.raw.empty()) return "names read from its input";
  return "'" + f.raw + "'";
}

// One value for an assignment or redirection target (no field splitting
// there; several fields mean an ambiguous redirect: treated as unknown).
Field single(std::vector<Field> fs, const Word& w, bool join) {
  if (fs.size() == 1) return std::move(fs[0]);
  Field f;
  f.raw = w.raw;
  if (fs.empty()) return f;
  for (size_t i = 0; i < fs.size(); ++i) {
    if (i > 0) f.value += ' ';
    f.value += fs[i].value;
    f.dynamic = f.dynamic || fs[i].dynamic;
    f.computed = f.computed || fs[i].computed;
    f.download = f.download || fs[i].download;
    f.glob = f.glob || fs[i].glob;
  }
  if (!join) f.dynamic = true;
  return f;
}

bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Every spelling under which an argument may name a file: `--file=.env`,
// `-d@.env`, `@.env`, `name=@.env`, `HEAD:.env`.
std::vector<std::string> file_candidates(const std::string& v) {
  std::vector<std::string> out;
  std::string word = v;
  if (word.size() > 2 && word[0] == '-') {  // --file=.env, -d@.env
    size_t eq = word.find('=');
    word = eq != std::string::npos ? word.substr(eq + 1) : word[1] != '-' ? word.substr(2) : "";
  }
  for (std::string_view mark : {"=@", "=<"}) {  // curl -F name=@.env
    size_t at = word.find(mark);
    if (at != std::string::npos) word = word.substr(at + 2);
  }
  if (!word.empty() && (word[0] == '@' || word[0] == '<')) word = word.substr(1);
  if (word.empty()) return out;
  out.push_back(word);
  size_t colon = word.rfind(':');
  if (colon != std::string::npos && colon + 1 < word.size()) out.push_back(word.substr(colon + 1));
  return out;
}

// Is `self` called in a pipeline or in the background inside `s`?
bool calls_itself(const Script& s, const std::string& self, bool parallel) {
  for (const Pipeline& p : s.pipelines) {
    bool par = parallel || p.background || p.cmds.size() > 1;
    for (const Command& c : p.cmds) {
      if (c.kind == CmdKind::simple && !c.words.empty() && par && literal(c.words[0]) == self) return true;
      if (c.body && c.kind != CmdKind::function && calls_itself(*c.body, self, par)) return true;
    }
  }
  return false;
}

bool name_hit(std::string_view text, std::string_view name) {
  if (name.empty()) return false;
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    bool left = at == 0 || !word_char(text[at - 1]);
    bool right = at + name.size() >= text.size() || !word_char(text[at + name.size()]);
    if (left && right) return true;
  }
  return false;
}

// The fallback word of `${NAME:-word}` (also `-`, `:=`, `=`), when plain.
std::optional<std::string> default_word(std::string_view raw) {
  if (raw.size() > 2 && raw.front() == '"' && raw.back() == '"') raw = raw.substr(1, raw.size() - 2);
  if (!starts_with(raw, "${") || raw.back() != '}') return std::nullopt;
  std::string_view body = raw.substr(2, raw.size() - 3);
  size_t op = body.find_first_of(":-=");
  if (op == std::string_view::npos || op == 0) return std::nullopt;
  size_t word = body[op] == ':' ? op + 2 : op + 1;
  if (word > body.size() || (body[op] == ':' && op + 1 < body.size() && body[op + 1] != '-' && body[op + 1] != '=')) return std::nullopt;
  std::string_view w = body.substr(word);
  if (w.empty() || w.find_first_of("$`'\"{}() \t") != std::string_view::npos) return std::nullopt;
  return std::string(w);
}

}  // namespace

std::string normalize(std::string_view path) {
  bool abs = !path.empty() && path[0] == '/';
  std::vector<std::string> parts;
  bool anchored = false;  // "~" or "~user" leads: never climbed over
  for (const std::string& c : split_components(path)) {
    if (c == ".") continue;
    if (parts.empty() && !abs && c[0] == '~') anchored = true;
    if (c == "..") {
      if (!parts.empty() && parts.back() != ".." && !(anchored && parts.size() == 1)) {
        parts.pop_back();
      } else if (!abs) {
        parts.push_back(c);
      }
      continue;
    }
    parts.push_back(c);
  }
  std::string out = abs ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out;
}

std::string shown(std::string_view text) {
  std::string out;
  for (char ch : text.substr(0, k_shown_max)) {
    auto u = static_cast<unsigned char>(ch);
    if (ch == '\n') {
      out += "\\n";
    } else if (u < 0x20 || u == 0x7F) {
      static constexpr char k_hex[] = "0123456789abcdef";
      out += "\\x";
      out += k_hex[u >> 4];
      out += k_hex[u & 0xF];
    } else {
      out += ch;
    }
  }
  if (text.size() > k_shown_max) out += "...";
  return out;
}

std::optional<std::string> protected_in(const ShellContext& ctx, std::string_view text) {
  for (const std::string& p : ctx.protected_processes) {
    if (p.size() > 1 && p[0] == ':') {
      std::string_view port = std::string_view(p).substr(1);
      for (size_t at = text.find(port); at != std::string_view::npos; at = text.find(port, at + 1)) {
        bool left = at == 0 || !(text[at - 1] >= '0' && text[at - 1] <= '9');
        bool right = at + port.size() >= text.size() || !(text[at + port.size()] >= '0' && text[at + port.size()] <= '9');
        if (left && right) return p;
      }
    } else if (name_hit(text, p)) {
      return p;
    }
  }
  return std::nullopt;
}

Walker::Walker(const ShellContext& ctx, Classification& out, int depth) : m_ctx(ctx), m_out(out), m_depth(depth) {}

void Walker::walk(const Parsed& p) {
  Call whole;
  whole.text = "the command";
  if (p.too_deep) find(whole, RunVerdict::blocked, "nested more than " + std::to_string(k_max_nesting) + " levels deep");
  for (const std::string& e : p.errors) unknown(whole, "shell syntax: " + e);
  walk_script(p.script);
  if (m_out.leaves.size() > k_max_leaves) unknown(whole, "too many commands to show");
}

// ---- findings ----

void Walker::find(Call& c, RunVerdict v, const std::string& what) {
  if (rank(v) > rank(m_out.verdict)) m_out.verdict = v;
  if (v == RunVerdict::ask) return;  // ordinary: nothing to explain
  std::string line = std::string(to_string(v)) + ": " + what + ": " + shown(c.text);
  if (std::find(m_out.reasons.begin(), m_out.reasons.end(), line) == m_out.reasons.end())
    m_out.reasons.push_back(std::move(line));
}

void Walker::unknown(Call& c, const std::string& what) {
  c.understood = false;
  m_out.understood = false;
  std::string line = "not understood: " + what + ": " + shown(c.text);
  if (std::find(m_out.reasons.begin(), m_out.reasons.end(), line) == m_out.reasons.end())
    m_out.reasons.push_back(std::move(line));
}

std::optional<std::string> Walker::resolved(const std::string& path) const {
  if (path.empty() || path[0] == '/' || path[0] == '~') return path;
  if (!m_st.cwd) return std::nullopt;
  if (m_st.cwd->empty()) return path;
  return *m_st.cwd + "/" + path;
}

void Walker::write(Call& c, const Field& f, RunVerdict tier, Content content) {
  if (f.procsub) return;  // >(cmd) is a pipe to a command walked on its own
  if (f.dynamic || f.synthetic || f.value.empty()) {
    find(c, tier, "writes to a path only known at run time (" + what_of(f) + ")");
    unknown(c, "writes to a path only known at run time (" + what_of(f) + ")");
    return;
  }
  std::optional<std::string> r = resolved(f.value);
  if (!r) {
    find(c, tier, "writes to '" + f.value + "'");
    unknown(c, "writes to '" + f.value + "' in a folder only known at run time");
    return;
  }
  std::string path = normalize(*r);
  if (path.empty()) path = ".";
  if (starts_with(path, "/dev/") || starts_with(path, "/proc/self/fd/")) {
    if (!harmless_device(path)) find(c, RunVerdict::blocked, "writes to the device '" + path + "'");
    return;
  }
  c.targets.push_back(path);
  if (content == Content::replaced || m_written.count(path) == 0) m_written[path] = Written{};
  if (std::find(m_out.write_targets.begin(), m_out.write_targets.end(), path) == m_out.write_targets.end())
    m_out.write_targets.push_back(path);
  // The temp folders are the run's own (the sandbox gives it a private
  // /tmp): writing there is no finding, unless root lies there too.
  if (!(under_temp(path) && !in_root(path))) find(c, tier, "writes to '" + path + "'");
  // The run's own folder (`cp x .`, `git checkout -- .`) is inside root by
  // construction; the caller's check refuses root itself as a file name.
  if (path == "." || (under_temp(path) && !in_root(path)) || !m_ctx.check_write_target) return;
  if (f.glob) {
    check_glob_target(c, path, tier);
    return;
  }
  Status s = m_ctx.check_write_target(path);
  if (!s) find(c, RunVerdict::blocked, "writes to a protected path: " + s.error().message);
}

void Walker::check_glob_target(Call& c, const std::string& path, RunVerdict tier) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (has_glob_chars(dir)) {
    find(c, tier, "writes to files matched at run time by '" + path + "'");
    unknown(c, "writes to folders matched at run time by '" + path + "'");
    return;
  }
  // Build and temp folders hold nothing kaicoder protects: `rm -rf build/*`.
  Status literal = m_ctx.check_write_target(path);
  if (!literal) {
    find(c, RunVerdict::blocked, "writes to a protected path: " + literal.error().message);
    return;
  }
  Field folder;
  folder.value = dir.empty() ? "." : dir;
  if (!dir.empty() && disposable(folder)) return;
  for (std::string_view probe : k_write_probes) {
    if (::fnmatch(base.c_str(), std::string(probe).c_str(), FNM_PERIOD) != 0) continue;
    Status s = m_ctx.check_write_target(dir + std::string(probe));
    if (!s) {
      find(c, RunVerdict::blocked, "writes to a protected path through the pattern '" + path + "': " + s.error().message);
      return;
    }
  }
}

// A URL's path or a public key names no secret file of the run's.
bool not_a_secret_file(std::string_view v) {
  return v.find("://") != std::string_view::npos || starts_with(v, "//") || ends_with(v, ".pub");
}

void Walker::read(Call& c, const Field& f) {
  if (!m_ctx.is_secret || f.dynamic || f.value.empty() || not_a_secret_file(f.value)) return;
  std::string path = resolved(f.value).value_or(f.value);
  if (!f.glob) {
    if (m_ctx.is_secret(path)) find(c, RunVerdict::blocked, "reads the secret file '" + f.value + "'");
    return;
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view probe : k_read_probes) {
    if (::fnmatch(base.c_str(), std::string(probe).c_str(), FNM_PERIOD) == 0 && m_ctx.is_secret(dir + std::string(probe))) {
      find(c, RunVerdict::blocked, "reads secret files: '" + f.value + "' matches '" + std::string(probe) + "'");
      return;
    }
  }
}

void Walker::read_args(Call& c, size_t from) {
  for (size_t i = from; i < c.argv.size(); ++i) {
    const Field& a = c.argv[i];
    // --exclude=.env, --ignore .env: naming a file in order not to read it
    if (starts_with(a.value, "-") &&
        (a.value.find("exclude") != std::string::npos || a.value.find("ignore") != std::string::npos)) {
      if (a.value.find('=') == std::string::npos) ++i;
      continue;
    }
    for (const std::string& cand : file_candidates(a.value)) {
      Field f = a;
      f.value = cand;
      read(c, f);
    }
  }
}

bool Walker::in_root(std::string_view abs) const {
  const std::string& r = m_ctx.root;
  return !r.empty() && starts_with(abs, r) && (abs.size() == r.size() || abs[r.size()] == '/');
}

bool Walker::inside_root(const Field& f) const {
  if (f.dynamic || f.synthetic || f.tilde || f.value.empty()) return false;
  std::optional<std::string> r = resolved(f.value);
  if (!r) return false;
  std::string n = normalize(*r);
  if (!n.empty() && n[0] == '/') return in_root(n) && n != m_ctx.root;
  return !(n.empty() || n == "." || n == ".." || starts_with(n, "../") || n[0] == '~');
}

bool Walker::disposable(const Field& f) const {
  if (f.dynamic || f.synthetic || f.tilde || f.value.empty()) return false;
  std::optional<std::string> r = resolved(f.value);
  if (!r) return false;
  std::string n = normalize(*r);
  if (!n.empty() && n[0] == '/') return under_temp(n) && !in_root(n);
  if (n.empty() || n == ".." || starts_with(n, "../") || n[0] == '~') return false;
  for (const std::string& comp : split_components(n)) {
    if (has_glob_chars(comp)) return false;
    if (is_build_name(comp)) return true;
  }
  return false;
}

// ---- expansion hooks ----

std::optional<ExpandEnv::Value> Walker::param(const std::string& name) {
  auto it = m_st.vars.find(name);
  if (it != m_st.vars.end()) return it->second;
  if (m_st.positional && is_digits(name) && name.size() < 4) {
    size_t i = static_cast<size_t>(std::stoi(name));
    if (i < m_st.positional->size()) return Value{(*m_st.positional)[i], false, false};
    return Value{};
  }
  if (m_st.positional && name == "#") return Value{std::to_string(m_st.positional->size() - 1), false, false};
  // kaicoder gives every run TMPDIR=/tmp, whatever the proposer's was.
  if (name == "TMPDIR") return Value{"/tmp", false, false};
  return std::nullopt;
}

std::optional<std::string> Walker::ifs() {
  auto it = m_st.vars.find("IFS");
  if (it == m_st.vars.end()) return std::string(" \t\n");
  if (it->second.dynamic) return std::nullopt;
  return it->second.text;
}

std::optional<std::vector<std::string>> Walker::positional() {
  if (!m_st.positional) return std::nullopt;
  return std::vector<std::string>(m_st.positional->begin() + 1, m_st.positional->end());
}

ExpandEnv::SubResult Walker::sub(const Script& s, bool want_output) {
  size_t before = m_downloads;
  State saved = m_st;  // a substitution runs in a subshell
  Stdin saved_in = std::exchange(m_stdin, Stdin{});
  std::optional<std::string> out = walk_script(s);
  m_st = std::move(saved);
  m_stdin = saved_in;
  SubResult r;
  r.download = m_downloads > before;
  if (want_output) r.output = std::move(out);
  return r;
}

// ---- the walk ----

std::optional<std::string> Walker::walk_script(const Script& s) {
  std::optional<std::string> all = std::string();
  for (const Pipeline& p : s.pipelines) {
    std::optional<std::string> o = walk_pipeline(p);
    if (p.background || !o || !all || all->size() + o->size() > k_max_output) {
      all.reset();
    } else {
      *all += *o;
    }
  }
  return all;
}

std::optional<std::string> Walker::walk_pipeline(const Pipeline& p) {
  // Each part of a pipe (and a background job) runs in a subshell: its
  // variables and `cd` do not outlive it.
  bool isolated = p.cmds.size() > 1 || p.background;
  Stdin in = m_stdin;
  LeafInfo last;
  bool download = false, kills = false;
  for (size_t i = 0; i < p.cmds.size(); ++i) {
    if (i > 0) {
      in = Stdin{};
      in.kind = Stdin::Kind::pipe;
      in.text = last.output;
      in.computed = last.output_computed;
      in.download = download;
    }
    std::optional<State> saved;
    if (isolated) saved = m_st;
    size_t downloads = m_downloads;
    last = walk_command(p.cmds[i], in);
    if (saved) m_st = std::move(*saved);
    // anything that downloaded while this part ran feeds what it prints
    download = download || last.download || m_downloads > downloads;
    kills = kills || last.kills;
  }
  if (kills) check_protected_kill(p);
  return last.output;
}

void Walker::check_protected_kill(const Pipeline& p) {
  for (const Command& c : p.cmds) {
    if (std::optional<std::string> hit = protected_in(m_ctx, c.text)) {
      Call k;
      k.text = c.text;
      find(k, RunVerdict::blocked, "kills a protected process (" + *hit + ")");
      return;
    }
  }
}

LeafInfo Walker::walk_command(const Command& cmd, const Stdin& in) {
  if (cmd.kind == CmdKind::simple) return walk_simple(cmd, in);
  Call c;
  c.text = cmd.text;
  c.in = in;
  c.depth = m_depth;
  for (const Word& w : cmd.words) {  // case subjects and patterns, [[ ]] operands
    if (cmd.kind != CmdKind::for_loop) expand(w, *this);
  }
  redirections(c, cmd);
  LeafInfo info;
  if (cmd.kind == CmdKind::function) {
    walk_function(cmd);
    return info;
  }
  std::optional<State> saved;
  if (cmd.kind == CmdKind::subshell) saved = m_st;
  Stdin saved_in = std::exchange(m_stdin, c.in);
  if (cmd.kind == CmdKind::for_loop) {
    walk_for(cmd);
  } else if (cmd.body) {
    info.output = walk_script(*cmd.body);
  }
  m_stdin = saved_in;
  if (saved) m_st = std::move(*saved);
  return info;
}

void Walker::walk_function(const Command& cmd) {
  if (cmd.body && calls_itself(*cmd.body, cmd.name, false)) {
    Call c;
    c.text = cmd.text;
    find(c, RunVerdict::blocked, "fork bomb: '" + cmd.name + "' runs copies of itself");
  }
  if (!cmd.body) return;
  State saved = m_st;
  walk_script(*cmd.body);
  m_st = std::move(saved);
}

void Walker::walk_for(const Command& cmd) {
  Args words;
  for (const Word& w : cmd.words) {
    std::vector<Field> fs = expand(w, *this);
    words.insert(words.end(), fs.begin(), fs.end());
  }
  // One word (often a glob: `for f in *.c`) is bound as the loop value;
  // several are not followed one by one, so the variable is unknown.
  if (!cmd.name.empty()) {
    if (cmd.has_in && words.size() == 1 && !words[0].dynamic) {
      set_var(cmd.name, words[0]);
    } else {
      forget_var(cmd.name);
    }
  }
  if (cmd.body) walk_script(*cmd.body);
}

LeafInfo Walker::walk_simple(const Command& cmd, const Stdin& in) {
  Call c;
  c.text = cmd.text;
  c.in = in;
  c.depth = m_depth;
  for (const Word& w : cmd.words) {
    std::vector<Field> fs = expand(w, *this);
    for (Field& f : fs) c.argv.push_back(std::move(f));
  }
  std::vector<std::pair<std::string, Field>> assigns;
  for (const Assign& a : cmd.assigns) assigns.emplace_back(a.name, single(expand(a.value, *this, false), a.value, true));
  redirections(c, cmd);
  Scope scope = c.argv.empty() ? Scope::shell : Scope::command;
  for (const auto& [name, value] : assigns) check_assignment(c, name, value, scope);
  if (c.argv.empty()) {
    if (!cmd.assigns.empty() || !cmd.redirs.empty()) finish_leaf(c);
    return {};
  }
  LeafInfo info = classify(c);
  if (c.stdout_to && !c.stdout_to->dynamic) {
    if (info.download) download(c, c.stdout_to);  // curl URL > x.sh
    wrote(*c.stdout_to, c.stdout_append ? std::nullopt : info.output, info.output_computed);
  }
  return info;
}

void Walker::redirections(Call& c, const Command& cmd) {
  for (const Redir& r : cmd.redirs) {
    if (r.op == RedirOp::heredoc) {
      Field body = r.body ? single(expand(*r.body, *this, false), *r.body, true) : Field{};
      c.in = Stdin{Stdin::Kind::text, std::nullopt, body.computed, body.download};
      if (!body.dynamic) c.in.text = body.value;
      continue;
    }
    Field f = single(expand(r.target, *this, r.op != RedirOp::herestring), r.target, r.op == RedirOp::herestring);
    switch (r.op) {
      case RedirOp::herestring:
        c.in = Stdin{Stdin::Kind::text, std::nullopt, f.computed, f.download};
        if (!f.dynamic) c.in.text = f.value + "\n";
        break;
      case RedirOp::in:
        read(c, f);
        c.in = Stdin{f.procsub ? Stdin::Kind::pipe : Stdin::Kind::file, std::nullopt, false, f.download};
        break;
      case RedirOp::inout:
        read(c, f);
        write(c, f);
        break;
      case RedirOp::dup_in:
        break;
      case RedirOp::dup_out:
        if (!is_digits(f.value) && f.value != "-") write(c, f);  // bash: >&file
        break;
      default:
        write(c, f);
        if (r.fd == -1 || r.fd == 1) {
          c.stdout_to = f;
          c.stdout_append = r.op == RedirOp::append || r.op == RedirOp::append_err;
        }
    }
  }
}

void Walker::check_assignment(Call& c, const std::string& name, const Field& value, Scope scope) {
  // Variables that make programs load or run code of the agent's choosing.
  static constexpr std::string_view k_exec_vars[] = {
      "BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXEC_PATH", "GIT_ASKPASS",
      "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "LESSOPEN", "LESSCLOSE", "NODE_OPTIONS",
      "PERL5OPT", "PERL5LIB", "RUBYOPT", "PYTHONSTARTUP", "PYTHONINSPECT", "SHELLOPTS", "BASHOPTS",
      "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "MAVEN_OPTS", "GIT_TEMPLATE_DIR", "CDPATH",
  };
  // Variables holding a command line that programs run (`PAGER=cat git log`
  // is fine, `PAGER='sh -c ...'` is judged like the command itself).
  static constexpr std::string_view k_command_vars[] = {
      "PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
      "SUDO_EDITOR", "BROWSER",
  };
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), name) != std::end(list); };
  if (in(k_exec_vars) || starts_with(name, "LD_") || starts_with(name, "DYLD_") || starts_with(name, "BASH_FUNC_") ||
      starts_with(name, "GIT_CONFIG")) {
    find(c, RunVerdict::blocked, "sets " + name + ", which makes programs load or run other code");
  } else if (in(k_command_vars)) {
    judge(c, name, value);
  } else if (name == "PATH") {
    unknown(c, "changes PATH, so command names may run other programs");
  } else if (name == "IFS" && scope == Scope::shell) {
    unknown(c, "changes IFS, so words split differently than shown");
  }
  if (scope == Scope::shell) set_var(name, value);
}

LeafInfo Walker::classify(Call& c) {
  if (c.depth > m_ctx.max_depth) {
    find(c, RunVerdict::blocked, "wrapped more than " + std::to_string(m_ctx.max_depth) + " levels deep");
    finish_leaf(c);
    return {};
  }
  const Field& a0 = c.argv[0];
  c.name = basename_of(a0.value);
  if (a0.dynamic || a0.synthetic) {
    unknown(c, "the command name is only known at run time ('" + a0.raw + "')");
    // $(which kaicoder) approve 3
    if (a0.raw.find("kaicoder") != std::string::npos)
      for (const Field& f : c.argv)
        if (f.value == "approve" || f.value == "reject" || f.value == "apply" || f.value == "rollback" || f.value == "serve")
          find(c, RunVerdict::blocked, "runs kaicoder's deciding subcommand '" + f.value + "'");
    // ${X:-rm} -rf /: judged as the default it falls back to
    if (std::optional<std::string> def = default_word(a0.raw)) {
      Args alt = c.argv;
      alt[0].value = *def;
      alt[0].dynamic = false;
      alt[0].computed = true;
      return run(c, std::move(alt), c.in);
    }
    finish_leaf(c);
    return {};
  }
  if (a0.computed || a0.from_var || a0.braced || a0.glob)
    unknown(c, "the command name is computed ('" + a0.raw + "' is '" + a0.value + "')");
  if (a0.value.find('/') != std::string::npos && run_file(c, a0, Lang::other)) {  // its #! line decides
    finish_leaf(c);
    return c.info;
  }
  std::string normal = c.name;
  for (size_t i = 1; i < c.argv.size(); ++i) normal += " " + c.argv[i].value;
  for (const std::string& p : m_ctx.extra_blocked) {
    auto match = [&p](std::string_view text) {
      if (has_glob_chars(p)) return ::fnmatch(p.c_str(), std::string(text).c_str(), 0) == 0;
      return starts_with(text, p) && (text.size() == p.size() || text[p.size()] == ' ' || text[p.size()] == '\t');
    };
    if (match(c.text) || match(normal)) find(c, RunVerdict::blocked, "matches the [run] blocked pattern '" + p + "'");
  }
  if (!names_without_reading(c.name)) read_args(c, 1);
  apply_rule(*this, c);
  if (c.wrapper) return c.info;
  if (!prints_only(c.name)) {
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const Field& a = c.argv[i];
      if (a.dynamic || a.synthetic || a.computed) {
        unknown(c, "an argument is only known at run time (" + what_of(a) + ")");
        break;
      }
    }
  }
  finish_leaf(c);
  return c.info;
}

void Walker::finish_leaf(Call& c) {
  if (m_out.leaves.size() > k_max_leaves) return;
  Leaf l;
  for (const Field& f : c.argv) l.argv.push_back(f.value);
  l.text = c.text;
  l.write_targets = c.targets;
  l.understood = c.understood;
  m_out.leaves.push_back(std::move(l));
}

// ---- unwrapping ----

LeafInfo Walker::run(Call& c, Args inner, Stdin in, const std::optional<std::string>& cwd) {
  c.wrapper = true;
  Call ic;
  ic.text = join_text(inner);
  ic.argv = std::move(inner);
  ic.in = std::move(in);
  ic.depth = c.depth + 1;
  ic.targets = c.targets;
  ic.understood = c.understood;
  if (ic.argv.empty()) return {};
  std::optional<std::string> saved = m_st.cwd;
  if (cwd) enter_cwd(*cwd);
  LeafInfo info = classify(ic);
  m_st.cwd = saved;
  return info;
}

std::optional<std::string> Walker::enter_cwd(const std::string& dir) {
  std::optional<std::string> saved = m_st.cwd;
  std::optional<std::string> r = dir.empty() ? std::nullopt : resolved(dir);
  m_st.cwd = r ? std::optional<std::string>(normalize(*r)) : std::nullopt;
  return saved;
}

void Walker::restore_cwd(std::optional<std::string> previous) { m_st.cwd = std::move(previous); }

Classification Walker::nested(Call& c, std::string_view code, const std::vector<Field>& positional) {
  Classification sub;
  if (c.depth + 1 > m_ctx.max_depth) {
    find(c, RunVerdict::blocked, "wrapped more than " + std::to_string(m_ctx.max_depth) + " levels deep");
    return sub;
  }
  Walker w(m_ctx, sub, c.depth + 1);
  w.m_st.cwd = m_st.cwd;
  w.m_downloaded = m_downloaded;
  w.m_written = m_written;
  w.m_stdin = c.in;
  if (!positional.empty()) {
    std::vector<std::string> pos;
    bool known = true;
    for (const Field& f : positional) {
      known = known && !f.dynamic && !f.synthetic;
      pos.push_back(f.value);
    }
    if (known) w.m_st.positional = std::move(pos);
  }
  // Each level of wrapping uses up some of the parser's nesting budget, so
  // strings inside strings cannot nest without bound.
  w.walk(parse(code, (c.depth + 1) * 4));
  m_downloaded = std::move(w.m_downloaded);
  m_written = std::move(w.m_written);
  m_downloads += w.m_downloads;
  if (w.m_downloads > 0) c.info.download = true;
  return sub;
}

void Walker::merge(const Classification& sub) {
  if (rank(sub.verdict) > rank(m_out.verdict)) m_out.verdict = sub.verdict;
  for (const std::string& r : sub.reasons)
    if (std::find(m_out.reasons.begin(), m_out.reasons.end(), r) == m_out.reasons.end()) m_out.reasons.push_back(r);
  for (const std::string& t : sub.write_targets)
    if (std::find(m_out.write_targets.begin(), m_out.write_targets.end(), t) == m_out.write_targets.end())
      m_out.write_targets.push_back(t);
  m_out.leaves.insert(m_out.leaves.end(), sub.leaves.begin(), sub.leaves.end());
  m_out.understood = m_out.understood && sub.understood;
}

void Walker::run_shell(Call& c, const Field& code, const std::vector<Field>& positional) {
  if (code.synthetic && code.download) {  // curl ... | xargs -I{} sh -c '{}'
    find(c, RunVerdict::blocked, "runs a download in a shell");
    return;
  }
  if (code.dynamic) {
    if (code.download) {
      find(c, RunVerdict::blocked, "runs a download in a shell");
    } else {
      unknown(c, "runs shell text only known at run time ('" + code.raw + "')");
    }
    return;
  }
  if (code.computed) unknown(c, "runs shell text computed by the command itself");
  c.wrapper = true;
  merge(nested(c, code.value, positional));
}

void Walker::run_stdin(Call& c, Lang lang) {
  if (c.in.download) {
    find(c, RunVerdict::blocked, lang == Lang::shell ? "runs a download in a shell" : "runs a download in an interpreter");
    return;
  }
  if (c.in.kind == Stdin::Kind::inherited || c.in.kind == Stdin::Kind::file) return;
  if (!c.in.text) {
    unknown(c, "runs a program read from its input");
    return;
  }
  if (c.in.computed) unknown(c, "runs decoded or computed text");
  if (lang != Lang::shell) {
    opaque(c, *c.in.text);
    return;
  }
  Call inner = c;
  inner.in = Stdin{};
  merge(nested(inner, *c.in.text, {}));
}

void Walker::judge(Call& c, const std::string& what, const Field& code) {
  if (code.dynamic) {
    find(c, RunVerdict::blocked, what + " runs a command only known at run time ('" + code.raw + "')");
    return;
  }
  Call inner = c;
  inner.in = Stdin{Stdin::Kind::pipe, std::nullopt, false, false};  // fed by the program that runs it
  Classification sub = nested(inner, code.value, {});
  if (sub.verdict == RunVerdict::blocked || !sub.understood)
    find(c, RunVerdict::blocked, what + " runs a command that is blocked or cannot be judged ('" + shown(code.value) + "')");
  merge(sub);
}

// Program text in another language is never understood. What can still be
// seen: kaicoder's deciding subcommands (a pty wrapper approving its own
// work), secret file names, fork loops, and shell commands handed to
// system()/popen()/exec() as string literals.
namespace {

// The string literal that starts at code[q]: "...", '...', `...`, Lua's
// [[...]], Perl's q(...), qq{...}, qx[...] and Ruby's %x(...), %q(...),
// %Q(...) with any delimiter. Backslash escapes are taken as the character.
std::optional<std::string> literal_at(std::string_view code, size_t& q) {
  if (q >= code.size()) return std::nullopt;
  char open = code[q];
  size_t body = q + 1;
  if (starts_with(code.substr(q), "[[")) {
    size_t end = code.find("]]", q + 2);
    if (end == std::string_view::npos) return std::nullopt;
    std::string lit(code.substr(q + 2, end - q - 2));
    q = end + 2;
    return lit;
  }
  if (open == 'q' || open == '%') {
    size_t k = q + 1;
    if (open == 'q' && k < code.size() && (code[k] == 'q' || code[k] == 'x')) ++k;
    if (open == '%' && k < code.size() && (code[k] == 'x' || code[k] == 'q' || code[k] == 'Q')) ++k;
    if (k >= code.size() || word_char(code[k]) || code[k] == ' ' || code[k] == ',' || code[k] == ';' || code[k] == ')')
      return std::nullopt;
    open = code[k];
    body = k + 1;
  } else if (open != '"' && open != '\'' && open != '`') {
    return std::nullopt;
  }
  char close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : open == '<' ? '>' : open;
  std::string lit;
  size_t e = body;
  for (; e < code.size() && code[e] != close; ++e) {
    if (code[e] == '\\' && e + 1 < code.size()) ++e;
    lit += code[e];
  }
  if (e >= code.size()) return std::nullopt;
  q = e + 1;
  return lit;
}

// The command strings program text hands to a shell: the literal argument
// of system, exec, popen, os.execute, io.popen, check_output ... (with or
// without parentheses, a list's words joined), and in Perl, Ruby and PHP
// backticks, qx and %x anywhere.
std::vector<std::string> spawned_commands(std::string_view code, std::string_view program) {
  static constexpr std::string_view k_calls[] = {
      "system", "exec", "popen", "spawn", "execSync", "spawnSync", "shell_exec", "passthru", "check_output",
      "check_call", "getoutput", "getstatusoutput", "os.execute", "io.popen", "run", "call", "Popen", "capture2",
      "capture2e", "capture3", "popen3", "spawn_sync"};
  std::vector<std::string> out;
  for (std::string_view call : k_calls) {
    for (size_t at = code.find(call); at != std::string_view::npos; at = code.find(call, at + 1)) {
      if (at > 0 && word_char(code[at - 1])) continue;
      size_t q = at + call.size();
      if (q < code.size() && word_char(code[q])) continue;
      // run/call/Popen only as subprocess.* (run( is any function)
      if ((call == "run" || call == "call" || call == "Popen") && (at < 11 || code.substr(at - 11, 11) != "subprocess."))
        continue;
      bool paren = false, list = false;
      while (q < code.size() && !starts_with(code.substr(q), "[[") &&
             (code[q] == ' ' || (!paren && code[q] == '(') || (!list && code[q] == '['))) {
        paren = paren || code[q] == '(';
        list = list || code[q] == '[';
        ++q;
      }
      if (!paren && q == at + call.size() && !(q < code.size() && (code[q] == '"' || code[q] == '\'' || code[q] == '[')))
        continue;  // `system` as a name, not a call
      std::vector<std::string> words;
      while (std::optional<std::string> lit = literal_at(code, q)) {
        words.push_back(std::move(*lit));
        if (!list && !paren) break;  // system("rm", "-rf", "/") passes words too
        while (q < code.size() && (code[q] == ' ' || code[q] == ',')) ++q;
      }
      if (words.empty()) continue;
      out.push_back(list || words.size() > 1 ? quote_argv(words) : words.front());
    }
  }
  std::string name = basename_of(program);
  if (starts_with(name, "perl") || starts_with(name, "ruby") || starts_with(name, "php")) {
    for (size_t at = 0; at < code.size(); ++at) {
      bool tick = code[at] == '`';
      bool quoted = (starts_with(code.substr(at), "qx") || starts_with(code.substr(at), "%x")) &&
                    (at == 0 || !word_char(code[at - 1]));
      if (!tick && !quoted) continue;
      size_t q = at;
      if (std::optional<std::string> lit = literal_at(code, q)) {
        out.push_back(std::move(*lit));
        at = q - 1;
      }
    }
  }
  return out;
}

}  // namespace

void Walker::opaque(Call& c, const std::string& code) {
  unknown(c, "runs program text that cannot be judged");
  std::vector<std::string> tokens;
  std::string cur;
  for (char ch : code + " ") {
    if (word_char(ch) || ch == '.' || ch == '/' || ch == '-' || ch == '~' || ch == '+' || ch == '$') {
      cur += ch;
    } else if (!cur.empty()) {
      tokens.push_back(std::move(cur));
      cur.clear();
    }
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (basename_of(tokens[i]) == "kaicoder") {
      for (size_t j = i + 1; j < tokens.size() && j < i + 6; ++j)
        for (std::string_view d : {"approve", "reject", "apply", "rollback", "serve"})
          if (tokens[j] == d) find(c, RunVerdict::blocked, "runs kaicoder's deciding subcommand '" + tokens[j] + "'");
    }
    if (m_ctx.is_secret && !not_a_secret_file(tokens[i]) && m_ctx.is_secret(tokens[i]))
      find(c, RunVerdict::blocked, "reads the secret file '" + tokens[i] + "'");
  }
  if (name_hit(code, "fork") && (name_hit(code, "while") || name_hit(code, "for") || name_hit(code, "loop")))
    find(c, RunVerdict::blocked, "fork bomb: forks in a loop");
  // fetching code and evaluating it in one breath: curl | sh in another language
  bool fetches = false, evaluates = false;
  for (std::string_view f : {"urlopen", "urllib", "requests.get", "http.get", "https.get", "fetch(", "LWP::",
                             "HTTP::Tiny", "Net::HTTP", "open-uri", "URI.open", "file_get_contents(\"http"})
    fetches = fetches || code.find(f) != std::string::npos;
  for (std::string_view e : {"exec(", "eval(", "eval ", "compile(", "Function(", "instance_eval", "system("})
    evaluates = evaluates || code.find(e) != std::string::npos;
  if (fetches && evaluates) find(c, RunVerdict::blocked, "runs a download in an interpreter");
  // Deleting files or starting programs from program text: confirm tier,
  // blocked when the text names what must never go (root, its parents, /,
  // the home folder, .git, kaicoder's own files).
  static constexpr std::string_view k_deletes[] = {
      "shutil.rmtree", "os.remove", "os.unlink", "os.rmdir", "os.removedirs", "Path.unlink", ".unlink(", ".rmdir(",
      "fs.rmSync", "fs.rm(", "fs.rmdirSync", "fs.unlinkSync", "fs.unlink(", ".rmSync(", ".rmdirSync(",
      ".unlinkSync(", "rimraf", "FileUtils.rm", "FileUtils.remove", "File.delete", "File.unlink", "Dir.delete",
      "Dir.rmdir", "unlink(", "unlink ", "rmtree", "remove_tree", "os.remove("};
  static constexpr std::string_view k_spawns[] = {
      "subprocess.", "os.system", "os.popen", "os.execute", "os.exec", "os.spawn", "child_process", "execSync", "spawnSync",
      "execFileSync", "system(", "exec(", "spawn(", "Process.spawn", "IO.popen", "%x(", "io.popen",
      "popen(", "Open3."};
  std::vector<std::string> commands = spawned_commands(code, c.name);
  std::string_view what;
  for (std::string_view d : k_deletes)
    if (code.find(d) != std::string::npos) what = d;
  bool deletes = !what.empty();
  for (std::string_view sp : k_spawns)
    if (what.empty() && code.find(sp) != std::string::npos) what = sp;
  if (what.empty() && !commands.empty()) what = "a command string";
  if (!what.empty()) {
    while (what.size() > 1 && (what.back() == '(' || what.back() == ' ' || what.back() == '.')) what.remove_suffix(1);
    find(c, RunVerdict::confirm,
         std::string(deletes ? "program text deletes files" : "program text starts programs") + " (" + std::string(what) + ")");
    if (deletes) {
      for (const std::string& t : tokens) {
        std::string v = t;
        while (v.size() > 1 && v.back() == '/') v.pop_back();
        bool named = v == "/" || v == "~" || v == ".." || v == "$HOME" || v == ".git" ||
                     v.rfind(".git/", 0) == 0 || v == ".kaicoder" || v == "kaicoder.toml" ||
                     (!m_ctx.root.empty() && (v == m_ctx.root || starts_with(m_ctx.root, v + "/")));
        if (named) find(c, RunVerdict::blocked, "program text deletes files and names '" + t + "'");
      }
      for (std::string_view h : {"expanduser", "os.homedir", "Dir.home", "HOME"})
        if (code.find(h) != std::string::npos) find(c, RunVerdict::blocked, "program text deletes files and names the home folder");
    }
  }
  // The command strings it hands to a shell are judged as shell text.
  for (const std::string& lit : commands) {
    Call inner = c;
    Classification sub = nested(inner, lit, {});
    if (sub.verdict == RunVerdict::blocked) {
      find(c, RunVerdict::blocked, "runs a blocked shell command ('" + shown(lit) + "')");
      merge(sub);
    }
  }
}

void Walker::download(Call& c, const std::optional<Field>& saved_to) {
  c.info.download = true;
  ++m_downloads;
  if (!saved_to || saved_to->dynamic) return;
  if (std::optional<std::string> r = resolved(saved_to->value)) m_downloaded.insert(normalize(*r));
}

bool Walker::downloaded(const Field& f) const {
  if (f.dynamic || m_downloaded.empty()) return false;
  std::optional<std::string> r = resolved(f.value);
  return r && m_downloaded.count(normalize(*r)) > 0;
}

void Walker::wrote(const Field& target, const std::optional<std::string>& text, bool computed) {
  if (target.dynamic) return;
  if (std::optional<std::string> r = resolved(target.value)) m_written[normalize(*r)] = Written{text, computed};
}

bool Walker::run_file(Call& c, const Field& f, Lang lang) {
  if (downloaded(f)) {
    find(c, RunVerdict::blocked, "runs a file it has just downloaded");
    return true;
  }
  std::optional<std::string> r = f.dynamic ? std::nullopt : resolved(f.value);
  auto it = r ? m_written.find(normalize(*r)) : m_written.end();
  if (it == m_written.end()) return false;
  if (!it->second.content) {
    unknown(c, "runs a file written earlier in the same command");
    return true;
  }
  if (it->second.computed) unknown(c, "runs a file holding decoded or computed text");
  const std::string& text = *it->second.content;
  bool shell = lang == Lang::shell || !starts_with(text, "#!") || is_shell(basename_of(text.substr(2, text.find_first_of(" \n", 2) - 2)));
  if (shell) {
    Call inner = c;
    inner.in = Stdin{};
    merge(nested(inner, text, {}));
  } else {
    opaque(c, text);
  }
  return true;
}

void Walker::run_procsub(Call& c, const Field& f, Lang lang) {
  if (f.download) {
    find(c, RunVerdict::blocked, lang == Lang::shell ? "runs a download in a shell" : "runs a download in an interpreter");
  } else if (!f.content) {
    unknown(c, "runs a script produced by another command");
  } else if (lang == Lang::shell) {
    if (f.computed) unknown(c, "runs decoded or computed text");
    Call inner = c;
    inner.in = Stdin{};
    merge(nested(inner, *f.content, {}));
  } else {
    opaque(c, *f.content);
  }
}

// ---- state ----

void Walker::set_var(const std::string& name, const Field& value) {
  // A value only known at run time is remembered only when it carries a
  // download, so that `x=$(curl ...); eval "$x"` is still caught.
  if (value.dynamic && !value.download) {
    if (name == "IFS") {
      m_st.vars[name] = Value{"", false, false, true, false};
    } else {
      m_st.vars.erase(name);
    }
    return;
  }
  m_st.vars[name] = Value{value.value, value.glob, value.computed, value.dynamic, value.download};
}

void Walker::forget_var(const std::string& name) { m_st.vars.erase(name); }

void Walker::set_cwd(const std::optional<Field>& dir) {
  if (!dir) {
    m_st.cwd = "~";
  } else if (dir->dynamic || dir->synthetic || dir->value == "-") {
    m_st.cwd = std::nullopt;
  } else if (std::optional<std::string> r = resolved(dir->value)) {
    m_st.cwd = normalize(*r);
  } else {
    m_st.cwd = std::nullopt;
  }
}

void Walker::push_dir(const std::optional<Field>& dir) {
  m_st.dirs.push_back(m_st.cwd);
  set_cwd(dir);
}

void Walker::pop_dir() {
  if (m_st.dirs.empty()) {
    m_st.cwd = std::nullopt;
    return;
  }
  m_st.cwd = m_st.dirs.back();
  m_st.dirs.pop_back();
}

}  // namespace kai::shell
