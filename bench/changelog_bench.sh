#!/bin/sh
# Builds and runs the changelog benchmark against an existing build.
# Usage: bench/changelog_bench.sh [BUILD_DIR] [WORK_DIR]   (BUILD_DIR default ./build)
# Configure that build with -DCMAKE_BUILD_TYPE=Release for meaningful numbers.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-./build}
out="$build/changelog_bench"
g++ -std=c++20 -O2 -I"$root" "$root/bench/changelog_bench.cpp" "$build/libkaicoder_core.a" "$build/libkaicoder_shell.a" "$build/libkaicoder_text.a" -lgit2 -lfmt -o "$out"
shift $(( $# > 0 ? 1 : 0 ))
exec "$out" "$@"
