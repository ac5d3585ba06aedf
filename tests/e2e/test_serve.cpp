// `kaicoder serve` end to end: the real binary on a pseudo-terminal, driven
// over HTTP the way a browser drives it: sign in with the address from the
// terminal, list, approve, reject, roll back, and the refusals.

#include <filesystem>

#include "tests/support/checks.hpp"
#include "tests/support/serve.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

// Every byte kaicoder keeps for this root and its owner: the token must be in none of them.
std::string everything_kept(const TempRepo& repo) {
  std::string all;
  for (const fs::path& top : {repo.path(), repo.home()})
    for (const auto& e : fs::recursive_directory_iterator(top))
      if (e.is_regular_file() && e.path().string().find("/.git/") == std::string::npos) {
        std::ifstream in(e.path(), std::ios::binary);
        all += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      }
  return all;
}

}  // namespace

TEST_CASE("serve: sign in from the terminal's address, then list, approve, reject and roll back", "[e2e][serve][web]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "b.txt", "--content-file", "-", "--why", "a second file"}, "b\n"), 0);
  ServePage page(repo);

  // Nothing without the cookie; the address signs in and drops the token from the address bar.
  auto anon = page.get("/");
  REQUIRE(anon);
  CHECK(anon->status == 403);
  auto login = page.sign_in();
  REQUIRE(login);
  CHECK(login->status == 303);
  CHECK(login->get_header_value("Location") == "/");
  CHECK_THAT(login->get_header_value("Set-Cookie"), Contains("HttpOnly") && Contains("SameSite=Strict"));
  CHECK_THAT(login->get_header_value("Content-Security-Policy"), Contains("default-src 'none'"));

  auto list = page.get("/");
  REQUIRE(list);
  CHECK(list->status == 200);
  CHECK_THAT(list->body, Contains("a.txt") && Contains("b.txt") && Contains("Time left"));

  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  CHECK_THAT(p1->body, Contains("<span class=\"l del\">-old</span>") && Contains("<span class=\"l add\">+new</span>"));
  auto approved = page.post("/p/1/approve", ServePage::form_of(p1->body, "/p/1/approve"),
                            {{"Origin", "http://127.0.0.1:" + std::to_string(page.port)}});
  REQUIRE(approved);
  CHECK(approved->status == 200);
  CHECK(repo.read("a.txt") == "new\n");
  auto shown = show_json(repo, 1);
  CHECK(shown.at("status") == "applied");
  CHECK(shown.at("decided_by") == current_user() + " (web)");
  CHECK(shown.at("channel") == "web");

  auto p2 = page.get("/p/2");
  REQUIRE(p2);
  auto form = ServePage::form_of(p2->body, "/p/2/reject");
  form["reason"] = "not now";
  auto rejected = page.post("/p/2/reject", form);
  REQUIRE(rejected);
  CHECK(rejected->status == 200);
  CHECK_FALSE(repo.exists("b.txt"));
  CHECK(show_json(repo, 2).at("status") == "rejected");

  auto entries = log_entries(repo);
  CHECK(entries.at(0).at("kind") == "rejected");
  CHECK(entries.at(0).at("approver") == current_user() + " (web)");
  CHECK(entries.at(1).at("approver") == current_user() + " (web)");

  const std::string rid = shown.at("rollback_id");
  auto log = page.get("/log");
  REQUIRE(log);
  CHECK_THAT(log->body, Contains("/rollback/" + rid));
  auto ask = page.get("/rollback/" + rid);
  REQUIRE(ask);
  CHECK(ask->status == 200);
  auto undone = page.post("/rollback/" + rid, ServePage::form_of(ask->body, "/rollback/" + rid));
  REQUIRE(undone);
  CHECK(undone->status == 200);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(log_entries(repo).at(0).at("kind") == "rollback");
  CHECK(log_entries(repo).at(0).at("approver") == current_user() + " (web)");

  Run r = page.stop();
  KAI_CHECK_EXIT(r, 0);
  // The token went to the terminal only: not stdout or stderr, not the store, the log or the owner's folder.
  CHECK(r.out.find(page.token) == std::string::npos);
  CHECK(r.err.find(page.token) == std::string::npos);
  CHECK(everything_kept(repo).find(page.token) == std::string::npos);
}

