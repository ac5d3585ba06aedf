// The core loop end to end: every verb's happy path, its --json shape, the
// changelog format of SPEC §6, backups, byte-exact content, file modes,
// --wait, usage errors and unknown ids.

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <thread>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;

// 20260709T142530Z[-N] → 2026-07-09T14:25:30Z
std::string iso_of(const std::string& id) {
  return id.substr(0, 4) + "-" + id.substr(4, 2) + "-" + id.substr(6, 2) + "T" + id.substr(9, 2) + ":" +
         id.substr(11, 2) + ":" + id.substr(13, 2) + "Z";
}

bool is_rollback_id(const std::string& id) {
  static const std::regex shape(R"(\d{8}T\d{6}Z(-\d+)?)");
  return std::regex_match(id, shape);
}

// The lines of the changelog entry whose heading names `id`.
std::vector<std::string> entry_lines(const TempRepo& repo, const std::string& id) {
  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].starts_with("## ") && lines[i].ends_with("rollback-id: " + id))
      return {lines.begin() + static_cast<long>(i), lines.begin() + static_cast<long>(std::min(lines.size(), i + 10))};
  return {};
}

std::string applied_id(const Run& r) {
  std::smatch m;
  static const std::regex id_re(R"(rollback-id: (\d{8}T\d{6}Z(?:-\d+)?))");
  return std::regex_search(r.out, m, id_re) ? m[1].str() : std::string{};
}

// Approve proposal `id` at a terminal; returns its rollback id.
std::string approve(const TempRepo& repo, int id) {
  Run a = repo.kai_tty({"approve", std::to_string(id)}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  std::string rid = applied_id(a);
  REQUIRE(is_rollback_id(rid));
  return rid;
}


// ----- init --------------------------------------------------------------------------------------

TEST_CASE("init asks at the terminal, writes the config and state folder, keeps them out of git and trusts the root",
          "[e2e][init]") {
  TempRepo repo{{"a.txt", "a\n"}};
  Run r = repo.kai_tty({"init"}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(r.prompted);
  CHECK_THAT(r.tty, Contains("Make " + repo.path().string() + " a kaicoder root and trust it?"));
  CHECK_THAT(r.out, Contains("initialised kaicoder in " + repo.path().string()));
  CHECK(repo.exists("kaicoder.toml"));
  {
    // The written config is the documented example, byte for byte.
    std::ifstream ex(std::string(KAICODER_SOURCE_DIR) + "/kaicoder.toml.example", std::ios::binary);
    std::string example((std::istreambuf_iterator<char>(ex)), std::istreambuf_iterator<char>());
    CHECK(repo.read("kaicoder.toml") == example);
  }
  CHECK(std::filesystem::is_directory(repo.abs(".kaicoder")));
  std::string gi = repo.read(".gitignore");
  CHECK_THAT(gi, Contains(".kaicoder/\n"));
  CHECK_THAT(gi, Contains("*.bak-kaicoder-*\n"));

  // The owner's list of trusted roots names it with the digest of those bytes.
  json list = json::parse(read_outside(repo.owner_dir() / "trusted-roots.json"));
  REQUIRE(list.at("roots").size() == 1);
  CHECK(list.at("roots")[0].at("root") == repo.path().string());
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);

  SECTION("a second init refuses to overwrite") {
    auto before = repo.tree_snapshot();
    Run again = repo.kai_tty({"init"}, "y");
    CHECK(again.exit_code == 6);
    CHECK_FALSE(again.prompted);
    CHECK_THAT(again.err, Contains("already exists") && Contains("kaicoder trust"));
    CHECK(repo.tree_snapshot() == before);
  }
}

TEST_CASE("init without a terminal, or answered no, writes nothing and trusts nothing", "[e2e][init]") {
  TempRepo repo{{"a.txt", "a\n"}};
  auto before = repo.tree_snapshot();
  Run r = repo.kai({"init"});
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("terminal"));
  Run no = repo.kai_tty({"init"}, "n");
  KAI_CHECK_EXIT(no, 4);
  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder"));
  CHECK_FALSE(std::filesystem::exists(repo.owner_dir() / "trusted-roots.json"));
}

TEST_CASE("init --json names the root, the config and what went into .gitignore", "[e2e][init]") {
  TempRepo repo{{".gitignore", "*.o\n"}};
  Run r = repo.kai_tty({"--json", "init"}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("root") == repo.path().string());
  CHECK(j.at("config") == repo.abs("kaicoder.toml").string());
  CHECK(j.at("gitignore_added") == json::array({".kaicoder/", "*.bak-kaicoder-*"}));
  CHECK(repo.read(".gitignore") == "*.o\n.kaicoder/\n*.bak-kaicoder-*\n");
}

// ----- propose -----------------------------------------------------------------------------------

TEST_CASE("propose stages an edit and prints its id, kind and diff without touching the tree", "[e2e][propose]") {
  TempRepo repo{{"src/a.txt", "one\ntwo\nthree\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai(edit("src/a.txt", "two", "TWO", "make it loud"));
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("proposal 1"));
  CHECK_THAT(r.out, Contains("edit"));
  CHECK_THAT(r.out, Contains("risk low"));
  CHECK_THAT(r.out, Contains("--- a/src/a.txt\n+++ b/src/a.txt\n"));
  CHECK_THAT(r.out, Contains("-two\n+TWO\n"));
  CHECK_THAT(r.out, Contains("kaicoder approve 1"));
  CHECK(repo.tree_snapshot() == before);
  CHECK(std::filesystem::is_directory(repo.abs(".kaicoder/staging/1")));
  CHECK(show_json(repo, 1).at("status") == "pending");
  // Colour is for terminals only.
  CHECK(r.out.find('\x1b') == std::string::npos);
}

TEST_CASE("propose accepts an absolute path inside the root and a ./ prefix", "[e2e][propose]") {
  TempRepo repo{{"src/a.txt", "a\nb\n"}};
  repo.init();
  Run abs = repo.kai({"--json", "propose", "--path", repo.abs("src/a.txt").string(), "--target", "a", "--replacement",
                      "A", "--why", "w"});
  KAI_REQUIRE_EXIT(abs, 0);
  CHECK(json_of(abs).at("path") == "src/a.txt");
  Run dot = repo.kai({"--json", "propose", "--path", "./src/../src/a.txt", "--target", "b", "--replacement", "B",
                      "--why", "w"});
  KAI_REQUIRE_EXIT(dot, 0);
  CHECK(json_of(dot).at("path") == "src/a.txt");
}

TEST_CASE("propose --json has id, kind, path, status and diff", "[e2e][propose][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("id") == 1);
  CHECK(j.at("kind") == "edit");
  CHECK(j.at("path") == "a.txt");
  CHECK(j.at("status") == "pending");
  CHECK(j.at("why") == "w");
  CHECK_THAT(j.at("diff").get<std::string>(), Contains("-old\n+new\n"));
  CHECK(j.at("dry_run") == false);

  SECTION("--json also works after the subcommand") {
    Run r2 = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "newer", "--why", "w", "--json"});
    KAI_REQUIRE_EXIT(r2, 0);
    CHECK(json_of(r2).at("id") == 2);
  }
}

