#include "lib/patch/patch_envelope.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

#include "lib/util/strings.hpp"

namespace kai {

using patch_detail::shown;

namespace {

constexpr std::string_view k_begin = "*** Begin Patch";
constexpr std::string_view k_end = "*** End Patch";
constexpr std::string_view k_add = "*** Add File: ";
constexpr std::string_view k_delete = "*** Delete File: ";
constexpr std::string_view k_update = "*** Update File: ";
constexpr std::string_view k_move = "*** Move to: ";
constexpr std::string_view k_eof = "*** End of File";

// An envelope's lines may carry blanks and a CR either side.
std::string_view trim_envelope_line(std::string_view s) { return trim(s, " \t\r\n"); }

// An envelope handed over as a shell here-document's text: `<<'EOF'` first.
bool is_heredoc(std::string_view line) {
  line = trim_envelope_line(line);
  return line == "<<EOF" || line == "<<'EOF'" || line == "<<\"EOF\"";
}

// The envelope's lines: split at "\n", a trailing "\r" dropped.
std::vector<std::string_view> envelope_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view l = patch_detail::next_line(text, pos);
    if (!l.empty() && l.back() == '\n') l.remove_suffix(1);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.push_back(l);
  }
  return out;
}

class EnvelopeParser {
public:
  EnvelopeParser(std::vector<std::string_view> lines, const PatchLimits& limits)
      : m_lines(std::move(lines)), m_limits(limits) {}

  Result<Changeset> run() {
    Changeset cs;
    cs.format = PatchFormat::envelope;
    size_t first = 0, last = m_lines.size();
    while (first < last && trim_envelope_line(m_lines[first]).empty()) ++first;
    while (last > first && trim_envelope_line(m_lines[last - 1]).empty()) --last;
    if (last - first >= 4 && is_heredoc(m_lines[first]) && trim_envelope_line(m_lines[last - 1]).ends_with("EOF")) {
      ++first;
      --last;
    }
    if (first == last || trim_envelope_line(m_lines[first]) != k_begin)
      return bad(first, "the envelope must start with '*** Begin Patch'");
    if (last - first < 2 || trim_envelope_line(m_lines[last - 1]) != k_end)
      return bad(last, "the envelope must end with '*** End Patch'");
    for (size_t i = 0; i < m_lines.size(); ++i)
      if (m_lines[i].size() > m_limits.max_line_bytes)
        return bad(i, fmt::format("line is longer than {} bytes", m_limits.max_line_bytes));
    m_i = first + 1;
    m_end = last - 1;
    while (m_i < m_end) {
      if (cs.ops.size() >= m_limits.max_files)
        return make_error(Errc::usage, fmt::format("patch touches more than {} files", m_limits.max_files),
                          "split the change into smaller patches");
      Result<FileOp> op = file_op();
      if (!op) return op.error();
      cs.ops.push_back(std::move(*op));
    }
    if (cs.ops.empty()) return bad(m_i, "the envelope holds no file operations");
    return cs;
  }

private:
  Error bad(size_t index, std::string_view why) const {
    return make_error(Errc::usage, fmt::format("malformed patch: line {}: {}", index + 1, why),
                      "an envelope is '*** Begin Patch', then '*** Add File: P', '*** Update File: P' or "
                      "'*** Delete File: P' sections, then '*** End Patch'");
  }

  Result<std::string> path_after(std::string_view prefix) {
    std::string path(trim_envelope_line(trim_envelope_line(m_lines[m_i]).substr(prefix.size())));
    KAI_TRY(patch_detail::check_patch_path(path, m_i + 1, m_limits));
    return path;
  }

