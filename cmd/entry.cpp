// The entry every kaicoder program shares (cmd/entry.hpp): the global
// options, the command table it is given, the only catch, and the mapping
// to exit codes.

#include "cmd/entry.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <malloc.h>
#include <pwd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include "cmd/usage.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/text.hpp"
#include "lib/version.hpp"

namespace kai::cmd {
namespace {

Env make_env(const Options& o) {
  Env env;
  std::error_code ec;
  env.cwd = std::filesystem::current_path(ec);
  if (!o.root.empty()) env.root_override = o.root;
  if (!o.config.empty()) env.config_override = o.config;
  // The owner's folder comes from the password database: $HOME and XDG_*
  // are set by whoever started us, which may be the agent. One look-up.
  const uid_t uid = ::getuid();
  const passwd* pw = ::getpwuid(uid);
  if (pw && pw->pw_dir && *pw->pw_dir) {
    env.home = pw->pw_dir;
    env.user_config_dir = std::filesystem::path(pw->pw_dir) / ".config" / "kaicoder";
  } else {
    env.user_config_dir = "/nonexistent/kaicoder";  // no home: no owner config, nothing trusted
  }
  env.user = pw && pw->pw_name ? std::string(pw->pw_name) : fmt::format("uid{}", uid);
  env.self_exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos)
      env.vars.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

// Whether --json was asked for, looked up in argv itself: when parsing
// fails, the parser may not have reached it.
bool wants_json(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a(argv[i]);
    if (a == "--") break;
    if (a == "--json") return true;
  }
  return false;
}

int run_main(int argc, char** argv, std::span<const CommandSpec> commands) {
  CLI::App app{"kaicoder — propose, approve, apply, log and roll back changes made for coding agents"};
  app.name("kaicoder");
  app.set_version_flag("-v,--version", "kaicoder " + std::string(kai::version()));
  app.require_subcommand(1);
  app.fallthrough();
  app.footer(
      "kaicoder help COMMAND (or kaicoder COMMAND --help) explains one command; man kaicoder explains them all.");
  Options opts;
  opts.argv.assign(argv, argv + argc);
  app.add_option("--root", opts.root,
                 "the trusted root to work in (default: the nearest trusted root above the working directory)");
  app.add_option(
      "--config", opts.config,
      "extra config that may only add restrictions (deny/ask rules, deny_read, deny_write, protected, confirm)");
  app.add_flag("--json", opts.json, "print one JSON object on stdout");
  app.add_flag("--no-color", opts.no_color, "never colour output (also NO_COLOR)");
  app.add_option("--color", opts.color, "colour output: auto, always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  std::vector<std::string> verbs;
  for (const auto& c : commands) verbs.emplace_back(c.name);
  Invocation inv = read_invocation(argc, argv, verbs);
  // A process runs one command: only the one typed is made, with its
  // options. With none typed (the overview, or a usage error) every command
  // is named, without options, for the overview's list. A word that names
  // no command is refused before this (read_invocation matches it against
  // `verbs`). Naming the other two dozen cost a fifth of a dry run's
  // instructions.
  std::vector<std::pair<CLI::App*, RunFn>> subs;
  for (const auto& c : commands) {
    if (!inv.typed.empty() && c.name != inv.typed) continue;
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    if (c.name == inv.typed) subs.emplace_back(sub, c.setup(*sub));
  }
  // A usage error names the word that was typed, in the envelope too
  // (SPEC §2): what an agent typed is quoted, never obeyed.
  auto usage_failure = [&](const Error& e) {
    if (wants_json(argc, argv)) {
      print_json(failure_envelope(inv.typed, e));
    } else {
      err("kaicoder: error: {}\n", e.message);
      if (!e.hint.empty()) err("hint: {}\n", e.hint);
    }
    return k_exit_usage;
  };
  if (inv.error) return usage_failure(*inv.error);
  try {
    app.parse(inv.argc(), inv.argv());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // help or version: kaicoder's own text
      std::ostringstream help, complaint;
      app.exit(e, help, complaint);
      write_stdout(help.str());
      return k_exit_ok;
    }
    return usage_failure(usage_error(e, app, inv));
  }
  for (auto& [sub, fn] : subs)
    if (sub->parsed()) opts.command = sub->get_name();
  if (const char* f = std::getenv("KAICODER_FAULT")) arm_fault(f);
  Session session(make_env(opts), opts);
  for (auto& [sub, fn] : subs)
    if (sub->parsed()) {
      int rc = fn(session);
      std::fflush(stdout);  // the person sees the outcome before any hook runs
      session.finish();
      return rc;
    }
  return k_exit_usage;
}

// The heap asked of the kernel once, 64 MiB of address space (pages cost
// nothing until they are touched), and all of it past the first two to four
// MiB marked for transparent huge pages (madvise(2) MADV_HUGEPAGE; the
// kernel's own choice where they are offered only on request): a command
// whose records run to megabytes (a changeset's, the live changelog) then
// faults its memory in 2 MiB at a time rather than 4 KiB, and a page fault
// costs about 10 us on a virtual machine (bench/README.md). A command that
// stays within the first megabytes never touches a huge page: it would
// only pay for clearing one. glibc's own `glibc.malloc.hugetlb=1` tunable
// does the same for each extension, but is read from the environment at
// start only.
void reserve_heap() {
  constexpr size_t k_reserve = size_t{64} << 20;
  constexpr uintptr_t k_huge = uintptr_t{2} << 20;
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * k_reserve));
  ::mallopt(M_TOP_PAD, static_cast<int>(k_reserve));
  const auto before = reinterpret_cast<uintptr_t>(::sbrk(0));
  void* volatile grow = ::malloc(size_t{1} << 20);  // past the top of the heap: it grows by the pad
  ::free(grow);
  // Once: later growth asks for what it needs, as before. Where the kernel
  // refuses the reservation (a limit on the process's memory, strict
  // overcommit), nothing else changes.
  ::mallopt(M_TOP_PAD, 128 << 10);
  const auto after = reinterpret_cast<uintptr_t>(::sbrk(0));
  if (before == static_cast<uintptr_t>(-1) || after <= before) return;
  const uintptr_t lo = (before + 2 * k_huge) & ~(k_huge - 1);
  const uintptr_t hi = after & ~(k_huge - 1);
  if (hi > lo) (void)::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

}  // namespace

int entry_main(int argc, char** argv, std::span<const CommandSpec> commands) {
  // Memory freed is used again rather than handed back and faulted in anew.
  // glibc serves a block of 128 KiB or more with mmap(2) and unmaps it when
  // it is freed (raising that bar only after the first such free), and
  // trims the heap's top past 128 KiB. A changeset's records, its diff and
  // the live changelog are megabytes each, read and dropped several times
  // in one command, and a page faulted in costs about 10 us on a virtual
  // machine (bench/README.md). A command ends soon after; a server keeps at
  // most what it used at its largest (the heap's top is trimmed past
  // 128 MiB, reserve_heap()).
  ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  reserve_heap();
  int rc;
  try {
    rc = run_main(argc, argv, commands);
  } catch (const std::exception& e) {  // bugs and surprises only
    std::fflush(stdout);
    fmt::print(stderr, "kaicoder: internal error: {}\n", make_visible(e.what(), Allow::nothing));
    return k_exit_error;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    fmt::print(stderr, "kaicoder: error: cannot write to standard output\n");
    return k_exit_error;
  }
  return rc;
}

}  // namespace kai::cmd
