#pragma once
// Whether a harness's wired hook command would answer: the program is an
// absolute path to an executable kaicoder of this version, and, run once
// as the harness runs it with a harmless call on stdin (a to-do list
// update, kaicoder's own MCP tool for Cursor), it exits 0 with a decision
// in the harness's format. `integrate --check` and `doctor` ask this of
// every kaicoder hook entry they find (lib/harness/integrate).

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lib/harness/tool_call.hpp"

namespace kai::harness {

struct ProbeEnv {
  std::filesystem::path cwd;                              // where the harness runs it (root)
  std::vector<std::pair<std::string, std::string>> vars;  // its environment
  std::chrono::milliseconds timeout{10000};
};

// The program a hook command runs: its first word, unquoted ('…' and "…"
// as a shell reads them, no expansion); "" when it has a `$`, a backquote
// or an unbalanced quote.
std::string hook_program(const std::string& command);

// The command that runs `exe hook NAME`, quoted for a shell where needed.
std::string hook_command_for(const std::filesystem::path& exe, Harness h);

// "" when `command` runs `kaicoder hook NAME` from an absolute path to an
// executable kaicoder that reports `version` and answers a harmless call;
// else what is wrong, in words for a person.
std::string hook_fault(const std::string& command, Harness h, std::string_view version, const ProbeEnv& env);

}  // namespace kai::harness