TEST_CASE("propose --content-file stages a write that creates a file", "[e2e][propose]") {
  TempRepo repo{{"content.in", "fresh\nfile\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "docs/new.txt", "--content-file", "content.in", "--why", "w"});
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("kind") == "write");
  CHECK(j.at("path") == "docs/new.txt");
  CHECK(j.at("base").at("exists") == false);
  CHECK_THAT(j.at("diff").get<std::string>(), Contains("+fresh\n+file\n"));
  CHECK_FALSE(repo.exists("docs"));
  std::string rid = approve(repo, 1);
  CHECK(repo.read("docs/new.txt") == "fresh\nfile\n");
  CHECK(repo.find(".bak-kaicoder-").empty());
  json e = log_entries(repo).at(0);
  CHECK(e.at("kind") == "write");
  CHECK(e.at("backup") == "\u2014");
  CHECK(e.at("rollback") == "delete new.txt");
}

TEST_CASE("propose --content-file - reads the content from stdin and overwrites a file", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "old content\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "a.txt", "--content-file", "-", "--why", "w"}, "new content\n");
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("kind") == "write");
  CHECK(j.at("base").at("exists") == true);
  std::string rid = approve(repo, 1);
  CHECK(repo.read("a.txt") == "new content\n");
  CHECK(repo.read("a.txt.bak-kaicoder-" + rid) == "old content\n");
}

TEST_CASE("propose --delete stages removal of one file", "[e2e][propose]") {
  TempRepo repo{{"gone.txt", "bye\n"}, {"kept.txt", "stay\n"}};
  repo.init();
  Run r = repo.kai({"--json", "propose", "--path", "gone.txt", "--delete", "--why", "unused"});
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(json_of(r).at("kind") == "delete");
  CHECK(repo.exists("gone.txt"));
  std::string rid = approve(repo, 1);
  CHECK_FALSE(repo.exists("gone.txt"));
  CHECK(repo.read("gone.txt.bak-kaicoder-" + rid) == "bye\n");
  CHECK(repo.read("kept.txt") == "stay\n");
  CHECK(log_entries(repo).at(0).at("action") == "delete_file");
}

TEST_CASE("propose --json-input takes a multi-line edit from stdin", "[e2e][propose]") {
  TempRepo repo{{"a.py", "def f():\n    return 1\n\nprint(f())\n"}};
  repo.init();
  json req = {{"path", "a.py"},
              {"target", "def f():\n    return 1\n"},
              {"replacement", "def f():\n    \"quoted\" 'both'\n    return 2\n"},
              {"why", "multi-line"},
              {"agent", "json-agent"}};
  Run r = repo.kai({"--json", "propose", "--json-input"}, req.dump());
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("kind") == "edit");
  CHECK(j.at("agent") == "json-agent");
  approve(repo, 1);
  CHECK(repo.read("a.py") == "def f():\n    \"quoted\" 'both'\n    return 2\n\nprint(f())\n");

  SECTION("a write and a delete go through --json-input too") {
    json w = {{"path", "b.txt"}, {"content", "b\n"}, {"why", "w"}};
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, w.dump()), 0);
    json d = {{"path", "a.py"}, {"delete", true}, {"why", "w"}};
    Run rd = repo.kai({"--json", "propose", "--json-input"}, d.dump());
    KAI_REQUIRE_EXIT(rd, 0);
    CHECK(json_of(rd).at("kind") == "delete");
    CHECK(show_json(repo, 2).at("kind") == "write");
  }
}

TEST_CASE("propose reads target and replacement from files, or one of them from stdin", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "alpha\nbeta\ngamma\n"}, {"t.in", "beta\n"}, {"r.in", "BETA\nBETA2\n"}};
  repo.init();

  SECTION("both from files") {
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target-file", "t.in", "--replacement-file", "r.in",
                               "--why", "w"}),
                     0);
  }
  SECTION("target from stdin") {
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target-file", "-", "--replacement-file", "r.in",
                               "--why", "w"},
                              "beta\n"),
                     0);
  }
  SECTION("replacement from stdin") {
    KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target-file", "t.in", "--replacement-file", "-",
                               "--why", "w"},
                              "BETA\nBETA2\n"),
                     0);
  }
  approve(repo, 1);
  CHECK(repo.read("a.txt") == "alpha\nBETA\nBETA2\ngamma\n");
}

TEST_CASE("propose --dry-run prints the diff and stages nothing", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  auto before = repo.tree_snapshot();
  Run r = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w", "--dry-run"});
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("dry run: nothing staged"));
  CHECK_THAT(r.out, Contains("-old\n+new\n"));
  Run j = repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w",
                    "--dry-run"});
  KAI_REQUIRE_EXIT(j, 0);
  CHECK(json_of(j).at("dry_run") == true);
  CHECK(json_of(j).at("id") == 0);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  CHECK(json_of(l).at("proposals").empty());
  CHECK(repo.tree_snapshot() == before);
  // The next real proposal still gets the first id.
  Run real = repo.kai({"--json", "propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_REQUIRE_EXIT(real, 0);
  CHECK(json_of(real).at("id") == 1);
}

TEST_CASE("propose records the agent from --agent or KAICODER_AGENT", "[e2e][propose]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "a", "--replacement", "A", "--why", "w",
                             "--agent", "flag-agent"}),
                   0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B"), "", {{"KAICODER_AGENT", "env-agent"}}), 0);
  // The flag wins over the environment.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "b", "--replacement", "BB", "--why", "w",
                             "--agent", "flag-wins"},
                            "", {{"KAICODER_AGENT", "env-agent"}}),
                   0);
  CHECK(show_json(repo, 1).at("agent") == "flag-agent");
  CHECK(show_json(repo, 2).at("agent") == "env-agent");
  CHECK(show_json(repo, 3).at("agent") == "flag-wins");
  Run s = repo.kai({"show", "2"});
  KAI_REQUIRE_EXIT(s, 0);
  CHECK_THAT(s.out, Contains("agent:\n      | env-agent"));
}

