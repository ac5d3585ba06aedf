#include "lib/certify/signing_key.hpp"

#include <fmt/format.h>
#include <git2.h>

#include "lib/config/config.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/git_tree.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

using ConfigPtr = GitOwned<git_config, git_config_free>;

// git's config as git reads it for `start`, without the environment: the
// system file, the owner's files in `home`, the repository's own.
ConfigPtr git_config_for(const fs::path& start, const fs::path& home) {
  git_init_once();
  git_config* raw = nullptr;
  if (git_config_new(&raw) != 0) return ConfigPtr{};
  ConfigPtr cfg(raw);
  std::error_code ec;
  auto add = [&](const fs::path& file, git_config_level_t level, git_repository* repo) {
    if (fs::is_regular_file(file, ec)) (void)git_config_add_file_ondisk(raw, file.c_str(), level, repo, 0);
  };
  add("/etc/gitconfig", GIT_CONFIG_LEVEL_SYSTEM, nullptr);
  if (!home.empty()) {
    add(home / ".config" / "git" / "config", GIT_CONFIG_LEVEL_XDG, nullptr);
    add(home / ".gitconfig", GIT_CONFIG_LEVEL_GLOBAL, nullptr);
  }
  git_repository* rr = nullptr;
  if (git_repository_open_ext(&rr, start.c_str(), 0, nullptr) == 0) {
    RepoPtr repo(rr);
    add(fs::path(git_repository_path(rr)) / "config", GIT_CONFIG_LEVEL_LOCAL, rr);
  }
  return cfg;
}

std::string config_string(git_config* cfg, const char* name) {
  if (!cfg) return {};
  git_buf buf = GIT_BUF_INIT;
  std::string out;
  if (git_config_get_string_buf(&buf, cfg, name) == 0) out.assign(buf.ptr, buf.size);
  git_buf_dispose(&buf);
  return out;
}

fs::path in_home(const fs::path& home, const std::string& value) {
  if (value.starts_with("~/")) return home / value.substr(2);
  return fs::path(value);
}

}  // namespace

std::string git_config_value(const fs::path& start, const fs::path& home, const std::string& name) {
  ConfigPtr git = git_config_for(start, home);
  return config_string(git.get(), name.c_str());
}

std::string SigningKey::shown() const {
  if (!literal.empty()) return fmt::format("the key {}… held by ssh-agent", literal.substr(0, 40));
  return file.string();
}

Result<SigningKey> choose_signing_key(const fs::path& start, const fs::path& home, const fs::path& owner_dir) {
  ConfigPtr git = git_config_for(start, home);
  if (config_string(git.get(), "gpg.format") == "ssh") {
    const std::string v = config_string(git.get(), "user.signingkey");
    if (v.starts_with("key::")) return SigningKey{{}, v.substr(5), "git's user.signingkey"};
    if (v.starts_with("ssh-") || v.starts_with("ecdsa-") || v.starts_with("sk-"))
      return SigningKey{{}, v, "git's user.signingkey"};
    if (!v.empty()) {
      fs::path p = in_home(home, v);
      if (p.is_relative()) p = start / p;
      return SigningKey{p, {}, "git's user.signingkey"};
    }
  }
  auto own = load_config({ConfigFile(owner_dir / "config.toml")});
  if (!own) return own.error();
  if (!own->signing_key.empty())
    return SigningKey{in_home(home, own->signing_key), {}, "[certify] signing_key in your config"};
  return SigningKey{home / ".ssh" / "id_ed25519", {}, "the default key"};
}

Result<std::string> sign_with(const SshTool& tool, const SigningKey& key, std::string_view data, std::string_view ns) {
  if (key.literal.empty()) return sign_data(tool, key.file, data, ns);
  auto dir = PrivateTempDir::make(tool.tmp_parent, "kaicoder-key");
  if (!dir) return dir.error();
  const fs::path pub = dir->path() / "key.pub";
  KAI_TRY(write_file_exclusive(pub, key.literal + "\n", 0600));
  return sign_data(tool, pub, data, ns);
}

}  // namespace kai
