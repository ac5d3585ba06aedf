#!/usr/bin/env bash
# The whole `kaicoder propose` of a 100,000-line file with 1% of its lines
# changed (bench/diff_driver.cpp `gen ... pct1`) against `git diff
# --no-index` on the same two files: CPU time (user + system) of each whole
# process, and their ratio (the goal: at most 1.5). The proposal is a write
# (--content-file) into a committed file, with the risk cache warm, without
# --json and with --json.
#
#   bench/propose_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# The kaicoder binary in BUILD_DIR is brought up to date (a BUILD_DIR without
# a CMake cache is configured as a Release build). LINES sets the file size
# (default 100000), RUNS the repetitions (default 5; the median CPU time is
# shown), REPS how many times each command runs back to back inside one
# timing (default 10; the time shown is per run), since /usr/bin/time counts
# in hundredths of a second. OLD=path/to/kaicoder also times that binary (an
# older build) in the same rounds, after git and before the new one, so the
# machine's load falls on all of them alike. Needs root or unprivileged user namespaces: `kaicoder init` runs in
# a private mount namespace over a scratch home, so the owner's real
# configuration is never read or written.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
lines=${LINES:-100000}
runs=${RUNS:-5}
reps=${REPS:-10}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup propose-bench "$build" diff_driver git script unshare
cmake --build "$build" --target kaicoder -j"$(nproc)" >/dev/null
kai=$build/kaicoder


mkdir -p "$work/gen"
"$driver" gen "$work/gen" "$lines" pct1
mkdir -p "$work/repo" "$work/home"
cp "$work/gen/old" "$work/repo/big.txt"
(cd "$work/repo" && git_ init -q && git_ add -A && git_ commit -q -m seed)

bench_private_home
(cd "$work/repo" && printf 'y\n' | in_home script -qec "$kai init" /dev/null >/dev/null)
(cd "$work/repo" && git_ add -A && git_ commit -q -m init)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "# kaicoder propose vs git diff --no-index: $lines lines, 1% changed"
echo "# $(nproc) cores, $(uname -sr); $(git --version); build: ${build_type:-unknown};" \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# The risk cache is warm after the first proposal; every timed one is a dry
# run, so each finds the same store.
(cd "$work/repo" && in_home "$kai" propose --path big.txt --content-file "$work/gen/new" --why warm --dry-run >/dev/null)
rm -f "$work"/*.times
# Each timing: one namespace, then REPS runs of the command, every one writing
# its whole output.
loop() { printf 'for i in $(seq %s); do %s; done' "$reps" "$1"; }
old_kai=${OLD:+$(realpath "$OLD")}
for ((r = 0; r < runs; r++)); do
  time_cmd git "$work/repo" sh -c "$(loop "git diff --no-index --no-color --no-ext-diff '$work/gen/old' '$work/gen/new'; true")"
  if [[ -n $old_kai ]]; then
    time_cmd kai_old "$work/repo" "${home_ns[@]}" sh -c \
      "$(loop "'$old_kai' propose --path big.txt --content-file '$work/gen/new' --why bench --dry-run")"
  fi
  time_cmd kai "$work/repo" "${home_ns[@]}" sh -c \
    "$(loop "'$kai' propose --path big.txt --content-file '$work/gen/new' --why bench --dry-run")"
  time_cmd kai_json "$work/repo" "${home_ns[@]}" sh -c \
    "$(loop "'$kai' --json propose --path big.txt --content-file '$work/gen/new' --why bench --dry-run")"
done
per_rep() { awk -v n="$reps" '{ printf "%.3f %.3f\n", $1 / n, $2 / n }'; }
fmt='| %-28s | %7s | %8s | %7s | %10s |\n'
# shellcheck disable=SC2059
printf "$fmt" measurement cpu wall "vs git" "stdout KB"
echo '|------------------------------|---------|----------|---------|------------|'
read -r gcpu gwall < <(time_median git | per_rep)
# shellcheck disable=SC2059
printf "$fmt" "git diff --no-index" "$gcpu" "$gwall" "1.00" ""
for m in ${old_kai:+kai_old} kai kai_json; do
  read -r cpu wall < <(time_median "$m" | per_rep)
  label="kaicoder propose"
  [[ $m == kai_json ]] && label="kaicoder --json propose"
  [[ $m == kai_old ]] && label="kaicoder propose (OLD)"
  # shellcheck disable=SC2059
  printf "$fmt" "$label" "$cpu" "$wall" "$(ratio "$cpu" "$gcpu")" "$(( $(wc -c <"$work/$m.out") / reps / 1024 ))"
done
