// kaicoder certify: sign an approval manifest for the changes to certified
// paths that no signed manifest covers yet. Only a person at a terminal may
// sign: an agent could otherwise use the owner's key or ssh-agent.

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/certify/certify.hpp"
#include "lib/util/strings.hpp"

namespace kai::cmd {

RunFn setup_certify(CLI::App& sub) {
  struct Args {
    std::string base, key;
    bool worktree = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("--base", a->base, "commit, tag or branch to count changes from (default: as for verify)");
  sub.add_option("--key", a->key,
                 "SSH key to sign with (default: git's user.signingkey with gpg.format ssh, else [certify] "
                 "signing_key in your config, else ~/.ssh/id_ed25519; a public key file when ssh-agent holds "
                 "the private half)");
  sub.add_flag("--worktree", a->worktree, "also sign uncommitted changes in the work tree");
  return [a](Session& s) {
    if (auto t = require_terminal("no terminal to sign from"); !t) return report(s, t.error());
    CertifyRequest req;
    req.start = s.env().root_override.value_or(s.env().cwd);
    req.base = a->base;
    req.worktree = a->worktree ? WorkTree::yes : WorkTree::no;
    for (const auto& [name, value] : s.env().vars)
      if (name == "SSH_AUTH_SOCK") req.ssh.env.push_back(name + "=" + value);
    auto c = check_certification(req);
    if (!c) return report(s, c.error());
    if (c->uncovered() == 0) {
      if (s.json()) {
        nlohmann::json j = certification_json(*c);
        j.update({{"signed", false}, {"manifest", nullptr}});
        emit(s, j);
      } else {
        out("nothing to certify: every change to a certified path is signed\n");
      }
      return k_exit_ok;
    }
    if (!c->signers_problem.empty())
      return report(
          s, make_error(Errc::denied, fmt::format("no signature can count: {}", c->signers_problem),
                        "name an allowed-signers file in [certify] allowed_signers and commit it to the base first"));
    SigningKey key{s.env().cwd / a->key, {}, "--key"};
    if (a->key.empty()) {
      auto chosen = choose_signing_key(req.start, s.env().home, s.env().user_config_dir);
      if (!chosen) return report(s, chosen.error());
      key = std::move(*chosen);
    }
    Manifest m = draft_manifest(*c);
    send_text_to_stderr(s.json());
    {
      Pager pager(s, Paging::before_prompt);
      out("base {} ({}), head {}{}\n", c->base.substr(0, 12), c->base_from, c->head.substr(0, 12),
          c->worktree ? " and the work tree" : "");
      out("you are about to sign, with {}, {} to certified paths:\n", key.shown(), count_of(c->uncovered(), "change"));
      for (const auto& ch : c->changes)
        if (!ch.covered) print_change(ch);
    }
    std::fflush(stdout);
    send_text_to_stderr(false);
    auto yes =
        ask_on_terminal(fmt::format("Sign an approval of {}?", count_of(m.changes.size(), "result")), Tier::normal);
    if (!yes) return report(s, yes.error());
    if (!*yes) {
      const Error no = make_error(Errc::rejected, "not signed; nothing was written");
      if (s.json()) return emit(s, {{"signed", false}}, exit_code(no.code), no);
      return report(s, no);
    }
    auto rel = write_signed_manifest(*c, m, key, req.ssh, s.clock().now());
    if (!rel) return report(s, rel.error());
    if (s.json()) {
      emit(s, {{"signed", true}, {"manifest", *rel}, {"signature", *rel + ".sig"}, {"entries", m.changes.size()}});
    } else {
      out("wrote {} and {}.sig\n", *rel, *rel);
      out("commit them: git add {} {}.sig && git commit\n", *rel, *rel);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
