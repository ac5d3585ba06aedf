// Expansion: what a word becomes once the shell has expanded it, as far as
// that is known statically; parts known only at run time are marked.

#include <algorithm>
#include <utility>

#include "lib/shell/chars.hpp"
#include "lib/shell/expand.hpp"

namespace kai::shell {

namespace {

constexpr size_t k_max_fields = 256;  // brace expansion beyond this is not followed
constexpr int k_max_brace_depth = 32;
constexpr size_t k_max_brace_groups = 64;
constexpr size_t k_max_brace_word = 4096;

enum : char { k_lit = 0, k_quoted = 1, k_expanded = 2 };  // per character of a field

struct Piece {
  std::string value;
  std::string mask;
};

bool is_ifs(char c) { return c == ' ' || c == '\t' || c == '\n'; }

enum class Braces { literal, expanded, too_many };

// A sequence `{1..9}`, `{a..e}`, `{0..20..5}` of at most `budget` elements.
Braces brace_sequence(std::string_view body, std::vector<std::string>& out, size_t budget) {
  size_t dots = body.find("..");
  if (dots == std::string_view::npos) return Braces::literal;
  std::string_view a = body.substr(0, dots), rest = body.substr(dots + 2);
  size_t dots2 = rest.find("..");
  std::string_view b = rest.substr(0, dots2);
  long step = 1;
  auto number = [](std::string_view s, long& v) {
    bool neg = !s.empty() && s[0] == '-';
    if (neg) s.remove_prefix(1);
    if (!all_digits(s) || s.size() > 9) return false;
    v = 0;
    for (char c : s) v = v * 10 + (c - '0');
    if (neg) v = -v;
    return true;
  };
  if (dots2 != std::string_view::npos && (!number(rest.substr(dots2 + 2), step) || step == 0)) return Braces::literal;
  step = step < 0 ? -step : step;
  long x = 0, y = 0;
  bool chars = a.size() == 1 && b.size() == 1 && is_alpha(a[0]) && is_alpha(b[0]);
  if (chars) {
    x = static_cast<unsigned char>(a[0]);
    y = static_cast<unsigned char>(b[0]);
  } else if (!number(a, x) || !number(b, y)) {
    return Braces::literal;
  }
  long count = (x > y ? x - y : y - x) / step + 1;
  if (count > static_cast<long>(budget)) return Braces::too_many;
  for (long i = 0, v = x; i < count; ++i, v += (x > y ? -step : step))
    out.push_back(chars ? std::string(1, static_cast<char>(v)) : std::to_string(v));
  return Braces::expanded;
}

// Alternatives of the brace group (b, e) of p.
Braces brace_alternatives(const Piece& p, size_t b, size_t e, std::vector<Piece>& alts, size_t budget) {
  std::vector<size_t> commas;
  int level = 0;
  for (size_t i = b + 1; i < e; ++i) {
    if (p.mask[i] != k_lit) continue;
    if (p.value[i] == '{') ++level;
    if (p.value[i] == '}') --level;
    if (p.value[i] == ',' && level == 0) commas.push_back(i);
  }
  if (commas.empty()) {
    std::vector<std::string> seq;
    Braces r = brace_sequence(std::string_view(p.value).substr(b + 1, e - b - 1), seq, budget);
    for (auto& s : seq) alts.push_back({s, std::string(s.size(), k_lit)});
    return r;
  }
  commas.push_back(e);
  size_t start = b + 1;
  for (size_t c : commas) {
    alts.push_back({p.value.substr(start, c - start), p.mask.substr(start, c - start)});
    start = c + 1;
  }
  return Braces::expanded;
}

// bash brace expansion of the unquoted literal parts; false when the result
// would pass k_max_fields, or the word is too big to try (the word is then
// taken as unknown rather than literally: `{rm,-rf,/}` is `rm -rf /`).
bool brace_expand(const Piece& p, std::vector<Piece>& out, int depth) {
  if (depth > k_max_brace_depth) return false;
  size_t opens = 0;
  for (size_t i = 0; i < p.value.size(); ++i) opens += p.value[i] == '{' && p.mask[i] == k_lit;
  if (opens == 0) {
    out.push_back(p);
    return out.size() <= k_max_fields;
  }
  if (opens > k_max_brace_groups || p.value.size() > k_max_brace_word) return false;
  for (size_t b = 0; b < p.value.size(); ++b) {
    if (p.value[b] != '{' || p.mask[b] != k_lit) continue;
    int level = 0;
    size_t e = b;
    for (size_t i = b; i < p.value.size(); ++i) {
      if (p.mask[i] != k_lit) continue;
      if (p.value[i] == '{') ++level;
      if (p.value[i] == '}' && --level == 0) {
        e = i;
        break;
      }
    }
    if (e == b) continue;
    std::vector<Piece> alts;
    Braces r = brace_alternatives(p, b, e, alts, k_max_fields);
    if (r == Braces::too_many) return false;
    if (r == Braces::literal) continue;
    for (const Piece& a : alts) {
      Piece next{p.value.substr(0, b) + a.value + p.value.substr(e + 1),
                 p.mask.substr(0, b) + a.mask + p.mask.substr(e + 1)};
      if (!brace_expand(next, out, depth + 1)) return false;
      if (out.size() > k_max_fields) return false;
    }
    return true;
  }
  out.push_back(p);
  return out.size() <= k_max_fields;
}

bool has_glob(const Piece& p) {
  for (size_t i = 0; i < p.value.size(); ++i) {
    if (p.mask[i] == k_quoted) continue;
    char c = p.value[i];
    if (c == '*' || c == '?') return true;
    if (c == '[' && p.value.find(']', i + 1) != std::string::npos) return true;
    if (p.mask[i] == k_lit && i + 1 < p.value.size() && p.value[i + 1] == '(' && (c == '+' || c == '@' || c == '!'))
      return true;
  }
  return false;
}

// What one expansion leaves on the fields it reaches. When it is split,
// every word it gives keeps them, not only the first: `x=$(curl ...)`
// split into `a b` taints `b` as much as `a`.
struct Marks {
  bool from_var = false;
  bool computed = false;
  bool glob = false;
  bool download = false;
};

class FieldBuilder {
public:
  FieldBuilder(const Word& w, bool braces) : m_raw(w.raw), m_braces(braces) {}

