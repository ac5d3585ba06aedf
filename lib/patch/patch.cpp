#include "lib/patch/patch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "lib/patch/patch_envelope.hpp"
#include "lib/patch/patch_unified.hpp"
#include "lib/util/text.hpp"

namespace kai {

std::string_view op_kind_name(FileOpKind k) {
  switch (k) {
    case FileOpKind::edit: return "edit";
    case FileOpKind::write: return "write";
    case FileOpKind::create: return "create";
    case FileOpKind::remove: return "delete";
    case FileOpKind::rename: return "rename";
    case FileOpKind::copy: return "copy";
    case FileOpKind::mode: return "mode";
  }
  return "edit";
}

namespace patch_detail {

std::string_view next_line(std::string_view text, size_t& pos) {
  size_t start = pos;
  size_t nl = text.find('\n', pos);
  pos = nl == std::string_view::npos ? text.size() : nl + 1;
  return text.substr(start, pos - start);
}

std::string shown(std::string_view path) { return make_visible(path); }

Status check_patch_path(std::string_view path, size_t line, const PatchLimits& limits) {
  auto bad = [&](Errc code, std::string_view why) {
    return make_error(code, fmt::format("patch line {}: path '{}' {}", line, shown(path), why),
                      "paths in a patch are relative to the root, like src/a.c");
  };
  if (path.empty()) return bad(Errc::usage, "is empty");
  if (path.size() > limits.max_path_bytes) return bad(Errc::usage, "is too long");
  if (path.find('\0') != std::string_view::npos) return bad(Errc::usage, "holds a NUL byte");
  if (path.front() == '/') return bad(Errc::denied, "is absolute");
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    std::string_view comp =
        path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    if (comp == "..") return bad(Errc::denied, "leaves the root ('..')");
    if (comp.empty() || comp == ".") return bad(Errc::usage, "is not in canonical form (empty or '.' component)");
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return ok_status();
}

}  // namespace patch_detail

Result<Changeset> parse_patch(std::string_view text, const PatchLimits& limits) {
  if (text.size() > limits.max_patch_bytes)
    return make_error(Errc::usage,
                      fmt::format("patch is too large ({} bytes, at most {})", text.size(), limits.max_patch_bytes),
                      "split the change into smaller patches");
  if (looks_like_envelope(text)) return parse_envelope(text, limits);
  return parse_unified(text, limits);
}

namespace {

using patch_detail::shown;

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) out.push_back(patch_detail::next_line(text, pos));
  return out;
}

// Permission bits after a mode change to git mode `m`: the executable bit
// follows the read bits (0644 -> 0755, 0600 -> 0700); other bits stay.
unsigned permissions_for(unsigned before, unsigned git_mode) {
  if (git_mode == k_mode_executable) return before | ((before & 0444u) >> 2);
  return before & ~0111u;
}

Error hunk_error(const FileOp& op, size_t index, const Hunk& h, std::string_view why) {
  return make_error(Errc::conflict,
                    fmt::format("patch does not apply to '{}': hunk {} ({}, patch line {}) {}", shown(op.path),
                                index + 1, shown(h.header), h.patch_line, why),
                    "the file changed since the patch was made: make the patch again from its current content");
}

Error too_costly(const FileOp& op) {
  return make_error(Errc::conflict,
                    fmt::format("patch does not apply to '{}': placing its hunks takes too long", shown(op.path)),
                    "give the hunks more distinctive context, or split the patch");
}

