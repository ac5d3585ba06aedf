#include "lib/setup.hpp"

#include <fmt/format.h>

#include "lib/config.hpp"
#include "lib/mac.hpp"
#include "lib/store.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

Result<InitResult> init_tree(const Env& env) {
  std::error_code ec;
  fs::path root;
  if (env.root_override) {
    root = env.root_override->is_absolute() ? *env.root_override : env.cwd / *env.root_override;
    if (!fs::is_directory(root, ec))
      return make_error(Errc::usage, fmt::format("--root '{}' is not a folder", env.root_override->string()));
    root = fs::canonical(root, ec);
  } else {
    root = find_root(env.cwd);
  }
  fs::path config = env.config_override ? (env.config_override->is_absolute() ? *env.config_override : env.cwd / *env.config_override)
                                        : root / "kaicoder.toml";
  // The key that seals records (lib/mac): one per owner, made once, kept
  // even when this tree was initialised before.
  auto key = create_key(env.user_config_dir);
  if (!key) return key.error();
  if (fs::exists(fs::symlink_status(config, ec)))
    return make_error(Errc::conflict, fmt::format("'{}' already exists; kaicoder init never overwrites it", config.string()),
                      "edit it by hand, or move it aside and run init again (kaicoder's key is in place either way)");
  KAI_TRY(write_file_exclusive(config, default_config_text(), 0644));
  KAI_TRY(Store(root / ".kaicoder").ensure());
  InitResult out{root, config, {}};
  fs::path gi = root / ".gitignore";
  std::string text;
  if (auto t = read_file(gi)) text = *t;
  std::string add;
  for (const char* line : {".kaicoder/", "*.bak-kaicoder-*"}) {
    bool present = text.find(std::string("\n") + line + "\n") != std::string::npos || text.rfind(std::string(line) + "\n", 0) == 0;
    if (!present) {
      add += std::string(line) + "\n";
      out.gitignore_added.push_back(line);
    }
  }
  if (!add.empty()) {
    if (!text.empty() && text.back() != '\n') text += '\n';
    KAI_TRY(write_file_atomic(gi, text + add, 0644));
  }
  return out;
}

}  // namespace kai
