// Helpers the rules share: fields made or rewritten by a rule, and option
// parsing (GNU and BSD styles, clustered short options, `--`).

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

Field literal_field(std::string v) {
  Field f;
  f.raw = quote_argv({v});
  f.value = std::move(v);
  return f;
}

Field with_value(const Field& f, std::string v) {
  Field g = f;
  g.value = std::move(v);
  return g;
}

Field joined(const Args& a, size_t from) {
  Field f;
  for (size_t i = from; i < a.size(); ++i) {
    if (i > from) {
      f.value += ' ';
      f.raw += ' ';
    }
    f.value += a[i].value;
    f.raw += a[i].raw;
    f.dynamic = f.dynamic || a[i].dynamic;
    f.computed = f.computed || a[i].computed;
    f.download = f.download || a[i].download;
  }
  return f;
}

Args slice(const Args& a, size_t from) {
  return from < a.size() ? Args(a.begin() + static_cast<long>(from), a.end()) : Args{};
}

std::string path_basename(std::string v) {
  while (v.size() > 1 && v.back() == '/') v.pop_back();
  size_t slash = v.rfind('/');
  return slash == std::string::npos ? v : v.substr(slash + 1);
}

bool split_assignment(const std::string& v, std::string& name, std::string& value) {
  size_t eq = v.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  for (size_t i = 0; i < eq; ++i) {
    char ch = v[i];
    bool ok = ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (i > 0 && is_digit(ch));
    if (!ok) return false;
  }
  name = v.substr(0, eq);
  value = v.substr(eq + 1);
  return true;
}

namespace {

// A placeholder for what xargs / find substitute at run time: an unknown
// variable, so that `sh -c 'rm -rf {}'` still parses and is judged.
constexpr std::string_view k_runtime_arg = "${__kaicoder_runtime_arg__}";
}  // namespace

Field runtime_arg() {
  Field f;
  f.value = std::string(k_runtime_arg);
  f.synthetic = true;
  return f;
}

Field replace_token(const Field& f, const std::string& token) {
  if (token.empty() || f.value.find(token) == std::string::npos) return f;
  Field g = f;
  g.value.clear();
  for (size_t at = 0;;) {
    size_t hit = f.value.find(token, at);
    if (hit == std::string::npos) {
      g.value += f.value.substr(at);
      break;
    }
    g.value += f.value.substr(at, hit - at);
    g.value += k_runtime_arg;
    at = hit + token.size();
  }
  g.synthetic = true;
  return g;
}

Opts parse_opts(const Args& a, size_t from, const Spec& spec) {
  Opts o;
  o.rest = a.size();
  bool end = false;
  for (size_t i = from; i < a.size(); ++i) {
    const std::string& v = a[i].value;
    // `--rsh="$X"` is still an option; `$X` alone is not
    bool literal_dash = !a[i].dynamic || (!a[i].raw.empty() && a[i].raw[0] == '-');
    if (end || v.size() < 2 || v[0] != '-' || !literal_dash) {
      o.pos.push_back(i);
      if (spec.stop) {
        o.rest = i;
        break;
      }
      continue;
    }
    if (v == "--") {
      end = true;
      if (spec.stop) {
        o.rest = i + 1;
        break;
      }
      continue;
    }
    if (v[1] == '-') {
      size_t eq = v.find('=');
      std::string name = v.substr(0, eq);
      if (eq != std::string::npos) {
        o.opts.push_back({name, with_value(a[i], v.substr(eq + 1))});
      } else if (std::find(spec.long_arg.begin(), spec.long_arg.end(), name) != spec.long_arg.end() &&
                 i + 1 < a.size()) {
        o.opts.push_back({name, a[i + 1]});
        ++i;
      } else {
        o.opts.push_back({name, std::nullopt});
      }
      continue;
    }
    for (size_t j = 1; j < v.size(); ++j) {
      char ch = v[j];
      std::string name{'-', ch};
      bool takes = spec.short_arg.find(ch) != std::string_view::npos;
      if (takes || spec.short_attached.find(ch) != std::string_view::npos) {
        if (j + 1 < v.size()) {
          o.opts.push_back({name, with_value(a[i], v.substr(j + 1))});
        } else if (takes && i + 1 < a.size()) {
          o.opts.push_back({name, a[i + 1]});
          ++i;
        } else {
          o.opts.push_back({name, std::nullopt});
        }
        break;
      }
      o.opts.push_back({name, std::nullopt});
    }
  }
  return o;
}

// GNU long options may be abbreviated: `--recur` is `--recursive`.
bool long_is(std::string_view v, std::string_view full, size_t min) { return v.size() >= min && sw(full, v); }

}  // namespace kai::shell
