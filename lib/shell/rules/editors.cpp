// Editors: vi, vim, ex, nvim, emacs and the others write the files they
// are given (confirm tier); their commands given on the command line are
// read as ex commands (`:!cmd`, `:r !cmd`, `:w !cmd`, `:terminal`,
// system(), the script languages) and judged.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

namespace {

// A literal string argument of a call in editor script ("..." or '...').
std::optional<std::string> string_arg(std::string_view t, size_t from) {
  size_t q = t.find_first_of("\"'", from);
  if (q == std::string_view::npos) return std::nullopt;
  size_t e = t.find(t[q], q + 1);
  if (e == std::string_view::npos) return std::nullopt;
  return std::string(t.substr(q + 1, e - q - 1));
}

// Leading modifiers and a range: `:silent! %`, `:'<,'>`, `:.,$`, `:/pat/`.
std::string_view strip_range(std::string_view t) {
  for (;;) {
    t = trim(t, " \t:");
    bool changed = false;
    for (std::string_view m : {"silent!", "silent", "sil!", "sil", "noautocmd", "keepjumps", "keepmarks", "lockmarks",
                               "keepalt", "keeppatterns", "verbose", "unsilent", "vertical", "topleft", "botright"})
      if (t.starts_with(m) && (t.size() == m.size() || !is_alpha(t[m.size()]))) {
        t.remove_prefix(m.size());
        changed = true;
        break;
      }
    size_t k = 0;
    while (k < t.size()) {
      char ch = t[k];
      if (is_digit(ch) || ch == '%' || ch == '.' || ch == ',' || ch == ';' || ch == '$' || ch == '+' || ch == '-') {
        ++k;
      } else if (ch == '\'' && k + 1 < t.size()) {
        k += 2;
      } else if ((ch == '/' || ch == '?') && t.find(ch, k + 1) != std::string_view::npos) {
        k = t.find(ch, k + 1) + 1;
      } else {
        break;
      }
    }
    if (k > 0) {
      t.remove_prefix(k);
      changed = true;
    }
    if (!changed) return t;
  }
}

}  // namespace

void ex_commands(Walker& w, Call& c, const Field& value, int depth) {
  if (value.dynamic) {
    w.unknown(c, "runs editor commands only known at run time");
    return;
  }
  std::string_view rest = value.value;
  while (!rest.empty()) {
    std::string_view t = strip_range(rest);
    std::string what = c.name + " :";
    // `:w !cmd` and a filter (`:%!cmd`) feed the text being edited to the command
    auto shell = [&](std::string_view cmd, std::string_view as, Walker::Feed feed = Walker::Feed::none) {
      w.judge(c, what + std::string(as), with_value(value, std::string(trim(cmd))), feed);
    };
    if (t.starts_with("!")) {  // :!cmd, :%!filter: the rest of the line, bars included
      bool filter = t.data() != trim(rest, " \t:").data();
      shell(t.substr(1), "!", filter ? Walker::Feed::data : Walker::Feed::none);
      return;
    }
    size_t n = 0;
    while (n < t.size() && is_alpha(t[n])) ++n;
    std::string name(t.substr(0, n));
    std::string_view raw_args = t.substr(n);
    // `:r !cmd` and `:r!cmd` read a command's output; `:w !cmd` writes to
    // one, while `:w!` is a forced write
    if (one_of(name, {"r", "re", "rea", "read"}) && sw(trim(raw_args), "!")) {
      shell(trim(raw_args).substr(1), name + " !");
      return;
    }
    if (one_of(name, {"w", "wr", "wri", "writ", "write"}) && sw(raw_args, " ") && sw(trim(raw_args), "!")) {
      shell(trim(raw_args).substr(1), name + " !", Walker::Feed::data);
      return;
    }
    std::string_view args = trim(raw_args);
    bool bang = sw(args, "!");
    if (bang) args = trim(args.substr(1));
    // the command's own text ends at an unescaped bar (not for the ones that take it all)
    size_t bar = std::string_view::npos;
    for (size_t k = 0; k < args.size(); ++k) {
      if (args[k] == '\\') {
        ++k;
      } else if (args[k] == '|') {
        bar = k;
        break;
      }
    }
    std::string_view own = bar == std::string_view::npos ? args : trim(args.substr(0, bar));
    std::string_view next = bar == std::string_view::npos ? std::string_view() : args.substr(bar + 1);
    if (one_of(name, {"w", "write", "wq", "x", "xit", "exi", "exit", "sav", "saveas", "up", "update", "wa", "wall",
                      "xa", "xall", "wqa", "wqall"}) &&
        !own.empty() && !sw(own, "++")) {
      w.write(c, with_value(value, std::string(own)));
    } else if (one_of(name, {"ter", "term", "terminal"})) {
      std::string_view cmd = own;
      while (sw(cmd, "++")) cmd = trim(cmd.substr(std::min(cmd.find(' '), cmd.size())));
      if (!cmd.empty()) shell(args, name);
      return;
    } else if (one_of(name, {"py",     "python", "pyt",   "py3",  "python3", "pyx",   "pythonx",
                             "pe",     "perl",   "rub",   "ruby", "lua",     "luado", "perldo",
                             "rubydo", "pydo",   "py3do", "tcl",  "tcldo",   "mz",    "mzscheme"})) {
      w.opaque(c, std::string(args));
      return;
    } else if (one_of(name, {"so", "source", "ru", "runtime", "luafile", "pyf", "pyfile", "py3f", "py3file", "rubyf",
                             "rubyfile", "perlfile", "tclfile", "Explore", "redir"})) {
      w.unknown(c, "runs editor commands from a file, or sends output where it cannot be judged");
    } else if (one_of(name, {"g", "gl", "glo", "global", "v", "vg", "vglobal"}) && !args.empty() && depth < 4) {
      char d = args[0];  // :g/pat/cmd
      size_t e = args.find(d, 1);
      if (e != std::string_view::npos) ex_commands(w, c, with_value(value, std::string(args.substr(e + 1))), depth + 1);
      return;
    } else if (one_of(name, {"argdo", "bufdo", "windo", "tabdo", "cdo", "cfdo", "ldo", "lfdo", "folddoopen",
                             "folddoclosed", "exe", "exec", "execute", "norm", "normal"}) &&
               depth < 4) {
      std::string_view body = args;
      if (one_of(name, {"exe", "exec", "execute"})) {
        std::optional<std::string> lit = string_arg(body, 0);
        bool plain = lit && trim(body).size() == lit->size() + 2;
        if (!plain) {
          w.unknown(c, "runs editor commands built at run time (execute)");
          return;
        }
        ex_commands(w, c, with_value(value, *lit), depth + 1);
      } else if (one_of(name, {"norm", "normal"})) {
        // keys typed in normal mode: `:` and `!` start commands
        if (body.find_first_of(":!") != std::string_view::npos) w.unknown(c, "types keys that may run commands");
      } else {
        ex_commands(w, c, with_value(value, std::string(body)), depth + 1);
      }
      return;
    } else if (one_of(name, {"se", "set", "setl", "setlocal", "setg", "setglobal"})) {
      for (std::string_view opt :
           {"shell", "sh=", "makeprg", "mp=", "grepprg", "gp=", "equalprg", "ep=", "formatprg", "fp=", "keywordprg",
            "kp=", "diffexpr", "patchexpr", "charconvert", "printexpr", "shellcmdflag", "shcf="})
        if (own.find(opt) != std::string_view::npos) w.unknown(c, "sets a program the editor runs");
    } else if (one_of(name, {"mak", "make", "lmak", "lmake"})) {
      shell("make " + std::string(own), name);
    }
    // function calls anywhere in the command: call system('...'), let x = systemlist("...")
    for (std::string_view fn : {"system(", "systemlist(", "job_start(", "jobstart(", "termopen(", "libcall(",
                                "libcallnr(", "os.execute(", "vim.fn.system(", "io.popen("}) {
      size_t at = own.find(fn);
      if (at == std::string_view::npos) continue;
      std::optional<std::string> lit = string_arg(own, at + fn.size());
      if (lit) {
        shell(*lit, std::string(fn.substr(0, fn.size() - 1)) + "()");
      } else {
        w.unknown(c, "the editor runs a command built at run time");
      }
    }
    rest = next;
  }
}

