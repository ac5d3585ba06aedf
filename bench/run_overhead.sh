#!/usr/bin/env bash
# The overhead of the two snapshots around a run that changes nothing
# (kai::SnapshotStore take, hold, take, diff, release, through
# bench/snapshot_driver.cpp `nochange`) against `git status` on the same
# 20,000-file committed tree, and their ratio (the goal: at most 1.5).
#
#   bench/run_overhead.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# FILES sets the tree size (default 20000), RUNS the repetitions (default 5;
# the median CPU time is shown), REPS how many times each warm measurement
# runs back to back inside one timing (default 10; the time shown is per
# run), since /usr/bin/time counts in hundredths of a second. OLD_SNAPSHOT=path/to/an/older/lib/run/snapshot.cpp (lib/snapshot.cpp before the part folders)
# (with its tree's headers beside it) measures that version too: it and
# every other lib/run/snapshot*.cpp beside it, linked in place of the library's,
# for a before/after comparison.
#
# WHOLE=1 also measures the whole `kaicoder run --why bench -- true` process
# on a copy of the same tree (kaicoder init'ed, `true` allowed by a policy
# rule, so it runs at once under the configured `full` sandbox): everything
# a run costs around its command — start-up, config and trust checks, both
# snapshots, the sandbox set-up (the layout's scan of root for secrets and
# backups, namespaces, mounts, Landlock), the proposal and the changelog
# entry. It measures the same process on a copy whose config says
# `sandbox = "none"` and `snapshots_keep = 0` too: the difference is the
# run's overhead as the speed goal counts it, the sandbox set-up plus the
# snapshots, against `git status` (the goal: at most 1.5).
# OLD_KAICODER=path/to/an/older/kaicoder measures that binary too.
# Like bench/propose_bench.sh it needs root or unprivileged user namespaces:
# kaicoder runs in a private mount namespace over a scratch home.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
files=${FILES:-20000}
runs=${RUNS:-5}
reps=${REPS:-10}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup run-overhead "$build" snapshot_driver git

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git_() { git -c user.name=bench -c user.email=bench@example.com -c init.defaultBranch=main "$@"; }

drivers=(new)
if [[ -n ${OLD_SNAPSHOT:-} ]]; then
  # The tree it belongs to: the folder above it that holds lib/result.hpp
  # (lib/snapshot.cpp at lib/'s top in older trees, lib/run/ in newer ones).
  old_root=$(cd "$(dirname "$OLD_SNAPSHOT")" && pwd)
  while [[ $old_root != / && ! -f $old_root/lib/result.hpp ]]; do old_root=$(dirname "$old_root"); done
  # The snapshot is split over several files (lib/run/snapshot*.cpp): all of them.
  old_objs=()
  for src in "$(dirname "$OLD_SNAPSHOT")"/snapshot*.cpp; do
    old_objs+=("$work/old_$(basename "$src" .cpp).o")
    g++ -std=c++20 -O2 -I"$old_root" -c "$src" -o "${old_objs[-1]}"
  done
  # shellcheck disable=SC2046
  g++ -std=c++20 -O2 -I"$old_root" "$root/bench/snapshot_driver.cpp" "${old_objs[@]}" "${core_libs[@]}" \
    $(pkg-config --libs libgit2 tomlplusplus) -lfmt -o "$work/driver_old"
  drivers=(old new)
fi
cp "$driver" "$work/driver_new"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# Every file committed and packed; the index refreshed, as after any `git status`.
mkdir -p "$work/tree"
"$driver" gen "$work/tree" "$files"
(cd "$work/tree" && git_ init -q && git_ config gc.auto 0 && git_ add -A && git_ commit -q -m seed && git_ gc -q &&
  printf '.kaicoder/\n' >.git/info/exclude && git update-index -q --refresh)
# Out of the stat cache's racy window (a second), as a tree is between runs.
sleep 1.2

echo "# a run that changes nothing: two snapshots vs git status, $files committed files"
echo "# $(nproc) cores, $(uname -sr); libgit2 $(pkg-config --modversion libgit2), $(git --version);" \
  "library build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
