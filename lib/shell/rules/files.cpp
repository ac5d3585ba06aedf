// Files: deletion, copies and moves, permissions, archives and the other
// programs that write files they are given (editors: rules/editors.cpp).

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

// ---- deletion ----

namespace {

// Top-level folders of the system (and of macOS): deleting one, or anything
// in one, is never a command's business.
bool system_folder(std::string_view first) {
  static constexpr std::string_view k_system[] = {
      "bin",     "boot",  "dev",   "etc",        "lib",   "lib32",  "lib64",   "libx32",       "opt",
      "proc",    "root",  "run",   "sbin",       "srv",   "sys",    "usr",     "var",          "snap",
      "nix",     "mnt",   "media", "home",       "Users", "System", "Library", "Applications", "Volumes",
      "private", "cores", "efi",   "lost+found", "tmp",   "gnu",    "store",   "Network"};
  return std::find(std::begin(k_system), std::end(k_system), first) != std::end(k_system);
}

bool temp_root(std::string_view p) { return p == "/tmp" || p == "/var/tmp" || p == "/dev/shm"; }

bool under_temp_root(std::string_view p) {
  for (std::string_view t : {"/tmp/", "/var/tmp/", "/dev/shm/"})
    if (p.starts_with(t) && p.size() > t.size()) return true;
  return false;
}

// Caches in a home folder hold nothing that a download does not give back.
bool cache_in_home(std::string_view rest) {
  for (std::string_view c : {".cache/", ".npm/_cacache/", ".npm/_npx/", "Library/Caches/", ".gradle/caches/",
                             ".cargo/registry/cache/", ".m2/repository/", "go/pkg/mod/cache/", ".yarn/berry/cache/",
                             ".pnpm-store/", ".bun/install/cache/", ".nuget/packages/", ".cache"})
    if (rest.starts_with(c) && rest.size() > c.size()) return true;
  return false;
}

// A path component that matches every name: `*`, `.*`, `?*`, `.[!.]*`.
bool matches_all(std::string_view comp) {
  std::string rest;
  for (size_t i = 0; i < comp.size(); ++i) {
    if (comp[i] == '[') {
      size_t close = comp.find(']', i + 2);
      if (close == std::string_view::npos) return false;
      i = close;
    } else if (comp[i] != '*' && comp[i] != '?') {
      rest += comp[i];
    }
  }
  return rest.empty() || rest == "." || rest == "..";
}

}  // namespace