// ----- list and show -----------------------------------------------------------------------------

TEST_CASE("list shows pending proposals first and filters by --status", "[e2e][list]") {
  TempRepo repo{{"a.txt", "1\n2\n3\n4\n"}};
  repo.init();
  for (const char* line : {"1", "2", "3", "4"}) KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", line, std::string(line) + "x")), 0);
  approve(repo, 2);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "3"}, "y"), 0);

  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  std::vector<std::pair<int, std::string>> got;
  const json listed = json_of(l);
  for (const auto& p : listed.at("proposals")) got.emplace_back(p.at("id").get<int>(), p.at("status").get<std::string>());
  std::vector<std::pair<int, std::string>> want = {{1, "pending"}, {4, "pending"}, {3, "rejected"}, {2, "applied"}};
  CHECK(got == want);

  Run text = repo.kai({"list"});
  KAI_REQUIRE_EXIT(text, 0);
  size_t p1 = text.out.find("   1  pending"), p4 = text.out.find("   4  pending"), p2 = text.out.find("   2  applied");
  CHECK(p1 != std::string::npos);
  CHECK(p1 < p4);
  CHECK(p4 < p2);

  Run only = repo.kai({"--json", "list", "--status", "applied"});
  KAI_REQUIRE_EXIT(only, 0);
  REQUIRE(json_of(only).at("proposals").size() == 1);
  CHECK(json_of(only).at("proposals").at(0).at("id") == 2);
  Run none = repo.kai({"list", "--status", "timeout"});
  KAI_REQUIRE_EXIT(none, 0);
  CHECK_THAT(none.out, Contains("no proposals with status timeout"));
  KAI_CHECK_EXIT(repo.kai({"list", "--status", "bogus"}), 2);
}

TEST_CASE("show prints metadata and the diff, and --full shows a diff too large for review", "[e2e][show]") {
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "line " + std::to_string(i) + "\n";
  TempRepo repo{{"a.txt", "old\n"}, {"big.txt", big}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new", "the reason")), 0);
  Run s = repo.kai({"show", "1"});
  KAI_REQUIRE_EXIT(s, 0);
  CHECK_THAT(s.out, Contains("proposal 1"));
  CHECK_THAT(s.out, Contains("path:     a.txt"));
  CHECK_THAT(s.out, Contains("why:\n      | the reason"));
  CHECK_THAT(s.out, Contains("-old\n+new\n"));
  json j = show_json(repo, 1);
  CHECK(j.at("id") == 1);
  CHECK_THAT(j.at("diff").get<std::string>(), Contains("+new"));

  std::string changed;
  for (int i = 0; i < 3000; ++i) changed += (i % 2 ? "LINE " : "line ") + std::to_string(i) + "\n";
  repo.write("big.in", changed);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "big.txt", "--content-file", "big.in", "--why", "w"}), 0);
  json brief = show_json(repo, 2);
  Run full = repo.kai({"--json", "show", "2", "--full"});
  KAI_REQUIRE_EXIT(full, 0);
  json jf = json_of(full);
  CHECK(jf.at("diff_info").at("truncated") == false);
  CHECK(jf.at("diff").get<std::string>().size() >= brief.at("diff").get<std::string>().size());
  CHECK_THAT(jf.at("diff").get<std::string>(), Contains("+LINE 2999\n"));
  CHECK(brief.at("diff_info").at("truncated") == true);
  Run t = repo.kai({"show", "2"});
  KAI_CHECK_EXIT(t, 0);
  CHECK_THAT(t.out, Contains("kaicoder show 2 --full"));
}

// ----- approve, apply, reject --------------------------------------------------------------------

TEST_CASE("approve shows the diff, asks y/N on the terminal and applies on y", "[e2e][approve]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"approve", "1"}, "y", {}, TtyOutput::terminal);
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.tty, Contains("-old\n+new\n"));
  CHECK_THAT(a.tty, Contains("Apply proposal 1 to a.txt? [y/N]"));
  CHECK_THAT(a.tty, Contains("applied proposal 1 to a.txt"));
  CHECK(repo.read("a.txt") == "new\n");
  json p = show_json(repo, 1);
  CHECK(p.at("status") == "applied");
  CHECK(p.at("decided_by") == current_user());
  CHECK(is_rollback_id(p.at("rollback_id")));
}

TEST_CASE("approve answered n leaves the proposal pending and the tree alone", "[e2e][approve]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  auto before = repo.tree_snapshot();
  for (const char* no : {"n", "", "nope", "yess"}) {
    Run a = repo.kai_tty({"approve", "1"}, no);
    KAI_CHECK_EXIT(a, 0);
    CHECK(a.prompted);
    CHECK_THAT(a.out, Contains("still pending"));
  }
  CHECK(repo.tree_snapshot() == before);
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(log_entries(repo).empty());
}

TEST_CASE("approve --no-apply records the decision and apply then writes it", "[e2e][approve][apply]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"approve", "1", "--no-apply"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.out, Contains("kaicoder apply 1"));
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "approved");
  // apply needs no terminal: the decision is already made.
  Run ap = repo.kai({"--json", "apply", "1"});
  KAI_REQUIRE_EXIT(ap, 0);
  json j = json_of(ap);
  CHECK(j.at("status") == "applied");
  CHECK(is_rollback_id(j.at("applied").at("rollback_id")));
  CHECK(repo.read("a.txt") == "new\n");
  CHECK(log_entries(repo).at(0).at("approver") == current_user());

  SECTION("applying it again is a conflict") {
    Run again = repo.kai({"apply", "1"});
    KAI_CHECK_EXIT(again, 6);
    CHECK(repo.read("a.txt") == "new\n");
    CHECK(log_entries(repo).size() == 1);
  }
}

TEST_CASE("approve --json prints the applied proposal", "[e2e][approve][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  json j = json_of(a);
  CHECK(j.at("id") == 1);
  CHECK(j.at("status") == "applied");
  json o = j.at("applied");
  CHECK(o.at("unchanged") == false);
  CHECK(o.at("backup") == repo.abs("a.txt.bak-kaicoder-" + o.at("rollback_id").get<std::string>()).string());
  CHECK(o.at("entry").at("kind") == "edit");
}

