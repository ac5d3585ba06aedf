// Drives kai::SnapshotStore for bench/snapshot_bench.sh.
//
//   snapshot_driver gen DIR N        N files of about 1 KB, 100 to a folder, two levels deep
//   snapshot_driver snap ROOT        one snapshot of ROOT into ROOT/.kaicoder/snapshots.git;
//                                    prints "files hashed ms" (ms: the take() call alone)
//   snapshot_driver undo ROOT CMD    what a confirm-tier run costs: snapshot, `sh -c CMD`,
//                                    snapshot, diff, keep; prints "changes ms" (ms: all
//                                    but the command itself)
//   snapshot_driver nochange ROOT    what a run that changes nothing costs: snapshot, hold,
//                                    snapshot, diff, release; prints "hashed1 hashed2 ms unstatted2"
//
// nochange and undo watch the file system between the two snapshots as a run
// does (kai::SnapshotWatch: one mark as root, a watch per folder otherwise), unless
// KAI_NO_WATCH is set.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "lib/run/snapshot.hpp"
// An older tree (bench/run_overhead.sh OLD_SNAPSHOT) has no watch.
#if __has_include("lib/run/snapshot_watch.hpp")
#include "lib/run/snapshot_watch.hpp"
#define KAI_HAVE_WATCH 1
#endif

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int fail(const kai::Error& e) {
  std::fprintf(stderr, "snapshot_driver: %s\n", e.message.c_str());
  return 1;
}

}  // namespace

void generate(const std::filesystem::path& dir, long n) {
  for (long i = 0; i < n; ++i) {
    std::filesystem::path p =
        dir / fmt::format("d{}", i / 1000) / fmt::format("e{}", i / 100 % 10) / fmt::format("f{}.c", i);
    if (i % 100 == 0) std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    for (int line = 0; line < 30; ++line)
      out << "int value_" << i << "_" << line << " = " << (i * 31 + line) % 977 << ";\n";
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: snapshot_driver gen DIR N | snap ROOT | undo ROOT CMD | nochange ROOT\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "gen" && argc == 4) {
    generate(argv[2], std::atol(argv[3]));
    return 0;
  }
  std::filesystem::path root = std::filesystem::canonical(argv[2]);
  std::filesystem::create_directories(root / ".kaicoder");
  kai::SnapshotStore store{root / ".kaicoder" / "snapshots.git", root, kai::Guardrails{}};
  auto t0 = std::chrono::steady_clock::now();
#ifdef KAI_HAVE_WATCH
  std::unique_ptr<kai::SnapshotWatch> watched;
  if (mode != "snap" && !std::getenv("KAI_NO_WATCH")) watched = kai::SnapshotWatch::start(root);
  auto take = [&] { return store.take({}, watched.get()); };
  auto unstatted = [](const kai::Snapshot& s) { return s.unstatted; };
#else
  auto take = [&] { return store.take(); };
  auto unstatted = [](const kai::Snapshot&) { return size_t{0}; };
#endif
  auto before = take();
  if (!before) return fail(before.error());
  double took = ms_since(t0);
  if (mode == "snap") {
    std::printf("%zu %zu %.1f\n", before->files, before->hashed, took);
    return 0;
  }
  if (mode == "nochange") {
    if (auto h = store.hold(*before, "1"); !h) return fail(h.error());
    auto after = take();
    if (!after) return fail(after.error());
    auto changes = store.diff(*before, *after);
    if (!changes) return fail(changes.error());
    if (!changes->empty()) {
      std::fprintf(stderr, "snapshot_driver: %zu changes in a tree nothing changed\n", changes->size());
      return 1;
    }
    if (auto r = store.release("1"); !r) return fail(r.error());
    std::printf("%zu %zu %.1f %zu\n", before->hashed, after->hashed, ms_since(t0), unstatted(*after));
    return 0;
  }
  if (mode != "undo" || argc < 4) return 2;
  if (auto h = store.hold(*before, "1"); !h) return fail(h.error());
  std::string cmd = "cd '" + root.string() + "' && " + argv[3];
  if (std::system(cmd.c_str()) != 0) return 1;
  auto t1 = std::chrono::steady_clock::now();
  auto after = take();
  if (!after) return fail(after.error());
  auto changes = store.diff(*before, *after);
  if (!changes) return fail(changes.error());
  if (auto k = store.keep(*before, *changes, "20260709T142530Z", "1", 50); !k) return fail(k.error());
  std::printf("%zu %.1f\n", changes->size(), took + ms_since(t1));
  return 0;
}
