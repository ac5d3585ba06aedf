#!/usr/bin/env bash
# What the secret-file walk every command makes of the tree costs, the way a
# person starts kaicoder (issue 29): `kaicoder list` on a 100-file tree and
# on a 100,000-file tree (100 folders of 10 folders of 100 files, one .env),
# each with the walk cached in the owner's folder as it is after the first
# command (lib/config/secret_walk), and with that cache removed before each
# command (the whole walk, as every command made it before the cache).
# The goal: the big tree within 2x the small one.
#
# Each timing is REPS runs back to back from one `sh -c` loop, CPU (user +
# system of the loop and everything it started) and wall, per process; RUNS
# rounds with the measurements interleaved, the median CPU shown.
# OLD=path/to/kaicoder times an older binary in the same rounds.
#
#   bench/secret_walk_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# Needs root or unprivileged user namespaces: `kaicoder init` runs in a
# private mount namespace over a scratch home, so the owner's real
# configuration is never read or written.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
runs=${RUNS:-5}
reps=${REPS:-50}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup secret-walk-bench "$build" kaicoder git script unshare
kai=$build/kaicoder
bench_private_home
old_kai=${OLD:+$(realpath "$OLD")}
cache_dir=$work/home/.config/kaicoder/walk-cache

# make_tree DIR TOPS SUBS FILES: TOPS folders of SUBS folders of FILES files,
# and a .env at the top; a git repository, committed, trusted by `kaicoder init`.
make_tree() {
  local dir=$1 tops=$2 subs=$3 files=$4 t s
  mkdir -p "$dir"
  for ((t = 0; t < tops; t++)); do
    for ((s = 0; s < subs; s++)); do
      mkdir -p "$dir/d$t/s$s"
      (cd "$dir/d$t/s$s" && eval "touch f{1..$files}.c")
    done
  done
  printf 'API_TOKEN=bench-secret-value\n' >"$dir/.env"
  (cd "$dir" && git_ init -q && git_ add -A && git_ commit -q -m seed)
  (cd "$dir" && printf 'y\n' | in_home script -qec "$kai init" /dev/null >/dev/null)
  (cd "$dir" && git_ add -A && git_ commit -q -m init)
}
make_tree "$work/small" 1 10 10      # 100 files
make_tree "$work/big" 100 10 100     # 100,000 files
# Out of the racy window of the cache the first command writes.
sleep 2
for t in small big; do (cd "$work/$t" && in_home "$kai" list >/dev/null); done

loop() { printf 'for i in $(seq %s); do %s >/dev/null; done' "$reps" "$1"; }
# measure NAME TREE CMD: one timing of REPS runs of CMD in the tree.
measure() { time_cmd "$1" "$work/$2" "${home_ns[@]}" sh -c "$(loop "$3")"; }
kai_cases() {  # PREFIX BINARY
  local t
  # Each tree's cache as the last command left it (one command first: an OLD
  # binary may have left the other's).
  for t in small big; do
    (cd "$work/$t" && in_home "$2" list >/dev/null)
    measure "$1_$t" "$t" "'$2' list"
  done
  # The cache folder holds both trees' caches: removed, both are gone.
  for t in small big; do measure "$1_${t}_cold" "$t" "rm -rf '$cache_dir'; '$2' list"; done
}

echo "# kaicoder list and the secret-file walk, per process; $(nproc) cores, $(uname -sr);" \
  "build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for ((r = 0; r < runs; r++)); do
  kai_cases kai "$kai"
  [[ -n $old_kai ]] && kai_cases old "$old_kai"
done

per_rep() { awk -v n="$reps" '{ printf "%.4f %.4f\n", $1 / n, $2 / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
fmt='| %-52s | %8s | %8s | %8s |\n'
# shellcheck disable=SC2059
printf "$fmt" "kaicoder list, per process" "cpu s" "wall s" "vs small"
echo '|------------------------------------------------------|----------|----------|----------|'
row() {  # LABEL NAME BASE_NAME
  local cpu wall bcpu _
  read -r cpu wall < <(time_median "$2" | per_rep)
  read -r bcpu _ < <(time_median "$3" | per_rep)
  # shellcheck disable=SC2059
  printf "$fmt" "$1" "$cpu" "$wall" "$(ratio "$cpu" "$bcpu")"
}
for b in kai ${old_kai:+old}; do
  label=kaicoder
  [[ $b == old ]] && label="OLD kaicoder"
  row "$label, 100 files, walk cached" "${b}_small" "${b}_small"
  row "$label, 100,000 files, walk cached" "${b}_big" "${b}_small"
  row "$label, 100 files, cache removed each time" "${b}_small_cold" "${b}_small"
  row "$label, 100,000 files, cache removed each time" "${b}_big_cold" "${b}_small"
done
