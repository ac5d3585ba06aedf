// Benchmark driver for the blast radius (lib/risk.hpp); bench/risk_bench.sh
// builds and runs it.
//
//   risk_driver gen DIR FILES     write a mixed-language tree of FILES files
//                                 under DIR and DIR/targets.tsv: one line per
//                                 target, "path<TAB>name importers use"
//   risk_driver load ROOT CACHE   one load with the cache as it is
//   risk_driver time ROOT CACHE RUNS TARGET...
//                                 one cold scan (CACHE removed first), then
//                                 RUNS cached loads, each followed by a lookup
//                                 of every TARGET; prints "key value" lines
//
// Times are process CPU time and wall time in milliseconds. The tree looks
// like a real monorepo: C headers and sources under src/c, TypeScript under
// web/, a Python package tree under py/, a Go module under go/ and a Rust
// crate under rs/, each file importing a few others with a skew towards a
// handful of popular ones, and 40 lines of code-like filler.

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/rng.hpp"
#include "lib/risk/risk.hpp"

namespace {
namespace fs = std::filesystem;

// Skewed towards 0: popular files are imported far more often.
long skewed(Rng& rng, long below) {
  if (below <= 1) return 0;
  double u = static_cast<double>(rng.next() % 1000000) / 1000000.0;
  return std::min(below - 1, static_cast<long>(u * u * u * static_cast<double>(below)));
}

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string filler(Rng& rng, std::string_view comment) {
  std::string out;
  for (int i = 0; i < 40; ++i)
    out += fmt::format("{} line {} value {} of {}\n", comment, i, rng.next() % 100000, rng.next() % 977);
  return out;
}

constexpr long k_per_dir = 50;

int gen(const fs::path& dir, long total) {
  Rng rng{42};
  const long n_c = total * 40 / 100, n_js = total * 25 / 100, n_py = total * 20 / 100, n_go = total * 10 / 100;
  const long n_rs = total - n_c - n_js - n_py - n_go;
  // C: every third file a header; headers include older headers, sources include headers.
  for (long i = 0; i < n_c; ++i) {
    const bool header = i % 3 == 0;
    std::string text;
    const int includes = 2 + static_cast<int>(rng.next() % 4);
    for (int k = 0; k < includes && i >= 3; ++k) {
      long h = skewed(rng, i / 3) * 3;
      text += fmt::format("#include \"m{}/f{}.h\"\n", h / k_per_dir, h);
    }
    text += "#include <stdio.h>\n" + filler(rng, "//");
    put(dir / fmt::format("src/c/m{}/f{}.{}", i / k_per_dir, i, header ? "h" : "c"), text);
  }
  for (long i = 0; i < n_js; ++i) {
    std::string text;
    for (int k = 0; k < 4 && i > 0; ++k) {
      long j = skewed(rng, i);
      text += fmt::format("import {{ x{} }} from '../d{}/m{}'\n", j, j / k_per_dir, j);
    }
    text += "import React from 'react'\n" + filler(rng, "//");
    put(dir / fmt::format("web/src/d{}/m{}.{}", i / k_per_dir, i, i % 4 == 0 ? "tsx" : "ts"), text);
  }
  for (long i = 0; i < n_py; ++i) {
    std::string text = "import os\n";
    for (int k = 0; k < 4 && i > 0; ++k) {
      long j = skewed(rng, i);
      text += fmt::format("from pkg{}.mod{} import thing{}\n", j / k_per_dir, j, j);
    }
    text += filler(rng, "#");
    put(dir / fmt::format("py/pkg{}/mod{}.py", i / k_per_dir, i), text);
    if (i % k_per_dir == 0) put(dir / fmt::format("py/pkg{}/__init__.py", i / k_per_dir), "");
  }
  put(dir / "go/go.mod", "module example.com/big\n\ngo 1.21\n");
  constexpr long k_go_pkg = 20;
  for (long i = 0; i < n_go; ++i) {
    long pkg = i / k_go_pkg;
    std::string text = fmt::format("package p{}\n\nimport (\n\t\"fmt\"\n", pkg);
    for (int k = 0; k < 3 && pkg > 0; ++k) text += fmt::format("\t\"example.com/big/p{}\"\n", skewed(rng, pkg));
    text += ")\n" + filler(rng, "//");
    put(dir / fmt::format("go/p{}/f{}.go", pkg, i), text);
  }
  std::string lib = "// crate root\n";
  for (long i = 0; i < n_rs; ++i) {
    lib += fmt::format("pub mod m{};\n", i);
    std::string text;
    for (int k = 0; k < 3 && i > 0; ++k) text += fmt::format("use crate::m{}::Item;\n", skewed(rng, i));
    text += "use std::io;\n" + filler(rng, "//");
    put(dir / fmt::format("rs/src/m{}.rs", i), text);
  }
  put(dir / "rs/src/lib.rs", lib);
  // Targets: the most imported file of each language and a middling one.
  std::ofstream t(dir / "targets.tsv");
  t << "src/c/m0/f0.h\tm0/f0.h\n"
    << fmt::format("src/c/m{}/f{}.h\tm{}/f{}.h\n", 60 / k_per_dir, 60, 60 / k_per_dir, 60);
  t << "web/src/d0/m0.tsx\td0/m0'\n"
    << "py/pkg0/mod1.py\tpkg0.mod1 \n";
  t << "go/p0/f0.go\texample.com/big/p0\"\n"
    << "rs/src/m0.rs\t::m0::\n";
  return 0;
}

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int time_it(const fs::path& root, const fs::path& cache, int runs, const std::vector<std::string>& targets) {
  std::error_code ec;
  fs::remove(cache, ec);
  double c0 = cpu_ms(), w0 = wall_ms();
  auto cold = kai::load_graph(root, cache);
  double c1 = cpu_ms(), w1 = wall_ms();
  if (!cold || cold->from_cache) {
    fmt::print(stderr, "risk_driver: cold scan failed: {}\n", cold ? "came from the cache" : cold.error().message);
    return 1;
  }
  size_t edges = 0;
  for (const auto& d : cold->graph.deps) edges += d.size();
  fmt::print("files {}\nscanned {}\nedges {}\ncold_cpu {:.1f}\ncold_wall {:.1f}\ncache_bytes {}\n",
             cold->graph.files.size(), cold->scanned, edges, c1 - c0, w1 - w0, fs::file_size(cache, ec));
  for (int r = 0; r < runs; ++r) {
    double a0 = cpu_ms(), b0 = wall_ms();
    auto hit = kai::load_graph(root, cache);
    double a1 = cpu_ms(), b1 = wall_ms();
    if (!hit || !hit->from_cache) {
      fmt::print(stderr, "risk_driver: second load did not come from the cache\n");
      return 1;
    }
    fmt::print("cached_cpu {:.1f}\ncached_wall {:.1f}\n", a1 - a0, b1 - b0);
    for (const auto& t : targets) {
      double l0 = cpu_ms();
      auto d = kai::dependents_of(hit->graph, t);
      double l1 = cpu_ms();
      fmt::print("lookup {} {} {} {:.2f}\n", t, d.direct.size(), d.transitive, l1 - l0);
    }
  }
  return 0;
}

// One load_graph with whatever cache there is: after `git add` of a changed
// file, only that file is scanned again.
int load_once(const fs::path& root, const fs::path& cache) {
  double c0 = cpu_ms(), w0 = wall_ms();
  auto g = kai::load_graph(root, cache);
  double c1 = cpu_ms(), w1 = wall_ms();
  if (!g) {
    fmt::print(stderr, "risk_driver: load failed: {}\n", g.error().message);
    return 1;
  }
  fmt::print("load_cpu {:.1f}\nload_wall {:.1f}\nload_scanned {}\nload_reused {}\nload_from_cache {}\n", c1 - c0,
             w1 - w0, g->scanned, g->reused, g->from_cache);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "gen") return gen(args[1], std::stol(args[2]));
  if (args.size() == 3 && args[0] == "load") return load_once(args[1], args[2]);
  if (args.size() >= 4 && args[0] == "time")
    return time_it(args[1], args[2], std::stoi(args[3]), std::vector<std::string>(args.begin() + 4, args.end()));
  fmt::print(stderr, "usage: risk_driver gen DIR FILES | load ROOT CACHE | time ROOT CACHE RUNS TARGET...\n");
  return 2;
}
