// The review page's handlers (lib/web) called as the server loop calls them,
// without a socket: sign-in, cookie, CSRF, Host and Origin, the security
// headers, escaping of what an agent wrote, and every decision going through
// the gate with its refusals.

#include <catch2/catch.hpp>

#include <regex>

#include <nlohmann/json.hpp>

#include "lib/gate/gate.hpp"
#include "lib/gate/runs.hpp"
#include "lib/util/fs.hpp"
#include "lib/web/html.hpp"
#include "lib/web/pages.hpp"
#include "lib/web/routes.hpp"
#include "unit/web_page.hpp"

namespace {
using kai::Errc;
using kai::test::field;
using kai::test::form_of;
using kai::test::Page;
namespace web = kai::web;
namespace gate = kai::gate;

void check_security_headers(const web::Response& r) {
  const std::string csp = r.header("Content-Security-Policy");
  CHECK_THAT(csp, Catch::Contains("default-src 'none'"));
  CHECK_THAT(csp, Catch::Contains("style-src 'self'"));
  CHECK_THAT(csp, Catch::Contains("script-src 'self'"));
  CHECK_THAT(csp, Catch::Contains("form-action 'self'"));
  CHECK_THAT(csp, Catch::Contains("frame-ancestors 'none'"));
  CHECK_FALSE(csp.find("unsafe") != std::string::npos);
  CHECK(r.header("X-Content-Type-Options") == "nosniff");
  CHECK(r.header("Referrer-Policy") == "no-referrer");
  CHECK(r.header("Cache-Control") == "no-store");
}

}  // namespace

TEST_CASE("web: the sign-in address sets an HttpOnly SameSite=Strict cookie and leaves the token behind",
          "[web][serve]") {
  Page pg("");
  web::Request r = pg.request("GET", "/login");
  r.headers.erase("cookie");
  r.query["token"] = pg.token();
  auto ok = pg.app.handle(r);
  CHECK(ok.status == 303);
  CHECK(ok.header("Location") == "/");
  const std::string set = ok.header("Set-Cookie");
  CHECK_THAT(set, Catch::Contains("HttpOnly"));
  CHECK_THAT(set, Catch::Contains("SameSite=Strict"));
  CHECK_THAT(set, Catch::StartsWith(pg.app.guard().cookie_name() + "=" + pg.token() + ";"));
  check_security_headers(ok);

  r.query["token"] = std::string(pg.token().size(), 'a');
  auto bad = pg.app.handle(r);
  CHECK(bad.status == 403);
  CHECK(bad.header("Set-Cookie").empty());
  r.query.clear();
  CHECK(pg.app.handle(r).status == 403);
  check_security_headers(bad);
}

TEST_CASE("web: without the session cookie every page and form is refused", "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  for (const std::string path : {"/", "/log", "/state.json", "/app.js", "/p/1", "/rollback/x"}) {
    web::Request r = pg.request("GET", path);
    r.headers.erase("cookie");
    auto res = pg.app.handle(r);
    CHECK(res.status == 403);
    CHECK_THAT(res.body, Catch::Contains("Not signed in"));
    r.headers["cookie"] = pg.app.guard().cookie_name() + "=" + std::string(64, '0');
    CHECK(pg.app.handle(r).status == 403);
    // Two cookies of that name (one planted beside ours) count as none.
    r.headers["cookie"] = pg.cookie + "; " + pg.app.guard().cookie_name() + "=x";
    CHECK(pg.app.handle(r).status == 403);
  }
  web::Request post = pg.request("POST", "/p/" + std::to_string(id) + "/approve");
  post.headers.erase("cookie");
  CHECK(pg.app.handle(post).status == 403);
  CHECK(pg.load(id).state == kai::State::pending);
  // The stylesheet is served to anyone who may reach the page, so refusals look right.
  web::Request css = pg.request("GET", "/app.css");
  css.headers.erase("cookie");
  CHECK(pg.app.handle(css).status == 200);
}

