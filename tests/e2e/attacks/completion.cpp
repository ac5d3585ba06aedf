// Attacks through the person's own shell: a cloned repository (or anything
// that can write .kaicoder/) plants file names that are shell syntax, and
// the person presses TAB after `kaicoder rollback`. Completion must never
// evaluate a candidate and must offer only well-formed ids, in bash, zsh
// and fish.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <map>
#include <optional>
#include <sys/stat.h>

#include "tests/support/checks.hpp"

namespace kai::test {
namespace {
namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nlohmann::json;

// Every hostile name runs `touch pwned` (in the folder completion runs in)
// when a shell evaluates it; a glob name shows up as every file when it is
// expanded.
const std::vector<std::string> k_hostile = {
    "$(touch pwned)", "`touch pwned`", "*", "[0-9]*", "x\n$(touch pwned)", "$(touch pwned)\n7", "'; touch pwned; '",
};

std::string sq(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string source_file(const std::string& rel) { return (fs::path(KAICODER_SOURCE_DIR) / rel).string(); }

// PATH with the kaicoder under test first, as an installed one would be.
EnvOverrides with_kaicoder_on_path() {
  const char* path = std::getenv("PATH");
  return {{"PATH", fs::path(kaicoder_bin()).parent_path().string() + ":" + (path ? path : "/usr/bin:/bin")}};
}

// Files named `pwned` anywhere under the case's folder: proof that a
// hostile name was run.
std::vector<std::string> sentinels(const TempRepo& repo) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(repo.path().parent_path(), ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename() == "pwned") found.push_back(it->path().string());
  return found;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t end = s.find(sep, at);
    if (end == std::string::npos) end = s.size();
    out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

bool have(const std::string& prog) { return std::system(("command -v " + prog + " >/dev/null 2>&1").c_str()) == 0; }

const std::regex k_proposal_id{"[0-9]+"};
// What rollback takes: last, last~N, a rollback id, an applied proposal's id.
const std::regex k_rollback_id{"last(~[1-9][0-9]*)?|[0-9]{8}T[0-9]{6}Z(-[0-9]+)?|[1-9][0-9]*"};
const std::vector<std::string> k_last_forms{"last", "last~1", "last~2", "last~3"};

const std::vector<std::string> k_verbs = {"init",  "propose", "run",      "list", "show", "approve", "reject",
                                          "apply", "log",     "rollback", "read", "ls",   "doctor"};

// Candidates bash offers for the words `line` (the last one is completed),
// NUL-separated so names with newlines stay whole.
std::vector<std::string> bash_complete(const TempRepo& repo, const std::vector<std::string>& line) {
  std::string words;
  for (const auto& w : line) words += sq(w) + " ";
  std::string body = "source " + sq(source_file("completions/kaicoder.bash")) + "; COMP_WORDS=(" + words +
                     "); COMP_CWORD=" + std::to_string(line.size() - 1) +
                     "; COMP_LINE=\"${COMP_WORDS[*]}\"; COMP_POINT=${#COMP_LINE}; _kaicoder; "
                     "for c in \"${COMPREPLY[@]}\"; do printf '%s\\0' \"$c\"; done";
  Run r = repo.spawn({"bash", "--norc", "--noprofile", "-c", body}, "", with_kaicoder_on_path()).finish();
  INFO("bash completion of '" << words << "': " << r.all());
  CHECK(r.exit_code == 0);
  return split(r.out, '\0');
}

// Candidates fish offers for `line` (text up to the cursor).
std::vector<std::string> fish_complete(const TempRepo& repo, const std::string& line) {
  std::string body = "source " + sq(source_file("completions/kaicoder.fish")) + "; complete -C " + sq(line);
  Run r = repo.spawn({"fish", "--no-config", "-c", body}, "", with_kaicoder_on_path()).finish();
  INFO("fish completion of '" << line << "': " << r.all());
  CHECK(r.exit_code == 0);
  std::vector<std::string> out;
  for (const auto& l : split(r.out, '\n')) out.push_back(l.substr(0, l.find('\t')));
  return out;
}

// zsh completion functions only run inside a completion widget of an
// interactive shell. What can carry a planted name is the id functions, and
// they hand their candidates to compadd: call them with compadd replaced by
// a function that prints the words it was given.
std::vector<std::string> zsh_ids(const TempRepo& repo, const std::string& fn) {
  std::string body =
      "compdef() { :; }\n"
      "compadd() {\n"
      "  local a words=0\n"
      "  while (( $# )); do\n"
      "    if (( words )); then print -rn -- \"$1\"$'\\0'\n"
      "    elif [[ $1 == -- ]]; then words=1\n"
      "    elif [[ $1 == -a ]]; then shift; for a in \"${(@P)1}\"; do print -rn -- \"$a\"$'\\0'; done\n"
      "    elif [[ $1 != -* ]]; then print -rn -- \"$1\"$'\\0'\n"
      "    fi\n"
      "    shift\n"
      "  done\n"
      "}\n"
      "source " +
      sq(source_file("completions/_kaicoder")) + "\n" + fn + "\n";
  Run r = repo.spawn({"zsh", "-f", "-c", body}, "", with_kaicoder_on_path()).finish();
  INFO("zsh " << fn << ": " << r.all());
  CHECK(r.exit_code == 0);
  return split(r.out, '\0');
}

// The whole zsh widget, as a person gets it: an interactive zsh on a
// pseudo-terminal (zsh/zpty) with compinit and the completion file, `line`
// typed and TAB pressed. compadd is wrapped to record every candidate it is
// given. Empty optional when zsh/zpty cannot be driven here.
std::optional<std::vector<std::string>> zsh_widget(const TempRepo& repo, const std::string& line) {
  // compinit's dump (zcd) is kept from one call to the next: building it
  // takes seconds, and it depends only on zsh's own functions.
  const fs::path scratch = repo.home() / "zsh-widget";
  fs::create_directories(scratch);
  fs::remove(scratch / "cands");
  const std::string script = R"ZSH(
zmodload zsh/zpty || exit 2
typeset o chunk
# Wait until the shell on the terminal has printed $1; callers type it as
# $((...)) so that the echo of their input does not count.
waitfor() {
  integer i
  for (( i = 0; i < 150; i++ )); do
    while zpty -r -t z chunk; do o+=$chunk; done
    [[ $o == *$1* ]] && return 0
    sleep 0.1
  done
  return 1
}
zpty z zsh -f -i
zpty -w z "PROMPT='> '; autoload -Uz compinit; compinit -u -d ${(q)3}/zcd; source ${(q)1}"
zpty -w z "compadd () { builtin compadd \"\$@\"; local -a h; builtin compadd -O h \"\$@\"; (( \$#h )) && print -rN -- \$h >> ${(q)3}/cands }"
zpty -w z 'print READY-$((20+1))'
waitfor READY-21 || exit 3
zpty -n -w z "$2"$'\t'
zpty -n -w z $'\C-u'
zpty -w z 'print MARK-$((40+2))'
waitfor MARK-42 || exit 3
zpty -d z
)ZSH";
  Run r = repo.spawn({"zsh", "-f", "-c", script, "zsh", source_file("completions/_kaicoder"), line, scratch.string()},
                     "", with_kaicoder_on_path())
              .finish();
  if (r.exit_code != 0) {
    WARN("zsh widget not driven (exit " << r.exit_code << "): " << r.all());
    return std::nullopt;
  }
  std::ifstream in(scratch / "cands", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return split(text, '\0');
}

void complete_ids_in_zsh_widget(const TempRepo& repo) {
  for (const char* verb : {"show", "apply", "approve", "reject", "rollback"}) {
    auto got = zsh_widget(repo, std::string("kaicoder ") + verb + " ");
    if (!got) return;
    for (const auto& c : *got)
      if (!c.starts_with("-")) {
        INFO("zsh widget: kaicoder " << verb << " offered '" << c << "'");
        CHECK(std::regex_match(c, std::string(verb) == "rollback" ? k_rollback_id : k_proposal_id));
      }
  }
  (void)zsh_widget(repo, "kaicoder read ");
}

void check_only(const std::vector<std::string>& got, const std::regex& shape, const std::string& what) {
  for (const auto& c : got) {
    INFO(what << " offered '" << c << "'");
    CHECK(std::regex_match(c, shape));
  }
}

bool offers(const std::vector<std::string>& got, const std::string& c) {
  return std::count(got.begin(), got.end(), c) >= 1;
}

// Plant the hostile names where the old fallbacks looked.
void plant_store_names(const TempRepo& repo) {
  for (const auto& n : k_hostile) {
    repo.write(".kaicoder/staging/" + n + "/meta.json", "{\n  \"status\": \"pending\"\n}\n");
    repo.write(".kaicoder/journal/" + n + ".json", "{}\n");
  }
}

// The verbs and option values a person completes, in bash.
void complete_everything_in_bash(const TempRepo& repo) {
  for (const auto& verb : k_verbs) {
    auto got = bash_complete(repo, {"kaicoder", verb, ""});
    if (verb == "show" || verb == "apply" || verb == "approve" || verb == "reject")
      check_only(got, k_proposal_id, "bash: kaicoder " + verb);
    if (verb == "rollback") check_only(got, k_rollback_id, "bash: kaicoder rollback");
    (void)bash_complete(repo, {"kaicoder", verb, "--"});
  }
  for (const char* opt : {"--path", "--content-file", "--target-file", "--replacement-file", "--config"})
    (void)bash_complete(repo, {"kaicoder", "propose", opt, ""});
  (void)bash_complete(repo, {"kaicoder", "run", "--cwd", ""});
  (void)bash_complete(repo, {"kaicoder", "run", "--", ""});
  (void)bash_complete(repo, {"kaicoder", "run", "--", "cat", ""});
  (void)bash_complete(repo, {"kaicoder", "--root", ""});
}

void complete_everything_in_fish(const TempRepo& repo) {
  for (const auto& verb : k_verbs) {
    auto got = fish_complete(repo, "kaicoder " + verb + " ");
    if (verb == "show" || verb == "apply" || verb == "approve" || verb == "reject")
      for (const auto& c : got)
        if (!c.starts_with("-")) {
          INFO("fish: kaicoder " << verb << " offered '" << c << "'");
          CHECK(std::regex_match(c, k_proposal_id));
        }
    if (verb == "rollback")
      for (const auto& c : got)
        if (!c.starts_with("-")) {
          INFO("fish: kaicoder rollback offered '" << c << "'");
          CHECK(std::regex_match(c, k_rollback_id));
        }
  }
  (void)fish_complete(repo, "kaicoder propose --path ");
  (void)fish_complete(repo, "kaicoder run -- ");
}

void complete_ids_in_zsh(const TempRepo& repo) {
  check_only(zsh_ids(repo, "_kaicoder_pending_ids"), k_proposal_id, "zsh: pending ids");
  check_only(zsh_ids(repo, "_kaicoder_any_ids"), k_proposal_id, "zsh: proposal ids");
  check_only(zsh_ids(repo, "_kaicoder_rollback_ids"), k_rollback_id, "zsh: rollback ids");
}

// Every file and folder under `dir`: relative path -> kind, bytes and
// modification time (ns), so a write, a touch, or a file made and removed
// again (its folder's time changes) all show up.
std::map<std::string, std::string> full_snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string v =
        std::to_string(st.st_mode) + " " + std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    if (S_ISREG(st.st_mode)) {
      std::ifstream in(it->path(), std::ios::binary);
      v += " " + std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    out[it->path().lexically_relative(dir).string()] = v;
  }
  struct stat top {};
  if (::lstat(dir.c_str(), &top) == 0)
    out["."] = std::to_string(top.st_mtim.tv_sec) + "." + std::to_string(top.st_mtim.tv_nsec);
  return out;
}

}  // namespace

TEST_CASE(
    "attack: list, show, log and completion run no hook and write nothing, even with a proposal past "
    "its timeout",
    "[attack][completion]") {
  // A cloned tree whose owner trusted it once: a pending proposal long past
  // its timeout and a notify hook. Looking at it (or pressing TAB) must not
  // expire the proposal, write the changelog, recover, or run the hook.
  TempRepo repo{{"a.txt", "one\n"}, {"b.txt", "two\n"}};
  repo.init();
  const fs::path hooked = repo.abs(".hooked");  // hooks run confined: root is where they may write
  std::string cfg = repo.read("kaicoder.toml");
  const std::string off = "notify = \"\"";
  REQUIRE(cfg.find(off) != std::string::npos);
  cfg.replace(cfg.find(off), off.size(), "notify = \"touch " + hooked.string() + "\"");
  repo.write("kaicoder.toml", cfg);
  repo.trust();  // the owner trusts the changed config at a terminal
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "one", "uno")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "two", "dos")), 0);
  fs::remove(hooked);
  json meta = json::parse(repo.read(".kaicoder/staging/2/meta.json"));
  meta["created"] = "2020-01-01T00:00:00Z";
  write_sealed_record(repo, 2, meta);  // stands in for time passing
  const auto before = full_snapshot(repo.path());

  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{{"list"},
                                                                                    {"--json", "list"},
                                                                                    {"list", "--status", "pending"},
                                                                                    {"show", "2"},
                                                                                    {"--json", "show", "2"},
                                                                                    {"show", "1"},
                                                                                    {"log"},
                                                                                    {"--json", "log", "-n", "50"},
                                                                                    {"log", "--full"}}) {
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 0);
  }
  Run listed = repo.kai({"list"});
  CHECK_THAT(listed.out, Contains("expired*"));
  CHECK(json_of(repo.kai({"--json", "list", "--status", "pending"})).at("proposals").empty());
  json shown = show_json(repo, 2);
  CHECK(shown.at("status") == "pending");
  CHECK(shown.at("expired") == true);
  CHECK_THAT(repo.kai({"show", "2"}).out, Contains("expired:"));
  for (const auto& verb : k_verbs) (void)bash_complete(repo, {"kaicoder", verb, ""});
  if (have("fish"))
    for (const char* line : {"kaicoder approve ", "kaicoder show ", "kaicoder rollback "})
      (void)fish_complete(repo, line);
  if (have("zsh"))
    for (const char* fn : {"_kaicoder_pending_ids", "_kaicoder_rollback_ids"}) (void)zsh_ids(repo, fn);

  CHECK_FALSE(fs::exists(hooked));
  const auto after = full_snapshot(repo.path());
  for (const auto& [path, v] : after) {
    INFO("changed or new: " << path);
    CHECK((before.count(path) == 1 && before.at(path) == v));
  }
  for (const auto& [path, v] : before) {
    INFO("gone: " << path);
    CHECK(after.count(path) == 1);
  }

  // The control: the next proposal records the expiry and runs the hook,
  // so the checks above could have failed.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "c.txt", "--content-file", "-", "--why", "w"}, "c\n"), 0);
  CHECK(show_json(repo, 2).at("status") == "timeout");
  CHECK(log_entries(repo).at(0).at("kind") == "timeout");
  CHECK(fs::exists(hooked));
}

