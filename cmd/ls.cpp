// kaicoder ls: list a folder (or a glob beneath it) on an agent's behalf,
// confined to root.

#include "cmd/cli.hpp"
#include "lib/gate/reader.hpp"

namespace kai::cmd {

RunFn setup_ls(CLI::App& sub) {
  struct Args {
    std::string dir, glob;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("dir", a->dir, "folder to list (default: the working folder)");
  sub.add_option("--glob", a->glob, "every path beneath the folder matching this relative pattern");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    auto r = list_for_agent(**ws, s.env().cwd, a->dir, a->glob);
    if (!r) return report(s, r.error());
    if (s.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& e : r->entries)
        arr.push_back({{"path", e.path}, {"type", std::string(1, e.type)}, {"size", e.size}});
      emit(s, {{"entries", arr}, {"cut", r->cut}});
      return k_exit_ok;
    }
    Batch batch;  // a line per entry
    for (const auto& e : r->entries) out("{}  {:>10}  {}{}\n", e.type, e.size, e.path, e.type == 'd' ? "/" : "");
    if (r->cut) err("[listing cut at {} entries; narrow it with a folder or --glob]\n", r->entries.size());
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
