#include "lib/config/config.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "lib/paths/glob.hpp"
#include "lib/paths/redact.hpp"
#include "lib/util/text.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

// Variables that change what a program runs or loads: never the proposer's.
bool env_name_dangerous(std::string_view n) {
  static constexpr std::string_view exact[] = {"BASH_ENV",          "ENV",           "NODE_OPTIONS", "PYTHONSTARTUP",
                                               "PYTHONPATH",        "PERL5OPT",      "PERL5LIB",     "RUBYOPT",
                                               "PROMPT_COMMAND",    "IFS",           "CDPATH",       "GCONV_PATH",
                                               "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "HOME",         "TMPDIR"};
  for (auto e : exact)
    if (n == e) return true;
  return n.starts_with("GIT_") || n.starts_with("LD_") || n.starts_with("BASH_FUNC_") || n.starts_with("DYLD_");
}


struct Ctx {
  std::string file;
  Config& cfg;
  ConfigRole role = ConfigRole::trusted;
};

// What a restricting overlay may hold: sections that lead to the lists below,
// rules (deny and ask only, checked in load_rule) and lists that only add.
const std::set<std::string> k_overlay_keys = {"policy",           "policy.rule",     "paths",        "paths.deny_read",
                                              "paths.deny_write", "paths.protected", "paths.confirm"};

Error bad(const Ctx& c, const toml::node& n, std::string_view key, std::string_view problem) {
  return make_error(Errc::usage, fmt::format("{}:{}: {}: {}", c.file, n.source().begin.line, key, problem),
                    "fix the file; see kaicoder.toml(5) for every key");
}

Result<std::string> get_string(const Ctx& c, const toml::node& n, std::string_view key) {
  if (auto v = n.value<std::string>(); v && n.is_string()) return *v;
  return bad(c, n, key, "expected a string");
}

Result<long> get_int(const Ctx& c, const toml::node& n, std::string_view key, long lo, long hi) {
  if (!n.is_integer()) return bad(c, n, key, "expected a whole number");
  long v = static_cast<long>(*n.value<int64_t>());
  if (v < lo || v > hi) return bad(c, n, key, fmt::format("must be between {} and {}", lo, hi));
  return v;
}

Result<std::vector<std::string>> get_list(const Ctx& c, const toml::node& n, std::string_view key, bool globs) {
  const toml::array* a = n.as_array();
  if (!a) return bad(c, n, key, "expected a list of strings");
  std::vector<std::string> out;
  for (const auto& item : *a) {
    auto s = get_string(c, item, key);
    if (!s) return s.error();
    if (globs) {
      if (auto v = validate_glob(*s); !v) return bad(c, item, key, v.error().message);
    }
    out.push_back(*s);
  }
  return out;
}

using Choices = std::vector<std::string_view>;

Status one_of(const Ctx& c, const toml::node& n, std::string_view key, const std::string& v, const Choices& allowed) {
  for (auto a : allowed)
    if (v == a) return ok_status();
  std::string list;
  for (auto a : allowed) list += fmt::format("{}\"{}\"", list.empty() ? "" : ", ", a);
  return bad(c, n, key, fmt::format("\"{}\" is not one of {}", v, list));
}

const std::set<std::string> k_rule_actions = {"read", "edit", "write", "delete", "run", "rollback"};

using Handler = std::function<Status(const Ctx&, const toml::node&, const std::string& key)>;

Status walk_table(const Ctx& c, const toml::table& t, const std::string& prefix,
                  const std::map<std::string, Handler>& handlers) {
  for (const auto& [k, node] : t) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    auto h = handlers.find(key);
    if (h == handlers.end()) return bad(c, node, key, "unknown key");
    if (c.role == ConfigRole::overlay && !k_overlay_keys.count(key))
      return bad(c, node, key,
                 "not allowed in a config named with --config, which may only add deny or ask rules and "
                 "[paths] deny_read, deny_write, protected and confirm entries");
    KAI_TRY(h->second(c, node, key));
  }
  return ok_status();
}

