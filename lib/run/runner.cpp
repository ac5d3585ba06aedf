#include "lib/run/runner.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "lib/run/sandbox_proc.hpp"
#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

// Time limits run on the monotonic clock, not on the injectable wall Clock:
// a run's limit must hold whatever happens to the wall clock meanwhile.
using Steady = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr auto k_linger = milliseconds(250);       // leftovers may finish writing
constexpr auto k_last_drain = milliseconds(1000);  // after SIGKILL, for escaped holders of the pipes
constexpr size_t k_read_chunk = 65536;

// Moves `fd` above 2 so that the child's dup2 onto 0, 1 and 2 can never
// clobber one of its own sources (a parent started with stdio closed).
Fd above_stdio(int fd) {
  if (fd < 0 || fd > 2) return Fd(fd);
  int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  ::close(fd);
  return Fd(moved);
}

// Keeps the first and last halves of a stream and counts the rest.
class Capture {
public:
  explicit Capture(size_t cap) : m_head_cap(cap / 2), m_tail_cap(cap - cap / 2) {}

  void add(std::string_view s) {
    m_total += s.size();
    size_t h = std::min(s.size(), m_head_cap - m_head.size());
    m_head.append(s.substr(0, h));
    s.remove_prefix(h);
    if (s.empty()) return;
    if (m_after_head < 0) m_after_head = static_cast<unsigned char>(s.front());
    m_tail.append(s);
    // Trim in batches so that a long stream costs amortised O(1) per byte.
    if (m_tail.size() > 2 * m_tail_cap + k_read_chunk) drop_tail_front(m_tail.size() - m_tail_cap);
  }

  size_t total() const { return m_total; }
  bool cut() const { return m_total > m_head.size() + std::min(m_tail.size(), m_tail_cap); }

  // The kept text, each half redacted on its own.
  std::string finish(const std::function<std::string(std::string_view)>& redact) {
    auto clean = [&](std::string_view s) { return redact ? redact(s) : std::string(s); };
    if (m_tail.size() > m_tail_cap) drop_tail_front(m_tail.size() - m_tail_cap);
    if (!cut()) return clean(m_head + m_tail);
    trim_partial_lines();
    size_t gap = m_total - m_head.size() - m_tail.size();
    std::string s = clean(m_head);
    if (!s.empty() && s.back() != '\n') s += '\n';
    s += cut_marker(gap);
    s += clean(m_tail);
    return s;
  }

private:
  void drop_tail_front(size_t n) {
    m_before_tail = static_cast<unsigned char>(m_tail[n - 1]);
    m_tail.erase(0, n);
  }

  // A line split by the cut is dropped when its end lies near the cut, so a
  // half line (a token cut in two, which a redaction pattern would no longer
  // recognise) does not reach the proposer. Output without newlines near the
  // cut is kept as it is.
  void trim_partial_lines() {
    if (m_after_head != '\n') {
      size_t nl = m_head.rfind('\n');
      if (nl != std::string::npos && m_head.size() - (nl + 1) <= m_head.size() / 4) m_head.resize(nl + 1);
    }
    if (m_before_tail != '\n') {
      size_t nl = m_tail.find('\n');
      if (nl != std::string::npos && nl + 1 <= m_tail.size() / 4) m_tail.erase(0, nl + 1);
    }
  }

  size_t m_head_cap, m_tail_cap;
  size_t m_total = 0;
  std::string m_head, m_tail;
  int m_after_head = -1;   // first byte that did not fit the head
  int m_before_tail = -1;  // last byte dropped in front of the tail
};

// Everything the child needs, prepared before fork: between fork and exec
// only async-signal-safe calls are allowed, so nothing may allocate there.
struct ExecPlan {
  std::vector<std::string> args, envs;
  std::vector<char*> argv, envp;
  std::string program;     // what execve gets
  bool not_found = false;  // a bare name that no PATH entry holds
  std::string cwd;
  std::string run_prefix;  // "kaicoder: cannot run 'x': "
  std::string cwd_prefix;  // "kaicoder: cannot enter '/r': "
  size_t heap_limit = 0;   // RunSpec::heap_limit
};

std::string path_of(const std::vector<std::string>& env) {
  for (const std::string& kv : env)
    if (kv.rfind("PATH=", 0) == 0) return kv.substr(5);
  return "/usr/local/bin:/usr/bin:/bin";
}

