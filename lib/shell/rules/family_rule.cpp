// The family rule: a command read against the rows of its tool's table
// (families.cpp). Its command words are the positionals without the values
// of the options the tool names; the first row whose path and conditions
// hold decides. Database clients hand their statements to statements.cpp.

#include "lib/shell/rules/families.hpp"

namespace kai::shell {

namespace {

// ---- the words of a command ----

struct CmdWord {
  const Field* field;
  bool after_option;  // right after an option without `=`: maybe its value
};

bool token_matches(std::string_view token, std::string_view word) {
  if (word.starts_with("-")) word = word.substr(0, word.find('='));
  bool hit = false;
  each_word(token, '|', [&](std::string_view alt) {
    if (hit) return;
    if (alt == "*") {
      hit = true;
    } else if (alt.size() > 1 && alt.back() == '*' && alt.find('*') == alt.size() - 1) {
      hit = word.starts_with(alt.substr(0, alt.size() - 1));
    } else if (alt.size() > 1 && alt.front() == '*' && alt.find('*', 1) == std::string_view::npos) {
      hit = word.ends_with(alt.substr(1));
    } else if (size_t star = alt.find('*'); star != std::string_view::npos) {  // schedule-*-deletion
      hit = word.starts_with(alt.substr(0, star)) && word.ends_with(alt.substr(star + 1)) &&
            word.size() >= alt.size() - 1;
    } else {
      hit = alt == word;
    }
  });
  return hit;
}

// The command words of `path` at `words[from]`: returns the index after
// them, or npos. A word that may be an unknown option's value is skipped.
size_t match_path(const std::vector<std::string_view>& tokens, size_t t, const std::vector<CmdWord>& words, size_t from,
                  int budget) {
  if (t == tokens.size()) return from;
  if (budget <= 0) return std::string::npos;
  if (tokens[t] == "**") {
    for (size_t skip = 0; skip <= 3 && from + skip <= words.size(); ++skip) {
      size_t r = match_path(tokens, t + 1, words, from + skip, budget - 1);
      if (r != std::string::npos) return r;
    }
    return std::string::npos;
  }
  for (size_t k = from; k < words.size(); ++k) {
    if (token_matches(tokens[t], words[k].field->value)) {
      size_t r = match_path(tokens, t + 1, words, k + 1, budget - 1);
      if (r != std::string::npos) return r;
    }
    if (!words[k].after_option) break;  // only a possible option value may be passed over
  }
  return std::string::npos;
}

bool has_option(const Call& c, std::string_view opt) {
  std::string_view want_value;
  size_t colon = opt.find(':');
  if (colon != std::string_view::npos) {
    want_value = opt.substr(colon + 1);
    opt = opt.substr(0, colon);
  }
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (c.argv[i].dynamic) continue;
    std::optional<std::string> value;
    if (v == opt) {
      if (want_value.empty()) return true;
      if (i + 1 < c.argv.size()) value = c.argv[i + 1].value;
    } else if (v.size() > opt.size() && v.starts_with(opt) && v[opt.size()] == '=') {
      if (want_value.empty()) return true;
      value = v.substr(opt.size() + 1);
    } else if (opt.size() == 2 && opt[0] == '-' && opt[1] != '-' && v.size() > 2 && v[0] == '-' && v[1] != '-' &&
               std::all_of(v.begin() + 1, v.end(), is_alpha) && v.find(opt[1]) != std::string::npos &&
               want_value.empty()) {
      return true;  // -rf holds -r
    } else if (opt.size() == 2 && opt[0] == '-' && v.size() > 2 && v.starts_with(opt) && !want_value.empty()) {
      value = v.substr(2);  // -XDELETE
    }
    if (value && ascii_lower(*value) == ascii_lower(want_value)) return true;
  }
  return false;
}

bool store_root(Store s, std::string_view v) {
  switch (s) {
    case Store::none: return false;
    case Store::url: {
      size_t scheme = v.find("://");
      if (scheme == std::string_view::npos) return false;
      std::string_view rest = v.substr(scheme + 3);
      size_t slash = rest.find('/');
      if (slash == std::string_view::npos) return !rest.empty();
      std::string_view key = rest.substr(slash + 1);
      return key.empty() || key == "*" || key == "**";
    }
    case Store::rclone: {
      size_t colon = v.find(':');
      if (colon == std::string_view::npos || colon == 0 || v.substr(0, colon).find('/') != std::string_view::npos)
        return false;
      std::string_view path = v.substr(colon + 1);
      return path.empty() || path == "/";
    }
    case Store::mc: {
      std::string_view t = v;
      while (t.size() > 1 && t.back() == '/') t.remove_suffix(1);
      if (t.find("://") != std::string_view::npos || t.starts_with(".") || t.starts_with("/")) return false;
      size_t slash = t.find('/');
      return slash == std::string_view::npos ? false : t.find('/', slash + 1) == std::string_view::npos;
    }
    case Store::borg:
      return v.find("::") == std::string_view::npos &&
             (v.find('/') != std::string_view::npos || v.find(':') != std::string_view::npos);
  }
  return false;
}

// A word names a remote place, not a local path: s3://b, gs://b, remote:path, pod:/x
bool remote_word(std::string_view v) {
  if (v.find("://") != std::string_view::npos) return true;
  size_t colon = v.find(':');
  size_t slash = v.find('/');
  return colon != std::string_view::npos && colon > 0 && (slash == std::string_view::npos || colon < slash);
}

bool conditions_hold(const Tool& tool, const Verb& verb, const Call& c, const std::vector<CmdWord>& rest) {
  bool all = true;
  each_word(verb.when, ' ', [&](std::string_view cond) {
    if (!all) return;
    bool any = false;
    each_word(cond, '|', [&](std::string_view alt) {
      if (any) return;
      if (alt == "@root") {
        any = std::any_of(rest.begin(), rest.end(),
                          [&](const CmdWord& w) { return store_root(tool.store, w.field->value); });
      } else if (alt == "@empty") {
        any = std::any_of(rest.begin(), rest.end(), [](const CmdWord& w) { return w.field->value.empty(); }) ||
              std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value.empty() && !f.dynamic; });
      } else if (alt.starts_with("@")) {
        any = c.name == alt.substr(1);
      } else if (alt.starts_with("!")) {
        any = !has_option(c, alt.substr(1));
      } else {
        any = has_option(c, alt);
      }
    });
    all = any;
  });
  return all;
}

