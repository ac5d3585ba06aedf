// Options that take a command: one table for every program whose option
// makes it run another command (tar --to-command, zip -TT, vim -c '!...',
// emacs --eval, gdb -ex 'shell ...', expect -c 'spawn ...', git --exec,
// ...). What the option runs is unwrapped and judged; what cannot be judged
// is not understood, and says so.

#include "lib/shell/rules/rules.hpp"

namespace kai::shell {

namespace {

// How an option's value is run.
enum class Runs {
  shell,    // shell text, run with its own input
  data,     // shell text fed data only known at run time (an archive member, a page of output)
  archive,  // shell text given a file name only known at run time: `{}` or an appended word (zip -TT)
  argv,     // the rest of the command line is the program and its arguments (xterm -e)
  vim,      // ex commands (vim -c, +cmd)
  elisp,    // an Emacs Lisp expression (emacs --eval)
  tcl,      // a Tcl script (expect -c)
  gdb,      // a debugger command (gdb -ex, lldb -o)
  less,     // a less command (less +cmd): `!` runs a shell
  apt,      // an APT option KEY=VALUE: the Invoke hooks run shell text
};

struct CommandOption {
  std::string_view programs;  // names, space-separated
  std::string_view sub;       // the subcommand it belongs to ("" any), names separated by '|'
  std::string_view options;   // option names, space-separated; "+" for `+cmd`
  Runs runs;
  std::string_view prefix = {};  // only values with this prefix, which is dropped
  bool cluster = false;          // a short option may end a cluster (`ex -sc CMD`) or take its value attached
};

// clang-format off
constexpr CommandOption k_command_options[] = {
    {"tar gtar bsdtar", "", "--to-command --use-compress-program -I --rsh-command --info-script --new-volume-script -F", Runs::data, {}, true},
    {"tar gtar bsdtar", "", "--checkpoint-action", Runs::data, "exec="},
    {"zip", "", "-TT --unzip-command", Runs::archive},
    {"sort", "", "--compress-program", Runs::data},
    {"split", "", "--filter", Runs::data},
    {"install", "", "--strip-program", Runs::data},
    {"man", "", "-P --pager", Runs::data, {}, true},
    {"man", "", "-H --html", Runs::archive},
    {"rsync", "", "-e --rsh", Runs::data, {}, true},
    {"rsync", "", "--rsync-path", Runs::shell},
    {"scp sftp", "", "-S", Runs::data, {}, true},
    {"sftp", "", "-D", Runs::data},
    {"tcpdump", "", "-z", Runs::archive},
    {"git", "", "--upload-pack --receive-pack --exec --extcmd --tree-filter --index-filter --msg-filter --env-filter --commit-filter --parent-filter --tag-name-filter --sendmail-cmd --to-cmd --cc-cmd --header-cmd --open-files-in-pager", Runs::data},
    {"git", "rebase|difftool", "-x", Runs::data},
    {"git", "clone", "-u", Runs::data},
    {"git", "grep", "-O", Runs::data},
    {"vi vim nvim ex view gvim gview vimdiff nvimdiff rview evim vim.basic vim.tiny vim.nox vim.gtk3 gvimdiff", "", "-c --cmd +", Runs::vim, {}, true},
    {"emacs emacs-nox emacs-gtk xemacs emacsclient", "", "--eval -eval --execute -execute", Runs::elisp},
    {"emacsclient", "", "-a --alternate-editor", Runs::data},
    {"gdb gdb-multiarch cgdb", "", "-ex --eval-command -iex --init-eval-command", Runs::gdb},
    {"lldb", "", "-o --one-line -O --one-line-before-file -k --one-line-on-crash", Runs::gdb},
    {"expect", "", "-c", Runs::tcl},
    {"less", "", "+", Runs::less},
    {"apt apt-get aptitude apt-cache", "", "-o --option", Runs::apt},
    {"dpkg", "", "--pre-invoke --post-invoke", Runs::shell},
    {"nix-shell", "", "--run --command", Runs::shell},
    {"nodemon", "", "--exec -x", Runs::shell},
    {"entr", "", "-s", Runs::shell},
    {"chokidar", "", "-c --command", Runs::shell},
    {"restic rclone", "", "--password-command", Runs::shell},
    {"borg", "", "--rsh", Runs::data},
    {"hyperfine", "", "--prepare -p --cleanup -c --setup -s --conclude", Runs::shell},
    {"fzf", "", "--preview", Runs::archive},
    {"npm pnpm yarn", "", "--script-shell", Runs::data},
    {"xterm uxterm urxvt rxvt st alacritty konsole tilix foot x-terminal-emulator kitty wezterm", "", "-e", Runs::argv},
    {"gnome-terminal mate-terminal xfce4-terminal terminator", "", "-e -x --command --execute", Runs::shell},
};
// clang-format on

// A debugger command (gdb -ex, lldb -o) that runs a shell or program text.
void debugger_command(Walker& w, Call& c, const Field& value) {
  std::string t(trim(value.value));
  auto rest_after = [&](size_t n) { return with_value(value, std::string(trim(std::string_view(t).substr(n)))); };
  std::string first = t.substr(0, t.find_first_of(" \t"));
  if (sw(t, "!")) return w.judge(c, c.name + " !", rest_after(1), Walker::Feed::none);
  if (one_of(first, {"shell", "she"}))
    return w.judge(c, c.name + " shell", rest_after(first.size()), Walker::Feed::none);
  if (sw(t, "platform shell")) return w.judge(c, c.name + " platform shell", rest_after(14), Walker::Feed::none);
  if (first == "pipe" || sw(t, "|")) {  // pipe COMMAND | SHELL_COMMAND
    size_t bar = t.find('|', sw(t, "|") ? 1 : 0);
    if (bar != std::string::npos) w.judge(c, c.name + " pipe", rest_after(bar + 1), Walker::Feed::data);
    return;
  }
  if (one_of(first, {"python", "py", "python-interactive", "pi", "guile", "gu", "script"})) {
    w.opaque(c, t.substr(first.size()));
    return;
  }
  if (one_of(first, {"source", "so", "command"})) {
    w.unknown(c, "runs debugger commands from a file");
    return;
  }
  // call system("..."), print popen("...") in the program being debugged
  for (std::string_view fn : {"system(", "popen(", "execl(", "execv("}) {
    size_t at = t.find(fn);
    if (at == std::string::npos) continue;
    size_t q = t.find('"', at);
    size_t e = q == std::string::npos ? q : t.find('"', q + 1);
    if (e == std::string::npos) {
      w.unknown(c, "the debugged program runs a command that cannot be judged");
    } else {
      w.judge(c, c.name + " " + first, with_value(value, t.substr(q + 1, e - q - 1)), Walker::Feed::none);
    }
  }
}

// One option's value, run the way its row says.
void run_value(Walker& w, Call& c, const CommandOption& row, std::string_view option, Field value, size_t next) {
  std::string what = c.name + " " + std::string(option);
  if (!row.prefix.empty()) {
    if (!sw(value.value, row.prefix)) return;
    value.value = value.value.substr(row.prefix.size());
  }
  switch (row.runs) {
    case Runs::shell: w.judge(c, what, value, Walker::Feed::none); break;
    case Runs::data: w.judge(c, what, value, Walker::Feed::data); break;
    case Runs::archive: {
      std::string text = value.value;
      std::string arg = "{}";  // the file the program names: a name like any other
      if (text.find("{}") != std::string::npos) {
      } else {
        text += " " + arg;
      }
      w.judge(c, what, with_value(value, text), Walker::Feed::none);
      break;
    }
    case Runs::argv:
      exec_inner(w, c, slice(c.argv, next), what, std::nullopt);
      c.wrapper = false;
      break;
    case Runs::vim: ex_commands(w, c, value); break;
    case Runs::elisp:
    case Runs::tcl: w.opaque(c, value.value); break;
    case Runs::gdb: debugger_command(w, c, value); break;
    case Runs::less:
      if (sw(value.value, "!")) w.judge(c, what, with_value(value, value.value.substr(1)), Walker::Feed::none);
      break;
    case Runs::apt: {
      size_t eq = value.value.find('=');
      std::string key = ascii_lower(value.value.substr(0, eq));
      if (eq != std::string::npos &&
          (key.find("invoke") != std::string::npos || key.find("pre-install-pkgs") != std::string::npos))
        w.judge(c, what + " " + value.value.substr(0, eq), with_value(value, value.value.substr(eq + 1)),
                Walker::Feed::none);
      break;
    }
  }
}

bool matches_program(const CommandOption& row, std::string_view name) { return in_words(row.programs, name); }

}  // namespace

bool takes_command(std::string_view program, std::string_view sub, std::string_view option) {
  for (const CommandOption& row : k_command_options) {
    if (!matches_program(row, program) || (!row.sub.empty() && !in_words(row.sub, sub, '|'))) continue;
    bool hit = false;
    each_word(row.options, ' ', [&](std::string_view o) { hit = hit || o == option; });
    if (hit) return true;
  }
  return false;
}

void run_command_option(Walker& w, Call& c, std::string_view sub, std::string_view option, const Field& value) {
  for (const CommandOption& row : k_command_options) {
    if (!matches_program(row, c.name) || (!row.sub.empty() && !in_words(row.sub, sub, '|'))) continue;
    bool hit = false;
    each_word(row.options, ' ', [&](std::string_view o) { hit = hit || o == option; });
    if (hit) return run_value(w, c, row, option, value, c.argv.size());
  }
}

void command_options(Walker& w, Call& c) {
  if (c.name == "git") return;  // per subcommand: rules/git.cpp
  for (const CommandOption& row : k_command_options) {
    if (!matches_program(row, c.name)) continue;
    for (size_t i = 1; i < c.argv.size(); ++i) {
      const Field& f = c.argv[i];
      const std::string& v = f.value;
      if (v == "--" && row.runs != Runs::argv) break;
      bool matched = false;
      each_word(row.options, ' ', [&](std::string_view o) {
        if (matched) return;
        std::optional<Field> value;
        size_t next = i + 1;
        if (o == "+") {
          if (v.size() > 1 && v[0] == '+' && !(row.runs == Runs::vim && std::all_of(v.begin() + 1, v.end(), is_digit)))
            value = with_value(f, v.substr(v[1] == '+' ? 2 : 1));
        } else if (v == o) {
          if (row.runs == Runs::argv) {
            value = f;
          } else if (i + 1 < c.argv.size()) {
            value = c.argv[i + 1];
            next = i + 2;
          }
        } else if (o.starts_with("--") && v.starts_with(std::string(o) + "=")) {
          value = with_value(f, v.substr(o.size() + 1));
        } else if (row.cluster && o.size() == 2 && v.size() > 2 && v[0] == '-' && v[1] != '-') {
          size_t at = v.find(o[1], 1);
          bool letters = at != std::string::npos && std::all_of(v.begin() + 1, v.begin() + static_cast<long>(at),
                                                                [](char ch) { return is_alpha(ch); });
          if (letters && at + 1 < v.size()) {
            value = with_value(f, v.substr(at + 1));
          } else if (letters && i + 1 < c.argv.size()) {
            value = c.argv[i + 1];
            next = i + 2;
          }
        }
        if (!value) return;
        matched = true;
        run_value(w, c, row, o, *value, next);
        if (next == i + 2) ++i;
      });
      if (matched && row.runs == Runs::argv) break;
    }
  }
}

bool command_option_program(std::string_view name) {
  return std::any_of(std::begin(k_command_options), std::end(k_command_options),
                     [&](const CommandOption& row) { return matches_program(row, name); });
}

size_t command_option_count() {
  size_t n = 0;
  for (const CommandOption& row : k_command_options) each_word(row.options, ' ', [&](std::string_view) { ++n; });
  return n;
}

std::vector<std::string> command_option_programs() {
  std::vector<std::string> out;
  for (const CommandOption& row : k_command_options)
    each_word(row.programs, ' ', [&](std::string_view p) {
      if (std::find(out.begin(), out.end(), p) == out.end()) out.emplace_back(p);
    });
  return out;
}

}  // namespace kai::shell
