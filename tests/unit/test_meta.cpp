// The docs and completions keep up with the command line: every verb of the
// command table in cmd/main.cpp has a man page naming each of its options
// (the global options are cmd/entry.cpp's),
// appears with those options in all three completion files, and the pages
// and completion scripts load cleanly in the tools that read them.
//
// Everything is read from the source tree, found from this file's own path
// (unit tests get no KAICODER_SOURCE_DIR), so a verb or option added to cmd/
// without docs fails here. Tools that are missing (mandoc, fish, zsh) turn
// their checks into a WARN; CI installs them all. The `--help` check belongs
// to the end-to-end suite, which runs the binary.

// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/command_table.hpp"
#include "tests/support/source_tree.hpp"

namespace fs = std::filesystem;

namespace {

using kai::test::slurp;
using kai::test::source_dir;

// cmd/<verb>.cpp, the verb's '-' written '_' as in every file name.
// The file that declares a verb's options: cmd/<verb>.cpp, or
// cmd/<verb>_options.hpp for a verb two programs parse (serve).
fs::path verb_source(const fs::path& src, std::string verb) {
  std::replace(verb.begin(), verb.end(), '-', '_');
  if (fs::exists(src / "cmd" / (verb + "_options.hpp"))) return src / "cmd" / (verb + "_options.hpp");
  return src / "cmd" / (verb + ".cpp");
}

// The verbs of k_commands, in table order.
std::vector<std::string> table_verbs(const fs::path& src) {
  std::vector<std::string> verbs = kai::test::command_table_verbs(src);
  REQUIRE_FALSE(verbs.empty());
  return verbs;
}

// Long options declared in a source file: "--name" or "-x,--name".
std::set<std::string> long_options(const fs::path& file) {
  std::string text = slurp(file);
  std::set<std::string> out;
  std::regex opt(R"re("(?:-[A-Za-z0-9],)?--([a-z][a-z0-9-]*))re");
  for (std::sregex_iterator it(text.begin(), text.end(), opt), stop; it != stop; ++it) out.insert((*it)[1]);
  return out;
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

// `needle` occurs in `text` with no word character right after it (and,
// unless it starts with one itself, none right before it).
bool has_token(const std::string& text, const std::string& needle) {
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    size_t after = at + needle.size();
    bool end_ok = after >= text.size() || !word_char(text[after]);
    bool start_ok = at == 0 || !word_char(needle.front()) || !word_char(text[at - 1]);
    if (end_ok && start_ok) return true;
  }
  return false;
}

// A man page names --opt as "--opt", "\-\-opt" or mdoc's "Fl -opt".
bool man_mentions(const std::string& page, const std::string& opt) {
  return has_token(page, "--" + opt) || has_token(page, "\\-\\-" + opt) || has_token(page, "Fl -" + opt);
}

// fish spells --opt as "-l opt".
bool completion_mentions(const std::string& script, const std::string& opt) {
  return has_token(script, "--" + opt) || has_token(script, "-l " + opt);
}

std::string sq(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Ran {
  int status = -1;
  std::string out;  // stdout and stderr
};

Ran run(const std::string& cmd) {
  Ran r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool have(const std::string& tool) { return run("command -v " + tool + " >/dev/null").status == 0; }

// Shells run with a throwaway HOME so that no real dotfile is read or written.
std::string clean_env(const kai::test::TempDir& home) {
  const std::string h = home.path().string();
  return "env HOME=" + sq(h) + " ZDOTDIR=" + sq(h) + " XDG_CONFIG_HOME=" + sq(h + "/config") +
         " XDG_DATA_HOME=" + sq(h + "/data") + " XDG_CACHE_HOME=" + sq(h + "/cache") + " BASH_ENV= ENV= ";
}

std::set<std::string> lines_of(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('\t'));  // fish: "candidate<TAB>description"
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) out.insert(line);
  }
  return out;
}

