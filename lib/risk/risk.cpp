#include "lib/risk/risk.hpp"

#include <algorithm>
#include <charconv>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <git2.h>

#include "lib/paths/beneath.hpp"
#include "lib/risk/deps.hpp"
#include "lib/util/git.hpp"
#include "lib/util/git_tree.hpp"
#include "lib/config/policy.hpp"
#include "lib/util/fs.hpp"
#include "lib/version.hpp"
#include "lib/config/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

// Bumped whenever the scanners or the cache layout change, so an old cache
// is never read as a new one.
constexpr std::string_view k_deps_cache_magic = "kaicoder-deps 3";
// Bigger blobs are generated or vendored (minified bundles, amalgamations):
// they stay in the graph as targets but are not scanned.
constexpr size_t k_max_scan_bytes = 1 << 20;

struct Tracked {
  std::string path;
  git_oid oid;
  bool scan;          // a regular file (not a symlink)
  std::string stamp;  // blob id, plus "l" for a symlink: what the file's imports depend on
};

// Stage-0 blobs and symlinks of the index; submodules are not files here.
std::vector<Tracked> tracked_entries(git_index* idx) {
  std::vector<Tracked> out;
  const size_t n = git_index_entrycount(idx);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(idx, i);
    if (!e || GIT_INDEX_ENTRY_STAGE(e) > 1) continue;  // conflicts: stage 1 (the base) stands for the file
    if (!out.empty() && out.back().path == e->path) continue;
    const bool link = e->mode == GIT_FILEMODE_LINK;
    if (e->mode != GIT_FILEMODE_BLOB && e->mode != GIT_FILEMODE_BLOB_EXECUTABLE && !link) continue;
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &e->id);
    out.push_back({e->path, e->id, !link, std::string(hex) + (link ? "l" : "")});
  }
  return out;
}

// Same entries, same paths → same graph; stat data that `git status`
// refreshes in the index does not change it, so it is not part of the key.
std::string index_key(const std::vector<Tracked>& entries) {
  std::string buf = fmt::format("{} {}\n", k_deps_cache_magic, version());
  buf.reserve(buf.size() + entries.size() * 64);
  for (const auto& e : entries) {
    buf += e.path;
    buf += '\0';
    buf += e.stamp;
    buf += '\n';
  }
  return blob_id(buf);
}

// Stamp of a file a stopped scan did not reach: it matches no blob, so the
// next scan reads the file again.
constexpr std::string_view k_not_scanned = "-";

// One record a file: "PATH\0STAMP DEP DEP…\n", after a three-line header.
// A partial graph (a scan that ran out of budget) is written with a key no
// index has, so it is never taken as complete: only its files' imports are
// reused, and the stamp of each file it did not reach is k_not_scanned.
std::string cache_text(const std::string& key, const DepGraph& g, const std::vector<std::string>& stamps,
                       bool complete) {
  std::string out =
      fmt::format("{}\nkey {}{}\nfiles {}\n", k_deps_cache_magic, complete ? "" : "partial:", key, g.files.size());
  for (size_t i = 0; i < g.files.size(); ++i) {
    out += g.files[i];
    out += '\0';
    out += stamps[i];
    for (uint32_t d : g.deps[i]) fmt::format_to(std::back_inserter(out), " {}", d);
    out += '\n';
  }
  return out;
}

struct CachedGraph {
  std::string key;
  DepGraph graph;
  std::vector<std::string> stamps;
};