Reach deletion_reach(const Walker& w, const Field& f) {
  if (f.dynamic || f.synthetic || f.value.empty()) return {Reach::runtime, "a path only known at run time"};
  std::string value = f.value;
  bool everything = false;  // a pattern that matches all of a folder: the folder itself
  if (f.glob) {
    size_t g = value.find_first_of("*?[");
    size_t slash = value.rfind('/', g);
    std::string dir = slash == std::string::npos ? "" : value.substr(0, slash + 1);
    std::string pattern = slash == std::string::npos ? value : value.substr(slash + 1);
    everything = true;
    for (const std::string& comp : split_components(pattern)) everything = everything && matches_all(comp);
    value = dir.empty() ? "." : dir;
    Field folder = with_value(f, value);
    folder.glob = false;
    Reach in = deletion_reach(w, folder);
    if (everything) {
      if (in.kind == Reach::root) return {Reach::guarded, "everything in the root"};
      return in;
    }
    // names matched inside the folder
    if (in.kind == Reach::root) return {Reach::inside, ""};
    if (in.kind == Reach::guarded && temp_root(in.path)) return {Reach::outside, "", in.path};
    return in;
  }
  std::optional<std::string> abs = w.absolute(f);
  if (!abs) return {Reach::runtime, "a path in a folder only known at run time"};
  const std::string& p = *abs;
  const std::string& root = w.ctx().root;
  const std::string& home = w.ctx().home;
  if (p.empty() || p == ".") return {Reach::root, "the root itself"};
  if (p[0] == '~') {  // the home folder, not known here
    size_t slash = p.find('/');
    if (slash == std::string::npos) return {Reach::guarded, "the home folder", p};
    if (p[1] == '/' && cache_in_home(p.substr(2))) return {Reach::outside, "", p};
    return {Reach::guarded, "the home folder", p};
  }
  if (p[0] != '/') {  // relative, the root not known: the run starts in it
    if (p.starts_with("..")) {
      std::vector<std::string> parts = split_components(p);
      bool up_only = std::all_of(parts.begin(), parts.end(), [](const std::string& x) { return x == ".."; });
      return up_only ? Reach{Reach::guarded, "a parent of the root", p} : Reach{Reach::outside, "", p};
    }
    return {Reach::inside, "", p};
  }
  if (!root.empty() && w.in_root(p))
    return p == root ? Reach{Reach::root, "the root itself", p} : Reach{Reach::inside, "", p};
  if (p == "/") return {Reach::guarded, "'/'", p};
  if (!root.empty() && root.starts_with(p + "/")) return {Reach::guarded, "a parent of the root", p};
  if (under_temp_root(p)) return {Reach::outside, "", p};
  if (!home.empty() && (p == home || home.starts_with(p + "/"))) return {Reach::guarded, "the home folder", p};
  if (!home.empty() && p.starts_with(home + "/")) {
    if (cache_in_home(p.substr(home.size() + 1))) return {Reach::outside, "", p};
    return {Reach::guarded, "the home folder", p};
  }
  std::vector<std::string> parts = split_components(p);
  if (!parts.empty() && system_folder(parts[0])) {
    bool in_home = (parts[0] == "home" || parts[0] == "Users") && parts.size() > 1;
    return {Reach::guarded, in_home ? "a home folder" : "a system folder", p};
  }
  return {Reach::outside, "", p};
}

void judge_deletion(Walker& w, Call& c, const Field& f, bool forced) {
  Reach r = deletion_reach(w, f);
  switch (r.kind) {
    case Reach::runtime:
      if (forced) {
        w.find(c, V::blocked, "recursive or forced deletion of " + r.what + " (" + what_of(f) + ")");
        return;
      }
      w.write(c, f);
      return;
    case Reach::root: w.find(c, V::blocked, "deletion of the root itself ('" + f.value + "')"); return;
    case Reach::guarded:
      w.find(c, V::blocked, "deletion of " + r.what + (r.what == "'" + f.value + "'" ? "" : " ('" + f.value + "')"));
      return;
    case Reach::outside:
      w.find(c, V::confirm,
             "deletion outside the root: the sandbox refuses it, and it cannot be undone ('" + f.value + "')");
      w.record_target(c, r.path.empty() ? f.value : r.path);
      return;
    case Reach::inside:
      // confirm tier through write(), which blocks guarded paths; the run's
      // snapshot undoes the rest
      w.write(c, f);
      return;
  }
}

void rule_rm(Walker& w, Call& c) {
  bool recursive = false, force = false, no_preserve = false, end = false;
  std::vector<size_t> targets;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (!end && v == "--") {
      end = true;
    } else if (!end && v.size() > 1 && v[0] == '-' && !c.argv[i].dynamic) {
      if (v[1] == '-') {
        recursive = recursive || long_is(v, "--recursive", 3);
        force = force || long_is(v, "--force", 3);
        no_preserve = no_preserve || long_is(v, "--no-preserve-root", 4);
      } else {
        recursive = recursive || v.find_first_of("rR") != std::string::npos;
        force = force || v.find('f') != std::string::npos;
      }
    } else {
      targets.push_back(i);
    }
  }
  if (no_preserve) w.find(c, V::blocked, "deletion with --no-preserve-root");
  for (size_t t : targets) judge_deletion(w, c, c.argv[t], recursive || force);
}

