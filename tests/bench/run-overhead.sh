#!/bin/sh
# The overhead of a command run (sandbox set-up plus the two snapshots)
# against `git status`, on a tree of 20,000 files:
#   tests/bench/run-overhead.sh [path/to/kaicoder] [files]
# Prints the median wall time of each over 5 tries and the ratio
# (overhead of `kaicoder run -- true` over the same run with
# sandbox = "none" and no snapshots, divided by `git status`).
set -eu
KAI=${1:-build/kaicoder}
FILES=${2:-20000}
KAI=$(cd "$(dirname "$KAI")" && pwd)/$(basename "$KAI")
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cd "$DIR"
git init -q
python3 - "$FILES" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = f"src/d{i // 100}"
    os.makedirs(d, exist_ok=True)
    open(f"{d}/f{i % 100}.c", "w").write(f"int f{i}(void) {{ return {i}; }}\n")
PY
git add -A
git -c user.name=bench -c user.email=bench@example.com commit -qm tree
"$KAI" init >/dev/null
printf '\n[[policy.rule]]\naction = "run"\ncommand = "true"\ndecision = "allow"\n' >>kaicoder.toml
git status >/dev/null

median() {  # command... : median wall seconds of 5 tries
  for _ in 1 2 3 4 5; do
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    echo "$e - $s" | bc
  done | sort -n | sed -n 3p
}

status=$(median git status)
full=$(median "$KAI" run --why bench -- true)
sed -i 's/^sandbox = "full"/sandbox = "none"/; s/^snapshots_keep = 50/snapshots_keep = 0/' kaicoder.toml
bare=$(median "$KAI" run --why bench -- true)
overhead=$(echo "$full - $bare" | bc)
echo "files:                      $FILES"
echo "git status:                 $status s"
echo "kaicoder run (full):        $full s"
echo "kaicoder run (none, bare):  $bare s"
echo "overhead of a run:          $overhead s"
echo "ratio to git status:        $(echo "scale=2; $overhead / $status" | bc)"