TEST_CASE("apply refuses a proposal that is not approved", "[e2e][apply]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  Run r = repo.kai({"apply", "1"});
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.err, Contains("not approved"));
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("reject with --reason logs a rejected entry and writes nothing in the tree", "[e2e][reject]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new", "because")), 0);
  auto before = repo.tree_snapshot();
  before.erase("KAI-CODER-CHANGELOG.md");
  Run r = repo.kai_tty({"reject", "1", "--reason", "not like this"}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("rejected proposal 1"));
  auto after = repo.tree_snapshot();
  after.erase("KAI-CODER-CHANGELOG.md");
  CHECK(after == before);
  json p = show_json(repo, 1);
  CHECK(p.at("status") == "rejected");
  CHECK(p.at("reason") == "not like this");
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  json e = entries.at(0);
  CHECK(e.at("kind") == "rejected");
  CHECK(e.at("rollback_id") == "\u2014");
  CHECK(e.at("files") == json::array({repo.abs("a.txt").string()}));
  CHECK(e.at("action") == "edit_file");
  CHECK(e.at("why") == "because");
  CHECK(e.at("approver") == current_user());
  CHECK(e.at("result") == "rejected: not like this");
  CHECK(e.at("backup") == "\u2014");
  CHECK(e.at("rollback") == "\u2014");
  // A rejected proposal can no longer be approved.
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 6);
  CHECK_FALSE(a.prompted);
  CHECK(repo.read("a.txt") == "old\n");

  SECTION("reject --json prints the proposal") {
    KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "newer")), 0);
    Run rj = repo.kai_tty({"--json", "reject", "2"}, "y");
    KAI_REQUIRE_EXIT(rj, 0);
    CHECK(json_of(rj).at("status") == "rejected");
  }
  SECTION("answering n to reject keeps it pending") {
    KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "newer")), 0);
    Run rn = repo.kai_tty({"reject", "2"}, "n");
    KAI_REQUIRE_EXIT(rn, 0);
    CHECK(show_json(repo, 2).at("status") == "pending");
  }
}

// Like approve, reject and rollback check that there is something to decide
// before they ask a person to decide it.
TEST_CASE("reject and rollback say what is wrong before asking the question", "[e2e][reject][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  Run again = repo.kai_tty({"reject", "1"}, "y");
  KAI_CHECK_EXIT(again, 6);
  CHECK_FALSE(again.prompted);
  Run unknown = repo.kai_tty({"rollback", "20990101T000000Z"}, "y");
  KAI_CHECK_EXIT(unknown, 7);
  CHECK_FALSE(unknown.prompted);
}

TEST_CASE("list reports a corrupt proposal record and the other proposals still work", "[e2e][list]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B")), 0);
  repo.write(".kaicoder/staging/1/meta.json", "{ not json");
  Run l = repo.kai({"--json", "list"});
  KAI_REQUIRE_EXIT(l, 0);
  json j = json_of(l);
  REQUIRE(j.at("corrupt").size() == 1);
  CHECK(j.at("corrupt").at(0).at("id") == 1);
  REQUIRE(j.at("proposals").size() == 1);
  CHECK(j.at("proposals").at(0).at("id") == 2);
  Run text = repo.kai({"list"});
  KAI_CHECK_EXIT(text, 0);
  CHECK_THAT(text.out, Contains("corrupt"));
  approve(repo, 2);
  CHECK(repo.read("a.txt") == "a\nB\n");
  // The next id never reuses the corrupt one.
  Run next = repo.kai({"--json", "propose", "--path", "a.txt", "--target", "a\n", "--replacement", "x\n", "--why", "w"});
  KAI_REQUIRE_EXIT(next, 0);
  CHECK(json_of(next).at("id") == 3);
}

// ----- log ---------------------------------------------------------------------------------------

TEST_CASE("log lists entries newest first and filters with -n, --kind and --file", "[e2e][log]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}, {"c.txt", "c\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A", "first")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "c.txt", "--delete", "--why", "second"}), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "B", "third")), 0);
  std::string r1 = approve(repo, 1);
  std::string r2 = approve(repo, 2);
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "3"}, "y"), 0);

  json all = log_entries(repo);
  REQUIRE(all.size() == 3);
  CHECK(all.at(0).at("kind") == "rejected");
  CHECK(all.at(1).at("rollback_id") == r2);
  CHECK(all.at(2).at("rollback_id") == r1);

  Run text = repo.kai({"log"});
  KAI_REQUIRE_EXIT(text, 0);
  size_t at2 = text.out.find(r2 + " "), at1 = text.out.find(r1 + " ");
  CHECK(at2 != std::string::npos);
  CHECK(at2 < at1);
  CHECK_THAT(text.out, Contains("a.txt"));  // one line each, paths relative to root

  Run n1 = repo.kai({"--json", "log", "-n", "1"});
  KAI_REQUIRE_EXIT(n1, 0);
  CHECK(json_of(n1).at("entries").size() == 1);

  Run kind = repo.kai({"--json", "log", "--kind", "delete"});
  KAI_REQUIRE_EXIT(kind, 0);
  REQUIRE(json_of(kind).at("entries").size() == 1);
  CHECK(json_of(kind).at("entries").at(0).at("rollback_id") == r2);

  Run file = repo.kai({"--json", "log", "--file", "a.txt"});
  KAI_REQUIRE_EXIT(file, 0);
  REQUIRE(json_of(file).at("entries").size() == 1);
  CHECK(json_of(file).at("entries").at(0).at("rollback_id") == r1);
  Run file_abs = repo.kai({"--json", "log", "--file", repo.abs("b.txt").string()});
  KAI_REQUIRE_EXIT(file_abs, 0);
  REQUIRE(json_of(file_abs).at("entries").size() == 1);
  CHECK(json_of(file_abs).at("entries").at(0).at("kind") == "rejected");

  Run full = repo.kai({"log", "--full", "-n", "1", "--kind", "edit"});
  KAI_REQUIRE_EXIT(full, 0);
  CHECK_THAT(full.out, StartsWith("## " + iso_of(r1) + "  \u00b7  edit  \u00b7  rollback-id: " + r1 + "\n"));
  CHECK_THAT(full.out, Contains("- why:       first\n"));

  KAI_CHECK_EXIT(repo.kai({"log", "--kind", "bogus"}), 2);
}