TEST_CASE("serve: without a terminal it exits 3 and starts nothing", "[e2e][serve][web]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"serve"});
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("terminal"));
  CHECK(r.out.find("token") == std::string::npos);
}

TEST_CASE("serve: an address other than 127.0.0.1 is refused with exit 3", "[e2e][serve][web]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  for (const char* addr : {"0.0.0.0", "::", "192.168.1.10", "127.0.0.2"}) {
    Run r = repo.kai_tty({"serve", "--address", addr}, "");
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("127.0.0.1 only"));
    CHECK(r.tty.find("token=") == std::string::npos);
  }
  Run bad_port = repo.kai_tty({"serve", "--port", "70000"}, "");
  KAI_CHECK_EXIT(bad_port, 2);
}

TEST_CASE("serve: a wrong token, a missing or wrong CSRF token and a stale page change nothing", "[e2e][serve][web]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  ServePage page(repo);
  auto wrong = page.client().Get(("/login?token=" + std::string(page.token.size(), '0')).c_str());
  REQUIRE(wrong);
  CHECK(wrong->status == 403);
  CHECK_FALSE(wrong->has_header("Set-Cookie"));
  REQUIRE(page.sign_in());
  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  auto form = ServePage::form_of(p1->body, "/p/1/approve");
  REQUIRE(form.count("csrf"));
  auto no_csrf = form;
  no_csrf.erase("csrf");
  auto r1 = page.post("/p/1/approve", no_csrf);
  REQUIRE(r1);
  CHECK(r1->status == 403);
  auto bad_csrf = form;
  bad_csrf["csrf"] = std::string(64, '1');
  auto r2 = page.post("/p/1/approve", bad_csrf);
  REQUIRE(r2);
  CHECK(r2->status == 403);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "pending");

  // What cpp-httplib refuses by itself (a body over 1 MiB) carries the security headers too.
  auto huge = page.client().Post("/p/1/approve", page.headers(), std::string(2 << 20, 'x'),
                                 "application/x-www-form-urlencoded");
  REQUIRE(huge);
  CHECK(huge->status == 413);
  CHECK_THAT(huge->get_header_value("Content-Security-Policy"), Contains("default-src 'none'"));
  CHECK(repo.read("a.txt") == "old\n");

  // Rejected at the terminal while the page was open: its form is stale.
  KAI_REQUIRE_EXIT(repo.kai_tty({"reject", "1"}, "y"), 0);
  auto stale = page.post("/p/1/approve", form);
  REQUIRE(stale);
  INFO(stale->body);
  CHECK(stale->status == 409);
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "rejected");
  CHECK(show_json(repo, 1).at("channel") == "terminal");
  KAI_CHECK_EXIT(page.stop(), 0);
}

TEST_CASE("serve: a changeset shows its diffstat and one diff per file, and one approval applies every file",
          "[e2e][serve][web]") {
  TempRepo repo{{"a.txt", "one\n"}, {"b.txt", "moved\n"}};
  repo.init();
  const std::string patch =
      "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n"
      "*** Update File: b.txt\n*** Move to: c.txt\n*** Add File: d.txt\n+fresh\n*** End Patch\n";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "three files"}, patch), 0);
  ServePage page(repo);
  REQUIRE(page.sign_in());
  auto list = page.get("/");
  REQUIRE(list);
  CHECK_THAT(list->body, Contains("3 files: <code>a.txt</code>"));
  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  CHECK_THAT(p1->body,
             Contains("<table class=\"list diffstat\">") && Contains("<code>b.txt</code> \u2192 <code>c.txt</code>"));
  CHECK(p1->body.find("<table class=\"list diffstat\">") < p1->body.find("<details class=\"file\">"));
  CHECK_THAT(p1->body,
             Contains("<span class=\"l add\">+ONE</span>") && Contains("<span class=\"l add\">+fresh</span>"));
  auto done = page.post("/p/1/approve", ServePage::form_of(p1->body, "/p/1/approve"));
  REQUIRE(done);
  CHECK(done->status == 200);
  CHECK(repo.read("a.txt") == "ONE\n");
  CHECK(repo.read("c.txt") == "moved\n");
  CHECK(repo.read("d.txt") == "fresh\n");
  CHECK_FALSE(repo.exists("b.txt"));
  auto entries = log_entries(repo);
  REQUIRE(entries.size() == 1);
  CHECK(entries.at(0).at("action") == "apply_changeset");
  CHECK(entries.at(0).at("approver") == current_user() + " (web)");
  CHECK(entries.at(0).at("rollback_id") == show_json(repo, 1).at("rollback_id"));
  KAI_CHECK_EXIT(page.stop(), 0);
}

