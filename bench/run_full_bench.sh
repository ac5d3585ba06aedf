#!/usr/bin/env bash
# A run at the `full` level (the command over an overlay of root) as a
# person runs it, against `git status` on the same tree (issue 26, "Speed"):
#
#   - `kaicoder run --why bench -- true`, the agent's proposal (recorded
#     pending), and `kaicoder approve ID` answered y at a pseudo-terminal
#     (`script`): the whole approval — start-up, config and trust checks,
#     the secret-file scan of root, the overlay and the sandbox set-up, the
#     command, the effects read from the upper folder, the changelog entry;
#   - the same for a command that writes N new files (WRITES, default
#     "100 1000 10000"), to show what a run costs per file it writes;
#   - `git status --porcelain` on the same tree, the measure of the goal
#     (a run that changes nothing: at most 1.5x).
#
#   bench/run_full_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# FILES sets the tree sizes (default "20000 100000"), RUNS the interleaved
# rounds (default 5; medians are shown). CPU is user + system of each whole
# process and its children (the sandbox, the command), wall the elapsed time.
# Nothing is subtracted: the figure is the whole `kaicoder approve` of a run.
#
# Run it as root and as an ordinary user (for example a throwaway one:
# `useradd -m kaibench; runuser -u kaibench -- bench/run_full_bench.sh DIR`
# with DIR readable by that user and built: a build folder the user may not
# write is used as it is). Not root, it needs unprivileged user
# namespaces (kaicoder runs over a scratch home in a private mount
# namespace, bench/common.sh) and an unprivileged overlay; where the kernel
# refuses either, it says so and stops.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
sizes=${FILES:-20000 100000}
writes=${WRITES:-100 1000 10000}
runs=${RUNS:-5}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup run-full "$build" snapshot_driver git script unshare jq
if [[ -w $build ]]; then cmake --build "$build" --target kaicoder -j"$(nproc)" >/dev/null; fi
cp "$build/kaicoder" "$work/kai"
kai=$work/kai

bench_private_home
if ! in_home true 2>/dev/null; then
  echo "run-full: SKIPPED as $(id -un): the kernel refuses a user namespace to this user" >&2
  exit 0
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
median() { sort -n -k"$1","$1" "$work/$2.times" | awk -v c="$1" '{ l[NR] = $c } END { print l[int((NR + 1) / 2)] }'; }

# propose_run NAME ARGS...: `kaicoder run` of ARGS in $tree, timed as NAME;
# sets $id to the proposal it made.
propose_run() {
  local name=$1
  shift
  time_cmd "$name" "$tree" "${home_ns[@]}" "$kai" --json run --why bench -- "$@"
  id=$(jq -r '.proposal.id' "$work/$name.out")
  [[ $id =~ ^[0-9]+$ ]] || { echo "run-full: no proposal id from kaicoder run:" >&2; cat "$work/$name.out" >&2; exit 1; }
}
# approve_run NAME: `kaicoder approve $id` at a pseudo-terminal, answered
# with what its tier takes, timed as NAME; fails when the run did not land
# plainly (a held question, or an exit other than 0).
approve_run() {
  local name=$1 answer=y
  [[ $(cd "$tree" && in_home "$kai" --json show "$id" | jq -r .tier) == confirm ]] && answer=CONFIRM
  time_cmd "$name" "$tree" "${home_ns[@]}" script -qec "$kai approve $id" /dev/null < <(printf '%s\n' "$answer")
  if grep -q 'Keep the held effects' "$work/$name.out"; then
    echo "run-full: the run held effects (the measure is of a plain run):" >&2
    tail -n 20 "$work/$name.out" >&2
    exit 1
  fi
  [[ $(cd "$tree" && in_home "$kai" --json show "$id" | jq -r .result) == "exit 0" ]] ||
    { echo "run-full: run $id did not end with exit 0:" >&2; tail -n 20 "$work/$name.out" >&2; exit 1; }
}

echo "# a run at the full level (overlay) through the CLI vs git status, as $(id -un)"
echo "# $(nproc) cores, $(uname -sr); $(git --version); file system: $(stat -f -c %T "${TMPDIR:-/tmp}");" \
  "build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $runs rounds, medians"

for files in $sizes; do
  tree=$work/t$files
  mkdir -p "$tree"
  "$driver" gen "$tree" "$files"
  (cd "$tree" && git_ init -q && git_ config gc.auto 0 && git_ add -A && git_ commit -q -m seed && git_ gc -q)
  (cd "$tree" && printf 'y\n' | in_home script -qec "$kai init" /dev/null >/dev/null)
  (cd "$tree" && git_ add -A && git_ commit -q -m init && git update-index -q --refresh)
  # The first run fills what later runs reuse (the secret-file scan's cache);
  # its way must be the overlay, or this measures something else.
  propose_run warm true
  approve_run warm
  if ! grep -q 'an overlay of root' "$work/warm.out"; then
    echo "run-full: SKIPPED as $(id -un): the run did not use the overlay here:" >&2
    grep -h 'sandbox' "$work/warm.out" | head -n 3 >&2
    exit 0
  fi
  (cd "$tree" && git update-index -q --refresh)
  sleep 1.2  # out of the stat cache's racy window, as a tree is between runs
  rm -f "$work"/*.times
  for ((r = 0; r < runs; r++)); do
    time_cmd status "$tree" git status --porcelain
    propose_run propose true
    approve_run approve
    for n in $writes; do
      # One process writes N new files of a few bytes: the cost is kaicoder's.
      propose_run "propose$n" sh -c "mkdir -p gen && i=0 && while [ \$i -lt $n ]; do echo \$i >gen/f\$i; i=\$((i + 1)); done"
      approve_run "approve$n"
      [[ $(find "$tree/gen" -type f | wc -l) -eq $n ]] || { echo "run-full: $n files did not land" >&2; exit 1; }
      rm -rf "$tree/gen"
      # The same command without kaicoder.
      time_cmd "bare$n" "$tree" sh -c "mkdir -p gen && i=0 && while [ \$i -lt $n ]; do echo \$i >gen/f\$i; i=\$((i + 1)); done"
      rm -rf "$tree/gen"
    done
  done
  echo
  echo "## $files committed files"
  echo
  fmt='| %-44s | %6s | %6s | %-10s | %-11s |\n'
  # shellcheck disable=SC2059
  printf "$fmt" measurement "cpu s" "wall s" "cpu/status" "wall/status"
  echo '|----------------------------------------------|--------|--------|------------|-------------|'
  sc=$(median 1 status) sw=$(median 2 status)
  row() { # LABEL NAME
    local c w
    c=$(median 1 "$2") w=$(median 2 "$2")
    # shellcheck disable=SC2059
    printf "$fmt" "$1" "$c" "$w" "$(ratio "$c" "$sc")" "$(ratio "$w" "$sw")"
  }
  row "git status" status
  row "kaicoder run -- true (propose)" propose
  row "kaicoder approve: true, nothing changed" approve
  for n in $writes; do
    row "the command alone, writes $n files" "bare$n"
    row "kaicoder approve: writes $n files" "approve$n"
  done
  rm -rf "$tree"
done
