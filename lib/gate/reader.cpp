#include "lib/gate/reader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/paths/beneath.hpp"
#include "lib/paths/glob.hpp"
#include "lib/config/policy.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/strings.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

bool lies_under(std::string_view rel, std::string_view dir) {
  return !dir.empty() && (rel == dir || (rel.size() > dir.size() && rel.starts_with(dir) && rel[dir.size()] == '/'));
}

// Whether a component of `rel` is a git folder (the root's .git, a
// submodule's, a worktree's `.git` file), in any letter case.
bool in_git_folder(std::string_view rel) {
  for (std::string_view part : split(rel, "/"))
    if (ascii_lower(part) == ".git") return true;
  return false;
}

}  // namespace

Status check_agent_read(const Workspace& ws, const RootPath& rp) {
  if (lies_under(rp.rel, ws.guards.state_dir))
    return make_error(Errc::denied, fmt::format("'{}' is in kaicoder's state folder (never read for an agent)", rp.rel),
                      "ask about a proposal with kaicoder show, or the proposal_status tool");
  if (in_git_folder(rp.rel))
    return make_error(Errc::denied,
                      fmt::format("'{}' is inside .git/ (never read for an agent: a remote URL there may hold a token)",
                                  rp.rel),
                      "ask git: git log, git show, git diff, git status");
  KAI_TRY(check_read(ws.guards, rp));
  Verdict v = decide(ws.cfg, "read", rp.rel);
  if (v.decision == Decision::deny)
    return make_error(Errc::denied, fmt::format("the policy denies reading '{}' ({})", rp.rel, v.rule));
  return ok_status();
}

