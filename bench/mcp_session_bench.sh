#!/usr/bin/env bash
# One MCP session of many `write_file` calls, as an agent makes them
# (issue 29: "10,000 MCP write_file calls in one session: flat per call").
#
# `kaicoder mcp --agent bench` is started once in a fresh root whose
# `[limits] pending` is raised above CALLS (set in kaicoder.toml and trusted
# again at a terminal, as a person would), and a client written in Python
# speaks JSON-RPC to it on its stdin and stdout: initialize, then CALLS
# `tools/call write_file` requests, each answered before the next is sent,
# each staging a new file (so every call adds one pending proposal: the
# live index grows by one each time). The server's own CPU time (user +
# system, from /proc, its children included) and the client's wall time are
# taken every BLOCK calls.
#
# The figure: the CPU per call of the last BLOCK calls against the first
# BLOCK (the goal: within 1.2x), and the table of every block.
#
#   bench/mcp_session_bench.sh [BUILD_DIR]      default BUILD_DIR: ./build
#
# CALLS (default 10000) and BLOCK (default 1000) set the sizes. Needs root
# or unprivileged user namespaces (the server runs over a scratch home).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(realpath -m "${1:-./build}")
calls=${CALLS:-10000}
block=${BLOCK:-1000}
if [[ -z ${WORK_DIR:-} && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
[[ -n ${WORK_DIR:-} ]] && export TMPDIR=$WORK_DIR

# shellcheck source=bench/common.sh
source "$root/bench/common.sh"
bench_setup mcp-session-bench "$build" kaicoder git script unshare python3
kai=$build/kaicoder
bench_private_home

repo=$work/repo
mkdir -p "$repo"
printf 'hello\n' >"$repo/a.txt"
(cd "$repo" && git_ init -q && git_ add -A && git_ commit -q -m seed)
(cd "$repo" && printf 'y\n' | in_home script -qec "$kai init" /dev/null >/dev/null)
# Room for every call's proposal: the per-agent limit above CALLS, trusted
# again at a terminal.
sed -i "s/^pending = 100\$/pending = $((calls + 10))/" "$repo/kaicoder.toml"
grep -q "^pending = $((calls + 10))\$" "$repo/kaicoder.toml" ||
  { echo "mcp-session-bench: cannot raise [limits] pending in kaicoder.toml" >&2; exit 1; }
(cd "$repo" && printf 'y\n' | in_home script -qec "$kai trust" /dev/null >/dev/null)
(cd "$repo" && git_ add -A && git_ commit -q -m init)

cat >"$work/client.py" <<'PY'
import json, os, subprocess, sys, time

calls, block = int(sys.argv[1]), int(sys.argv[2])
cmd = sys.argv[3:]
server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
tick = os.sysconf("SC_CLK_TCK")

def cpu():
    # utime stime cutime cstime of the server (the exec chain keeps its pid)
    with open(f"/proc/{server.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / tick

def call(n, method, params, notify=False):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        msg["id"] = n
    server.stdin.write((json.dumps(msg) + "\n").encode())
    if notify:
        return None
    line = server.stdout.readline()
    if not line:
        sys.exit("the server ended")
    reply = json.loads(line)
    if "error" in reply or reply.get("result", {}).get("isError"):
        sys.exit(f"call {n} failed: {line[:400]!r}")
    return reply

call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}})
call(0, "notifications/initialized", {}, notify=True)
rows = []
c0, w0 = cpu(), time.monotonic()
for i in range(1, calls + 1):
    call(i, "tools/call", {"name": "write_file", "arguments": {
        "path": f"new/f{i}.txt", "content": f"line {i}\n", "why": "bench"}})
    if i % block == 0:
        c1, w1 = cpu(), time.monotonic()
        rows.append((i, (c1 - c0) / block * 1000, (w1 - w0) / block * 1000))
        c0, w0 = c1, w1
server.stdin.close()
server.wait()
print("| calls | server CPU ms per call | wall ms per call |")
print("|---|---|---|")
for i, c, w in rows:
    print(f"| {i - block + 1}-{i} | {c:.2f} | {w:.2f} |")
first, last = rows[0][1], rows[-1][1]
print()
print(f"last {block} against the first {block}, CPU per call: {last / first:.2f}x"
      f" (wall: {rows[-1][2] / rows[0][2]:.2f}x)")
PY

echo "# one MCP session, $calls write_file calls; $(nproc) cores, $(uname -sr);" \
  "build: ${build_type:-unknown}; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
(cd "$repo" && in_home python3 "$work/client.py" "$calls" "$block" "$kai" mcp --agent bench)
pending=$(cd "$repo" && in_home "$kai" --json list --status pending | python3 -c \
  'import json,sys; print(len(json.load(sys.stdin)["proposals"]))')
echo "pending proposals at the end: $pending"
