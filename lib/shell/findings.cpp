// What the walker reports about a leaf: findings, write targets checked
// against the root and the never-write list, secret files read, and the
// path helpers they need.

#include <fnmatch.h>

#include <algorithm>
#include <utility>

#include "lib/shell/walker.hpp"
#include "lib/util/strings.hpp"

namespace kai::shell {

namespace {

constexpr size_t k_shown_max = 160;

// Folders whose whole content a build recreates: deleting them (or anything
// in them) recursively is routine. The generated folders kaicoder never
// writes are some; these are the others.
bool is_build_name(std::string_view c) {
  if (is_generated_dir(c)) return true;
  static constexpr std::string_view k_names[] = {
      "builds",        "_build",      ".build",      "out",        ".cache",      "__pycache__",
      ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",       ".nox",        "coverage",
      "htmlcov",       ".nyc_output", ".next",       ".nuxt",      ".svelte-kit", ".parcel-cache",
      ".turbo",        ".gradle",     ".dart_tool",  "obj",        "tmp",         "temp",
      ".tmp",          "zig-cache",   "zig-out",     ".zig-cache", ".stack-work", "dist-newstyle",
      "elm-stuff",     "DerivedData", ".eggs",       ".angular",   ".expo",       "storybook-static",
      ".docusaurus",   "cmake-build",
  };
  if (std::find(std::begin(k_names), std::end(k_names), c) != std::end(k_names)) return true;
  return c.starts_with("build-") || c.starts_with("build_") || c.starts_with("cmake-build-") ||
         c.starts_with("bazel-") || c.ends_with(".egg-info");
}

bool under_temp(std::string_view norm) {
  for (std::string_view t : {"/tmp/", "/var/tmp/", "/dev/shm/"})
    if (norm.starts_with(t) && norm.size() > t.size()) return true;
  return false;
}

// Devices a command may write to: the null device and its own streams.
bool harmless_device(std::string_view p) {
  static constexpr std::string_view k_ok[] = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty"};
  if (std::find(std::begin(k_ok), std::end(k_ok), p) != std::end(k_ok)) return true;
  return p.starts_with("/dev/fd/") || p.starts_with("/proc/self/fd/");
}

// Names a glob may reach that must never be written: `rm *` reaches the
// changelog and kaicoder.toml, `chmod 777 .*` reaches .env and .git.
constexpr std::string_view k_write_probes[] = {
    // clang-format off
    "KAI-CODER-CHANGELOG.md", "kaicoder.toml", ".kaicoder", ".git", "x.bak-kaicoder-20260101T000000Z",
    ".env", ".env.local", "x.env", "x.pem", "x.key", "id_rsa",
};
// clang-format on

// Secret files a glob argument may reach (`cat .e*`). Only hidden names:
// `grep x *` reaching a key file by name is left to output redaction.
constexpr std::string_view k_read_probes[] = {".env",   ".env.local", ".env.production", ".netrc",
                                              ".npmrc", ".pypirc",    ".git-credentials"};

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

}  // namespace

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

int rank(RunVerdict v) {
  switch (v) {
    case RunVerdict::allow: return 0;
    case RunVerdict::ask: return 1;
    case RunVerdict::confirm: return 2;
    case RunVerdict::blocked: return 3;
  }
  return 3;
}

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// How an argument is named in a reason: as written, or where it comes from.
std::string what_of(const Field& f) {
  if (f.raw.empty()) return "names read from its input";
  return "'" + f.raw + "'";
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
        bool right =
            at + port.size() >= text.size() || !(text[at + port.size()] >= '0' && text[at + port.size()] <= '9');
        if (left && right) return p;
      }
    } else if (name_hit(text, p)) {
      return p;
    }
  }
  return std::nullopt;
}

// ---- findings ----

void Walker::find(Call& c, RunVerdict v, const std::string& what) {
  if (rank(v) > rank(m_out.verdict)) m_out.verdict = v;
  c.noted = true;
  std::string line = std::string(to_string(v)) + ": " + what + ": " + shown(c.text);
  if (std::find(m_out.reasons.begin(), m_out.reasons.end(), line) == m_out.reasons.end())
    m_out.reasons.push_back(std::move(line));
}

