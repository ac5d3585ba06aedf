#!/usr/bin/env bash
# Times kaicoder's working-tree snapshot (kai::SnapshotStore::take, through
# bench/snapshot_driver.cpp) against `git stash create` and
# `git add -A && git write-tree` on copies of the same generated tree, and
# prints one table row per case with CPU and wall time and the ratios.
#
#   bench/snapshot_bench.sh [BUILD_DIR]     default BUILD_DIR: ./build
#
# BUILD_DIR must hold libkaicoder_core.a; if it does not, it is configured as
# a Release build and only that library is built. FILES sets the tree size
# (default 20000), RUNS the repetitions per measurement (default 3; the
# median CPU time is shown).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
files=${FILES:-20000}
runs=${RUNS:-3}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup snapshot-bench "$build" snapshot_driver git

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
git_() { git -c user.name=bench -c user.email=bench@example.com -c init.defaultBranch=main "$@"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

# The two starting states, each a pristine copy that every measurement copies again.
# committed: every file tracked and committed, then 100 edited and 100 new ones
#            (a tree in the middle of someone's work);
# untracked: the same files in a fresh `git init`, nothing committed (the
#            worst case: every byte must be read and stored).
mkdir -p "$work/committed" "$work/untracked"
"$driver" gen "$work/committed" "$files"
cp -a "$work/committed/." "$work/untracked/"
# Packed, as a real repository is, and with no background gc racing the copies.
(cd "$work/committed" && git_ init -q && git_ config gc.auto 0 && git_ add -A && git_ commit -q -m seed && git_ gc -q &&
  for i in $(seq 0 99); do echo "// edited" >>"d0/e0/f$i.c"; echo "new $i" >"new-$i.txt"; done)
(cd "$work/untracked" && git_ init -q && git_ config gc.auto 0)

echo "# kai::SnapshotStore::take vs git stash create vs git add -A && git write-tree, $files files"
echo "# $(nproc) cores, $(uname -sr); libgit2 $(pkg-config --modversion libgit2), $(git --version);" \
  "library build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
fmt='| %-9s | %-22s | %7s | %8s | %8s | %-14s |\n'
# shellcheck disable=SC2059
printf "$fmt" case measurement cpu wall "cpu/kai" "files hashed"
echo '|-----------|------------------------|---------|----------|----------|----------------|'
# A fresh copy of case $1 in $work/copy. Copying changes every file's inode
# and ctime, so the copy's index is refreshed first (as `git status` would):
# in a working tree, the index matches the files git last saw.
fresh_copy() {
  rm -rf "$work/copy" && cp -a "$work/$1" "$work/copy"
  (cd "$work/copy" && git update-index -q --refresh >/dev/null) || true
}

for c in committed untracked; do
  rm -f "$work"/*.times
  for ((r = 0; r < runs; r++)); do
    fresh_copy "$c"
    time_cmd kai1 "$work/copy" "$driver" snap .
    time_cmd kai2 "$work/copy" "$driver" snap .
    cp "$work/kai2.out" "$work/kai2.last"
    time_cmd undo "$work/copy" "$driver" undo . "echo '// run' >> d1/e1/f1100.c; rm d2/e2/f2200.c; echo made > made.txt"
    # One copy for both: `stash create` leaves the index and the work tree as
    # they were (it only adds objects, which `add -A` then need not write again,
    # a small advantage for the second).
    fresh_copy "$c"
    # With no commit yet there is nothing to stash against.
    [[ $c == committed ]] && time_cmd stash "$work/copy" git -c user.name=b -c user.email=b@b stash create
    time_cmd addwt "$work/copy" sh -c 'git add -A && git write-tree'
  done
  read -r kcpu kwall < <(time_median kai1)
  for m in kai1 kai2 undo stash addwt; do
    [[ -f $work/$m.times ]] || continue
    read -r cpu wall < <(time_median $m)
    case $m in
      kai1) label="kaicoder, first"; counts=$(awk '{ print $2 " of " $1 }' "$work/kai1.out") ;;
      kai2) label="kaicoder, again"; counts=$(awk '{ print $2 " of " $1 }' "$work/kai2.last") ;;
      undo) label="kaicoder, whole run"; counts="$(awk '{ print $1 }' "$work/undo.out") changes" ;;
      stash) label="git stash create"; counts="" ;;
      addwt) label="git add -A; write-tree"; counts="" ;;
    esac
    # shellcheck disable=SC2059
    printf "$fmt" "$c" "$label" "$cpu" "$wall" "$(ratio "$cpu" "$kcpu")" "$counts"
  done
done