// PATH lookup against the child's environment (execvp would use ours). The
// first executable regular file wins; a non-executable one is still used
// when nothing better exists, so that exec reports "permission denied".
void resolve_program(ExecPlan& p, const fs::path& cwd) {
  const std::string& name = p.args.front();
  if (name.find('/') != std::string::npos) {
    p.program = name;
    return;
  }
  std::string fallback;
  std::string path = path_of(p.envs);
  for (size_t start = 0; start <= path.size();) {
    size_t end = std::min(path.find(':', start), path.size());
    fs::path dir = path.substr(start, end - start);
    start = end + 1;
    fs::path cand = dir.empty() ? cwd / name : (dir.is_absolute() ? dir : cwd / dir) / name;
    struct stat st {};
    if (::stat(cand.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::access(cand.c_str(), X_OK) == 0) {
      p.program = cand.string();
      return;
    }
    if (fallback.empty()) fallback = cand.string();
  }
  p.program = fallback;
  p.not_found = fallback.empty();
}

ExecPlan make_plan(const RunSpec& spec) {
  ExecPlan p;
  p.args = spec.shell.empty() ? spec.argv : std::vector<std::string>{"/bin/sh", "-c", spec.shell};
  p.envs = spec.env;
  for (std::string& s : p.args) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (std::string& s : p.envs) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  p.cwd = spec.cwd.string();
  resolve_program(p, spec.cwd);
  p.run_prefix = fmt::format("kaicoder: cannot run '{}': ", p.args.front());
  p.cwd_prefix = fmt::format("kaicoder: cannot enter '{}': ", p.cwd);
  p.heap_limit = spec.heap_limit;
  return p;
}

// --- the child, between fork and exec: async-signal-safe calls only ---

// `prefix` is a literal or a string built before fork: no allocation here.
[[noreturn]] void child_fail(std::string_view prefix, const char* reason, int code) noexcept {
  ssize_t ignored = ::write(2, prefix.data(), prefix.size());
  ignored = ::write(2, reason, std::strlen(reason));
  ignored = ::write(2, "\n", 1);
  (void)ignored;
  ::_exit(code);
}

const char* reason_of(int err) noexcept {
  const char* s = ::strerrordesc_np(err);  // a static table, unlike strerror
  return s ? s : "unknown error";
}

bool move_fd(int from, int to) noexcept {
  if (from == to) return ::fcntl(to, F_SETFD, 0) == 0;
  return ::dup2(from, to) == to;  // the copy is not close-on-exec
}

// Dispositions set to "ignore" survive exec: a kaicoder that ignores SIGPIPE
// would otherwise hand `yes | head` a yes that never dies.
void reset_signals() noexcept {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s)
    if (s != SIGKILL && s != SIGSTOP) ::sigaction(s, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Descriptors the caller opened without close-on-exec (a lock file, a
// socket) must not reach the command.
void cloexec_from_3() noexcept {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
  for (int fd = 3; fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

// Set-up failures go to `report_fd`, which the parent turns into an error
// instead of a command result.
[[noreturn]] void report_fail(int report_fd, std::string_view prefix, int err) noexcept {
  ssize_t ignored = ::write(report_fd, prefix.data(), prefix.size());
  const char* reason = reason_of(err);
  ignored = ::write(report_fd, reason, std::strlen(reason));
  (void)ignored;
  ::_exit(126);
}

struct Confinement {
  const LandlockRuleset* landlock = nullptr;
  const NamespacePlan* namespaces = nullptr;
  int report_fd = -1;
  pid_t parent = -1;  // kaicoder's process, which the run must not outlive
};

[[noreturn]] void child_main(const ExecPlan& p, int devnull, int out_w, int err_w, const Confinement& box) noexcept {
  if (!move_fd(devnull, 0) || !move_fd(out_w, 1) || !move_fd(err_w, 2)) ::_exit(126);
  // A new session makes the child the leader of its own process group (what
  // the timeout kills) and leaves it without a controlling terminal, so it
  // cannot open /dev/tty to read or fake the approver's keystrokes. The
  // parent must not setpgid() first: a group leader cannot call setsid().
  if (::setsid() < 0) report_fail(box.report_fd, "kaicoder: cannot start a new session: ", errno);
  cloexec_from_3();
  const bool landlock_only = box.landlock && !box.namespaces;
  // The run dies with kaicoder (kill -9 of `approve`, of the MCP server, of
  // intake): every process between kaicoder and the command has a parent-
  // death signal, set first and then checked. The landlock level's reaper
  // sets its own, which it catches to clear the run away.
  if (!landlock_only && !follow_parent(SIGKILL, box.parent))
    report_fail(box.report_fd, "kaicoder: the run's parent ended before it started: ", ESRCH);
  // Fail closed: never run a command unconfined that was meant to be confined.
  if (box.namespaces) box.namespaces->enter(box.report_fd, *box.landlock);  // returns in the run's process only
  if (landlock_only) become_reaper(box.parent, box.report_fd);             // likewise
  reset_signals();
  if (p.heap_limit != 0) {
    const rlimit heap = {p.heap_limit, p.heap_limit};
    if (::setrlimit(RLIMIT_DATA, &heap) != 0) report_fail(box.report_fd, "kaicoder: cannot limit the memory: ", errno);
  }
  if (::chdir(p.cwd.c_str()) != 0) child_fail(p.cwd_prefix, reason_of(errno), 126);
  if (landlock_only) {
    if (int err = box.landlock->enforce(); err != 0)
      report_fail(box.report_fd, "kaicoder: cannot enforce the sandbox (landlock, seccomp): ", err);
    if (int err = drop_capabilities(); err != 0)
      report_fail(box.report_fd, "kaicoder: the sandbox cannot drop capabilities: ", err);
  }
  if (p.not_found) child_fail(p.run_prefix, "command not found", 127);
  ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  int err = errno;
  child_fail(p.run_prefix, reason_of(err), err == ENOENT ? 127 : 126);
}

// --- the parent ---

// Watches the child: reads both pipes, enforces the time limit, and cleans
// up the process group. The leader is not reaped until the end, so its
// zombie keeps the group id from being reused while signals are sent to it.
class Supervisor {
public:
  Supervisor(pid_t pid, Fd out, Fd err, const RunSpec& spec)
      : m_pid(pid), m_spec(spec), m_deadline(Steady::now() + spec.timeout) {
    m_streams[0] = Stream{std::move(out), Capture(spec.max_output), 1};
    m_streams[1] = Stream{std::move(err), Capture(spec.max_output), 2};
    // A pidfd turns the leader's exit into a poll event; without one (old
    // kernel, seccomp) the loop polls every 50 ms instead.
    m_pidfd = Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  }
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Reached only when a callback threw: nothing of the run may survive it.
  ~Supervisor() {
    if (m_reaped) return;
    signal_group(SIGKILL);
    int st = 0;
    while (::waitpid(m_pid, &st, 0) < 0 && errno == EINTR) {}
  }

  void watch() {
    while (true) {
      Steady::time_point now = Steady::now();
      if (!m_exited) m_exited = leader_exited();
      if (m_exited && !pipes_open()) break;
      advance(now);
      if (m_stop_at && now >= *m_stop_at) break;
      wait_for_events(now);
    }
    // Whatever the command left behind in its group (a daemon with its
    // output redirected) does not outlive the run.
    signal_group(SIGKILL);
  }

  void finish(RunResult& r) {
    int st = 0;
    while (::waitpid(m_pid, &st, 0) < 0 && errno == EINTR) {}
    m_reaped = true;
    if (WIFEXITED(st)) r.exit_code = WEXITSTATUS(st);
    if (WIFSIGNALED(st)) {
      r.signal = WTERMSIG(st);
      r.exit_code = 128 + r.signal;
    }
    r.timed_out = m_timed_out;
    r.out_bytes = m_streams[0].cap.total();
    r.err_bytes = m_streams[1].cap.total();
    r.out_cut = m_streams[0].cap.cut();
    r.err_cut = m_streams[1].cap.cut();
    r.out = m_streams[0].cap.finish(m_spec.redact);
    r.err = m_streams[1].cap.finish(m_spec.redact);
  }

private:
  struct Stream {
    Fd fd;
    Capture cap{0};
    int number = 0;
  };

  // Signals sent before the child's setsid() would miss the group, so the
  // leader also gets its own copy. SIGKILL first goes to every process below
  // the leader, however it left the group, while the leader is held stopped
  // (at the landlock level it is a subreaper: what it started is found below
  // it until it dies; and it ends by the signal, not by its child's end).
  void signal_group(int sig) {
    if (sig == SIGKILL && !m_exited) {
      ::kill(m_pid, SIGSTOP);
      kill_descendants(m_pid);
    }
    ::kill(-m_pid, sig);
    if (!m_exited) ::kill(m_pid, sig);
  }

  bool leader_exited() {
    siginfo_t si{};
    if (::waitid(P_PID, static_cast<id_t>(m_pid), &si, WEXITED | WNOHANG | WNOWAIT) != 0) return errno == ECHILD;
    return si.si_pid == m_pid;
  }

  bool pipes_open() const { return m_streams[0].fd.get() >= 0 || m_streams[1].fd.get() >= 0; }

  void advance(Steady::time_point now) {
    if (!m_term_sent) {
      bool due = false;
      if (!m_exited && now >= m_deadline) {
        m_timed_out = due = true;
      } else if (m_exited) {
        // The leader is gone but something it started still holds the pipes.
        if (!m_linger_until) m_linger_until = now + k_linger;
        due = now >= *m_linger_until;
      }
      if (due) {
        signal_group(SIGTERM);
        m_term_sent = true;
        m_kill_at = now + m_spec.kill_grace;
      }
    }
    if (m_term_sent && !m_kill_sent && now >= *m_kill_at) {
      signal_group(SIGKILL);
      m_kill_sent = true;
      m_stop_at = now + k_last_drain;
    }
  }

  void wait_for_events(Steady::time_point now) {
    Steady::time_point next = Steady::time_point::max();
    if (!m_term_sent && !m_exited) next = m_deadline;
    for (const auto& t : {m_linger_until, m_kill_at, m_stop_at})
      if (t && *t > now) next = std::min(next, *t);
    long ms = 60000;
    if (next != Steady::time_point::max()) ms = std::chrono::ceil<milliseconds>(next - now).count();
    if (!m_exited && m_pidfd.get() < 0) ms = std::min(ms, 50L);

    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    for (const Stream& s : m_streams)
      if (s.fd.get() >= 0) fds[n++] = pollfd{s.fd.get(), POLLIN, 0};
    if (!m_exited && m_pidfd.get() >= 0) fds[n++] = pollfd{m_pidfd.get(), POLLIN, 0};
    if (::poll(fds.data(), n, static_cast<int>(std::clamp(ms, 0L, 60000L))) <= 0) return;
    for (nfds_t i = 0; i < n; ++i)
      for (Stream& s : m_streams)
        if (fds[i].revents != 0 && fds[i].fd == s.fd.get()) drain(s);
  }

  void drain(Stream& s) {
    char buf[k_read_chunk];
    ssize_t got = ::read(s.fd.get(), buf, sizeof buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (got <= 0) {  // EOF, or an error that will not go away
      s.fd.reset();
      return;
    }
    std::string_view chunk(buf, static_cast<size_t>(got));
    if (m_spec.on_output) m_spec.on_output(chunk, s.number);
    s.cap.add(chunk);
  }

  pid_t m_pid;
  const RunSpec& m_spec;
  Fd m_pidfd;
  std::array<Stream, 2> m_streams;
  Steady::time_point m_deadline;
  std::optional<Steady::time_point> m_linger_until, m_kill_at, m_stop_at;
  bool m_exited = false, m_reaped = false, m_timed_out = false, m_term_sent = false, m_kill_sent = false;
};

// What the child reported before it could run the command; empty when the
// set-up went through.
std::string read_report(int fd) {
  std::string text;
  char buf[512];
  ssize_t got;
  while ((got = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 4096) text.append(buf, static_cast<size_t>(got));
  return text;
}

std::string unsandboxed_note() {
  LandlockStatus ls = landlock_status();
  if (ls.abi == 0)
    return fmt::format("landlock unavailable ({}); ran unsandboxed because [run] sandbox = \"none\"", ls.detail);
  return fmt::format("unsandboxed because [run] sandbox = \"none\" (landlock ABI {} is available)", ls.abi);
}

Status check_spec(const RunSpec& spec) {
  if (spec.argv.empty() == spec.shell.empty())
    return make_error(Errc::usage, spec.argv.empty() ? "nothing to run: give a command or a shell string"
                                                     : "give a command or a shell string, not both");
  if (!spec.argv.empty() && spec.argv.front().empty()) return make_error(Errc::usage, "the command name is empty");
  std::error_code ec;
  if (!fs::is_directory(spec.cwd, ec))
    return make_error(Errc::conflict, fmt::format("cannot run in '{}': not a folder", spec.cwd.string()));
  return ok_status();
}

Result<RunResult> run_checked(const RunSpec& spec) {
  KAI_TRY(check_spec(spec));
  RunResult r;
  std::optional<LandlockRuleset> sandbox;
  std::optional<NamespacePlan> namespaces;
  if (spec.sandbox == SandboxMode::full) {
    // Checked first: its refusal names the level that would work here.
    Result<NamespacePlan> ns = NamespacePlan::prepare(spec.layout);
    if (!ns) return ns.error();
    namespaces = std::move(*ns);
  }
  if (spec.sandbox != SandboxMode::none) {
    LandlockExtras extras;
    extras.tcp_off = spec.sandbox == SandboxMode::landlock && !spec.layout.network;
    extras.unix_sockets_off = extras.terminals_unreadable = spec.sandbox == SandboxMode::landlock;
    extras.devices = spec.layout.devices;
    Result<LandlockRuleset> rs = build_write_ruleset(spec.writable, extras);
    if (!rs) return rs.error();
    r.sandbox_note = namespaces ? fmt::format("full sandbox: {}; {}", namespaces->note(), rs->note()) : rs->note();
    sandbox = std::move(*rs);
  } else {
    r.sandbox_note = unsandboxed_note();
  }
  ExecPlan plan = make_plan(spec);

  int out_p[2], err_p[2];
  if (::pipe2(out_p, O_CLOEXEC) != 0) return make_error(Errc::io, "cannot create a pipe: " + errno_text(errno));
  Fd out_r = above_stdio(out_p[0]), out_w = above_stdio(out_p[1]);
  if (::pipe2(err_p, O_CLOEXEC) != 0) return make_error(Errc::io, "cannot create a pipe: " + errno_text(errno));
  Fd err_r = above_stdio(err_p[0]), err_w = above_stdio(err_p[1]);
  const char* in_path = spec.stdin_path.empty() ? "/dev/null" : spec.stdin_path.c_str();
  Fd devnull = above_stdio(::open(in_path, O_RDONLY | O_CLOEXEC));
  if (out_r.get() < 0 || out_w.get() < 0 || err_r.get() < 0 || err_w.get() < 0 || devnull.get() < 0)
    return make_error(Errc::io, "cannot set up the command's input and output: " + errno_text(errno));
  ::fcntl(out_r.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err_r.get(), F_SETFL, O_NONBLOCK);
  int rep_p[2];
  if (::pipe2(rep_p, O_CLOEXEC | O_NONBLOCK) != 0)
    return make_error(Errc::io, "cannot create a pipe: " + errno_text(errno));
  Fd rep_r = above_stdio(rep_p[0]), rep_w = above_stdio(rep_p[1]);
  if (rep_r.get() < 0 || rep_w.get() < 0) return make_error(Errc::io, "cannot create a pipe: " + errno_text(errno));
  Confinement box{sandbox ? &*sandbox : nullptr, namespaces ? &*namespaces : nullptr, rep_w.get(), ::getpid()};

  Steady::time_point start = Steady::now();
  pid_t pid = ::fork();
  if (pid < 0) return make_error(Errc::io, "cannot start the command: " + errno_text(errno));
  if (pid == 0) child_main(plan, devnull.get(), out_w.get(), err_w.get(), box);
  // Only the child may hold the write ends, or the pipes would never close.
  out_w.reset();
  err_w.reset();
  devnull.reset();
  rep_w.reset();

  Supervisor sup(pid, std::move(out_r), std::move(err_r), spec);
  sup.watch();
  sup.finish(r);
  r.elapsed = std::chrono::duration_cast<milliseconds>(Steady::now() - start);
  if (std::string report = read_report(rep_r.get()); !report.empty())
    return make_error(Errc::io, fmt::format("the command did not run: {}", report),
                      "nothing ran unconfined; `kaicoder doctor` shows what the sandbox can do on this machine");
  return r;
}

}  // namespace

std::vector<std::string> with_env(std::vector<std::string> env, std::string_view name, std::string_view value) {
  const std::string prefix = std::string(name) + "=";
  std::erase_if(env, [&prefix](const std::string& kv) { return kv.rfind(prefix, 0) == 0; });
  env.push_back(prefix + std::string(value));
  return env;
}

std::string cut_marker(size_t cut_bytes) { return fmt::format("[… {} bytes cut …]\n", cut_bytes); }

Result<RunResult> run_command(const RunSpec& spec) {
  try {
    return run_checked(spec);
  } catch (const std::exception& e) {
    // Thrown by a callback or by allocation; the Supervisor has already
    // killed and reaped the command by the time this runs.
    return make_error(Errc::io, fmt::format("cannot finish the command run: {}", e.what()));
  }
}

}  // namespace kai
