#include "lib/team/origin.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/certify/decision.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/store/mac.hpp"
#include "lib/util/fs.hpp"

namespace kai::team {
namespace fs = std::filesystem;

Result<fs::path> team_dir(const Workspace& ws, bool make) {
  const fs::path dir = ws.store.dir() / "team";
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return make_error(Errc::denied,
                        fmt::format("'{}' is not a folder (a symlink?), which kaicoder never follows", dir.string()),
                        "remove it; kaicoder makes it again");
    return dir;
  }
  if (!make) return make_error(Errc::not_found, "no team folder yet");
  KAI_TRY(ws.store.ensure());
  KAI_TRY(make_dirs(dir, 0700));
  return dir;
}

Result<std::string> clone_origin(const Workspace& ws, bool make) {
  auto dir = team_dir(ws, make);
  if (!dir) return dir.error();
  const fs::path file = *dir / "origin";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(file, ec))) {
    auto text = read_owned(file);
    if (!text) return text.error();
    const size_t nl = text->find('\n');
    const std::string name = text->substr(0, nl);
    std::string mac = nl == std::string::npos ? "" : text->substr(nl + 1);
    while (!mac.empty() && mac.back() == '\n') mac.pop_back();
    const SealCheck verdict = ws.sealer.check("team-origin", "origin", name, mac);
    if (verdict != SealCheck::ok || !valid_origin(name))
      return seal_error(ws.sealer, verdict == SealCheck::ok ? SealCheck::bad : verdict,
                        fmt::format("this clone's origin name ({})", file.string()),
                        "if this state dir was copied from another clone, remove that file: kaicoder makes a new "
                        "name (proposals published under the old one can no longer be decided)");
    return name;
  }
  if (!make) return make_error(Errc::not_found, "this clone has no origin name yet");
  auto key = random_key();
  if (!key) return key.error();
  std::string name;
  for (size_t i = 0; i < 6; ++i) name += fmt::format("{:02x}", key->bytes[i]);
  auto mac = ws.sealer.seal("team-origin", "origin", name);
  if (!mac) return mac.error();
  KAI_TRY(write_file_exclusive(file, name + "\n" + *mac + "\n", 0600));
  return name;
}

}  // namespace kai::team
