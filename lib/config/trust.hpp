#pragma once
// Trusted roots (SPEC §1), like `direnv allow`: kaicoder governs only a
// folder its owner trusted at a terminal, and only while its kaicoder.toml
// holds the bytes the owner saw. A cloned repository's committed
// kaicoder.toml, or one changed by a run or a `git pull`, is not trusted
// until the owner runs `kaicoder trust` again.
//
// The list lives in the owner's own kaicoder folder (Env::user_config_dir,
// found through the password database, never $HOME or XDG_*):
//   trusted-roots.json   {"version": 1, "roots": [{"root", "digest", "trusted_at", "copy"}]}
//   trusted/<id>.toml    the bytes that were trusted, so a change can be shown as a diff
//   trusted-roots.lock   flock held while the list is rewritten
// `root` is canonical (realpath); `digest` is the git blob id of kaicoder.toml.
//
//   TrustList list(env.user_config_dir);
//   auto found = find_trusted_root(env);        // every gated command
//   auto review = review_trust(env);            // `kaicoder trust`: what to show
//   list.record(review->root, review->current, now);  // after the owner said yes

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/result.hpp"

namespace kai {

struct Env;

enum class Trust {
  trusted,  // listed, and kaicoder.toml holds the trusted bytes
  changed,  // listed, but kaicoder.toml changed (or is gone) since
  unknown,  // never trusted
};

struct TrustedRoot {
  std::filesystem::path root;
  std::string digest;      // blob id of the trusted kaicoder.toml
  std::string trusted_at;  // ISO UTC
  std::string copy;        // file under trusted/ with those bytes
};

class TrustList {
public:
  explicit TrustList(std::filesystem::path owner_dir) : m_dir(std::move(owner_dir)) {}

  // Every listed root. A missing list is empty; a malformed one is
  // Errc::io (nothing is trusted until it is fixed: fail closed).
  Result<std::vector<TrustedRoot>> load() const;
  // The entry for canonical `root`, if listed.
  Result<std::optional<TrustedRoot>> find(const std::filesystem::path& root) const;
  // The bytes last trusted for `root`, when kept.
  std::optional<std::string> trusted_bytes(const TrustedRoot& r) const;
  // Trust canonical `root` with its kaicoder.toml holding `bytes`: a copy of
  // the bytes, then the list rewritten atomically under the lock (mode 600,
  // the folder 700).
  Status record(const std::filesystem::path& root, std::string_view bytes, std::string_view now_iso);

  const std::filesystem::path& dir() const { return m_dir; }

private:
  std::filesystem::path m_dir;
};

// The digest recorded for kaicoder.toml's bytes.
std::string config_digest(std::string_view bytes);

// kaicoder.toml of `root` as it is now: nullopt when absent. Errc::io when it
// cannot be read, Errc::denied when it is not a regular file.
Result<std::optional<std::string>> read_root_config(const std::filesystem::path& root);

// `--root DIR` (env.root_override, which must be set) made canonical.
// Errc::usage when it is not a folder, Errc::denied for `/`.
Result<std::filesystem::path> canonical_root_option(const Env& env);

struct TrustedRootFound {
  std::filesystem::path root;         // canonical
  std::optional<std::string> config;  // kaicoder.toml's bytes, whose digest matched
};

// The root a gated command works in (SPEC §1): `--root DIR` when it names a
// trusted root, else the nearest trusted root upward from the working
// directory (an untrusted kaicoder.toml on the way is ignored). Errc::denied,
// with a hint to run `kaicoder trust` at a terminal, when there is none, when
// `--root` names anything else (`/`, a subfolder of a root), or when the
// root's kaicoder.toml changed since it was trusted. Errc::usage when
// `--root` is not a folder.
Result<TrustedRootFound> find_trusted_root(const Env& env);

// The root doctor reports on: like find_trusted_root, but never refuses:
// the nearest trusted root, else the nearest folder with kaicoder.toml, else
// the git work tree, else the working directory. `trust` says how it stands.
struct AnyRoot {
  std::filesystem::path root;
  Trust trust = Trust::unknown;
};
AnyRoot find_any_root(const Env& env);

// What `kaicoder trust` shows before it asks.
struct TrustReview {
  std::filesystem::path root;  // canonical
  Trust state = Trust::unknown;
  std::string current;                  // kaicoder.toml now
  std::optional<std::string> previous;  // the bytes trusted before, when known
};

// The root `kaicoder trust` would trust: `--root DIR`, else the nearest
// folder upward with a kaicoder.toml. Errc::usage when there is none, or
// `--root` is `/` or not a folder; Errc::denied when kaicoder.toml is not a
// regular file.
Result<TrustReview> review_trust(const Env& env);

// Record what the owner was shown in `review`; Errc::conflict when
// kaicoder.toml changed since it was read (nothing is recorded).
Status accept_trust(const Env& env, const TrustReview& review, std::string_view now_iso);

}  // namespace kai
