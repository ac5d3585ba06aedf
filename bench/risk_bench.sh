#!/usr/bin/env bash
# Times the blast-radius dependency graph (lib/risk.hpp, through
# bench/risk_driver.cpp) on a generated, committed tree of mixed-language
# files: one cold scan of the index, cached loads with a lookup of each
# target, and `git grep -l -F` of the name importers use for each target —
# in one run, with the ratios.
#
#   bench/risk_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# libkaicoder_core.a in BUILD_DIR is brought up to date (only that library is
# built; a BUILD_DIR without a CMake cache is configured as a Release build).
# FILES sets the tree size (default 20000), RUNS the repetitions of the cached
# load and of each git grep (default 5; medians are shown).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
files=${FILES:-20000}
runs=${RUNS:-5}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup risk-bench "$build" risk_driver git

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
tree=$work/tree
"$driver" gen "$tree" "$files"
mv "$tree/targets.tsv" "$work/targets.tsv"
git -C "$tree" init -q
git -C "$tree" add -A
git -C "$tree" -c user.name=bench -c user.email=bench@example.invalid commit -q -m tree
tracked=$(git -C "$tree" ls-files | wc -l)

mapfile -t targets < <(cut -f1 "$work/targets.tsv")
"$driver" time "$tree" "$work/cache/deps" "$runs" "${targets[@]}" >"$work/kai.out"

# One changed file added to the index: a new key, the same paths.
echo "// edited" >>"$tree/src/c/m0/f1.c"
git -C "$tree" add src/c/m0/f1.c
"$driver" load "$tree" "$work/cache/deps" >>"$work/kai.out"

# median of the numbers on stdin
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
val() { awk -v k="$1" '$1 == k { print $2 }' "$work/kai.out"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }

cold_cpu=$(val cold_cpu)
cold_wall=$(val cold_wall)
cached_cpu=$(val cached_cpu | median)
cached_wall=$(val cached_wall | median)

echo "# blast radius: kaicoder dependency graph vs git grep -l"
echo "# $(nproc) cores, $(uname -sr); libgit2 $(pkg-config --modversion libgit2), $(git --version);" \
  "library build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# tree: $tracked tracked files ($(du -sh --exclude=.git "$tree" | cut -f1)), $(val scanned) scanned," \
  "$(val edges) dependency edges; cache file $(val cache_bytes) bytes"
echo
echo "| step | cpu ms | wall ms |"
echo "|---|---|---|"
echo "| kaicoder cold scan (read every blob, extract, resolve, write cache) | $cold_cpu | $cold_wall |"
echo "| kaicoder cached load (read index, key, parse cache), median of $runs | $cached_cpu | $cached_wall |"
echo "| kaicoder after \`git add\` of one changed file ($(val load_scanned) scanned, $(val load_reused) reused) | $(val load_cpu) | $(val load_wall) |"
echo
echo "| target | name searched | git grep -l files | kai direct | kai transitive | grep cpu ms | grep wall ms | cold/grep wall | cached+lookup/grep wall |"
echo "|---|---|---|---|---|---|---|---|---|"
TIMEFORMAT='%3R %3U %3S'
grep_walls=()
while IFS=$'\t' read -r target name; do
  : >"$work/grep.times"
  for ((r = 0; r < runs; r++)); do
    { time git -C "$tree" grep -l -F -e "$name" >"$work/grep.out" || true; } 2>>"$work/grep.times"
  done
  hits=$(wc -l <"$work/grep.out")
  g_wall=$(awk '{ print $1 * 1000 }' "$work/grep.times" | median)
  g_cpu=$(awk '{ print ($2 + $3) * 1000 }' "$work/grep.times" | median)
  grep_walls+=("$g_wall")
  read -r direct trans < <(awk -v t="$target" '$1 == "lookup" && $2 == t { print $3, $4; exit }' "$work/kai.out")
  lookup=$(awk -v t="$target" '$1 == "lookup" && $2 == t { print $5 }' "$work/kai.out" | median)
  per=$(awk -v a="$cached_wall" -v b="$lookup" 'BEGIN { print a + b }')
  echo "| $target | \`$name\` | $hits | $direct | $trans | $g_cpu | $g_wall | $(ratio "$cold_wall" "$g_wall") | $(ratio "$per" "$g_wall") |"
done <"$work/targets.tsv"
g_med=$(printf '%s\n' "${grep_walls[@]}" | median)
echo
echo "median git grep -l wall: $g_med ms; cold scan / grep: $(ratio "$cold_wall" "$g_med");" \
  "cached load / grep: $(ratio "$cached_wall" "$g_med")"
