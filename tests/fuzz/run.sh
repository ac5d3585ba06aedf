#!/usr/bin/env bash
# Build the fuzz targets (libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer) straight from the lib/ sources they need, and
# run them for a bounded time, split between them: fuzz_shell (the shell
# tokenizer and classifier) and fuzz_deps (the import scanners).
#
#   tests/fuzz/run.sh [SECONDS]      default 60, in all
#
# FUZZ_OUT (default <repo>/build-fuzz) holds the binaries and the corpora,
# which grow from run to run; crash inputs are written there too. FUZZ_FLAGS adds
# libFuzzer options (say "-len_control=0" to try long inputs at once). Exits
# non-zero when the fuzzer finds a crash, a leak, a timeout or a broken
# invariant.
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in
  '' | *[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${FUZZ_OUT:-$root/build-fuzz}"

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found, installing clang" >&2
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq && apt-get install -y -qq clang >/dev/null
  else
    sudo apt-get update -qq && sudo apt-get install -y -qq clang >/dev/null
  fi
fi

# fuzz TARGET SECONDS CORPUS SEEDS DICT SOURCE... : build (when a source is
# newer than the binary) and run one target; each line of SEEDS is a seed.
fuzz() {
  local target=$1 secs=$2 corpus=$3 seeds=$4 dict=$5
  shift 5
  local sources=("$@") binary="$out/$target" n=0 needs_build=0 f
  mkdir -p "$corpus" "$out/artifacts"
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    printf '%s' "$line" >"$corpus/seed-$n"
  done <"$seeds"
  [ -x "$binary" ] || needs_build=1
  for f in "${sources[@]}" "${sources[@]/%.cpp/.hpp}" lib/result.hpp "tests/fuzz/$target.cpp"; do
    [ -e "$root/$f" ] && [ "$root/$f" -nt "$binary" ] && needs_build=1
  done
  if [ "$needs_build" -eq 1 ]; then
    echo "fuzz: building $binary" >&2
    clang++ -std=c++20 -O1 -g -fno-omit-frame-pointer \
      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I"$root" "$here/$target.cpp" "${sources[@]/#/$root/}" -o "$binary"
  fi
  echo "fuzz: running $target for ${secs}s" >&2
  local dict_opt=()
  [ -n "$dict" ] && dict_opt=(-dict="$dict")
  # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of options
  "$binary" \
    -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    "${dict_opt[@]}" -artifact_prefix="$out/artifacts/$target-" -print_final_stats=1 \
    ${FUZZ_FLAGS:-} "$corpus"
}

# Half the time each (the shell target gets the odd second); a target with
# no time left is skipped.
deps_seconds=$((seconds / 2))
shell_seconds=$((seconds - deps_seconds))
if [ "$shell_seconds" -gt 0 ]; then
  fuzz fuzz_shell "$shell_seconds" "$out/corpus" "$here/seeds.txt" "$here/shell.dict" \
    lib/shell.cpp lib/shell_parse.cpp lib/shell_classify.cpp
fi
if [ "$deps_seconds" -gt 0 ]; then
  fuzz fuzz_deps "$deps_seconds" "$out/corpus-deps" "$here/deps_seeds.txt" "" lib/deps.cpp
fi