// Programs that delete what they are given, recursively (rimraf, del, the
// trash commands, secure deletion): judged by the one deletion rule, as
// `rm -rf` of the same paths.
void rule_deleter(Walker& w, Call& c) {
  bool globs = c.name == "del" || c.name == "del-cli";  // del expands its patterns itself
  std::vector<size_t> targets;
  bool end = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (!end && v == "--") {
      end = true;
    } else if (!end && v.size() > 1 && v[0] == '-' && !f.dynamic) {
      if (one_of(v, {"--dry-run", "-d", "--help", "-h", "--version"}) && (globs || v != "-d")) {
        w.find(c, V::ask, "only describes what it would do (help, version or a dry run)");
        return;
      }
      if (one_of(v, {"--glob", "-g", "-G"})) globs = true;
      if (v == "--no-preserve-root") w.find(c, V::blocked, "deletion with --no-preserve-root");
    } else if (!(globs && sw(v, "!"))) {  // del's `!pattern` keeps what it names
      targets.push_back(i);
    }
  }
  for (size_t t : targets) {
    Field f = c.argv[t];
    f.glob = f.glob || (globs && has_glob_chars(f.value));
    judge_deletion(w, c, f, true);
  }
}

void rule_write_positionals(Walker& w, Call& c, const Spec& spec) {
  Opts o = parse_opts(c.argv, 1, spec);
  for (size_t i : o.pos) w.write(c, c.argv[i]);
}

void rule_shred(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"nsx", {"--iterations", "--size", "--random-source"}});
  for (size_t i : o.pos) {
    if (sw(c.argv[i].value, "/dev/")) {
      w.find(c, V::blocked, "wipes the device '" + c.argv[i].value + "'");
    } else {
      w.write(c, c.argv[i]);
    }
  }
}