const char* const k_completion_files[] = {"completions/kaicoder.bash", "completions/_kaicoder",
                                          "completions/kaicoder.fish"};

}  // namespace

TEST_CASE("the command table can be read from cmd/main.cpp", "[meta]") {
  auto verbs = table_verbs(source_dir());
  CHECK(verbs.size() >= 5);
  CHECK(std::find(verbs.begin(), verbs.end(), "propose") != verbs.end());
  CHECK(std::find(verbs.begin(), verbs.end(), "rollback") != verbs.end());
}

TEST_CASE("every verb has a man page that names each of its options", "[meta]") {
  const fs::path src = source_dir();
  const std::string overview = slurp(src / "man" / "kaicoder.1");
  for (const auto& verb : table_verbs(src)) {
    INFO("verb: " << verb);
    const fs::path page = src / "man" / ("kaicoder-" + verb + ".1");
    REQUIRE(fs::exists(page));
    const std::string text = slurp(page);
    CHECK(has_token(overview, "kaicoder-" + verb));
    const fs::path code = verb_source(src, verb);
    REQUIRE(fs::exists(code));
    for (const auto& opt : long_options(code)) {
      INFO("option: --" << opt);
      CHECK(man_mentions(text, opt));
    }
  }
}

TEST_CASE("kaicoder(1) names every global option", "[meta]") {
  const fs::path src = source_dir();
  const std::string overview = slurp(src / "man" / "kaicoder.1");
  auto globals = long_options(src / "cmd" / "entry.cpp");
  CHECK(globals.count("json") == 1);
  for (const auto& opt : globals) {
    INFO("option: --" << opt);
    CHECK(man_mentions(overview, opt));
  }
}

TEST_CASE("kaicoder.toml(5) documents every section and key of the example", "[meta]") {
  const fs::path src = source_dir();
  const std::string page = slurp(src / "man" / "kaicoder.toml.5");
  std::istringstream example(slurp(src / "kaicoder.toml.example"));
  std::regex section(R"(^\s*\[\[?([a-z_.]+)\]\]?\s*$)"), key(R"(^\s*([a-z_]+)\s*=)");
  int seen = 0;
  for (std::string line; std::getline(example, line);) {
    std::smatch m;
    if (std::regex_search(line, m, section)) {
      INFO("section: [" << m[1] << "]");
      CHECK(page.find("[" + m[1].str() + "]") != std::string::npos);
      ++seen;
    } else if (std::regex_search(line, m, key)) {
      INFO("key: " << m[1]);
      CHECK(has_token(page, "Cm " + m[1].str()));
      ++seen;
    }
  }
  CHECK(seen > 10);
}

TEST_CASE("every verb and its options appear in all three completion files", "[meta]") {
  const fs::path src = source_dir();
  auto globals = long_options(src / "cmd" / "entry.cpp");
  for (const char* file : k_completion_files) {
    INFO("completion file: " << file);
    REQUIRE(fs::exists(src / file));
    const std::string script = slurp(src / file);
    for (const auto& opt : globals) {
      INFO("global option: --" << opt);
      CHECK(completion_mentions(script, opt));
    }
    for (const auto& verb : table_verbs(src)) {
      INFO("verb: " << verb);
      CHECK(has_token(script, verb));
      for (const auto& opt : long_options(verb_source(src, verb))) {
        INFO("option: --" << opt);
        CHECK(completion_mentions(script, opt));
      }
    }
  }
}

TEST_CASE("man pages are clean under mandoc -T lint", "[meta]") {
  if (!have("mandoc")) {
    WARN("mandoc is not installed: man pages not linted");
    return;
  }
  const fs::path src = source_dir();
  int pages = 0;
  for (const auto& e : fs::directory_iterator(src / "man")) {
    const std::string ext = e.path().extension().string();
    if (ext != ".1" && ext != ".5") continue;
    ++pages;
    Ran r = run("mandoc -T lint -W warning " + sq(e.path().string()));
    INFO(e.path().filename().string() << ":\n" << r.out);
    CHECK(r.status == 0);
  }
  CHECK(pages >= 3);
}