TEST_CASE("web: a foreign Host (DNS rebinding) or Origin is refused, even with the cookie", "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  for (const std::string host : {"evil.example:48123", "127.0.0.1:48124", "localhost", "127.0.0.1", "",
                                 "127.0.0.1:48123\n127.0.0.1:48123", "0.0.0.0:48123", "[::1]:48123"}) {
    web::Request r = pg.request("GET", "/");
    r.headers["host"] = host;
    auto res = pg.app.handle(r);
    CHECK(res.status == 421);
    check_security_headers(res);
  }
  web::Request lh = pg.request("GET", "/");
  lh.headers["host"] = "localhost:48123";
  CHECK(pg.app.handle(lh).status == 200);

  auto page = pg.get("/p/" + std::to_string(id));
  REQUIRE(page.status == 200);
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  for (const std::string origin : {"http://evil.example", "http://127.0.0.1:9999", "null", "https://127.0.0.1:48123"}) {
    web::Request r = pg.request("POST", action);
    r.headers["origin"] = origin;
    r.form = form_of(page.body, action);
    auto res = pg.app.handle(r);
    CHECK(res.status == 403);
    CHECK_THAT(res.body, Catch::Contains("Cross-site"));
  }
  // "null" (a sandboxed frame, a data: page) passes only when the browser itself says same-origin.
  web::Request null_cross = pg.request("POST", action);
  null_cross.headers["origin"] = "null";
  null_cross.headers["sec-fetch-site"] = "cross-site";
  null_cross.form = form_of(page.body, action);
  CHECK(pg.app.handle(null_cross).status == 403);
  web::Request fetch_site = pg.request("POST", action);
  fetch_site.headers["sec-fetch-site"] = "same-site";
  fetch_site.form = form_of(page.body, action);
  CHECK(pg.app.handle(fetch_site).status == 403);
  CHECK(pg.load(id).state == kai::State::pending);
  CHECK_FALSE(pg.exists("a.txt"));
  // What Chromium sends for the page's own form under Referrer-Policy: no-referrer.
  web::Request own = pg.request("POST", action);
  own.headers["origin"] = "null";
  own.headers["sec-fetch-site"] = "same-origin";
  own.form = form_of(page.body, action);
  CHECK(pg.app.handle(own).status == 200);
  CHECK(pg.exists("a.txt"));
}

TEST_CASE("web: every response carries the strict security headers, and no third-party asset is named",
          "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  for (const std::string& path : std::vector<std::string>{"/", "/log", "/state.json", "/app.css", "/app.js",
                                                          "/p/" + std::to_string(id), "/p/99", "/nowhere"}) {
    auto res = pg.get(path);
    check_security_headers(res);
    CHECK(res.body.find("http://") == std::string::npos);
    CHECK(res.body.find("https://") == std::string::npos);
    CHECK(res.body.find("//cdn") == std::string::npos);
  }
  CHECK(pg.get("/p/99").status == 404);
  // The one id parser the terminal uses: what `approve 010` refuses names no page either.
  for (const char* bad : {"01", "010", "0x1", "+1", "-1", " 1", "1 ", "1e0", "0001", "1234567890"}) {
    INFO(bad);
    CHECK(pg.get(std::string("/p/") + bad).status == 404);
    CHECK(pg.post(std::string("/p/") + bad + "/approve", {}).status == 404);
    CHECK(pg.post(std::string("/p/") + bad + "/reject", {}).status == 404);
  }
  CHECK(pg.load(id).state == kai::State::pending);
  CHECK(pg.get("/app.js").content_type.starts_with("text/javascript"));
  CHECK(pg.get("/app.css").content_type.starts_with("text/css"));
  CHECK(pg.app.handle(pg.request("PUT", "/")).status == 405);
}

