#pragma once
// A review page (lib/web's App) over a WsFixture's root, driven as the
// server loop drives it, without a socket, as the user "tester"; and the
// form fields a page served, as a browser posts them.
//
//   Page pg("");                               // kaicoder.toml text
//   int id = pg.stage("a.txt", "new\n");
//   auto page = pg.get("/p/1");
//   pg.post("/p/1/approve", form_of(page.body, "/p/1/approve"));

#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <string>

#include "lib/gate/changeset.hpp"
#include "lib/web/routes.hpp"
#include "unit/ws_fixture.hpp"

namespace kai::test {

constexpr int k_web_port = 48123;

inline kai::MacKey web_test_key() {
  kai::MacKey k;
  for (size_t i = 0; i < k.bytes.size(); ++i) k.bytes[i] = static_cast<unsigned char>(i * 7 + 1);
  return k;
}

struct Page {
  WsFixture f;
  web::App app;
  std::string cookie;

  explicit Page(const std::string& config)
      : f(config), app(opener(f), kai::Decider("tester", kai::Channel::web), web::Guard(web_test_key(), k_web_port)) {
    cookie = app.guard().cookie_name() + "=" + token();
  }

  static web::App::Opener opener(WsFixture& fx) {
    return [&fx]() {
      kai::Env env;
      env.cwd = fx.dir.path();
      env.root_override = fx.dir.path();
      env.user_config_dir = fx.dir.path() / ".no-user-config";
      env.user = "tester";
      return kai::Workspace::open(env, fx.clock);
    };
  }

  std::string token() const {
    std::string url = app.guard().login_url();
    return url.substr(url.find("token=") + 6);
  }

  web::Request request(const std::string& method, const std::string& path) const {
    web::Request r;
    r.method = method;
    r.path = path;
    r.headers["host"] = "127.0.0.1:" + std::to_string(k_web_port);
    r.headers["cookie"] = cookie;
    return r;
  }
  web::Response get(const std::string& path) { return app.handle(request("GET", path)); }
  web::Response post(const std::string& path, std::map<std::string, std::string> form) {
    web::Request r = request("POST", path);
    r.headers["origin"] = "http://127.0.0.1:" + std::to_string(k_web_port);
    r.form = std::move(form);
    return app.handle(r);
  }

  int stage(const std::string& path, const std::string& content, const std::string& why = "test",
            const std::string& agent = "") {
    kai::ProposeRequest r;
    r.path = path;
    r.content = content;
    r.why = why;
    r.agent = agent;
    auto st = kai::propose(*f.ws, r, f.dir.path(), kai::DryRun::no, {});
    if (!st) FAIL(st.error().message);
    return st->proposal.id;
  }
  // A changeset from a unified diff or a `*** Begin Patch` envelope.
  int stage_patch(const std::string& patch, const std::string& why = "test") {
    kai::ChangesetRequest r;
    r.patch = patch;
    r.why = why;
    auto st = kai::propose_changeset(*f.ws, r, f.dir.path(), kai::DryRun::no, {});
    if (!st) FAIL(st.error().message);
    return st->proposal.id;
  }
  kai::Proposal load(int id) {
    auto p = f.ws->store.load(id, kai::Store::Payloads::none);
    REQUIRE(p);
    return *p;
  }
  bool exists(const std::string& rel) const { return std::filesystem::exists(f.dir.path() / rel); }
};

// The value of field `name` in the first form posting to `action`.
inline std::string field(const std::string& html, const std::string& action, const std::string& name) {
  size_t at = html.find("action=\"" + action + "\"");
  if (at == std::string::npos) return {};
  size_t end = html.find("</form>", at);
  std::smatch m;
  std::string form = html.substr(at, end - at);
  if (!std::regex_search(form, m, std::regex("name=\"" + name + "\" value=\"([^\"]*)\""))) return {};
  return m[1];
}

// The hidden fields of the first form posting to `action`, as a browser posts them.
inline std::map<std::string, std::string> form_of(const std::string& html, const std::string& action) {
  std::map<std::string, std::string> out;
  for (const char* n : {"csrf", "digest", "cut"}) {
    std::string v = field(html, action, n);
    if (!v.empty()) out[n] = v;
  }
  return out;
}

}  // namespace kai::test
