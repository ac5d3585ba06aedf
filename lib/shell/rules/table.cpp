// The rule table: which rule judges which program, and apply_rule, the one
// entry the walker calls for every leaf.

#include <set>

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

namespace {

using RuleFn = void (*)(Walker&, Call&);

const std::map<std::string_view, RuleFn>& rules() {
  // clang-format off
  static const std::map<std::string_view, RuleFn> k_rules = {
      {"sudo", rule_sudo}, {"sudoedit", rule_sudo}, {"doas", rule_doas}, {"env", rule_env}, {"time", rule_time},
      {"command", rule_command}, {"which", rule_which}, {"type", rule_which}, {"whereis", rule_which}, {"strace", rule_strace}, {"ltrace", rule_strace}, {"flock", rule_flock},
      {"watch", rule_watch}, {"script", rule_script}, {"su", rule_su}, {"runuser", rule_su}, {"sg", rule_sg},
      {"xargs", rule_xargs}, {"parallel", rule_parallel}, {"sem", rule_parallel}, {"npx", rule_npx}, {"pnpx", rule_npx}, {"bunx", rule_npx},
      {"eval", rule_eval}, {"source", rule_source}, {".", rule_source}, {"alias", rule_alias}, {"trap", rule_trap},
      {"export", rule_declare}, {"declare", rule_declare}, {"typeset", rule_declare}, {"local", rule_declare},
      {"readonly", rule_declare}, {"unset", rule_unset}, {"read", rule_read}, {"mapfile", rule_read},
      {"readarray", rule_read}, {"cd", rule_cd}, {"pushd", rule_cd}, {"popd", rule_cd}, {"hash", rule_hash},
      {"enable", rule_enable},
      {"echo", rule_echo}, {"printf", rule_printf}, {"base64", rule_base64}, {"base32", rule_base64},
      {"basenc", rule_base64}, {"xxd", rule_xxd}, {"rev", rule_rev}, {"cat", rule_cat}, {"tee", rule_tee},
      {"awk", rule_awk}, {"gawk", rule_awk}, {"mawk", rule_awk}, {"nawk", rule_awk}, {"sed", rule_sed},
      {"gsed", rule_sed},
      {"rm", rule_rm}, {"shred", rule_shred}, {"wipe", rule_shred}, {"srm", rule_shred}, {"find", rule_find},
      {"cp", rule_copy}, {"mv", rule_copy}, {"ln", rule_copy}, {"install", rule_copy},
      {"chmod", rule_chmod}, {"chown", rule_chmod}, {"chgrp", rule_chmod}, {"chattr", rule_chmod},
      {"setfacl", [](Walker& w, Call& c) { rule_write_positionals(w, c, Spec{"mMxX", {"--modify", "--remove", "--set", "--modify-file", "--set-file", "--remove-file"}}); }},
      {"mkfs", rule_disk_format}, {"mke2fs", rule_disk_format}, {"mkswap", rule_disk_format},
      {"mkdosfs", rule_disk_format}, {"mkntfs", rule_disk_format}, {"blkdiscard", rule_disk_format},
      {"lvremove", rule_disk_format}, {"vgremove", rule_disk_format}, {"pvremove", rule_disk_format},
      {"fdisk", rule_partition}, {"sfdisk", rule_partition}, {"cfdisk", rule_partition}, {"parted", rule_partition},
      {"gdisk", rule_partition}, {"sgdisk", rule_partition}, {"wipefs", rule_partition}, {"dd", rule_dd},
      {"shutdown", rule_power}, {"reboot", rule_power}, {"poweroff", rule_power}, {"halt", rule_power},
      {"init", rule_init}, {"telinit", rule_init}, {"systemctl", rule_systemctl}, {"service", rule_service},
      {"loginctl", rule_loginctl}, {"launchctl", rule_service_tool}, {"rc-service", rule_service},
      {"supervisorctl", rule_service_tool}, {"pm2", rule_service_tool}, {"sv", rule_service_tool},
      {"kill", rule_kill}, {"pkill", rule_pkill}, {"killall", rule_pkill}, {"killall5", rule_pkill},
      {"fuser", rule_fuser},
      {"git", rule_git}, {"tar", rule_tar}, {"gtar", rule_tar}, {"bsdtar", rule_tar}, {"unzip", rule_unzip},
      {"zip", rule_zip}, {"patch", rule_patch}, {"sort", rule_sort}, {"uniq", rule_uniq}, {"split", rule_split},
      {"make", rule_make}, {"gmake", rule_make}, {"cmake", rule_cmake}, {"pacman", rule_pacman},
      {"yay", rule_pacman}, {"paru", rule_pacman}, {"cargo", rule_cargo}, {"go", rule_go},
      {"curl", rule_curl}, {"wget", rule_wget}, {"http", rule_http_client}, {"https", rule_http_client},
      {"xh", rule_http_client}, {"aria2c", rule_http_client}, {"axel", rule_http_client}, {"fetch", rule_http_client},
      {"lwp-request", rule_http_client}, {"GET", rule_http_client}, {"POST", rule_http_client},
      {"ssh", rule_ssh}, {"scp", rule_scp}, {"sftp", rule_scp}, {"rsync", rule_rsync},
      {"nc", rule_netcat}, {"ncat", rule_netcat}, {"netcat", rule_netcat}, {"socat", rule_netcat},
      {"telnet", rule_netcat}, {"ftp", rule_netcat}, {"tftp", rule_netcat}, {"lftp", rule_netcat},
      {"mail", rule_mail}, {"man", rule_man}, {"ssh-keygen", rule_ssh_keygen}, {"mailx", rule_mail}, {"sendmail", rule_mail}, {"mutt", rule_mail}, {"at", rule_at},
      {"batch", rule_at}, {"crontab", rule_crontab}, {"tmux", rule_multiplexer}, {"screen", rule_multiplexer}, {"kaicoder", rule_kaicoder},
      {"openssl", rule_openssl},
      // deletion by other names, package runners, job runners, debuggers
      {"rimraf", rule_deleter}, {"del", rule_deleter}, {"del-cli", rule_deleter}, {"trash", rule_deleter},
      {"trash-put", rule_deleter}, {"trash-rm", rule_deleter}, {"rmtrash", rule_deleter}, {"trash-cli", rule_deleter},
      {"uvx", rule_npx}, {"nix", rule_nix}, {"rush", rule_rush}, {"concurrently", rule_concurrently},
      {"cross-env", rule_env_wrapper}, {"cross-env-shell", rule_env_wrapper}, {"shx", rule_env_wrapper},
      {"dotenv", rule_env_wrapper}, {"env-cmd", rule_env_wrapper}, {"kill-port", rule_kill_port}, {"fkill", rule_kill_port},
      {"entr", rule_watcher}, {"watchexec", rule_watcher},
      {"gdb", rule_gdb}, {"gdb-multiarch", rule_gdb}, {"cgdb", rule_gdb}, {"lldb", rule_gdb},
      {"trash-empty", [](Walker& w, Call& c) { w.find(c, V::confirm, "empties the trash, which cannot be undone"); }},
  };
  // clang-format on
  return k_rules;
}

// `python3.11` -> `python`, `gcc-12` -> `gcc`, `pip3` -> `pip`
std::string family(std::string_view name) {
  std::string f(name);
  while (!f.empty() && (is_digit(f.back()) || f.back() == '.')) f.pop_back();
  while (!f.empty() && (f.back() == '-' || f.back() == '_')) f.pop_back();
  return f.empty() ? std::string(name) : f;
}

void write_rule(Walker& w, Call& c) {
  static const std::map<std::string_view, Spec> k_writers = {
      {"touch", Spec{"dtr", {"--date", "--reference", "--time"}}},
      {"truncate", Spec{"sr", {"--size", "--reference"}}},
      {"mkdir", Spec{"m", {"--mode", "--context"}}},
      {"rmdir", Spec{}},
      {"unlink", Spec{}},
      {"mkfifo", Spec{"m", {"--mode"}}},
      {"mknod", Spec{"m", {"--mode"}}},
  };
  auto it = k_writers.find(c.name);
  if (it != k_writers.end()) rule_write_positionals(w, c, it->second);
}
}  // namespace