TEST_CASE("web: paths, diffs, why and agent names an agent wrote are escaped and their hidden characters shown",
          "[web][serve][attack]") {
  Page pg("");
  // Paths refuse < > & and hidden characters already; quotes get through to the page.
  const std::string path = "x\" onmouseover='alert(1)' y.txt";
  const std::string content = "</pre><script>alert('diff')</script>\nsafe \xE2\x80\xAEtxt.exe\n\x1b]0;owned\x07\n";
  int id =
      pg.stage(path, content, "<b onmouseover=alert(2)>why</b> \xE2\x80\x8B hidden", "<img src=x onerror=alert(3)>");
  for (const std::string& page : std::vector<std::string>{"/", "/p/" + std::to_string(id)}) {
    auto res = pg.get(page);
    REQUIRE(res.status == 200);
    CHECK(res.body.find("<img") == std::string::npos);
    CHECK(res.body.find("\" onmouseover") == std::string::npos);
    CHECK(res.body.find("<script>alert") == std::string::npos);
    CHECK(res.body.find("<b onmouseover") == std::string::npos);
    CHECK(res.body.find("\xE2\x80\xAE") == std::string::npos);
    CHECK(res.body.find("\x1b") == std::string::npos);
    CHECK(res.body.find("\xE2\x80\x8B") == std::string::npos);
    CHECK_THAT(res.body, Catch::Contains("x&quot; onmouseover=&#39;alert(1)&#39; y.txt"));
    CHECK_THAT(res.body, Catch::Contains("&lt;img src=x onerror=alert(3)&gt;"));
  }
  auto res = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(res.body, Catch::Contains("&lt;/pre&gt;&lt;script&gt;alert(&#39;diff&#39;)&lt;/script&gt;"));
  CHECK_THAT(res.body, Catch::Contains("&lt;U+202E&gt;"));
  CHECK_THAT(res.body, Catch::Contains("\\e]0;owned\\x07"));
  CHECK_THAT(res.body, Catch::Contains("&lt;b onmouseover=alert(2)&gt;why&lt;/b&gt; &lt;U+200B&gt; hidden"));
  CHECK_THAT(res.body, Catch::Contains("control or invisible characters"));
}

TEST_CASE("web: approving from the page is the gate's approval, recorded as '<user> (web)' with its channel",
          "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  auto page = pg.get("/p/" + std::to_string(id));
  REQUIRE(page.status == 200);
  CHECK_THAT(page.body, Catch::Contains("data-live=\"watch\""));
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto form = form_of(page.body, action);
  REQUIRE(form.count("csrf"));
  CHECK(form["digest"] == kai::digest(*pg.f.ws->store.load(id)));
  CHECK(form["cut"] == "0");
  CHECK_FALSE(page.body.find("name=\"confirm\"") != std::string::npos);  // a normal tier takes a plain yes

  auto done = pg.post(action, form);
  CHECK(done.status == 200);
  CHECK_THAT(done.body, Catch::Contains("applied proposal"));
  CHECK(pg.load(id).state == kai::State::applied);
  CHECK(pg.load(id).decided_by == "tester (web)");
  CHECK(pg.load(id).channel == kai::Channel::web);
  auto stored = nlohmann::json::parse(pg.f.dir.read(".kaicoder/staging/" + std::to_string(id) + "/meta.json"));
  CHECK(stored.at("channel") == "web");
  CHECK(pg.f.dir.read("a.txt") == "new\n");
  auto log = pg.f.ws->changelog.newest(1);
  REQUIRE(log);
  REQUIRE(log->size() == 1);
  CHECK(log->front().approver == "tester (web)");

  // The same form again: it was decided meanwhile.
  auto again = pg.post(action, form);
  CHECK(again.status == 409);
}

TEST_CASE("web: a stale page cannot approve: another digest, or a decision made elsewhere, is a conflict",
          "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  // A form for a digest other than the proposal's (signed by the page, as a stale one would be).
  const std::string old_digest(40, 'a');
  auto stale = pg.post(action, {{"csrf", pg.app.guard().csrf_for(web::approve_binding(action, old_digest, "0"))},
                                {"digest", old_digest},
                                {"cut", "0"}});
  CHECK(stale.status == 409);
  CHECK_THAT(stale.body, Catch::Contains("changed while it was being reviewed"));
  CHECK(pg.load(id).state == kai::State::pending);
  CHECK_FALSE(pg.exists("a.txt"));

  // Shown on the page, then rejected at the terminal: the page's form is refused.
  auto page = pg.get("/p/" + std::to_string(id));
  auto form = form_of(page.body, action);
  gate::Request req;
  req.id = id;
  req.who = kai::Decider("tester");
  req.answer = gate::Answer::yes;
  REQUIRE(gate::reject(*pg.f.ws, req, "no"));
  auto late = pg.post(action, form);
  CHECK(late.status == 409);
  CHECK(pg.load(id).state == kai::State::rejected);
  CHECK(pg.load(id).channel == kai::Channel::terminal);
  CHECK_FALSE(pg.exists("a.txt"));
}

