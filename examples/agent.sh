#!/usr/bin/env bash
# examples/agent.sh — plays the agent's part against kaicoder, end to end.
#
# An agent harness gives its model tools (read_file, propose_edit,
# write_file, run_command) and maps each one to one kaicoder call with
# --json; the write tools add --wait, so the call returns only once a person
# has decided. This script makes the calls a model would make and shows how
# each exit code is handled. It needs bash, sed and grep, nothing else.
#
#   cd your-tree && kaicoder init            # the owner, at a terminal
#   printf 'greeting = hello\n' > greeting.txt
#   examples/agent.sh greeting.txt            # then, in another terminal:
#   kaicoder list; kaicoder approve 1; ...    # decide each proposal
#
# Environment: KAICODER (the binary; default kaicoder on PATH),
# KAICODER_AGENT (recorded as the proposer; default example-agent).
# Run it without a controlling terminal (setsid) and it cannot approve
# anything itself even by mistake: approve, reject and rollback read the
# answer from /dev/tty.

set -u
KAI=${KAICODER:-kaicoder}
export KAICODER_AGENT=${KAICODER_AGENT:-example-agent}
FILE=${1:-greeting.txt}

say() { printf 'agent: %s\n' "$*"; }

# A JSON string literal for arbitrary text: backslash, quote and every
# control character escaped (the model's text may hold any of them; a raw one
# would break the request or, echoed later, a terminal). Requests are built
# here and nowhere else: model output is never pasted into a shell string.
json_string() {
  local s=$1 out='' c i code
  local LC_ALL=C  # byte by byte: UTF-8 passes through unchanged
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      '"') out+='\"' ;;
      \\) out+='\\' ;;
      *)
        printf -v code '%d' "'$c"
        if ((code >= 0 && code < 32)) || ((code == 127)); then
          printf -v c '\\u%04x' "$code"
        fi
        out+=$c ;;
    esac
  done
  printf '"%s"' "$out"
}

# The first string or number field called $1 in kaicoder's JSON (it prints
# one "key": value pair per line), without the quotes. Good enough for ids,
# statuses, rollback ids and messages; a real harness uses a JSON parser.
field() {
  sed -n -e "s/^ *\"$1\": \"\(.*\)\",\{0,1\}\$/\1/p" -e "s/^ *\"$1\": \([^\"{[][^,]*\),\{0,1\}\$/\1/p" | head -n 1
}

# What to tell the model for a write tool's exit code. Returns 0 when the
# change landed, 1 when the model should think again, 2 when it must stop.
handle() {
  local rc=$1 out=$2
  case $rc in
    0) say "applied: rollback id $(field rollback_id <<<"$out"), backup $(field backup <<<"$out")"
       return 0 ;;
    4) say "rejected by a person: $(field reason <<<"$out") -- not proposing it again"
       return 1 ;;
    5) say "nobody decided before the timeout -- asking the person before trying again"
       return 1 ;;
    6) say "conflict: the file changed or the target is gone -- reading it again"
       return 1 ;;
    3) say "denied by a guardrail or the policy: $(field message <<<"$out") -- not retrying"
       return 2 ;;
    2) say "malformed request: $(field message <<<"$out")"
       return 2 ;;
    *) say "kaicoder failed (exit $rc): $(field message <<<"$out")"
       return 2 ;;
  esac
}

# read_file(path): confined, secrets refused, output redacted.
read_file() {
  "$KAI" --json read "$1"
}

# propose_edit / write_file / delete_file: one request object on stdin.
propose() {
  "$KAI" --json propose --json-input --wait <<<"$1"
}

# 1. Read the file. A read needs no approval.
out=$(read_file "$FILE"); rc=$?
if [ "$rc" -ne 0 ]; then
  say "cannot read $FILE (exit $rc): $(field message <<<"$out")"
  exit "$rc"
fi
if ! grep -q 'hello' <<<"$out"; then
  say "$FILE does not say hello; nothing to do"
  exit 0
fi
say "read $FILE"

# 2. Propose a surgical edit and wait for the decision in the background, as
# a harness does while it keeps the conversation going. If the file changed
# meanwhile (exit 6), read it again and propose once more.
for attempt in 1 2; do
  req="{\"path\": $(json_string "$FILE"), \"target\": \"hello\", \"replacement\": \"hello, world\","
  req+=" \"why\": $(json_string "greet the whole world (attempt $attempt)")}"
  tmp=$(mktemp)
  propose "$req" >"$tmp" &
  waiter=$!
  say "proposed an edit of $FILE; waiting for a person (kaicoder list, kaicoder approve ID)"
  wait "$waiter"; rc=$?
  out=$(cat "$tmp"); rm -f "$tmp"
  handle "$rc" "$out"; verdict=$?
  [ "$rc" -eq 6 ] && [ "$attempt" -eq 1 ] && { read_file "$FILE" >/dev/null; continue; }
  break
done
[ "$verdict" -eq 2 ] && exit "$rc"

# 3. Write a whole new file.
content=$'# Notes\n\nThe greeting now reaches the whole world.\n'
out=$(propose "{\"path\": \"NOTES.md\", \"content\": $(json_string "$content"), \"why\": \"record what changed\"}")
rc=$?
handle "$rc" "$out"
[ $? -eq 2 ] && exit "$rc"

# 4. Run a command. Once it has run, the exit status is the command's own
# and the JSON says "ran": true with its output.
out=$("$KAI" --json run --wait --why "show the greeting" -- cat "$FILE"); rc=$?
if grep -q '"ran": true' <<<"$out"; then
  say "the command ran and exited $rc; it printed: $(field stdout <<<"$out")"
else
  handle "$rc" "$out"
  [ $? -eq 2 ] && exit "$rc"
fi
say "done"
