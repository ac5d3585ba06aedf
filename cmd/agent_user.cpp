// kaicoder agent-user: set two-user mode up (as root) and check that it
// holds: the agent user can read the tree, write none of it, read no
// secret and reach nothing of the owner's.

#include <unistd.h>

#include "cmd/cli.hpp"
#include "lib/two_user/agent_user.hpp"
#include "lib/two_user/intake.hpp"

namespace kai::cmd {
namespace {

Result<std::filesystem::path> root_here(const Session& s) {
  std::filesystem::path start = s.env().cwd;
  if (s.env().root_override)
    start = s.env().root_override->is_absolute() ? *s.env().root_override : s.env().cwd / *s.env().root_override;
  return store_root(start);
}

// What `check` reports, in text or JSON; denied (3) when it does not hold.
int report_access(Session& s, const std::string& name, const AgentAccess& a) {
  const bool holds = a.holds();
  if (s.json()) {
    const int rc = holds ? k_exit_ok : exit_code(Errc::denied);
    return emit(s,
                {{"action", "check"},
                 {"agent", name},
                 {"holds", holds},
                 {"reaches_root", a.reaches_root},
                 {"writable", a.writable},
                 {"secrets_readable", a.secrets_readable},
                 {"owner_dir", a.owner_dir},
                 {"cut_short", a.cut_short},
                 {"level", two_user_level(a, name)}},
                rc,
                holds ? std::nullopt
                      : std::optional<Error>(
                            make_error(Errc::denied, two_user_level(a, name),
                                       fmt::format("sudo kaicoder agent-user setup {} fixes the modes", name))));
  }
  out("{}\n", two_user_level(a, name));
  for (const auto& w : a.writable) out("  writable:       {}\n", w);
  for (const auto& r : a.secrets_readable) out("  secret, readable: {}\n", r);
  for (const auto& o : a.owner_dir) out("  owner's folder: {}\n", o);
  if (!a.reaches_root)
    out("  note: '{}' cannot pass through the folders down to the root, so it cannot read the tree either\n", name);
  if (a.cut_short) out("  note: the walk stopped after 200000 names; what lies beyond was not looked at\n");
  out("  (judged from mode bits and groups; ACLs are not read)\n");
  if (!holds) err("hint: sudo kaicoder agent-user setup {} fixes the modes\n", name);
  return holds ? k_exit_ok : exit_code(Errc::denied);
}

}  // namespace

RunFn setup_agent_user(CLI::App& sub) {
  struct Args {
    std::string name;
  };
  auto a = std::make_shared<Args>();
  sub.require_subcommand(1);
  CLI::App* setup =
      sub.add_subcommand("setup", "as root: create the agent user, open the tree to it read-only, make the spool");
  setup->add_option("name", a->name, "the agent's user name")->required();
  CLI::App* check = sub.add_subcommand("check", "list what the agent user can write, or read that it must not");
  check->add_option("name", a->name, "the agent's user name (default: [two_user] agent)");
  return [a, setup](Session& s) {
    auto root = root_here(s);
    if (!root) return report(s, root.error());
    Guardrails guards;
    std::filesystem::path owner_dir = owner_dir_of(::getuid());
    std::string name = a->name;
    if (setup->parsed()) {
      if (::geteuid() != 0) {
        out("setting up two-user mode needs root; run:\n  sudo kaicoder --root '{}' agent-user setup {}\n",
            root->string(), name);
        return exit_code(Errc::denied);
      }
      std::vector<std::string> done;
      auto st = apply_setup(*root, name, guards, done);
      for (const auto& d : done) out("{}\n", d);
      if (!st) return report(s, st.error());
      if (done.empty()) out("two-user mode was already set up for '{}'\n", name);
      owner_dir = store_owner_dir(*root);
    } else if (name.empty()) {
      auto ws = s.workspace();
      if (!ws) return report(s, ws.error());
      name = (*ws)->cfg.two_user_agent;
      guards = (*ws)->guards;
      owner_dir = (*ws)->owner_dir;
      if (name.empty())
        return report(s, make_error(Errc::usage, "two-user mode is off here: [two_user] agent is not set",
                                    "name the user: kaicoder agent-user check NAME"));
    }
    auto agent = lookup_user(name);
    if (!agent) return report(s, agent.error());
    return report_access(s, name, agent_access(*root, guards, *agent, owner_dir));
  };
}

}  // namespace kai::cmd
