// kaicoder verify: certify that certified paths changed between two git
// states only with signed approvals. Reads only, so it runs in any checkout,
// initialised or not: it never opens a Workspace.

#include "cmd/cli.hpp"
#include "cmd/render.hpp"
#include "lib/certify/certify.hpp"
#include "lib/util/strings.hpp"

namespace kai::cmd {

RunFn setup_verify(CLI::App& sub) {
  struct Args {
    std::string base, head;
    bool worktree = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("--base", a->base,
                 "commit, tag or branch to count changes from (default: [certify] base, else the "
                 "merge base with the upstream branch, else the root commit)");
  sub.add_option("--head", a->head, "commit, tag or branch to certify (default: HEAD)");
  sub.add_flag("--worktree", a->worktree, "certify the work tree, uncommitted changes included");
  return [a](Session& s) {
    CertifyRequest req;
    req.start = s.env().root_override.value_or(s.env().cwd);
    req.base = a->base;
    req.head = a->head;
    req.worktree = a->worktree ? WorkTree::yes : WorkTree::no;
    auto c = check_certification(req);
    if (!c) return report(s, c.error());
    const size_t bad = c->uncovered();
    if (s.json()) {
      nlohmann::json j = certification_json(*c);
      if (bad > 0)
        return emit(s, std::move(j), exit_code(Errc::conflict),
                    make_error(Errc::conflict,
                               fmt::format("{} to certified paths {} a signed approval", count_of(bad, "change"),
                                           bad == 1 ? "lacks" : "lack"),
                               "the owner reviews them and signs with 'kaicoder certify'"));
      emit(s, j);
    } else {
      print_certification(*c);
      if (bad > 0) {
        err("kaicoder: error: {} to certified paths {} a signed approval\n", count_of(bad, "change"),
            bad == 1 ? "lacks" : "lack");
        err("hint: the owner reviews them and signs with 'kaicoder certify'\n");
      }
    }
    return bad == 0 ? k_exit_ok : exit_code(Errc::conflict);
  };
}

}  // namespace kai::cmd
