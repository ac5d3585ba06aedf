// kaicoder: the one write path for coding agents. This file holds the command
// table; cmd/entry.cpp the global options, the only catch, and the mapping
// to exit codes.

#include "cmd/entry.hpp"
#include "cmd/serve_options.hpp"

namespace kai::cmd {
namespace {

constexpr CommandSpec k_commands[] = {
    {"init", "at a terminal: write kaicoder.toml and the state folder, and trust the root", setup_init},
    {"trust", "at a terminal: trust a root's kaicoder.toml (a clone, or after it changed)", setup_trust},
    {"propose", "stage a file change for a human to approve", setup_propose},
    {"run", "stage a shell command for a human to approve", setup_run},
    {"wait", "block until a proposal is decided and report its outcome", setup_wait},
    {"list", "list proposals, pending first", setup_list},
    {"show", "show one proposal with its diff", setup_show},
    {"approve", "the human gate: review, approve and apply a proposal", setup_approve},
    {"reject", "turn a proposal down; nothing is written", setup_reject},
    {"apply", "apply an approved proposal", setup_apply},
    {"log", "changelog entries, newest first", setup_log},
    {"serve", k_serve_help, setup_serve_door},
    {"rollback", "undo a changelog entry from its backup", setup_rollback},
    {"read", "read a file for an agent: confined, secrets refused, redacted", setup_read},
    {"ls", "list a folder for an agent, confined to root", setup_ls},
    {"verify", "check that certified paths changed only with signed approvals", setup_verify},
    {"certify", "sign an approval of the changes to certified paths", setup_certify},
    {"publish", "team mode: push a proposal to the [team] remote for a person to decide from their clone",
     setup_publish},
    {"fetch", "team mode: bring the team remote's proposals and signed decisions (--prune: drop settled ones)",
     setup_fetch},
    {"hook", "an agent harness's pre-tool hook: the call on stdin, a decision on stdout (fails closed)", setup_hook},
    {"integrate", "at a terminal: wire an agent harness to write only through kaicoder", setup_integrate},
    {"mcp", "serve the Model Context Protocol on stdio: reads, proposals and waits as tools", setup_mcp},
    {"intake", "two-user mode: take the agent's spooled proposals in (--watch: as they arrive)", setup_intake},
    {"agent-user", "two-user mode: set the agent's own Unix user up (as root) or check it", setup_agent_user},
    {"doctor", "check config, store, changelog, backups, guardrails and installation", setup_doctor},
};

}  // namespace
}  // namespace kai::cmd

int main(int argc, char** argv) { return kai::cmd::entry_main(argc, argv, kai::cmd::k_commands); }
