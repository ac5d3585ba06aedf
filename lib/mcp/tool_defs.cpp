// The fixed tool set of `kaicoder mcp`: what an agent sees in tools/list.
// Descriptions say what happens and what to do next, since a model reads
// nothing else before it calls.

#include "lib/mcp/tools.hpp"

namespace kai::mcp {
namespace {

// What every tool answers (structuredContent): the envelope of kaicoder's
// --json without "command", and the fields each tool adds.
constexpr const char* k_output_schema = R"json({
  "type": "object",
  "required": ["ok"],
  "properties": {
    "ok": {"type": "boolean", "description": "false when the outcome is an error the agent must act on"},
    "error": {
      "type": "object",
      "required": ["code", "kind", "message", "hint"],
      "properties": {
        "code": {"type": "integer", "description": "kaicoder's exit code for this outcome (3 denied, 4 rejected, 5 expired, 6 conflict, 7 unknown id)"},
        "kind": {"type": "string", "enum": ["error", "usage", "denied", "rejected", "timeout", "conflict", "not_found", "pending"]},
        "message": {"type": "string"},
        "hint": {"type": "string"}
      }
    },
    "proposal": {"type": "object", "description": "the proposal: id, kind, status, path or command, risk, tier, why"},
    "next": {"type": "string", "description": "what happens next and what to call"},
    "published": {"type": "object", "description": "team mode, publish true: the ref on the team remote, the proposal commit, its base and this clone's origin"},
    "team_decision": {"type": "object", "description": "team mode: the signed decision on the team remote that settled the proposal: its commit, signer, the branch moved (forwarded) or why not (note)"},
    "remote_note": {"type": "string", "description": "team mode: why the team remote could not be asked for a decision; the wait went on"}
  }
})json";

