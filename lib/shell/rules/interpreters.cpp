// Shells, eval, source and the shell builtins that change its state, and the
// interpreters of other languages (python -c, perl -e, awk, sed).

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

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
    } else if (!w.run_file(c, f, Lang::shell)) {
      w.find(c, V::ask, "runs the script '" + f.value + "', which is not judged");
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
  std::string_view arg_short;  // options taking a value
  List arg_long;
  std::string_view inplace;  // -i[SUFFIX]
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
      {"wish", "", {}, "", {}, ""},
      {"expect", "", {}, "cf", {}, ""},  // -c: the table of options that take a command
  };
  for (const Interpreter& s : k_interp)
    if (s.name == name) return &s;
  return nullptr;
}

void rule_interpreter(Walker& w, Call& c, const Interpreter& s) {
  std::vector<std::string> code;
  std::vector<const Field*> code_fields;  // the words holding program text
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
        code_fields.push_back(&c.argv[i]);
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
        if (rest.empty() && i + 1 < c.argv.size()) code_fields.push_back(&c.argv[i + 1]);
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
  for (const Field* f : code_fields) {
    if (f->download) {  // python3 -c "$(curl ...)"
      w.find(c, V::blocked, "runs a download in an interpreter");
      return;
    }
    if (f->dynamic) w.unknown(c, "runs program text only known at run time ('" + f->raw + "')");
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
    } else if (std::string base = basename_of(script.value); family_tool(base) && !script.dynamic) {
      // python manage.py flush, php artisan migrate:fresh: a framework's own tool
      Args inner = slice(c.argv, i);
      inner[0] = with_value(script, base);
      c.info = w.run(c, std::move(inner), c.in);
    } else if (!w.run_file(c, script, Lang::other)) {
      w.find(c, V::ask, "runs the script '" + script.value + "', which is not judged");
    }
    return;
  }
  if (s.name == "pwsh" || s.name == "powershell") return;
  if (s.name == "expect" && std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "-c"; }))
    return;  // the script is the -c string
  w.run_stdin(c, Lang::other);
}

// awk programs: system() and pipes run commands, `print > "file"` writes.
void rule_awk(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1,
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

namespace {

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
    std::string t(trim(s.substr(i, e == std::string_view::npos ? std::string_view::npos : e - i)));
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
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        while (i < s.size() && s[i] != ';' && s[i] != '\n' && s[i] != '}') ++i;
        break;
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        while (i < s.size() && (is_digit(s[i]) || s[i] == ' ')) ++i;
        break;
      case 'a':
      case 'i':
      case 'c': {
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
      case 'w':
      case 'W': r.writes.push_back(rest_of_line()); break;
      case 'r':
      case 'R': r.reads.push_back(rest_of_line()); break;
      case 's':
      case 'y': {
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
}  // namespace

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

}  // namespace kai::shell