fmt='| %-30s | %7s | %8s | %-10s | %-16s |\n'
# head_row LAST: the table's head, LAST naming its last column.
head_row() {
  # shellcheck disable=SC2059
  printf "$fmt" measurement cpu wall "cpu/status" "$1"
  echo '|--------------------------------|---------|----------|------------|------------------|'
}
# loop CMD: CMD run REPS times back to back, as one shell command.
loop() { printf 'for i in $(seq %s); do %s; done' "$reps" "$1"; }
head_row "files hashed"
rm -f "$work"/*.times
for ((r = 0; r < runs; r++)); do
  time_cmd status "$work/tree" sh -c "$(loop "git status --porcelain >/dev/null")"
  for d in "${drivers[@]}"; do
    rm -rf "$work/tree/.kaicoder"
    mkdir -p "$work/tree/.kaicoder"
    time_cmd "cold_$d" "$work/tree" "$work/driver_$d" nochange .  # the store's first run
    # every later one
    time_cmd "warm_$d" "$work/tree" sh -c "$(loop "'$work/driver_$d' nochange .")"
  done
done
per_rep() { awk -v n="$reps" '{ printf "%.3f %.3f\n", $1 / n, $2 / n }'; }
read -r scpu swall < <(time_median status | per_rep)
# shellcheck disable=SC2059
printf "$fmt" "git status" "$scpu" "$swall" "1.00" ""
for d in "${drivers[@]}"; do
  for w in cold warm; do
    if [[ $w == warm ]]; then read -r cpu wall < <(time_median "${w}_$d" | per_rep); else read -r cpu wall < <(time_median "${w}_$d"); fi
    # shellcheck disable=SC2059
    printf "$fmt" "kaicoder ($d), $w store" "$cpu" "$wall" "$(ratio "$cpu" "$scpu")" \
      "$(tail -n 1 "$work/${w}_$d.out" | awk '{ print $1 " + " $2 }')"
  done
done

[[ ${WHOLE:-0} == 1 ]] || exit 0

# ----- the whole `kaicoder run` process ------------------------------------------
cmake --build "$build" --target kaicoder -j"$(nproc)" >/dev/null
cp "$build/kaicoder" "$work/kai_new"
kais=(new)
if [[ -n ${OLD_KAICODER:-} ]]; then cp "$OLD_KAICODER" "$work/kai_old" && kais=(old new); fi
cp -a "$work/tree" "$work/run"
rm -rf "$work/run/.kaicoder"
mkdir -p "$work/home"
real_home=$(getent passwd "$(id -u)" | cut -d: -f6)
ns=(unshare -m --propagation private)
# Not root: a user namespace that maps the user to itself, so kaicoder runs
# as that user, and keeps the capability to mount there. Capabilities there
# count for nothing outside: the file system watch, which needs
# CAP_SYS_ADMIN, is missing as for any owner who is not root.
[[ $(id -u) -eq 0 ]] || ns=(unshare -c -m --keep-caps --propagation private)
home_ns=("${ns[@]}" sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh "$work/home" "$real_home")
(cd "$work/run" && printf 'y\n' | "${home_ns[@]}" script -qec "'$work/kai_new' init" /dev/null >/dev/null)
printf '\n[[policy.rule]]\naction = "run"\ncommand = "true"\ndecision = "allow"\n' >>"$work/run/kaicoder.toml"
(cd "$work/run" && git_ add -A && git_ commit -q -m init && git update-index -q --refresh &&
  printf 'y\n' | "${home_ns[@]}" script -qec "'$work/kai_new' trust" /dev/null >/dev/null)
# The same tree and config but for `sandbox = "none"` and `snapshots_keep = 0`:
# the same process (start-up, config, the proposal, the command, the
# changelog entry) without the sandbox and the two snapshots. The
# difference of the two is the run's overhead as the goal counts it.
cp -a "$work/run" "$work/bare"
sed -i 's/^sandbox = .*/sandbox = "none"/; s/^snapshots_keep = .*/snapshots_keep = 0/' "$work/bare/kaicoder.toml"
(cd "$work/bare" && git_ commit -q -am bare && git update-index -q --refresh &&
  printf 'y\n' | "${home_ns[@]}" script -qec "'$work/kai_new' trust" /dev/null >/dev/null)
for k in "${kais[@]}"; do  # the store's first run, and the files kaicoder wrote out of the racy window
  for t in run bare; do (cd "$work/$t" && "${home_ns[@]}" "$work/kai_$k" run --why warm -- true >/dev/null); done
done
sleep 1.2
echo
echo "# the whole \`kaicoder run --why bench -- true\` process, full sandbox, against git status on the same tree"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
head_row ""
rm -f "$work"/*.times
for ((r = 0; r < runs; r++)); do
  time_cmd wstatus "$work/run" sh -c "$(loop "git status --porcelain >/dev/null")"
  for k in "${kais[@]}"; do
    for t in run bare; do
      time_cmd "${t}_$k" "$work/$t" "${home_ns[@]}" sh -c "$(loop "'$work/kai_$k' run --why bench -- true >/dev/null")"
    done
  done
done
read -r scpu swall < <(time_median wstatus | per_rep)
# shellcheck disable=SC2059
printf "$fmt" "git status" "$scpu" "$swall" "1.00" ""
for k in "${kais[@]}"; do
  read -r cpu wall < <(time_median "run_$k" | per_rep)
  read -r bcpu bwall < <(time_median "bare_$k" | per_rep)
  ocpu=$(awk -v a="$cpu" -v b="$bcpu" 'BEGIN { printf "%.3f", a - b }')
  owall=$(awk -v a="$wall" -v b="$bwall" 'BEGIN { printf "%.3f", a - b }')
  # shellcheck disable=SC2059
  {
    printf "$fmt" "kaicoder run ($k)" "$cpu" "$wall" "$(ratio "$cpu" "$scpu")" ""
    printf "$fmt" "  no sandbox, no snapshots" "$bcpu" "$bwall" "$(ratio "$bcpu" "$scpu")" ""
    printf "$fmt" "  overhead: the difference" "$ocpu" "$owall" "$(ratio "$ocpu" "$scpu")" "goal: 1.5 at most"
  }
done