void Walker::unknown(Call& c, const std::string& what) {
  c.understood = false;
  c.noted = true;
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
  if (path.empty()) path.push_back('.');  // not = ".": GCC 12 -O2 warns falsely (-Wrestrict) on that
  // bash's network paths look like devices but are sockets: a send, and a
  // shell wired to one is a remote shell.
  if (path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")) {
    static constexpr std::string_view k_shells[] = {"exec", "python", "python3", "perl", "ruby", "php", "node"};
    if (is_shell(c.name) || std::find(std::begin(k_shells), std::end(k_shells), c.name) != std::end(k_shells)) {
      find(c, RunVerdict::blocked, "connects a shell to the network ('" + path + "')");
    } else {
      find(c, RunVerdict::confirm, "sends data over the network ('" + path + "')");
    }
    return;
  }
  if (path.starts_with("/dev/") || path.starts_with("/proc/self/fd/")) {
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

void Walker::record_target(Call& c, const std::string& path) {
  c.targets.push_back(path);
  m_written[path] = Written{};
  if (std::find(m_out.write_targets.begin(), m_out.write_targets.end(), path) == m_out.write_targets.end())
    m_out.write_targets.push_back(path);
}

std::optional<std::string> Walker::absolute(const Field& f) const {
  if (f.dynamic || f.synthetic || f.value.empty()) return std::nullopt;
  std::optional<std::string> r = resolved(f.value);
  if (!r) return std::nullopt;
  std::string p = *r;
  if (p[0] == '~') {
    bool own = p.size() == 1 || p[1] == '/';  // `~user` stays as written
    if (own && !m_ctx.home.empty()) p = m_ctx.home + p.substr(1);
  } else if (p[0] != '/' && !m_ctx.root.empty()) {
    p = m_ctx.root + "/" + p;
  }
  return normalize(p);
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
      find(c, RunVerdict::blocked,
           "writes to a protected path through the pattern '" + path + "': " + s.error().message);
      return;
    }
  }
}

// A URL's path or a public key names no secret file of the run's.
bool not_a_secret_file(std::string_view v) {
  return v.find("://") != std::string_view::npos || v.starts_with("//") || v.ends_with(".pub");
}

void Walker::read(Call& c, const Field& f) {
  if (f.dynamic || f.value.empty() || not_a_secret_file(f.value)) return;
  // the system's own secrets, whatever the caller's list says
  static constexpr std::string_view k_system_secrets[] = {"/etc/shadow",        "/etc/gshadow", "/etc/sudoers",
                                                          "/etc/master.passwd", "/etc/shadow-", "/etc/gshadow-"};
  std::string norm = normalize(f.value);
  if (std::find(std::begin(k_system_secrets), std::end(k_system_secrets), norm) != std::end(k_system_secrets) ||
      (norm.starts_with("/etc/ssh/ssh_host_") && norm.ends_with("_key")) || norm.starts_with("/etc/sudoers.d/")) {
    find(c, RunVerdict::blocked, "reads the system's secret file '" + f.value + "'");
    return;
  }
  if (!m_ctx.is_secret) return;
  std::string path = resolved(f.value).value_or(f.value);
  if (!f.glob) {
    if (m_ctx.is_secret(path)) find(c, RunVerdict::blocked, "reads the secret file '" + f.value + "'");
    return;
  }
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  for (std::string_view probe : k_read_probes) {
    if (::fnmatch(base.c_str(), std::string(probe).c_str(), FNM_PERIOD) == 0 &&
        m_ctx.is_secret(dir + std::string(probe))) {
      find(c, RunVerdict::blocked, "reads secret files: '" + f.value + "' matches '" + std::string(probe) + "'");
      return;
    }
  }
}

void Walker::read_args(Call& c, size_t from) {
  for (size_t i = from; i < c.argv.size(); ++i) {
    const Field& a = c.argv[i];
    // --exclude=.env, --ignore .env: naming a file in order not to read it
    if (a.value.starts_with("-") &&
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
  return !r.empty() && abs.starts_with(r) && (abs.size() == r.size() || abs[r.size()] == '/');
}

bool Walker::inside_root(const Field& f) const {
  if (f.dynamic || f.synthetic || f.tilde || f.value.empty()) return false;
  std::optional<std::string> r = resolved(f.value);
  if (!r) return false;
  std::string n = normalize(*r);
  if (!n.empty() && n[0] == '/') return in_root(n) && n != m_ctx.root;
  return !(n.empty() || n == "." || n == ".." || n.starts_with("../") || n[0] == '~');
}

bool Walker::disposable(const Field& f) const {
  if (f.dynamic || f.synthetic || f.tilde || f.value.empty()) return false;
  std::optional<std::string> r = resolved(f.value);
  if (!r) return false;
  std::string n = normalize(*r);
  if (!n.empty() && n[0] == '/') return under_temp(n) && !in_root(n);
  if (n.empty() || n == ".." || n.starts_with("../") || n[0] == '~') return false;
  for (const std::string& comp : split_components(n)) {
    if (has_glob_chars(comp)) return false;
    if (is_build_name(comp)) return true;
  }
  return false;
}

}  // namespace kai::shell
