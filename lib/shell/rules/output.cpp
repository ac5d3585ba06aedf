// Static output: what echo, printf, base64, xxd, rev and cat print, followed
// through pipes so that `echo cm0gLXJmIC8= | base64 -d | sh` is judged as `rm -rf /`.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

namespace {

size_t decode_escape(std::string_view s, size_t k, std::string& out) {
  if (k + 1 >= s.size()) {
    out += '\\';
    return k;
  }
  char e = s[k + 1];
  static constexpr std::string_view k_from = "nrtabfve\\";
  static constexpr std::string_view k_to = "\n\r\t\a\b\f\v\x1b\\";
  if (size_t at = k_from.find(e); at != std::string_view::npos) {
    out += k_to[at];
    return k + 1;
  }
  if (e == 'x' || (e >= '0' && e <= '7')) {
    int base = e == 'x' ? 16 : 8;
    size_t j = e == 'x' || e == '0' ? k + 2 : k + 1;
    size_t max = e == 'x' ? 2 : 3;
    unsigned v = 0;
    size_t n = 0;
    for (; n < max && j < s.size(); ++n, ++j) {
      char ch = s[j];
      int d = is_digit(ch) && (base == 16 || ch <= '7') ? ch - '0'
              : base == 16 && ch >= 'a' && ch <= 'f'    ? ch - 'a' + 10
              : base == 16 && ch >= 'A' && ch <= 'F'    ? ch - 'A' + 10
                                                        : -1;
      if (d < 0) break;
      v = v * static_cast<unsigned>(base) + static_cast<unsigned>(d);
    }
    out += static_cast<char>(v & 0xFF);
    return j - 1;
  }
  out += '\\';
  out += e;
  return k + 1;
}

std::string decode_escapes(std::string_view s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\\') {
      k = decode_escape(s, k, out);
    } else {
      out += s[k];
    }
  }
  return out;
}

bool all_static(const Args& a, size_t from) {
  for (size_t i = from; i < a.size(); ++i)
    if (a[i].dynamic || a[i].glob || a[i].synthetic || a[i].procsub) return false;
  return true;
}
}  // namespace

void rule_echo(Walker&, Call& c) {
  size_t i = 1;
  bool newline = true, escapes = false;
  while (i < c.argv.size() && c.argv[i].value.size() > 1 && c.argv[i].value[0] == '-' &&
         c.argv[i].value.find_first_not_of("neE", 1) == std::string::npos) {
    for (char ch : c.argv[i].value.substr(1)) {
      newline = newline && ch != 'n';
      if (ch == 'e') escapes = true;
      if (ch == 'E') escapes = false;
    }
    ++i;
  }
  if (!all_static(c.argv, i)) return;
  std::string text = joined(c.argv, i).value;
  bool computed = false;
  for (size_t k = i; k < c.argv.size(); ++k) computed = computed || c.argv[k].computed;
  // dash's echo decodes escapes even without -e: take the decoded form and
  // call it computed, so a shell fed by it is never understood
  if (escapes || text.find('\\') != std::string::npos) {
    text = decode_escapes(text);
    computed = true;
  }
  if (newline) text += '\n';
  c.info.output = std::move(text);
  c.info.output_computed = computed;
}