namespace {

Status may_read(const Workspace& ws, const RootPath& rp) { return check_agent_read(ws, rp); }

// The file at `rp` as `read` may show it: policy and never-read list, then
// opened beneath root without following a symlink. A file with more than
// one name is refused: another name may lie outside root or be a secret
// file, and the bytes are the same whichever name was asked for.
Result<FileState> open_readable(const Workspace& ws, const RootPath& rp, size_t max = SIZE_MAX - 1) {
  KAI_TRY(may_read(ws, rp));
  auto d = open_parent(ws.root, rp.rel, CreateDirs::no);
  if (!d) return d.error();
  auto st = read_at(*d, rp.abs.filename().string(), max);
  if (!st) return st.error();
  if (!st->exists) return make_error(Errc::io, fmt::format("'{}' does not exist", rp.rel));
  if (!st->regular)
    return make_error(Errc::usage, fmt::format("'{}' is not a regular file", rp.rel),
                      "list folders with 'kaicoder ls'");
  if (st->nlink > 1)
    return make_error(Errc::denied,
                      fmt::format("'{}' has {} hard links; kaicoder reads only files with one name, since another "
                                  "name may lie outside root or be a secret file",
                                  rp.rel, st->nlink),
                      "copy the file and read the copy");
  return st;
}

constexpr std::string_view k_temp_dir = "/tmp";

Error not_an_input(const std::string& path, std::string_view why) {
  return make_error(
      Errc::denied, fmt::format("cannot use '{}' as input: {}", path, why),
      "put the text in a file inside the root or in a file of yours in /tmp, or pass it on stdin with '-'");
}

// A file of the caller's below /tmp, opened one component at a time without
// following a symlink. /tmp is sticky, so nobody else can swap the caller's
// file; folders below it must be the caller's and writable by nobody else.
Result<std::string> read_temp_input(const std::string& path, const fs::path& lexical, uid_t uid, size_t max) {
  const fs::path rel = lexical.lexically_relative(fs::path(k_temp_dir));
  if (is_secret_file(rel.generic_string())) return not_an_input(path, "it is a secret file (never read)");
  std::vector<std::string> parts;
  for (const auto& c : rel) parts.push_back(c.string());
  int dir = ::open(std::string(k_temp_dir).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return not_an_input(path, fmt::format("cannot open {}: {}", k_temp_dir, errno_text(errno)));
  Dir cur(dir);
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int fd = ::openat(cur.fd(), parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      return errno == ENOENT ? make_error(Errc::io, fmt::format("'{}' does not exist", path))
                             : not_an_input(path, fmt::format("the folder '{}' is not a plain folder", parts[i]));
    Dir next(fd);
    struct stat st {};
    if (::fstat(next.fd(), &st) != 0 || st.st_uid != uid || (st.st_mode & 022) != 0)
      return not_an_input(path, fmt::format("the folder '{}' is not yours alone", parts[i]));
    cur = std::move(next);
  }
  int fd = ::openat(cur.fd(), parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return make_error(Errc::io, fmt::format("'{}' does not exist", path));
    if (errno == ELOOP) return not_an_input(path, "it is a symlink, which kaicoder never follows");
    return not_an_input(path, errno_text(errno));
  }
  Dir file(fd);  // closes it
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0 || !S_ISREG(st.st_mode)) return not_an_input(path, "it is not a regular file");
  if (st.st_uid != uid) return not_an_input(path, "it is not your file");
  if (st.st_nlink > 1) return not_an_input(path, fmt::format("it has {} hard links", st.st_nlink));
  auto bytes = read_all(file.fd(), max);
  if (!bytes) return make_error(Errc::io, fmt::format("cannot read '{}': {}", path, bytes.error().message));
  return bytes;
}

bool parse_size(std::string_view s, size_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

}  // namespace

Result<LineRange> parse_line_range(const std::string& spec) {
  LineRange r;
  auto colon = spec.find(':');
  std::string_view a = std::string_view(spec).substr(0, colon);
  std::string_view b = colon == std::string::npos ? a : std::string_view(spec).substr(colon + 1);
  bool ok = parse_size(a, r.first) && r.first >= 1 && (b.empty() || (parse_size(b, r.last) && r.last >= r.first));
  if (!ok) return make_error(Errc::usage, fmt::format("--lines '{}' is not a range like 10:40", spec));
  if (b.empty()) r.last = 0;
  return r;
}

Result<ReadOut> read_for_agent(const Workspace& ws, const fs::path& cwd, const std::string& path,
                               std::optional<LineRange> lines, size_t cap) {
  auto rp = resolve(ws.root, cwd, path);
  if (!rp) return rp.error();
  auto st = open_readable(ws, *rp);
  if (!st) return st.error();
  ReadOut out;
  out.path = rp->rel;
  const std::string& bytes = st->bytes;
  out.total_lines =
      static_cast<size_t>(std::count(bytes.begin(), bytes.end(), '\n')) + (!bytes.empty() && bytes.back() != '\n');
  if (bytes.substr(0, 8000).find('\0') != std::string::npos) {
    out.binary = true;
    out.total_bytes = bytes.size();
    return out;
  }
  LineRange r = lines.value_or(LineRange{});
  size_t begin = 0, line = 1;
  for (; line < r.first && begin < bytes.size(); ++line) begin = bytes.find('\n', begin) + 1;
  if (begin == 0 && r.first > 1) begin = bytes.size();
  size_t end = begin;
  size_t last = r.last == 0 ? out.total_lines : std::min(r.last, out.total_lines);
  for (size_t l = r.first; l <= last && end < bytes.size(); ++l) {
    size_t nl = bytes.find('\n', end);
    end = nl == std::string::npos ? bytes.size() : nl + 1;
  }
  out.first_line = r.first;
  out.last_line = last;
  std::string_view sel(bytes.data() + begin, end - begin);
  out.total_bytes = sel.size();
  if (sel.size() > cap) {
    sel = sel.substr(0, cap);
    out.cut = true;
  }
  out.text = ws.redact(sel);
  return out;
}

Result<std::string> read_input_file(const Workspace& ws, const fs::path& cwd, const std::string& path, uid_t uid,
                                    size_t max) {
  if (path.empty() || path.find('\0') != std::string::npos)
    return make_error(Errc::usage, "an input file name is empty");
  fs::path lexical = (fs::path(path).is_absolute() ? fs::path(path) : cwd / path).lexically_normal();
  // Inside root first: a root under /tmp keeps its never-read list.
  auto rel = lexical.lexically_relative(ws.root);
  bool in_root = !rel.empty() && *rel.begin() != "..";
  auto in_temp = lexical.lexically_relative(fs::path(k_temp_dir));
  if (!in_root && !in_temp.empty() && *in_temp.begin() != ".." && in_temp != ".")
    return read_temp_input(path, lexical, uid, max);
  auto rp = resolve(ws.root, cwd, path);
  if (!rp) {
    if (rp.error().code == Errc::denied && rp.error().hint.empty()) return not_an_input(path, rp.error().message);
    return rp.error();
  }
  auto st = open_readable(ws, *rp, max);
  if (!st) return st.error();
  return std::move(st->bytes);
}

Result<ListOut> list_for_agent(const Workspace& ws, const fs::path& cwd, const std::string& dir,
                               const std::string& glob, size_t cap) {
  if (!glob.empty()) {
    if (glob.front() == '/' || glob.find("..") != std::string::npos || glob.front() == '~')
      return make_error(Errc::denied, fmt::format("--glob '{}' must be a relative pattern inside root", glob));
    KAI_TRY(validate_glob(glob));
  }
  fs::path base = ws.root;
  std::string base_rel;
  fs::path lexical = (dir.empty() ? cwd : (fs::path(dir).is_absolute() ? fs::path(dir) : cwd / dir)).lexically_normal();
  if (lexical != ws.root && lexical.string() != ws.root.string() + "/") {
    auto rp = resolve(ws.root, cwd, dir.empty() ? cwd.string() : dir);
    if (!rp) return rp.error();
    base = rp->abs;
    base_rel = rp->rel;
    if (lies_under(base_rel, ws.guards.state_dir) || in_git_folder(base_rel)) KAI_TRY(check_agent_read(ws, *rp));
  }
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(base, ec)))
    return make_error(Errc::usage, fmt::format("'{}' is not a folder", dir.empty() ? "." : dir));
  ListOut out;
  auto add = [&](const fs::directory_entry& e) {
    std::string rel = e.path().lexically_relative(ws.root).generic_string();
    fs::file_status s = e.symlink_status(ec);
    char type = fs::is_symlink(s) ? 'l' : fs::is_directory(s) ? 'd' : fs::is_regular_file(s) ? 'f' : 'o';
    uint64_t size = type == 'f' ? e.file_size(ec) : 0;
    out.entries.push_back({rel, type, ec ? 0 : size});
  };
  auto skip = [&](const fs::path& p) {
    std::string name = p.filename().string();
    return name == ".git" || name == ws.guards.state_dir;
  };
  if (glob.empty()) {
    for (const auto& e : fs::directory_iterator(base, ec)) {
      if (skip(e.path())) continue;
      if (out.entries.size() == cap) {
        out.cut = true;
        break;
      }
      add(e);
    }
  } else {
    fs::recursive_directory_iterator it(base, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (skip(it->path())) {
        it.disable_recursion_pending();
        continue;
      }
      std::string rel_to_base = it->path().lexically_relative(base).generic_string();
      if (!glob_match(glob, rel_to_base)) continue;
      if (out.entries.size() == cap) {
        out.cut = true;
        break;
      }
      add(*it);
    }
  }
  std::sort(out.entries.begin(), out.entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.path < b.path; });
  return out;
}

}  // namespace kai