  Field& flags() { return m_flags; }

  void mark(const Marks& m) {
    m_flags.from_var = m_flags.from_var || m.from_var;
    m_flags.computed = m_flags.computed || m.computed;
    m_flags.glob = m_flags.glob || m.glob;
    m_flags.download = m_flags.download || m.download;
  }

  void add(std::string_view s, char mask) {
    m_cur.value += s;
    m_cur.mask.append(s.size(), mask);
    if (mask == k_quoted || !s.empty()) m_started = true;
  }

  // An unquoted expansion, split as the shell would with this IFS:
  // whitespace in it separates fields, any other character of it ends one.
  // Each field that holds a part of it (or is made empty by it) gets `m`.
  void split(std::string_view v, const std::optional<std::string>& ifs, const Marks& m) {
    mark(m);
    if (!ifs) {  // splitting only known at run time
      m_flags.dynamic = true;
      add(v, k_quoted);
      return;
    }
    auto in_ifs = [&](char ch) { return ifs->find(ch) != std::string::npos; };
    auto white = [&](char ch) { return in_ifs(ch) && is_ifs(ch); };
    size_t i = 0;
    while (i < v.size()) {
      if (white(v[i])) {
        end_field();
        while (i < v.size() && white(v[i])) ++i;
        continue;
      }
      if (in_ifs(v[i])) {
        mark(m);
        m_started = true;  // a delimiter ends a field even when it is empty
        end_field();
        ++i;
        while (i < v.size() && white(v[i])) ++i;
        continue;
      }
      size_t j = i;
      while (j < v.size() && !in_ifs(v[j])) ++j;
      mark(m);
      add(v.substr(i, j - i), k_expanded);
      i = j;
    }
  }

  void mark_home() {
    if (m_cur.value.empty()) m_home = true;
  }

