#pragma once
// Approval manifests for `kaicoder verify` and `kaicoder certify`: the TOML
// file under kaicoder-approvals/ that binds each certified path to what it
// must be after a change, and the detached SSH signature beside it
// (`<name>.toml.sig`, made by `ssh-keygen -Y sign -n kaicoder`).
//
// A manifest:
//
//   version = 1
//   base = "<commit>"          # optional, for the reader: what was compared
//   head = "<commit>"          # optional
//   [[change]]
//   path = "tests/acceptance/a.txt"
//   kind = "modify"            # add, modify, mode or delete
//   blob = "<40 or 64 hex>"    # not for delete
//   mode = "100644"            # 100644, 100755, 120000 or 160000; not for delete
//
// ssh-keygen runs through lib/run/runner: argv, no shell, a time limit, a fixed
// PATH (the caller's PATH could name a look-alike that always says yes), and
// files handed to it in a private temporary folder.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/paths/paths.hpp"
#include "lib/result.hpp"

struct git_repository;
struct git_tree;

namespace kai {

// One path and what it is after the change: a blob and a mode, or deleted.
struct Binding {
  std::string path;
  std::string kind;  // add, modify, mode, delete: for the reader; coverage compares the result only
  std::string blob;  // empty when deleted
  std::string mode;  // git's octal file mode; empty when deleted
  bool deleted() const { return blob.empty(); }
  bool same_result(const Binding& o) const { return path == o.path && blob == o.blob && mode == o.mode; }
};

struct Manifest {
  std::string base, head;
  std::vector<Binding> changes;
};

// Strict: a TOML error, an unknown key, a missing or malformed field, a
// path that is not a clean repository path, or no change at all is
// Errc::usage naming `origin` and the line.
Result<Manifest> parse_manifest(std::string_view text, const std::string& origin);

// The text parse_manifest reads back.
std::string format_manifest(const Manifest& m);

// A manifest (a *.toml under kaicoder-approvals/) and its signature, if any,
// as found in a tree or in the work tree.
struct FoundManifest {
  std::string path;   // e.g. kaicoder-approvals/x.toml
  std::string where;  // "head" or "work tree"
  std::string text;
  std::optional<std::string> sig;  // <path>.sig
};

// Every manifest of `tree` (regular files only; a symlink is not one).
// Errc::io when libgit2 cannot read them.
Status manifests_in_tree(git_repository* repo, git_tree* tree, std::vector<FoundManifest>& out);

// Every manifest under <workdir>/kaicoder-approvals/, symlinks skipped.
// Unreadable files are skipped: they cover nothing.
void manifests_in_workdir(const std::filesystem::path& workdir, std::vector<FoundManifest>& out);

// How ssh-keygen is run.
struct SshTool {
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"};
  std::chrono::seconds timeout{60};
  std::filesystem::path tmp_parent = "/tmp";  // where the private folders go
};

// The namespace every approval manifest is signed in (ssh-keygen -n).
inline constexpr std::string_view k_signature_namespace = "kaicoder";
// The namespace of team decisions (lib/certify/decision): a signature made
// for one kind of object never counts for the other.
inline constexpr std::string_view k_decision_namespace = "kaicoder-decision";

// The principal of `allowed_signers` whose key signed `data` (signature
// `sig`, armored) in namespace `ns` (the manifests' by default). Errc::denied when the signature
// is not valid or no allowed signer made it (the message says which);
// Errc::io when ssh-keygen cannot be run. Disk: a private temp folder, removed.
Result<std::string> verify_signature(const SshTool& tool, std::string_view allowed_signers, std::string_view data,
                                     std::string_view sig, std::string_view ns = k_signature_namespace);

// Sign `data` with the key in `key` (a private key, or a public key whose
// private half an ssh-agent holds) in namespace `ns`. Returns the armored
// signature. Errc::io when ssh-keygen fails (its message is passed on).
Result<std::string> sign_data(const SshTool& tool, const std::filesystem::path& key, std::string_view data,
                              std::string_view ns = k_signature_namespace);

}  // namespace kai