void judge_text(Walker& w, Call& c, const Tool& tool, const Field& text) {
  if (text.dynamic) {
    w.unknown(c, "runs statements only known at run time");
    return;
  }
  switch (tool.lang) {
    case Dialect::sql: judge_sql(w, c, text); break;
    case Dialect::mongo: judge_mongo(w, c, text); break;
    case Dialect::redis: {
      size_t start = 0;
      const std::string& t = text.value;
      while (start < t.size()) {
        size_t end = t.find('\n', start);
        if (end == std::string::npos) end = t.size();
        Result<std::vector<std::string>> words = tokenize_argv(trim(std::string_view(t).substr(start, end - start)));
        if (words && !words->empty()) judge_redis(w, c, *words);
        start = end + 1;
      }
      break;
    }
    case Dialect::none: break;
  }
}

// The statements a database client is given: in its options, a positional,
// its standard input (`stdin_too`), or a file that cannot be read here.
void database_inputs(Walker& w, Call& c, const Tool& tool, bool stdin_too) {
  bool any = false;
  std::vector<size_t> positionals;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (!sw(v, "-") || v == "-" || f.dynamic) {
      positionals.push_back(i);
      continue;
    }
    if (v == "--") break;
    size_t eq = sw(v, "--") ? v.find('=') : std::string::npos;
    std::string name = v.substr(0, eq);
    std::optional<Field> value;
    bool text = in_words(tool.text_opts, name), file = in_words(tool.file_opts, name);
    if ((text || file) && eq != std::string::npos) {
      value = with_value(f, v.substr(eq + 1));
    } else if (text || file) {
      if (i + 1 < c.argv.size()) value = c.argv[++i];
    } else if (v.size() > 2 && v[1] != '-' && !in_words(tool.values, v)) {
      std::string head = v.substr(0, 2);  // -cSQL, -eSQL: the value attached
      if (in_words(tool.text_opts, head)) {
        text = true;
        value = with_value(f, v.substr(2));
      }
    } else if (in_words(tool.values, name) && eq == std::string::npos) {
      ++i;
    }
    if (!value) continue;
    if (text) {
      any = true;
      judge_text(w, c, tool, *value);
    } else if (file && value->value != "-") {
      any = true;
      w.find(c, V::ask, "runs statements from the file '" + value->value + "', which is not judged");
    }
  }
  if (tool.lang == Dialect::redis && !positionals.empty()) {
    // redis-cli [options] COMMAND ARGS: the command is the first positional
    std::vector<std::string> words;
    for (size_t k = positionals[0]; k < c.argv.size(); ++k) {
      if (c.argv[k].dynamic) {
        w.unknown(c, "a Redis command with words only known at run time");
        return;
      }
      words.push_back(c.argv[k].value);
    }
    judge_redis(w, c, words);
    return;
  }
  if (tool.text_pos > 0 && positionals.size() >= tool.text_pos) {
    for (size_t k = tool.text_pos - 1; k < positionals.size(); ++k) judge_text(w, c, tool, c.argv[positionals[k]]);
    return;
  }
  if (any || !stdin_too) return;
  // statements on standard input: a here-document, a pipe from echo
  if (c.in.text) {
    judge_text(w, c, tool, literal_field(*c.in.text));
  } else if (c.in.kind == Stdin::Kind::pipe) {
    w.unknown(c, "runs statements read from its input");
  } else if (c.in.kind == Stdin::Kind::file) {
    w.find(c, V::ask, "runs statements from a file, which is not judged");
  }
}