  void end_field() {
    if (!m_started) return;
    Field f = m_flags;
    f.raw = m_raw;
    f.tilde = f.tilde || m_home || (!m_cur.value.empty() && m_cur.value[0] == '~' && m_cur.mask[0] == k_lit);
    std::vector<Piece> pieces;
    if (m_braces && !brace_expand(m_cur, pieces, 0)) {
      f.dynamic = true;  // too many words to follow
      pieces.clear();
    }
    if (pieces.empty()) pieces = {m_cur};
    for (const Piece& p : pieces) {
      Field g = f;
      g.value = p.value;
      g.glob = g.glob || has_glob(p);
      g.tilde = g.tilde && !g.value.empty() && g.value[0] == '~';
      m_out.push_back(std::move(g));
    }
    if (pieces.size() > 1)
      for (size_t i = m_out.size() - pieces.size(); i < m_out.size(); ++i) m_out[i].braced = true;
    m_cur = {};
    m_started = false;
    m_home = false;
    m_flags = {};
  }

  std::vector<Field> take() {
    end_field();
    return std::move(m_out);
  }

private:
  std::string m_raw;
  bool m_braces;
  Piece m_cur;
  bool m_started = false;
  bool m_home = false;
  Field m_flags;
  std::vector<Field> m_out;
};

void expand_param(FieldBuilder& b, const Seg& s, ExpandEnv& env) {
  char m = s.quoted ? k_quoted : k_expanded;
  if (s.text == "@" || s.text == "*") {
    if (auto pos = env.positional()) {
      const Marks arg{.from_var = true};
      b.mark(arg);
      for (size_t i = 0; i < pos->size(); ++i) {
        if (i > 0) {
          if (s.quoted && s.text == "@") {
            b.end_field();
            b.mark(arg);
          } else if (s.quoted) {
            b.add(" ", k_quoted);
          }
        }
        if (s.quoted) {
          b.add((*pos)[i], k_quoted);
        } else {
          b.split((*pos)[i], env.ifs(), arg);
          b.end_field();
        }
      }
      return;
    }
  } else if (auto v = env.param(s.text); v && v->dynamic) {
    b.flags().dynamic = true;
    b.flags().download = b.flags().download || v->download;
    b.add("$" + s.text, k_quoted);
    return;
  } else if (v) {
    const Marks var{.from_var = true, .computed = v->computed, .glob = v->glob, .download = v->download};
    if (s.quoted) {
      b.mark(var);
      b.add(v->text, k_quoted);
    } else {
      b.split(v->text, env.ifs(), var);
    }
    return;
  } else if (s.text == "HOME") {
    b.mark_home();
    b.add("~", m);
    return;
  }
  b.flags().dynamic = true;
  b.add("$" + s.text, k_quoted);
}

}  // namespace

std::optional<std::string> literal(const Word& w) {
  std::string out;
  for (const Seg& s : w.segs) {
    if (s.kind != SegKind::text) return std::nullopt;
    out += s.text;
  }
  return out;
}

std::vector<Field> expand(const Word& w, ExpandEnv& env, bool braces) {
  FieldBuilder b(w, braces);
  for (const Seg& s : w.segs) {
    switch (s.kind) {
      case SegKind::text: b.add(s.text, s.quoted ? k_quoted : k_lit); break;
      case SegKind::param: expand_param(b, s, env); break;
      case SegKind::subst: {
        ExpandEnv::SubResult r = env.sub(*s.subs.at(0), true);
        b.flags().download = b.flags().download || r.download;
        if (!r.output) {
          b.flags().dynamic = true;
          b.add("$(...)", k_quoted);
          break;
        }
        std::string out = *r.output;
        while (!out.empty() && out.back() == '\n') out.pop_back();
        const Marks sub{.computed = true, .download = r.download};
        if (s.quoted) {
          b.mark(sub);
          b.add(out, k_quoted);
        } else {
          b.split(out, env.ifs(), sub);
        }
        break;
      }
      case SegKind::procsub: {
        ExpandEnv::SubResult r = env.sub(*s.subs.at(0), s.text == "<");
        b.flags().download = b.flags().download || r.download;
        b.flags().procsub = true;
        if (r.output) b.flags().content = std::make_shared<const std::string>(std::move(*r.output));
        b.add("/dev/fd/63", k_quoted);
        break;
      }
      case SegKind::dynamic:
        for (const ScriptPtr& sub : s.subs) b.flags().download = env.sub(*sub, false).download || b.flags().download;
        b.flags().dynamic = true;
        b.add(s.text, k_quoted);
        break;
    }
  }
  return b.take();
}

}  // namespace kai::shell