void rule_find(Walker& w, Call& c) {
  size_t i = 1;
  while (i < c.argv.size() && (one_of(c.argv[i].value, {"-H", "-L", "-P", "-D"}) || sw(c.argv[i].value, "-O")))
    i += c.argv[i].value == "-D" ? 2 : 1;
  std::vector<size_t> starts;
  for (; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (sw(v, "-") || one_of(v, {"(", ")", "!", ","})) break;
    starts.push_back(i);
  }
  std::vector<Field> roots;
  roots.reserve(starts.size() + 1);
  for (size_t s : starts) roots.push_back(c.argv[s]);
  if (roots.empty()) roots.push_back(literal_field("."));  // find's default
  // What `{}` stands for: a path found under the one starting folder, named
  // by the -name pattern when there is one. Inside the root it is a path
  // like any other; elsewhere, or with several starting folders, it is only
  // known at run time.
  // Only a name or a path pattern narrows what is found to names that can
  // be judged (a time, a size or a type reaches .git as well); a negation
  // (`! -name x`) reaches everything else.
  bool filtered = false, negated = false;
  std::optional<Field> name;
  for (size_t k = i; k < c.argv.size(); ++k) {
    const std::string& v = c.argv[k].value;
    if (one_of(v, {"!", "-not"})) negated = true;
    if (one_of(v, {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"}) && k + 1 < c.argv.size() &&
        !c.argv[k + 1].dynamic) {
      filtered = true;
      name = c.argv[k + 1];
    }
  }
  filtered = filtered && !negated;
  std::optional<Field> found;
  if (roots.size() == 1) {
    Reach r = deletion_reach(w, roots[0]);
    if (r.kind == Reach::inside || r.kind == Reach::outside || (r.kind == Reach::root && filtered)) {
      std::string dir = roots[0].value == "." ? "" : roots[0].value;
      if (!dir.empty() && dir.back() != '/') dir += '/';
      std::string pattern = filtered ? name->value : "{}";
      if (sw(pattern, "./")) pattern = pattern.substr(2);
      if (sw(pattern, "*/")) pattern = pattern.substr(2);  // -path '*/.git/*': below the start
      found = literal_field(pattern.starts_with("/") ? pattern : dir + pattern);
      found->glob = filtered && has_glob_chars(pattern);
    } else if (r.kind == Reach::root || r.kind == Reach::guarded) {
      found = roots[0];  // every path under it: as good as the folder itself
    }
  }
  bool del = false, secret_name = false;
  for (; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"-exec", "-execdir", "-ok", "-okdir"})) {
      Args inner;
      size_t j = i + 1;
      for (; j < c.argv.size() && c.argv[j].value != ";" && c.argv[j].value != "+"; ++j)
        inner.push_back(found && c.argv[j].value == "{}" ? *found : replace_token(c.argv[j], "{}"));
      i = j;
      if (secret_name && !inner.empty() && !names_without_reading(basename_of(inner[0].value)))
        w.find(c, V::blocked, "reads secret files found by name");
      bool dir = v == "-execdir" || v == "-okdir";
      exec_inner(w, c, std::move(inner), "find " + v, dir ? std::optional<std::string>("") : std::nullopt);
      c.wrapper = false;  // find itself is a leaf too
    } else if (v == "-delete") {
      del = true;
    } else if (one_of(v, {"-fprint", "-fprint0", "-fls", "-fprintf"}) && i + 1 < c.argv.size()) {
      w.write(c, c.argv[++i]);
      if (v == "-fprintf") ++i;
    } else if (one_of(v, {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename"}) &&
               i + 1 < c.argv.size()) {
      const Field& pat = c.argv[++i];
      secret_name = secret_name || (w.ctx().is_secret && !pat.dynamic && w.ctx().is_secret(pat.value));
    }
  }
  if (!del) return;
  for (const Field& r : roots) {
    Reach reach = deletion_reach(w, r);
    if (reach.kind == Reach::root && filtered) {
      w.find(c, V::confirm, "deletes the files it finds in the root (find -delete)");
      if (found) w.write(c, *found);
    } else {
      judge_deletion(w, c, r, true);
    }
  }
}

// ---- copies and moves ----

void rule_copy(Walker& w, Call& c) {
  bool install = c.name == "install";
  Opts o = parse_opts(
      c.argv, 1,
      Spec{install ? "gmoSt" : "tS",
           {"--target-directory", "--suffix", "--mode", "--owner", "--group", "--strip-program", "--context"}});
  std::vector<const Field*> pos;
  for (size_t i : o.pos) pos.push_back(&c.argv[i]);
  if (install && o.has({"-d", "--directory"})) {
    for (const Field* p : pos) w.write(c, *p);
    return;
  }
  const Field* dir = o.value({"-t", "--target-directory"});
  std::vector<const Field*> srcs = pos;
  std::optional<Field> dest;
  if (dir) {
    dest = *dir;
  } else if (c.name == "ln" && pos.size() == 1) {
    dest = literal_field(".");
  } else if (!pos.empty()) {
    dest = *pos.back();
    srcs.pop_back();
  }
  if (!dest) return;
  bool into_dir = dir || srcs.size() > 1 || dest->value == "." || dest->value == ".." ||
                  (!dest->value.empty() && dest->value.back() == '/');
  if (!into_dir) w.write(c, *dest);
  for (const Field* s : srcs) {
    if (into_dir || o.has({"-r", "-R", "-a", "--recursive", "--archive"})) {
      std::string d = dest->value;
      if (!d.empty() && d.back() != '/') d += '/';
      Field t = with_value(*dest, d + path_basename(s->value));
      t.glob = t.glob || s->glob;
      t.dynamic = t.dynamic || s->dynamic || s->synthetic;
      if (into_dir || !t.dynamic) w.write(c, t);
    }
    if (c.name == "mv") w.write(c, *s);  // moved away: its old place changes too
  }
}

// ---- permissions ----

namespace {

bool world_writable(std::string_view mode) {
  if (!mode.empty() && std::all_of(mode.begin(), mode.end(), is_digit)) {
    char others = mode.back();
    return mode.size() >= 3 && (others == '2' || others == '3' || others == '6' || others == '7');
  }
  size_t start = 0;
  while (start <= mode.size()) {
    size_t comma = mode.find(',', start);
    std::string_view clause =
        mode.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    size_t op = clause.find_first_of("+=");
    std::string_view who = clause.substr(0, op == std::string_view::npos ? 0 : op);
    if (op != std::string_view::npos && clause.find('w', op) != std::string_view::npos &&
        (who.empty() || who.find_first_of("oa") != std::string_view::npos))
      return true;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return false;
}
}  // namespace

void rule_chmod(Walker& w, Call& c) {
  bool recursive = false, reference = false;
  std::optional<std::string> mode;
  std::vector<size_t> targets;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (v == "-R" || long_is(v, "--recursive", 4)) {
      recursive = true;
    } else if (sw(v, "--reference")) {
      reference = true;
    } else if (sw(v, "-") && v.size() > 1 && v.find_first_not_of("Rcfvh", 1) == std::string::npos) {
      recursive = recursive || v.find('R') != std::string::npos;
    } else if (sw(v, "--")) {
      continue;
    } else if (!mode && !reference && c.name != "chattr") {
      mode = v;
    } else {
      targets.push_back(i);
    }
  }
  for (size_t t : targets) {
    const Field& f = c.argv[t];
    bool broad = one_of(f.value, {"/", "~", ".", "..", "*"}) || f.tilde || f.dynamic ||
                 (sw(f.value, "/") && !w.disposable(f)) || sw(normalize(f.value), "..");
    if (recursive && (broad || (c.name == "chmod" && mode && world_writable(*mode))))
      w.find(c, V::blocked, "permission blast: recursive " + c.name + " of '" + f.value + "'");
    w.write(c, f, V::confirm, Content::kept);
  }
}

// ---- archives and compression ----

void rule_tar(Walker& w, Call& c) {
  bool create = false, extract = false, absolute = false;
  std::optional<Field> file, dir;
  bool old_style = false;
  auto value_opt = [&](char ch, const Field& v) {
    if (ch == 'f') file = v;
    if (ch == 'C') dir = v;
    // `tar xIf prog a.tar`: the other spellings are the table's (rules/commands.cpp)
    if (old_style && (ch == 'I' || ch == 'F')) run_command_option(w, c, "", ch == 'I' ? "-I" : "-F", v);
  };
  auto mode = [&](char ch) {
    create = create || ch == 'c' || ch == 'r' || ch == 'u' || ch == 'A';
    extract = extract || ch == 'x';
    absolute = absolute || ch == 'P';
  };
  static constexpr std::string_view k_takes = "fCTXbKNVLgHIF";
  size_t i = 1;
  if (c.argv.size() > 1 && !c.argv[1].value.empty() && c.argv[1].value[0] != '-') {  // old style: tar xzf a.tar
    std::string cluster = c.argv[1].value;
    i = 2;
    old_style = true;
    for (char ch : cluster) {
      mode(ch);
      if (k_takes.find(ch) != std::string_view::npos && i < c.argv.size()) value_opt(ch, c.argv[i++]);
    }
    old_style = false;
  }
  static const std::map<std::string_view, char> k_long = {
      {"--file", 'f'},        {"--directory", 'C'},         {"--use-compress-program", 'I'},
      {"--info-script", 'F'}, {"--new-volume-script", 'F'}, {"--to-command", 'T'},
      {"--rsh-command", 'R'}, {"--checkpoint-action", 'K'}, {"--index-file", 'W'},
      {"--files-from", 'Z'},  {"--exclude-from", 'Z'}};
  for (; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (sw(v, "--")) {
      std::string name = v.substr(0, v.find('='));
      mode(name == "--create" || name == "--append" || name == "--update" ? 'c'
           : name == "--extract" || name == "--get"                       ? 'x'
           : name == "--absolute-names"                                   ? 'P'
                                                                          : ' ');
      auto it = k_long.find(name);
      if (it == k_long.end()) continue;
      Field val = v.find('=') != std::string::npos ? with_value(f, v.substr(v.find('=') + 1))
                  : i + 1 < c.argv.size()          ? c.argv[++i]
                                                   : Field{};
      if (it->second == 'W') w.write(c, val);
      if (one_of(std::string_view(&it->second, 1), {"f", "C", "I", "F"})) value_opt(it->second, val);
    } else if (v.size() > 1 && v[0] == '-') {
      for (size_t j = 1; j < v.size(); ++j) {
        mode(v[j]);
        if (k_takes.find(v[j]) == std::string_view::npos) continue;
        if (j + 1 < v.size()) {
          value_opt(v[j], with_value(f, v.substr(j + 1)));
        } else if (i + 1 < c.argv.size()) {
          value_opt(v[j], c.argv[++i]);
        }
        break;
      }
    }
  }
  if (create && file && file->value != "-") w.write(c, *file);
  if (create && std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "--remove-files"; })) {
    // the files it archives are deleted: every operand that is not an option's value
    Opts ops = parse_opts(
        c.argv, 1,
        Spec{"fCTXbKNVLgHIF",
             {"--file", "--directory", "--files-from", "--exclude", "--exclude-from", "--transform", "--owner",
              "--group", "--mode", "--mtime", "--newer", "--use-compress-program", "--to-command"}});
    for (size_t k : ops.pos)
      if (!(k == 1 && !sw(c.argv[1].value, "-"))) judge_deletion(w, c, c.argv[k], true);
  }
  if (extract) {
    w.find(c, V::confirm, "extracts files");
    if (dir) w.write(c, *dir);
    if (absolute) w.unknown(c, "extracts absolute paths named in the archive");
  }
}

