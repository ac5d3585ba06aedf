// Unwrapping: what a wrapper, a shell string, a script on standard input or
// a file written earlier runs, and the opaque programs of other languages.

#include <algorithm>
#include <utility>

#include "lib/shell/walker.hpp"

namespace kai::shell {

namespace {

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

// The string literal that starts at code[q]: "...", '...', `...`, Lua's
// [[...]], Perl's q(...), qq{...}, qx[...] and Ruby's %x(...), %q(...),
// %Q(...) with any delimiter. Backslash escapes are taken as the character.
std::optional<std::string> literal_at(std::string_view code, size_t& q) {
  if (q >= code.size()) return std::nullopt;
  char open = code[q];
  size_t body = q + 1;
  if (code.substr(q).starts_with("[[")) {
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
      "system",     "exec",     "popen",        "spawn",      "execSync",       "spawnSync",
      "shell_exec", "passthru", "check_output", "check_call", "getoutput",      "getstatusoutput",
      "os.execute", "io.popen", "run",          "call",       "Popen",          "capture2",
      "capture2e",  "capture3", "popen3",       "spawn_sync", "do shell script"};
  std::vector<std::string> out;
  for (std::string_view call : k_calls) {
    for (size_t at = code.find(call); at != std::string_view::npos; at = code.find(call, at + 1)) {
      if (at > 0 && word_char(code[at - 1])) continue;
      size_t q = at + call.size();
      if (q < code.size() && word_char(code[q])) continue;
      // run/call/Popen only as subprocess.* (run( is any function)
      if ((call == "run" || call == "call" || call == "Popen") &&
          (at < 11 || code.substr(at - 11, 11) != "subprocess."))
        continue;
      bool paren = false, list = false;
      while (q < code.size() && !code.substr(q).starts_with("[[") &&
             (code[q] == ' ' || (!paren && code[q] == '(') || (!list && code[q] == '['))) {
        paren = paren || code[q] == '(';
        list = list || code[q] == '[';
        ++q;
      }
      if (!paren && q == at + call.size() &&
          !(q < code.size() && (code[q] == '"' || code[q] == '\'' || code[q] == '[')))
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
  if (name.starts_with("perl") || name.starts_with("ruby") || name.starts_with("php")) {
    for (size_t at = 0; at < code.size(); ++at) {
      bool tick = code[at] == '`';
      bool quoted = (code.substr(at).starts_with("qx") || code.substr(at).starts_with("%x")) &&
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
    find(c, RunVerdict::blocked,
         lang == Lang::shell ? "runs a download in a shell" : "runs a download in an interpreter");
    return;
  }
  if (c.in.kind == Stdin::Kind::inherited) return;
  if (c.in.kind == Stdin::Kind::file) {
    find(c, RunVerdict::ask, "runs a script read from a file, which is not judged");
    return;
  }
  if (c.in.data && !c.in.text) {
    find(c, RunVerdict::blocked,
         std::string(lang == Lang::shell ? "a shell" : "an interpreter") +
             " runs the data it is fed, which cannot be judged");
    return;
  }
  if (!c.in.text) {
    unknown(c, "runs a program read from its input");
    c.info.shell_input = true;
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

void Walker::judge(Call& c, const std::string& what, const Field& code, Feed feed) {
  if (code.dynamic) {
    find(c, RunVerdict::blocked, what + " runs a command only known at run time ('" + code.raw + "')");
    return;
  }
  Call inner = c;
  if (feed == Feed::data) {  // fed by the program that runs it
    inner.in = Stdin{Stdin::Kind::pipe, std::nullopt, false, false, true};
  } else {
    inner.in = Stdin{};
  }
  Classification sub = nested(inner, code.value, {});
  if (sub.verdict == RunVerdict::blocked) {
    find(c, RunVerdict::blocked, what + " runs a blocked command ('" + shown(code.value) + "')");
  } else if (!sub.understood) {
    unknown(c, what + " runs a command that cannot be judged ('" + shown(code.value) + "')");
  }
  merge(sub);
}

// Program text in another language is never understood. What can still be
// seen: kaicoder's deciding subcommands (a pty wrapper approving its own
// work), secret file names, fork loops, and shell commands handed to
// system()/popen()/exec() as string literals.

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
  for (std::string_view f : {"urlopen", "urllib", "requests.get", "http.get", "https.get", "fetch(",
                             "LWP::", "HTTP::Tiny", "Net::HTTP", "open-uri", "URI.open", "file_get_contents(\"http"})
    fetches = fetches || code.find(f) != std::string::npos;
  for (std::string_view e : {"exec(", "eval(", "eval ", "compile(", "Function(", "instance_eval", "system("})
    evaluates = evaluates || code.find(e) != std::string::npos;
  if (fetches && evaluates) find(c, RunVerdict::blocked, "runs a download in an interpreter");
  // a reverse shell: a socket handed to a shell
  bool socket = false, shell = false;
  for (std::string_view s :
       {"socket", "Socket", "fsockopen", "net.connect", "net.createConnection", "TCPSocket", "/dev/tcp/", "IO::Socket"})
    socket = socket || code.find(s) != std::string::npos;
  for (std::string_view s : {"dup2", "pty.spawn", "/bin/sh", "/bin/bash", "cmd.exe", "proc_open", "child_process",
                             "exec(", "spawn(", "system(", "popen("})
    shell = shell || code.find(s) != std::string::npos;
  if (socket && shell) find(c, RunVerdict::blocked, "connects a shell to the network (a socket handed to a shell)");
  // Deleting files or starting programs from program text: confirm tier,
  // blocked when the text names what must never go (root, its parents, /,
  // the home folder, .git, kaicoder's own files).
  static constexpr std::string_view k_deletes[] = {
      "shutil.rmtree",    "os.remove",   "os.unlink",   "os.rmdir",     "os.removedirs",    "Path.unlink",
      ".unlink(",         ".rmdir(",     "fs.rmSync",   "fs.rm(",       "fs.rmdirSync",     "fs.unlinkSync",
      "fs.unlink(",       ".rmSync(",    ".rmdirSync(", ".unlinkSync(", "rimraf",           "FileUtils.rm",
      "FileUtils.remove", "File.delete", "File.unlink", "Dir.delete",   "Dir.rmdir",        "unlink(",
      "unlink ",          "rmtree",      "remove_tree", "os.remove(",   "delete-directory", "delete-file",
      "file delete",      "Remove-Item"};
  static constexpr std::string_view k_spawns[] = {
      "subprocess.", "os.system", "os.popen",     "os.execute", "os.exec", "os.spawn", "child_process",
      "execSync",    "spawnSync", "execFileSync", "system(",    "exec(",   "spawn(",   "Process.spawn",
      "IO.popen",    "%x(",       "io.popen",     "popen(",     "Open3."};
  std::string lang = basename_of(c.name);
  std::vector<std::string> commands =
      lang.starts_with("tclsh") || lang.starts_with("wish") || lang.starts_with("expect") ? tcl_commands(code)
      : lang.starts_with("emacs") || lang.starts_with("xemacs")                           ? elisp_commands(code)
                                                                : spawned_commands(code, c.name);
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
         std::string(deletes ? "program text deletes files" : "program text starts programs") + " (" +
             std::string(what) + ")");
    if (deletes) {
      for (const std::string& t : tokens) {
        std::string v = t;
        while (v.size() > 1 && v.back() == '/') v.pop_back();
        bool named = v == "/" || v == "~" || v == ".." || v == "$HOME" || v == ".git" || v.rfind(".git/", 0) == 0 ||
                     v == ".kaicoder" || v == "kaicoder.toml" ||
                     (!m_ctx.root.empty() && (v == m_ctx.root || m_ctx.root.starts_with(v + "/")));
        if (named) find(c, RunVerdict::blocked, "program text deletes files and names '" + t + "'");
      }
      for (std::string_view h : {"expanduser", "homedir", "Dir.home", "HOME", "home_dir", "Path.home", "USERPROFILE",
                                 "expand_path(\"~", "expand_path('~"})
        if (code.find(h) != std::string::npos)
          find(c, RunVerdict::blocked, "program text deletes files and names the home folder");
    }
  }
  // The command strings it hands to a shell are judged as shell text; what
  // they do that needs a warning is the program's too.
  for (const std::string& lit : commands) {
    Call inner = c;
    inner.in = Stdin{};
    Classification sub = nested(inner, lit, {});
    if (sub.verdict == RunVerdict::blocked)
      find(c, RunVerdict::blocked, "runs a blocked shell command ('" + shown(lit) + "')");
    if (rank(sub.verdict) >= rank(RunVerdict::confirm)) merge(sub);
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
  bool shell = lang == Lang::shell || !text.starts_with("#!") ||
               is_shell(basename_of(text.substr(2, text.find_first_of(" \n", 2) - 2)));
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
    find(c, RunVerdict::blocked,
         lang == Lang::shell ? "runs a download in a shell" : "runs a download in an interpreter");
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

}  // namespace kai::shell
