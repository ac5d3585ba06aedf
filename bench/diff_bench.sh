#!/usr/bin/env bash
# Times kai::diff_buffers (full mode, through bench/diff_driver.cpp) against
# `git diff --no-index` and `diff -u` on the same generated inputs, and prints
# one table row per case: CPU time (user+sys, the figure that holds up when
# other work shares the cores), the ratios of CPU times, wall time, peak
# memory (max RSS), diff_buffers' own CPU time inside the driver, and whether
# kaicoder's hunks are byte-identical to git's.
#
#   bench/diff_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# libkaicoder_core.a in BUILD_DIR is brought up to date (only that library is
# built; a BUILD_DIR without a CMake cache is configured as a Release build).
# Set SIZES to pick the line counts (default "10000 100000 1000000") and
# RUNS_<n> to repeat a size (defaults: 5 runs up to 10k lines, 3 up to 100k, 1
# above; the median is shown).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
sizes=${SIZES:-"10000 100000 1000000"}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup diff-bench "$build" diff_driver git diff

# Defaults only: no user or system git configuration may change the output.

# run NAME OUT CMD...: appends "cpu_s wall_s peak_kb" of one run to $work/NAME.times
run() {
  local name=$1 out=$2
  shift 2
  /usr/bin/time -f '%U %S %e %M' -o "$work/usage" "$@" >"$out" 2>"$work/$name.err" || true
  # The last line: above it /usr/bin/time notes the exit status 1 of "differences found".
  tail -n 1 "$work/usage" | awk '{ printf "%.2f %.2f %d\n", $1 + $2, $3, $4 }' >>"$work/$name.times"
}

# "cpu wall peak_mb" of the run with the median CPU time
median() { sort -n -k1,1 "$1" | awk '{ l[NR] = $0 } END { split(l[int((NR + 1) / 2)], f, " "); printf "%s %s %d\n", f[1], f[2], f[3] / 1024 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

hunks() { sed -n '/^@@/,$p' "$1"; }

echo "# kai::diff_buffers vs git diff --no-index vs diff -u"
echo "# $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr);" \
  "libgit2 $(pkg-config --modversion libgit2), $(git --version), $(diff --version | head -n 1)," \
  "library build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
fmt='| %-9s | %9s | %17s | %7s | %7s | %7s | %7s | %8s | %8s | %8s | %8s | %6s | %6s | %7s | %8s | %4s |\n'
# shellcheck disable=SC2059
printf "$fmt" case lines "+/- lines" "kai cpu" "git cpu" "diff cpu" kai/git kai/diff \
  "kai wall" "git wall" "diff wall" "kai MB" "git MB" "diff MB" "in-proc" "=git"
echo '|-----------|-----------|-------------------|---------|---------|----------|---------|----------|----------|----------|-----------|--------|--------|---------|----------|------|'

for n in $sizes; do
  var=RUNS_$n
  runs=${!var:-$(( n <= 10000 ? 5 : n <= 100000 ? 3 : 1 ))}
  for kind in one pct1 pct30 different; do
    dir=$work/$kind-$n
    mkdir -p "$dir"
    "$driver" gen "$dir" "$n" "$kind"
    rm -f "$work"/{kai,git,diff}.times
    for ((r = 0; r < runs; r++)); do
      run kai "$dir/kai.out" "$driver" diff "$dir/old" "$dir/new"
      tail -n 1 "$work/kai.err" >>"$work/kai.inproc"
      run git "$dir/git.out" git diff --no-index --no-color --no-ext-diff "$dir/old" "$dir/new"
      run diff "$dir/diff.out" diff -u "$dir/old" "$dir/new"
    done
    read -r kai_cpu kai_wall kai_mb < <(median "$work/kai.times")
    read -r git_cpu git_wall git_mb < <(median "$work/git.times")
    read -r diff_cpu diff_wall diff_mb < <(median "$work/diff.times")
    read -r inproc added removed _ < <(sort -n "$work/kai.inproc" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }')
    rm -f "$work/kai.inproc"
    same=no
    cmp -s <(hunks "$dir/kai.out") <(hunks "$dir/git.out") && same=yes
    # shellcheck disable=SC2059
    printf "$fmt" "$kind" "$n" "+$added/-$removed" "$kai_cpu" "$git_cpu" "$diff_cpu" \
      "$(ratio "$kai_cpu" "$git_cpu")" "$(ratio "$kai_cpu" "$diff_cpu")" "$kai_wall" "$git_wall" "$diff_wall" \
      "$kai_mb" "$git_mb" "$diff_mb" "$(printf '%.0f ms' "$inproc")" "$same"
    rm -rf "$dir"
  done
done
