#include "lib/harness/tool_call.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/util/json_bounded.hpp"

namespace kai::harness {
namespace {

using json = nlohmann::json;

struct Name {
  Harness h;
  std::string_view text;
};
constexpr Name k_names[] = {{Harness::claude_code, "claude-code"},
                            {Harness::codex, "codex"},
                            {Harness::gemini, "gemini"},
                            {Harness::cursor, "cursor"}};

Error bad(std::string message) {
  return make_error(Errc::usage, std::move(message), "the hook payload is the JSON object the harness sends on stdin");
}

// The first of `keys` present in `in`, as a string. usage error when it is
// there but not a string; nullopt when none is there.
Result<std::optional<std::string>> text_field(const json& in, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = in.find(k);
    if (it == in.end() || it->is_null()) continue;
    if (!it->is_string()) return bad(fmt::format("'{}' must be a string", k));
    return std::optional<std::string>(it->get<std::string>());
  }
  return std::optional<std::string>{};
}

Result<std::string> required_text(const json& in, std::initializer_list<const char*> keys) {
  auto v = text_field(in, keys);
  if (!v) return v.error();
  if (!*v) return bad(fmt::format("'{}' is missing from tool_input", *keys.begin()));
  return std::move(**v);
}

// The tool's file or folder: the first of `keys` present.
Status take_path(const json& in, std::initializer_list<const char*> keys, ToolCall& c) {
  auto p = required_text(in, keys);
  if (!p) return p.error();
  c.path = std::move(*p);
  return ok_status();
}

Result<bool> flag_field(const json& in, const char* key) {
  auto it = in.find(key);
  if (it == in.end() || it->is_null()) return false;
  if (!it->is_boolean()) return bad(fmt::format("'{}' must be true or false", key));
  return it->get<bool>();
}

// A command as a shell string or as an argument vector.
Status read_command(const json& in, ToolCall& c) {
  auto it = in.find("command");
  if (it == in.end() || it->is_null()) return bad("'command' is missing from tool_input");
  if (it->is_string()) {
    c.command = it->get<std::string>();
    return ok_status();
  }
  if (!it->is_array() || it->empty()) return bad("'command' must be a string or a list of strings");
  for (const auto& a : *it) {
    if (!a.is_string()) return bad("'command' must be a string or a list of strings");
    c.argv.push_back(a.get<std::string>());
  }
  return ok_status();
}

Status read_edit(const json& in, ToolCall& c, const char* old_key, const char* new_key) {
  TextEdit e;
  auto o = required_text(in, {old_key});
  if (!o) return o.error();
  auto n = required_text(in, {new_key});
  if (!n) return n.error();
  auto all = flag_field(in, "replace_all");
  if (!all) return all.error();
  e.old_text = std::move(*o);
  e.new_text = std::move(*n);
  e.all = *all;
  c.edits.push_back(std::move(e));
  return ok_status();
}

// Claude Code's tools (Codex shares its wire format and some names). Paths
// are absolute as Claude Code sends them; resolving them is the caller's.
Status claude_tool(const std::string& tool, const json& in, ToolCall& c) {
  auto path = [&](std::initializer_list<const char*> keys) { return take_path(in, keys, c); };
  if (tool == "Write") {
    c.op = Op::write;
    KAI_TRY(path({"file_path"}));
    auto t = required_text(in, {"content"});
    if (!t) return t.error();
    c.content = std::move(*t);
  } else if (tool == "Edit") {
    c.op = Op::edit;
    KAI_TRY(path({"file_path"}));
    KAI_TRY(read_edit(in, c, "old_string", "new_string"));
  } else if (tool == "MultiEdit") {
    c.op = Op::edit;
    KAI_TRY(path({"file_path"}));
    auto it = in.find("edits");
    if (it == in.end() || !it->is_array() || it->empty()) return bad("'edits' must be a list of edits");
    for (const auto& e : *it) {
      if (!e.is_object()) return bad("each of 'edits' must be an object");
      KAI_TRY(read_edit(e, c, "old_string", "new_string"));
    }
  } else if (tool == "Bash") {
    c.op = Op::shell;
    KAI_TRY(read_command(in, c));
    auto d = text_field(in, {"description"});
    if (!d) return d.error();
    c.why = d->value_or("");
  } else if (tool == "Read" || tool == "NotebookRead") {
    c.op = Op::read;
    KAI_TRY(path({"file_path", "notebook_path"}));
  } else if (tool == "LS") {
    c.op = Op::list;
    KAI_TRY(path({"path"}));
  } else if (tool == "Grep" || tool == "Glob") {
    c.op = Op::search;
    auto p = text_field(in, {"path"});
    if (!p) return p.error();
    c.path = p->value_or("");
    auto g = tool == "Glob" ? required_text(in, {"pattern"}) : Result<std::string>(std::string());
    if (!g) return g.error();
    c.glob = std::move(*g);
    if (tool == "Grep") {
      auto fg = text_field(in, {"glob"});
      if (!fg) return fg.error();
      c.glob = fg->value_or("");
      c.reads_contents = true;
    }
  } else if (tool == "NotebookEdit") {
    c.op = Op::unknown;
    c.refusal =
        "notebook cells cannot be proposed through the hook; propose the whole .ipynb file with "
        "kaicoder's write_file tool or `kaicoder propose --content-file`";
  } else if (tool == "TodoWrite" || tool == "Task" || tool == "Agent" || tool == "WebSearch" || tool == "WebFetch" ||
             tool == "ExitPlanMode" || tool == "AskUserQuestion") {
    c.op = Op::pass;
  }
  return ok_status();
}

Result<std::string> optional_text(const json& in, std::initializer_list<const char*> keys);

// Codex: Bash (a string or an argument vector) and apply_patch, whose patch
// text travels in `command` (or `input`).
Status codex_tool(const std::string& tool, const json& in, ToolCall& c) {
  if (tool == "apply_patch") {
    c.op = Op::patch;
    auto t = required_text(in, {"command", "input", "patch"});
    if (!t) return t.error();
    c.command = std::move(*t);
    return ok_status();
  }
  // Its simple search tools take Claude Code's arguments (pattern, path, glob).
  if (tool == "grep" || tool == "glob") return claude_tool(tool == "grep" ? "Grep" : "Glob", in, c);
  // Its file tools: grep_files runs `rg --files-with-matches --glob INCLUDE
  // -- PATH` from the session's folder (no --hidden, but kaicoder judges as
  // if it had it); the names it prints still tell which files match.
  if (tool == "grep_files") {
    c.op = Op::search;
    auto p = optional_text(in, {"path"});
    if (!p) return p.error();
    c.path = std::move(*p);
    auto g = optional_text(in, {"include"});
    if (!g) return g.error();
    c.glob = std::move(*g);
    c.reads_contents = true;
    return ok_status();
  }
  if (tool == "read_file") {
    c.op = Op::read;
    return take_path(in, {"file_path"}, c);
  }
  if (tool == "list_dir") {
    c.op = Op::list;
    return take_path(in, {"dir_path"}, c);
  }
  if (tool == "Bash" || tool == "shell" || tool == "local_shell" || tool == "exec_command") {
    c.op = Op::shell;
    KAI_TRY(read_command(in, c));
    auto w = text_field(in, {"workdir"});
    if (!w) return w.error();
    if (*w) c.cwd = **w;
    return ok_status();
  }
  return claude_tool(tool, in, c);
}

Result<std::string> optional_text(const json& in, std::initializer_list<const char*> keys) {
  auto v = text_field(in, keys);
  if (!v) return v.error();
  return v->value_or("");
}

// Gemini CLI's built-in tools (its tools reference). Releases name some
// arguments differently; each spelling seen is read.
Status gemini_tool(const std::string& tool, const json& in, ToolCall& c) {
  auto path = [&](std::initializer_list<const char*> keys) { return take_path(in, keys, c); };
  if (tool == "write_file") {
    c.op = Op::write;
    KAI_TRY(path({"file_path", "absolute_path", "path"}));
    auto t = required_text(in, {"content"});
    if (!t) return t.error();
    c.content = std::move(*t);
  } else if (tool == "replace") {
    c.op = Op::edit;
    KAI_TRY(path({"file_path", "absolute_path", "path"}));
    KAI_TRY(read_edit(in, c, "old_string", "new_string"));
    // More than one expected replacement, or allow_multiple: every occurrence.
    auto it = in.find("expected_replacements");
    if (it != in.end() && !it->is_null()) {
      if (!it->is_number_integer()) return bad("'expected_replacements' must be a whole number");
      c.edits.back().all = it->get<long long>() != 1;
    }
    auto many = flag_field(in, "allow_multiple");
    if (!many) return many.error();
    if (*many) c.edits.back().all = true;
  } else if (tool == "run_shell_command") {
    c.op = Op::shell;
    KAI_TRY(read_command(in, c));
    auto d = optional_text(in, {"description"});
    if (!d) return d.error();
    c.why = std::move(*d);
    auto w = optional_text(in, {"dir_path", "directory"});
    if (!w) return w.error();
    c.cwd = std::move(*w);
  } else if (tool == "read_file") {
    c.op = Op::read;
    KAI_TRY(path({"file_path", "absolute_path", "path"}));
  } else if (tool == "list_directory") {
    c.op = Op::list;
    KAI_TRY(path({"dir_path", "path"}));
  } else if (tool == "glob" || tool == "search_file_content" || tool == "grep_search") {
    c.op = Op::search;
    auto p = optional_text(in, {"dir_path", "path"});
    if (!p) return p.error();
    c.path = std::move(*p);
    // grep_search (0.5x) names its glob include_pattern; search_file_content said include.
    auto g = tool == "glob" ? required_text(in, {"pattern"}) : optional_text(in, {"include_pattern", "include"});
    if (!g) return g.error();
    c.glob = std::move(*g);
    c.reads_contents = tool != "glob";
  } else if (tool == "read_many_files") {
    c.refusal = "read_many_files cannot be checked file by file here; read each file with read_file";
  } else if (tool == "save_memory") {
    c.refusal = "save_memory writes outside the project (~/.gemini); kaicoder governs writes inside root only";
  } else if (tool == "google_web_search" || tool == "web_fetch" || tool == "write_todos") {
    c.op = Op::pass;
  }
  return ok_status();
}

// The first word of a command line, without its folder: what an MCP server
// entry runs.
std::string program_of(std::string_view command) {
  size_t b = command.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = command.find_first_of(" \t", b);
  std::string_view word = command.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
  size_t slash = word.rfind('/');
  return std::string(slash == std::string_view::npos ? word : word.substr(slash + 1));
}

// Cursor: each before* event is its own hook with its own fields;
// preToolUse carries tool_name and tool_input as the others do.
Status cursor_event(const json& j, ToolCall& c) {
  if (c.event == "beforeShellExecution") {
    c.op = Op::shell;
    c.tool = "shell";
    return read_command(j, c);
  }
  if (c.event == "beforeReadFile" || c.event == "beforeTabFileRead") {
    c.op = Op::read;
    c.tool = "read";
    return take_path(j, {"file_path"}, c);
  }
  if (c.event == "beforeMCPExecution") {
    auto t = optional_text(j, {"tool_name"});
    if (!t) return t.error();
    c.tool = *t;
    auto cmd = optional_text(j, {"command"});
    if (!cmd) return cmd.error();
    // kaicoder's own server guards every call itself.
    if (program_of(*cmd) == "kaicoder")
      c.op = Op::pass;
    else
      c.refusal = "only kaicoder's own MCP server is wired here; other servers' tools are denied";
    return ok_status();
  }
  if (c.event == "preToolUse") {
    auto t = required_text(j, {"tool_name"});
    if (!t) return t.error();
    c.tool = *t;
    auto it = j.find("tool_input");
    if (it == j.end() || !it->is_object()) return bad("'tool_input' must be an object");
    const json& in = *it;
    auto path = [&](std::initializer_list<const char*> keys) { return take_path(in, keys, c); };
    if (c.tool == "Shell") {
      c.op = Op::shell;
      return read_command(in, c);
    }
    if (c.tool == "Read") {
      c.op = Op::read;
      return path({"file_path", "path", "target_file"});
    }
    if (c.tool == "Write") {
      c.op = Op::write;
      KAI_TRY(path({"file_path", "path", "target_file"}));
      auto t2 = required_text(in, {"content", "contents"});
      if (!t2) return t2.error();
      c.content = std::move(*t2);
      return ok_status();
    }
    if (c.tool == "StrReplace" || c.tool == "Edit") {
      c.op = Op::edit;
      KAI_TRY(path({"file_path", "path", "target_file"}));
      return read_edit(in, c, "old_string", "new_string");
    }
    if (c.tool == "Delete") {
      c.op = Op::remove;
      return path({"file_path", "path", "target_file"});
    }
    if (c.tool == "Grep" || c.tool == "Glob") return claude_tool(c.tool, in, c);
    return ok_status();
  }
  c.tool = c.event;
  c.refusal = fmt::format("kaicoder does not answer Cursor's '{}' event", c.event);
  return ok_status();
}

}  // namespace