TEST_CASE("log on a tree with no changes says so", "[e2e][log]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  Run r = repo.kai({"log"});
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("no changelog entries"));
  CHECK(log_entries(repo).empty());
}

// ----- the changelog format (SPEC §6) ------------------------------------------------------------

TEST_CASE("the changelog entry of an edit is exactly the SPEC format", "[e2e][changelog]") {
  TempRepo repo{{"src/leo.mjs", "speak(text)\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "src/leo.mjs", "--target", "speak(text)", "--replacement",
                             "if (voice) speak(text)", "--why", "Leo crashed on empty text; add a guard.", "--summary",
                             "Guarded the TTS call with a null-voice check."}),
                   0);
  std::string id = approve(repo, 1);
  std::string file = repo.abs("src/leo.mjs").string();
  std::vector<std::string> want = {
      "## " + iso_of(id) + "  \u00b7  edit  \u00b7  rollback-id: " + id,
      "- file(s):   " + file,
      "- action:    edit_file",
      "- summary:   Guarded the TTS call with a null-voice check.",
      "- why:       Leo crashed on empty text; add a guard.",
      "- backup:    " + file + ".bak-kaicoder-" + id,
      "- approver:  " + current_user(),
      "- result:    ok",
      "- rollback:  restore leo.mjs.bak-kaicoder-" + id + " \u2192 leo.mjs",
      "",
  };
  CHECK(entry_lines(repo, id) == want);
  CHECK(json_of(repo.kai({"--json", "log"})).at("entries").at(0).at("time") == iso_of(id));
}

TEST_CASE("the changelog is newest first and uses — for none", "[e2e][changelog]") {
  TempRepo repo{{"a.txt", "a\n"}, {"c.in", "created\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "new.txt", "--content-file", "c.in", "--why", "w1"}), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--delete", "--why", "w2"}), 0);
  std::string created = approve(repo, 1);
  std::string deleted = approve(repo, 2);

  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  size_t newer = text.find("rollback-id: " + deleted + "\n"), older = text.find("rollback-id: " + created + "\n");
  REQUIRE(newer != std::string::npos);
  REQUIRE(older != std::string::npos);
  CHECK(newer < older);

  std::vector<std::string> c = entry_lines(repo, created);
  REQUIRE(c.size() == 10);
  CHECK(c[0] == "## " + iso_of(created) + "  \u00b7  write  \u00b7  rollback-id: " + created);
  CHECK(c[2] == "- action:    write_file");
  CHECK(c[5] == "- backup:    \u2014");
  CHECK(c[8] == "- rollback:  delete new.txt");

  std::vector<std::string> d = entry_lines(repo, deleted);
  REQUIRE(d.size() == 10);
  CHECK(d[2] == "- action:    delete_file");
  CHECK(d[5] == "- backup:    " + repo.abs("a.txt").string() + ".bak-kaicoder-" + deleted);
  CHECK(d[8] == "- rollback:  restore a.txt.bak-kaicoder-" + deleted + " \u2192 a.txt");
}

TEST_CASE("the changelog entry of a rollback is itself an entry with a backup", "[e2e][changelog][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  Run r = repo.kai_tty({"--json", "rollback", id}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  std::string rid = json_of(r).at("rollback_id");
  std::vector<std::string> lines = entry_lines(repo, rid);
  std::string file = repo.abs("a.txt").string();
  std::vector<std::string> want = {
      "## " + iso_of(rid) + "  \u00b7  rollback  \u00b7  rollback-id: " + rid,
      "- file(s):   " + file,
      "- action:    rollback",
      "- summary:   rolled back " + id,
      "- why:       undo " + id,
      "- backup:    " + file + ".bak-kaicoder-" + rid,
      "- approver:  " + current_user(),
      "- result:    ok",
      "- rollback:  restore a.txt.bak-kaicoder-" + rid + " \u2192 a.txt",
      "",
  };
  CHECK(lines == want);
}

