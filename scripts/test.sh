#!/usr/bin/env bash
# Builds kaicoder with warnings as errors and runs every test, then builds it
# again with AddressSanitizer and UndefinedBehaviorSanitizer and runs every
# test once more. Installs what is missing first.
#
#   scripts/test.sh            both builds
#   scripts/test.sh --quick    the plain build only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test

jobs=$(nproc 2>/dev/null || echo 2)
# run_suite BUILD_DIR "CTEST ARGS" CMAKE ARGS...
run_suite() {
  local dir=$1 ctest_args=$2; shift 2
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_COMPILE_WARNING_AS_ERROR=ON \
        -DKAICODER_FAULTS=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  # shellcheck disable=SC2086
  (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600 $ctest_args)
}

echo "== build and test (warnings as errors)"
run_suite build-test ""
if [ "${1:-}" != "--quick" ]; then
  # The crash tests kill the binary at every step of every action; they
  # ran above, and under the sanitizers they would take most of the budget.
  echo "== build and test with ASan+UBSan (all but the crash tests)"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite build-asan "-E crash" -DKAICODER_SANITIZE=address,undefined
fi
echo "all tests passed"
