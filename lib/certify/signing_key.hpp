#pragma once
// Which SSH key signs for the person: one rule for `kaicoder certify` and
// for team decisions (lib/team), so a person has one key to set up.
//
//   1. git's user.signingkey, when gpg.format is "ssh" (the repository's
//      config, the owner's ~/.gitconfig and ~/.config/git/config, the
//      system's /etc/gitconfig: as git itself would sign a commit);
//   2. else [certify] signing_key in the owner's own config.toml;
//   3. else ~/.ssh/id_ed25519.
//
// "~/" means the owner's home from the password database, never $HOME.
// git's literal form "key::ssh-ed25519 AAAA…" names a public key whose
// private half an ssh-agent holds.

#include <filesystem>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "lib/certify/manifest.hpp"
#include "lib/result.hpp"

namespace kai {

struct SigningKey {
  std::filesystem::path file;  // a private key, or a public key ssh-agent holds the private half of
  std::string literal;         // or the public key itself (git's "key::" form)
  std::string from;            // where the choice came from, for messages
  // What a person is told they sign with.
  std::string shown() const;
};

// The key by the rule above. `start` is a folder in the repository (its
// config is read; none is fine), `home` the owner's home, `owner_dir` their
// kaicoder folder. Errc::usage when a config that names the key is
// malformed (file, line and key named).
Result<SigningKey> choose_signing_key(const std::filesystem::path& start, const std::filesystem::path& home,
                                      const std::filesystem::path& owner_dir);

// A value of git's config as git reads it in the repository holding
// `start` (the system's file, the owner's in `home`, the repository's own),
// never through the environment; "" when it is unset.
std::string git_config_value(const std::filesystem::path& start, const std::filesystem::path& home,
                             const std::string& name);

// The public key an armored SSH signature (ssh-keygen -Y sign) was made
// with, as the base64 blob a .pub file or an allowed-signers line holds;
// nullopt when the text is not such a signature.
std::optional<std::string> signature_public_key(std::string_view armored);

// The public keys (base64 blobs) the owner can sign with here: the key the
// rule above chooses (its .pub beside it, or the public key file itself),
// every ~/.ssh/*.pub, and the keys the ssh-agent that `tool` reaches holds
// (ssh-add -L). A key whose public half cannot be read is not listed. What
// a team decision signed where the proposal was made is checked against
// (lib/team): a key held here is a key the agent here can sign with.
std::vector<std::string> held_public_keys(const SshTool& tool, const std::filesystem::path& start,
                                          const std::filesystem::path& home, const std::filesystem::path& owner_dir);

// Sign `data` with `key` in namespace `ns` (lib/certify/manifest sign_data).
Result<std::string> sign_with(const SshTool& tool, const SigningKey& key, std::string_view data, std::string_view ns);

}  // namespace kai