// Unified hunks, placed as `git apply` places them (see the header).
Result<std::string> apply_unified(const FileOp& op, std::string_view before, uint64_t& steps,
                                  const PatchLimits& limits) {
  std::vector<std::string_view> lines = split_lines(before);
  std::hash<std::string_view> hasher;
  std::vector<size_t> hashes(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) hashes[i] = hasher(lines[i]);

  std::string out;
  out.reserve(before.size());
  size_t copied = 0;  // next original line not yet copied or replaced
  for (size_t k = 0; k < op.hunks.size(); ++k) {
    const Hunk& h = op.hunks[k];
    std::vector<std::string_view> pre;
    std::vector<size_t> pre_hash;
    for (const HunkLine& l : h.lines) {
      if (l.tag == '+') continue;
      pre.push_back(l.text);
      pre_hash.push_back(hasher(l.text));
    }
    size_t trailing = 0;
    for (size_t i = h.lines.size(); i > 0 && h.lines[i - 1].tag == ' '; --i) ++trailing;
    const bool match_begin = h.old_start <= 1;
    const bool match_end = trailing == 0;
    const size_t n = lines.size();
    if (pre.size() > n - copied) return hunk_error(op, k, h, "does not match: the file is shorter");
    const size_t lo = copied, hi = n - pre.size();  // candidate starts, inclusive
    auto matches = [&](size_t at) {
      ++steps;
      for (size_t i = 0; i < pre.size(); ++i) {
        ++steps;
        if (hashes[at + i] != pre_hash[i] || lines[at + i] != pre[i]) return false;
      }
      return true;
    };
    size_t want = h.old_count > 0 ? h.old_start - 1 : h.old_start;
    std::optional<size_t> found;
    if (match_begin || match_end) {
      size_t at = match_begin ? 0 : hi;
      if (match_begin && match_end && hi != 0) at = n + 1;  // the hunk must be the whole file
      if (at >= lo && at <= hi && matches(at)) found = at;
    } else {
      want = std::clamp(want, lo, hi);
      for (size_t d = 0;; ++d) {
        bool any = false;
        if (want + d <= hi) {
          any = true;
          if (matches(want + d)) {
            found = want + d;
            break;
          }
        }
        if (d > 0 && want >= lo + d) {
          any = true;
          if (matches(want - d)) {
            found = want - d;
            break;
          }
        }
        if (!any) break;
        if (steps > limits.max_match_steps) return too_costly(op);
      }
    }
    if (steps > limits.max_match_steps) return too_costly(op);
    if (!found) return hunk_error(op, k, h, "does not match the file");
    for (size_t i = copied; i < *found; ++i) out += lines[i];
    for (const HunkLine& l : h.lines)
      if (l.tag != '-') out += l.text;
    copied = *found + pre.size();
  }
  for (size_t i = copied; i < lines.size(); ++i) out += lines[i];
  return out;
}

Error op_error(const FileOp& op, std::string_view path, std::string_view why) {
  return make_error(Errc::conflict, fmt::format("cannot {} '{}': {}", op_kind_name(op.kind), shown(path), why),
                    "make the patch again from the current files");
}

Result<std::string> apply_hunks(const FileOp& op, std::string_view before, uint64_t& steps, const PatchLimits& limits) {
  if (op.hunks.empty()) return std::string(before);
  if (op.format == PatchFormat::envelope) return apply_envelope_hunks(op, before, steps, limits);
  return apply_unified(op, before, steps, limits);
}

Status apply_one(FileOp& op, const ReadCurrent& read, uint64_t& steps, const PatchLimits& limits) {
  Result<std::optional<CurrentFile>> cur = read(op.path);
  if (!cur) return cur.error();
  if (op.kind == FileOpKind::create) {
    if (*cur) return op_error(op, op.path, "it already exists");
    op.before.reset();
    op.before_mode = 0;
    op.after = op.content;
    op.after_mode = op.new_mode == k_mode_executable ? 0755u : 0644u;
    return ok_status();
  }
  if (!*cur) return op_error(op, op.path, "it does not exist");
  op.before = std::move((*cur)->bytes);
  op.before_mode = (*cur)->mode;
  op.after_mode = op.new_mode ? permissions_for(op.before_mode, *op.new_mode) : op.before_mode;
  if (op.kind == FileOpKind::remove) {
    if (op.format == PatchFormat::unified) {
      Result<std::string> left = apply_hunks(op, *op.before, steps, limits);
      if (!left) return left.error();
      if (!left->empty()) return op_error(op, op.path, "the patch does not remove all of its content");
    }
    op.after.reset();
    return ok_status();
  }
  if (op.kind == FileOpKind::rename || op.kind == FileOpKind::copy) {
    Result<std::optional<CurrentFile>> there = read(op.to);
    if (!there) return there.error();
    if (*there) return op_error(op, op.to, "it already exists");
  }
  if (op.kind == FileOpKind::write) {
    op.after = op.content;
    return ok_status();
  }
  Result<std::string> result = apply_hunks(op, *op.before, steps, limits);
  if (!result) return result.error();
  op.after = std::move(*result);
  return ok_status();
}

}  // namespace

Status apply_changeset(Changeset& cs, const ReadCurrent& read, const PatchLimits& limits) {
  if (cs.ops.size() > limits.max_files)
    return make_error(Errc::usage, fmt::format("patch touches {} files, at most {}", cs.ops.size(), limits.max_files),
                      "split the change into smaller patches");
  std::set<std::string_view> touched;
  for (const FileOp& op : cs.ops) {
    std::vector<std::string_view> names;
    if (op.kind != FileOpKind::copy) names.push_back(op.path);
    if (op.kind == FileOpKind::rename || op.kind == FileOpKind::copy) names.push_back(op.to);
    for (std::string_view name : names)
      if (!touched.insert(name).second)
        return make_error(Errc::conflict,
                          fmt::format("patch touches '{}' twice (patch line {})", shown(name), op.patch_line),
                          "change each file in one place of the patch");
  }
  uint64_t steps = 0;
  for (FileOp& op : cs.ops) KAI_TRY(apply_one(op, read, steps, limits));
  return ok_status();
}

}  // namespace kai
