// Drives `kaicoder mcp` with the official MCP TypeScript SDK client over
// stdio, one scenario per run:
//
//   node client.mjs SCENARIO KAICODER_BINARY     (cwd: a trusted root)
//
// Run by tests/e2e/test_mcp.cpp, which owns the temporary repository and the
// pseudo-terminal where a person approves or rejects. Lines on stdout are
// the conversation with it: "APPROVE N" / "REJECT N" ask it to decide
// proposal N at the terminal (in the team scenario: from the person's own
// clone), "DISCONNECTED N" says the client went away
// while waiting for N, "PASS" ends a scenario that held. Any failed check
// prints "FAIL: …" and exits 1.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";

const [scenario, kaicoder] = process.argv.slice(2);
const say = (line) => process.stdout.write(line + "\n");

async function connect() {
  const transport = new StdioClientTransport({ command: kaicoder, args: ["mcp"], env: process.env, stderr: "inherit" });
  const client = new Client({ name: "sdk-e2e", version: "1.0.0" });
  const errors = [];
  client.onerror = (e) => errors.push(e);  // a line on stdout that is not a protocol message lands here
  await client.connect(transport);
  await client.listTools();  // the SDK caches each tool's outputSchema and checks every result against it
  return { client, transport, errors };
}

const body = (result) => {
  const text = JSON.parse(result.content[0].text);
  assert.deepEqual(result.structuredContent, text);
  return text;
};

async function propose(client, path, content) {
  const r = await client.callTool({ name: "write_file", arguments: { path, content, why: "e2e" } });
  assert.equal(r.isError, false, JSON.stringify(r));
  const id = body(r).proposal.id;
  assert.equal(typeof id, "number");
  assert.equal(body(r).proposal.status, "pending");
  return id;
}

// wait_for_decision with a progress token; the notifications it got.
async function waitFor(client, id, timeout_s, options = {}) {
  const progress = [];
  const result = await client.callTool({ name: "wait_for_decision", arguments: { id, timeout_s } }, undefined, {
    onprogress: (p) => {
      progress.push(p);
      options.onprogress?.(p);
    },
    timeout: (timeout_s + 30) * 1000,
    signal: options.signal,
  });
  return { result, progress };
}

async function expectRpcError(promise, code, words) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof McpError, String(e));
    assert.equal(e.code, code, e.message);
    assert.match(e.message, words);
    return;
  }
  assert.fail("expected a JSON-RPC error");
}