void rule_editor(Walker& w, Call& c) {
  bool ex_mode = one_of(c.name, {"ex", "exim"});
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    ex_mode = ex_mode || (sw(v, "-") && !sw(v, "--") && v.find_first_of("eE") != std::string::npos && v.size() < 5);
  }
  bool end = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (end || (!sw(v, "-") && !sw(v, "+"))) {
      w.write(c, f);
      continue;
    }
    if (v == "--") {
      end = true;
    } else if (one_of(v, {"-c",       "--cmd",       "-T",
                          "-i",       "-q",          "--servername",
                          "--listen", "-t",          "--startuptime",
                          "--eval",   "-eval",       "--execute",
                          "-execute", "-a",          "--alternate-editor",
                          "-L",       "--directory", "-ex",
                          "-iex",     "-f",          "--funcall"})) {
      if (one_of(v, {"-W", "-w", "--startuptime"}) && i + 1 < c.argv.size()) w.write(c, c.argv[i + 1]);
      ++i;  // the value; options that run commands: the table (rules/commands.cpp)
    } else if (one_of(v, {"-S", "-u", "-U", "-l", "--load", "--script", "-script", "-x", "--remote-send",
                          "--remote-expr", "-ll"}) &&
               !(c.name.starts_with("vi") && v == "-x")) {
      if (!(one_of(v, {"-u", "-U"}) && i + 1 < c.argv.size() &&
            one_of(c.argv[i + 1].value, {"NONE", "NORC", "DEFAULTS"})))
        w.unknown(c, "runs editor commands or code from a file");
      ++i;
    } else if (v == "-s" && !ex_mode) {
      w.unknown(c, "types keys read from a file");
      ++i;
    } else if (one_of(v, {"-W", "-w"})) {
      if (i + 1 < c.argv.size()) w.write(c, c.argv[++i]);
    } else if (v.size() > 2 && v[0] == '-' && v[1] != '-' && std::all_of(v.begin() + 1, v.end(), is_alpha) &&
               c.name.find("emacs") == std::string::npos) {
      // a cluster of vi's one-letter options, `ex -sc CMD`: the one that
      // takes a value takes the rest of the word or the next one
      for (size_t k = 1; k < v.size(); ++k) {
        char ch = v[k];
        if (std::string_view("cSTuUiqwWs").find(ch) == std::string_view::npos || (ch == 's' && ex_mode)) continue;
        bool attached = k + 1 < v.size();
        if (!attached && i + 1 < c.argv.size()) ++i;
        if (ch == 'S' || ((ch == 'u' || ch == 'U') && !(!attached && one_of(c.argv[i].value, {"NONE", "NORC"}))))
          w.unknown(c, "runs editor commands or code from a file");
        if (ch == 's') w.unknown(c, "types keys read from a file");
        if ((ch == 'w' || ch == 'W') && !attached) w.write(c, c.argv[i]);
        break;
      }
    }
  }
  w.find(c, V::confirm, "edits files");
}
}  // namespace kai::shell