// `files = { "tools/gen.py" = "<blob id>" }`: root-relative paths as
// kaicoder writes them (no leading slash, no "." or ".." part, no
// backslash) and full blob ids in lowercase hex.
Status load_bound_files(const Ctx& c, const toml::node& n, const std::string& key, FileBlobs& into) {
  const toml::table* t = n.as_table();
  if (!t || t->empty()) return bad(c, n, key, "expected a table of \"path\" = \"blob id\" entries");
  for (const auto& [k, v] : *t) {
    const std::string path(k.str());
    bool plain = !path.empty() && path.front() != '/' && path.back() != '/' && path.find('\\') == std::string::npos &&
                 path.find('\0') == std::string::npos;
    for (size_t at = 0; plain && at <= path.size();) {
      const size_t slash = std::min(path.find('/', at), path.size());
      const std::string_view part = std::string_view(path).substr(at, slash - at);
      plain = !part.empty() && part != "." && part != "..";
      at = slash + 1;
    }
    if (!plain) return bad(c, v, key, fmt::format("'{}' is not a root-relative path", path));
    auto blob = get_string(c, v, key + "." + path);
    if (!blob) return blob.error();
    const bool hex =
        (blob->size() == 40 || blob->size() == 64) && blob->find_first_not_of("0123456789abcdef") == std::string::npos;
    if (!hex) return bad(c, v, key + "." + path, "expected a git blob id (40 or 64 lowercase hex digits)");
    into.emplace_back(path, *blob);
  }
  std::sort(into.begin(), into.end());
  return ok_status();
}

Status load_rule(const Ctx& c, const toml::node& n, const std::string& key) {
  const toml::table* t = n.as_table();
  if (!t) return bad(c, n, key, "expected a table");
  PolicyRule r;
  r.origin = fmt::format("{}:{}", c.file, n.source().begin.line);
  for (const auto& [k, v] : *t) {
    std::string sub = key + "." + std::string(k.str());
    if (k == "exact") {
      const auto* b = v.as_boolean();
      if (!b) return bad(c, v, sub, "expected true or false");
      r.exact = b->get();
      continue;
    }
    if (k == "files") {
      KAI_TRY(load_bound_files(c, v, sub, r.files));
      continue;
    }
    auto s = get_string(c, v, sub);
    if (!s) return s.error();
    if (k == "action") {
      if (!k_rule_actions.count(*s)) return bad(c, v, sub, fmt::format("unknown action \"{}\"", *s));
      r.action = *s;
    } else if (k == "path") {
      if (auto g = validate_glob(*s); !g) return bad(c, v, sub, g.error().message);
      r.path = *s;
    } else if (k == "command") {
      if (s->empty()) return bad(c, v, sub, "must not be empty");
      r.command = *s;
    } else if (k == "decision") {
      KAI_TRY(one_of(c, v, sub, *s, {"allow", "ask", "deny"}));
      r.decision = *s;
    } else {
      return bad(c, v, sub, "unknown key");
    }
  }
  if (r.action.empty() || r.decision.empty()) return bad(c, n, key, "a rule needs both action and decision");
  if (r.action == "run" && !r.path.empty()) return bad(c, n, key, "a run rule matches command, not path");
  if (r.action != "run" && !r.command.empty()) return bad(c, n, key, "only run rules match a command");
  // A rule that can never match is a mistake that would silently do nothing.
  if (r.action == "run" && r.command.empty()) return bad(c, n, key, "a run rule needs a command to match");
  if (r.action != "run" && r.path.empty())
    return bad(c, n, key, fmt::format("a {} rule needs a path to match", r.action));
  if (r.action != "run" && (r.exact || !r.files.empty()))
    return bad(c, n, key, "exact and files are for run rules only");
  if (!r.files.empty() && r.decision != "allow")
    return bad(c, n, key + ".files", "files bind an allow rule to the files it runs; a deny or ask rule binds none");
  if (c.role == ConfigRole::overlay && r.decision == "allow")
    return bad(c, n, key + ".decision", "a config named with --config may only add deny or ask rules, not allow");
  c.cfg.rules.push_back(std::move(r));
  return ok_status();
}

