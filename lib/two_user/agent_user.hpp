#pragma once
// Two-user mode (kaicoder-agent-user(1)): the agent runs as a Unix user of
// its own that can read the tree but write none of it, and reaches the
// owner only through the spool (lib/store/spool, lib/two_user/intake). This room holds
// what the mode decides outside the spool itself:
//
//   - which side of the boundary a process is on (find_agent_side): a
//     process whose uid does not own the store it finds, where a spool
//     exists, is the agent's, and may only propose and read;
//   - what the agent user can reach (agent_access), for `agent-user check`
//     and `doctor`, judged from mode bits, group membership and POSIX
//     access ACLs (lib/util/acl);
//   - setting the mode up (apply_setup), as root.
//
// The mode itself is `[two_user] agent = "NAME"` in the owner's config or
// the trusted kaicoder.toml (lib/two_user/intake two_user).

#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "lib/paths/paths.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"

namespace kai {

struct Env;
class Workspace;

// The store a process of `uid` finds from env.root_override (that folder
// only) or upward from env.cwd: the first folder with a .kaicoder/. It is
// the agent's side when .kaicoder/ belongs to another uid and has a spool.
struct AgentSide {
  std::filesystem::path root;
  uid_t owner = 0;  // who owns the store
};
std::optional<AgentSide> find_agent_side(const Env& env, uid_t uid);

// A Unix user as the kernel judges its access: uid and every group.
struct UnixUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::filesystem::path home;
};
// From the password and group databases; not_found when there is no such user.
Result<UnixUser> lookup_user(const std::string& name);
// The same for a uid (name "uid<N>" and no groups but its own when unknown).
UnixUser lookup_uid(uid_t uid);

// What `who` can do to what lies under `root`, from mode bits and access
// ACLs (a user:NAME or group entry, within the mask): files and folders it can write (a folder: create, rename, remove
// in it), secret files it can read (by the never-read rules of `guards`), and the owner's folder and key if it can read
// or write them. The spool it is meant to write is not listed; paths are sorted. Walks at most 200000 names.
struct AgentAccess {
  bool reaches_root = false;          // it can pass through every folder down to root
  std::vector<std::string> writable;  // root-relative ('.' for root itself), or absolute outside it
  std::vector<std::string> secrets_readable;
  std::vector<std::string> owner_dir;  // the owner's folder or key, readable or writable by it
  bool cut_short = false;              // the walk stopped at its limit
  // The boundary holds: it can write nothing, read no secret file, reach
  // nothing of the owner's folder.
  bool holds() const { return writable.empty() && secrets_readable.empty() && owner_dir.empty(); }
};
AgentAccess agent_access(const std::filesystem::path& root, const Guardrails& guards, const UnixUser& who,
                         const std::filesystem::path& owner_dir);

// Whether `who` can read the file at `p` (passing through every folder
// above it); true when there is nothing there (nothing of it to show).
bool user_may_read(const std::filesystem::path& p, const UnixUser& who);

// The level in one plain line: "two-user: the agent cannot write the tree
// or approve", or what agent `name` can still write or read, naming the
// first few paths.
std::string two_user_level(const AgentAccess& a, const std::string& name);

// The owner's kaicoder folder: <home from the password database>/.config/kaicoder.
std::filesystem::path owner_dir_of(uid_t uid);
// That of the uid owning <root>/.kaicoder (the caller's own when there is none).
std::filesystem::path store_owner_dir(const std::filesystem::path& root);

// The folder whose .kaicoder/ the setup governs: `start` or the nearest
// folder above it holding one. not_found when there is none.
Result<std::filesystem::path> store_root(const std::filesystem::path& start);
// Whether `name` is a user name useradd accepts (letters, digits, '_', '-';
// starts with a letter or '_'; at most 32).
bool valid_user_name(const std::string& name);

// Set two-user mode up for `root` with agent user `name` (needs root):
// create the user and its group unless they exist, make the tree readable
// and not writable by it, secret files unreadable by it, the spool,
// tickets/ and status/ folders, .kaicoder/ passable (0711), the owner's
// folder private, and `[two_user] agent` in the owner's config. Idempotent.
// `done` lists each step carried out. denied when not root; conflict when
// the owner's config names another agent; io on a system error.
Status apply_setup(const std::filesystem::path& root, const std::string& name, const Guardrails& guards,
                   std::vector<std::string>& done);

}  // namespace kai
