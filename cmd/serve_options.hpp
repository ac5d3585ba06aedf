#pragma once
// What `kaicoder serve` takes, declared once for both programs that parse
// it: the kaicoder binary (for help, completion and usage errors, before it
// hands the command to the review page's server program; cmd/serve_door.cpp)
// and that server program itself (cmd/serve.cpp).

#include <string>

#include <CLI/CLI.hpp>

#include "cmd/cli.hpp"

namespace kai::cmd {

inline constexpr const char* k_serve_help = "at a terminal: the local review page, the same gate in a browser";

struct ServeArgs {
  int port = 0;
  std::string address = "127.0.0.1";
};

inline void add_serve_options(CLI::App& sub, ServeArgs& a) {
  sub.add_option("--port", a.port, "port on 127.0.0.1 (default: a free one)")->check(whole_number(0, 65535));
  sub.add_option("--address", a.address, "address to listen on: only 127.0.0.1 (or localhost) is accepted");
}

// `kaicoder serve` in the kaicoder binary: hands the whole command line to
// the server program (cmd/serve_door.cpp).
RunFn setup_serve_door(CLI::App& sub);

}  // namespace kai::cmd