// ansible HOSTS -m shell -a 'CMD': the command runs on every host; a file
// module with state=absent deletes the path it names.
void ansible_module(Walker& w, Call& c) {
  std::optional<Field> module, args;
  for (size_t i = 1; i + 1 < c.argv.size(); ++i) {
    const std::string& v = c.argv[i].value;
    if (one_of(v, {"-m", "--module-name"})) module = c.argv[i + 1];
    if (one_of(v, {"-a", "--args"})) args = c.argv[i + 1];
  }
  std::string m =
      module ? module->value.substr(module->value.rfind('.') == std::string::npos ? 0 : module->value.rfind('.') + 1)
             : "command";
  if (!args) return;
  if (one_of(m, {"shell", "command", "raw"})) {
    w.judge(c, "ansible -m " + m, *args, Walker::Feed::none);
  } else if (m == "file" && args->value.find("state=absent") != std::string::npos) {
    for (std::string_view key : {"path=", "dest=", "name="}) {
      size_t at = args->value.find(key);
      if (at == std::string::npos) continue;
      std::string path = args->value.substr(at + key.size());
      path = path.substr(0, path.find(' '));
      judge_deletion(w, c, literal_field(path), true);
    }
  }
}

// docker run -v /:/host: the container may change the host's files. Its
// `/` mounted writable is blocked; the home folder or a system folder,
// confirm.
void container_mounts(Walker& w, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (v == "--privileged" || v == "--pid=host" || sw(v, "--cap-add=ALL") || sw(v, "--cap-add=SYS_ADMIN"))
      w.find(c, V::confirm, "runs a privileged container, which can reach the host (" + v + ")");
    std::optional<Field> spec;
    bool mount = false;
    if (one_of(v, {"-v", "--volume", "--mount"}) && i + 1 < c.argv.size()) {
      spec = c.argv[i + 1];
      mount = v == "--mount";
    } else if (sw(v, "--volume=") || sw(v, "--mount=")) {
      spec = with_value(f, v.substr(v.find('=') + 1));
      mount = sw(v, "--mount=");
    } else if (sw(v, "-v") && v.size() > 2) {
      spec = with_value(f, v.substr(2));
    }
    if (!spec || spec->dynamic) continue;
    std::string source;
    bool readonly = false;
    if (mount) {
      for (std::string_view key : {"source=", "src="}) {
        size_t at = spec->value.find(key);
        if (at != std::string::npos)
          source = spec->value.substr(at + key.size(), spec->value.find(',', at) - at - key.size());
      }
      readonly = spec->value.find("readonly") != std::string::npos || spec->value.find(",ro") != std::string::npos;
    } else {
      source = spec->value.substr(0, spec->value.find(':'));
      readonly = spec->value.ends_with(":ro") || spec->value.find(":ro,") != std::string::npos;
    }
    if (source.empty() || (source[0] != '/' && source[0] != '~')) continue;  // a named volume
    Field src = with_value(*spec, source);
    src.tilde = source[0] == '~';
    Reach r = deletion_reach(w, src);
    std::string what = "mounts " + (r.what.empty() ? "'" + source + "'" : r.what) + " into the container";
    if (readonly) continue;
    if (r.kind == Reach::guarded && normalize(source) == "/") {
      w.find(c, V::blocked, "mounts the host's whole file system into the container, writable ('" + spec->value + "')");
    } else if (r.kind == Reach::guarded) {
      w.find(c, V::confirm, what + ", writable ('" + spec->value + "')");
    }
  }
}

}  // namespace

