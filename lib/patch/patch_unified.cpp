#include "lib/patch/patch_unified.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "lib/util/git_quote.hpp"

namespace kai {

using patch_detail::shown;

namespace {

constexpr unsigned k_mode_symlink = 0120000;
constexpr unsigned k_mode_gitlink = 0160000;

std::string_view chomp(std::string_view line) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  return line;
}

// One file's section as read from the patch.
struct Section {
  size_t line = 0;  // where it starts
  bool git = false;
  std::optional<std::string> header_old, header_new;  // from `diff --git`, still with their prefix
  std::optional<std::string> minus, plus;             // from ---/+++; nullopt inside: /dev/null
  bool has_minus = false, has_plus = false;
  std::optional<std::string> rename_from, rename_to, copy_from, copy_to;
  std::optional<unsigned> old_mode, new_mode;
  bool is_new = false, is_deleted = false;
  std::vector<Hunk> hunks;
};

class UnifiedDiffParser {
public:
  UnifiedDiffParser(std::string_view text, const PatchLimits& limits) : m_text(text), m_limits(limits) {}

  Result<Changeset> run() {
    Changeset cs;
    cs.format = PatchFormat::unified;
    while (!at_end()) {
      size_t mark = m_pos, mark_no = m_no;
      std::string_view line = take();
      KAI_TRY(refuse_binary(line, nullptr));
      std::optional<Section> sec;
      if (line.starts_with("diff --git ")) {
        Result<Section> s = git_section(line);
        if (!s) return s.error();
        sec = std::move(*s);
      } else if (line.starts_with("--- ") && peek(0).starts_with("+++ ") && peek(1).starts_with("@@ -")) {
        m_pos = mark;
        m_no = mark_no;
        Section s;
        s.line = m_no + 1;
        KAI_TRY(names_and_hunks(s));
        sec = std::move(s);
      }
      if (!sec) continue;  // text between sections
      Result<FileOp> op = to_op(*sec);
      if (!op) return op.error();
      if (cs.ops.size() >= m_limits.max_files)
        return make_error(Errc::usage, fmt::format("patch touches more than {} files", m_limits.max_files),
                          "split the change into smaller patches");
      cs.ops.push_back(std::move(*op));
    }
    if (cs.ops.empty())
      return make_error(Errc::usage, "patch holds no file changes",
                        "give a unified diff (git diff) or a *** Begin Patch envelope");
    return cs;
  }

private:
  bool at_end() const { return m_pos >= m_text.size(); }

  std::string_view take() {
    ++m_no;
    std::string_view l = patch_detail::next_line(m_text, m_pos);
    if (l.size() > m_limits.max_line_bytes && m_long_line == 0) m_long_line = m_no;
    return l;
  }

  // The line `ahead` lines past the next one, without consuming anything.
  std::string_view peek(size_t ahead) const {
    size_t p = m_pos;
    std::string_view l;
    for (size_t i = 0; i <= ahead; ++i) {
      if (p >= m_text.size()) return {};
      l = patch_detail::next_line(m_text, p);
    }
    return l;
  }

  Error malformed(std::string_view why, const Section* s = nullptr) const {
    std::string where = s && name_of(*s) ? fmt::format(" (file '{}')", shown(*name_of(*s))) : std::string();
    return make_error(Errc::usage, fmt::format("malformed patch: line {}{}: {}", m_no, where, why),
                      "give the patch exactly as `git diff` or `diff -u` wrote it");
  }

  static std::optional<std::string> name_of(const Section& s) {
    for (const auto* n : {&s.rename_to, &s.copy_to, &s.plus, &s.minus, &s.header_new})
      if (*n) return **n;
    return std::nullopt;
  }

  Status refuse_binary(std::string_view line, const Section* s) const {
    if (!line.starts_with("GIT binary patch") &&
        !(line.starts_with("Binary files ") && chomp(line).ends_with(" differ")))
      return ok_status();
    std::string name = s && name_of(*s) ? *name_of(*s) : std::string(chomp(line).substr(13));
    return make_error(Errc::usage,
                      fmt::format("patch line {}: binary patch for '{}' is not supported", m_no, shown(name)),
                      "change binary files one at a time with `kaicoder propose --write`");
  }

