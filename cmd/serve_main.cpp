// kaicoder-serve: the review page's server program. `kaicoder serve` hands
// its whole command line here (cmd/serve_door.cpp), so that only this
// program loads the HTTP server and the libraries it pulls in. It knows the
// global options and `serve`, nothing else.

#include "cmd/entry.hpp"
#include "cmd/serve_options.hpp"

namespace kai::cmd {
namespace {

constexpr CommandSpec k_commands[] = {
    {"serve", k_serve_help, setup_serve},
};

}  // namespace
}  // namespace kai::cmd

int main(int argc, char** argv) { return kai::cmd::entry_main(argc, argv, kai::cmd::k_commands); }