TEST_CASE("notes written by hand in the changelog survive and do not break log", "[e2e][changelog]") {
  TempRepo repo{{"a.txt", "a\nb\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "b", "B")), 0);
  std::string first = approve(repo, 1);
  const std::string notes = "\nReviewed on Tuesday; see ticket 42.\n\n## Notes from the team\n\n- not a field\n";
  repo.write("KAI-CODER-CHANGELOG.md", repo.read("KAI-CODER-CHANGELOG.md") + notes);
  std::string second = approve(repo, 2);
  std::string text = repo.read("KAI-CODER-CHANGELOG.md");
  CHECK_THAT(text, Contains(notes));
  CHECK(text.find("rollback-id: " + second + "\n") < text.find("rollback-id: " + first + "\n"));
  json entries = log_entries(repo);
  REQUIRE(entries.size() == 2);
  CHECK(entries.at(0).at("rollback_id") == second);
  CHECK(entries.at(1).at("rollback_id") == first);
  KAI_CHECK_EXIT(repo.kai({"log", "--full"}), 0);
}

TEST_CASE("entries moved to the changelog archive still show in log and can be rolled back",
          "[e2e][changelog][rollback]") {
  // With keep = 10 the live file holds at most 20 entries; the 21st change
  // moves the oldest 10 to .kaicoder/changelog-archive/.
  constexpr int k_changes = 21;
  TempRepo repo;
  for (int i = 0; i < k_changes; ++i) repo.write("f" + std::to_string(i) + ".txt", "old\n");
  repo.init();
  std::string cfg = repo.read("kaicoder.toml");
  size_t at = cfg.find("keep = 500");
  REQUIRE(at != std::string::npos);
  cfg.replace(at, std::string("keep = 500").size(), "keep = 10");
  // Edits apply at once here, so the case needs no terminal per change.
  cfg += "\n[[policy.rule]]\naction = \"edit\"\npath = \"f*.txt\"\ndecision = \"allow\"\n";
  repo.write("kaicoder.toml", cfg);
  repo.trust();
  std::vector<std::string> ids;
  for (int i = 0; i < k_changes; ++i) {
    Run r = repo.kai({"--json", "propose", "--path", "f" + std::to_string(i) + ".txt", "--target", "old",
                      "--replacement", "new", "--why", "w"});
    KAI_REQUIRE_EXIT(r, 0);
    ids.push_back(json_of(r).at("applied").at("rollback_id"));
  }
  std::string live = repo.read("KAI-CODER-CHANGELOG.md");
  CHECK(live.find("rollback-id: " + ids[0] + "\n") == std::string::npos);
  CHECK(live.find("rollback-id: " + ids[k_changes - 1] + "\n") != std::string::npos);
  json entries = log_entries(repo);
  REQUIRE(entries.size() == static_cast<size_t>(k_changes));
  for (size_t i = 0; i < entries.size(); ++i) CHECK(entries.at(i).at("rollback_id") == ids[ids.size() - 1 - i]);
  Run oldest = repo.kai({"--json", "log", "--file", "f0.txt"});
  KAI_REQUIRE_EXIT(oldest, 0);
  CHECK(json_of(oldest).at("entries").size() == 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", ids[0]}, "y"), 0);
  CHECK(repo.read("f0.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
}

TEST_CASE("a file name with spaces, a comma and non-ASCII letters goes through the whole loop", "[e2e][changelog]") {
  const std::string name = "docs/my file, v2 \u00e9t\u00e9.txt";
  TempRepo repo{{name, "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit(name, "old", "new")), 0);
  std::string id = approve(repo, 1);
  CHECK(repo.read(name) == "new\n");
  CHECK(repo.read(name + ".bak-kaicoder-" + id) == "old\n");
  json e = log_entries(repo).at(0);
  CHECK(e.at("files") == json::array({repo.abs(name).string()}));
  Run by_file = repo.kai({"--json", "log", "--file", name});
  KAI_REQUIRE_EXIT(by_file, 0);
  CHECK(json_of(by_file).at("entries").size() == 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read(name) == "old\n");
}

// ----- backups, bytes and modes ------------------------------------------------------------------

TEST_CASE("a backup sits beside the file as <file>.bak-kaicoder-<rollback-id> with the old bytes", "[e2e][backup]") {
  TempRepo repo{{"deep/er/x.cfg", "k=1\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("deep/er/x.cfg", "k=1", "k=2")), 0);
  std::string id = approve(repo, 1);
  CHECK(repo.find(".bak-kaicoder-") == std::vector<std::string>{"deep/er/x.cfg.bak-kaicoder-" + id});
  CHECK(repo.read("deep/er/x.cfg.bak-kaicoder-" + id) == "k=1\n");
  CHECK(repo.read("deep/er/x.cfg") == "k=2\n");
  CHECK(show_json(repo, 1).at("backup") == repo.abs("deep/er/x.cfg.bak-kaicoder-" + id).string());
}

TEST_CASE("two changes in one second get distinct rollback ids and backups", "[e2e][backup]") {
  TempRepo repo{{"a.txt", "1\n2\n3\n"}};
  repo.init();
  for (const char* l : {"1", "2", "3"}) KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", l, std::string(l) + "x")), 0);
  for (const char* id : {"1", "2", "3"}) KAI_REQUIRE_EXIT(repo.kai_tty({"approve", id, "--no-apply"}, "y"), 0);
  std::set<std::string> ids;
  for (const char* id : {"1", "2", "3"}) {
    Run a = repo.kai({"--json", "apply", id});
    KAI_REQUIRE_EXIT(a, 0);
    std::string rid = json_of(a).at("applied").at("rollback_id");
    CHECK(is_rollback_id(rid));
    ids.insert(rid);
    CHECK(repo.exists("a.txt.bak-kaicoder-" + rid));
  }
  CHECK(ids.size() == 3);
  CHECK(repo.read("a.txt") == "1x\n2x\n3x\n");
}

TEST_CASE("CRLF, a missing final newline and binary bytes survive apply and rollback byte for byte",
          "[e2e][bytes]") {
  const std::string crlf = "one\r\ntwo\r\nthree\r\n";
  const std::string no_eol = "alpha\nbeta";
  std::string binary("\x00\x01\xff\xfe\r\n\x7f" "ELF\x00\x00", 12);
  std::string binary2 = binary + std::string("\x00\x80\x81", 3);
  TempRepo repo{{"crlf.txt", crlf}, {"noeol.txt", no_eol}, {"blob.bin", binary}};
  repo.init();
  repo.write("bin.in", binary2);

  KAI_REQUIRE_EXIT(repo.kai(edit("crlf.txt", "two\r\n", "TWO\r\n2b\r\n")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("noeol.txt", "beta", "BETA")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "blob.bin", "--content-file", "bin.in", "--why", "w"}), 0);
  std::string r1 = approve(repo, 1);
  std::string r2 = approve(repo, 2);
  std::string r3 = approve(repo, 3);
  CHECK(repo.read("crlf.txt") == "one\r\nTWO\r\n2b\r\nthree\r\n");
  CHECK(repo.read("noeol.txt") == "alpha\nBETA");
  CHECK(repo.read("blob.bin") == binary2);
  CHECK(repo.read("crlf.txt.bak-kaicoder-" + r1) == crlf);
  CHECK(repo.read("noeol.txt.bak-kaicoder-" + r2) == no_eol);
  CHECK(repo.read("blob.bin.bak-kaicoder-" + r3) == binary);

  for (const std::string& id : {r1, r2, r3}) KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read("crlf.txt") == crlf);
  CHECK(repo.read("noeol.txt") == no_eol);
  CHECK(repo.read("blob.bin") == binary);
}

TEST_CASE("apply keeps the file's mode", "[e2e][mode]") {
  TempRepo repo{{"run.py", "print(1)\n"}, {"w.txt", "w\n"}, {"w.in", "W\n"}};
  repo.init();
  repo.chmod("run.py", 0755);
  repo.chmod("w.txt", 0600);
  KAI_REQUIRE_EXIT(repo.kai(edit("run.py", "print(1)", "print(2)")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "w.txt", "--content-file", "w.in", "--why", "w"}), 0);
  std::string r1 = approve(repo, 1);
  approve(repo, 2);
  CHECK(repo.mode("run.py") == 0755);
  CHECK(repo.mode("w.txt") == 0600);
  CHECK(repo.read("run.py") == "print(2)\n");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", r1}, "y"), 0);
  CHECK(repo.mode("run.py") == 0755);
  CHECK(repo.read("run.py") == "print(1)\n");
}

// ----- rollback ----------------------------------------------------------------------------------

TEST_CASE("rollback by id and by last restores the old bytes", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}, {"b.txt", "b\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("b.txt", "b", "B")), 0);
  std::string ra = approve(repo, 1);
  std::string rb = approve(repo, 2);

  Run last = repo.kai_tty({"rollback", "last"}, "y");
  KAI_REQUIRE_EXIT(last, 0);
  CHECK_THAT(last.out, Contains("rolled back " + rb));
  CHECK(repo.read("b.txt") == "b\n");
  CHECK(repo.read("a.txt") == "A\n");
  CHECK(show_json(repo, 2).at("status") == "rolled-back");

  Run by_id = repo.kai_tty({"--json", "rollback", ra}, "y");
  KAI_REQUIRE_EXIT(by_id, 0);
  json j = json_of(by_id);
  CHECK(is_rollback_id(j.at("rollback_id")));
  CHECK(j.at("entry").at("kind") == "rollback");
  CHECK(j.at("backup") == repo.abs("a.txt.bak-kaicoder-" + j.at("rollback_id").get<std::string>()).string());
  CHECK(repo.read("a.txt") == "a\n");
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
  CHECK(log_entries(repo).size() == 4);
}

TEST_CASE("answering n to rollback changes nothing", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "a", "A")), 0);
  approve(repo, 1);
  auto before = repo.tree_snapshot();
  Run r = repo.kai_tty({"rollback", "last"}, "n");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_THAT(r.out, Contains("nothing rolled back"));
  CHECK(repo.tree_snapshot() == before);
}

TEST_CASE("a rollback can itself be rolled back", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  std::string id = approve(repo, 1);
  Run r1 = repo.kai_tty({"--json", "rollback", id}, "y");
  KAI_REQUIRE_EXIT(r1, 0);
  std::string undo_id = json_of(r1).at("rollback_id");
  CHECK(repo.read("a.txt") == "old\n");
  Run r2 = repo.kai_tty({"--json", "rollback", undo_id}, "y");
  KAI_REQUIRE_EXIT(r2, 0);
  CHECK(repo.read("a.txt") == "new\n");
  std::string redo_id = json_of(r2).at("rollback_id");
  CHECK(repo.read("a.txt.bak-kaicoder-" + redo_id) == "old\n");
  // And `last` is now that second rollback.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(log_entries(repo).size() == 4);
}

TEST_CASE("rolling back a created file deletes it", "[e2e][rollback]") {
  TempRepo repo{{"c.in", "new file\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "sub/new.txt", "--content-file", "c.in", "--why", "w"}), 0);
  std::string id = approve(repo, 1);
  REQUIRE(repo.read("sub/new.txt") == "new file\n");
  Run r = repo.kai_tty({"rollback", id}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK_FALSE(repo.exists("sub/new.txt"));
  // The created file's last bytes are kept, so this rollback is reversible too.
  std::vector<std::string> baks = repo.find("new.txt.bak-kaicoder-");
  REQUIRE(baks.size() == 1);
  CHECK(repo.read(baks[0]) == "new file\n");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(repo.read("sub/new.txt") == "new file\n");
}

TEST_CASE("rolling back a delete recreates the file with its mode", "[e2e][rollback][mode]") {
  TempRepo repo{{"tool.sh.txt", "#!/bin/sh\necho hi\n"}};
  repo.init();
  repo.chmod("tool.sh.txt", 0755);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "tool.sh.txt", "--delete", "--why", "w"}), 0);
  std::string id = approve(repo, 1);
  REQUIRE_FALSE(repo.exists("tool.sh.txt"));
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  REQUIRE(repo.exists("tool.sh.txt"));
  CHECK(repo.read("tool.sh.txt") == "#!/bin/sh\necho hi\n");
  CHECK(repo.mode("tool.sh.txt") == 0755);
}

// The rollback of a rollback carries the proposal along: once its change is
// live again, `show` must not call it rolled back.
TEST_CASE("undoing the rollback of a proposal marks the proposal applied again", "[e2e][rollback]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  approve(repo, 1);
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  CHECK(show_json(repo, 1).at("status") == "rolled-back");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", "last"}, "y"), 0);
  REQUIRE(repo.read("a.txt") == "new\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
}

// ----- policy allow ------------------------------------------------------------------------------

TEST_CASE("an allow rule applies a proposal at once, backed up and logged with policy as approver", "[e2e][policy]") {
  TempRepo repo{{"docs/guide.md", "old text\n"}, {"src/a.c", "int x;\n"}};
  repo.init();
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") +
                                  "\n[[policy.rule]]\naction = \"edit\"\npath = \"docs/**\"\ndecision = \"allow\"\n");
  repo.trust();
  Run r = repo.kai({"--json", "propose", "--path", "docs/guide.md", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_REQUIRE_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("status") == "applied");
  std::string rid = j.at("applied").at("rollback_id");
  CHECK(repo.read("docs/guide.md") == "new text\n");
  CHECK(repo.read("docs/guide.md.bak-kaicoder-" + rid) == "old text\n");
  json e = log_entries(repo).at(0);
  CHECK(e.at("rollback_id") == rid);
  CHECK_THAT(e.at("approver").get<std::string>(), StartsWith("policy"));
  // Outside the rule a person still decides.
  Run other = repo.kai({"--json", "propose", "--path", "src/a.c", "--target", "x", "--replacement", "y", "--why", "w"});
  KAI_REQUIRE_EXIT(other, 0);
  CHECK(json_of(other).at("status") == "pending");
  CHECK(repo.read("src/a.c") == "int x;\n");
}

// ----- --wait ------------------------------------------------------------------------------------

// Waits for proposal `id` to be staged by a background proposer.
bool staged(const TempRepo& repo, int id) {
  for (int i = 0; i < 200; ++i) {
    if (repo.exists(".kaicoder/staging/" + std::to_string(id) + "/meta.json")) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

TEST_CASE("propose --wait blocks until approval and prints the rollback id", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(waiter.done());
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  Run w = waiter.finish(20s);
  KAI_REQUIRE_EXIT(w, 0);
  std::string rid = show_json(repo, 1).at("rollback_id");
  CHECK(is_rollback_id(rid));
  CHECK_THAT(w.out, Contains("rollback-id: " + rid));
  CHECK_THAT(w.out, Contains(repo.abs("a.txt.bak-kaicoder-" + rid).string()));
  CHECK(repo.read("a.txt") == "new\n");
}

TEST_CASE("propose --wait exits 4 when the proposal is rejected", "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1", "--reason", "no thanks"}, "y"), 0);
  Run w = waiter.finish(20s);
  KAI_CHECK_EXIT(w, 4);
  CHECK_THAT(w.out, Contains("rejected"));
  CHECK(repo.read("a.txt") == "old\n");
}

// Exit 0 means "done" (SPEC §3): approval alone writes nothing and can still
// be followed by a reject, so the waiter waits for the apply itself.
TEST_CASE("a --wait proposer keeps waiting while its proposal is approved but not yet applied",
          "[e2e][wait]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = edit("a.txt", "old", "new");
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  CHECK_FALSE(waiter.done());
  KAI_REQUIRE_EXIT(repo.kai({"apply", "1"}), 0);
  Run w = waiter.finish(20s);
  KAI_CHECK_EXIT(w, 0);
  CHECK_THAT(w.out, Contains("rollback-id: " + show_json(repo, 1).at("rollback_id").get<std::string>()));
}

TEST_CASE("propose --wait --json reports the outcome as one object", "[e2e][wait][json]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  std::vector<std::string> args = {"--json"};
  for (const auto& a : edit("a.txt", "old", "new")) args.push_back(a);
  args.push_back("--wait");
  Process waiter = repo.spawn_kai(args);
  REQUIRE(staged(repo, 1));
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  Run w = waiter.finish(20s);
  KAI_REQUIRE_EXIT(w, 0);
  json j = json::parse(w.out);
  CHECK(j.at("status") == "applied");
  CHECK(j.at("exit_code") == 0);
  CHECK(is_rollback_id(j.at("rollback_id")));
}

// ----- usage errors and unknown ids --------------------------------------------------------------

TEST_CASE("usage errors exit 2 and stage nothing", "[e2e][usage]") {
  TempRepo repo{{"a.txt", "old\n"}, {"c.in", "c\n"}};
  repo.init();
  auto before = repo.tree_snapshot();

  Run no_why = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new"});
  KAI_CHECK_EXIT(no_why, 2);
  CHECK_THAT(no_why.err, Contains("--why"));

  Run blank_why = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "  "});
  KAI_CHECK_EXIT(blank_why, 2);

  Run two_forms = repo.kai({"propose", "--path", "a.txt", "--content-file", "c.in", "--delete", "--why", "w"});
  KAI_CHECK_EXIT(two_forms, 2);
  CHECK_THAT(two_forms.err, Contains("exactly one"));

  Run half_edit = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--why", "w"});
  KAI_CHECK_EXIT(half_edit, 2);

  Run no_path = repo.kai({"propose", "--target", "old", "--replacement", "new", "--why", "w"});
  KAI_CHECK_EXIT(no_path, 2);

  Run unknown = repo.kai({"propose", "--path", "a.txt", "--bogus", "--why", "w"});
  KAI_CHECK_EXIT(unknown, 2);
  Run unknown_verb = repo.kai({"frobnicate"});
  KAI_CHECK_EXIT(unknown_verb, 2);
  Run no_verb = repo.kai({});
  KAI_CHECK_EXIT(no_verb, 2);

  Run two_stdins = repo.kai({"propose", "--path", "a.txt", "--target-file", "-", "--replacement-file", "-", "--why", "w"},
                            "x");
  KAI_CHECK_EXIT(two_stdins, 2);

  Run bad_json = repo.kai({"propose", "--json-input"}, "{not json");
  KAI_CHECK_EXIT(bad_json, 2);
  Run unknown_field = repo.kai({"propose", "--json-input"}, R"({"path":"a.txt","delete":true,"why":"w","x":1})");
  KAI_CHECK_EXIT(unknown_field, 2);
  CHECK_THAT(unknown_field.err, Contains("'x'"));

  Run missing_file = repo.kai({"propose", "--path", "a.txt", "--content-file", "nope.in", "--why", "w"});
  KAI_CHECK_EXIT(missing_file, 2);

  Run same = repo.kai({"propose", "--path", "a.txt", "--content-file", "-", "--why", "w"}, "old\n");
  KAI_CHECK_EXIT(same, 2);
  CHECK_THAT(same.err, Contains("already holds"));

  Run approve_no_id = repo.kai({"approve"});
  KAI_CHECK_EXIT(approve_no_id, 2);
  Run show_word = repo.kai({"show", "one"});
  KAI_CHECK_EXIT(show_word, 2);

  Run json_usage = repo.kai({"--json", "propose", "--path", "a.txt", "--delete"});
  KAI_CHECK_EXIT(json_usage, 2);
  json e = json_of(json_usage);
  CHECK(e.at("ok") == false);
  CHECK(e.at("error").at("code") == 2);

  CHECK(repo.tree_snapshot() == before);
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
}

TEST_CASE("unknown proposal and rollback ids exit 7", "[e2e][unknown]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  auto before = repo.tree_snapshot();

  Run show = repo.kai({"show", "99"});
  KAI_CHECK_EXIT(show, 7);
  CHECK_THAT(show.err, Contains("no proposal 99"));

  Run approve99 = repo.kai_tty({"approve", "99"}, "y");
  KAI_CHECK_EXIT(approve99, 7);
  CHECK_FALSE(approve99.prompted);

  Run apply99 = repo.kai({"apply", "99"});
  KAI_CHECK_EXIT(apply99, 7);

  Run reject99 = repo.kai_tty({"reject", "99"}, "y");
  KAI_CHECK_EXIT(reject99, 7);

  Run rb = repo.kai_tty({"rollback", "20990101T000000Z"}, "y");
  KAI_CHECK_EXIT(rb, 7);
  CHECK_THAT(rb.all(), Contains("20990101T000000Z"));

  Run last = repo.kai_tty({"rollback", "last"}, "y");
  KAI_CHECK_EXIT(last, 7);

  Run show0 = repo.kai({"show", "0"});
  KAI_CHECK_EXIT(show0, 7);
  // Ids never name a file: a path-like id is simply unknown.
  Run sneaky = repo.kai_tty({"rollback", "../../KAI-CODER-CHANGELOG"}, "y");
  KAI_CHECK_EXIT(sneaky, 7);

  Run rb_json = repo.kai_tty({"--json", "rollback", "20990101T000000Z"}, "y");
  KAI_CHECK_EXIT(rb_json, 7);
  CHECK(json_of(rb_json).at("error").at("code") == 7);

  CHECK(repo.tree_snapshot() == before);
}

}  // namespace