  Status check_line_length() const {
    if (m_long_line)
      return make_error(Errc::usage,
                        fmt::format("patch line {} is longer than {} bytes", m_long_line, m_limits.max_line_bytes));
    return ok_status();
  }

  Result<unsigned> parse_mode(std::string_view text, const Section& s) const {
    text = chomp(text);
    unsigned v = 0;
    if (text.empty() || text.size() > 7) return malformed("bad file mode", &s);
    for (char c : text) {
      if (c < '0' || c > '7') return malformed("bad file mode", &s);
      v = v * 8 + static_cast<unsigned>(c - '0');
    }
    std::string name = name_of(s) ? *name_of(s) : std::string("?");
    if (v == k_mode_symlink)
      return make_error(Errc::denied,
                        fmt::format("patch line {}: '{}' is a symbolic link (mode 120000)", m_no, shown(name)),
                        "kaicoder changes regular files only");
    if (v == k_mode_gitlink)
      return make_error(Errc::denied,
                        fmt::format("patch line {}: '{}' is a submodule (mode 160000)", m_no, shown(name)),
                        "update submodules with git itself");
    if (v == k_mode_executable) return v;
    if (v == 0100644 || v == 0100664) return k_mode_regular;
    return malformed(fmt::format("unsupported file mode {}", text), &s);
  }

  // A path as written after `--- `, `rename from ` or in the git header:
  // C-quoted, or up to a tab (GNU diff puts a date there; git a tab after
  // names with spaces). nullopt for /dev/null.
  Result<std::optional<std::string>> path_field(std::string_view rest, bool to_tab) const {
    rest = chomp(rest);
    if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
    if (!rest.empty() && rest[0] == '"') {
      size_t end = 0;
      Result<std::string> q = unquote_c_style(rest, end);
      if (!q) return malformed("malformed quoted path");
      return std::optional<std::string>(std::move(*q));
    }
    if (to_tab) rest = rest.substr(0, rest.find('\t'));
    if (rest == "/dev/null") return std::optional<std::string>();
    return std::optional<std::string>(std::string(rest));
  }

  // `diff --git a/X b/Y`: quoted names are exact; unquoted ones are split
  // where the two halves name the same file (git does the same, and takes
  // the real names from the lines that follow when they differ).
  void git_header_names(std::string_view rest, Section& s) const {
    rest = chomp(rest);
    if (!rest.empty() && rest[0] == '"') {
      size_t end = 0;
      Result<std::string> a = unquote_c_style(rest, end);
      if (!a || end >= rest.size() || rest[end] != ' ') return;
      std::string_view tail = rest.substr(end + 1);
      if (!tail.empty() && tail[0] == '"') {
        Result<std::string> b = unquote_c_style(tail, end);
        if (!b || end != tail.size()) return;
        s.header_new = std::move(*b);
      } else {
        s.header_new = std::string(tail);
      }
      s.header_old = std::move(*a);
      return;
    }
    size_t q = rest.find(" \"");
    if (q != std::string_view::npos) {
      size_t end = 0;
      Result<std::string> b = unquote_c_style(rest.substr(q + 1), end);
      if (b && q + 1 + end == rest.size()) {
        s.header_old = std::string(rest.substr(0, q));
        s.header_new = std::move(*b);
      }
      return;
    }
    if (rest.size() % 2 == 0) return;
    size_t mid = rest.size() / 2;
    if (rest[mid] != ' ') return;
    std::string_view a = rest.substr(0, mid), b = rest.substr(mid + 1);
    size_t sa = a.find('/'), sb = b.find('/');
    if (sa == std::string_view::npos || sb == std::string_view::npos || a.substr(sa) != b.substr(sb)) return;
    s.header_old = std::string(a);
    s.header_new = std::string(b);
  }

