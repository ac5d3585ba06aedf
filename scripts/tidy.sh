#!/usr/bin/env bash
# Runs clang-tidy with the committed .clang-tidy over every lib/**/*.cpp
# (STYLE.md §3) and fails on any finding. Installs clang-tidy first when it
# is missing.
#
#   scripts/tidy.sh                        all of lib/
#   scripts/tidy.sh lib/gate/propose.cpp lib/mcp/   just these files or folders
#   TIDY_JOBS=N                            clang-tidy processes (default 2)
#
# A pass over lib/ costs about 8 CPU-minutes, so it runs niced. The
# compilation database is a folder of its own, build-tidy/, configured once
# and reused: only CMake's configure step runs (the generated sources appear
# then), nothing is built, and a build folder of yours keeps its settings.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scripts/deps.sh --tidy

dir=build-tidy
jobs=${TIDY_JOBS:-2}
flags=(-DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=Debug -DKAICODER_TESTS=OFF
       # clang-tidy parses with clang, which refuses GCC's precompiled headers.
       -DKAICODER_PCH=OFF)
# A folder configured earlier is reused as it is, generator and all; running
# the configure step again picks up source files added since.
[ -f "$dir/CMakeCache.txt" ] || ! command -v ninja >/dev/null || flags+=(-G Ninja)
cmake -S . -B "$dir" "${flags[@]}" >/dev/null

# The files: the arguments (files or folders under lib/), or all of lib/.
files=()
while IFS= read -r -d '' f; do files+=("$root/$f"); done < <(
  find "${@:-lib}" -name '*.cpp' -print0 | sort -z)
if [ ${#files[@]} -eq 0 ]; then
  echo "tidy: no .cpp file in: ${*:-lib}" >&2
  exit 2
fi
# A file missing from the database would be skipped by run-clang-tidy (and
# guessed at by clang-tidy): every one must be in a target's source list.
missing=$(python3 - "$dir/compile_commands.json" "${files[@]}" <<'EOF'
import json, os, sys
known = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[1]))}
print("\n".join(os.path.relpath(f) for f in sys.argv[2:] if os.path.realpath(f) not in known))
EOF
)
if [ -n "$missing" ]; then
  printf 'tidy: not in any target of CMakeLists.txt:\n%s\n' "$missing" >&2
  exit 2
fi

echo "== clang-tidy over ${#files[@]} file(s) (-j$jobs)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
if command -v run-clang-tidy >/dev/null; then
  # Each argument is a regex on the database's paths: match these exactly.
  regexes=()
  for f in "${files[@]}"; do regexes+=("^$(printf '%s' "$f" | sed 's/[][\.*^$+?(){}|]/\\&/g')\$"); done
  # It colours clang-tidy's output whatever the terminal; the colours go.
  nice -n 10 run-clang-tidy -quiet -p "$dir" -j "$jobs" "${regexes[@]}" 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' >"$log" || status=$?
else
  printf '%s\0' "${files[@]}" |
    nice -n 10 xargs -0 -n 1 -P "$jobs" clang-tidy --quiet -p "$dir" >"$log" 2>&1 || status=$?
fi

# A finding names its check in brackets; a header's finding shows once per
# file that includes it, so each is counted once.
findings=$(grep -E '^[^ ].*:[0-9]+:[0-9]+: (warning|error): .*\[[a-z0-9.,-]+\]$' "$log" | sort -u || true)
if [ -n "$findings" ]; then
  # The findings with their context, each header finding once.
  grep -v -E '^(clang-tidy[-0-9]* .*|[0-9]+ warnings? (and [0-9]+ errors? )?generated\.)$' "$log" |
    awk '/^[^ ].*:[0-9]+:[0-9]+: (warning|error): / { keep = !seen[$0]++ } keep' || true
  echo "tidy: $(printf '%s\n' "$findings" | wc -l) finding(s)" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  cat "$log" >&2
  echo "tidy: clang-tidy failed (exit $status)" >&2
  exit 1
fi
echo "tidy: no findings"
