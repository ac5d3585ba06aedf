#include "lib/config/setup.hpp"

#include <fmt/format.h>

#include "lib/config/config.hpp"
#include "lib/store/mac.hpp"
#include "lib/store/store.hpp"
#include "lib/config/trust.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

Result<fs::path> init_target(const Env& env) {
  if (env.config_override)
    return make_error(Errc::usage, "init takes no --config: it always writes <root>/kaicoder.toml",
                      "--config names a file that only adds restrictions; leave it out");
  std::error_code ec;
  fs::path root;
  if (env.root_override) {
    auto r = canonical_root_option(env);
    if (!r) return r.error();
    root = *r;
  } else {
    const fs::path start = fs::canonical(env.cwd, ec);
    if (ec) return make_error(Errc::io, fmt::format("cannot resolve '{}': {}", env.cwd.string(), ec.message()));
    auto found = nearest_holding(start, "kaicoder.toml");
    if (!found) found = nearest_holding(start, ".git");
    root = found ? *found : start;
  }
  if (root == root.root_path())
    return make_error(Errc::denied, "the filesystem root is never a kaicoder root", "run init at the top of your tree");
  fs::path config = root / "kaicoder.toml";
  if (fs::exists(fs::symlink_status(config, ec)))
    return make_error(Errc::conflict,
                      fmt::format("'{}' already exists; kaicoder init never overwrites it", config.string()),
                      "to trust the kaicoder.toml that is there, run `kaicoder trust` at a terminal");
  return root;
}

Result<InitResult> init_tree(const Env& env, const fs::path& root, std::string_view now_iso) {
  const fs::path config = root / "kaicoder.toml";
  const std::string config_text = default_config_text();
  // The key that seals records (lib/store/mac): one per owner, made once.
  if (auto key = create_key(env.user_config_dir); !key) return key.error();
  KAI_TRY(write_file_exclusive(config, config_text, 0644));
  KAI_TRY(TrustList(env.user_config_dir).record(root, config_text, now_iso));
  KAI_TRY(Store(root / ".kaicoder").ensure());
  InitResult out{root, config, {}};
  fs::path gi = root / ".gitignore";
  std::string text;
  if (auto t = read_file(gi)) text = *t;
  std::string add;
  for (const char* line : {".kaicoder/", "*.bak-kaicoder-*"}) {
    bool present =
        text.find(std::string("\n") + line + "\n") != std::string::npos || text.rfind(std::string(line) + "\n", 0) == 0;
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
