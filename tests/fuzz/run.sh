#!/usr/bin/env bash
# Build the fuzz targets (libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer) with CMake's KAICODER_FUZZ option, which links
# each to the code it exercises (tests/fuzz/CMakeLists.txt), and run them for
# a bounded time, shared between them: fuzz_shell (the shell
# tokenizer and classifier), fuzz_deps (the import scanners), fuzz_patch
# (the patch parsers and applier) and fuzz_mcp_session (whole MCP sessions:
# lines of any kind, in any order, through the dispatcher and the server).
#
#   tests/fuzz/run.sh [SECONDS]      default 60, shared by the targets
#   tests/fuzz/run.sh --build        only build them (scripts/test.sh does
#                                    this while the other tests run, when
#                                    FUZZ_SECONDS asks it to fuzz)
#   FUZZ_TARGETS="shell deps patch mcp_session"  which targets (default all)
#
# FUZZ_OUT (default <repo>/build-fuzz) holds the binaries and the corpora,
# which grow from run to run; crash inputs are written there too. FUZZ_FLAGS adds
# libFuzzer options (say "-len_control=0" to try long inputs at once). Exits
# non-zero when the fuzzer finds a crash, a leak, a timeout or a broken
# invariant.
set -euo pipefail

seconds="${1:-60}"
build_only=0
if [ "$seconds" = "--build" ]; then
  build_only=1
  seconds=0
fi
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

# A clang build of the fuzz targets only, in $out; ninja and ccache when
# they are there, so that a second run rebuilds only what changed. A unity
# build, as scripts/test.sh's: it builds from scratch in CI (scripts/fuzz.sh).
configure() {
  local gen=() launcher=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  if [ -f "$out/CMakeCache.txt" ] && ! grep -q '^KAICODER_FUZZ:BOOL=ON$' "$out/CMakeCache.txt"; then
    rm -f "$out/CMakeCache.txt"
  fi
  cmake -S "$root" -B "$out" "${gen[@]}" "${launcher[@]}" -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DKAICODER_FUZZ=ON \
    -DKAICODER_TESTS=OFF -DKAICODER_PCH=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
}

# fuzz TARGET SECONDS CORPUS DICT: build and run one target.
fuzz() {
  local target=$1 secs=$2 corpus=$3 dict=$4
  mkdir -p "$corpus"
  echo "fuzz: building $out/$target" >&2
  # A target that does not build is a failure, shown with its errors.
  if ! cmake --build "$out" --target "$target" >"$out/build-$target.log" 2>&1; then
    cat "$out/build-$target.log" >&2
    echo "fuzz: $target does not build" >&2
    return 1
  fi
  echo "fuzz: running $target for ${secs}s" >&2
  local dict_opt=()
  [ -n "$dict" ] && dict_opt=(-dict="$dict")
  # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of options
  "$out/$target" \
    -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    "${dict_opt[@]}" -artifact_prefix="$out/artifacts/$target-" -print_final_stats=1 \
    ${FUZZ_FLAGS:-} "$corpus"
}

# seed CORPUS FILE: one seed per line of FILE.
seed_lines() {
  local corpus=$1 n=0 line
  mkdir -p "$corpus"
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    printf '%s' "$line" >"$corpus/seed-$n"
  done <"$2"
}

configure
read -r -a targets <<<"${FUZZ_TARGETS:-shell deps patch mcp_session}"
if [ "$build_only" = 1 ]; then
  # shellcheck disable=SC2046 # one word per target
  exec cmake --build "$out" --target $(printf 'fuzz_%s ' "${targets[@]}")
fi
share=$((seconds / ${#targets[@]}))
[ "$share" -gt 0 ] || share=1
status=0
for target in "${targets[@]}"; do
  case "$target" in
    shell)
      seed_lines "$out/corpus" "$here/seeds.txt"
      fuzz fuzz_shell "$share" "$out/corpus" "$here/shell.dict" || status=1 ;;
    deps)
      seed_lines "$out/corpus-deps" "$here/deps_seeds.txt"
      fuzz fuzz_deps "$share" "$out/corpus-deps" "" || status=1 ;;
    patch)
      mkdir -p "$out/corpus-patch"
      cp "$here"/patch-seeds/* "$out/corpus-patch/"
      fuzz fuzz_patch "$share" "$out/corpus-patch" "$here/patch.dict" || status=1 ;;
    mcp_session)
      mkdir -p "$out/corpus-mcp"
      cp "$here"/mcp-seeds/* "$out/corpus-mcp/"
      fuzz fuzz_mcp_session "$share" "$out/corpus-mcp" "$here/mcp.dict" || status=1 ;;
    *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
  esac
done
exit "$status"
