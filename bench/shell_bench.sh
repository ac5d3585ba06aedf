#!/usr/bin/env bash
# The command checker: what its family tables know, and the CPU time of
# one classification of typical commands (the goal: under 1 ms).
#
#   bench/shell_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# ROUNDS sets how many times each command is classified (default 200). The
# coverage report is printed from the tables themselves
# (kai::checker_coverage, lib/shell/rules/families.cpp and the other rule
# tables); the times are CPU time in the driver's own process
# (bench/shell_driver.cpp).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
rounds=${ROUNDS:-200}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup shell "$build" shell_driver

echo "# $(uname -srm), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); kaicoder_shell built as ${build_type:-unknown}"
echo
echo "## Coverage: what each table knows"
echo
"$driver" coverage
echo
echo "## Speed: CPU time of one classification, $rounds rounds of each command"
echo
"$driver" speed "$rounds"
