#!/usr/bin/env bash
# A changeset as a person runs it, against git on the same patch: the real
# `kaicoder propose --patch` and `kaicoder approve` (answered at a
# pseudo-terminal, applied, fsync'd) against `git apply` and
# `git apply && sync`; then `kaicoder rollback` against
# `git apply -R && sync`. CPU (user + system of each whole process) and wall
# time, medians of interleaved runs, and the ratios the goal is stated in
# (issue 29: CPU <= 3x git apply, wall <= 2x git apply && sync, rollback
# wall <= 2x git apply -R && sync).
#
#   bench/changeset_cli_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# FILES sets how many files the patch changes (default 330), RUNS the
# rounds (default 5). OLD=path/to/kaicoder also times that binary (an older
# build) in the same rounds, on a tree of its own, for a before/after. The tree and the patch come from bench/changeset_driver
# (gen, edit: a few lines of every file changed). Needs `script` and
# unshare (root or unprivileged user namespaces): kaicoder runs over a
# scratch home in a private mount namespace, so the owner's real
# configuration is never read or written. WORK_DIR sets where the trees go
# (default: TMPDIR or /tmp, a disk, so the syncs cost what they cost). The
# answer is typed with the keyboard held open until the command ends
# (typed_answer, bench/common.sh): a stdin that ends at once makes `script`
# stall the diff's output for 2 s, which no person's terminal does.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
files=${FILES:-330}
runs=${RUNS:-5}
[[ -n ${WORK_DIR:-} ]] && export TMPDIR=$WORK_DIR

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup changeset-cli "$build" changeset_driver git sync script unshare jq
cmake --build "$build" --target kaicoder -j"$(nproc)" >/dev/null
kai=$build/kaicoder
old_kai=${OLD:+$(realpath "$OLD")}

bench_private_home

# The tree, committed and initialised; the patch: a few lines of every file.
mkdir -p "$work/base"
"$driver" gen "$work/base" "$files"
(cd "$work/base" && git_ init -q && git_ add -A && git_ commit -q -m base)
"$driver" edit "$work/base"
(cd "$work/base" && git_ diff >"$work/change.patch" && git_ checkout -q -- .)
cp -a "$work/base" "$work/want" && git_ -C "$work/want" apply "$work/change.patch"
# kaicoder's tree: one, initialised once (its trust is bound to its path);
# each rollback brings it back to the base. Nothing the rounds made is
# removed until the end: kaicoder's backups are moved out of its tree by
# rename, and git gets a fresh copy of the tree for each apply. On ext4
# without a journal every file created skips the inodes freed in the last
# minute (find_inode_bit -> recently_deleted, an inode table read each),
# so removing hundreds of files a round would charge the next round's
# creations for the benchmark's own cleanup.
cp -a "$work/base" "$work/t"
(cd "$work/t" && printf 'y\n' | "${home_ns[@]}" script -qec "$kai init" /dev/null >/dev/null)
if [[ -n $old_kai ]]; then
  cp -a "$work/base" "$work/t_old"
  (cd "$work/t_old" && printf 'y\n' | "${home_ns[@]}" script -qec "$old_kai init" /dev/null >/dev/null)
fi
patch_files=$(grep -c '^diff --git' "$work/change.patch")
patch_kb=$(($(stat -c %s "$work/change.patch") / 1024))

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# median COLUMN NAME: the median of one column (1 cpu, 2 wall) of NAME.times.
median() { sort -n -k"$1","$1" "$work/$2.times" | awk -v c="$1" '{ l[NR] = $c } END { print l[int((NR + 1) / 2)] }'; }
# sum_runs NAME...: per run, the sum of the named measurements, written as
# FIRST+all.
sum_runs() {
  local out=$work/$1+all.times files=()
  for n in "$@"; do files+=("$work/$n.times"); done
  paste -d' ' "${files[@]}" | awk '{ c = 0; w = 0; for (i = 1; i <= NF; i += 2) { c += $i; w += $(i + 1) } printf "%.3f %.3f\n", c, w }' >"$out"
}

