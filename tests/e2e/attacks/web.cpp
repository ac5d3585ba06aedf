// Attacks on the review page of `kaicoder serve`, performed against the real
// binary: hostile names and contents that try to become markup, a forged
// cross-site form post, and DNS rebinding. Each is refused or rendered inert,
// and the tree and the store are unchanged.

#include "tests/support/checks.hpp"
#include "tests/support/serve.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
}  // namespace

TEST_CASE("attack: a file name and contents with HTML and script are shown as text on the page",
          "[e2e][attack][serve][web]") {
  TempRepo repo{};
  repo.init();
  const std::string name = "x\" onmouseover='alert(1)' y.html";
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", name, "--content-file", "-", "--why",
                             "</pre><script>alert(3)</script>", "--agent", "<svg onload=alert(4)>"},
                            "<script>alert(document.cookie)</script>\n<img src=x onerror=alert(2)>\n"),
                   0);
  ServePage page(repo);
  REQUIRE(page.sign_in());
  for (const char* path : {"/", "/p/1"}) {
    auto r = page.get(path);
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(r->body.find("<script>alert") == std::string::npos);
    CHECK(r->body.find("<img src=x") == std::string::npos);
    CHECK(r->body.find("<svg") == std::string::npos);
    CHECK(r->body.find("\" onmouseover") == std::string::npos);
    CHECK_THAT(r->body, Contains("x&quot; onmouseover=&#39;alert(1)&#39; y.html"));
    // The only script a page loads is its own, and the policy allows no other.
    CHECK_THAT(r->get_header_value("Content-Security-Policy"), Contains("script-src 'self'"));
  }
  auto p = page.get("/p/1");
  CHECK_THAT(p->body, Contains("&lt;script&gt;alert(document.cookie)&lt;/script&gt;"));
  CHECK_THAT(p->body, Contains("&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;"));
  KAI_CHECK_EXIT(page.stop(), 0);
}

TEST_CASE("attack: a forged cross-site form post is refused, with or without the victim's cookie",
          "[e2e][attack][serve][web]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "pwned")), 0);
  ServePage page(repo);
  const auto before = repo.tree_snapshot();
  // Without the cookie (SameSite=Strict keeps it from a cross-site post).
  auto anon = page.post("/p/1/approve", {{"digest", "x"}, {"cut", "0"}}, {{"Origin", "http://evil.example"}});
  REQUIRE(anon);
  CHECK(anon->status == 403);
  // With the cookie, as a browser that ignored SameSite would send it: the Origin refuses it.
  REQUIRE(page.sign_in());
  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  auto form = ServePage::form_of(p1->body, "/p/1/approve");
  auto cross = page.post("/p/1/approve", form, {{"Origin", "http://evil.example"}});
  REQUIRE(cross);
  CHECK(cross->status == 403);
  CHECK_THAT(cross->body, Contains("Cross-site request refused"));
  auto same_site = page.post("/p/1/approve", form, {{"Sec-Fetch-Site", "cross-site"}});
  REQUIRE(same_site);
  CHECK(same_site->status == 403);
  // With the cookie and a same-origin look but no CSRF token (the attacker cannot read the page).
  auto no_token = page.post("/p/1/approve", {{"digest", form["digest"]}, {"cut", "0"}});
  REQUIRE(no_token);
  CHECK(no_token->status == 403);
  CHECK(repo.tree_snapshot() == before);
  CHECK(show_json(repo, 1).at("status") == "pending");
  KAI_CHECK_EXIT(page.stop(), 0);
}

TEST_CASE("attack: DNS rebinding, a request naming another Host, is refused even with the cookie",
          "[e2e][attack][serve][web]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "pwned")), 0);
  ServePage page(repo);
  REQUIRE(page.sign_in());
  auto p1 = page.get("/p/1");
  REQUIRE(p1);
  auto form = ServePage::form_of(p1->body, "/p/1/approve");
  for (const std::string& host :
       std::vector<std::string>{"evil.example:" + std::to_string(page.port), "rebind.evil.example",
                                "127.0.0.1:" + std::to_string(page.port + 1)}) {
    auto read = page.get("/p/1", {{"Host", host}});
    REQUIRE(read);
    CHECK(read->status == 421);
    CHECK(read->body.find("a.txt") == std::string::npos);
    auto write = page.post("/p/1/approve", form, {{"Host", host}});
    REQUIRE(write);
    CHECK(write->status == 421);
  }
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(show_json(repo, 1).at("status") == "pending");
  KAI_CHECK_EXIT(page.stop(), 0);
}