  Result<FileOp> file_op() {
    std::string_view head = trim_envelope_line(m_lines[m_i]);
    FileOp op;
    op.format = PatchFormat::envelope;
    op.patch_line = m_i + 1;
    if (head.starts_with(k_add)) {
      Result<std::string> p = path_after(k_add);
      if (!p) return p.error();
      op.kind = FileOpKind::create;
      op.path = std::move(*p);
      ++m_i;
      while (m_i < m_end && m_lines[m_i].starts_with("+")) {
        op.content.append(m_lines[m_i].substr(1));
        op.content += '\n';
        ++m_i;
      }
      return op;
    }
    if (head.starts_with(k_delete)) {
      Result<std::string> p = path_after(k_delete);
      if (!p) return p.error();
      op.kind = FileOpKind::remove;
      op.path = std::move(*p);
      ++m_i;
      return op;
    }
    if (!head.starts_with(k_update))
      return bad(m_i, "expected '*** Add File:', '*** Update File:' or '*** Delete File:'");
    Result<std::string> p = path_after(k_update);
    if (!p) return p.error();
    op.kind = FileOpKind::edit;
    op.path = std::move(*p);
    ++m_i;
    if (m_i < m_end && trim_envelope_line(m_lines[m_i]).starts_with(k_move)) {
      Result<std::string> to = path_after(k_move);
      if (!to) return to.error();
      op.kind = FileOpKind::rename;
      op.to = std::move(*to);
      ++m_i;
    }
    while (true) {
      while (m_i < m_end && trim_envelope_line(m_lines[m_i]).empty()) ++m_i;  // blank lines between hunks
      if (m_i >= m_end || m_lines[m_i].starts_with("*** ")) break;
      Result<Hunk> h = hunk(op.hunks.empty());
      if (!h) return h.error();
      op.hunks.push_back(std::move(*h));
    }
    if (op.hunks.empty() && op.kind == FileOpKind::edit)
      return bad(op.patch_line - 1, fmt::format("'*** Update File: {}' has no hunks", shown(op.path)));
    return op;
  }

  Result<Hunk> hunk(bool first) {
    Hunk h;
    h.patch_line = m_i + 1;
    while (m_i < m_end && m_lines[m_i].starts_with("@@")) {
      std::string_view anchor = m_lines[m_i].substr(2);
      if (!anchor.empty() && anchor[0] == ' ') anchor.remove_prefix(1);
      if (!trim_envelope_line(anchor).empty()) h.anchors.emplace_back(anchor);
      ++m_i;
    }
    if (h.patch_line == m_i + 1 && !first) return bad(m_i, "expected '@@' before the hunk's lines");
    h.header = "@@";
    for (const std::string& a : h.anchors) h.header += " " + a;
    while (m_i < m_end) {
      std::string_view l = m_lines[m_i];
      if (l == k_eof) {
        h.at_eof = true;
        ++m_i;
        break;
      }
      if (l.empty()) {
        h.lines.push_back(HunkLine{' ', ""});
      } else if (l[0] == ' ' || l[0] == '-' || l[0] == '+') {
        h.lines.push_back(HunkLine{l[0], std::string(l.substr(1))});
      } else {
        break;
      }
      ++m_i;
    }
    if (h.lines.empty())
      return bad(m_i, "a hunk needs lines starting with ' ' (context), '-' (removed) or '+' (added)");
    return h;
  }

  std::vector<std::string_view> m_lines;
  const PatchLimits& m_limits;
  size_t m_i = 0, m_end = 0;
};

// One line of a file: its text and its ending ("\n", "\r\n", or none at the end).
struct FileLine {
  std::string_view text, eol;
};

std::vector<FileLine> file_lines(std::string_view bytes) {
  std::vector<FileLine> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    std::string_view l = patch_detail::next_line(bytes, pos);
    size_t cut = l.size();
    if (cut > 0 && l[cut - 1] == '\n') --cut;
    if (cut > 0 && l[cut - 1] == '\r' && cut < l.size()) --cut;
    out.push_back(FileLine{l.substr(0, cut), l.substr(cut)});
  }
  return out;
}

struct Placed {
  size_t at = 0;     // first file line replaced
  size_t span = 0;   // how many file lines the hunk covers
  size_t hunk = 0;   // index in op.hunks
  size_t lines = 0;  // how many of the hunk's lines are used (the last may be dropped)
};

}  // namespace

bool looks_like_envelope(std::string_view text) {
  size_t pos = 0;
  bool heredoc = false;
  while (pos < text.size()) {
    std::string_view l = trim_envelope_line(patch_detail::next_line(text, pos));
    if (l.empty()) continue;
    if (!heredoc && is_heredoc(l)) {
      heredoc = true;
      continue;
    }
    return l == k_begin;
  }
  return false;
}

Result<Changeset> parse_envelope(std::string_view text, const PatchLimits& limits) {
  if (text.size() > limits.max_patch_bytes)
    return make_error(Errc::usage,
                      fmt::format("patch is too large ({} bytes, at most {})", text.size(), limits.max_patch_bytes));
  return EnvelopeParser(envelope_lines(text), limits).run();
}

