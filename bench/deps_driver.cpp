// Hostile inputs for the import scanners (lib/risk/deps.hpp); bench/deps_bench.sh
// builds it and runs it under /usr/bin/time.
//
//   deps_driver KIND BYTES
//
// builds one hostile tracked file of about BYTES bytes (bench/hostile_deps.hpp:
// rust-nested, rust-chain or c-includes), scans it with kai::dependencies()
// among its small set of tracked files, and prints "bytes N", "edges N",
// "right yes|no" (the edges are the expected ones) and "ms N" (the scan
// alone, wall time).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/hostile_deps.hpp"
#include "lib/risk/deps.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: deps_driver rust-nested|rust-chain|c-includes BYTES\n");
    return 2;
  }
  const std::string kind = argv[1];
  const size_t bytes = std::strtoul(argv[2], nullptr, 10);
  kai::bench::HostileFile f;
  if (kind == "rust-nested")
    f = kai::bench::rust_nested(bytes);
  else if (kind == "rust-chain")
    f = kai::bench::rust_chain(bytes);
  else if (kind == "c-includes")
    f = kai::bench::c_includes(bytes);
  else {
    std::fprintf(stderr, "deps_driver: unknown kind '%s'\n", kind.c_str());
    return 2;
  }
  kai::FileSet files{f.tracked};
  const auto start = std::chrono::steady_clock::now();
  const auto deps = kai::dependencies(files, {}, f.path, f.text);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  std::vector<std::string> found;
  for (uint32_t d : deps) found.push_back(files.paths()[d]);
  std::sort(found.begin(), found.end());
  std::sort(f.expected.begin(), f.expected.end());
  std::printf("bytes %zu\nedges %zu\nright %s\nms %lld\n", f.text.size(), deps.size(),
              found == f.expected ? "yes" : "no", static_cast<long long>(ms));
  return 0;
}