TEST_CASE("web: a form's CSRF token is required and bound to its action, digest and cut", "[web][serve][attack]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  int other = pg.stage("b.txt", "b\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  auto form = form_of(page.body, action);
  auto missing = form;
  missing.erase("csrf");
  CHECK(pg.post(action, missing).status == 403);
  auto wrong = form;
  wrong["csrf"] = std::string(64, 'f');
  CHECK(pg.post(action, wrong).status == 403);
  auto uncut = form;
  uncut["cut"] = "1";  // a flipped flag no longer matches its token
  CHECK(pg.post(action, uncut).status == 403);
  // A token from one proposal's form does not approve another.
  const std::string other_action = "/p/" + std::to_string(other) + "/approve";
  auto theirs = form;
  theirs["digest"] = kai::digest(*pg.f.ws->store.load(other));
  CHECK(pg.post(other_action, theirs).status == 403);
  // Nor the reject form's token.
  auto rej = pg.post("/p/" + std::to_string(id) + "/reject", {{"csrf", form["csrf"]}, {"reason", "x"}});
  CHECK(rej.status == 403);
  CHECK(pg.load(id).state == kai::State::pending);
  CHECK(pg.load(other).state == kai::State::pending);
  CHECK_FALSE(pg.exists("a.txt"));
}

TEST_CASE("web: a confirm-tier proposal takes CONFIRM typed in the form", "[web][serve]") {
  Page pg("[paths]\nconfirm = [\"deploy/**\"]\n");
  int id = pg.stage("deploy/x.txt", "new\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(page.body, Catch::Contains("<label for=\"confirm\">Type CONFIRM to approve</label>"));
  auto form = form_of(page.body, action);
  auto plain = pg.post(action, form);
  CHECK(plain.status == 403);
  CHECK_THAT(plain.body, Catch::Contains("CONFIRM"));
  form["confirm"] = "confirm";
  CHECK(pg.post(action, form).status == 403);
  CHECK(pg.load(id).state == kai::State::pending);
  CHECK_FALSE(pg.exists("deploy/x.txt"));
  form["confirm"] = " CONFIRM ";
  CHECK(pg.post(action, form).status == 200);
  CHECK(pg.load(id).state == kai::State::applied);
}

TEST_CASE("web: a diff cut for display says what was not shown and takes CONFIRM", "[web][serve]") {
  Page pg("");
  std::string big;
  for (int i = 0; i < 2500; ++i) big += "line " + std::to_string(i) + "\n";
  int id = pg.stage("big.txt", big);
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(page.body, Catch::Contains("The diff was cut for display"));
  CHECK_THAT(page.body, Catch::Contains("were not shown"));
  auto form = form_of(page.body, action);
  CHECK(form["cut"] == "1");
  CHECK(pg.post(action, form).status == 403);
  CHECK_FALSE(pg.exists("big.txt"));
  form["confirm"] = "CONFIRM";
  CHECK(pg.post(action, form).status == 200);
  CHECK(pg.exists("big.txt"));
}

TEST_CASE("web: someone not on the approvers list gets no forms and no decision", "[web][serve]") {
  Page pg("[approval]\napprovers = [\"alice\"]\n");
  int id = pg.stage("a.txt", "new\n");
  auto page = pg.get("/p/" + std::to_string(id));
  CHECK(page.status == 200);
  CHECK_THAT(page.body, Catch::Contains("not an approver"));
  CHECK(page.body.find("<form class=\"decide\"") == std::string::npos);
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  const std::string dg = kai::digest(*pg.f.ws->store.load(id));
  auto r = pg.post(
      action, {{"csrf", pg.app.guard().csrf_for(web::approve_binding(action, dg, "0"))}, {"digest", dg}, {"cut", "0"}});
  CHECK(r.status == 403);
  CHECK_THAT(r.body, Catch::Contains("not an approver"));
  const std::string rej = "/p/" + std::to_string(id) + "/reject";
  CHECK(pg.post(rej, {{"csrf", pg.app.guard().csrf_for(rej)}}).status == 403);
  CHECK(pg.load(id).state == kai::State::pending);
}

TEST_CASE("web: an expired proposal shows as expired and cannot be approved or rejected", "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  auto form = form_of(page.body, action);
  pg.f.clock.t += std::chrono::seconds(301);  // past [approval] timeout (300 s)
  auto late = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(late.body, Catch::Contains("expired"));
  CHECK(late.body.find("<form class=\"decide\"") == std::string::npos);
  auto r = pg.post(action, form);
  CHECK(r.status == 410);
  CHECK_THAT(r.body, Catch::Contains("expired"));
  CHECK_FALSE(pg.exists("a.txt"));
  CHECK(pg.load(id).state == kai::State::timeout);
}

