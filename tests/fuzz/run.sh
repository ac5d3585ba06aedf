#!/usr/bin/env bash
# Build the shell classifier fuzz target (libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer) straight from the lib/ sources it needs, and
# run it for a bounded time.
#
#   tests/fuzz/run.sh [SECONDS]      default 60
#
# FUZZ_OUT (default <repo>/build-fuzz) holds the binary and the corpus, which
# grows from run to run; crash inputs are written there too. FUZZ_FLAGS adds
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

mkdir -p "$out/corpus" "$out/artifacts"

# Seed corpus: one file per line of seeds.txt (commands worth starting from).
n=0
while IFS= read -r line || [ -n "$line" ]; do
  n=$((n + 1))
  printf '%s' "$line" >"$out/corpus/seed-$n"
done <"$here/seeds.txt"

sources=(lib/shell.cpp lib/shell_parse.cpp lib/shell_classify.cpp)
binary="$out/fuzz_shell"
needs_build=0
[ -x "$binary" ] || needs_build=1
for f in "${sources[@]}" lib/shell.hpp lib/shell_parse.hpp lib/shell_classify.hpp lib/result.hpp tests/fuzz/fuzz_shell.cpp; do
  [ "$root/$f" -nt "$binary" ] && needs_build=1
done
if [ "$needs_build" -eq 1 ]; then
  echo "fuzz: building $binary" >&2
  clang++ -std=c++20 -O1 -g -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$root" "$here/fuzz_shell.cpp" "${sources[@]/#/$root/}" -o "$binary"
fi

echo "fuzz: running for ${seconds}s" >&2
# shellcheck disable=SC2086 # FUZZ_FLAGS is a list of options
exec "$binary" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -dict="$here/shell.dict" -artifact_prefix="$out/artifacts/" -print_final_stats=1 \
  ${FUZZ_FLAGS:-} "$out/corpus"