namespace {

// A patch that edits a.txt from `from` to `to` and adds `added` with `lines` lines.
std::string long_patch(const std::string& from, const std::string& to, const std::string& added, int lines) {
  std::string patch =
      "*** Begin Patch\n*** Update File: a.txt\n@@\n-" + from + "\n+" + to + "\n*** Add File: " + added + "\n";
  for (int i = 0; i < lines; ++i) patch += "+line " + std::to_string(i) + "\n";
  return patch + "*** End Patch\n";
}

}  // namespace

TEST_CASE(
    "serve: a long changeset is never approved unseen: without every file's diff opened or CONFIRM the approval is "
    "refused with 403 and nothing is written",
    "[e2e][serve][web]") {
  TempRepo repo{{"a.txt", "one\n"}};
  repo.init();
  // Over the page's 80 lines, far under the terminal's display cut: shown
  // whole, one closed section a file.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--patch", "-", "--why", "long"}, long_patch("one", "ONE", "long.txt", 120)),
                   0);
  ServePage page(repo);
  REQUIRE(page.sign_in());
  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  INFO(p1->body);
  CHECK_THAT(p1->body, Contains("data-gate=\"open-all\"") && Contains("value=\"apply\" disabled>"));
  CHECK_THAT(p1->body, Contains("<details class=\"file\" data-part=\"0\">"));
  CHECK_THAT(p1->body, Contains("Or type CONFIRM to approve without opening every file"));
  auto form = ServePage::form_of(p1->body, "/p/1/approve");
  REQUIRE(form.count("opened"));
  CHECK(form.at("opened").empty());
  form["then"] = "apply";

  for (const std::string opened : {"", "0", "1,1", "0,2", "0;1", "00,1"}) {
    INFO("opened=" << opened);
    form["opened"] = opened;
    auto r = page.post("/p/1/approve", form);
    REQUIRE(r);
    CHECK(r->status == 403);
    CHECK_THAT(r->body, Contains("its diff is long (over 80 lines) and not every file&#39;s diff was opened"));
    CHECK(repo.read("a.txt") == "one\n");
    CHECK_FALSE(repo.exists("long.txt"));
    CHECK(show_json(repo, 1).at("status") == "pending");
  }
  CHECK(log_entries(repo).empty());
  // "Approve only" is an approval too.
  form["then"] = "record";
  form["opened"] = "";
  auto later = page.post("/p/1/approve", form);
  REQUIRE(later);
  CHECK(later->status == 403);
  CHECK(show_json(repo, 1).at("status") == "pending");

  // Every file opened, in any order: approved and applied.
  form["then"] = "apply";
  form["opened"] = "1,0";
  auto done = page.post("/p/1/approve", form);
  REQUIRE(done);
  CHECK(done->status == 200);
  CHECK(repo.read("a.txt") == "ONE\n");
  CHECK(repo.exists("long.txt"));

  // Or CONFIRM typed out instead, as the terminal asks for a diff it cut.
  KAI_REQUIRE_EXIT(
      repo.kai({"propose", "--patch", "-", "--why", "long again"}, long_patch("ONE", "one", "more.txt", 100)), 0);
  auto p2 = page.get("/p/2");
  REQUIRE(p2);
  auto form2 = ServePage::form_of(p2->body, "/p/2/approve");
  form2["confirm"] = "conFIRM";
  auto wrong = page.post("/p/2/approve", form2);
  REQUIRE(wrong);
  CHECK(wrong->status == 403);
  CHECK_FALSE(repo.exists("more.txt"));
  form2["confirm"] = "CONFIRM";
  auto confirmed = page.post("/p/2/approve", form2);
  REQUIRE(confirmed);
  CHECK(confirmed->status == 200);
  CHECK(repo.exists("more.txt"));
  KAI_CHECK_EXIT(page.stop(), 0);
}

