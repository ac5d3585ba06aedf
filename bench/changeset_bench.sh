#!/usr/bin/env bash
# A 500-file patch applied through kaicoder (propose + approve + apply, via
# bench/changeset_driver.cpp) against `git apply` and `git apply && sync`
# of the same patch on the same tree, and both ratios.
#
#   bench/changeset_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# FILES sets how many files the patch changes (default 500), RUNS the
# repetitions (default 5; the run with the median wall time is shown).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
files=${FILES:-500}
runs=${RUNS:-5}

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup changeset "$build" changeset_driver git sync


# The tree, committed; the patch: a few lines of every file changed.
mkdir -p "$work/base"
"$driver" gen "$work/base" "$files"
(cd "$work/base" && git_ init -q && printf '.kaicoder/\nKAI-CODER-CHANGELOG.md\n' >.git/info/exclude &&
  git_ add -A && git_ commit -q -m base)
"$driver" edit "$work/base"
(cd "$work/base" && git_ diff >"$work/change.patch" && git_ checkout -q -- .)
patch_files=$(grep -c '^diff --git' "$work/change.patch")

# median_wall NAME: "cpu wall" of the run with the median wall time.
median_wall() { sort -n -k2,2 "$work/$1.times" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

rm -f "$work"/*.times
for ((r = 0; r < runs; r++)); do
  for how in git gitsync kai; do
    rm -rf "$work/t" "$work/owner"
    cp -a "$work/base" "$work/t"
    sync  # nothing of the copy left for the measured run to flush
    case $how in
      git) time_cmd git "$work/t" git apply "$work/change.patch" ;;
      gitsync) time_cmd gitsync "$work/t" sh -c "git apply '$work/change.patch' && sync" ;;
      kai) time_cmd kai "$work/t" "$driver" apply "$work/t" "$work/change.patch" "$work/owner" ;;
    esac
  done
  # The trees must agree, or the comparison means nothing.
  rm -rf "$work/g" && cp -a "$work/base" "$work/g" && (cd "$work/g" && git_ apply "$work/change.patch")
  diff -r -q -x .git -x .kaicoder -x KAI-CODER-CHANGELOG.md -x kaicoder.toml -x '*.bak-kaicoder-*' "$work/g" "$work/t" >/dev/null ||
    { echo "changeset: kaicoder's tree differs from git apply's" >&2; diff -r -q -x .git -x .kaicoder -x KAI-CODER-CHANGELOG.md -x kaicoder.toml -x "*.bak-kaicoder-*" "$work/g" "$work/t" | head >&2; exit 1; }
done

echo "# a $patch_files-file patch: kaicoder propose + approve + apply vs git apply (and && sync)"
echo "# $(nproc) cores, $(uname -sr); $(git --version); file system: $(stat -f -c %T "$work");" \
  "library build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
fmt='| %-36s | %7s | %8s | %-14s | %-19s |\n'
# shellcheck disable=SC2059
printf "$fmt" measurement cpu wall "wall / git" "wall / git+sync"
echo '|--------------------------------------|---------|----------|----------------|---------------------|'
read -r gcpu gwall < <(median_wall git)
read -r scpu swall < <(median_wall gitsync)
read -r kcpu kwall < <(median_wall kai)
# shellcheck disable=SC2059
printf "$fmt" "git apply" "$gcpu" "$gwall" "1.00" "$(ratio "$gwall" "$swall")"
# shellcheck disable=SC2059
printf "$fmt" "git apply && sync" "$scpu" "$swall" "$(ratio "$swall" "$gwall")" "1.00"
# shellcheck disable=SC2059
printf "$fmt" "kaicoder propose + approve + apply" "$kcpu" "$kwall" "$(ratio "$kwall" "$gwall")" "$(ratio "$kwall" "$swall")"
echo
echo "kaicoder, in-process: $(sort -n -k2,2 "$work/kai.out" | tail -n 1 | awk '{ printf "%s files, propose %s ms, approve+apply %s ms (last run)", $1, $2, $3 }')"
