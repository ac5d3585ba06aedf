// Build tools: formatters that rewrite files in place, compilers, make and cmake.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

struct Formatter {
  std::string_view name;
  List writes_with;  // writes only with one of these
  List read_only;    // never writes with one of these
  size_t skip = 0;   // positionals that are not files (yq's expression)
};

const Formatter* formatter(std::string_view name) {
  // clang-format off
  static const Formatter k_fmt[] = {
      {"clang-format", {"-i"}, {}},  {"gofmt", {"-w"}, {}}, {"rustfmt", {}, {"--check"}},
      {"black", {}, {"--check", "--diff"}}, {"prettier", {"--write", "-w"}, {}}, {"eslint", {"--fix"}, {}},
      {"isort", {}, {"--check-only", "-c", "--check", "--diff"}}, {"autopep8", {"-i", "--in-place"}, {}},
      {"yapf", {"-i", "--in-place"}, {}}, {"shfmt", {"-w", "--write"}, {}}, {"stylua", {}, {"--check"}},
      {"dos2unix", {}, {}}, {"unix2dos", {}, {}}, {"biome", {"--write", "--apply", "--fix"}, {}},
      {"clang-tidy", {"--fix", "-fix", "--fix-errors", "-fix-errors"}, {}}, {"standard", {"--fix"}, {}},
      {"yq", {"-i", "--inplace"}, {}, 1}, {"sponge", {}, {}}, {"ruff", {"--fix", "format"}, {"--check", "--diff"}},
  };
  // clang-format on
  for (const Formatter& f : k_fmt)
    if (f.name == name) return &f;
  return nullptr;
}

void rule_formatter(Walker& w, Call& c, const Formatter& f) {
  bool writes = f.writes_with.size() == 0;
  std::vector<size_t> files;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    std::string name = c.argv[i].value.substr(0, c.argv[i].value.find('='));
    if (one_of(name, f.writes_with)) writes = true;
    if (one_of(name, f.read_only)) return;
    if (!sw(c.argv[i].value, "-")) files.push_back(i);
  }
  if (!writes) return;
  w.find(c, V::confirm, "rewrites files in place");
  for (size_t k = f.skip; k < files.size(); ++k) w.write(c, c.argv[files[k]]);
}

void rule_compiler(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "-o" && i + 1 < c.argv.size()) {
      w.write(c, c.argv[++i], V::ask);
    } else if (sw(v, "-o") && v.size() > 2 && c.name != "go") {
      w.write(c, with_value(c.argv[i], v.substr(2)), V::ask);
    } else if (sw(v, "-wrapper") || sw(v, "-fplugin=") || sw(v, "-specs=")) {
      w.unknown(c, "loads or runs another program (" + v + ")");
    }
  }
}

namespace {

// The recipes of makefile text given on the command line (-f - with a
// here-document, --eval): each is shell text. Make's own variables stand as
// values only known at run time; `$$` is a `$` for the shell.
void make_recipes(Walker& w, Call& c, const std::string& text) {
  std::vector<std::string> recipes;
  std::string cur;
  bool continued = false;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    std::string body;
    if (continued) {
      body = line;
    } else if (sw(line, "\t")) {
      body = line.substr(1);
    } else if (size_t colon = line.find(':');
               colon != std::string::npos && line.find(';', colon) != std::string::npos) {
      body = line.substr(line.find(';', colon) + 1);  // target: prerequisites ; recipe
    } else {
      continue;
    }
    continued = !body.empty() && body.back() == '\\';
    cur += continued ? body.substr(0, body.size() - 1) + " " : body;
    if (continued) continue;
    recipes.push_back(cur);
    cur.clear();
  }
  if (!cur.empty()) recipes.push_back(cur);
  for (std::string r : recipes) {
    size_t lead = r.find_first_not_of("@+- \t");
    r = lead == std::string::npos ? "" : r.substr(lead);
    std::string shell;
    for (size_t k = 0; k < r.size(); ++k) {
      if (r[k] != '$') {
        shell += r[k];
      } else if (k + 1 < r.size() && r[k + 1] == '$') {
        shell += '$';
        ++k;
      } else {
        shell += "\"${MAKE_VARIABLE}\"";  // $(VAR), ${VAR}, $@, $<
        if (k + 1 < r.size() && (r[k + 1] == '(' || r[k + 1] == '{')) {
          char close = r[k + 1] == '(' ? ')' : '}';
          size_t e = r.find(close, k + 2);
          k = e == std::string::npos ? r.size() : e;
        } else {
          ++k;
        }
      }
    }
    if (!trim(shell).empty()) w.judge(c, "a make recipe", literal_field(shell), Walker::Feed::none);
  }
}

}  // namespace