TEST_CASE("attack: hostile names in a fresh clone's .kaicoder and tree are never evaluated by completion",
          "[attack][completion][long]") {
  // A cloned repository that was never initialised here: `list` and `log`
  // have no ids, which is when the old scripts fell back to file names.
  TempRepo repo{{"README.md", "hello\n"}};
  plant_store_names(repo);
  for (const auto& n : k_hostile) repo.write(n, "bait\n");
  REQUIRE(sentinels(repo).empty());

  complete_everything_in_bash(repo);
  CHECK(sentinels(repo).empty());
  auto ids = bash_complete(repo, {"kaicoder", "rollback", ""});
  CHECK(ids == k_last_forms);
  CHECK(bash_complete(repo, {"kaicoder", "approve", ""}).empty());
  // File names are offered as they are: a file named '*' is one candidate,
  // not every file in the folder.
  auto files = bash_complete(repo, {"kaicoder", "read", ""});
  CHECK(offers(files, "*"));
  CHECK(offers(files, "$(touch pwned)"));

  if (have("fish")) {
    complete_everything_in_fish(repo);
    CHECK(sentinels(repo).empty());
  } else {
    WARN("fish is not installed: fish completion not checked");
  }
  if (have("zsh")) {
    complete_ids_in_zsh(repo);
    CHECK(zsh_ids(repo, "_kaicoder_rollback_ids") == k_last_forms);
    complete_ids_in_zsh_widget(repo);
    CHECK(sentinels(repo).empty());
  } else {
    WARN("zsh is not installed: zsh completion not checked");
  }
  CHECK(sentinels(repo).empty());
}

