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

void rule_make(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"CfIjloW",
                           {"--directory", "--file", "--makefile", "--include-dir", "--jobs", "--load-average",
                            "--old-file", "--what-if", "--eval"}});
  if (o.has({"--eval"})) w.unknown(c, "make --eval adds rules that cannot be judged");
  for (const Field* f : o.values({"-f", "--file", "--makefile"}))
    if (f->value == "-" || f->value == "/dev/stdin" || f->procsub || f->dynamic)
      w.unknown(c, "make reads rules that cannot be judged");
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
