// kaicoder log: changelog entries, newest first. Only reads: no sweep, no hook.

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "cmd/pager.hpp"
#include "cmd/render.hpp"
#include "lib/gate/decide.hpp"

namespace kai::cmd {

RunFn setup_log(CLI::App& sub) {
  struct Args {
    size_t n = 20;
    std::string kind, file;
    bool full = false, no_pager = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("-n", a->n, "how many entries (0 = all)")->check(whole_number(0, 1000000000));
  sub.add_option("--kind", a->kind, "only entries of this kind")
      ->check(CLI::IsMember(
          {"edit", "write", "delete", "changeset", "run", "rollback", "rejected", "timeout", "blocked", "failed"}));
  sub.add_option("--file", a->file, "only entries that touched this file");
  sub.add_flag("--full", a->full, "print the entries as markdown");
  sub.add_flag("--no-pager", a->no_pager, "never page the output (default: page it on a terminal)");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    std::string abs_file;
    if (!a->file.empty()) {
      std::filesystem::path f = a->file;
      abs_file = (f.is_absolute() ? f : s.env().cwd / f).lexically_normal().string();
    }
    auto keep = [&](const Entry& e) {
      if (!a->kind.empty() && e.kind != a->kind) return false;
      if (!abs_file.empty() && std::find(e.files.begin(), e.files.end(), abs_file) == e.files.end()) return false;
      return true;
    };
    auto entries = (*ws)->changelog.newest(a->n, keep);
    if (!entries) return report(s, entries.error());
    if (s.json()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& e : *entries) arr.push_back(entry_object(e));
      emit(s, {{"entries", arr}});
      return k_exit_ok;
    }
    Pager pager(s, a->no_pager ? Paging::off : Paging::automatic);
    if (entries->empty()) out("no changelog entries\n");
    Batch batch;  // a line per entry
    for (const auto& e : *entries) {
      if (a->full) {
        out("{}", Lines{format_entry(e)});
        continue;
      }
      std::string files;
      for (const auto& f : e.files) {
        std::filesystem::path rel = std::filesystem::path(f).lexically_relative((*ws)->root);
        files += (files.empty() ? "" : ", ") + (rel.empty() ? f : rel.string());
      }
      out("{:<18}  {:<8}  {:<28}  {}\n", e.rollback_id, e.kind, files, e.summary);
    }
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
