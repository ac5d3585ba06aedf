#pragma once
// Who may use the review page: the one browser that opened the URL printed
// on the terminal. The URL's token becomes an HttpOnly, SameSite=Strict
// cookie; every POST also carries a CSRF token bound to its form's action;
// a Host or Origin other than this server's own is refused (DNS rebinding,
// cross-site forms).
//
//   auto g = Guard::create(port);        // a fresh token from getrandom
//   url = g->login_url();                // shown once, on the terminal
//   g->refusal(req)                      // before any handler runs

#include <optional>
#include <string>
#include <string_view>

#include "lib/store/mac.hpp"
#include "lib/result.hpp"
#include "lib/web/http.hpp"

namespace kai::web {

// Headers every response carries: a strict Content-Security-Policy (only
// this server's own stylesheet and script, no frames, forms only to itself),
// nosniff, no referrer, never cached.
void add_security_headers(Response& r);

class Guard {
public:
  // A guard for a server on 127.0.0.1:`port` with a fresh random token.
  // Errors: io when the kernel gives no random bytes.
  static Result<Guard> create(int port);
  // The same with a known key (unit tests).
  Guard(const MacKey& key, int port);

  int port() const { return m_port; }
  // http://127.0.0.1:PORT/login?token=…: the only place the token appears.
  std::string login_url() const;
  // Whether `candidate` is the token (constant time).
  bool token_ok(std::string_view candidate) const;
  // The Set-Cookie value that signs a browser in.
  std::string session_cookie() const;
  std::string cookie_name() const;
  // Whether the request carries the session cookie.
  bool signed_in(const Request& r) const;
  // The CSRF token a form posting to `action` carries.
  std::string csrf_for(std::string_view action) const;
  bool csrf_ok(const Request& r, std::string_view action) const;
  // Whether `sent` is csrf_for(binding) (constant time): a form field other
  // than "csrf" that binds what the form showed.
  bool token_ok_for(std::string_view sent, std::string_view binding) const;
  // Whether Host names this server (127.0.0.1:PORT or localhost:PORT).
  bool host_ok(const Request& r) const;
  // Whether Sec-Fetch-Site (when sent) is same-origin or none, and Origin
  // (when sent) is this server, or "null" with Sec-Fetch-Site same-origin.
  bool origin_ok(const Request& r) const;

  // The refusal for a request that fails the Host or Origin check, or a
  // page other than /login and the stylesheet without the cookie; nullopt
  // when it may go on. A POST is checked for its CSRF token by its handler,
  // which knows the action.
  std::optional<Response> refusal(const Request& r) const;

private:
  MacKey m_key;
  std::string m_token;  // hex of m_key
  int m_port = 0;
};

}  // namespace kai::web
