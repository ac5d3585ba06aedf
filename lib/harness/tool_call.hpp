#pragma once
// What an agent harness's pre-tool hook asks, in kaicoder's words. Each
// harness sends its own payload on the hook's stdin — Claude Code and Codex
// `PreToolUse` (`tool_name`, `tool_input`, `cwd`), Gemini CLI `BeforeTool`
// (the same fields, its own tool names), Cursor's `before*` events and
// `preToolUse` — and each is read here into one ToolCall. Pure: reads
// nothing but the text, decides nothing (lib/harness/hook decides).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai::harness {

enum class Harness { claude_code, codex, gemini, cursor };
// "claude-code", "codex", "gemini", "cursor"; nullopt for anything else.
std::optional<Harness> harness_named(std::string_view name);
std::string_view harness_name(Harness h);

// What the tool would do. `pass`: a tool that neither reads nor writes files
// (a to-do list, a web search, kaicoder's own MCP tools), let through.
// `unknown`: denied, because kaicoder cannot tell what it does.
enum class Op { write, edit, patch, remove, shell, read, list, search, pass, unknown };

struct TextEdit {
  std::string old_text, new_text;
  bool all = false;  // replace every occurrence (Claude Code's replace_all)
};

struct ToolCall {
  Op op = Op::unknown;
  std::string tool;               // the harness's name for the tool
  std::string event;              // hook_event_name as sent (Cursor answers each event its own way)
  std::string path;               // write, edit, remove, read, list; search: the folder ("" = the working folder)
  std::string content;            // write
  std::vector<TextEdit> edits;    // edit: in order
  std::string command;            // shell: a shell string; patch: the `*** Begin Patch` text
  std::vector<std::string> argv;  // shell: an argument vector instead of `command`
  std::string glob;               // search: the files it looks at (Glob's pattern, Grep's glob)
  bool reads_contents = false;    // search: the results carry file contents (Grep), not only names
  bool skips_vcs = false;         // search: the harness leaves .git and the like out (Claude Code's Grep)
  std::string cwd;                // the harness's working folder, "" when it did not say
  std::string why;                // the description the harness gave, if any
  std::string refusal;            // unknown: why, when there is more to say than the tool's name
};

// Errc::usage when `payload` is not a JSON object, names no tool or event,
// or a field the tool needs is missing or of the wrong type. A tool the
// harness has that kaicoder does not know is not an error: Op::unknown.
Result<ToolCall> parse_tool_call(Harness h, std::string_view payload);

}  // namespace kai::harness