// The cache when `text` is well formed; anything else (truncation, an index
// out of range, garbage) is nullopt, never an error.
std::optional<CachedGraph> parse_cache(std::string_view text) {
  auto line = [](std::string_view& rest) {
    size_t nl = rest.find('\n');
    std::string_view l = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    return l;
  };
  std::string_view rest = text;
  if (line(rest) != k_deps_cache_magic) return std::nullopt;
  std::string_view key = line(rest), count = line(rest);
  size_t n = 0;
  if (key.substr(0, 4) != "key " || count.substr(0, 6) != "files " ||
      std::from_chars(count.data() + 6, count.data() + count.size(), n).ec != std::errc{} || n > rest.size())
    return std::nullopt;
  CachedGraph c;
  c.key = std::string(key.substr(4));
  c.graph.files.reserve(n);
  c.graph.deps.resize(n);
  c.stamps.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    size_t nul = rest.find('\0');
    if (nul == std::string_view::npos || nul == 0) return std::nullopt;
    c.graph.files.emplace_back(rest.substr(0, nul));
    rest.remove_prefix(nul + 1);
    size_t nl = rest.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;  // truncated
    std::string_view rec = rest.substr(0, nl);
    rest.remove_prefix(nl + 1);
    size_t sp = std::min(rec.find(' '), rec.size());
    if (sp < GIT_OID_HEXSZ && rec.substr(0, sp) != k_not_scanned) return std::nullopt;
    c.stamps.emplace_back(rec.substr(0, sp));
    const char* p = rec.data() + sp;
    const char* end = rec.data() + rec.size();
    while (p < end) {
      uint32_t d = 0;
      auto r = std::from_chars(p + 1, end, d);  // p is at the blank before each index
      if (*p != ' ' || r.ec != std::errc{} || d >= n) return std::nullopt;
      c.graph.deps[i].push_back(d);
      p = r.ptr;
    }
  }
  if (!rest.empty()) return std::nullopt;
  return c;
}

std::string read_blob(git_odb* odb, const git_oid& oid) {
  // The size first: a huge blob is never brought into memory.
  size_t size = 0;
  git_object_t type{};
  if (git_odb_read_header(&size, &type, odb, &oid) < 0 || size > k_max_scan_bytes) return {};
  git_odb_object* raw = nullptr;
  if (git_odb_read(&raw, odb, &oid) < 0) return {};
  OdbObjectPtr obj{raw};
  if (git_odb_object_size(raw) > k_max_scan_bytes) return {};
  return std::string(static_cast<const char*>(git_odb_object_data(raw)), git_odb_object_size(raw));
}

// Whether `prior` resolved its imports against the same files: then the
// dependencies of every file whose blob is unchanged still hold.
bool same_files(const CachedGraph& prior, const std::vector<Tracked>& entries) {
  if (prior.graph.files.size() != entries.size()) return false;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (prior.graph.files[i] != entries[i].path) return false;
    // go.mod names the module that Go imports resolve against.
    if (entries[i].path.ends_with("go.mod") && prior.stamps[i] != entries[i].stamp) return false;
  }
  return true;
}

// Every scannable blob read and scanned, except those `prior` already
// scanned when it was built for the same files. Stops when `budget` runs
// out: `stamps` then marks the files not reached.
DepGraph scan(git_odb* odb, const std::vector<Tracked>& entries, const std::optional<CachedGraph>& prior,
              const ScanProgress& progress, ScanBudget& budget, std::vector<std::string>& stamps, GraphLoad& stats) {
  std::vector<std::string> paths;
  paths.reserve(entries.size());
  for (const auto& e : entries) paths.push_back(e.path);
  FileSet files{std::move(paths)};
  auto mods = go_modules(files, [&](uint32_t i) {
    std::string text = budget.spent() ? std::string() : read_blob(odb, entries[i].oid);
    budget.bytes(text.size());
    return text;
  });
  const bool reuse = prior && same_files(*prior, entries);
  DepGraph g;
  g.files = files.paths();
  g.deps.resize(entries.size());
  stamps.clear();
  for (const auto& e : entries) stamps.push_back(e.stamp);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (progress && i % 1024 == 0) progress(i, entries.size());
    if (!entries[i].scan || language_of(entries[i].path) == Lang::other) continue;
    if (reuse && prior->stamps[i] == entries[i].stamp) {
      g.deps[i] = prior->graph.deps[i];
      ++stats.reused;
      continue;
    }
    if (!budget.spent() && budget.check_time()) {
      const std::string text = read_blob(odb, entries[i].oid);
      ++stats.scanned;
      g.deps[i] = dependencies(files, mods, entries[i].path, text, budget);
      if (!budget.spent()) continue;
    }
    // Not reached, or cut short: its imports are unknown.
    g.deps[i].clear();
    stamps[i] = std::string(k_not_scanned);
    ++stats.unscanned;
  }
  if (progress) progress(entries.size(), entries.size());
  return g;
}

// `rel` (root-relative) as a repository-relative path, and back.
std::string repo_path(const fs::path& root, const fs::path& workdir, const std::string& rel) {
  fs::path prefix = root.lexically_relative(workdir);
  if (prefix.empty() || prefix == ".") return rel;
  return (prefix / rel).generic_string();
}

