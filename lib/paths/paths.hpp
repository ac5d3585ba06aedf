#pragma once
// Confinement and the never-write/never-read lists (SPEC §7). Every path a
// request names passes resolve() and then check_write()/check_read(); the
// write itself then goes through lib/paths/beneath.hpp so that a symlink swapped in
// after the check still cannot lead out of root.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "lib/paths/glob.hpp"
#include "lib/result.hpp"

namespace kai {

struct RootPath {
  std::string rel;            // normalised, '/'-separated, relative to root, no '.' or '..'
  std::filesystem::path abs;  // root / rel (root itself is canonical)
};

// What counts as never-write / never-read besides the built-ins. The
// built-ins (SPEC §7) are always applied; these only add.
struct Guardrails {
  std::string state_dir = ".kaicoder";                        // relative to root
  std::string changelog = "KAI-CODER-CHANGELOG.md";           // relative to root
  std::vector<std::string> config_files = {"kaicoder.toml"};  // kaicoder's own config, relative to root
  std::vector<std::string> deny_write;                        // [paths] deny_write
  std::vector<std::string> deny_read;                         // [paths] deny_read
  bool break_hardlinks = false;                               // [paths] hardlinks = "break"
  bool allow_unusual_names = false;                           // [paths] allow_unusual_names
};

// The folder that holds approval manifests, at the root of the repository
// (lib/certify/manifest); runs never change it (lib/run/confine).
inline constexpr std::string_view k_approvals_dir = "kaicoder-approvals";

// ".bak-kaicoder-" and the longest rollback id (lib/store/journal): a name longer
// than NAME_MAX minus this has no room for its backup.
constexpr size_t k_backup_suffix_max = 14 + 24;

// Resolve `user_path` (relative to `cwd`, or absolute) against `root`, which
// must be canonical (it is made canonical again, but that answer is kept per
// thread while `root` and it lead to the same folder). Refuses with Errc::denied and a message naming the rule:
// outside root (lexically, or on disk through a symlinked ancestor: realpath of
// the nearest existing ancestor must stay inside root), the root itself,
// `~` expansion attempts, control, bidi, zero-width and line-separator
// characters (lib/util/text.hpp; named as U+XXXX), a path that steps out of
// root and back in (`../<root-name>/x`: refused, not normalised), and with
// Errc::usage: empty, NUL, over-long names
// (a name over 255 bytes, a path over 4095), a parent that is not a folder,
// and a trailing '/' (or '/.', '/..') on anything but an existing folder.
// A final component that is a symlink is refused (a write would follow it),
// dangling or not. `..` is applied lexically, before the disk is consulted.
// The returned rel is the on-disk spelling: a symlinked ancestor inside root
// is replaced by its target (`docs -> .git` gives `.git/...`), so the
// never-write checks see the real location and lib/paths/beneath.hpp never has to
// follow a symlink. An absolute path reaching root through a symlinked alias
// of it (a symlinked home or /tmp) is accepted the same way. Reads only.
Result<RootPath> resolve(const std::filesystem::path& root, const std::filesystem::path& cwd,
                         std::string_view user_path);

// Errc::denied naming the rule when `p` is on the never-write list: .git/,
// the state dir, kaicoder-approvals/ (signed approvals), the changelog (and
// its archives), kaicoder's config,
// existing `*.bak*` backups (looked up at p.abs) and any `*.bak-kaicoder-*`
// name, .env/*.env/.env.* and other secret files (keys, credentials),
// node_modules/, target/, dist/, build/, plus g.deny_write. Then
// check_name().
Status check_write(const Guardrails& g, const RootPath& p);

// Whether a walk over the tree passes the folder `name` by: git's, the
// state dir, and the generated ones (is_generated_dir), which hold nothing
// of the person's own (no secret file of theirs, no backup of kaicoder's:
// it never writes there). The walks that load secret files for redaction
// and look for orphan backups; the sandbox's scan uses it too but enters
// build/ and dist/, where a build may copy a secret file (lib/run/confine.cpp).
bool walk_skips(const Guardrails& g, std::string_view name);

// Errc::denied for a name that is a trap rather than a file name: hidden
// characters or invalid UTF-8 anywhere; a component that starts with `-` or
// holds one of $ ` ; | & < > \ (shell syntax; allowed with
// g.allow_unusual_names); a final name too long to have a backup beside it
// (over 255 - k_backup_suffix_max bytes). Letters of any script are fine.
Status check_name(const Guardrails& g, std::string_view rel);

// Errc::denied for a file with `nlink` > 1 names, unless g.break_hardlinks:
// another name may lie outside root. kaicoder always writes a new file and
// renames it over the name, so with break_hardlinks the other names keep
// their bytes and only this one changes.
Status check_links(const Guardrails& g, std::string_view rel, unsigned long nlink);

// Errc::denied when `p` is a secret file or on g.deny_read.
Status check_read(const Guardrails& g, const RootPath& p);

// check_read(g, rel).ok() for the files a walk meets folder after folder
// (walk_tree, lib/util/fs.hpp): the same verdict, with what the path's
// folders match among the secret-file patterns worked out once for each
// folder instead of once for each file.
class ReadCheck {
public:
  explicit ReadCheck(const Guardrails& g) : m_g(g) {}
  bool readable(std::string_view rel);

private:
  const Guardrails& m_g;
  GlobSet::FolderMemo m_memo;
};

// True for secret files: .env, *.env, .env.*, private keys (id_rsa, *.pem,
// *.key, ...), credential files (.netrc, .npmrc, .pypirc, credentials*,
// auth.json, kubeconfig, *.tfvars, ...), at any depth. A name ending in
// .example, .sample or .template documents one and is not secret, unless it
// lies in a secret folder (.ssh/, .gnupg/).
bool is_secret_file(std::string_view rel);

}  // namespace kai
