#pragma once
// The entry every kaicoder program shares: the global options, the command
// table it is given, the only catch, and the mapping to exit codes. The
// kaicoder binary hands it every command (cmd/main.cpp); the review page's
// server program only `serve` (cmd/serve_main.cpp).

#include <span>

#include "cmd/cli.hpp"

namespace kai::cmd {

struct CommandSpec {
  const char* name;
  const char* help;
  SetupFn setup;
};

// Parse argv against `commands`, run the one named, and return the
// process's exit code (SPEC §3). Never throws.
int entry_main(int argc, char** argv, std::span<const CommandSpec> commands);

}  // namespace kai::cmd