bool is_shell(std::string_view name) {
  return one_of(name, {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh",
                       "tcsh", "oksh", "loksh", "pdksh", "ksh93", "bash5", "busybox-sh"});
}

bool prints_only(std::string_view name) {
  return one_of(name, {"echo",    "printf",     "true",     "false",    ":",     "test",     "[",       "exit",
                       "return",  "shift",      "sleep",    "wait",     "set",   "shopt",    "type",    "which",
                       "hash",    "ulimit",     "umask",    "seq",      "expr",  "basename", "dirname", "date",
                       "let",     "break",      "continue", "getopts",  "pwd",   "whoami",   "id",      "uname",
                       "nproc",   "kill",       "pkill",    "killall",  "cd",    "pushd",    "popd",    "export",
                       "declare", "typeset",    "local",    "readonly", "unset", "read",     "mapfile", "readarray",
                       "alias",   "trap",       "eval",     "source",   ".",     "printenv", "logger",  "tput",
                       "clear",   "notify-send"}) ||
         is_shell(name);
}

bool names_without_reading(std::string_view name) {
  return one_of(name, {"ls",    "ll",     "la",    "dir",    "exa",     "eza",      "stat",     "test",     "[",
                       "file",  "du",     "touch", "rm",     "unlink",  "rmdir",    "shred",    "wipe",     "srm",
                       "chmod", "chown",  "chgrp", "chattr", "mkdir",   "realpath", "readlink", "basename", "dirname",
                       "echo",  "printf", "find",  "fd",     "ssh",     "git",      "which",    "type",     "command",
                       "cd",    "pushd",  "mv",    "lsattr", "getfacl", "namei"});
}