std::optional<Harness> harness_named(std::string_view name) {
  for (const auto& n : k_names)
    if (n.text == name) return n.h;
  return std::nullopt;
}

std::string_view harness_name(Harness h) {
  for (const auto& n : k_names)
    if (n.h == h) return n.text;
  return "?";
}

Result<ToolCall> parse_tool_call(Harness h, std::string_view payload) {
  // JSON never holds a raw NUL; a parser that stops at one would read less
  // than the harness sent.
  if (payload.find('\0') != std::string_view::npos) return bad("the hook payload holds a NUL byte");
  BoundedJson parsed = parse_bounded_json(payload);
  if (parsed.status == JsonStatus::too_deep)
    return bad(fmt::format("the hook payload nests deeper than {} levels", k_json_max_depth));
  json& j = parsed.value;
  if (parsed.status != JsonStatus::ok || !j.is_object()) return bad("the hook payload is not a JSON object");
  ToolCall c;
  auto ev = optional_text(j, {"hook_event_name"});
  if (!ev) return ev.error();
  c.event = std::move(*ev);
  auto cwd = optional_text(j, {"cwd"});
  if (!cwd) return cwd.error();
  c.cwd = std::move(*cwd);
  if (h == Harness::cursor) {
    if (c.event.empty()) return bad("'hook_event_name' is missing");
    KAI_TRY(cursor_event(j, c));
    return c;
  }
  auto tool = required_text(j, {"tool_name"});
  if (!tool) return tool.error();
  c.tool = std::move(*tool);
  // kaicoder's own MCP tools check every call themselves. Gemini also says
  // which server a tool comes from (mcp_context), whatever it named the tool.
  bool ours = c.tool.starts_with("mcp__kaicoder__");
  if (h == Harness::gemini)
    if (auto ctx = j.find("mcp_context"); ctx != j.end() && ctx->is_object())
      ours = ctx->value("server_name", json()) == "kaicoder";
  if (ours) {
    c.op = Op::pass;
    return c;
  }
  auto it = j.find("tool_input");
  if (it == j.end() || !it->is_object()) return bad("'tool_input' must be an object");
  const std::string tool_cwd = c.cwd;
  switch (h) {
    case Harness::claude_code:
      KAI_TRY(claude_tool(c.tool, *it, c));
      // Its Grep passes --glob '!.git' (and .svn, .hg, .bzr, .jj, .sl) before the model's globs.
      c.skips_vcs = c.tool == "Grep";
      break;
    case Harness::codex: KAI_TRY(codex_tool(c.tool, *it, c)); break;
    case Harness::gemini: KAI_TRY(gemini_tool(c.tool, *it, c)); break;
    case Harness::cursor: break;
  }
  // A tool's own working folder (Codex workdir, Gemini dir_path) is
  // relative to the session's.
  if (!c.cwd.empty() && c.cwd != tool_cwd && c.cwd.front() != '/' && !tool_cwd.empty()) c.cwd = tool_cwd + "/" + c.cwd;
  return c;
}

}  // namespace kai::harness
