#!/usr/bin/env bash
# Build the fuzz targets (libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer) straight from the lib/ sources each needs, and
# run them for a bounded time: the shell classifier (fuzz_shell.cpp) and the
# patch parsers and applier (fuzz_patch.cpp).
#
#   tests/fuzz/run.sh [SECONDS]      default 60, shared by the targets
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

mkdir -p "$out/artifacts"

# Each target: its lib/ sources, its dictionary, its largest input, and
# where its seeds come from. FUZZ_TARGETS picks some ("shell patch" is all);
# each runs for its share of SECONDS.
targets=(${FUZZ_TARGETS:-shell patch})
share=$(( seconds / ${#targets[@]} ))
[ "$share" -gt 0 ] || share=1
status=0
for target in "${targets[@]}"; do
  case "$target" in
    shell)
      sources=(lib/shell.cpp lib/shell_parse.cpp lib/shell_classify.cpp)
      headers=(lib/shell.hpp lib/shell_parse.hpp lib/shell_classify.hpp)
      libs=() max_len=4096 corpus="$out/corpus"
      mkdir -p "$corpus"
      # Seed corpus: one file per line of seeds.txt (commands worth starting from).
      n=0
      while IFS= read -r line || [ -n "$line" ]; do
        n=$((n + 1))
        printf '%s' "$line" >"$corpus/seed-$n"
      done <"$here/seeds.txt"
      ;;
    patch)
      sources=(lib/patch.cpp lib/patch_unified.cpp lib/patch_envelope.cpp lib/util/text.cpp)
      headers=(lib/patch.hpp lib/patch_unified.hpp lib/patch_envelope.hpp lib/util/text.hpp)
      libs=(-lfmt) max_len=16384 corpus="$out/corpus-patch"
      mkdir -p "$corpus"
      cp "$here"/patch-seeds/* "$corpus/"
      ;;
    *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
  esac

  binary="$out/fuzz_$target"
  needs_build=0
  [ -x "$binary" ] || needs_build=1
  for f in "${sources[@]}" "${headers[@]}" lib/result.hpp "tests/fuzz/fuzz_$target.cpp"; do
    [ "$root/$f" -nt "$binary" ] && needs_build=1
  done
  if [ "$needs_build" -eq 1 ]; then
    echo "fuzz: building $binary" >&2
    clang++ -std=c++20 -O1 -g -fno-omit-frame-pointer \
      -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
      -I"$root" "$here/fuzz_$target.cpp" "${sources[@]/#/$root/}" "${libs[@]}" -o "$binary"
  fi

  echo "fuzz: running $target for ${share}s" >&2
  # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of options
  "$binary" \
    -max_total_time="$share" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
    -dict="$here/$target.dict" -artifact_prefix="$out/artifacts/" -print_final_stats=1 \
    ${FUZZ_FLAGS:-} "$corpus" || status=1
done
exit "$status"