std::map<std::string, Handler> handlers() {
  std::map<std::string, Handler> h;
  // Choices are copied into the lambda: an initializer_list would dangle.
  auto str = [](std::string Config::*m, const Choices& allowed) {
    return [m, allowed](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      auto s = get_string(c, n, key);
      if (!s) return s.error();
      if (!allowed.empty()) KAI_TRY(one_of(c, n, key, *s, allowed));
      c.cfg.*m = *s;
      return ok_status();
    };
  };
  auto num = [](long Config::*m, long lo, long hi) {
    return [m, lo, hi](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      auto v = get_int(c, n, key, lo, hi);
      if (!v) return v.error();
      c.cfg.*m = *v;
      return ok_status();
    };
  };
  // A time limit written in seconds, kept in milliseconds.
  auto secs = [](std::chrono::milliseconds Config::*m, long lo, long hi) {
    return [m, lo, hi](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      auto v = get_int(c, n, key, lo, hi);
      if (!v) return v.error();
      c.cfg.*m = std::chrono::seconds(*v);
      return ok_status();
    };
  };
  auto add = [](std::vector<std::string> Config::*m, bool globs) {
    return [m, globs](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      auto v = get_list(c, n, key, globs);
      if (!v) return v.error();
      (c.cfg.*m).insert((c.cfg.*m).end(), v->begin(), v->end());
      return ok_status();
    };
  };
  // Absolute, normalised paths starting with `prefix`, other than "/".
  auto abs_paths = [](std::vector<std::string> Config::*m, const std::string& prefix) {
    return [m, prefix](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      const toml::array* a = n.as_array();
      auto v = get_list(c, n, key, false);
      if (!v) return v.error();
      for (size_t i = 0; i < v->size(); ++i) {
        const fs::path p((*v)[i]);
        if (!p.is_absolute() || p.lexically_normal() != p || p == "/" || (*v)[i].rfind(prefix, 0) != 0)
          return bad(c, *a->get(i), key,
                     fmt::format("'{}' must be an absolute path under '{}', without '..'", (*v)[i], prefix));
        (c.cfg.*m).push_back((*v)[i]);
      }
      return ok_status();
    };
  };
  auto section = [&h](const std::string& name) {
    return [&h, name](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      const toml::table* t = n.as_table();
      if (!t) return bad(c, n, key, "expected a table");
      return walk_table(c, *t, name, h);
    };
  };
  for (const char* s : {"approval", "policy", "policy.default", "paths", "run", "risk", "hooks", "hooks.adapter",
                        "changelog", "certify", "limits", "two_user", "team"})
    h[s] = section(s);
  h["approval.approvers"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    auto v = get_list(c, n, key, false);
    if (!v) return v.error();
    const toml::array* a = n.as_array();
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string& name = (*v)[i];
      const bool odd = std::any_of(name.begin(), name.end(), [](char ch) {
        return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f || ch == ' ';
      });
      if (name.empty() || odd)
        return bad(c, *a->get(i), key, "an approver is a user name: not empty, no spaces or control characters");
    }
    c.cfg.approvers = *v;  // the more specific file decides who may approve
    return ok_status();
  };
  h["approval.timeout"] = num(&Config::timeout, 1, 7 * 24 * 3600);
  h["policy.mode"] = str(&Config::mode, {"normal", "propose-only"});
  for (const auto& a : k_rule_actions)
    h["policy.default." + a] = [a](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      auto s = get_string(c, n, key);
      if (!s) return s.error();
      KAI_TRY(one_of(c, n, key, *s, {"allow", "ask", "deny"}));
      c.cfg.defaults[a] = *s;
      return ok_status();
    };
  h["policy.rule"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const toml::array* a = n.as_array();
    if (!a) return bad(c, n, key, "expected [[policy.rule]] tables");
    for (const auto& item : *a) KAI_TRY(load_rule(c, item, key));
    return ok_status();
  };
  h["paths.deny_write"] = add(&Config::deny_write, true);
  h["paths.deny_read"] = add(&Config::deny_read, true);
  h["paths.protected"] = add(&Config::protected_paths, true);
  h["paths.confirm"] = add(&Config::confirm, true);
  h["paths.hardlinks"] = str(&Config::hardlinks, {"refuse", "break"});
  h["paths.allow_unusual_names"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const auto* b = n.as_boolean();
    if (!b) return bad(c, n, key, "expected true or false");
    c.cfg.allow_unusual_names = b->get();
    return ok_status();
  };
  h["run.timeout"] = secs(&Config::run_timeout, 1, 24 * 3600);
  h["run.max_output"] = num(&Config::max_output, 1024, 64L << 20);
  h["run.sandbox"] = str(&Config::sandbox, {"full", "landlock", "none"});
  h["run.network"] = str(&Config::network, {"off", "on"});
  h["run.readable"] = abs_paths(&Config::readable, "/");
  h["run.devices"] = abs_paths(&Config::devices, "/dev/");
  h["run.env"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const toml::array* a = n.as_array();
    auto v = get_list(c, n, key, false);
    if (!v) return v.error();
    for (size_t i = 0; i < v->size(); ++i) {
      if (auto why = env_name_refused((*v)[i])) return bad(c, *a->get(i), key, *why);
      c.cfg.env.push_back((*v)[i]);
    }
    return ok_status();
  };
  h["hooks.network"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    if (!n.is_boolean()) return bad(c, n, key, "expected true or false");
    c.cfg.hooks_network = *n.value<bool>();
    return ok_status();
  };
  h["run.blocked"] = add(&Config::blocked, false);
  h["run.protected"] = add(&Config::protected_processes, false);
  h["run.writable"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const toml::array* a = n.as_array();
    auto v = get_list(c, n, key, false);
    if (!v) return v.error();
    for (size_t i = 0; i < v->size(); ++i) {
      const fs::path p((*v)[i]);
      if (!p.is_absolute() || p.lexically_normal() != p || p == "/")
        return bad(c, *a->get(i), key,
                   fmt::format("'{}' must be an absolute folder other than '/', without '..'", (*v)[i]));
      c.cfg.writable.push_back((*v)[i]);
    }
    return ok_status();
  };
  h["run.snapshots_keep"] = num(&Config::snapshots_keep, 0, 100000);
  h["run.overlay"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const auto* b = n.as_boolean();
    if (!b) return bad(c, n, key, "expected true or false");
    c.cfg.overlay = b->get();
    return ok_status();
  };
  h["run.direct"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const toml::array* a = n.as_array();
    auto v = get_list(c, n, key, false);
    if (!v) return v.error();
    for (size_t i = 0; i < v->size(); ++i) {
      const std::string& name = (*v)[i];
      if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos || name.front() == '.')
        return bad(c, *a->get(i), key, fmt::format("'{}' must be the name of a folder at the root's top", name));
    }
    c.cfg.direct = *v;  // the more specific file decides the whole list
    return ok_status();
  };
  h["risk.medium"] = num(&Config::risk_medium, 1, 1000000);
  h["risk.high"] = num(&Config::risk_high, 1, 1000000);
  h["hooks.notify"] = str(&Config::notify, {});
  h["two_user.agent"] = str(&Config::two_user_agent, {});
  h["hooks.review"] = str(&Config::review, {});
  h["hooks.timeout"] = secs(&Config::notify_timeout, 1, 300);
  h["hooks.review_timeout"] = secs(&Config::review_timeout, 1, 3600);
  h["hooks.adapter.wait"] = num(&Config::hook_wait, 0, 3600);
  h["run.validate_timeout"] = secs(&Config::validate_timeout, 1, 3600);
  h["changelog.path"] = str(&Config::changelog, {});
  h["changelog.keep"] = num(&Config::changelog_keep, 10, 100000);
  h["certify.paths"] = add(&Config::certify_paths, true);
  h["certify.base"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    auto s = get_string(c, n, key);
    if (!s) return s.error();
    if (!s->empty() && s->front() == '-') return bad(c, n, key, "must name a commit, tag or branch");
    c.cfg.certify_base = *s;
    return ok_status();
  };
  h["certify.allowed_signers"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    auto s = get_string(c, n, key);
    if (!s) return s.error();
    const fs::path p(*s);
    if (p.is_absolute() || p.lexically_normal() != p || s->find("..") != std::string::npos)
      return bad(c, n, key, "must be a path inside the repository, without '..'");
    c.cfg.allowed_signers = *s;
    return ok_status();
  };
  h["certify.signing_key"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    auto s = get_string(c, n, key);
    if (!s) return s.error();
    const std::string rest = s->starts_with("~/") ? s->substr(2) : *s;
    const fs::path p(rest);
    if (rest.empty() || (!s->starts_with("~/") && !p.is_absolute()) || p.lexically_normal() != p ||
        rest.find("..") != std::string::npos)
      return bad(c, n, key, "must be an absolute path or ~/PATH in your home, without '..'");
    c.cfg.signing_key = *s;
    return ok_status();
  };
  // A remote's name as `git remote add` takes it; never an option or a URL.
  h["team.remote"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    auto s = get_string(c, n, key);
    if (!s) return s.error();
    const bool plain =
        s->empty() ||
        (s->size() <= 64 && s->front() != '-' && s->front() != '.' && s->find("..") == std::string::npos &&
         s->find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
             std::string::npos);
    if (!plain)
      return bad(
          c, n, key,
          fmt::format("\"{}\" is not a git remote name (letters, digits, '.', '_', '-'; see git remote -v)", *s));
    c.cfg.team_remote = *s;
    return ok_status();
  };
  h["team.keep"] = num(&Config::team_keep, 0, 10L * 365 * 24 * 3600);
  auto limit = [](long Config::Limits::*m, long lo, long hi) {
    return [m, lo, hi](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
      auto v = get_int(c, n, key, lo, hi);
      if (!v) return v.error();
      c.cfg.limits.*m = *v;
      return ok_status();
    };
  };
  h["limits.why"] = limit(&Config::Limits::why, 16, 1L << 20);
  h["limits.summary"] = limit(&Config::Limits::summary, 16, 4096);
  h["limits.agent"] = limit(&Config::Limits::agent, 8, 1024);
  h["limits.path"] = limit(&Config::Limits::path, 64, 4096);
  h["limits.path_component"] = limit(&Config::Limits::path_component, 16, 255);
  h["limits.content"] = limit(&Config::Limits::content, 1024, 1L << 30);
  h["limits.pending"] = limit(&Config::Limits::pending, 1, 100000);
  h["validate"] = [](const Ctx& c, const toml::node& n, const std::string& key) -> Status {
    const toml::table* t = n.as_table();
    if (!t) return bad(c, n, key, "expected a table of glob = command");
    for (const auto& [k, v] : *t) {
      std::string sub = key + ".\"" + std::string(k.str()) + "\"";
      if (auto g = validate_glob(k.str()); !g) return bad(c, v, sub, g.error().message);
      auto s = get_string(c, v, sub);
      if (!s) return s.error();
      if (s->find_first_not_of(" \t") == std::string::npos) return bad(c, v, sub, "the command must not be empty");
      c.cfg.validate[std::string(k.str())] = *s;
    }
    return ok_status();
  };
  return h;
}