namespace {

// Programs that read, print, compare, build or test, and change nothing a
// person needs to be warned about (what they write goes through the same
// checks as any other write): a routine ask.
bool ordinary(std::string_view name) {
  // clang-format off
  static const std::set<std::string_view> k_ordinary = {
      "ls", "ll", "la", "dir", "exa", "eza", "lsd", "tree", "cat", "bat", "batcat", "less", "more", "most", "head", "tail",
      "grep", "egrep", "fgrep", "rg", "ag", "ack", "ugrep", "wc", "diff", "cmp", "comm", "colordiff", "delta", "difft",
      "cut", "paste", "join", "tr", "fold", "fmt", "nl", "pr", "column", "expand", "unexpand", "tac", "od", "hexdump",
      "strings", "file", "stat", "du", "df", "free", "uptime", "ps", "pgrep", "top", "htop", "btop", "vmstat", "iostat",
      "lsof", "lsblk", "lscpu", "lspci", "lsusb", "lsmod", "dmesg", "env", "printenv", "locale", "hostname", "groups",
      "id", "who", "w", "last", "tty", "date", "cal", "realpath", "readlink", "basename", "dirname", "pathchk", "mktemp",
      "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "jq", "yq", "gojq", "jless",
      "xmllint", "xmlstarlet", "tidy", "fd", "fdfind", "locate", "plocate", "whereis", "apropos", "whatis", "info",
      "tldr", "man", "help", "fzf", "numfmt", "factor", "bc", "dc", "expr", "seq", "shuf", "yes", "tput", "stty",
      "getconf", "ldd", "nm", "objdump", "readelf", "size", "addr2line", "c++filt", "strace", "ltrace", "make", "gmake",
      "cmake", "ctest", "cpack", "ninja", "meson", "bazel", "bazelisk", "buck", "buck2", "pants", "scons", "just",
      "task", "mage", "rake", "invoke", "nox", "tox", "gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "lein",
      "mix", "rebar3", "zig", "swift", "swiftc", "xcodebuild", "dotnet", "msbuild", "node", "deno", "bun", "tsc",
      "tsx", "ts-node", "esbuild", "vite", "webpack", "rollup", "parcel", "turbo", "nx", "lerna", "jest", "vitest",
      "mocha", "ava", "tap", "playwright", "cypress", "pytest", "py.test", "nosetests", "unittest", "coverage", "mypy",
      "pyright", "pylint", "flake8", "bandit", "pydoc", "ruby", "irb", "rspec", "rubocop", "bundle", "go", "gopls",
      "golangci-lint", "staticcheck", "cargo", "rustc", "rustup", "clippy-driver", "java", "javac", "kotlin",
      "kotlinc", "scala", "scalac", "ghc", "ghci", "runghc", "ocaml", "dune", "elixir", "erl", "iex", "php",
      "composer", "phpunit", "lua", "luajit", "perl", "prove", "R", "Rscript", "julia", "valgrind", "gdb", "lldb",
      "shellcheck", "hadolint", "actionlint", "yamllint", "markdownlint", "eslint", "stylelint", "tflint", "checkov",
      "trivy", "grype", "syft", "semgrep", "codespell", "typos", "cloc", "tokei", "scc", "ctags", "cscope",
      "pkg-config", "autoconf", "autoreconf", "automake", "aclocal", "libtoolize", "configure", "ccmake", "bear",
      "clangd", "iwyu", "cppcheck", "clang-tidy", "git-lfs", "tig", "lazygit", "gitk", "hub", "ssh-add", "gpg",
      "openssl", "base64", "base32", "xxd", "iconv", "dos2unix", "sleep", "true", "false", "test", "[", "echo",
      "printf", "pwd", "whoami", "uname", "arch", "nproc", "ping", "traceroute", "tracepath", "dig", "nslookup",
      "host", "whois", "ss", "netstat", "ifstat", "nload", "iftop", "tcpdump", "mtr", "nmap", "openssl", "time",
      "hyperfine", "watch", "timeout", "xargs", "parallel", "pv", "tee", "sort", "uniq", "sed", "awk", "gawk",
      "python", "python3", "pip", "pipx", "uv", "poetry", "pdm", "pipenv", "conda", "mamba", "npm", "npx", "pnpm",
      "yarn", "corepack", "nvm", "node-gyp", "cc", "gcc", "g++", "clang", "clang++", "ld", "as", "ar", "ranlib",
      "strip", "objcopy", "docker-credential-helper", "kubectx", "kubens", "stern", "dive", "ctop", "lazydocker",
      "k9s", "terraform-docs", "tfsec", "infracost", "pre-commit", "husky", "lint-staged", "commitlint", "changeset",
      "semantic-release", "gitleaks", "trufflehog", "detect-secrets", "direnv", "asdf", "mise", "sdk", "jenv",
      "pyenv", "rbenv", "volta", "fnm", "stack", "cabal", "opam", "nix-build", "nix-instantiate", "guix", "zoxide",
      "z", "autojump", "history", "fc", "jobs", "fg", "bg", "disown", "wait", "times", "caller", "compgen",
      "complete", "shopt", "set", "ulimit", "umask", "getopts", "let", "local", "logname", "users", "finger",
      "lslogins", "chage", "getent", "ldconfig", "xdg-user-dir", "xdg-mime", "gsettings", "dconf", "defaults",
      "sw_vers", "system_profiler", "mdfind", "mdls", "open", "xdg-open", "pbcopy", "pbpaste", "xclip", "xsel",
      "wl-copy", "wl-paste", "notify-send", "say", "espeak", "convert", "magick", "identify", "ffprobe", "ffmpeg",
      "exiftool", "pandoc", "asciidoctor", "mdbook", "hugo", "jekyll", "sphinx-build", "mkdocs", "doxygen",
      "graphviz", "dot", "plantuml", "latexmk", "pdflatex", "xelatex", "lualatex", "bibtex", "biber", "gs",
      "qpdf", "pdftotext", "pdfinfo", "tesseract", "sqlfluff", "pgcli", "mycli", "litecli", "usql", "jupyter",
      "ipython", "marimo", "streamlit", "flask", "uvicorn", "gunicorn", "django-admin", "rails", "manage.py",
      "sleep", "kaicoder", "tmux", "screen", "script", "clear", "reset", "cowsay", "fortune", "lolcat", "figlet",
      "neofetch", "fastfetch", "btm", "glances", "procs", "dust", "duf", "ncdu", "hexyl", "glow", "sd", "choose",
      "xsv", "qsv", "csvlook", "csvcut", "mlr", "miller", "dasel", "gron", "fx", "htmlq", "pup", "hurl", "httpie",
      "grpcurl", "websocat", "wscat", "k6", "ab", "wrk", "vegeta", "locust", "git", "gitui", "ssh-keyscan",
      "ssh-copy-id", "keychain", "pinentry", "age-keygen", "minisign", "cosign", "sigstore", "rekor-cli", "gpgv",
  };
  // clang-format on
  return k_ordinary.count(name) > 0;
}

}  // namespace

