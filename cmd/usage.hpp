#pragma once
// The command line as a git user expects it: `kaicoder help [COMMAND]` is
// `kaicoder COMMAND --help`, an unknown command or option names the closest
// valid one ("unknown command 'lsit'; did you mean 'list'?"), and every
// usage error is one `kaicoder: error:` line (or the --json envelope, whose
// "command" is the word that was typed) with exit code 2.
//
//   Invocation inv = read_invocation(argc, argv, verbs);
//   if (inv.error) ... report it (exit 2)
//   app.parse(inv.argc(), inv.argv());
//   catch (const CLI::ParseError& e) { Error u = usage_error(e, app, inv); ... }

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lib/result.hpp"

namespace kai::cmd {

struct Invocation {
  std::vector<std::string> args;  // argv for the parser: `help X` becomes `X --help`
  std::string typed;              // the command word as typed ("" when there is none)
  std::optional<Error> error;     // an unknown command, before any parsing
  int argc() const { return static_cast<int>(m_ptrs.size()); }
  const char* const* argv();

private:
  std::vector<const char*> m_ptrs;
};

// Reads the words of argv that come before the parser: the global options
// (skipped with their values), then the command word. `help` with no
// command asks for the overview; `help COMMAND` for the command's help.
Invocation read_invocation(int argc, char** argv, const std::vector<std::string>& verbs);

// What the parser refused, said as kaicoder says it: an unknown option
// with the closest one of that command, a missing command or argument
// with the command's name in front. Errc::usage.
Error usage_error(const CLI::ParseError& e, CLI::App& app, const Invocation& inv);

}  // namespace kai::cmd