TEST_CASE("web: rejecting with a reason, then the page of a decided proposal has no forms", "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  auto page = pg.get("/p/" + std::to_string(id));
  const std::string action = "/p/" + std::to_string(id) + "/reject";
  auto r = pg.post(action, {{"csrf", field(page.body, action, "csrf")}, {"reason", "not <this>"}});
  CHECK(r.status == 200);
  auto p = pg.load(id);
  CHECK(p.state == kai::State::rejected);
  CHECK(p.decided_by == "tester (web)");
  CHECK(p.channel == kai::Channel::web);
  CHECK(p.reason == "not <this>");
  CHECK_FALSE(pg.exists("a.txt"));
  auto after = pg.get("/p/" + std::to_string(id));
  CHECK(after.body.find("<form class=\"decide\"") == std::string::npos);
  CHECK_THAT(after.body, Catch::Contains("not &lt;this&gt;"));
  // Rejecting again is a conflict.
  CHECK(pg.post(action, {{"csrf", field(page.body, action, "csrf")}}).status == 409);
}

TEST_CASE("web: the changelog offers a rollback, and rolling back from the page is the gate's rollback",
          "[web][serve]") {
  Page pg("");
  pg.f.dir.write("a.txt", "old\n");
  int id = pg.stage("a.txt", "new\n");
  auto page = pg.get("/p/" + std::to_string(id));
  REQUIRE(pg.post("/p/" + std::to_string(id) + "/approve", form_of(page.body, "/p/" + std::to_string(id) + "/approve"))
              .status == 200);
  const std::string rid = pg.load(id).rollback_id;
  REQUIRE_FALSE(rid.empty());
  auto log = pg.get("/log");
  CHECK_THAT(log.body, Catch::Contains("action=\"/rollback/" + rid + "\""));
  CHECK_THAT(log.body, Catch::Contains("tester (web)"));
  auto confirm = pg.get("/rollback/" + rid);
  REQUIRE(confirm.status == 200);
  CHECK_THAT(confirm.body, Catch::Contains("a.txt"));
  const std::string action = "/rollback/" + rid;
  CHECK(pg.post(action, {}).status == 403);  // no CSRF token
  CHECK(pg.f.dir.read("a.txt") == "new\n");
  auto done = pg.post(action, {{"csrf", field(confirm.body, action, "csrf")}});
  CHECK(done.status == 200);
  CHECK(pg.f.dir.read("a.txt") == "old\n");
  auto entries = pg.f.ws->changelog.newest(1);
  REQUIRE(entries);
  CHECK(entries->front().kind == "rollback");
  CHECK(entries->front().approver == "tester (web)");
  // Twice: the entry was undone already.
  CHECK(pg.post(action, {{"csrf", field(confirm.body, action, "csrf")}}).status >= 400);
  CHECK(pg.get("/rollback/no-such-id").status == 404);
}

TEST_CASE("web: the list shows pending first with what the reviewer needs, and state.json changes with the store",
          "[web][serve]") {
  Page pg("");
  int a = pg.stage("a.txt", "a\n");
  auto before = nlohmann::json::parse(pg.get("/state.json").body);
  int b = pg.stage("b.txt", "b\n");
  auto after = nlohmann::json::parse(pg.get("/state.json").body);
  CHECK(before.at("version") != after.at("version"));
  CHECK(after.at("proposals").at(std::to_string(b)).at("status") == "pending");
  gate::Request req;
  req.id = a;
  req.who = kai::Decider("tester");
  req.answer = gate::Answer::yes;
  REQUIRE(gate::reject(*pg.f.ws, req, ""));
  auto list = pg.get("/");
  CHECK(list.status == 200);
  CHECK_THAT(list.body, Catch::Contains("data-live=\"swap\""));
  CHECK_THAT(list.body, Catch::Contains("Time left"));
  // Risk and tier each in its own column; every cell carries its column's
  // name for narrow screens, where the header row is hidden.
  CHECK_THAT(list.body, Catch::Contains("<th scope=\"col\">Risk</th><th scope=\"col\">Tier</th>"));
  CHECK_THAT(list.body, Catch::Contains("<td data-label=\"Risk\"><span class=\"badge low\">low</span></td><td "
                                        "data-label=\"Tier\"><span class=\"badge normal\">normal</span></td>"));
  CHECK(list.body.find("<td>") == std::string::npos);
  CHECK_THAT(list.body, Catch::Contains("5m 0s"));  // [approval] timeout 300 s on a clock that stands still
  CHECK(list.body.find("/p/" + std::to_string(b)) < list.body.find("/p/" + std::to_string(a)));
  auto st = nlohmann::json::parse(pg.get("/state.json").body);
  CHECK(st.at("proposals").at(std::to_string(a)).at("status") == "rejected");
}