TEST_CASE(
    "serve: \"always allow this\" on the page offers the terminal's rule, writes only the rule it showed, and is "
    "never offered for the confirm tier",
    "[e2e][serve][web][always]") {
  TempRepo repo{{"docs/a.md", "old\n"},
                {"oracle.html", "<p>old</p>\n"},
                {"kaicoder.toml", "[paths]\nprotected = [\"oracle.html\"]\n"}};
  repo.trust();
  const std::string cfg_before = repo.read("kaicoder.toml");
  KAI_REQUIRE_EXIT(repo.kai(edit("docs/a.md", "old", "new")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("oracle.html", "old", "new")), 0);
  ServePage page(repo);
  REQUIRE(page.sign_in());

  // The confirm tier (a protected path): no offer.
  auto p2 = page.get("/p/2");
  REQUIRE(p2);
  CHECK_THAT(p2->body, !Contains("Always allow this") && !Contains("value=\"always\""));
  auto form2 = ServePage::form_of(p2->body, "/p/2/approve");
  form2["then"] = "always";
  form2["confirm"] = "CONFIRM";
  auto not_offered = page.post("/p/2/approve", form2);
  REQUIRE(not_offered);
  CHECK(not_offered->status == 403);
  CHECK_THAT(not_offered->body, Contains("is not offered for it"));
  CHECK(repo.read("kaicoder.toml") == cfg_before);
  CHECK(repo.read("oracle.html") == "<p>old</p>\n");

  // An edit of a normal file: the rule shown before it is written.
  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  CHECK_THAT(p1->body, Contains("Always allow this") && Contains("always allow <strong>edit docs/a.md</strong>"));
  CHECK_THAT(p1->body, Contains("path = &quot;/docs/a.md&quot;"));
  auto form = ServePage::form_of(p1->body, "/p/1/approve", "value=\"always\"");
  REQUIRE(form.count("rule"));
  form["then"] = "always";
  auto forged = form;
  forged["rule"] = std::string(64, 'a');
  auto r = page.post("/p/1/approve", forged);
  REQUIRE(r);
  CHECK(r->status == 409);
  CHECK_THAT(r->body, Contains("is not the one the page showed; no rule was written"));
  CHECK(repo.read("kaicoder.toml") == cfg_before);
  CHECK(repo.read("docs/a.md") == "old\n");

  auto done = page.post("/p/1/approve", form);
  REQUIRE(done);
  INFO(done->body);
  CHECK(done->status == 200);
  CHECK_THAT(done->body, Contains("added to kaicoder.toml and trusted: always allow edit docs/a.md"));
  CHECK(repo.read("docs/a.md") == "new\n");
  CHECK_THAT(repo.read("kaicoder.toml"),
             Contains("[[policy.rule]]\naction = \"edit\"\npath = \"/docs/a.md\"\ndecision = \"allow\"\n"));
  CHECK(show_json(repo, 1).at("decided_by") == current_user() + " (web)");
  // The root trusted with it: the next edit of that file passes without a question.
  Run next = repo.kai(
      {"--json", "propose", "--path", "docs/a.md", "--target", "new", "--replacement", "newer", "--why", "again"});
  KAI_REQUIRE_EXIT(next, 0);
  CHECK(json_of(next).at("status") == "applied");
  CHECK(repo.read("docs/a.md") == "newer\n");
  KAI_CHECK_EXIT(page.stop(), 0);
}