void rule_printf(Walker& w, Call& c) {
  size_t i = 1;
  if (i < c.argv.size() && c.argv[i].value == "-v" && i + 1 < c.argv.size()) {
    w.forget_var(c.argv[i + 1].value);
    return;
  }
  if (i < c.argv.size() && c.argv[i].value == "--") ++i;
  if (i >= c.argv.size() || !all_static(c.argv, i)) return;
  const std::string& fmt = c.argv[i].value;
  std::vector<std::string> args;
  for (size_t k = i + 1; k < c.argv.size(); ++k) args.push_back(c.argv[k].value);
  std::string out;
  bool computed = fmt.find('\\') != std::string::npos;
  size_t ai = 0;
  for (int round = 0; round < 64 && out.size() < 65536; ++round) {
    bool conversion = false;
    for (size_t k = 0; k < fmt.size(); ++k) {
      if (fmt[k] == '\\') {
        k = decode_escape(fmt, k, out);
        continue;
      }
      if (fmt[k] != '%') {
        out += fmt[k];
        continue;
      }
      size_t j = k + 1;
      while (j < fmt.size() && std::string_view("-+ #0123456789.*").find(fmt[j]) != std::string_view::npos) ++j;
      if (j >= fmt.size()) break;
      k = j;
      if (fmt[j] == '%') {
        out += '%';
        continue;
      }
      conversion = true;
      std::string arg = ai < args.size() ? args[ai++] : "";
      if (fmt[j] == 'b') {
        out += decode_escapes(arg);
        computed = true;
      } else if (fmt[j] == 'c') {
        out += arg.substr(0, 1);
      } else {
        out += arg;
      }
    }
    if (!conversion || ai >= args.size()) break;
  }
  c.info.output = std::move(out);
  c.info.output_computed = computed;
}

namespace {

std::optional<std::string> hex_decode(std::string_view s) {
  std::string out;
  int hi = -1;
  for (char ch : s) {
    int d = is_digit(ch)             ? ch - '0'
            : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
            : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                     : -1;
    if (d < 0) {
      if (ch == ' ' || ch == '\n' || ch == '\t') continue;
      return std::nullopt;
    }
    if (hi < 0) {
      hi = d;
    } else {
      out += static_cast<char>(hi * 16 + d);
      hi = -1;
    }
  }
  return out;
}
}  // namespace

// Decoders fed static text pass their (decoded) output down the pipe, so
// `echo cm0gLXJmIC8= | base64 -d | sh` is judged as `rm -rf /`.
void rule_base64(Walker&, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"w", {"--wrap"}});
  bool decode = o.has({"-d", "--decode", "-D"});
  if (!decode || !o.pos.empty() || !c.in.text) return;
  if (std::optional<std::string> out = base64_decode(*c.in.text)) {
    c.info.output = out;
    c.info.output_computed = true;
  }
}

void rule_xxd(Walker&, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"cglos", {}});
  if (o.has({"-r", "-revert"}) && o.has({"-p", "-ps", "-plain"}) && o.pos.empty() && c.in.text) {
    if (std::optional<std::string> out = hex_decode(*c.in.text)) {
      c.info.output = out;
      c.info.output_computed = true;
    }
  }
}

void rule_rev(Walker&, Call& c) {
  if (c.argv.size() > 1 || !c.in.text) return;
  std::string out, line;
  for (char ch : *c.in.text) {
    if (ch == '\n') {
      out.append(line.rbegin(), line.rend());
      out += '\n';
      line.clear();
    } else {
      line += ch;
    }
  }
  out.append(line.rbegin(), line.rend());
  c.info.output = out;
  c.info.output_computed = true;
}

void rule_cat(Walker&, Call& c) {
  for (size_t i = 1; i < c.argv.size(); ++i)
    if (c.argv[i].value != "-" && c.argv[i].value[0] != '-') return;
  c.info.output = c.in.text;
  c.info.output_computed = c.in.computed;
  c.info.download = c.in.download;
}

void rule_tee(Walker& w, Call& c) {
  Opts o = parse_opts(c.argv, 1, Spec{"", {}, false});
  for (size_t i : o.pos) {
    w.write(c, c.argv[i]);
    if (c.in.download) w.download(c, c.argv[i]);
    if (!o.has({"-a", "--append"})) w.wrote(c.argv[i], c.in.text, c.in.computed);
  }
  c.info.output = c.in.text;  // tee passes its input on
  c.info.output_computed = c.in.computed;
  c.info.download = c.in.download;
}

}  // namespace kai::shell