bool known_program(std::string_view name) {
  if (name.empty()) return false;
  std::string fam = family(name);
  static const std::set<std::string_view> k_named = {
      "touch",    "truncate",   "mkdir",       "rmdir",   "unlink", "mkfifo",      "mknod",     "gcc",         "g++",
      "cc",       "c++",        "clang",       "clang++", "ld",     "rustc",       "tcc",       "javac",       "vi",
      "vim",      "nvim",       "nano",        "emacs",   "pico",   "joe",         "micro",     "ed",          "ex",
      "kak",      "hx",         "helix",       "view",    "gvim",   "emacsclient", "gzip",      "gunzip",      "bzip",
      "bunzip",   "xz",         "unxz",        "lzma",    "unlzma", "zstd",        "unzstd",    "lz",          "unlz",
      "compress", "uncompress", "pigz",        "unpigz",  "brotli", "lzip",        "ruff",      "samu",        "sem",
      "pnpx",     "bunx",       "npm-run-all", "run-s",   "run-p",  "fkill",       "kill-port", "empty-trash", "tclsh",
      "wish",     "expect"};
  return rules().count(name) > 0 || wrapper_spec(name) != nullptr || is_shell(name) || family_tool(name) ||
         interpreter(fam) != nullptr || interpreter(name) != nullptr || formatter(fam) != nullptr ||
         manager(fam) != nullptr || manager(name) != nullptr || prints_only(name) || names_without_reading(name) ||
         k_named.count(name) > 0 || k_named.count(fam) > 0 || ordinary(name) || ordinary(fam) || sw(name, "mkfs") ||
         command_option_program(name);
}