std::string shown_path(const fs::path& root, const fs::path& workdir, const std::string& repo_rel) {
  std::string prefix = repo_path(root, workdir, "");
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  return repo_rel.rfind(prefix, 0) == 0 ? repo_rel.substr(prefix.size()) : repo_rel;
}

void raise_to(Risk& level, Risk at_least) { level = std::max(level, at_least); }

std::string dependents_text(const Dependents& d, const std::string& target,
                            const std::vector<std::string>& direct_shown) {
  if (d.transitive == 0) return fmt::format("no tracked file depends on {}", target);
  std::string n = fmt::format("{}{}", d.transitive, d.capped ? "+" : "");
  std::string text = fmt::format("{} tracked file{} depend{} on {}", n, d.transitive == 1 ? "" : "s",
                                 d.transitive == 1 ? "s" : "", target);
  constexpr size_t k_examples = 3;
  std::string list;
  for (size_t i = 0; i < std::min(k_examples, direct_shown.size()); ++i) list += (i ? ", " : "") + direct_shown[i];
  if (direct_shown.size() > k_examples) list += ", \u2026";
  if (d.transitive > direct_shown.size()) return fmt::format("{} ({} directly: {})", text, direct_shown.size(), list);
  return fmt::format("{} ({}{})", text, direct_shown.size() > k_examples ? "e.g. " : "", list);
}

}  // namespace

Dependents dependents_of(const DepGraph& g, std::string_view path, size_t cap) {
  Dependents out;
  auto it = std::find(g.files.begin(), g.files.end(), path);
  if (it == g.files.end()) return out;
  const uint32_t target = static_cast<uint32_t>(it - g.files.begin());
  std::vector<std::vector<uint32_t>> rev(g.files.size());
  for (uint32_t i = 0; i < g.deps.size(); ++i)
    for (uint32_t d : g.deps[i]) rev[d].push_back(i);
  std::vector<char> seen(g.files.size(), 0);
  seen[target] = 1;
  std::vector<uint32_t> queue{target};
  for (size_t head = 0; head < queue.size() && !out.capped; ++head)
    for (uint32_t dep : rev[queue[head]]) {
      if (seen[dep]) continue;
      seen[dep] = 1;
      if (head == 0) out.direct.push_back(g.files[dep]);
      queue.push_back(dep);
      if (++out.transitive >= cap) {
        out.capped = true;
        break;
      }
    }
  std::sort(out.direct.begin(), out.direct.end());
  return out;
}

Result<GraphLoad> load_graph(const fs::path& root, const fs::path& cache_file, const ScanProgress& progress,
                             const ScanOptions& opts) {
  git_init_once();
  git_repository* raw_repo = nullptr;
  int rc = git_repository_open_ext(&raw_repo, root.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND)
    return make_error(Errc::not_found, fmt::format("'{}' is not in a git repository", root.string()));
  KAI_TRY(git_check(rc, "opening the git repository"));
  RepoPtr repo{raw_repo};
  const char* wd = git_repository_workdir(raw_repo);
  if (!wd) return make_error(Errc::not_found, "the git repository has no work tree");
  git_index* raw_idx = nullptr;
  KAI_TRY(git_check(git_repository_index(&raw_idx, raw_repo), "reading the git index"));
  IndexPtr idx{raw_idx};
  GraphLoad out;
  std::string w = wd;
  while (w.size() > 1 && w.back() == '/') w.pop_back();  // a trailing slash would be a path element of its own
  std::error_code ec;
  out.workdir = fs::weakly_canonical(w, ec);
  if (ec) out.workdir = w;
  const auto entries = tracked_entries(raw_idx);
  out.key = index_key(entries);
  const Sealer* sealer = opts.sealer;
  std::optional<CachedGraph> prior;
  const fs::path mac_file = cache_file.string() + ".mac";
  if (!cache_file.empty())
    if (auto text = read_owned(cache_file)) {
      auto mac = sealer ? read_owned(mac_file) : Result<std::string>(std::string{});
      if (!sealer || (mac && sealer->check("deps-cache", "deps", *text, *mac) == SealCheck::ok))
        prior = parse_cache(*text);
    }
  if (prior && prior->key == out.key) {
    out.graph = std::move(prior->graph);
    out.from_cache = true;
    return out;
  }
  git_odb* raw_odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&raw_odb, raw_repo), "opening the git object database"));
  OdbPtr odb{raw_odb};
  ScanBudget budget{opts.limits, opts.past_deadline};
  std::vector<std::string> stamps;
  out.graph = scan(raw_odb, entries, prior, progress, budget, stamps, out);
  out.complete = out.unscanned == 0;
  out.stopped = budget.why();
  // Written even when the scan stopped: the next one goes on from here. A
  // cache that cannot be written (or sealed) is only slower.
  if (!cache_file.empty() && (!sealer || sealer->usable()) && make_dirs(cache_file.parent_path(), 0700)) {
    const std::string text = cache_text(out.key, out.graph, stamps, out.complete);
    auto mac = sealer ? sealer->seal("deps-cache", "deps", text) : Result<std::string>(std::string{});
    // The seal goes first: a crash between the two leaves a cache that does not verify, never a stale seal that does.
    if (mac && (!sealer || write_file_atomic(mac_file, *mac, 0600))) (void)write_file_atomic(cache_file, text, 0600);
  }
  return out;
}

