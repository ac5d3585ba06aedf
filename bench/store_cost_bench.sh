#!/usr/bin/env bash
# What a person sees as the store grows: the whole `kaicoder propose` and
# `kaicoder approve` of a 1-line change (a surgical edit, approved at a
# terminal and applied) on an empty store and on stores that already hold N
# decided proposals (and as many changelog entries), CPU time (user + system) of each whole process, and
# the ratio to the empty store (the goal: at most 1.2 at N = 10,000). Also
# the start-up of a process: `kaicoder --version` against `git --version`
# (the goal: at most 3). And what reads the whole history, at each size N:
# a full `kaicoder list` against `git log --oneline -n N` and `kaicoder
# doctor` (and `doctor --full`, which reads every record) against `git fsck`,
# each git command on a repository of N commits (the goal: at most 2), with
# `list --status pending`, `show`, `log` and `rollback` beside them for the
# growth table.
#
#   bench/store_cost_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# OLD=path/to/kaicoder also times that binary (an older build) on stores of
# its own, filled alike, in the same rounds. SIZES lists the store sizes
# (default "1000 10000"), RUNS the rounds
# (default 7; the median CPU time is shown), REPS how many `--version` runs
# one timing holds (default 50), LOOPS how many runs one timing of a
# whole-history command holds (default 10; the figure shown is per run). The stores are filled by bench/store_fill
# (the library's own Store::create, sealed with the owner's key); every timed
# command is the real binary. The work folder is on /dev/shm when there is
# one (WORK_DIR overrides), so filling 10,000 proposals costs no disk syncs;
# the CPU figures do not depend on it. Needs root or unprivileged user
# namespaces: `kaicoder init` runs in a private mount namespace over a
# scratch home, so the owner's real configuration is never read or written.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
sizes=${SIZES:-"1000 10000"}
runs=${RUNS:-7}
reps=${REPS:-50}
reps_n=${LOOPS:-10}
if [[ -z ${WORK_DIR:-} && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
[[ -n ${WORK_DIR:-} ]] && export TMPDIR=$WORK_DIR

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup store-cost-bench "$build" store_fill git script unshare
cmake --build "$build" --target kaicoder -j"$(nproc)" >/dev/null
kai=$build/kaicoder

bench_private_home
# The owner's folder as the commands see it: the private home is mounted over the real one.
real_home=$(getent passwd "$(id -u)" | cut -d: -f6)

old_kai=${OLD:+$(realpath "$OLD")}
bins=(kai)
[[ -n $old_kai ]] && bins+=(old)
bin_of() { if [[ $1 == old ]]; then echo "$old_kai"; else echo "$kai"; fi; }

# make_repo BIN N: $work/BIN-N, initialised, holding N decided proposals and N changelog entries.
make_repo() {
  local dir=$work/$1-$2 n=$2
  mkdir -p "$dir"
  printf 'hello\n' >"$dir/a.txt"
  (cd "$dir" && git_ init -q && git_ add -A && git_ commit -q -m seed)
  (cd "$dir" && printf 'y\n' | in_home script -qec "$kai init" /dev/null >/dev/null)
  (cd "$dir" && git_ add -A && git_ commit -q -m init)
  # An older build (OLD) knows no archive: its stores keep every proposal in staging/.
  local layout=()
  [[ $1 == old ]] && layout=(staging)
  if ((n > 0)); then in_home "$build/bench/store_fill" "$dir" "$real_home/.config/kaicoder" "$n" "${layout[@]}"; fi
}

# make_git N: $work/git-N, a repository of N commits (one file changed in each).
make_git() {
  local dir=$work/git-$1
  mkdir -p "$dir"
  (cd "$dir" && git_ init -q &&
    awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++)
      printf "commit refs/heads/main\ncommitter bench <b@example.com> %d +0000\ndata <<EOT\nchange %d\nEOT\nM 644 inline f.txt\ndata <<EOT\n%d\nEOT\n\n", 1700000000 + i, i, i }' |
    git_ fast-import --quiet && git_ reset -q --hard main)
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "# kaicoder propose + approve of a 1-line change, by store size; kaicoder --version vs git --version"
echo "# $(nproc) cores, $(uname -sr); $(git --version); build: ${build_type:-unknown};" \
  "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
read -r -a more_sizes <<<"$sizes"
all_sizes=(0 "${more_sizes[@]}")
for b in "${bins[@]}"; do for n in "${all_sizes[@]}"; do make_repo "$b" "$n"; done; done
for n in "${more_sizes[@]}"; do make_git "$n"; done
rm -f "$work"/*.times

# One round per size, the sizes interleaved so the machine's load falls on
# all of them alike: propose hello→world, approve it (applied), and roll it
# back (hello again), each one process as a person runs it.
for ((r = 0; r < runs; r++)); do
  from=hello to=world
  for b in "${bins[@]}"; do
    k=$(bin_of "$b")
    for n in "${all_sizes[@]}"; do
      dir=$work/$b-$n
      time_cmd "$b-propose-$n" "$dir" "${home_ns[@]}" "$k" --json propose --path a.txt --target "$from" \
        --replacement "$to" --why bench
      id=$(jq -r '.id' "$work/$b-propose-$n.out")
      time_cmd "$b-approve-$n" "$dir" "${home_ns[@]}" script -qec "$k approve $id" /dev/null < <(printf 'y\n')
      [[ $(cat "$dir/a.txt") == "$to" ]] || { echo "store-cost-bench: proposal $id was not applied" >&2; exit 1; }
      time_cmd "$b-rollback-$n" "$dir" "${home_ns[@]}" script -qec "$k rollback $id" /dev/null < <(printf 'y\n')
      [[ $(cat "$dir/a.txt") == "$from" ]] || { echo "store-cost-bench: proposal $id was not rolled back" >&2; exit 1; }
    done
  done
  loop() { printf 'for i in $(seq %s); do %s; done' "$reps" "$1"; }
  time_cmd git_version "$work" sh -c "$(loop "git --version >/dev/null")"
  time_cmd kai_version "$work" sh -c "$(loop "'$kai' --version >/dev/null")"
  time_cmd git_log "$work/kai-0" sh -c "$(loop "git log --oneline -n 10 >/dev/null")"
  time_cmd kai_list "$work/kai-${all_sizes[-1]}" "${home_ns[@]}" sh -c "$(loop "'$kai' list --status pending >/dev/null")"
  # What reads the whole history, each size against git on as many commits;
  # each timing holds LOOPS runs (one process is near the clock's noise).
  loops() { printf 'for i in $(seq %s); do %s; done' "$reps_n" "$1"; }
  for n in "${more_sizes[@]}"; do
    time_cmd "git-log-$n" "$work/git-$n" sh -c "$(loops "git log --oneline -n $n >/dev/null")"
    time_cmd "git-fsck-$n" "$work/git-$n" sh -c "$(loops "git fsck --no-progress >/dev/null")"
    for b in "${bins[@]}"; do
      k=$(bin_of "$b")
      time_cmd "$b-list-$n" "$work/$b-$n" "${home_ns[@]}" sh -c "$(loops "'$k' list >/dev/null")"
      time_cmd "$b-pending-$n" "$work/$b-$n" "${home_ns[@]}" sh -c "$(loops "'$k' list --status pending >/dev/null")"
      time_cmd "$b-show-$n" "$work/$b-$n" "${home_ns[@]}" sh -c "$(loops "'$k' show 1 >/dev/null")"
      time_cmd "$b-log-$n" "$work/$b-$n" "${home_ns[@]}" sh -c "$(loops "'$k' log >/dev/null")"
      # doctor says what it finds about the bench's home (exit 1 on a failed check): timed all the same.
      # The first run after a round's commands reads the bucket they changed; the rest read none (doctor
      # leaves out a bucket unchanged since it read it whole). --full reads every record each time.
      time_cmd "$b-doctor-$n" "$work/$b-$n" "${home_ns[@]}" sh -c "$(loops "'$k' doctor >/dev/null 2>&1 || true")"
      time_cmd "$b-doctorfull-$n" "$work/$b-$n" "${home_ns[@]}" sh -c "$(loops "'$k' doctor --full >/dev/null 2>&1 || true")"
    done
  done
  if [[ -n $old_kai ]]; then
    time_cmd old_version "$work" sh -c "$(loop "'$old_kai' --version >/dev/null")"
    time_cmd old_list "$work/old-${all_sizes[-1]}" "${home_ns[@]}" sh -c "$(loop "'$old_kai' list --status pending >/dev/null")"
  fi
done

fmt='| %-34s | %7s | %8s | %9s |\n'
# shellcheck disable=SC2059
printf "$fmt" "measurement" "cpu s" "wall s" "vs empty"
echo '|------------------------------------|---------|----------|-----------|'
for b in "${bins[@]}"; do
  label=kaicoder
  [[ $b == old ]] && label="OLD kaicoder"
  for step in propose approve rollback; do
    read -r base _ < <(time_median "$b-$step-0")
    for n in "${all_sizes[@]}"; do
      read -r cpu wall < <(time_median "$b-$step-$n")
      # shellcheck disable=SC2059
      printf "$fmt" "$label $step, $n decided" "$cpu" "$wall" "$(ratio "$cpu" "$base")"
    done
  done
done
per_rep() { awk -v n="$reps" '{ printf "%.4f %.4f\n", $1 / n, $2 / n }'; }
read -r gcpu gwall < <(time_median git_version | per_rep)
echo
# shellcheck disable=SC2059
printf "$fmt" "measurement (per process)" "cpu s" "wall s" "vs git"
echo '|------------------------------------|---------|----------|-----------|'
# shellcheck disable=SC2059
printf "$fmt" "git --version" "$gcpu" "$gwall" "1.00"
for m in kai_version ${old_kai:+old_version}; do
  read -r kcpu kwall < <(time_median "$m" | per_rep)
  label="kaicoder --version"
  [[ $m == old_version ]] && label="OLD kaicoder --version"
  # shellcheck disable=SC2059
  printf "$fmt" "$label" "$kcpu" "$kwall" "$(ratio "$kcpu" "$gcpu")"
done
read -r gcpu gwall < <(time_median git_log | per_rep)
# shellcheck disable=SC2059
printf "$fmt" "git log --oneline -n 10" "$gcpu" "$gwall" "1.00"
for m in kai_list ${old_kai:+old_list}; do
  read -r kcpu kwall < <(time_median "$m" | per_rep)
  label="kaicoder list --status pending"
  [[ $m == old_list ]] && label="OLD kaicoder list --status pending"
  # shellcheck disable=SC2059
  printf "$fmt" "$label" "$kcpu" "$kwall" "$(ratio "$kcpu" "$gcpu")"
done
echo
# shellcheck disable=SC2059
printf "$fmt" "measurement (whole history)" "cpu s" "wall s" "vs git"
echo '|------------------------------------|---------|----------|-----------|'
per_loop() { awk -v n="$reps_n" '{ printf "%.4f %.4f\n", $1 / n, $2 / n }'; }
for n in "${more_sizes[@]}"; do
  read -r lcpu lwall < <(time_median "git-log-$n" | per_loop)
  read -r fcpu fwall < <(time_median "git-fsck-$n" | per_loop)
  # shellcheck disable=SC2059
  printf "$fmt" "git log --oneline -n $n" "$lcpu" "$lwall" "1.00"
  # shellcheck disable=SC2059
  printf "$fmt" "git fsck, $n commits" "$fcpu" "$fwall" "1.00"
  for b in "${bins[@]}"; do
    label=kaicoder
    [[ $b == old ]] && label="OLD kaicoder"
    for step in list pending doctor doctorfull show log; do
      read -r cpu wall < <(time_median "$b-$step-$n" | per_loop)
      case $step in list) vs=$(ratio "$cpu" "$lcpu") ;; doctor | doctorfull) vs=$(ratio "$cpu" "$fcpu") ;; *) vs="" ;; esac
      name=$step
      [[ $step == pending ]] && name="list --status pending"
      [[ $step == doctorfull ]] && name="doctor --full"
      # shellcheck disable=SC2059
      printf "$fmt" "$label $name, $n stored" "$cpu" "$wall" "$vs"
    done
  done
done
