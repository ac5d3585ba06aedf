#include "lib/harness/probe.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/util/json_bounded.hpp"

namespace kai::harness {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Ran {
  bool started = false, timed_out = false;
  int exit_code = -1;
  std::string out, error;
};

// `exe args…` in `env.cwd` with `env.vars`, `input` on stdin, stdout
// kept, stderr dropped, killed when `env.timeout` runs out.
Ran run_once(const std::string& exe, const std::vector<std::string>& args, const std::string& input,
             const ProbeEnv& env) {
  Ran r;
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return r.error = "cannot make a pipe", r;
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    return r.error = "cannot make a pipe", r;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&fa, env.cwd.c_str());
  std::vector<std::string> argv_s{exe};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (const auto& [k, v] : env.vars) env_s.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]), ::close(out[0]);
    r.error = std::strerror(rc);
    return r;
  }
  r.started = true;
  {
    // Small, so it fits the pipe. A program that ended without reading it
    // makes the write fail with EPIPE, not end this process by SIGPIPE.
    sigset_t pipe_sig, old;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
    if (::write(in[1], input.data(), input.size()) < 0 && errno == EPIPE) {
      const timespec none{};
      ::sigtimedwait(&pipe_sig, nullptr, &none);
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  ::close(in[1]);
  const auto deadline = std::chrono::steady_clock::now() + env.timeout;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    if (r.out.size() < (size_t{1} << 20)) r.out.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  // It closed its output but may still run: wait as long as the time left.
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, r.timed_out ? 0 : WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (w == 0 && std::chrono::steady_clock::now() >= deadline) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
    } else if (w == 0) {
      ::poll(nullptr, 0, 10);
    }
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return r;
}

std::string harmless_call(Harness h, const fs::path& cwd) {
  switch (h) {
    case Harness::claude_code:
    case Harness::codex:
      return json{{"hook_event_name", "PreToolUse"},
                  {"cwd", cwd.string()},
                  {"tool_name", "TodoWrite"},
                  {"tool_input", {{"todos", json::array()}}}}
          .dump();
    case Harness::gemini:
      return json{{"hook_event_name", "BeforeTool"},
                  {"cwd", cwd.string()},
                  {"tool_name", "write_todos"},
                  {"tool_input", {{"todos", json::array()}}}}
          .dump();
    case Harness::cursor:
      return json{{"hook_event_name", "beforeMCPExecution"},
                  {"cwd", cwd.string()},
                  {"tool_name", "proposal_status"},
                  {"command", "kaicoder mcp"}}
          .dump();
  }
  return "{}";
}

bool plain_word(std::string_view w) {
  return !w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._+-@%:,=") ==
                           std::string_view::npos;
}

}  // namespace

std::string hook_program(const std::string& command) {
  std::string word;
  size_t i = command.find_first_not_of(" \t");
  if (i == std::string::npos) return {};
  for (; i < command.size() && command[i] != ' ' && command[i] != '\t'; ++i) {
    const char c = command[i];
    if (c == '$' || c == '`' || c == '\\') return {};
    if (c == '\'' || c == '"') {
      const size_t close = command.find(c, i + 1);
      if (close == std::string::npos) return {};
      const std::string inner = command.substr(i + 1, close - i - 1);
      if (c == '"' && inner.find_first_of("$`\\") != std::string::npos) return {};
      word += inner;
      i = close;
      continue;
    }
    word += c;
  }
  return word;
}

std::string hook_command_for(const fs::path& exe, Harness h) {
  std::string p = exe.string();
  if (!plain_word(p)) {
    std::string q = "'";
    for (char c : p) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    p = q + "'";
  }
  return fmt::format("{} hook {}", p, harness_name(h));
}

std::string hook_fault(const std::string& command, Harness h, std::string_view version, const ProbeEnv& env) {
  const std::string prog = hook_program(command);
  if (prog.empty() || prog.front() != '/')
    return fmt::format(
        "`{}` does not start with an absolute path: the harness's PATH decides which kaicoder runs, and when none is "
        "there the hook cannot start",
        command);
  struct stat st {};
  if (::stat(prog.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(prog.c_str(), X_OK) != 0)
    return fmt::format("`{}`: {} is not an executable file, so the hook cannot start", command, prog);
  // Checking runs it as the caller: only a program no one else can replace
  // (an agent user of its own, another user of the machine).
  if ((st.st_uid != 0 && st.st_uid != ::geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return fmt::format("`{}`: {} may be replaced by another user (it must be yours or root's, and writable by no "
                       "one else), so kaicoder does not run it",
                       command, prog);
  Ran v = run_once(prog, {"--version"}, "", env);
  if (!v.started) return fmt::format("`{}`: {} does not start: {}", command, prog, v.error);
  const std::string want = fmt::format("kaicoder {}", version);
  if (v.exit_code != 0 || v.out.substr(0, v.out.find('\n')) != want)
    return fmt::format("`{}`: {} is not kaicoder {} (it says '{}')", command, prog, version,
                       v.out.substr(0, std::min(v.out.find('\n'), size_t{80})));
  Ran a = run_once(prog, {"hook", std::string(harness_name(h))}, harmless_call(h, env.cwd), env);
  if (a.timed_out) return fmt::format("`{}` did not answer a harmless call in time", command);
  auto j = parse_bounded_json(a.out).value;
  if (a.exit_code != 0 || !j.is_object())
    return fmt::format("`{}` did not answer a harmless call (exit {}{})", command, a.exit_code,
                       j.is_object() ? "" : ", no decision on stdout");
  return {};
}

}  // namespace kai::harness
