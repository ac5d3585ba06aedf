// kaicoder doctor: check config, store, changelog, backups, git state,
// guardrails, sandbox, isolation and installation. Never refuses to run.

#include "cmd/cli.hpp"
#include "cmd/progress.hpp"
#include "lib/doctor/doctor.hpp"

namespace kai::cmd {

RunFn setup_doctor(CLI::App& sub) {
  auto full = std::make_shared<bool>(false);
  sub.add_flag("--full", *full,
               "read every record, also those in archive buckets unchanged since doctor last read them");
  return [full](Session& s) {
    DoctorInput in;
    in.full = *full;
    in.env = s.env();
    in.clock = &s.clock();
    for (const char* d : {"/usr/local/share/man", "/usr/share/man"}) in.man_dirs.emplace_back(d);
    for (const char* f :
         {"/usr/local/share/bash-completion/completions/kaicoder", "/usr/share/bash-completion/completions/kaicoder",
          "/usr/local/share/zsh/vendor-completions/_kaicoder", "/usr/share/zsh/vendor-completions/_kaicoder",
          "/usr/local/share/fish/vendor_completions.d/kaicoder.fish"})
      in.completion_files.emplace_back(f);
    std::vector<Check> checks;
    {
      ProgressLine line;  // the backup scan walks the whole tree
      in.progress = line.callback();
      checks = run_doctor(in);
    }
    bool failed = false;
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& c : checks) {
      failed |= c.level == Level::fail;
      arr.push_back({{"name", c.name}, {"level", to_string(c.level)}, {"detail", c.detail}, {"fix", c.fix}});
    }
    if (s.json()) {
      if (!failed) return emit(s, {{"checks", arr}});
      return emit(s, {{"checks", arr}}, k_exit_error,
                  make_error(Errc::io, "a check failed", "see the checks whose level is fail and their fix"));
    }
    for (const auto& c : checks) {
      const char* color = !s.color()               ? ""
                          : c.level == Level::ok   ? "\x1b[32m"
                          : c.level == Level::warn ? "\x1b[33m"
                                                   : "\x1b[31m";
      out("{}{:<4}{}  {:<20}  {}\n", Trusted{color}, to_string(c.level), Trusted{s.color() ? "\x1b[0m" : ""}, c.name,
          c.detail);
      if (c.level != Level::ok && !c.fix.empty()) out("      {:<20}  fix: {}\n", "", c.fix);
    }
    return failed ? k_exit_error : k_exit_ok;
  };
}

}  // namespace kai::cmd
