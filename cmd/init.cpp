// kaicoder init: asks the owner at the terminal, then writes kaicoder.toml
// from the documented example, creates the state folder, keeps backups and
// state out of git, and adds the root to the owner's trusted roots.
// Refuses to overwrite a kaicoder.toml (`kaicoder trust` is for that one).

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "lib/config/setup.hpp"
#include "lib/util/text.hpp"

namespace kai::cmd {

RunFn setup_init(CLI::App&) {
  return [](Session& s) {
    auto root = init_target(s.env());
    if (!root) return report(s, root.error());
    if (auto yes = owner_says_yes(fmt::format("Make {} a kaicoder root and trust it?", make_visible(root->string())),
                                  "kaicoder init");
        !yes)
      return report(s, yes.error());
    auto r = init_tree(s.env(), *root, iso_utc(s.clock().now()));
    if (!r) return report(s, r.error());
    if (s.json()) {
      emit(s, {{"root", r->root.string()}, {"config", r->config.string()}, {"gitignore_added", r->gitignore_added}});
      return k_exit_ok;
    }
    out("initialised kaicoder in {}\n", r->root.string());
    out("  config:    {} (edit it to set approvers and rules; then run `kaicoder trust`)\n", r->config.string());
    out("  state:     {}\n", (r->root / ".kaicoder").string());
    out("  trusted:   recorded in {}\n", s.env().user_config_dir.string());
    if (!r->gitignore_added.empty()) out("  .gitignore: added {}\n", fmt::join(r->gitignore_added, ", "));
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
