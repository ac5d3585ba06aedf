// kaicoder serve: the review page, a second door to the same gate. This file
// is only the server loop: cpp-httplib parses HTTP and each request goes to
// lib/web's App, one at a time; the sign-in address goes to the terminal.
// It is linked into the server program (kaicoder-serve, cmd/serve_main.cpp)
// only: the HTTP library and the TLS, Kerberos and compression libraries it
// brings are loaded by `kaicoder serve` alone, not by every command.

#include <atomic>
#include <cctype>
#include <csignal>
#include <mutex>
#include <pthread.h>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "cmd/cli.hpp"
#include "cmd/gate.hpp"
#include "cmd/serve_options.hpp"
#include "lib/util/text.hpp"
#include "lib/web/routes.hpp"

namespace kai::cmd {

namespace {

// cpp-httplib's request as lib/web reads it. Only the body of a form post
// fills `form`: a field in the address never counts as a form field.
web::Request to_web(const httplib::Request& in) {
  web::Request r;
  r.method = in.method;
  r.path = in.path;
  if (auto q = in.target.find('?'); q != std::string::npos) {
    httplib::Params params;
    httplib::detail::parse_query_text(in.target.substr(q + 1), params);
    for (const auto& [k, v] : params) r.query.emplace(k, v);  // the first of a repeated name
  }
  if (in.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded")) {
    httplib::Params params;
    httplib::detail::parse_query_text(in.body, params);
    for (const auto& [k, v] : params) r.form.emplace(k, v);
  }
  for (const auto& [k, v] : in.headers) {
    std::string name = k;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto [it, fresh] = r.headers.emplace(name, v);
    if (!fresh) it->second += "\n" + v;
  }
  return r;
}

void send(const web::Response& in, httplib::Response& out) {
  out.status = in.status;
  for (const auto& [k, v] : in.headers)
    if (!out.has_header(k)) out.set_header(k, v);  // the server's defaults hold the security headers already
  out.set_content(in.body, in.content_type.c_str());
}

}  // namespace

RunFn setup_serve(CLI::App& sub) {
  auto a = std::make_shared<ServeArgs>();
  add_serve_options(sub, *a);
  return [a](Session& s) {
    if (a->address != "127.0.0.1" && a->address != "localhost")
      return report(
          s, make_error(Errc::denied, fmt::format("kaicoder serve listens on 127.0.0.1 only, not on '{}'", a->address),
                        "another address would let other machines reach the gate; open the page on this machine"));
    if (auto tty = require_terminal("kaicoder serve writes its sign-in address to a terminal, and there is none"); !tty)
      return report(s, tty.error());
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());

    // Stop on Ctrl-C or SIGTERM: a thread waits for them, so the server's
    // threads (which inherit the mask) never run a signal handler.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    httplib::Server server;
    server.set_payload_max_length(1 << 20);
    // The security headers on what cpp-httplib answers by itself too (a
    // malformed request, a body too large).
    web::Response defaults;
    web::add_security_headers(defaults);
    server.set_default_headers(httplib::Headers(defaults.headers.begin(), defaults.headers.end()));
    server.set_keep_alive_max_count(20);
    const int port = a->port == 0 ? server.bind_to_any_port("127.0.0.1")
                                  : (server.bind_to_port("127.0.0.1", a->port) ? a->port : -1);
    if (port <= 0)
      return report(s, make_error(Errc::io, fmt::format("cannot listen on 127.0.0.1:{}", a->port),
                                  "the port is in use or not allowed: choose another with --port, or leave it out"));
    auto guard = web::Guard::create(port);
    if (!guard) return report(s, guard.error());
    const std::string url = guard->login_url();
    const Env env = s.env();
    const Clock& clock = s.clock();
    web::App app([&env, &clock] { return Workspace::open(env, clock); }, Decider(s.user(), Channel::web),
                 std::move(*guard));
    std::mutex one_at_a_time;
    // Every method and path goes to the App (the body read first: httplib
    // reads it only for routed requests); it decides what exists.
    auto handler = [&](const httplib::Request& in, httplib::Response& out) {
      web::Request r = to_web(in);
      std::lock_guard<std::mutex> hold(one_at_a_time);
      send(app.handle(r), out);
    };
    server.Get(".*", handler).Post(".*", handler).Put(".*", handler).Patch(".*", handler).Delete(".*", handler);
    server.Options(".*", handler);

    // The address carries the token: the terminal only, never stdout.
    auto told =
        tell_terminal(fmt::format("kaicoder serve: the review page of {}\n  open {}\n"
                                  "  (the address signs one browser in: keep it to yourself; Ctrl-C stops the page)\n",
                                  make_visible((*ws)->root.string(), Allow::nothing), url));
    if (!told) return report(s, told.error());

    std::atomic<bool> signalled{false};
    std::thread waiter([&] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      signalled = true;
      server.stop();
    });
    server.listen_after_bind();
    // listen ended without a signal (an error): wake the waiter ourselves.
    if (!signalled) pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    (void)tell_terminal("kaicoder serve: stopped\n");
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