std::vector<FamilyCoverage> coverage() {
  std::vector<FamilyCoverage> out = family_coverage();
  auto add = [&](std::string family, std::vector<std::string> programs, size_t verbs) {
    out.push_back({std::move(family), std::move(programs), verbs});
  };
  add("options that take a command", command_option_programs(), command_option_count());
  add("package runners",
      {"npx", "npm exec", "npm x", "pnpm dlx", "pnpm exec", "pnpx", "yarn dlx", "yarn exec", "bunx", "bun x",
       "pipx run", "uvx", "uv tool run", "deno run", "go run", "nix run", "cargo install --git"},
      package_bin_count());
  std::vector<std::string> jobs = {"xargs",       "parallel",  "sem",   "rush",   "concurrently",
                                   "make --eval", "make -f -", "watch", "entr",   "watchexec",
                                   "hyperfine",   "nodemon",   "tmux",  "screen", "crontab"};
  size_t forms = jobs.size();  // each runs what it is given in one way of its own
  add("job runners", std::move(jobs), forms);
  return out;
}

std::string basename_of(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == path.size()) return std::string(path);
  return std::string(path.substr(slash + 1));
}

namespace {

// A command that only describes itself: `--help` (GNU tools and git act on
// it before anything else and change nothing) and the dry runs of the
// commands that honour one. Only static words count.
bool only_describes(const Call& c) {
  const std::string& n = c.name;
  const Args& a = c.argv;
  for (const Field& f : a)
    if (f.dynamic || f.synthetic) return false;
  auto has = [&](List names, size_t from) {
    for (size_t i = from; i < a.size(); ++i)
      if (one_of(a[i].value, names) || (a[i].value.rfind("--dry-run=", 0) == 0 && one_of("--dry-run", names)))
        return true;
    return false;
  };
  // -n inside a cluster of short flags (`rsync -avn`, `git clean -fdn`)
  auto short_n = [&](size_t from) {
    for (size_t i = from; i < a.size(); ++i) {
      const std::string& v = a[i].value;
      if (v.size() > 1 && v[0] == '-' && v[1] != '-' && v.find('n') != std::string::npos) return true;
    }
    return false;
  };
  // `prog --help` alone describes any program, wrappers and shells included
  if (a.size() == 2 && one_of(a[1].value, {"--help", "--version"})) return true;
  if (one_of(n, {"rm", "rmdir", "shred", "dd", "chmod", "chown", "chgrp", "mv", "cp", "truncate", "sed", "ln",
                 "shutdown", "reboot", "poweroff", "halt", "wipefs", "fdisk", "sfdisk", "parted", "mkswap",
                 "blkdiscard", "kill", "pkill", "killall", "systemctl", "crontab"}) ||
      sw(n, "mkfs"))
    return has({"--help", "--version"}, 1);
  if (n == "git") {
    if (a.size() == 2 && one_of(a[1].value, {"--help", "--version", "help"})) return true;
    if (a.size() >= 3 && (a[2].value == "--help" || a[1].value == "help")) return true;
    // `git push -f origin main --help`: git shows the page and does nothing,
    // unless the word is an option's value (`-m --help`)
    for (size_t i = 2; i < a.size(); ++i)
      if (a[i].value == "--help" && !(a[i - 1].value.size() == 2 && a[i - 1].value[0] == '-')) return true;
    if (a.size() >= 2 && one_of(a[1].value, {"push", "rm", "add", "mv", "prune", "fetch"}))
      return has({"--dry-run", "-n"}, 2) || (a[1].value != "push" && short_n(2));
    if (a.size() >= 2 && one_of(a[1].value, {"clean", "worktree", "reflog"}))
      return has({"--dry-run"}, 2) || short_n(2);
    return false;
  }
  if (n == "rsync") return has({"--dry-run", "--help"}, 1) || short_n(1);
  if (n == "make") return has({"--dry-run", "--just-print", "--recon", "-n", "--help"}, 1);
  if (one_of(n, {"apt", "apt-get", "aptitude"}))
    return has({"--simulate", "--just-print", "--dry-run", "--recon", "--no-act", "-s"}, 1);
  if (one_of(n, {"npm",      "pnpm",  "yarn",  "cargo", "pip",  "pip3",  "poetry", "uv",
                 "bundle",   "gem",   "brew",  "twine", "find", "chmod", "chown",  "shred",
                 "truncate", "mkdir", "touch", "tar",   "zip",  "unzip", "patch"}))
    return has({"--dry-run", "--help", "--version"}, 1);
  return false;
}

}  // namespace