TEST_CASE("bash completion loads and completes verbs and options", "[meta]") {
  if (!have("bash")) {
    WARN("bash is not installed: bash completion not checked");
    return;
  }
  const fs::path src = source_dir();
  kai::test::TempDir home;
  const std::string env = clean_env(home);
  const std::string script = sq((src / "completions" / "kaicoder.bash").string());

  Ran loaded = run(env + "bash --norc --noprofile -c " + sq("source " + script + " && complete -p kaicoder"));
  INFO(loaded.out);
  REQUIRE(loaded.status == 0);
  CHECK_THAT(loaded.out, Catch::Matchers::Contains("_kaicoder"));

  // Drive the completion function as bash would for `kaicoder ap<TAB>`.
  auto complete = [&](const std::string& words, int cword) {
    std::string body = "source " + script + "; COMP_WORDS=(" + words + "); COMP_CWORD=" + std::to_string(cword) +
                       "; COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}; _kaicoder; "
                       "printf '%s\\n' \"${COMPREPLY[@]}\"";
    return run(env + "bash --norc --noprofile -c " + sq(body));
  };
  Ran ap = complete("kaicoder ap", 1);
  INFO(ap.out);
  CHECK(ap.status == 0);
  auto offered = lines_of(ap.out);
  CHECK(offered.count("approve") == 1);
  CHECK(offered.count("apply") == 1);
  CHECK(offered.count("propose") == 0);

  Ran status = complete("kaicoder list --status ''", 3);
  CHECK(lines_of(status.out).count("rolled-back") == 1);

  for (const auto& verb : table_verbs(src)) {
    Ran opts = complete("kaicoder " + verb + " --", 2);
    auto got = lines_of(opts.out);
    for (const auto& opt : long_options(verb_source(src, verb))) {
      INFO("kaicoder " << verb << " --<TAB> offers:\n" << opts.out << "missing: --" << opt);
      CHECK(got.count("--" + opt) == 1);
    }
  }
}

TEST_CASE("fish completion lists matching verbs", "[meta]") {
  if (!have("fish")) {
    WARN("fish is not installed: fish completion not checked");
    return;
  }
  const fs::path src = source_dir();
  kai::test::TempDir home;
  const std::string env = clean_env(home);
  const std::string script = sq((src / "completions" / "kaicoder.fish").string());
  auto complete = [&](const std::string& line) {
    return run(env + "fish -c " + sq("source " + script + "; complete -C " + sq(line)));
  };

  Ran ap = complete("kaicoder ap");
  INFO(ap.out);
  CHECK(ap.status == 0);
  auto offered = lines_of(ap.out);
  CHECK(offered.count("approve") == 1);
  CHECK(offered.count("apply") == 1);
  CHECK(offered.count("propose") == 0);

  for (const auto& verb : table_verbs(src)) {
    Ran opts = complete("kaicoder " + verb + " --");
    auto got = lines_of(opts.out);
    for (const auto& opt : long_options(verb_source(src, verb))) {
      INFO("kaicoder " << verb << " --<TAB> offers:\n" << opts.out << "missing: --" << opt);
      CHECK(got.count("--" + opt) == 1);
    }
  }
}

TEST_CASE("zsh completion loads under compinit", "[meta]") {
  if (!have("zsh")) {
    WARN("zsh is not installed: zsh completion not checked");
    return;
  }
  const fs::path src = source_dir();
  kai::test::TempDir home;
  const std::string env = clean_env(home);
  const std::string dump = (home.path() / "zcompdump").string();
  const std::string body = "autoload -Uz compinit; compinit -u -d " + sq(dump) + "; source " +
                           sq((src / "completions" / "_kaicoder").string()) + " && (( $+functions[_kaicoder] ))";
  Ran r = run(env + "zsh -c " + sq(body));
  INFO(r.out);
  CHECK(r.status == 0);
  CHECK(r.out.empty());
}