TEST_CASE("web: the list and state.json show archived proposals, read from the archive's summary",
          "[web][serve][archive]") {
  Page pg("");
  int a = pg.stage("a.txt", "a\n");
  gate::Request req;
  req.id = a;
  req.who = kai::Decider("tester");
  req.answer = gate::Answer::yes;
  REQUIRE(gate::reject(*pg.f.ws, req, ""));
  int b = pg.stage("b.txt", "b\n");  // its sweep moves a into the archive
  REQUIRE(std::filesystem::exists(pg.f.ws->store.archive_dir(a)));
  REQUIRE(std::filesystem::exists(pg.f.ws->store.dir() / "archive" / "0" / "summary"));
  // The record itself made unreadable: what the list shows comes from the summary.
  REQUIRE(kai::write_file_atomic(pg.f.ws->store.archive_dir(a) / "meta.json", "not json", 0600));
  auto list = pg.get("/");
  CHECK(list.status == 200);
  CHECK_THAT(list.body, Catch::Contains("/p/" + std::to_string(a)));
  CHECK_THAT(list.body, Catch::Contains("rejected"));
  CHECK(list.body.find("corrupt") == std::string::npos);
  CHECK(list.body.find("/p/" + std::to_string(b)) < list.body.find("/p/" + std::to_string(a)));
  auto st = nlohmann::json::parse(pg.get("/state.json").body);
  CHECK(st.at("proposals").at(std::to_string(a)).at("status") == "rejected");
}