// The handshake as an old client makes it: 2024-11-05 has no outputSchema
// and no structuredContent. Raw JSON lines, since the SDK always asks for its newest version.
async function oldClient() {
  const child = spawn(kaicoder, ["mcp"], { stdio: ["pipe", "pipe", "inherit"] });
  let buffer = "";
  const lines = [];
  child.stdout.on("data", (d) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
  send({ jsonrpc: "2.0", id: 1, method: "initialize",
         params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "old", version: "0" } } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
  send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_proposals", arguments: {} } });
  send({ jsonrpc: "2.0", id: 4, method: "ping" });
  child.stdin.end();
  const code = await new Promise((resolve) => child.on("close", resolve));
  assert.equal(code, 0, "kaicoder mcp exits 0 at end of input");
  const byId = Object.fromEntries(lines.map((l) => [l.id, l]));
  assert.equal(lines.length, 4);
  assert.equal(byId[1].result.protocolVersion, "2024-11-05");
  for (const t of byId[2].result.tools) assert.equal(t.outputSchema, undefined, t.name);
  assert.equal(byId[3].result.structuredContent, undefined);
  assert.deepEqual(JSON.parse(byId[3].result.content[0].text).proposals, []);
  assert.deepEqual(byId[4].result, {});
}

const scenarios = {
  async handshake() {
    const { client, transport, errors } = await connect();
    assert.equal(client.getServerVersion().name, "kaicoder");
    assert.ok(client.getServerCapabilities().tools);
    assert.match(client.getInstructions(), /kaicoder approve N/);
    // The SDK parsed this list with its own schemas; check what an agent relies on.
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, ["delete_file", "list_dir", "list_proposals", "proposal_status", "propose_edit",
                             "propose_patch", "read_file", "run_command", "wait_for_decision", "write_file"]);
    for (const t of tools) {
      assert.equal(t.inputSchema.type, "object");
      assert.equal(t.outputSchema.type, "object");
      assert.equal(t.annotations.destructiveHint, !t.annotations.readOnlyHint, t.name);
    }
    assert.deepEqual(await client.ping(), {});
    const read = await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
    assert.equal(body(read).text, "hello\n");
    // An unknown tool and bad arguments are protocol errors.
    await expectRpcError(client.callTool({ name: "approve", arguments: { id: 1 } }), ErrorCode.InvalidParams, /unknown tool/);
    await expectRpcError(client.callTool({ name: "write_file", arguments: { path: "a.txt" } }), ErrorCode.InvalidParams,
                         /'content' is required/);
    // A denied path is a tool result the agent reads: isError and kaicoder's error object.
    const denied = await client.callTool({ name: "write_file", arguments: { path: ".env", content: "X=1\n", why: "e2e" } });
    assert.equal(denied.isError, true);
    assert.equal(body(denied).error.kind, "denied");
    assert.equal(body(denied).error.code, 3);
    const outside = await client.callTool({ name: "read_file", arguments: { path: "../outside.txt" } });
    assert.equal(outside.isError, true);
    assert.equal(body(outside).error.kind, "denied");
    await transport.close();
    assert.deepEqual(errors, []);
    await oldClient();
  },

  async approve() {
    const { client, transport, errors } = await connect();
    const r = await client.callTool({ name: "propose_edit",
                                      arguments: { path: "a.txt", old_text: "hello", new_text: "hello, world", why: "e2e" } });
    const id = body(r).proposal.id;
    let asked = false;
    const { result, progress } = await waitFor(client, id, 120, {
      onprogress: () => {
        if (!asked) say(`APPROVE ${id}`);  // a person approves while the client waits
        asked = true;
      },
    });
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(body(result).decided, true);
    assert.equal(body(result).proposal.status, "applied");
    assert.match(body(result).rollback_id, /^\d{8}T\d{6}Z/);
    assert.ok(progress.length >= 1);
    assert.equal(progress[0].message, `waiting for a person: kaicoder approve ${id}`);
    assert.equal(progress[0].total, 120);
    await transport.close();
    assert.deepEqual(errors, []);
  },

  async reject() {
    const { client, transport } = await connect();
    const id = await propose(client, "b.txt", "b\n");
    say(`REJECT ${id}`);
    const { result } = await waitFor(client, id, 120);
    assert.equal(result.isError, true);
    assert.equal(body(result).error.kind, "rejected");
    assert.equal(body(result).error.code, 4);
    assert.equal(body(result).proposal.status, "rejected");
    await transport.close();
  },

  async expire() {
    const { client, transport } = await connect();
    const id = await propose(client, "b.txt", "b\n");
    const { result } = await waitFor(client, id, 60);
    assert.equal(result.isError, true);
    assert.equal(body(result).error.kind, "timeout");
    assert.equal(body(result).error.code, 5);
    await transport.close();
  },

  async cancel() {
    const { client, transport } = await connect();
    const id = await propose(client, "b.txt", "b\n");
    const abort = new AbortController();
    const waiting = waitFor(client, id, 120, { signal: abort.signal, onprogress: () => abort.abort("enough") });
    await assert.rejects(waiting);
    // The server still answers, and nothing was decided.
    assert.deepEqual(await client.ping(), {});
    const status = await client.callTool({ name: "proposal_status", arguments: { id } });
    assert.equal(body(status).proposal.status, "pending");
    assert.equal(body(status).decided, false);
    const listed = await client.callTool({ name: "list_proposals", arguments: { status: "pending" } });
    assert.deepEqual(body(listed).proposals.map((p) => p.id), [id]);
    await transport.close();
  },

  // Tool calls run side by side: a read and a second proposal are answered
  // while a wait_for_decision blocks for a person.
  async parallel() {
    const { client, transport, errors } = await connect();
    const id = await propose(client, "b.txt", "b\n");
    const order = [];
    let inFlight;
    const started = new Promise((resolve) => (inFlight = resolve));
    const waiting = waitFor(client, id, 60, { onprogress: () => inFlight() }).then((w) => {
      order.push("wait");
      return w;
    });
    await started;  // the server has been waiting for a second
    const read = await client.callTool({ name: "read_file", arguments: { path: "a.txt" } });
    order.push("read");
    assert.equal(read.isError, false, JSON.stringify(read));
    assert.equal(body(read).text, "hello\n");
    const second = await propose(client, "c.txt", "c\n");
    order.push("propose");
    assert.equal(second, id + 1);
    assert.deepEqual(order, ["read", "propose"]);  // the wait is still waiting
    say(`APPROVE ${id}`);
    const { result } = await waiting;
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(body(result).proposal.status, "applied");
    assert.deepEqual(order, ["read", "propose", "wait"]);
    await transport.close();
    assert.deepEqual(errors, []);
  },

  // Team mode (kaicoder-team(7)): publish with the proposing tool, then
  // wait while a person decides from their own clone ("APPROVE N": the test
  // fetches there and approves); the wait asks the team remote and applies
  // only what they signed.
  async team() {
    const { client, transport, errors } = await connect();
    const r = await client.callTool({
      name: "propose_edit",
      arguments: { path: "a.txt", old_text: "alpha", new_text: "beta", why: "team change", publish: true },
    });
    assert.equal(r.isError, false, JSON.stringify(r));
    const id = body(r).proposal.id;
    const published = body(r).published;
    assert.equal(published.ref, `refs/kaicoder/proposals/${published.origin}/${id}`);
    assert.match(published.commit, /^[0-9a-f]{40}$/);
    let asked = false;
    const { result } = await waitFor(client, id, 120, {
      onprogress: () => {
        if (!asked) say(`APPROVE ${id}`);
        asked = true;
      },
    });
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(body(result).proposal.status, "applied");
    assert.equal(body(result).team_decision.signer, "person@example.com");
    assert.equal(body(result).team_decision.forwarded, "refs/heads/main");
    await transport.close();
    assert.deepEqual(errors, []);
  },

  async disconnect() {
    const { client, transport } = await connect();
    const id = await propose(client, "b.txt", "b\n");
    let closing, started;
    const waiting = waitFor(client, id, 120, {
      onprogress: () => {
        if (closing) return;
        started = Date.now();
        closing = transport.close();  // ends kaicoder's stdin mid-wait
      },
    }).catch(() => "closed");
    // Either the SDK dropped the call when it closed, or the answer came first: undecided.
    const outcome = await waiting;
    if (outcome !== "closed") assert.equal(body(outcome.result).decided, false);
    await closing;
    // At end of input the server ends by itself: the SDK waits 2 s before it sends SIGTERM.
    assert.ok(Date.now() - started < 1900, `kaicoder mcp took ${Date.now() - started} ms to end at end of input`);
    say(`DISCONNECTED ${id}`);
  },
};

try {
  if (!scenarios[scenario]) throw new Error(`unknown scenario '${scenario}'`);
  await scenarios[scenario]();
  say("PASS");
  process.exit(0);
} catch (e) {
  say(`FAIL: ${e?.stack ?? e}`);
  process.exit(1);
}
