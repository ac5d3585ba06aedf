#include "lib/certify/signing_key.hpp"

#include <fmt/format.h>
#include <git2.h>

#include "lib/config/config.hpp"
#include "lib/run/runner.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/git_tree.hpp"
#include "lib/util/text.hpp"

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

// The base64 blob of a public key line ("ssh-ed25519 AAAA… comment"), or
// "" when the line is not one.
std::string key_blob(std::string_view line) {
  const size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return {};
  std::string_view rest = line.substr(sp + 1);
  rest = rest.substr(0, rest.find_first_of(" \t\r\n"));
  if (rest.empty() || !base64_decode(rest)) return {};
  return std::string(rest);
}

void add_key_lines(std::string_view text, std::vector<std::string>& out) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.starts_with("#")) continue;
    if (std::string b = key_blob(line); !b.empty()) out.push_back(std::move(b));
  }
}

void add_pub_file(const fs::path& file, std::vector<std::string>& out) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return;
  if (auto text = read_file(file, 64 * 1024)) add_key_lines(*text, out);
}

// A string of the SSH wire format at `pos`: a 4-byte big-endian length
// and the bytes.
std::optional<std::string_view> wire_string(std::string_view b, size_t& pos) {
  if (b.size() - pos < 4 || pos > b.size()) return std::nullopt;
  const uint32_t n = (uint32_t{static_cast<unsigned char>(b[pos])} << 24) |
                     (uint32_t{static_cast<unsigned char>(b[pos + 1])} << 16) |
                     (uint32_t{static_cast<unsigned char>(b[pos + 2])} << 8) |
                     uint32_t{static_cast<unsigned char>(b[pos + 3])};
  pos += 4;
  if (b.size() - pos < n) return std::nullopt;
  std::string_view s = b.substr(pos, n);
  pos += n;
  return s;
}

}  // namespace

std::optional<std::string> signature_public_key(std::string_view armored) {
  constexpr std::string_view head = "-----BEGIN SSH SIGNATURE-----";
  constexpr std::string_view tail = "-----END SSH SIGNATURE-----";
  const size_t b = armored.find(head);
  const size_t e = armored.find(tail);
  if (b == std::string_view::npos || e == std::string_view::npos || e < b) return std::nullopt;
  std::string body;
  for (char c : armored.substr(b + head.size(), e - b - head.size()))
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') body.push_back(c);
  auto bytes = base64_decode(body);
  // "SSHSIG", a uint32 version, then the public key as a wire string.
  if (!bytes || bytes->size() < 10 || !std::string_view(*bytes).starts_with("SSHSIG")) return std::nullopt;
  size_t pos = 10;
  auto key = wire_string(*bytes, pos);
  if (!key || key->empty()) return std::nullopt;
  return base64_encode(*key);
}

std::vector<std::string> held_public_keys(const SshTool& tool, const fs::path& start, const fs::path& home,
                                          const fs::path& owner_dir) {
  std::vector<std::string> out;
  if (auto key = choose_signing_key(start, home, owner_dir)) {
    if (!key->literal.empty()) {
      add_key_lines(key->literal, out);
    } else if (key->file.extension() == ".pub") {
      add_pub_file(key->file, out);
    } else {
      add_pub_file(fs::path(key->file.string() + ".pub"), out);
      add_pub_file(key->file, out);  // a public key named without .pub
    }
  }
  std::error_code ec;
  if (!home.empty())
    for (fs::directory_iterator it(home / ".ssh", ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".pub") add_pub_file(it->path(), out);
  RunSpec spec;
  spec.argv = {"ssh-add", "-L"};
  spec.cwd = tool.tmp_parent;
  spec.env = tool.env;
  spec.timeout = tool.timeout;
  spec.sandbox = SandboxMode::none;  // a system tool that only lists
  if (auto r = run_command(spec); r && r->exit_code == 0) add_key_lines(r->out, out);
  return out;
}

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