  Result<Section> git_section(std::string_view first) {
    Section s;
    s.git = true;
    s.line = m_no;
    git_header_names(first.substr(11), s);
    while (!at_end()) {
      std::string_view line = peek(0);
      if (line.starts_with("@@ -") || line.starts_with("diff --git ")) break;
      if (line.starts_with("--- ")) {
        KAI_TRY(names_and_hunks(s));
        break;
      }
      take();
      KAI_TRY(refuse_binary(line, &s));
      auto field = [&](std::string_view key, std::optional<std::string>& into) -> Result<bool> {
        if (!line.starts_with(key)) return false;
        Result<std::optional<std::string>> p = path_field(line.substr(key.size()), false);
        if (!p) return p.error();
        if (!*p) return malformed("/dev/null where a path belongs", &s);
        into = std::move(**p);
        return true;
      };
      auto mode = [&](std::string_view key, std::optional<unsigned>& into) -> Result<bool> {
        if (!line.starts_with(key)) return false;
        Result<unsigned> m = parse_mode(line.substr(key.size()), s);
        if (!m) return m.error();
        into = *m;
        return true;
      };
      bool known = false;
      for (auto [key, into] : {std::pair{"rename from ", &s.rename_from},
                               {"rename to ", &s.rename_to},
                               {"rename old ", &s.rename_from},
                               {"rename new ", &s.rename_to},
                               {"copy from ", &s.copy_from},
                               {"copy to ", &s.copy_to}}) {
        Result<bool> r = field(key, *into);
        if (!r) return r.error();
        known = known || *r;
      }
      for (auto [key, into] : {std::pair{"old mode ", &s.old_mode},
                               {"new mode ", &s.new_mode},
                               {"deleted file mode ", &s.old_mode},
                               {"new file mode ", &s.new_mode}}) {
        Result<bool> r = mode(key, *into);
        if (!r) return r.error();
        known = known || *r;
      }
      if (line.starts_with("deleted file mode ")) s.is_deleted = true;
      if (line.starts_with("new file mode ")) s.is_new = true;
      if (line.starts_with("index ")) {
        std::string_view rest = chomp(line).substr(6);
        size_t sp = rest.find(' ');
        if (sp != std::string_view::npos) {
          Result<unsigned> m = parse_mode(rest.substr(sp + 1), s);  // the mode stays; links are refused
          if (!m) return m.error();
        }
        known = true;
      }
      if (line.starts_with("similarity index ") || line.starts_with("dissimilarity index ")) known = true;
      if (!known) break;  // the header ends; git apply skips what follows up to the next section
    }
    while (peek(0).starts_with("@@ -")) KAI_TRY(hunk(s));
    KAI_TRY(check_line_length());
    return s;
  }

  // `--- X` `+++ Y` and the hunks after them.
  Status names_and_hunks(Section& s) {
    std::string_view minus = take();
    std::string_view plus = peek(0);
    if (!plus.starts_with("+++ ")) return malformed("'--- ' without a '+++ ' line after it", &s);
    take();
    Result<std::optional<std::string>> a = path_field(minus.substr(4), true);
    if (!a) return a.error();
    Result<std::optional<std::string>> b = path_field(plus.substr(4), true);
    if (!b) return b.error();
    s.minus = std::move(*a);
    s.plus = std::move(*b);
    s.has_minus = s.has_plus = true;
    if (!peek(0).starts_with("@@ -") && !s.git) return malformed("no hunk after the '+++ ' line", &s);
    while (peek(0).starts_with("@@ -")) KAI_TRY(hunk(s));
    return check_line_length();
  }

  static bool number(std::string_view& s, size_t& out) {
    size_t i = 0;
    out = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (out > 1'000'000'000) return false;
      out = out * 10 + static_cast<size_t>(s[i] - '0');
      ++i;
    }
    if (i == 0) return false;
    s.remove_prefix(i);
    return true;
  }