TEST_CASE("attack: completion in a live store offers only its well-formed ids beside planted names",
          "[attack][completion][long]") {
  TempRepo repo{{"a.txt", "one\n"}, {"b.txt", "two\n"}};
  for (const auto& n : k_hostile) repo.write(n, "bait\n");
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "one", "uno")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "two", "dos")), 0);
  const std::string rollback_id = log_entries(repo).at(0).at("rollback_id").get<std::string>();
  plant_store_names(repo);
  REQUIRE(sentinels(repo).empty());

  complete_everything_in_bash(repo);
  CHECK(sentinels(repo).empty());
  auto pending = bash_complete(repo, {"kaicoder", "approve", ""});
  CHECK(pending == std::vector<std::string>{"2"});
  auto any = bash_complete(repo, {"kaicoder", "show", ""});
  CHECK(offers(any, "1"));
  CHECK(offers(any, "2"));
  auto rb = bash_complete(repo, {"kaicoder", "rollback", ""});
  CHECK(offers(rb, "last"));
  CHECK(offers(rb, "last~1"));
  CHECK(offers(rb, rollback_id));
  CHECK(offers(rb, "1"));  // applied: rollback 1 undoes it
  CHECK_FALSE(offers(rb, "2"));

  if (have("fish")) {
    complete_everything_in_fish(repo);
    CHECK(offers(fish_complete(repo, "kaicoder approve "), "2"));
    CHECK(offers(fish_complete(repo, "kaicoder rollback "), rollback_id));
    CHECK(sentinels(repo).empty());
  } else {
    WARN("fish is not installed: fish completion not checked");
  }
  if (have("zsh")) {
    complete_ids_in_zsh(repo);
    CHECK(zsh_ids(repo, "_kaicoder_pending_ids") == std::vector<std::string>{"2"});
    CHECK(offers(zsh_ids(repo, "_kaicoder_rollback_ids"), rollback_id));
    complete_ids_in_zsh_widget(repo);
    if (auto w = zsh_widget(repo, "kaicoder approve ")) CHECK(offers(*w, "2"));
    if (auto w = zsh_widget(repo, "kaicoder rollback ")) CHECK(offers(*w, rollback_id));
    CHECK(sentinels(repo).empty());
  } else {
    WARN("zsh is not installed: zsh completion not checked");
  }
  CHECK(sentinels(repo).empty());
}

TEST_CASE("completion scripts read ids only from kaicoder and never evaluate them", "[attack][completion]") {
  // The structure behind the cases above: no script looks at names under
  // .kaicoder/, and none evaluates text.
  for (const char* file : {"completions/kaicoder.bash", "completions/_kaicoder", "completions/kaicoder.fish"}) {
    std::ifstream in(source_file(file));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(file);
    REQUIRE(!text.empty());
    CHECK(text.find("/staging") == std::string::npos);
    CHECK(text.find("/journal") == std::string::npos);
    CHECK(text.find("eval ") == std::string::npos);
  }
}

}  // namespace kai::test