// The text toml++ is given: `text` with each comment line emptied, when that
// cannot change what the file means or whether it parses. A config is mostly
// comments (the example mostly is), and toml++ reads a
// comment character by character, decoding and placing each one: emptying
// them first makes parsing the config several times cheaper, in every
// command. A line is emptied only when its first non-blank character is '#'
// and every byte of it is a tab or printable ASCII, which TOML accepts in
// any comment; and only when the text has no multi-line string (no """ or
// '''), the one place such a line could be a value. Line numbers stay: the
// newline stays. Otherwise the text is parsed as it is.
std::string_view without_comment_lines(std::string_view text, std::string& room) {
  if (text.find("\"\"\"") != std::string_view::npos || text.find("'''") != std::string_view::npos) return text;
  room.clear();
  room.reserve(text.size());
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    const size_t first = line.find_first_not_of(" \t");
    const bool comment = first != std::string_view::npos && line[first] == '#' &&
                         std::all_of(line.begin(), line.end(), [](char ch) { return ch == '\t' || (ch >= 0x20 && ch < 0x7f); });
    if (!comment) room.append(line);
    if (end < text.size()) room.push_back('\n');
    at = end + 1;
  }
  return room;
}

Error parse_failure(const std::string& file, const toml::parse_error& e) {
  return make_error(Errc::usage, fmt::format("{}:{}: {}", file, e.source().begin.line, e.description()),
                    "fix the file; see kaicoder.toml(5) for every key");
}