TEST_CASE("web: shown() escapes markup after making hidden characters visible", "[web][serve]") {
  CHECK(web::escape("<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
  CHECK(web::shown("a\nb", kai::Allow::nothing) == "a\\nb");
  CHECK(web::shown("\xE2\x80\xAE<") == "&lt;U+202E&gt;&lt;");
  auto d = web::diff_html("+<x>\n-y\n@@ -1 +1 @@\n");
  CHECK_THAT(d, Catch::Contains("<span class=\"l add\">+&lt;x&gt;</span>"));
  CHECK_THAT(d, Catch::Contains("<span class=\"l del\">-y</span>"));
  CHECK_THAT(d, Catch::Contains("<span class=\"l hunk\">"));
  // The words changed within an edited line are marked, escaped like the rest.
  auto words = web::diff_html("@@ -1 +1 @@\n-int <a> = 1;\n+int <a> = 2;\n");
  CHECK_THAT(words, Catch::Contains("<span class=\"l del\">-int &lt;a&gt; = <mark>1</mark>;</span>"));
  CHECK_THAT(words, Catch::Contains("<span class=\"l add\">+int &lt;a&gt; = <mark>2</mark>;</span>"));
  CHECK(web::human_duration(59) == "59s");
  CHECK(web::human_duration(3725) == "1h 2m");
}

TEST_CASE("web: a run proposal shows its command escaped, its verdict, and Approve and run", "[web][serve]") {
  Page pg("");
  kai::RunRequest req;
  req.argv = {"echo", "<script>alert(1)</script>"};  // the run checker itself blocks hidden characters
  req.why = "say \xE2\x80\xAE it";
  auto st = kai::propose_run(*pg.f.ws, req, pg.f.dir.path(), kai::DryRun::no, {});
  REQUIRE(st);
  INFO(kai::to_string(st->verdict));
  REQUIRE(st->proposal.id > 0);
  auto page = pg.get("/p/" + std::to_string(st->proposal.id));
  CHECK(page.status == 200);
  CHECK(page.body.find("<script>alert") == std::string::npos);
  CHECK(page.body.find("\xE2\x80\xAE") == std::string::npos);
  CHECK_THAT(page.body, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(page.body, Catch::Contains("<dt>Verdict</dt>"));
  CHECK_THAT(page.body, Catch::Contains("Approve and run"));
  CHECK(page.body.find("<h2>Diff") == std::string::npos);
  auto list = pg.get("/");
  CHECK_THAT(list.body, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

TEST_CASE("web: 'Approve only' records the approval without applying, as approve --no-apply", "[web][serve]") {
  Page pg("");
  int id = pg.stage("a.txt", "new\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(page.body, Catch::Contains("name=\"then\" value=\"apply\">Approve and apply</button>"));
  CHECK_THAT(page.body, Catch::Contains("name=\"then\" value=\"record\">Approve only (apply later)</button>"));
  auto form = form_of(page.body, action);
  form["then"] = "record";
  auto r = pg.post(action, form);
  CHECK(r.status == 200);
  CHECK_THAT(r.body, Catch::Contains("apply it at a terminal with: kaicoder apply " + std::to_string(id)));
  CHECK(pg.load(id).state == kai::State::approved);
  CHECK(pg.load(id).decided_by == "tester (web)");
  CHECK_FALSE(pg.exists("a.txt"));
  // Anything else in "then" is refused, and decides nothing.
  int other = pg.stage("b.txt", "b\n");
  const std::string other_action = "/p/" + std::to_string(other) + "/approve";
  auto odd = form_of(pg.get("/p/" + std::to_string(other)).body, other_action);
  odd["then"] = "apply-and-skip-checks";
  CHECK(pg.post(other_action, odd).status == 400);
  CHECK(pg.load(other).state == kai::State::pending);
}

TEST_CASE("web: in propose-only mode the page approves only, and an apply is refused", "[web][serve]") {
  Page pg("[policy]\nmode = \"propose-only\"\n");
  int id = pg.stage("a.txt", "new\n");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(page.body, Catch::Contains("propose-only"));
  CHECK_THAT(page.body, Catch::Contains("value=\"record\">Approve (record only)</button>"));
  CHECK(page.body.find("value=\"apply\"") == std::string::npos);
  auto form = form_of(page.body, action);
  auto apply = form;
  apply["then"] = "apply";
  auto no = pg.post(action, apply);
  CHECK(no.status == 403);
  CHECK_THAT(no.body, Catch::Contains("propose-only"));
  CHECK(pg.load(id).state == kai::State::pending);
  form["then"] = "record";
  CHECK(pg.post(action, form).status == 200);
  CHECK(pg.load(id).state == kai::State::approved);
  CHECK_FALSE(pg.exists("a.txt"));
}

TEST_CASE("web: after a failed validation the page applies only with the override and CONFIRM, as approve --force",
          "[web][serve]") {
  Page pg("[validate]\n\"*.txt\" = \"grep -q ok {file}\"\n");
  int id = pg.stage("a.txt", "bad\n");
  REQUIRE(pg.load(id).validation.status == "failed");
  const std::string action = "/p/" + std::to_string(id) + "/approve";
  auto page = pg.get("/p/" + std::to_string(id));
  CHECK_THAT(page.body, Catch::Contains("failed validation; not applied"));
  CHECK(page.body.find("value=\"apply\"") == std::string::npos);
  CHECK_THAT(page.body, Catch::Contains("value=\"record\">Approve only (apply later)</button>"));
  CHECK_THAT(page.body, Catch::Contains("<h3>Override the failed validation</h3>"));
  CHECK_THAT(page.body, Catch::Contains("<label for=\"confirm-force\">Type CONFIRM to approve</label>"));
  CHECK_THAT(page.body, Catch::Contains("overriding a failed validation"));
  CHECK_THAT(page.body, Catch::Contains("value=\"force\">Approve and apply anyway</button>"));
  auto form = form_of(page.body, action);
  auto plain = form;
  plain["then"] = "apply";
  CHECK(pg.post(action, plain).status == 409);  // a plain approve-and-apply refuses a failed validation
  auto forced = form;
  forced["then"] = "force";
  auto unconfirmed = pg.post(action, forced);
  CHECK(unconfirmed.status == 403);
  CHECK_THAT(unconfirmed.body, Catch::Contains("CONFIRM"));
  CHECK(pg.load(id).state == kai::State::pending);
  CHECK_FALSE(pg.exists("a.txt"));
  forced["confirm"] = "CONFIRM";
  CHECK(pg.post(action, forced).status == 200);
  CHECK(pg.load(id).state == kai::State::applied);
  CHECK(pg.f.dir.read("a.txt") == "bad\n");
  auto log = pg.f.ws->changelog.newest(1);
  REQUIRE(log);
  CHECK_THAT(log->front().result, Catch::Contains("forced"));
  CHECK(log->front().approver == "tester (web)");
}
