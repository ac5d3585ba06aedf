#pragma once
// The real `kaicoder serve` on a pseudo-terminal, and an HTTP client for it
// (cpp-httplib's), for end-to-end tests of the review page.
//
//   ServePage page(repo);                    // started, address read from the terminal
//   auto login = page.sign_in();             // GET /login?token=… → the session cookie
//   auto r = page.get("/p/1");
//   page.post("/p/1/approve", page.form_of(r->body, "/p/1/approve"));
//   Run done = page.stop();                  // Ctrl-C; exit code and output

#include <map>
#include <regex>
#include <string>

#include <httplib.h>

#include "tests/support/repo.hpp"

namespace kai::test {

class ServePage {
public:
  explicit ServePage(const TempRepo& repo, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{"serve"};
    args.insert(args.end(), extra.begin(), extra.end());
    m_proc = repo.spawn_kai_tty(args);
    if (!m_proc.wait_for_text("/login?token=", std::chrono::seconds(20)))
      throw std::runtime_error("kaicoder serve wrote no address: " + m_proc.tty());
    m_proc.wait_for_text("\n", std::chrono::seconds(5));
    std::smatch m;
    const std::string& tty = m_proc.tty();
    if (!std::regex_search(tty, m, std::regex(R"(http://127\.0\.0\.1:([0-9]+)/login\?token=([0-9a-f]+))")))
      throw std::runtime_error("no address on the terminal: " + tty);
    port = std::stoi(m[1]);
    token = m[2];
  }

  // GET /login with the token; keeps the cookie it sets.
  httplib::Result sign_in() {
    auto r = client().Get(("/login?token=" + token).c_str());
    if (r) {
      std::string set = r->get_header_value("Set-Cookie");
      cookie = set.substr(0, set.find(';'));
    }
    return r;
  }

  httplib::Headers headers(const httplib::Headers& extra = {}) const {
    httplib::Headers h;
    if (!cookie.empty()) h.emplace("Cookie", cookie);
    for (const auto& kv : extra) h.insert(kv);
    return h;
  }
  httplib::Result get(const std::string& path, const httplib::Headers& extra = {}) {
    return client().Get(path.c_str(), headers(extra));
  }
  httplib::Result post(const std::string& path, const std::map<std::string, std::string>& form,
                       const httplib::Headers& extra = {}) {
    httplib::Params params(form.begin(), form.end());
    return client().Post(path.c_str(), headers(extra), params);
  }

  // The hidden fields of the form posting to `action`, as a browser sends
  // them; with `holding`, of the first such form whose text holds it.
  static std::map<std::string, std::string> form_of(const std::string& html, const std::string& action,
                                                    const std::string& holding = "") {
    std::map<std::string, std::string> out;
    std::string form;
    for (size_t at = html.find("action=\"" + action + "\""); at != std::string::npos;
         at = html.find("action=\"" + action + "\"", at + 1)) {
      form = html.substr(at, html.find("</form>", at) - at);
      if (form.find(holding) != std::string::npos) break;
      form.clear();
    }
    std::regex hidden("type=\"hidden\" name=\"([a-z]+)\" value=\"([^\"]*)\"");
    for (std::sregex_iterator it(form.begin(), form.end(), hidden), end; it != end; ++it) out[(*it)[1]] = (*it)[2];
    return out;
  }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(5);
    c.set_read_timeout(30);
    return c;
  }

  // Ctrl-C on its terminal; what it printed and how it ended.
  Run stop() {
    m_proc.interrupt();
    return m_proc.finish(std::chrono::seconds(10));
  }

  int port = 0;
  std::string token, cookie;

private:
  TtyProcess m_proc;
};

}  // namespace kai::test