// Checks across keys, once every file is read.
Result<Config> check_whole(Config cfg);

}  // namespace

std::optional<std::string> env_name_refused(std::string_view name) {
  // A name of letters, digits and underscores, as a shell takes it: a NUL
  // or '=' in it would be cut or read as a value by the process it reaches.
  const bool well_formed = !name.empty() && !(name[0] >= '0' && name[0] <= '9') &&
                           std::all_of(name.begin(), name.end(), [](char ch) {
                             return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                                    ch == '_';
                           });
  if (!well_formed) return "not a variable name (letters, digits and _, not starting with a digit)";
  if (env_name_dangerous(name)) return fmt::format("'{}' changes what programs run or load; runs never get it", name);
  if (Redactor::secret_name(name)) return fmt::format("'{}' looks like a secret; runs never get secrets", name);
  return std::nullopt;
}

Result<Config> load_config(const std::vector<ConfigFile>& files) {
  Config cfg;
  const auto h = handlers();
  for (const auto& file : files) {
    const fs::path& f = file.path;
    std::error_code ec;
    if (!file.text && !fs::exists(f, ec)) continue;
    toml::table t;
    try {
      std::string room;
      t = file.text ? toml::parse(without_comment_lines(*file.text, room), f.string()) : toml::parse_file(f.string());
    } catch (const toml::parse_error& e) {
      return parse_failure(f.string(), e);
    }
    Ctx c{f.string(), cfg, file.role};
    KAI_TRY(walk_table(c, t, "", h));
    cfg.loaded.push_back(f);
  }
  return check_whole(std::move(cfg));
}

