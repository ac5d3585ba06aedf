// The review page on changesets: the diffstat first, one collapsible diff a
// file, the terminal's rule for a diff too long to show whole, and an
// approval from the page that is the gate's: every file or none, one
// changelog entry, one rollback id.

#include <catch2/catch.hpp>

#include "lib/gate/gate.hpp"
#include "lib/web/pages.hpp"
#include "unit/web_page.hpp"

namespace {
using Catch::Contains;
using kai::test::form_of;
using kai::test::Page;
namespace web = kai::web;
namespace gate = kai::gate;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The part of `html` inside the collapsible section whose summary names `path`.
std::string details_of(const std::string& html, const std::string& path) {
  size_t at = html.find("<code>" + path + "</code> <span class=\"badge\">");
  at = at == std::string::npos ? at : html.rfind("<details", at);
  if (at == std::string::npos) return {};
  return html.substr(at, html.find("</details>", at) - at);
}

// An envelope that adds `path` with `lines` lines "<prefix> N".
std::string add_file(const std::string& path, int lines, const std::string& prefix) {
  std::string out = "*** Add File: " + path + "\n";
  for (int i = 0; i < lines; ++i) out += "+" + prefix + " " + std::to_string(i) + "\n";
  return out;
}

// Four files, four operations: edit, rename, delete, create.
const char* k_four =
    "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n"
    "diff --git a/b.txt b/c.txt\nsimilarity index 100%\nrename from b.txt\nrename to c.txt\n"
    "diff --git a/d.txt b/d.txt\ndeleted file mode 100644\n--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n"
    "diff --git a/e.txt b/e.txt\nnew file mode 100644\n--- /dev/null\n+++ b/e.txt\n@@ -0,0 +1 @@\n+fresh\n";

// The files k_four changes, as they are before it.
void write_four(Page& pg) {
  pg.f.dir.write("a.txt", "one\ntwo\n");
  pg.f.dir.write("b.txt", "moved\n");
  pg.f.dir.write("d.txt", "gone\n");
}

}  // namespace

TEST_CASE("web: a changeset page shows its diffstat first, then one collapsible diff per file", "[web][serve]") {
  Page pg("");
  write_four(pg);
  int id = pg.stage_patch(k_four, "four files");
  auto page = pg.get("/p/" + std::to_string(id));
  REQUIRE(page.status == 200);
  const std::string& b = page.body;
  CHECK_THAT(b, Contains("<h1>Proposal " + std::to_string(id) + " \u00b7 changeset \u00b7 4 files</h1>"));
  CHECK_THAT(b, Contains("<dt>Files</dt><dd>4 files</dd>"));
  // The file table: per file its operation, path (both of a rename),
  // lines, and its risk, tier and policy side by side, each cell labelled
  // for narrow screens.
  const size_t stat = b.find("<table class=\"list diffstat\">");
  REQUIRE(stat != std::string::npos);
  CHECK_THAT(b, Contains("<th scope=\"col\">Risk</th><th scope=\"col\">Tier</th><th scope=\"col\">Policy</th>"));
  CHECK_THAT(b, Contains("4 files changed, +2 \u22122 lines"));
  CHECK_THAT(
      b, Contains("<tr><td data-label=\"Operation\">edit</td><td data-label=\"File\" class=\"what\"><code>a.txt</code>"
                  "</td><td data-label=\"Lines\">+1 \u22121</td><td data-label=\"Risk\"><span class=\"badge "
                  "low\">low</span>"));
  CHECK_THAT(b, Contains("<td data-label=\"Tier\"><span class=\"badge normal\">normal</span></td><td "
                         "data-label=\"Policy\">ask"));
  CHECK_THAT(
      b,
      Contains("<tr><td data-label=\"Operation\">rename</td><td data-label=\"File\" class=\"what\"><code>b.txt</code> "
               "\u2192 <code>c.txt</code></td><td data-label=\"Lines\">+0 \u22120</td>"));
  CHECK_THAT(b, Contains("<code>d.txt</code></td><td data-label=\"Lines\">+0 \u22121</td>"));
  CHECK_THAT(b, Contains("<code>e.txt</code></td><td data-label=\"Lines\">+1 \u22120</td>"));
  // The summary's blast radius and policy cover every file, not the first.
  for (const char* fact : {"<dt>Blast radius</dt>", "<dt>Policy</dt>"}) {
    const size_t at = b.find(fact);
    REQUIRE(at != std::string::npos);
    const std::string dd = b.substr(at, b.find("</dd>", at) - at);
    for (const char* f : {"a.txt", "b.txt \u2192 c.txt", "d.txt", "e.txt"}) CHECK_THAT(dd, Contains(f));
  }
  // Then one <details> a file, each with its own diff coloured as a single
  // file's; the whole diff is short, so every one is open and the form
  // needs nothing more.
  CHECK(count_of(b, "<details class=\"file\" data-part=") == 4);
  CHECK(count_of(b, "\" open>") == 4);
  CHECK(count_of(b, "<summary>") == 4);
  CHECK(b.find("data-gate=") == std::string::npos);
  CHECK(b.find(" disabled>") == std::string::npos);
  CHECK(stat < b.find("<details"));
  const std::string a = details_of(b, "a.txt");
  CHECK_THAT(a, Contains("<span class=\"l del\">-one</span>") && Contains("<span class=\"l add\">+ONE</span>"));
  CHECK_THAT(a, Contains("aria-label=\"diff of a.txt\""));
  CHECK(a.find("+fresh") == std::string::npos);  // each file's diff holds only its own lines
  CHECK_THAT(details_of(b, "b.txt \u2192 c.txt"), Contains("rename from b.txt"));
  CHECK_THAT(details_of(b, "d.txt"), Contains("<span class=\"l del\">-gone</span>"));
  CHECK_THAT(details_of(b, "e.txt"), Contains("<span class=\"l add\">+fresh</span>"));
  // A whole diff takes a plain yes; the form binds the changeset's one digest.
  auto form = form_of(b, "/p/" + std::to_string(id) + "/approve");
  CHECK(form["digest"] == kai::digest(*pg.f.ws->store.load(id)));
  CHECK(form["cut"] == "0");
  CHECK(b.find("name=\"confirm\"") == std::string::npos);

  // The list: how many files and the first of them.
  auto list = pg.get("/");
  CHECK_THAT(list.body,
             Contains("4 files: <code>a.txt</code>, <code>b.txt \u2192 c.txt</code>, <code>d.txt</code> and 1 more"));
}

