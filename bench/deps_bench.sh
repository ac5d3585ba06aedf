#!/usr/bin/env bash
# Times the import scanners (lib/risk/deps.cpp) on the hostile tracked files of
# bench/hostile_deps.hpp: a nested Rust use tree, a long Rust use chain, and
# tens of thousands of #include lines in a file 300 folders deep. Each run is
# one process under /usr/bin/time (wall seconds, peak resident memory).
#
#   bench/deps_bench.sh [REV]      BUILD=DIR: the build folder (default ./build-bench)
#
# REV (a commit) also times lib/risk/deps.cpp as it was at REV, for a before and
# after. Every run is stopped after LIMIT seconds (default 150) or when it
# asks for more than MEM_MB of memory (default 4096).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rev=${1:-}
limit=${LIMIT:-150}
mem_mb=${MEM_MB:-4096}
[[ -x /usr/bin/time ]] || { echo "deps-bench: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/kai-deps-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT

# The driver of today: the deps_driver target (bench/CMakeLists.txt) of a
# Release build in BUILD (default ./build-bench).
build=$(realpath -m "${BUILD:-$root/build-bench}")
[[ -f $build/CMakeCache.txt ]] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
cmake --build "$build" --target deps_driver -j"$(nproc)" >/dev/null
mkdir -p "$work/now"
cp "$build/bench/deps_driver" "$work/now/driver"
versions=(now)
if [[ -n $rev ]]; then
  # The scanners as they were at REV: every deps*.cpp of that commit (in
  # lib/risk/, or at lib/'s top before lib/ had part folders),
  # with the headers of that commit beside them, compiled with the driver.
  mkdir -p "$work/old"
  git -C "$root" archive "$rev" lib bench | tar -x -C "$work/old"
  # (and the text helpers they use, where that commit has them).
  srcs=()
  for f in "$work/old"/lib/deps*.cpp "$work/old"/lib/risk/deps*.cpp; do [[ -f $f ]] && srcs+=("$f"); done
  for f in git_quote strings text; do
    [[ -f $work/old/lib/util/$f.cpp ]] && srcs+=("$work/old/lib/util/$f.cpp")
  done
  g++ -std=c++20 -O2 -I"$work/old" "$work/old/bench/deps_driver.cpp" "${srcs[@]}" -lfmt \
    -o "$work/old/driver" 2>"$work/old/errors" ||
    { echo "deps-bench: the scanners at $rev do not build on their own:" >&2; head -20 "$work/old/errors" >&2; exit 1; }
  versions=(old now)
fi

echo "# $(nproc) cores, $(uname -sr), $(g++ --version | head -1), -O2; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| input | bytes | version | wall s | max RSS MB | edges right |"
echo "|---|---|---|---|---|---|"
for spec in "rust-nested 100000" "rust-nested 900000" "rust-chain 120000" "c-includes 1000000"; do
  read -r kind bytes <<<"$spec"
  for v in "${versions[@]}"; do
    out=$work/out
    if /usr/bin/time -f "time %e %M" -o "$work/time" \
      bash -c 'ulimit -v "$1"; exec timeout "$2" "${@:3}"' _ $((mem_mb * 1024)) "$limit" "$work/$v/driver" "$kind" "$bytes" \
      >"$out" 2>&1; then
      right=$(awk '$1 == "right" { print $2 }' "$out")
    else
      right="stopped (over ${limit} s or ${mem_mb} MB)"
    fi
    read -r _ wall rss < <(tail -1 "$work/time")
    echo "| $kind | $(awk '$1 == "bytes" { print $2 }' "$out") | $v | $wall | $((${rss:-0} / 1024)) | $right |"
  done
done
