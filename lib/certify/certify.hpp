#pragma once
// Certification of protected paths (`kaicoder verify`, `kaicoder certify`):
// between a base commit and a head, every change to a certified path must be
// covered by an approval manifest under kaicoder-approvals/ carrying a valid
// SSH signature of an allowed signer (lib/certify/manifest).
//
// The trust anchor is the base: `[certify] paths` and the allowed-signers
// file are read from the base commit's tree, never from the head or the work
// tree, so a change can neither add its own signer nor drop a path from the
// list. kaicoder.toml and the allowed-signers file are certified paths
// themselves whenever `[certify] paths` is not empty. Paths under
// kaicoder-approvals/ are never certified: a manifest counts only through
// its signature.
//
// Everything here only reads: the repository is opened with libgit2 from any
// folder inside it, initialised by kaicoder or not; nothing is written
// except private temporary files for ssh-keygen (and, for certify, the new
// manifest and its signature).
//
// Usage: auto c = check_certification(req);        // verify, doctor
//        Manifest m = draft_manifest(*c);           // certify: what to sign
//        auto name = write_signed_manifest(*c, m, key, ssh, now);

#include <filesystem>
#include <string>
#include <vector>

#include "lib/certify/manifest.hpp"
#include "lib/certify/signing_key.hpp"
#include "lib/result.hpp"
#include "lib/util/time.hpp"

struct git_repository;
struct git_commit;

namespace kai {

enum class WorkTree { no, yes };

struct CertifyRequest {
  std::filesystem::path start;       // a folder inside the repository (cwd or --root)
  std::string base, head;            // revisions from the command line; empty = the defaults
  WorkTree worktree = WorkTree::no;  // compare the base with the work tree (uncommitted changes too)
  SshTool ssh;
};

// One change of a certified path between base and head.
struct CertChange {
  std::string kind;                      // content, mode, add, delete, rename, copy
  std::string path;                      // the resulting path; for a delete, the removed one
  std::string from;                      // rename and copy: the source path
  std::string detail;                    // e.g. "executable bit set", "file became a symlink"
  std::string old_mode, new_mode, blob;  // git's octal modes and the resulting blob id ("" when deleted)
  std::vector<Binding> needs;            // what signed manifests must bind for the change to be covered
  bool covered = false;
  std::string signer;      // who signed it, when covered
  std::string reason;      // why not, when not covered
  std::string commit;      // the commit that introduced it; "" when uncommitted or not found
  std::string introduced;  // "<short id> <summary>", "uncommitted", or "unknown: <why>"
};

struct ManifestCheck {
  std::string path;     // e.g. kaicoder-approvals/20260709T142530Z-3f2a.toml
  std::string where;    // "head" or "work tree"
  std::string signer;   // the allowed signer, when valid
  std::string problem;  // empty when the signature is valid and the manifest parses
  size_t entries = 0;
};

struct Certification {
  std::filesystem::path workdir;  // the work tree; empty for a bare repository
  std::string base, head;         // commit ids
  std::string base_from;          // how the base was chosen, in words
  bool worktree = false;
  std::vector<std::string> paths;  // [certify] paths as read from the base
  std::string allowed_signers;     // path of the allowed-signers file, from the base config
  std::string signers_text;        // its bytes at the base
  std::string signers_problem;     // why no signature can count; empty when the file is there
  std::vector<CertChange> changes;
  std::vector<ManifestCheck> manifests;
  size_t uncovered() const;
};

// The allowed signers named by `[certify] allowed_signers` in the
// kaicoder.toml of `commit`, read from that commit: the trust anchor of
// verify's base, and of a team decision on a proposal made against
// `commit` (lib/team). `problem` says why no signature can count (no such
// key, no such file there). Errc::usage for a malformed kaicoder.toml there.
struct SignersAt {
  std::string path, text, problem;
};
Result<SignersAt> signers_at(git_repository* repo, git_commit* commit);

// Compare base with head (or the work tree) and check every change of a
// certified path against the signed manifests of the head (and the work
// tree). Errors: usage when no repository holds `start`, a revision does
// not resolve to a commit (the hint mentions shallow checkouts), or the
// base's kaicoder.toml is malformed; io when libgit2 or ssh-keygen fails.
// Uncovered changes are not an error: see Certification::uncovered().
Result<Certification> check_certification(const CertifyRequest& req);

// A manifest binding every result that no signed manifest covers yet.
Manifest draft_manifest(const Certification& c);

// Sign `m` with `key` (lib/certify/signing_key), check the signature against the base's allowed
// signers, and create kaicoder-approvals/<stamp>-<head>.toml and its .sig
// in the work tree (exclusively, never through a symlink). Returns the
// manifest's path relative to the work tree. Errors: denied when the key is
// not an allowed signer at the base (nothing is written); conflict when the
// name exists; usage for a bare repository; io when signing fails.
Result<std::string> write_signed_manifest(const Certification& c, const Manifest& m, const SigningKey& key,
                                          const SshTool& ssh, TimePoint now);

}  // namespace kai