TEST_CASE("web: approving a changeset from the page is the gate's approval: every file, one entry, one rollback id",
          "[web][serve]") {
  Page pg("");
  write_four(pg);
  int id = pg.stage_patch(k_four, "four files");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  auto done = pg.post(action, form_of(page.body, action));
  REQUIRE(done.status == 200);
  CHECK_THAT(done.body, Contains("changeset of 4 files"));
  CHECK(pg.f.dir.read("a.txt") == "ONE\ntwo\n");
  CHECK(pg.f.dir.read("c.txt") == "moved\n");
  CHECK_FALSE(pg.exists("b.txt"));
  CHECK_FALSE(pg.exists("d.txt"));
  CHECK(pg.f.dir.read("e.txt") == "fresh\n");
  const kai::Proposal p = pg.load(id);
  CHECK(p.state == kai::State::applied);
  CHECK(p.decided_by == "tester (web)");
  auto log = pg.f.ws->changelog.newest(10);
  REQUIRE(log);
  REQUIRE(log->size() == 1);
  CHECK(log->front().kind == "changeset");
  CHECK(log->front().action == "apply_changeset");
  CHECK(log->front().files.size() == 5);  // the rename names both paths
  CHECK(log->front().approver == "tester (web)");
  CHECK(log->front().rollback_id == p.rollback_id);
  CHECK_THAT(done.body, Contains("rollback id: " + p.rollback_id));

  // One rollback from the page undoes every file.
  const std::string undo = "/rollback/" + p.rollback_id;
  auto ask = pg.get(undo);
  REQUIRE(ask.status == 200);
  REQUIRE(pg.post(undo, form_of(ask.body, undo)).status == 200);
  CHECK(pg.f.dir.read("a.txt") == "one\ntwo\n");
  CHECK(pg.f.dir.read("b.txt") == "moved\n");
  CHECK(pg.f.dir.read("d.txt") == "gone\n");
  CHECK_FALSE(pg.exists("c.txt"));
  CHECK_FALSE(pg.exists("e.txt"));
}

TEST_CASE("web: a stale changeset page cannot approve: a file changed on disk, or another digest", "[web][serve]") {
  Page pg("");
  write_four(pg);
  int id = pg.stage_patch(k_four, "four files");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  auto form = form_of(page.body, action);

  SECTION("another digest") {
    const std::string other(40, 'b');
    auto r = pg.post(
        action,
        {{"csrf", pg.app.guard().csrf_for(web::approve_binding(action, other, "0"))}, {"digest", other}, {"cut", "0"}});
    CHECK(r.status == 409);
    CHECK_THAT(r.body, Contains("changed while it was being reviewed"));
    CHECK(pg.load(id).state == kai::State::pending);
  }
  SECTION("one file changed on disk after the page was shown") {
    pg.f.dir.write("d.txt", "edited by hand\n");
    auto r = pg.post(action, form);
    CHECK(r.status == 409);
    CHECK_THAT(r.body, Contains("d.txt"));
    CHECK(pg.load(id).state != kai::State::applied);
    CHECK(pg.f.dir.read("d.txt") == "edited by hand\n");
    // The page shown again has no approval form: it can never apply as proposed.
    auto again = pg.get("/p/" + std::to_string(id));
    CHECK(again.body.find("action=\"" + action + "\"") == std::string::npos);
  }
  // Nothing of it landed.
  CHECK(pg.f.dir.read("a.txt") == "one\ntwo\n");
  CHECK(pg.f.dir.read("b.txt") == "moved\n");
  CHECK_FALSE(pg.exists("c.txt"));
  CHECK_FALSE(pg.exists("e.txt"));
  auto log = pg.f.ws->changelog.newest(10);
  REQUIRE(log);
  for (const auto& e : *log) CHECK(e.kind != "changeset");  // at most a failed entry
}