Result<Config> parse_config_text(std::string_view text, const std::string& origin) {
  Config cfg;
  toml::table t;
  try {
    std::string room;
    t = toml::parse(without_comment_lines(text, room), origin);
  } catch (const toml::parse_error& e) {
    return parse_failure(origin, e);
  }
  Ctx c{origin, cfg};
  KAI_TRY(walk_table(c, t, "", handlers()));
  return check_whole(std::move(cfg));
}

namespace {
Result<Config> check_whole(Config cfg) {
  if (cfg.risk_medium > cfg.risk_high)
    return make_error(Errc::usage,
                      fmt::format("risk.medium ({}) is above risk.high ({})", cfg.risk_medium, cfg.risk_high));
  const std::string& cl = cfg.changelog;
  const bool control = std::any_of(cl.begin(), cl.end(), [](char ch) {
    return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
  });
  const std::string base = cl.substr(cl.rfind('/') == std::string::npos ? 0 : cl.rfind('/') + 1);
  if (cl.empty() || cl.find("..") != std::string::npos || cl.front() == '/' || control || base.size() <= 3 ||
      !base.ends_with(".md") || base.front() == '.' || cl.starts_with(".git/") || cl.starts_with(".kaicoder/"))
    return make_error(Errc::usage,
                      fmt::format("changelog.path '{}' must be a markdown file name inside root (NAME.md)",
                                  make_visible(cl, Allow::nothing)));
  return cfg;
}
}  // namespace

}  // namespace kai

namespace kai {
std::string default_config_text() {
  return
#include "default_config.inc"
      ;
}
}  // namespace kai
