#!/usr/bin/env bash
# Builds kaicoder and walks through its main job in a throwaway git
# repository: an agent proposes a change, a person approves it, kaicoder backs
# up, applies and logs it, and then rolls it back.
#
# On a terminal you answer the approval prompts yourself; without one (say,
# in a pipe) the answers are typed for you through a pseudo-terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DKAICODER_TESTS=OFF >/dev/null
cmake --build build-release -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
kai="$PWD/build-release/kaicoder"

repo=$(mktemp -d "${TMPDIR:-/tmp}/kaicoder-demo.XXXXXX")
cd "$repo"
git init -q
git config user.email demo@example.invalid
git config user.name demo
cat > greet.py <<'PY'
def greet(name):
    print("Hello, " + name)

greet(None)
PY
git add greet.py && git commit -qm "a small program with a bug"

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

# decide ANSWER ARGS...: a person answers at the terminal; without one, a
# pseudo-terminal types ANSWER.
decide() {
  local answer=$1
  shift
  if [ -t 0 ] && [ -t 1 ]; then
    "$kai" "$@"
  else
    printf '%s\n' "$answer" | script -qec "$(printf '%q ' "$kai" "$@")" /dev/null | tr -d '\r'
  fi
}

step "the owner makes the repository a trusted root, at the terminal" "kaicoder init"
decide y init

step "the agent proposes a fix (nothing in the tree changes yet)" \
     "kaicoder propose --path greet.py --target 'greet(None)' --replacement 'greet(\"world\")' --why …"
"$kai" propose --agent demo-agent --path greet.py --target 'greet(None)' --replacement 'greet("world")' \
  --why "greet(None) raises TypeError; call it with a real name"

step "what is waiting for a decision" "kaicoder list"
"$kai" list

step "a person reviews and approves it: backup, atomic apply, changelog entry" "kaicoder approve 1"
decide y approve 1

step "the file now" "cat greet.py"
cat greet.py
ls greet.py.bak-kaicoder-* >/dev/null && echo "(backup beside it: $(ls greet.py.bak-kaicoder-*))"

step "the changelog" "kaicoder log --full"
"$kai" log --full

step "undo it with one command" "kaicoder rollback last"
decide y rollback last

step "the file is back as it was" "cat greet.py"
cat greet.py

step "and the rollback is logged too (it can itself be rolled back)" "kaicoder log"
"$kai" log

step "the agent runs a command that changes files; a person must type CONFIRM" \
     "kaicoder run --why … --shell \"sed -i 's/Hello, /Hi, /' greet.py && echo … > NOTES.md\""
"$kai" run --agent demo-agent --why "shorter greeting, and a note for the next person" \
  --shell "sed -i 's/Hello, /Hi, /' greet.py && echo 'greet() needs a name' > NOTES.md"
decide CONFIRM approve 2

step "what the command did" "cat greet.py NOTES.md"
cat greet.py NOTES.md

step "undo the command too: kaicoder snapshotted the tree before it ran" "kaicoder rollback last"
decide y rollback last

step "greet.py is back, and the file the command created is gone" "cat greet.py; ls"
cat greet.py
ls

printf '\nThe demo repository is %s (remove it when done).\n' "$repo"
