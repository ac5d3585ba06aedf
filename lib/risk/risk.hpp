#pragma once
// Blast radius: the risk (low | medium | high) of changing one file, from
// how many tracked files depend on it and whether it is a protected or
// confirm path.
//
// Usage: assess_risk(ws, proposal);   // sets risk, risk_reason, maybe tier
//
// The dependency graph comes from the git index of the repository that holds
// the root: every tracked blob is read from the object database (not the work
// tree) and scanned by lib/risk/deps.hpp. Reading the index's blobs makes the
// graph a pure function of the index entries, so the cache key (a hash of
// every entry's path and blob id) says exactly when it is still right, and a
// file being rewritten in the work tree can never be read half-written. The
// cost: edits not yet added to the index are not seen until they are.
//
// Thresholds count transitive dependents (a file that includes a file that
// includes the target counts), capped at k_transitive_cap.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/config/config.hpp"
#include "lib/risk/deps.hpp"
#include "lib/store/proposal.hpp"
#include "lib/store/mac.hpp"
#include "lib/result.hpp"
#include "lib/util/time.hpp"

namespace kai {

class Workspace;

// Repository-relative paths in index order; deps[i] are the files files[i]
// depends on (indices into files).
struct DepGraph {
  std::vector<std::string> files;
  std::vector<std::vector<uint32_t>> deps;
};

// Counting stops here: past it the answer is "high" under any sane threshold.
constexpr size_t k_transitive_cap = 10000;

struct Dependents {
  std::vector<std::string> direct;  // files that import the target themselves, sorted
  size_t transitive = 0;            // direct ones and everything that depends on them
  bool capped = false;              // transitive stopped at the cap
};

// Who depends on `path` (repository-relative). Zero for an untracked path.
Dependents dependents_of(const DepGraph& g, std::string_view path, size_t cap = k_transitive_cap);

// Called now and then during a scan with (files scanned, files to scan).
using ScanProgress = std::function<void(size_t, size_t)>;

// What one scan may spend (lib/risk/deps.hpp ScanBudget) and when it must stop;
// past_deadline empty = no time limit.
struct ScanOptions {
  ScanBudget::Limits limits;
  std::function<bool()> past_deadline;
  const Sealer* sealer = nullptr;  // seals the cache; none: unsealed (unit tests)
};

// The time assess_risk gives one scan. A repository of 20,000 files scans
// cold in about 3 s on two cores (bench/README.md).
constexpr std::chrono::seconds k_scan_time{10};

struct GraphLoad {
  DepGraph graph;
  std::filesystem::path workdir;  // the repository's work tree, canonical
  std::string key;                // the index state the graph belongs to
  bool from_cache = false;
  size_t scanned = 0;  // blobs read and scanned (0 on a cache hit)
  size_t reused = 0;   // files whose cached imports still held (same files, same blob)
  // False when the scan ran out of its budget: `unscanned` files have no
  // imports in `graph` (so dependents are undercounted) and `stopped` names
  // the limit ("time", "bytes scanned", "lookups", "dependencies").
  bool complete = true;
  size_t unscanned = 0;
  std::string stopped;
};

// The dependency graph of the repository that holds `root`, opened read-only
// (the index, refs and objects are never written). Loaded from `cache_file`
// when that was built for the same index state and kaicoder version; else
// built by scanning and then cached (written atomically, its folder created;
// when only blobs changed and the set of paths did not, only the changed
// files are read and scanned again;
// an empty `cache_file` disables caching, and failing to write it is not an
// error). A corrupt cache is ignored and rebuilt. A scan that runs out of
// `opts` stops, returns complete = false and still writes the cache, so the
// next call reads only the files this one did not reach.
// With `opts.sealer` (kaicoder always passes the workspace's), the cache is
// sealed in a sibling `<cache_file>.mac` (lib/store/mac) and a cache whose seal
// does not verify is ignored and rebuilt, so a planted graph cannot lower a
// proposal's risk; without a usable key nothing is cached.
// not_found: `root` is in no git work tree; io: libgit2 failed.
Result<GraphLoad> load_graph(const std::filesystem::path& root, const std::filesystem::path& cache_file,
                             const ScanProgress& progress = {}, const ScanOptions& opts = {});

// The risk of `dependents` under [risk] medium / high.
Risk risk_level(size_t dependents, const Config& cfg);

struct RiskResult {
  Risk level = Risk::low;
  std::string reason;
  size_t direct = 0, transitive = 0;
  bool from_graph = false;  // false: risk from paths only (no repository, scan failed)
  bool from_cache = false;
};

// The risk of proposal `p` (edit, write or delete), written into p.risk and
// p.risk_reason. Dependents decide by the thresholds; a protected or confirm
// path, and a delete of a file others depend on, is at least medium; a high
// risk puts the proposal in the confirm tier (p.tier, p.tier_reason). Never
// fails: without a repository, when the scan fails, or when it runs out of
// k_scan_time or its ScanBudget limits, the risk comes from paths only and
// the reason says why. The graph is cached under the state
// dir (cache/deps) when the state dir exists.
RiskResult assess_risk(const Workspace& ws, Proposal& p, const ScanProgress& progress = {});

// assess_risk for each of `ps` (the files of a changeset), the dependency
// graph loaded once for all of them.
void assess_risk_each(const Workspace& ws, std::vector<Proposal>& ps, const ScanProgress& progress = {});

}  // namespace kai