constexpr const char* k_tools = R"json([
{
  "name": "read_file",
  "title": "Read a file",
  "description": "Read a text file inside the project root. Secret files (.env, keys, credentials) and paths outside the root are refused; secret values are shown as [REDACTED:NAME]; long files are cut (see 'cut'); ask for a line range with 'lines'.",
  "inputSchema": {"type": "object", "additionalProperties": false, "required": ["path"], "properties": {
    "path": {"type": "string", "minLength": 1, "description": "file path, relative to the project root"},
    "lines": {"type": "string", "description": "line range 'A:B', 'A:' or 'A' (1-based, inclusive)"}}},
  "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
},
{
  "name": "list_dir",
  "title": "List a folder",
  "description": "List the entries of a folder inside the project root (type f file, d folder, l symlink), or with 'glob' every path beneath it that matches. .git and kaicoder's state folder are skipped.",
  "inputSchema": {"type": "object", "additionalProperties": false, "properties": {
    "path": {"type": "string", "description": "folder, relative to the project root (default: the root)"},
    "glob": {"type": "string", "description": "relative pattern such as 'src/**/*.cpp'"}}},
  "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
},
{
  "name": "propose_edit",
  "title": "Propose an edit",
  "description": "Stage a surgical edit: replace old_text, which must occur exactly once in the file, by new_text (with replace_all true: every occurrence, at least one). Nothing is written now: the call returns a proposal id at once and a person approves or rejects it at a terminal (kaicoder approve N). Then call wait_for_decision with that id. If old_text is not found or found several times, read the file again and send a longer, unique old_text.",
  "inputSchema": {"type": "object", "additionalProperties": false, "required": ["path", "old_text", "new_text", "why"], "properties": {
    "path": {"type": "string", "minLength": 1, "description": "file to change, relative to the project root"},
    "old_text": {"type": "string", "minLength": 1, "description": "exact text to replace; must occur exactly once unless replace_all"},
    "new_text": {"type": "string", "description": "text to put in its place"},
    "replace_all": {"type": "boolean", "description": "replace every occurrence of old_text (default false: exactly one)"},
    "why": {"type": "string", "minLength": 1, "description": "why the change is needed; the person reads it and it goes into the changelog"},
    "publish": {"type": "boolean", "description": "team mode ([team] remote set): also publish the proposal to the team remote at once, for a person to decide from their own clone, as kaicoder propose --publish does (default false). Its files must be committed as they are at HEAD"},
    "summary": {"type": "string", "description": "one-line summary for the changelog (default: generated)"}}},
  "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
},
{
  "name": "propose_patch",
  "title": "Propose a patch of several files",
  "description": "Stage a patch as one changeset: every file it creates, changes, renames or deletes is decided at once, applied together and rolled back together. Give a unified diff as git diff writes it (paths relative to the project root), or an apply_patch envelope (*** Begin Patch … *** End Patch). Nothing is written now: the call returns a proposal id at once and a person approves or rejects it at a terminal (kaicoder approve N). Then call wait_for_decision with that id. A patch whose hunk does not apply is refused whole, naming the file and hunk: read the file again and send a patch made against it.",
  "inputSchema": {"type": "object", "additionalProperties": false, "required": ["patch", "why"], "properties": {
    "patch": {"type": "string", "minLength": 1, "description": "the patch text: a unified diff (diff --git …) or a *** Begin Patch envelope"},
    "why": {"type": "string", "minLength": 1, "description": "why the change is needed; the person reads it and it goes into the changelog"},
    "publish": {"type": "boolean", "description": "team mode ([team] remote set): also publish the proposal to the team remote at once, for a person to decide from their own clone, as kaicoder propose --publish does (default false). Its files must be committed as they are at HEAD"},
    "summary": {"type": "string", "description": "one-line summary for the changelog (default: generated)"}}},
  "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
},
{
  "name": "write_file",
  "title": "Propose a whole-file write",
  "description": "Stage writing a whole file (create it, or replace all of its content). Nothing is written now: the call returns a proposal id at once and a person approves or rejects it at a terminal (kaicoder approve N). Then call wait_for_decision with that id. Prefer propose_edit for a small change to an existing file.",
  "inputSchema": {"type": "object", "additionalProperties": false, "required": ["path", "content", "why"], "properties": {
    "path": {"type": "string", "minLength": 1, "description": "file to write, relative to the project root"},
    "content": {"type": "string", "description": "the whole new content"},
    "why": {"type": "string", "minLength": 1, "description": "why the change is needed; the person reads it and it goes into the changelog"},
    "publish": {"type": "boolean", "description": "team mode ([team] remote set): also publish the proposal to the team remote at once, for a person to decide from their own clone, as kaicoder propose --publish does (default false). Its files must be committed as they are at HEAD"},
    "summary": {"type": "string", "description": "one-line summary for the changelog (default: generated)"}}},
  "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
},
{
  "name": "delete_file",
  "title": "Propose deleting a file",
  "description": "Stage removing one file. Nothing is removed now: the call returns a proposal id at once and a person approves or rejects it at a terminal (kaicoder approve N); a backup is kept. Then call wait_for_decision with that id.",
  "inputSchema": {"type": "object", "additionalProperties": false, "required": ["path", "why"], "properties": {
    "path": {"type": "string", "minLength": 1, "description": "file to remove, relative to the project root"},
    "why": {"type": "string", "minLength": 1, "description": "why it must go; the person reads it and it goes into the changelog"},
    "publish": {"type": "boolean", "description": "team mode ([team] remote set): also publish the proposal to the team remote at once, for a person to decide from their own clone, as kaicoder propose --publish does (default false). Its files must be committed as they are at HEAD"},
    "summary": {"type": "string", "description": "one-line summary for the changelog (default: generated)"}}},
  "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}
},
{
  "name": "run_command",
  "title": "Propose a command",
  "description": "Stage a command to run in the project: give either argv (the program and its arguments, no shell) or shell (a string run with /bin/sh -c, pipes and chains allowed). Blocked commands (destructive, escaping the root, reading secrets) are refused at once. Otherwise the call returns a proposal id at once and a person approves it at a terminal (kaicoder approve N); it then runs once, confined to the project, without network unless 'network' is true (which makes the person type CONFIRM). Call wait_for_decision with the id to get its exit code and output.",
  "inputSchema": {"type": "object", "additionalProperties": false, "required": ["why"], "properties": {
    "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "program and arguments, e.g. [\"make\", \"test\"]"},
    "shell": {"type": "string", "minLength": 1, "description": "a shell string, e.g. \"make test 2>&1 | tail -n 50\""},
    "why": {"type": "string", "minLength": 1, "description": "why the command is needed; the person reads it and it goes into the changelog"},
    "cwd": {"type": "string", "description": "folder to run in, relative to the project root (default: the root)"},
    "network": {"type": "boolean", "description": "ask for network access for this run (confirm tier)"},
    "timeout_s": {"type": "integer", "minimum": 1, "maximum": 86400, "description": "seconds before the command is killed (default: [run] timeout)"}}},
  "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}
},
{
  "name": "proposal_status",
  "title": "Status of a proposal",
  "description": "Where a proposal stands now, without waiting: pending (a person has not decided yet), approved, applied (with backup and rollback id), rejected (with the reason), timeout (expired), failed, rolled-back. For a run that ran: its exit code and output. Give its 'id', or the 'ticket' a tool returned in two-user mode.",
  "inputSchema": {"type": "object", "additionalProperties": false, "properties": {
    "id": {"type": "integer", "minimum": 1, "maximum": 999999999, "description": "proposal id (give this or 'ticket')"},
    "ticket": {"type": "string", "minLength": 1, "description": "the ticket a tool returned in two-user mode, before the proposal had an id (give this or 'id')"}}},
  "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
},
{
  "name": "wait_for_decision",
  "title": "Wait for a person's decision",
  "description": "Block until a person decides proposal 'id' at a terminal (for a proposal published with 'publish': or by their signed decision on the team remote, which this call fetches, checks and carries out, as kaicoder wait does), or 'timeout_s' seconds pass (default 45, at most 600; keep it under your client's tool-call timeout). Applied: the backup and rollback id (for a run, its exit code and output). Rejected, expired or failed: an error with the reason; nothing was written. Still undecided when the time runs out: decided is false, the proposal stays pending and you may call this again. It never decides anything itself, but for a published proposal it writes what a person signed: the files, the changelog, and the branch moved to the proposal commit. Give its 'id', or the 'ticket' a tool returned in two-user mode.",
  "inputSchema": {"type": "object", "additionalProperties": false, "properties": {
    "id": {"type": "integer", "minimum": 1, "maximum": 999999999, "description": "proposal id (give this or 'ticket')"},
    "ticket": {"type": "string", "minLength": 1, "description": "the ticket a tool returned in two-user mode, before the proposal had an id (give this or 'id')"},
    "timeout_s": {"type": "integer", "minimum": 1, "maximum": 600, "description": "seconds to wait at most (default 45)"}}},
  "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true}
},
{
  "name": "list_proposals",
  "title": "List proposals",
  "description": "Proposals, pending first (oldest first), then the rest newest first; 'status' keeps only those with that status.",
  "inputSchema": {"type": "object", "additionalProperties": false, "properties": {
    "status": {"type": "string", "enum": ["pending", "approved", "applied", "rejected", "timeout", "failed", "rolled-back"]}}},
  "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
}
])json";

}  // namespace

json tool_definitions(bool with_output_schema) {
  static const json tools = json::parse(k_tools);
  static const json output = json::parse(k_output_schema);
  json out = tools;
  if (with_output_schema)
    for (auto& t : out) t["outputSchema"] = output;
  return out;
}

json tool_result(const ToolOutcome& o, bool structured) {
  json r = {
      {"content",
       json::array({{{"type", "text"}, {"text", o.structured.dump(2, ' ', false, json::error_handler_t::replace)}}})},
      {"isError", o.is_error}};
  if (structured) r["structuredContent"] = o.structured;
  return r;
}

}  // namespace kai::mcp
