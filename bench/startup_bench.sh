#!/usr/bin/env bash
# What one kaicoder process costs before and around its work, the way a
# person or an agent starts it, against git on the same machine:
#
#   kaicoder --version                    vs git --version
#   kaicoder run --dry-run -- make test   vs git --version (the goal: 3x, and
#                                         at least 200 commands a second)
#   kaicoder read a.txt                   vs cat a.txt
#   kaicoder list --status pending        vs git log --oneline -n 10
#
# Each timing is REPS runs back to back from one `sh -c` loop (the loop's own
# fork and exec are in both sides alike), CPU (user + system of the loop and
# everything it started) and wall, per process; RUNS rounds with the
# measurements interleaved, the median CPU shown. OLD=path/to/kaicoder times
# an older binary in the same rounds.
#
#   bench/startup_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# Needs root or unprivileged user namespaces: `kaicoder init` runs in a
# private mount namespace over a scratch home, so the owner's real
# configuration is never read or written.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
runs=${RUNS:-7}
reps=${REPS:-200}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup startup-bench "$build" kaicoder git script unshare
kai=$build/kaicoder
bench_private_home
old_kai=${OLD:+$(realpath "$OLD")}

repo=$work/repo
mkdir -p "$repo"
printf 'hello\n' >"$repo/a.txt"
(cd "$repo" && git_ init -q && git_ add -A && git_ commit -q -m seed)
(cd "$repo" && printf 'y\n' | in_home script -qec "$kai init" /dev/null >/dev/null)
(cd "$repo" && git_ add -A && git_ commit -q -m init)

loop() { printf 'for i in $(seq %s); do %s >/dev/null; done' "$reps" "$1"; }
# measure NAME CMD: one timing of REPS runs of CMD in the repository.
measure() { time_cmd "$1" "$repo" "${home_ns[@]}" sh -c "$(loop "$2")"; }
kai_cases() {  # PREFIX BINARY
  measure "$1_version" "'$2' --version"
  measure "$1_dry" "'$2' run --dry-run --why bench -- make test"
  measure "$1_read" "'$2' read a.txt"
  measure "$1_list" "'$2' list --status pending"
}

echo "# kaicoder start-up, per process; $(nproc) cores, $(uname -sr); $(git --version);" \
  "build: ${build_type:-unknown}; $(ldd "$kai" | grep -c '=>') shared libraries;" \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
for ((r = 0; r < runs; r++)); do
  measure git_version "git --version"
  measure cat "cat a.txt"
  measure git_log "git log --oneline -n 10"
  kai_cases kai "$kai"
  [[ -n $old_kai ]] && kai_cases old "$old_kai"
done

per_rep() { awk -v n="$reps" '{ printf "%.4f %.4f\n", $1 / n, $2 / n }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
rate() { awk -v w="$1" 'BEGIN { if (w > 0) printf "%.0f", 1 / w; else print "n/a" }'; }
fmt='| %-44s | %8s | %8s | %7s | %8s |\n'
# shellcheck disable=SC2059
printf "$fmt" "per process" "cpu s" "wall s" "per s" "vs base"
echo '|----------------------------------------------|----------|----------|---------|----------|'
row() {  # LABEL NAME BASE_NAME
  local cpu wall bcpu _
  read -r cpu wall < <(time_median "$2" | per_rep)
  read -r bcpu _ < <(time_median "$3" | per_rep)
  # shellcheck disable=SC2059
  printf "$fmt" "$1" "$cpu" "$wall" "$(rate "$wall")" "$(ratio "$cpu" "$bcpu")"
}
# rows BASE_LABEL BASE CASE LABEL: the base, then kaicoder's (and OLD's) CASE against it.
rows() {
  row "$1" "$2" "$2"
  local b label
  for b in kai ${old_kai:+old}; do
    label=kaicoder
    [[ $b == old ]] && label="OLD kaicoder"
    row "$label $4 (vs $1)" "${b}_$3" "$2"
  done
}
row "git --version" git_version git_version
for b in kai ${old_kai:+old}; do
  label=kaicoder
  [[ $b == old ]] && label="OLD kaicoder"
  row "$label --version (vs git --version)" "${b}_version" git_version
  row "$label run --dry-run (vs git --version)" "${b}_dry" git_version
done
rows "cat a.txt" cat read "read a.txt"
rows "git log --oneline -n 10" git_log list "list --status pending"
