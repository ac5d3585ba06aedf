// kaicoder init: write kaicoder.toml from the documented example, create the
// state folder, and keep backups and state out of git. Refuses to overwrite.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "lib/setup.hpp"

namespace kai::cmd {

RunFn setup_init(CLI::App&) {
  return [](Session& s) {
    auto r = init_tree(s.env());
    if (!r) return report(s, r.error());
    if (s.json()) {
      print_json({{"root", r->root.string()}, {"config", r->config.string()}, {"gitignore_added", r->gitignore_added}});
      return k_exit_ok;
    }
    out("initialised kaicoder in {}\n", r->root.string());
    out("  config:    {} (edit it to set approvers and rules)\n", r->config.string());
    out("  state:     {}\n", (r->root / ".kaicoder").string());
    if (!r->gitignore_added.empty()) out("  .gitignore: added {}\n", fmt::join(r->gitignore_added, ", "));
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
