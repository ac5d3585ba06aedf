#!/bin/sh
# Builds and runs the changelog benchmark against an existing build.
# Usage: bench/changelog_bench.sh [BUILD_DIR] [WORK_DIR]   (BUILD_DIR default ./build)
# Configure that build with -DCMAKE_BUILD_TYPE=Release for meaningful numbers.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-./build}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
cmake --build "$build" --target changelog_bench -j"$(nproc)" >/dev/null
out="$build/bench/changelog_bench"
shift $(( $# > 0 ? 1 : 0 ))
exec "$out" "$@"