Risk risk_level(size_t dependents, const Config& cfg) {
  if (dependents >= static_cast<size_t>(cfg.risk_high)) return Risk::high;
  if (dependents >= static_cast<size_t>(cfg.risk_medium)) return Risk::medium;
  return Risk::low;
}

namespace {

Result<GraphLoad> graph_for_risk(const Workspace& ws, const ScanProgress& progress) {
  // ensure() refuses a state dir that is a symlink: the cache is never written through one.
  fs::path cache = ws.store.exists() && ws.store.ensure().ok() ? ws.store.dir() / "cache" / "deps" : fs::path{};
  ScanOptions opts;
  opts.sealer = &ws.sealer;
  const TimePoint deadline = ws.clock->now() + k_scan_time;
  opts.past_deadline = [&ws, deadline] { return ws.clock->now() > deadline; };
  return load_graph(ws.root, cache, progress, opts);
}

RiskResult risk_from(const Workspace& ws, const Result<GraphLoad>& g, Proposal& p) {
  RiskResult r;
  r.level = Risk::low;
  std::vector<std::string> reasons;
  if (g && !g->complete) {
    reasons.push_back(
        fmt::format("the dependency scan stopped at its {} limit with {} of {} files not scanned: "
                    "risk from paths only (the next proposal goes on with the scan)",
                    g->stopped, g->unscanned, g->graph.files.size()));
  } else if (g) {
    r.from_graph = true;
    r.from_cache = g->from_cache;
    Dependents d = dependents_of(g->graph, repo_path(ws.root, g->workdir, p.path));
    std::vector<std::string> shown;
    for (const auto& f : d.direct) shown.push_back(shown_path(ws.root, g->workdir, f));
    r.direct = d.direct.size();
    r.transitive = d.transitive;
    r.level = risk_level(d.transitive, ws.cfg);
    reasons.push_back(dependents_text(d, p.path, shown));
    if (p.kind == Kind::del && d.transitive > 0) {
      raise_to(r.level, Risk::medium);
      reasons.push_back("deleting a file that others depend on");
    }
  } else if (g.error().code == Errc::not_found) {
    reasons.push_back("not in a git repository: risk from paths only");
  } else {
    reasons.push_back(fmt::format("dependency scan failed ({}): risk from paths only", g.error().message));
  }
  std::string why_path;
  if (path_tier(ws.cfg, p.path, &why_path) == Tier::confirm) {
    raise_to(r.level, Risk::medium);
    reasons.push_back(why_path);
  }
  for (size_t i = 0; i < reasons.size(); ++i) r.reason += (i ? "; " : "") + reasons[i];
  p.risk = r.level;
  p.risk_reason = r.reason;
  if (r.level == Risk::high) {
    std::string why = fmt::format("high risk: {}", reasons.front());
    p.tier_reason = p.tier == Tier::confirm && !p.tier_reason.empty() ? p.tier_reason + "; " + why : why;
    p.tier = Tier::confirm;
  }
  return r;
}

}  // namespace

RiskResult assess_risk(const Workspace& ws, Proposal& p, const ScanProgress& progress) {
  return risk_from(ws, graph_for_risk(ws, progress), p);
}

void assess_risk_each(const Workspace& ws, std::vector<Proposal>& ps, const ScanProgress& progress) {
  if (ps.empty()) return;
  const auto g = graph_for_risk(ws, progress);
  for (Proposal& p : ps) risk_from(ws, g, p);
}

}  // namespace kai
