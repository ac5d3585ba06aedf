#include "cmd/cli.hpp"

#include <charconv>
#include <cstdlib>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/gate/envelope.hpp"
#include "cmd/agent_side.hpp"
#include "lib/run/hooks.hpp"

namespace kai::cmd {

int exit_code(Errc c) { return static_cast<int>(c); }

int outcome_exit_code(const Proposal& p) {
  if (p.kind == Kind::run && p.state == State::applied) return p.outcome_code;
  switch (p.state) {
    case State::applied:
    case State::approved:
    case State::rolled_back: return 0;
    case State::rejected: return exit_code(Errc::rejected);
    case State::timeout: return exit_code(Errc::timeout);
    case State::failed: return p.outcome_code > 0 ? p.outcome_code : k_exit_error;
    case State::pending:
    case State::held: return k_exit_error;
  }
  return k_exit_error;
}

Session::Session(Env env, Options opts) : m_env(std::move(env)), m_opts(std::move(opts)) {
  m_agent = find_agent_side(m_env, ::getuid());
  m_env_redactor.add_env(m_env.vars);
  set_redactor(&m_env_redactor);
  const char* nc = std::getenv("NO_COLOR");
  bool tty = ::isatty(STDOUT_FILENO) == 1;
  if (m_opts.color == "always")
    m_color = true;
  else if (m_opts.color == "never" || m_opts.no_color || (nc && *nc) || m_opts.json)
    m_color = false;
  else
    m_color = tty;
}

Result<Workspace*> Session::workspace() {
  if (!m_ws) {
    if (m_agent) {
      auto ws = open_agent_workspace(m_env, m_clock, *m_agent, m_opts.command);
      if (!ws) return ws.error();
      m_ws.emplace(std::move(*ws));
    } else {
      auto ws = Workspace::open(m_env, m_clock);
      if (!ws) return ws.error();
      m_ws.emplace(std::move(*ws));
    }
    set_redactor(&m_ws->redactor);
    m_ws->progress = m_progress.callback();
    if (!m_agent && takes_in_first(m_opts.command))
      take_in_spool(*m_ws, m_opts.command, m_taken_in);
    else if (!m_agent)
      note_waiting_spool(*m_ws);
  }
  return &*m_ws;
}

void Session::finish() {
  if (!m_ws) return;
  for (const auto& n : m_ws->notices) err("kaicoder: note: {}\n", n);
  m_ws->notices.clear();
  flush_notify(*m_ws);
}

int report(Session& s, const Error& e) {
  if (s.json()) {
    emit(s, nlohmann::json::object(), exit_code(e.code), e);
  } else {
    err("kaicoder: {}: {}\n", e.code == Errc::denied ? "denied" : "error", e.message);
    if (!e.hint.empty()) err("hint: {}\n", e.hint);
  }
  return exit_code(e.code);
}

CLI::Validator whole_number(long lo, long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        long v = 0;
        auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || r.ec != std::errc{} || r.ptr != text.data() + text.size() || v < lo || v > hi)
          return fmt::format("must be a whole number from {} to {}, not '{}'", lo, hi, text);
        return {};
      },
      fmt::format("{}..{}", lo, hi));
}

nlohmann::json exit_error(int rc) {
  return {{"code", rc},
          {"kind", "exit"},
          {"message", fmt::format("the command exited with code {}", rc)},
          {"hint", "its output is in stdout and stderr"}};
}

nlohmann::json failure_envelope(const std::string& command, const Error& e) {
  return {{"ok", false}, {"command", command}, {"error", error_object(e)}};
}

int emit(Session& s, nlohmann::json j, int rc, const std::optional<Error>& e) {
  j["ok"] = rc == k_exit_ok;
  j["command"] = s.command();
  if (rc != k_exit_ok && e) {
    j["error"] = error_object(*e);
    j["error"]["code"] = rc;  // the code is always the exit status
  } else if (rc != k_exit_ok && !j.contains("error")) {
    // A code of kaicoder's own (SPEC §3), or a run's own exit code.
    j["error"] =
        rc >= 1 && rc <= 8 ? error_object(make_error(static_cast<Errc>(rc), "the command failed")) : exit_error(rc);
  }
  print_json(std::move(j));
  return rc;
}

void print_json(nlohmann::json j) {
  // Moved, never copied: a changeset's object holds every file's diff.
  std::string text = redacted_json(std::move(j)).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  write_stdout(text);
}

}  // namespace kai::cmd