  static bool range(std::string_view& s, size_t& start, size_t& count) {
    if (!number(s, start)) return false;
    count = 1;
    if (!s.empty() && s[0] == ',') {
      s.remove_prefix(1);
      if (!number(s, count)) return false;
    }
    return true;
  }

  Status hunk(Section& s) {
    std::string_view head = chomp(take());
    Hunk h;
    h.patch_line = m_no;
    std::string_view r = head.substr(4);
    if (!range(r, h.old_start, h.old_count) || !r.starts_with(" +")) return malformed("bad hunk header", &s);
    r.remove_prefix(2);
    if (!range(r, h.new_start, h.new_count) || !r.starts_with(" @@")) return malformed("bad hunk header", &s);
    if (h.old_start == 0 && h.old_count != 0) return malformed("bad hunk header", &s);
    h.header = std::string(head.substr(0, head.size() - r.size() + 3));
    if (h.old_count == 0 && h.new_count == 0) return malformed(fmt::format("hunk {} is empty", h.header), &s);
    size_t old_left = h.old_count, new_left = h.new_count;
    while (old_left > 0 || new_left > 0) {
      if (at_end()) return malformed("the patch ends inside a hunk", &s);
      std::string_view line = take();
      char tag = line[0];
      if (tag == '\\') {
        if (h.lines.empty()) return malformed("'\\ No newline' before any line", &s);
        no_newline(h);
        continue;
      }
      if (tag == '\n')
        tag = ' ';  // an empty context line, as GNU diff writes it
      else
        line.remove_prefix(1);
      bool old_side = tag == ' ' || tag == '-', new_side = tag == ' ' || tag == '+';
      if (tag != ' ' && tag != '-' && tag != '+') return malformed("a hunk line must start with ' ', '-' or '+'", &s);
      if ((old_side && old_left == 0) || (new_side && new_left == 0))
        return malformed(fmt::format("hunk {} has more lines than its header says", h.header), &s);
      if (old_side) --old_left;
      if (new_side) --new_left;
      std::string text(line);
      if (text.empty() || text.back() != '\n') text += '\n';  // the patch's own last line
      h.lines.push_back(HunkLine{tag, std::move(text)});
    }
    if (peek(0).starts_with("\\")) {
      take();
      no_newline(h);
    }
    if (s.hunks.size() > 0 && h.old_start < s.hunks.back().old_start) return malformed("hunks out of order", &s);
    s.hunks.push_back(std::move(h));
    return ok_status();
  }

  static void no_newline(Hunk& h) {
    std::string& t = h.lines.back().text;
    if (!t.empty() && t.back() == '\n') t.pop_back();
  }

  // -p1: drop the first component.
  Result<std::string> strip(const std::string& name, const Section& s) const {
    size_t slash = name.find('/');
    if (slash == std::string::npos)
      return malformed(fmt::format("cannot strip a leading folder from '{}'", shown(name)), &s);
    return name.substr(slash + 1);
  }

  using Names = std::pair<std::optional<std::string>, std::optional<std::string>>;  // old, new; nullopt: absent