void rule_family(Walker& w, Call& c) {
  const Tool* tool = nullptr;
  for (const Tool& t : tools())
    if (in_words(t.programs, c.name)) tool = &t;
  if (!tool) return;
  // help, version and dry runs only describe
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    if (f.dynamic) continue;
    std::string name = f.value.substr(0, f.value.find('='));
    bool dry = (in_words(tool->dry, f.value) || in_words(tool->dry, name)) && f.value != "--dry-run=none";
    if (one_of(f.value, {"--help", "--version", "help"}) || dry) {
      w.find(c, V::ask, "only describes what it would do (help, version or a dry run)");
      return;
    }
    if (f.value == "--") break;
  }
  if (tool->lang != Dialect::none && tool->verbs.empty()) return database_inputs(w, c, *tool, true);
  // the command words: positionals, without the values of known options
  std::vector<CmdWord> words;
  bool after = false;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    const Field& f = c.argv[i];
    const std::string& v = f.value;
    if (v == "--") break;
    if (sw(v, "-") && v.size() > 1 && !f.dynamic) {
      std::string name = v.substr(0, v.find('='));
      bool inline_value = v.find('=') != std::string::npos;
      if (tool->dash_verbs) words.push_back({&f, true});
      if (in_words(tool->values, name) && !inline_value) {
        ++i;
        after = false;
      } else {
        after = !inline_value;
      }
      continue;
    }
    words.push_back({&f, after || tool->dash_verbs});
    after = false;
  }
  for (const Verb& verb : tool->verbs) {
    size_t end = std::string::npos;
    std::string_view paths = verb.path;
    for (size_t start = 0; start <= paths.size() && end == std::string::npos;) {
      size_t comma = paths.find(", ", start);
      if (comma == std::string_view::npos) comma = paths.size();
      std::vector<std::string_view> tokens;
      each_word(paths.substr(start, comma - start), ' ', [&](std::string_view t) { tokens.push_back(t); });
      end = match_path(tokens, 0, words, 0, 12);
      start = comma + 2;
    }
    if (end == std::string::npos) continue;
    std::vector<CmdWord> rest(words.begin() + static_cast<long>(end), words.end());
    if (!conditions_hold(*tool, verb, c, rest)) continue;
    if (verb.verdict == V::ask) return;  // a known form that needs no warning
    std::string cmd = c.name;
    for (size_t k = 0; k < end && k < words.size(); ++k) cmd += " " + words[k].field->value;
    w.find(c, verb.verdict, std::string(verb.reason) + " (" + cmd + ")");
    if (verb.act == Act::dest && rest.size() >= 2) {
      const Field& dest = *rest.back().field;
      if (!remote_word(dest.value) && dest.value != "-") w.write(c, dest);
    } else if (verb.act == Act::sql) {
      database_inputs(w, c, *tool, false);
    } else if (verb.act == Act::exec) {
      for (size_t i = 1; i < c.argv.size(); ++i)
        if (c.argv[i].value == "--") {
          unwrap_at(w, c, i + 1);
          break;
        }
    }
    if (c.name == "ansible") ansible_module(w, c);
    if (one_of(c.name, {"docker", "podman", "nerdctl", "finch"}) && end > 0 &&
        one_of(words[end - 1].field->value, {"run", "create"}))
      container_mounts(w, c);
    return;
  }
  if (tool->lang != Dialect::none) database_inputs(w, c, *tool, false);
}

}  // namespace kai::shell