# kai_round BIN TREE SUFFIX: one propose + approve + rollback of BIN on TREE,
# timed as propose$SUFFIX, approve$SUFFIX, rollback$SUFFIX.
kai_round() {
  local bin=$1 tree=$2 sfx=$3 id
  time_cmd "propose$sfx" "$tree" "${home_ns[@]}" "$bin" --json propose --patch "$work/change.patch" --why bench
  id=$(jq -r '.id' "$work/propose$sfx.out")
  typed_answer y
  time_cmd "approve$sfx" "$tree" "${home_ns[@]}" script -qec "$bin approve $id" /dev/null <"$typed"
  end_typed_answer
  # The trees must agree, or the comparison means nothing.
  if ! diff -r -q -x .git -x .kaicoder -x KAI-CODER-CHANGELOG.md -x kaicoder.toml -x .gitignore -x '*.bak-kaicoder-*' "$work/want" "$tree" >/dev/null; then
    echo "changeset-cli: kaicoder's tree differs from git apply's" >&2
    diff -r -q -x .git -x .kaicoder -x KAI-CODER-CHANGELOG.md -x kaicoder.toml -x .gitignore -x '*.bak-kaicoder-*' "$work/want" "$tree" | head >&2
    exit 1
  fi
  sync
  typed_answer y
  time_cmd "rollback$sfx" "$tree" "${home_ns[@]}" script -qec "$bin rollback last" /dev/null <"$typed"
  end_typed_answer
  # The backups leave the tree by rename, which frees no inode (above).
  mkdir -p "$work/held"
  find "$tree" -name '*.bak-kaicoder-*' -exec mv --backup=numbered -t "$work/held" {} +
  if ! diff -r -q -x .git -x .kaicoder -x KAI-CODER-CHANGELOG.md -x kaicoder.toml -x .gitignore "$work/base" "$tree" >/dev/null; then
    echo "changeset-cli: rollback did not restore the tree" >&2
    diff -r -q -x .git -x .kaicoder -x KAI-CODER-CHANGELOG.md -x kaicoder.toml -x .gitignore "$work/base" "$tree" | head >&2
    exit 1
  fi
}

rm -f "$work"/*.times
hows=(git kai)
if [[ -n $old_kai ]]; then hows+=(old); fi
for ((r = 0; r < runs; r++)); do
  for how in "${hows[@]}"; do
    sync
    case $how in
      git)
        # A fresh copy of the tree for each apply, kept to the end (above).
        cp -a "$work/base" "$work/g$r.1" && cp -a "$work/base" "$work/g$r.2" && sync
        time_cmd git "$work/g$r.1" git apply "$work/change.patch"
        time_cmd gitsync "$work/g$r.2" sh -c "git apply '$work/change.patch' && sync"
        sync
        time_cmd gitR "$work/g$r.1" git apply -R "$work/change.patch"
        sync
        time_cmd gitRsync "$work/g$r.2" sh -c "git apply -R '$work/change.patch' && sync"
        ;;
      kai)
        kai_round "$kai" "$work/t" ""
        ;;
      old)
        kai_round "$old_kai" "$work/t_old" _old
        ;;
    esac
  done
done
sum_runs propose approve
if [[ -n $old_kai ]]; then sum_runs propose_old approve_old; fi

echo "# a $patch_files-file, $patch_kb KiB patch: kaicoder propose --patch + approve (CLI, at a pseudo-terminal) vs git apply"
echo "# $(nproc) cores, $(uname -sr); $(git --version); file system: $(stat -f -c %T "$work");" \
  "build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $runs runs, medians"
echo
fmt='| %-34s | %6s | %6s | %-9s | %-15s |\n'
# shellcheck disable=SC2059
printf "$fmt" measurement "cpu s" "wall s" "cpu / git" "wall / git+sync"
echo '|------------------------------------|--------|--------|-----------|-----------------|'
row() { # LABEL NAME CPU_BASE WALL_BASE
  local c w
  c=$(median 1 "$2") w=$(median 2 "$2")
  # shellcheck disable=SC2059
  printf "$fmt" "$1" "$c" "$w" "$(ratio "$c" "$3")" "$(ratio "$w" "$4")"
}
gc=$(median 1 git) sw=$(median 2 gitsync) gRc=$(median 1 gitR) sRw=$(median 2 gitRsync)
row "git apply" git "$gc" "$sw"
row "git apply && sync" gitsync "$gc" "$sw"
row "kaicoder propose --patch" propose "$gc" "$sw"
row "kaicoder approve (applies)" approve "$gc" "$sw"
row "kaicoder propose + approve" propose+all "$gc" "$sw"
row "git apply -R" gitR "$gRc" "$sRw"
row "git apply -R && sync" gitRsync "$gRc" "$sRw"
row "kaicoder rollback" rollback "$gRc" "$sRw"
if [[ -n $old_kai ]]; then
  row "OLD propose --patch" propose_old "$gc" "$sw"
  row "OLD approve (applies)" approve_old "$gc" "$sw"
  row "OLD propose + approve" propose_old+all "$gc" "$sw"
  row "OLD rollback" rollback_old "$gRc" "$sRw"
fi