  // The file's old and new names, prefixes stripped.
  Result<Names> names(const Section& s) const {
    std::optional<std::string> old_name, new_name;
    if (s.git) {
      // Names from ---/+++ win over the header; rename/copy lines carry no prefix.
      auto pick = [&](const std::optional<std::string>& line_name, bool has,
                      const std::optional<std::string>& header) -> Result<std::optional<std::string>> {
        const std::optional<std::string>& n = has ? line_name : header;
        if (!n) return std::optional<std::string>();
        Result<std::string> st = strip(*n, s);
        if (!st) return st.error();
        return std::optional<std::string>(std::move(*st));
      };
      Result<std::optional<std::string>> o = pick(s.minus, s.has_minus, s.header_old);
      if (!o) return o.error();
      Result<std::optional<std::string>> n = pick(s.plus, s.has_plus, s.header_new);
      if (!n) return n.error();
      old_name = std::move(*o);
      new_name = std::move(*n);
      if (s.rename_from) old_name = s.rename_from;
      if (s.rename_to) new_name = s.rename_to;
      if (s.copy_from) old_name = s.copy_from;
      if (s.copy_to) new_name = s.copy_to;
      if (s.is_new) old_name.reset();
      if (s.is_deleted) new_name.reset();
    } else {
      old_name = s.minus;
      new_name = s.plus;
      bool ab = (!old_name || old_name->starts_with("a/")) && (!new_name || new_name->starts_with("b/"));
      bool agree_after = old_name && new_name && *old_name != *new_name && old_name->find('/') != std::string::npos &&
                         new_name->find('/') != std::string::npos &&
                         old_name->substr(old_name->find('/')) == new_name->substr(new_name->find('/'));
      if (ab || agree_after) {
        for (auto* n : {&old_name, &new_name})
          if (*n) (*n)->erase(0, (*n)->find('/') + 1);
      }
      if (old_name && new_name && *old_name != *new_name)
        return malformed(fmt::format("the '---' and '+++' lines name different files ('{}', '{}')", shown(*old_name),
                                     shown(*new_name)),
                         &s);
    }
    return Names{std::move(old_name), std::move(new_name)};
  }

  Result<FileOp> to_op(Section& s) const {
    FileOp op;
    op.patch_line = s.line;
    op.hunks = std::move(s.hunks);
    Result<Names> both = names(s);
    if (!both) return both.error();
    auto& [old_name, new_name] = *both;
    if (!old_name && !new_name) return malformed("no file name for this section", &s);
    op.old_mode = s.old_mode;
    if (s.new_mode && s.new_mode != s.old_mode) op.new_mode = s.new_mode;
    if (!old_name) {
      op.kind = FileOpKind::create;
      op.path = *new_name;
      for (const Hunk& h : op.hunks) {
        if (h.old_count != 0) return malformed(fmt::format("a new file's hunk {} has old lines", h.header), &s);
        for (const HunkLine& l : h.lines) op.content += l.text;
      }
      op.hunks.clear();
    } else if (!new_name) {
      op.kind = FileOpKind::remove;
      op.path = *old_name;
      op.new_mode.reset();
    } else if (s.copy_from || s.copy_to) {
      if (!s.copy_from || !s.copy_to) return malformed("'copy from' without 'copy to'", &s);
      op.kind = FileOpKind::copy;
      op.path = *old_name;
      op.to = *new_name;
    } else if (*old_name != *new_name) {
      if (!s.git || !s.rename_from || !s.rename_to)
        return malformed(fmt::format("'{}' and '{}' differ without a rename", shown(*old_name), shown(*new_name)), &s);
      op.kind = FileOpKind::rename;
      op.path = *old_name;
      op.to = *new_name;
    } else {
      op.path = *old_name;
      op.kind = op.hunks.empty() ? FileOpKind::mode : FileOpKind::edit;
      if (op.kind == FileOpKind::mode && !op.new_mode)
        return malformed(fmt::format("no change for '{}'", shown(op.path)), &s);
    }
    KAI_TRY(patch_detail::check_patch_path(op.path, s.line, m_limits));
    if (op.kind == FileOpKind::rename || op.kind == FileOpKind::copy)
      KAI_TRY(patch_detail::check_patch_path(op.to, s.line, m_limits));
    return op;
  }

  std::string_view m_text;
  const PatchLimits& m_limits;
  size_t m_pos = 0;
  size_t m_no = 0;         // number of the line last taken
  size_t m_long_line = 0;  // first line over the limit
};

}  // namespace

Result<Changeset> parse_unified(std::string_view text, const PatchLimits& limits) {
  if (text.size() > limits.max_patch_bytes)
    return make_error(Errc::usage,
                      fmt::format("patch is too large ({} bytes, at most {})", text.size(), limits.max_patch_bytes));
  return UnifiedDiffParser(text, limits).run();
}

}  // namespace kai