void rule_make(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"CfIjloW",
                           {"--directory", "--file", "--makefile", "--include-dir", "--jobs", "--load-average",
                            "--old-file", "--what-if", "--eval"}});
  for (const Field* e : o.values({"--eval"})) {
    if (e->dynamic) {
      w.unknown(c, "make --eval adds rules only known at run time");
    } else {
      make_recipes(w, c, e->value);
    }
  }
  for (const Field* f : o.values({"-f", "--file", "--makefile"})) {
    bool stdin_file = f->value == "-" || f->value == "/dev/stdin";
    if (stdin_file && c.in.text && !c.in.computed) {
      make_recipes(w, c, *c.in.text);
    } else if (f->procsub && f->content && !f->download) {
      make_recipes(w, c, *f->content);
    } else if (stdin_file && c.in.download) {
      w.find(c, V::blocked, "runs the recipes of a downloaded makefile");
    } else if (stdin_file || f->procsub || f->dynamic) {
      w.unknown(c, "make reads rules that cannot be judged");
    }
  }
  for (size_t i : o.pos)
    if (one_of(c.argv[i].value, {"install", "uninstall"}))
      w.find(c, V::confirm, "installs files (" + c.argv[i].value + ")");
}

void rule_cmake(Walker& w, Call& c) {
  if (c.argv.size() > 2 && c.argv[1].value == "-E") {
    std::string tool = c.argv[2].value;
    Args rest = slice(c.argv, 3);
    Args inner;
    if (one_of(tool, {"rm", "remove", "remove_directory", "rmdir"})) {
      inner.push_back(literal_field("rm"));
      if (tool == "remove_directory" || tool == "rmdir") inner.push_back(literal_field("-r"));
    } else if (one_of(tool, {"env", "tar", "chdir", "copy", "copy_directory", "copy_if_different", "make_directory",
                             "touch", "touch_nocreate", "rename", "create_symlink", "create_hardlink", "time"})) {
      static const std::map<std::string_view, std::string_view> k_as = {// clang-format off
          {"copy", "cp"}, {"copy_directory", "cp"}, {"copy_if_different", "cp"}, {"make_directory", "mkdir"},
          {"touch_nocreate", "touch"}, {"rename", "mv"}, {"create_symlink", "ln"}, {"create_hardlink", "ln"},
          {"chdir", "env"}};
                                                                        // clang-format on
      auto it = k_as.find(tool);
      inner.push_back(literal_field(std::string(it == k_as.end() ? std::string_view(tool) : it->second)));
      if (tool == "chdir" && !rest.empty()) {
        inner.push_back(literal_field("-C"));
      }
    } else {
      return;  // cat, echo, compare_files, sha256sum, ...
    }
    inner.insert(inner.end(), rest.begin(), rest.end());
    c.info = w.run(c, std::move(inner), c.in);
    return;
  }
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "--install" || (v == "--target" && i + 1 < c.argv.size() && c.argv[i + 1].value == "install"))
      w.find(c, V::confirm, "installs files");
  }
}

}  // namespace kai::shell