Result<std::string> apply_envelope_hunks(const FileOp& op, std::string_view before, uint64_t& steps,
                                         const PatchLimits& limits) {
  std::vector<FileLine> lines = file_lines(before);
  const size_t n = lines.size();
  std::string_view style = !lines.empty() && !lines[0].eol.empty() ? lines[0].eol : std::string_view("\n");
  auto fail = [&](size_t k, std::string_view why) {
    return make_error(Errc::conflict,
                      fmt::format("patch does not apply to '{}': hunk {} ({}, patch line {}) {}", shown(op.path), k + 1,
                                  shown(op.hunks[k].header), op.hunks[k].patch_line, why),
                      "read the file again and make the patch from its current content");
  };
  auto too_costly = [&] {
    return make_error(Errc::conflict,
                      fmt::format("patch does not apply to '{}': placing its hunks takes too long", shown(op.path)),
                      "give the hunks more distinctive context, or split the patch");
  };
  using Eq = bool (*)(std::string_view, std::string_view);
  const Eq exact = [](std::string_view a, std::string_view b) { return a == b; };
  const Eq loose_end = [](std::string_view a, std::string_view b) {
    return trim_right(a, " \t\r\n\f\v") == trim_right(b, " \t\r\n\f\v");
  };
  const Eq loose = [](std::string_view a, std::string_view b) {
    return trim_envelope_line(a) == trim_envelope_line(b);
  };

  std::vector<Placed> placed;
  size_t cursor = 0;
  for (size_t k = 0; k < op.hunks.size(); ++k) {
    const Hunk& h = op.hunks[k];
    for (const std::string& anchor : h.anchors) {
      std::optional<size_t> hit;
      for (Eq eq : {exact, loose_end, loose}) {
        for (size_t i = cursor; i < n && !hit; ++i) {
          ++steps;
          if (eq(lines[i].text, anchor)) hit = i;
        }
        if (hit || steps > limits.max_match_steps) break;
      }
      if (steps > limits.max_match_steps) return too_costly();
      if (!hit) return fail(k, fmt::format("its anchor '{}' is not in the file", shown(anchor)));
      cursor = *hit + 1;
    }
    size_t used = h.lines.size();
    std::optional<size_t> at;
    std::vector<std::string_view> old;
    for (int attempt = 0; attempt < 2 && !at; ++attempt) {
      if (attempt == 1) {
        // A trailing empty context line may stand for the end of the file.
        if (used == 0 || h.lines[used - 1].tag != ' ' || !h.lines[used - 1].text.empty()) break;
        --used;
      }
      old.clear();
      for (size_t j = 0; j < used; ++j)
        if (h.lines[j].tag != '+') old.push_back(h.lines[j].text);
      if (old.empty()) {
        at = (h.at_eof || h.anchors.empty()) ? n : cursor;
        break;
      }
      if (old.size() > n - std::min(cursor, n)) continue;
      size_t lo = cursor, hi = n - old.size();
      for (Eq eq : {exact, loose_end}) {
        for (size_t i = h.at_eof ? hi : lo; i <= hi && !at; ++i) {
          size_t j = 0;
          while (j < old.size() && eq(lines[i + j].text, old[j])) ++j;
          steps += j + 1;
          if (j == old.size()) at = i;
          if (steps > limits.max_match_steps) return too_costly();
        }
        if (at) break;
      }
    }
    if (!at) return fail(k, "does not match the file");
    placed.push_back(Placed{*at, old.size(), k, used});
    cursor = *at + old.size();
  }

  // Each placement starts at or after the previous one's end, so one pass
  // over the file builds the result.
  std::vector<std::pair<std::string_view, std::string_view>> out;  // text, eol
  out.reserve(n);
  size_t i = 0;
  for (const Placed& p : placed) {
    for (; i < p.at; ++i) out.emplace_back(lines[i].text, lines[i].eol);
    const Hunk& h = op.hunks[p.hunk];
    for (size_t j = 0; j < p.lines; ++j) {
      const HunkLine& l = h.lines[j];
      if (l.tag == '+') {
        out.emplace_back(l.text, style);
      } else {
        if (l.tag == ' ') out.emplace_back(lines[i].text, lines[i].eol);
        ++i;
      }
    }
  }
  for (; i < n; ++i) out.emplace_back(lines[i].text, lines[i].eol);
  std::string result;
  result.reserve(before.size());
  for (size_t j = 0; j < out.size(); ++j) {
    result += out[j].first;
    result += (out[j].second.empty() && j + 1 < out.size()) ? style : out[j].second;
  }
  return result;
}

}  // namespace kai
