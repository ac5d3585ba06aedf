#include "lib/web/session.hpp"

#include <fmt/format.h>

#include "lib/web/html.hpp"

namespace kai::web {

namespace {

std::string hex(const MacKey& k) {
  std::string out;
  out.reserve(k.bytes.size() * 2);
  for (unsigned char b : k.bytes) out += fmt::format("{:02x}", b);
  return out;
}

// The value of cookie `name` in a Cookie header, if it is there once.
std::optional<std::string> cookie_value(const std::string& header, const std::string& name) {
  std::optional<std::string> found;
  size_t at = 0;
  while (at <= header.size()) {
    size_t end = header.find(';', at);
    if (end == std::string::npos) end = header.size();
    std::string_view part(header.data() + at, end - at);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    size_t eq = part.find('=');
    if (eq != std::string_view::npos && part.substr(0, eq) == name) {
      if (found) return std::nullopt;  // twice: a planted cookie beside ours
      found = std::string(part.substr(eq + 1));
    }
    at = end + 1;
  }
  return found;
}

}  // namespace

void add_security_headers(Response& r) {
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self'; "
                         "form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
  r.headers.emplace_back("Cross-Origin-Resource-Policy", "same-origin");
  r.headers.emplace_back("Cache-Control", "no-store");
}

Result<Guard> Guard::create(int port) {
  auto k = random_key();
  if (!k) return k.error();
  return Guard(*k, port);
}

Guard::Guard(const MacKey& key, int port) : m_key(key), m_token(hex(key)), m_port(port) {}

std::string Guard::login_url() const { return fmt::format("http://127.0.0.1:{}/login?token={}", m_port, m_token); }

bool Guard::token_ok(std::string_view candidate) const { return same_mac(candidate, m_token); }

// Named for the port: two review pages of two roots on one machine keep
// their own cookie (cookies do not tell ports apart).
std::string Guard::cookie_name() const { return fmt::format("kaicoder_session_{}", m_port); }

std::string Guard::session_cookie() const {
  return fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict", cookie_name(), m_token);
}

bool Guard::signed_in(const Request& r) const {
  auto v = cookie_value(r.header("cookie"), cookie_name());
  return v && token_ok(*v);
}

std::string Guard::csrf_for(std::string_view action) const {
  return mac_hex(m_key, fmt::format("kaicoder serve csrf\n{}", action));
}

bool Guard::csrf_ok(const Request& r, std::string_view action) const { return token_ok_for(r.field("csrf"), action); }

bool Guard::token_ok_for(std::string_view sent, std::string_view binding) const {
  return !sent.empty() && same_mac(sent, csrf_for(binding));
}

bool Guard::host_ok(const Request& r) const {
  const std::string h = r.header("host");
  return h == fmt::format("127.0.0.1:{}", m_port) || h == fmt::format("localhost:{}", m_port);
}

bool Guard::origin_ok(const Request& r) const {
  const std::string site = r.header("sec-fetch-site");
  if (!site.empty() && site != "same-origin" && site != "none") return false;
  if (r.headers.count("origin")) {
    const std::string o = r.header("origin");
    // Under Referrer-Policy: no-referrer a browser posts a form with Origin
    // "null"; it is ours only when the browser itself says same-origin
    // (Sec-Fetch-Site, which no page can set).
    if (o == "null") return site == "same-origin";
    if (o != fmt::format("http://127.0.0.1:{}", m_port) && o != fmt::format("http://localhost:{}", m_port))
      return false;
  }
  return true;
}

std::optional<Response> Guard::refusal(const Request& r) const {
  if (!host_ok(r))
    return error_page(421, "Wrong host",
                      "This page answers only to 127.0.0.1 and localhost on its own port; the request named another "
                      "host (a DNS rebinding attempt, or a proxy).");
  if (!origin_ok(r))
    return error_page(403, "Cross-site request refused",
                      "The request came from another site. Only the review page itself may send it.");
  if (r.path == "/login" || r.path == "/app.css") return std::nullopt;
  if (!signed_in(r))
    return error_page(403, "Not signed in",
                      "Open the address that kaicoder serve wrote on its terminal: it signs this browser in.");
  return std::nullopt;
}

}  // namespace kai::web