TEST_CASE("web: a changeset's hostile file names and contents are escaped, their hidden characters shown",
          "[web][serve][attack]") {
  Page pg("");
  const std::string name = "x\" onmouseover='alert(1)' y.txt";
  const std::string patch =
      "*** Begin Patch\n*** Add File: " + name +
      "\n+</pre></details><script>alert('diff')</script>\n+safe \xE2\x80\xAEtxt.exe\n+\x1b]0;owned\x07\n"
      "*** Add File: it's \"quoted\".txt\n+plain\n*** End Patch\n";
  int id = pg.stage_patch(patch);
  for (const std::string& at : std::vector<std::string>{"/", "/p/" + std::to_string(id)}) {
    auto res = pg.get(at);
    REQUIRE(res.status == 200);
    CHECK(res.body.find("\" onmouseover") == std::string::npos);
    CHECK(res.body.find("it's \"quoted\"") == std::string::npos);
    CHECK_THAT(res.body, Contains("x&quot; onmouseover=&#39;alert(1)&#39; y.txt"));
    CHECK_THAT(res.body, Contains("it&#39;s &quot;quoted&quot;.txt"));
  }
  auto page = pg.get("/p/" + std::to_string(id));
  const std::string& b = page.body;
  CHECK(b.find("<script>alert") == std::string::npos);
  CHECK(b.find("</details><script>") == std::string::npos);
  CHECK(b.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(b.find("\x1b") == std::string::npos);
  CHECK(count_of(b, "<details class=\"file\" data-part=") == 2);
  CHECK(count_of(b, "</details>") == 2);
  CHECK_THAT(b, Contains("&lt;/pre&gt;&lt;/details&gt;&lt;script&gt;alert(&#39;diff&#39;)&lt;/script&gt;"));
  CHECK_THAT(b, Contains("&lt;U+202E&gt;"));
  CHECK_THAT(b, Contains("\\e]0;owned\\x07"));
  CHECK_THAT(b, Contains("control or invisible characters"));
  CHECK_THAT(b, Contains("aria-label=\"diff of x&quot; onmouseover=&#39;alert(1)&#39; y.txt\""));
}

TEST_CASE(
    "web: a changeset cut for display (lines counted over all files) says which files were not shown and takes CONFIRM",
    "[web][serve]") {
  Page pg("");
  // 2500 lines in a.txt are cut to its first hunks; b.txt then fits the
  // rest of the terminal's 2000-line budget whole; c.txt is past it.
  int id = pg.stage_patch("*** Begin Patch\n" + add_file("a.txt", 2500, "a") + add_file("b.txt", 1500, "b") +
                          add_file("c.txt", 3, "c") + "*** End Patch\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  // The page's cut is the gate's (the terminal's) cut.
  auto rv = gate::prepare_approval(*pg.f.ws, id, kai::Decider("tester", kai::Channel::web), {});
  REQUIRE(rv);
  REQUIRE(rv->diff_cut);
  auto page = pg.get("/p/" + std::to_string(id));
  const std::string& b = page.body;
  CHECK_THAT(b, Contains("The diff was cut for display"));
  const size_t a_shown = rv->diff->parts.at(0).shown_changed;
  CHECK(a_shown < 2500);
  CHECK_THAT(b, Contains("in 2 of 3 files"));
  CHECK_THAT(b, Contains("<li><code>a.txt</code>: " + std::to_string(2500 - a_shown) +
                         " of 2500 changed lines not shown</li>"));
  CHECK_THAT(b, Contains("<li><code>c.txt</code>: not shown at all (3 changed lines)</li>"));
  CHECK(b.find("<li><code>b.txt</code>") == std::string::npos);
  CHECK_THAT(details_of(b, "a.txt"), Contains("badge confirm\">cut") && Contains("+a 0"));
  CHECK_THAT(details_of(b, "b.txt"), Contains("+b 1499"));
  CHECK_THAT(details_of(b, "c.txt"),
             Contains("not shown") && Contains("kaicoder show " + std::to_string(id) + " --file c.txt"));
  CHECK(b.find("+c 0") == std::string::npos);

  auto form = form_of(b, action);
  CHECK(form["cut"] == "1");
  CHECK(form["digest"] == rv->digest);
  CHECK_THAT(b, Contains("<label for=\"confirm\">Type CONFIRM to approve</label>"));
  auto plain = pg.post(action, form);
  CHECK(plain.status == 403);
  CHECK_THAT(plain.body, Contains("CONFIRM"));
  // Claiming the whole diff was shown does not match the form's token.
  auto uncut = form;
  uncut["cut"] = "0";
  CHECK(pg.post(action, uncut).status == 403);
  for (const char* f : {"a.txt", "b.txt", "c.txt"}) CHECK_FALSE(pg.exists(f));
  CHECK(pg.load(id).state == kai::State::pending);
  form["confirm"] = "CONFIRM";
  CHECK(pg.post(action, form).status == 200);
  for (const char* f : {"a.txt", "b.txt", "c.txt"}) CHECK(pg.exists(f));
}
