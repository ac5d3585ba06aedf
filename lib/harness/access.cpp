#include "lib/harness/access.hpp"

#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "lib/paths/glob.hpp"
#include "lib/paths/paths.hpp"
#include "lib/config/policy.hpp"

namespace kai::harness {
namespace fs = std::filesystem;

namespace {

bool under(std::string_view rel, std::string_view dir) {
  return rel == dir || (rel.size() > dir.size() && rel.starts_with(dir) && rel[dir.size()] == '/');
}

// Files a harness must never get through its own tools, even where
// `kaicoder read` would show them: kaicoder's own state (staged payloads
// keep their raw bytes) and git's internals.
Status check_kept(const Workspace& ws, std::string_view rel) {
  if (under(rel, ws.guards.state_dir))
    return make_error(Errc::denied, fmt::format("'{}' is in kaicoder's state folder", rel));
  if (under(rel, ".git")) return make_error(Errc::denied, fmt::format("'{}' is inside .git/", rel));
  return ok_status();
}

Status check_file(const Workspace& ws, const RootPath& rp) {
  KAI_TRY(check_kept(ws, rp.rel));
  KAI_TRY(check_read(ws.guards, rp));
  Verdict v = decide(ws.cfg, "read", rp.rel);
  if (v.decision == Decision::deny)
    return make_error(Errc::denied, fmt::format("the policy denies reading '{}' ({})", rp.rel, v.rule));
  return ok_status();
}

// The folder a search or listing starts from, root itself allowed.
Result<RootPath> resolve_folder(const Workspace& ws, const fs::path& cwd, const std::string& dir) {
  fs::path p = dir.empty() ? cwd : fs::path(dir).is_absolute() ? fs::path(dir) : cwd / dir;
  p = p.lexically_normal();
  if (p.has_filename() == false && p != p.root_path()) p = p.parent_path();
  if (p == ws.root) return RootPath{"", ws.root};
  return resolve(ws.root, cwd, p.string());
}

}  // namespace

Status check_read_path(const Workspace& ws, const fs::path& cwd, const std::string& path) {
  auto rp = resolve(ws.root, cwd, path);
  if (!rp) return rp.error();
  return check_file(ws, *rp);
}

Status check_list_path(const Workspace& ws, const fs::path& cwd, const std::string& dir) {
  auto rp = resolve_folder(ws, cwd, dir);
  if (!rp) return rp.error();
  if (rp->rel.empty()) return ok_status();
  return check_file(ws, *rp);
}

Status check_search(const Workspace& ws, const fs::path& cwd, const std::string& dir, const std::string& glob,
                    size_t max_entries) {
  auto top = resolve_folder(ws, cwd, dir);
  if (!top) return top.error();
  if (!top->rel.empty()) KAI_TRY(check_file(ws, *top));
  if (!glob.empty()) {
    if (glob.front() == '/' || glob.front() == '!' || glob.find_first_of("{}") != std::string::npos)
      return make_error(Errc::denied, fmt::format("kaicoder cannot judge the pattern '{}' exactly", glob),
                        "give a relative pattern without braces or '!', and name the folder as the path");
    if (auto v = validate_glob(glob); !v)
      return make_error(Errc::denied, fmt::format("the pattern '{}' is refused: {}", glob, v.error().message));
  }
  std::error_code ec;
  auto st = fs::symlink_status(top->abs, ec);
  if (ec) return make_error(Errc::denied, fmt::format("cannot look at '{}': {}", top->rel, ec.message()));
  if (fs::is_regular_file(st)) return ok_status();  // the one file, checked above
  const std::string base = top->rel.empty() ? "" : top->rel + "/";
  std::vector<fs::path> folders{top->abs};  // still to walk
  size_t seen = 0;
  while (!folders.empty()) {
    fs::path d = std::move(folders.back());
    folders.pop_back();
    for (fs::directory_iterator it(d, fs::directory_options::none, ec), end; !ec && it != end; it.increment(ec)) {
      if (++seen > max_entries)
        return make_error(
            Errc::denied,
            fmt::format("more than {} entries to check below '{}'", max_entries, top->rel.empty() ? "." : top->rel),
            "search a smaller folder, or narrow the search with a glob");
      const fs::path& p = it->path();
      const std::string rel = p.lexically_relative(ws.root).generic_string();
      const std::string in_search = rel.substr(base.size());
      auto s = it->symlink_status(ec);
      if (ec) break;
      if (fs::is_symlink(s)) {
        fs::path target = fs::weakly_canonical(p, ec);
        if (ec) break;
        auto trel = target.lexically_relative(ws.root);
        if (trel.empty() || *trel.begin() == "..")
          return make_error(Errc::denied, fmt::format("'{}' is a symlink that leads out of root", rel));
        const std::string t = trel.generic_string();
        if (t != ".") KAI_TRY(check_file(ws, RootPath{t, target}));
        continue;
      }
      if (fs::is_directory(s)) {
        folders.push_back(p);
        continue;
      }
      if (!glob.empty() && !glob_match(glob, in_search)) continue;
      KAI_TRY(check_file(ws, RootPath{rel, p}));
    }
    if (ec) return make_error(Errc::denied, fmt::format("cannot walk '{}': {}", d.string(), ec.message()));
  }
  return ok_status();
}

}  // namespace kai::harness
