#!/usr/bin/env bash
# Builds kaicoder with AddressSanitizer and UndefinedBehaviorSanitizer,
# warnings as errors and the crash-test fault points, and runs every test
# (unit, end-to-end, crash and browser tests). Installs what is missing
# first.
#
#   scripts/test.sh            the above (what CI runs)
#   scripts/test.sh --plain    a plain build instead: quicker to build
#   FUZZ_SECONDS=N             then fuzz the shell classifier, the import
#                              scanners, the patch parsers and MCP sessions
#                              for N seconds in all (default 0: CI runs
#                              scripts/fuzz.sh on its own, after the package)
#
# One sanitized build runs everything: building the tree twice would cost
# more than all the tests together on a two-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
# clang, only to fuzz after the tests (FUZZ_SECONDS).
if [ "${FUZZ_SECONDS:-0}" != 0 ] && [ "${1:-}" != "--plain" ]; then scripts/deps.sh --fuzz; fi

jobs=$(nproc 2>/dev/null || echo 2)
fuzz_seconds=${FUZZ_SECONDS:-0}
dir=build-asan
flags=(-DKAICODER_SANITIZE=address,undefined)
if [ "${1:-}" = "--plain" ]; then
  dir=build-test
  flags=()
  fuzz_seconds=0
fi

# Ninja and ccache when they are there: a rebuild after a small change then
# compiles only what changed.
command -v ninja >/dev/null && flags+=(-G Ninja)
command -v ccache >/dev/null && flags+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# A folder configured earlier with another generator cannot be reused.
if [ -f "$dir/CMakeCache.txt" ]; then
  want=$( [[ " ${flags[*]} " == *" -G Ninja "* ]] && echo Ninja || echo "Unix Makefiles")
  grep -q "^CMAKE_GENERATOR:INTERNAL=$want\$" "$dir/CMakeCache.txt" || rm -rf "$dir"
fi
# A unity build: the files of a target are compiled sixteen to a batch, so
# the headers they share are parsed once per batch instead of once per file.
# The inner loop of README.md stays a per-file build. Larger batches still
# meet private names that two files share (see CMakeLists.txt).
flags+=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
echo "== build ($dir, warnings as errors)"
# -g1: line tables are enough for sanitizer reports and build much faster.
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
      -DCMAKE_COMPILE_WARNING_AS_ERROR=ON -DKAICODER_FAULTS=ON "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$jobs"

echo "== browser test dependencies (Chromium, playwright-core)"
scripts/browser-deps.sh "$dir" || echo "could not install them: the browser test of the review page will be skipped" >&2

echo "== test"
# The MCP SDK client of tests/mcp, exactly as package-lock.json pins it.
if command -v npm >/dev/null; then
  (cd tests/mcp && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
else
  echo "no npm: the MCP SDK client cannot be installed; its cases are skipped only when node is absent too"
fi
# intercept_strstr=0: see tests/CMakeLists.txt (libgit2's CA bundle, in a build with shared libraries).
export ASAN_OPTIONS=detect_leaks=1:intercept_strstr=0 UBSAN_OPTIONS=print_stacktrace=1
# The fuzz targets are a clang build of their own: it fills the cores the
# waiting cases leave idle, at a lower priority than the cases.
fuzz_build=
if [ "$fuzz_seconds" -gt 0 ]; then
  FUZZ_OUT="$PWD/build-fuzz" nice -n 10 tests/fuzz/run.sh --build >"$dir/fuzz-build.log" 2>&1 &
  fuzz_build=$!
fi
# The cases' throwaway repositories and folders go where $TMPDIR says. On
# a disk, the fsyncs every apply, decision and crash case makes (kaicoder
# syncs what it writes) leave the cores waiting: a unit file of path cases
# took 58 s there against 15 s in memory. So, as root with memory to spare,
# they go to a tmpfs mounted for them under /tmp (mode 1777, as /tmp is:
# the two-user cases need it; under /tmp, so every path a case builds means
# what it means in /tmp), removed at the end; otherwise where they would
# anyway. What is tested is what kaicoder does, not how fast a disk syncs:
# the full-disk cases mount file systems of their own.
# KAICODER_TEST_TMPDIR=DIR names the folder instead.
cases_tmp=
cleanup_cases_tmp() {
  if [ -n "$cases_tmp" ]; then umount "$cases_tmp" 2>/dev/null || umount -l "$cases_tmp"; rmdir "$cases_tmp"; fi
}
available_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null || echo 0)
if [ -z "${KAICODER_TEST_TMPDIR:-}" ] && [ "$(id -u)" = 0 ] && [ "${available_kb:-0}" -ge $((4 * 1024 * 1024)) ]; then
  cases_tmp=$(mktemp -d /tmp/kaicoder-cases.XXXXXX)
  if mount -t tmpfs -o mode=1777 tmpfs "$cases_tmp" 2>/dev/null; then
    trap cleanup_cases_tmp EXIT
    KAICODER_TEST_TMPDIR=$cases_tmp
  else
    rmdir "$cases_tmp"
    cases_tmp=
  fi
fi
if [ -n "${KAICODER_TEST_TMPDIR:-}" ]; then
  export TMPDIR="$KAICODER_TEST_TMPDIR"
  echo "the cases' temporary folders: $TMPDIR"
fi
# One case more than there are cores: many cases wait (a pseudo-terminal,
# a timeout running out), and the cores would stand idle a third of the time.
(cd "$dir" && ctest --output-on-failure -j"$((jobs + 1))" --timeout 600)

if [ -n "$fuzz_build" ] && ! wait "$fuzz_build"; then
  cat "$dir/fuzz-build.log" >&2
  echo "the fuzz targets do not build" >&2
  exit 1
fi
if [ "$fuzz_seconds" -gt 0 ]; then
  echo "== fuzz the shell classifier, the import scanners, the patch parsers and MCP sessions for ${fuzz_seconds} s"
  FUZZ_OUT="$PWD/build-fuzz" tests/fuzz/run.sh "$fuzz_seconds"
fi
echo "all tests passed"
