// Fills a kaicoder store with N decided proposals for bench/store_cost_bench.sh:
// each one created and sealed through lib/store exactly as `kaicoder
// propose` and a decision write them (Store::create under the store lock),
// and the changelog with an entry for each (Changelog::prepend, with the
// default keep of 500: the oldest entries rotate into changelog-archive/ as
// they do in use), so the store the timed CLI commands find is one a year of
// agent work would leave. Only the filling uses the library; what is timed
// is the CLI.
//
//   store_fill ROOT OWNER_DIR N [staging]
//       ROOT already `kaicoder init`-ed; OWNER_DIR holds the owner's key
//       (~/.config/kaicoder). The decided proposals are then moved into the
//       archive (Store::archive_decided), as the first sweep of a real store
//       does; with `staging` they stay in staging/, as a store made before
//       the archive keeps them.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "lib/store/changelog.hpp"
#include "lib/store/mac.hpp"
#include "lib/store/store.hpp"

int main(int argc, char** argv) {
  if (argc != 4 && !(argc == 5 && std::string(argv[4]) == "staging")) {
    std::fprintf(stderr, "usage: store_fill ROOT OWNER_DIR N [staging]\n");
    return 2;
  }
  const std::filesystem::path root = argv[1], owner = argv[2];
  const int n = std::atoi(argv[3]);
  kai::Store store{root / ".kaicoder"};
  // Sealed as `kaicoder` seals them: bound to the root and to the store's
  // identity (lib/config/workspace does the same), so every record verifies.
  kai::Sealer sealer{owner, root};
  auto ident = kai::store_identity(root / ".kaicoder", sealer);
  if (!ident) {
    std::fprintf(stderr, "store_fill: %s\n", ident.error().message.c_str());
    return 1;
  }
  if (!ident->id.empty() && !ident->fresh) sealer.use_store(ident->id);
  store.use(sealer);
  auto lock = store.lock();
  if (!lock) {
    std::fprintf(stderr, "store_fill: %s\n", lock.error().message.c_str());
    return 1;
  }
  // Where a workspace keeps its changelog with the default config (lib/config/workspace).
  kai::Changelog log{root / "KAI-CODER-CHANGELOG.md", root / ".kaicoder" / "changelog-archive"};
  // Rejected and expired ones: decided, with nothing in the tree to undo.
  for (int i = 0; i < n; ++i) {
    kai::Proposal p;
    p.kind = kai::Kind::write;
    p.path = fmt::format("old/{}.txt", i);
    p.content = fmt::format("line {}\n", i);
    p.why = "filling the store";
    p.agent = "bench";
    p.summary = fmt::format("created old/{}.txt (1 lines)", i);
    p.created = "2026-01-01T00:00:00Z";
    p.state = i % 2 ? kai::State::rejected : kai::State::timeout;
    p.decided_by = i % 2 ? "bench" : "";
    p.result = i % 2 ? "rejected" : "timeout: not decided within 86400 s";
    auto id = store.next_id();
    if (!id) {
      std::fprintf(stderr, "store_fill: %s\n", id.error().message.c_str());
      return 1;
    }
    p.id = *id;
    if (auto s = store.create(p); !s) {
      std::fprintf(stderr, "store_fill: %s\n", s.error().message.c_str());
      return 1;
    }
    kai::Entry e;
    e.time = "2026-01-01T00:00:00Z";
    e.kind = i % 2 ? "rejected" : "timeout";
    e.files = {(root / p.path).string()};
    e.action = "write_file";
    e.summary = fmt::format("proposal {}: {}", p.id, p.summary);
    e.why = p.why;
    e.approver = p.decided_by;
    e.result = p.result;
    if (auto s = log.prepend(e); !s) {
      std::fprintf(stderr, "store_fill: changelog: %s\n", s.error().message.c_str());
      return 1;
    }
  }
  if (argc == 4) {
    if (auto moved = store.archive_decided(); !moved) {
      std::fprintf(stderr, "store_fill: %s\n", moved.error().message.c_str());
      return 1;
    }
  }
  return 0;
}