void apply_rule(Walker& w, Call& c) {
  const std::string& n = c.name;
  if (only_describes(c)) {
    w.find(c, V::ask, "only describes what it would do (help, version or a dry run)");
    return;
  }
  command_options(w, c);  // options that take a command: one table (rules/commands.cpp)
  if (const auto& table = rules(); table.count(n) > 0) return table.at(n)(w, c);
  if (const WrapperSpec* s = wrapper_spec(n)) return rule_wrapper(w, c, *s);
  if (is_shell(n)) return rule_shell(w, c);
  if (family_tool(n)) return rule_family(w, c);
  if (sw(n, "mkfs")) return rule_disk_format(w, c);
  if (sw(c.argv[0].value, "/etc/init.d/") && c.argv.size() > 1) {
    service_verb(w, c, c.argv[1].value, {n});
    return;
  }
  std::string fam = family(n);
  // bun and deno are package managers and runners as well as interpreters
  if ((fam == "bun" || fam == "deno") && c.argv.size() > 1 && !sw(c.argv[1].value, "-")) {
    if (fam == "deno" && c.argv[1].value == "eval") {
      w.opaque(c, joined(c.argv, 2).value);
      return;
    }
    if (fam == "deno" && one_of(c.argv[1].value, {"run", "x"})) return rule_package_runner(w, c, 2);
    return rule_pkg(w, c, fam, 1);
  }
  if (const Interpreter* s = interpreter(fam)) return rule_interpreter(w, c, *s);
  if (const Interpreter* s = interpreter(n)) return rule_interpreter(w, c, *s);
  if (const Formatter* f = formatter(fam)) return rule_formatter(w, c, *f);
  if (one_of(fam, {"gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "ld.lld", "ld.gold", "rustc", "tcc", "javac"}))
    return rule_compiler(w, c);
  if (one_of(fam, {"vi", "vim", "nvim", "nano", "emacs", "pico", "joe", "micro", "ed", "ex", "kak", "hx", "helix"}))
    return rule_editor(w, c);
  if (one_of(fam, {"gzip", "gunzip", "bzip", "bunzip", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz", "unlz",
                   "compress", "uncompress", "pigz", "unpigz", "brotli", "lzip"}))
    return rule_compress(w, c);
  if (one_of(fam, {"ninja", "samu"})) {
    for (size_t i = 1; i < c.argv.size(); ++i)
      if (c.argv[i].value == "install") w.find(c, V::confirm, "installs files");
    return;
  }
  if (fam == "ruff") {
    bool format = c.argv.size() > 1 && c.argv[1].value == "format";
    bool fix = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) { return f.value == "--fix"; });
    bool check = std::any_of(c.argv.begin(), c.argv.end(), [](const Field& f) {
      return one_of(f.value, {"--check", "--diff"});
    });
    if ((format && !check) || fix) w.find(c, V::confirm, "rewrites files in place (ruff)");
    return;
  }
  if (manager(fam)) return rule_pkg(w, c, fam, 1);
  write_rule(w, c);
}

}  // namespace kai::shell