void rule_unzip(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"dPxX", {}});
  if (o.has({"-p", "-l", "-t", "-v", "-Z", "-z"})) return;
  w.find(c, V::confirm, "extracts files");
  if (const Field* d = o.value({"-d"})) w.write(c, *d);
}

void rule_zip(Walker& w, Call& c) {
  Args a;  // without -TT CMD, which the table judges (rules/commands.cpp)
  for (size_t i = 0; i < c.argv.size(); ++i) {
    if (i > 0 && one_of(c.argv[i].value, {"-TT", "--unzip-command"})) {
      ++i;
      continue;
    }
    a.push_back(c.argv[i]);
  }
  Opts o = parse_opts(a, 1, Spec{"bnPtxiO", {"--unzip-command"}});
  if (!o.pos.empty()) w.write(c, a[o.pos[0]]);
  if (o.has({"-m", "--move"}))  // the files it adds are deleted
    for (size_t k = 1; k < o.pos.size(); ++k) judge_deletion(w, c, a[o.pos[k]], o.has({"-r", "--recurse-paths"}));
}

void rule_compress(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"oSbLT", {"--suffix", "--output"}});
  if (o.has({"-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test"})) return;
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  for (size_t i : o.pos) w.write(c, c.argv[i]);
}

void rule_patch(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1, Spec{"BDdFgiopruVYzR", {"--output", "--input", "--directory", "--strip", "--backup-if-mismatch"}});
  if (o.has({"--dry-run", "-C", "--check"})) return;
  w.find(c, V::confirm, "patches files");
  std::optional<std::string> saved;
  if (const Field* d = o.value({"-d", "--directory"})) saved = w.enter_cwd(d->dynamic ? "" : d->value);
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
  if (!o.pos.empty()) w.write(c, c.argv[o.pos[0]]);
  if (o.value({"-d", "--directory"})) w.restore_cwd(saved);
}

// ---- other writers ----

void rule_sort(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"kotST",
                           {"--key", "--output", "--field-separator", "--buffer-size", "--temporary-directory",
                            "--compress-program", "--files0-from", "--batch-size", "--parallel", "--random-source"}});
  if (const Field* out = o.value({"-o", "--output"})) w.write(c, *out);
}

void rule_uniq(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1,
                      Spec{"fsw", {"--skip-fields", "--skip-chars", "--check-chars", "--group", "--all-repeated"}});
  if (o.pos.size() >= 2) w.write(c, c.argv[o.pos[1]]);
}

void rule_split(Walker& w, Call& c) {
  Opts o = parse_opts(
      c.argv, 1,
      Spec{"abCln",
           {"--bytes", "--lines", "--line-bytes", "--number", "--suffix-length", "--additional-suffix", "--filter"}});
  if (o.value({"--filter"})) return;  // the filter writes, and is judged (rules/commands.cpp)
  w.write(c, o.pos.size() >= 2 ? c.argv[o.pos[1]] : literal_field("x"));
}

}  // namespace kai::shell
