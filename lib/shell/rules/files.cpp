// Files: deletion, copies and moves, permissions, archives and the other
// programs that write files they are given.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

// ---- deletion ----

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
  if (recursive || force) {
    for (size_t t : targets) {
      const Field& f = c.argv[t];
      if (w.disposable(f)) continue;
      if (f.dynamic || f.synthetic) {
        std::string what = f.raw.empty() ? "names read from its input" : "'" + f.raw + "'";
        w.find(c, V::blocked, "recursive or forced deletion of a path only known at run time (" + what + ")");
      } else if (f.glob || f.tilde || !w.inside_root(f)) {
        w.find(c, V::blocked, "recursive or forced deletion outside a build or temp folder ('" + f.value + "')");
      }
      // A static path inside root: confirm tier through write() below, which
      // blocks guarded paths; the run's snapshot undoes the rest.
    }
  }
  for (size_t t : targets) w.write(c, c.argv[t]);
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
  bool del = false, secret_name = false;
  for (; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"-exec", "-execdir", "-ok", "-okdir"})) {
      Args inner;
      size_t j = i + 1;
      for (; j < c.argv.size() && c.argv[j].value != ";" && c.argv[j].value != "+"; ++j)
        inner.push_back(replace_token(c.argv[j], "{}"));
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
  std::vector<Field> roots;
  roots.reserve(starts.size() + 1);
  for (size_t s : starts) roots.push_back(c.argv[s]);
  if (roots.empty()) roots.push_back(literal_field("."));  // find's default
  for (const Field& r : roots) {
    if (!w.disposable(r))
      w.find(c, V::blocked, "recursive deletion (find -delete) outside a build or temp folder ('" + r.value + "')");
    w.write(c, r);
  }
}

// ---- copies and moves ----

void rule_copy(Walker& w, Call& c) {
  bool install = c.name == "install";
  Opts o = parse_opts(
      c.argv, 1,
      Spec{install ? "gmoSt" : "tS",
           {"--target-directory", "--suffix", "--mode", "--owner", "--group", "--strip-program", "--context"}});
  if (const Field* prog = o.value({"--strip-program"})) w.judge(c, "install --strip-program", *prog);
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
  auto value_opt = [&](char ch, const Field& v) {
    if (ch == 'f') file = v;
    if (ch == 'C') dir = v;
    if (ch == 'I') w.judge(c, "tar --use-compress-program", v);
    if (ch == 'F') w.judge(c, "tar --info-script", v);
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
    for (char ch : cluster) {
      mode(ch);
      if (k_takes.find(ch) != std::string_view::npos && i < c.argv.size()) value_opt(ch, c.argv[i++]);
    }
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
      if (it->second == 'T') w.judge(c, "tar --to-command", val);
      if (it->second == 'R') w.judge(c, "tar --rsh-command", val);
      if (it->second == 'W') w.write(c, val);
      if (it->second == 'K' && sw(val.value, "exec="))
        w.judge(c, "tar --checkpoint-action=exec", with_value(val, val.value.substr(5)));
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
  Opts o = parse_opts(c.argv, 1, Spec{"bnPtxiO", {"--unzip-command"}});
  if (const Field* cmd = o.value({"--unzip-command"})) w.judge(c, "zip --unzip-command", *cmd);
  if (!o.pos.empty()) w.write(c, c.argv[o.pos[0]]);
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
  if (const Field* prog = o.value({"--compress-program"})) w.judge(c, "sort --compress-program", *prog);
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
  if (const Field* filter = o.value({"--filter"})) w.judge(c, "split --filter", *filter);
  w.write(c, o.pos.size() >= 2 ? c.argv[o.pos[1]] : literal_field("x"));
}

void rule_editor(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    std::optional<Field> cmd;
    if (one_of(v, {"-c", "--cmd"}) && i + 1 < c.argv.size()) {
      cmd = c.argv[++i];
    } else if (sw(v, "+") && v.size() > 1) {
      cmd = with_value(c.argv[i], v.substr(1));
    } else if (one_of(v, {"-S", "-s", "-u", "-x"})) {
      w.unknown(c, "runs editor commands from a file");
      ++i;
    }
    if (cmd) {
      // `:!cmd` runs a shell command; other editor commands may too
      std::string text(trim(cmd->value));
      while (!text.empty() && text[0] == ':') text = text.substr(1);
      if (sw(text, "!")) {
        w.judge(c, c.name + " :!", with_value(*cmd, text.substr(1)));
      } else if (!text.empty() && !std::all_of(text.begin(), text.end(), is_digit)) {
        w.unknown(c, "runs editor commands");
      }
    } else if (!sw(v, "-") && !sw(v, "+")) {
      w.write(c, c.argv[i]);
    }
  }
  w.find(c, V::confirm, "edits files");
}

}  // namespace kai::shell
