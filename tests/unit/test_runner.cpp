// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/run/runner.hpp"
#include "lib/run/sandbox.hpp"

using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using kai::Errc;
using kai::RunResult;
using kai::RunSpec;
using kai::SandboxMode;
using kai::test::TempDir;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

const std::vector<std::string> k_env = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"};

// Most cases are about execution, not confinement, so they run unsandboxed;
// the sandbox cases below set their own mode.
RunSpec shell_spec(const fs::path& cwd, std::string cmd) {
  RunSpec s;
  s.shell = std::move(cmd);
  s.cwd = cwd;
  s.env = k_env;
  s.sandbox = SandboxMode::none;
  return s;
}

RunResult run_ok(const RunSpec& s) {
  kai::Result<RunResult> r = kai::run_command(s);
  if (!r) FAIL("run_command failed: " << r.error().message);
  return *r;
}

// Gone, or a zombie waiting for an init that may never reap it: either way
// no longer running.
bool running(pid_t pid) {
  if (::kill(pid, 0) != 0) return errno != ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return stat && state != "Z" && state != "X";
}

bool stopped_soon(pid_t pid) {
  for (int i = 0; i < 50 && running(pid); ++i) std::this_thread::sleep_for(20ms);
  return !running(pid);
}

pid_t read_pid(const TempDir& t, std::string_view rel) { return static_cast<pid_t>(std::stol(t.read(rel))); }

}  // namespace

TEST_CASE("run passes the command's exit code through", "[runner]") {
  TempDir t;
  RunResult r = run_ok(shell_spec(t.path(), "exit 7"));
  CHECK(r.exit_code == 7);
  CHECK_FALSE(r.timed_out);
  CHECK(r.signal == 0);
  CHECK(r.sandbox_note.find("unsandboxed") != std::string::npos);
}

TEST_CASE("run reports a command killed by a signal as 128 plus the signal", "[runner]") {
  TempDir t;
  RunResult r = run_ok(shell_spec(t.path(), "kill -9 $$"));
  CHECK(r.exit_code == 128 + SIGKILL);
  CHECK(r.signal == SIGKILL);
  CHECK_FALSE(r.timed_out);
}

TEST_CASE("run executes the argv form without a shell", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "");
  s.argv = {"printf", "%s|", "a b", "$HOME", "*", "; echo no"};
  RunResult r = run_ok(s);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "a b|$HOME|*|; echo no|");
}

TEST_CASE("run captures both streams and streams chunks as they come", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "echo out; echo err >&2; echo more");
  std::string live_out, live_err;
  s.on_output = [&](std::string_view chunk, int stream) { (stream == 1 ? live_out : live_err) += chunk; };
  RunResult r = run_ok(s);
  CHECK(r.out == "out\nmore\n");
  CHECK(r.err == "err\n");
  CHECK(live_out == r.out);
  CHECK(live_err == r.err);
  CHECK(r.out_bytes == 9);
  CHECK(r.err_bytes == 4);
  CHECK_FALSE(r.out_cut);
}

TEST_CASE("run uses the given cwd and only the given environment", "[runner]") {
  TempDir t;
  t.mkdir("sub dir");
  RunSpec s = shell_spec(t / "sub dir", "pwd; echo \"$FOO\"; echo \"${HOME-unset}\"");
  s.env.push_back("FOO=bar");
  RunResult r = run_ok(s);
  CHECK(r.out == (t / "sub dir").string() + "\nbar\nunset\n");
}

TEST_CASE("run finds argv[0] through the child's PATH, not kaicoder's", "[runner]") {
  TempDir t;
  t.write("bin/kai-tool", "#!/bin/sh\necho tool ran \"$1\"\n");
  fs::permissions(t / "bin/kai-tool", fs::perms::owner_all);
  RunSpec s = shell_spec(t.path(), "");
  s.argv = {"kai-tool", "x"};
  s.env = {"PATH=" + (t / "bin").string() + ":/usr/bin:/bin"};
  RunResult r = run_ok(s);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "tool ran x\n");
}

TEST_CASE("run gives the command no terminal and an empty stdin", "[runner]") {
  TempDir t;
  // Fields 1, 5 and 6 of /proc/<pid>/stat: pid, process group, session.
  RunResult r = run_ok(shell_spec(t.path(),
                                  "cat; echo done; (: </dev/tty) 2>/dev/null && echo tty || echo no tty;"
                                  "read -r pid comm state ppid pgrp sid rest </proc/$$/stat;"
                                  "[ \"$pid\" = \"$pgrp\" ] && [ \"$pid\" = \"$sid\" ] && echo leader"));
  CHECK(r.out == "done\nno tty\nleader\n");
}

TEST_CASE("run reports a program that does not exist as 127, not as a crash", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "");
  SECTION("bare name") {
    s.argv = {"kai-no-such-program", "--flag"};
    RunResult r = run_ok(s);
    CHECK(r.exit_code == 127);
    CHECK_THAT(r.err, Contains("cannot run 'kai-no-such-program'") && Contains("command not found"));
  }
  SECTION("path") {
    s.argv = {"./missing"};
    RunResult r = run_ok(s);
    CHECK(r.exit_code == 127);
    CHECK_THAT(r.err, Contains("cannot run './missing'"));
  }
  SECTION("not executable") {
    t.write("plain.txt", "data\n");
    s.argv = {"./plain.txt"};
    RunResult r = run_ok(s);
    CHECK(r.exit_code == 126);
    CHECK_THAT(r.err, Contains("cannot run './plain.txt'"));
  }
}

TEST_CASE("run refuses a malformed request", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "true");
  SECTION("both forms") {
    s.argv = {"true"};
    CHECK(kai::run_command(s).error().code == Errc::usage);
  }
  SECTION("neither form") {
    s.shell.clear();
    CHECK(kai::run_command(s).error().code == Errc::usage);
  }
  SECTION("cwd gone") {
    s.cwd = t / "gone";
    CHECK(kai::run_command(s).error().code == Errc::conflict);
  }
}

TEST_CASE("run kills the whole process group when the time limit expires", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "sleep 100 & echo $! > bg.pid; sleep 100");
  s.timeout = 200ms;
  auto start = std::chrono::steady_clock::now();
  RunResult r = run_ok(s);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(r.timed_out);
  CHECK(r.exit_code == 128 + SIGTERM);
  CHECK(r.elapsed >= 190ms);
  CHECK(stopped_soon(read_pid(t, "bg.pid")));
}

TEST_CASE("run escalates to SIGKILL when the command ignores SIGTERM", "[runner]") {
  TempDir t;
  // The ignored disposition is inherited by sleep, so neither process dies
  // of SIGTERM.
  RunSpec s = shell_spec(t.path(), "trap '' TERM; sleep 100 & echo $! > bg.pid; sleep 100");
  s.timeout = 200ms;
  s.kill_grace = 200ms;
  RunResult r = run_ok(s);
  CHECK(r.timed_out);
  CHECK(r.signal == SIGKILL);
  CHECK(r.elapsed >= 390ms);
  CHECK(r.elapsed < 3s);
  CHECK(stopped_soon(read_pid(t, "bg.pid")));
}

TEST_CASE("run does not leave background processes behind", "[runner]") {
  TempDir t;
  SECTION("still holding the output pipes") {
    RunResult r = run_ok(shell_spec(t.path(), "sleep 100 & echo $! > bg.pid; echo started"));
    CHECK(r.exit_code == 0);
    CHECK(r.out == "started\n");
    CHECK(r.elapsed < 2s);
  }
  SECTION("with output redirected") {
    RunResult r = run_ok(shell_spec(t.path(), "sleep 100 >/dev/null 2>&1 & echo $! > bg.pid"));
    CHECK(r.exit_code == 0);
    CHECK(r.elapsed < 2s);
  }
  CHECK(stopped_soon(read_pid(t, "bg.pid")));
}

TEST_CASE("run stops the command when an output callback throws", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "echo $$ > leader.pid; echo hi; sleep 100");
  s.on_output = [](std::string_view, int) { throw std::runtime_error("terminal gone"); };
  kai::Result<RunResult> r = kai::run_command(s);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::io);
  CHECK_THAT(r.error().message, Contains("terminal gone"));
  CHECK(stopped_soon(read_pid(t, "leader.pid")));
}

TEST_CASE("run restores default signal handling for the command", "[runner]") {
  TempDir t;
  // With SIGPIPE inherited as ignored, yes would loop on EPIPE and complain.
  struct sigaction ign {};
  struct sigaction old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  kai::Result<RunResult> r = kai::run_command(shell_spec(t.path(), "yes | head -n 1"));
  ::sigaction(SIGPIPE, &old, nullptr);
  REQUIRE(r);
  CHECK(r->out == "y\n");
  CHECK(r->err.empty());
}

TEST_CASE("run does not hand the caller's open descriptors to the command", "[runner]") {
  TempDir t;
  int fd = ::open(t.path().c_str(), O_RDONLY);  // deliberately without O_CLOEXEC
  REQUIRE(fd > 2);
  RunResult r = run_ok(shell_spec(t.path(), "[ -e /proc/$$/fd/" + std::to_string(fd) + " ] && echo leaked || echo ok"));
  ::close(fd);
  CHECK(r.out == "ok\n");
}

TEST_CASE("run keeps the head and tail of output beyond max_output", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "head -c 1000000 /dev/zero | tr '\\0' a");
  s.max_output = 1000;
  size_t streamed = 0;
  s.on_output = [&](std::string_view chunk, int) { streamed += chunk.size(); };
  RunResult r = run_ok(s);
  CHECK(r.out_bytes == 1000000);
  CHECK(streamed == 1000000);
  CHECK(r.out_cut);
  CHECK(r.out.size() <= 1100);
  CHECK_THAT(r.out, StartsWith(std::string(500, 'a') + "\n" + kai::cut_marker(999000)));
  CHECK_THAT(r.out, EndsWith(kai::cut_marker(999000) + std::string(500, 'a')));
  CHECK_FALSE(r.err_cut);
}

TEST_CASE("run with max_output 0 keeps only the marker", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "echo hello");
  s.max_output = 0;
  RunResult r = run_ok(s);
  CHECK(r.out_cut);
  CHECK(r.out == kai::cut_marker(6));
}

TEST_CASE("run cuts long output at line boundaries", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "seq 1 100000");
  s.max_output = 1000;
  RunResult r = run_ok(s);
  REQUIRE(r.out_cut);
  std::istringstream in(r.out);
  std::string line;
  std::vector<long> head, tail;
  bool after = false;
  while (std::getline(in, line)) {
    if (line.rfind("[…", 0) == 0) {
      after = true;
      continue;
    }
    (after ? tail : head).push_back(std::stol(line));
  }
  REQUIRE(after);
  REQUIRE_FALSE(head.empty());
  REQUIRE_FALSE(tail.empty());
  // Whole lines only: the head counts up from 1 and the tail up to 100000
  // without a gap, which a half line would break.
  for (size_t i = 0; i < head.size(); ++i) CHECK(head[i] == static_cast<long>(i) + 1);
  for (size_t i = 0; i < tail.size(); ++i) CHECK(tail[i] == 100000 - static_cast<long>(tail.size() - 1 - i));
  CHECK(r.out_bytes == 588895);
}

TEST_CASE("run redacts the captured output of both streams", "[runner]") {
  TempDir t;
  auto redact = [](std::string_view s) {
    std::string out(s);
    for (size_t at; (at = out.find("hunter2")) != std::string::npos;) out.replace(at, 7, "[redacted]");
    return out;
  };
  SECTION("short output") {
    RunSpec s = shell_spec(t.path(), "echo token=hunter2; echo pw hunter2 >&2");
    s.redact = redact;
    RunResult r = run_ok(s);
    CHECK(r.out == "token=[redacted]\n");
    CHECK(r.err == "pw [redacted]\n");
  }
  SECTION("both halves of cut output") {
    RunSpec s = shell_spec(t.path(), "echo hunter2; seq 1 10000; echo hunter2");
    s.max_output = 400;
    s.redact = redact;
    RunResult r = run_ok(s);
    REQUIRE(r.out_cut);
    CHECK(r.out.find("hunter2") == std::string::npos);
    CHECK_THAT(r.out, StartsWith("[redacted]\n") && EndsWith("[redacted]\n"));
  }
}

TEST_CASE("landlock_status reports the kernel's support", "[runner]") {
  kai::LandlockStatus st = kai::landlock_status();
  CHECK(st.abi >= 0);
  CHECK_FALSE(st.detail.empty());
  if (st.abi == 0) WARN("landlock is not available here: " << st.detail);
}

namespace {

// Sandbox cases need a kernel with Landlock; elsewhere they say loudly that
// they did not run instead of passing in silence.
bool landlock_or_warn() {
  kai::LandlockStatus st = kai::landlock_status();
  if (st.abi == 0) WARN("SKIPPED: landlock is not available on this kernel (" << st.detail << ")");
  return st.abi > 0;
}

struct SandboxFixture {
  TempDir root, outside;
  RunSpec spec(std::string cmd) const {
    RunSpec s = shell_spec(root.path(), std::move(cmd));
    s.sandbox = SandboxMode::landlock;
    s.writable = {root.path()};
    return s;
  }
};

}  // namespace

TEST_CASE("run without landlock on this kernel is refused unless the sandbox is off", "[runner]") {
  TempDir t;
  RunSpec s = shell_spec(t.path(), "true");
  s.sandbox = SandboxMode::landlock;
  kai::Result<RunResult> r = kai::run_command(s);
  if (kai::landlock_status().abi > 0) {
    REQUIRE(r);
    CHECK_THAT(r->sandbox_note, StartsWith("landlock ABI"));
  } else {
    WARN("landlock is not available: checking the refusal instead of the sandbox");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::denied);
    CHECK_THAT(r.error().message, Contains("sandbox = \"none\""));
    s.sandbox = SandboxMode::none;
    RunResult u = run_ok(s);
    CHECK_THAT(u.sandbox_note, StartsWith("landlock unavailable"));
  }
}

TEST_CASE("the sandbox stops writes outside the writable trees", "[runner][sandbox]") {
  if (!landlock_or_warn()) return;
  SandboxFixture f;
  std::string out = f.outside.path().string();
  RunResult r = run_ok(f.spec("echo x > '" + out + "/new.txt'"));
  CHECK(r.exit_code != 0);
  CHECK_THAT(r.err, Contains("Permission denied"));
  CHECK_FALSE(f.outside.exists("new.txt"));
  CHECK_THAT(r.sandbox_note, Contains("writes limited to " + f.root.path().string()));
}

TEST_CASE("the sandbox lets the command write inside root and to /dev/null", "[runner][sandbox]") {
  if (!landlock_or_warn()) return;
  SandboxFixture f;
  RunResult r =
      run_ok(f.spec("mkdir -p a/b && echo x > a/b/f && mv a/b/f a/g && ln -s g a/l && rm a/g a/l && "
                    "echo kept > k && echo gone > /dev/null && cat /etc/passwd >/dev/null && echo ok"));
  CHECK(r.exit_code == 0);
  CHECK(r.out == "ok\n");
  CHECK(r.err.empty());
  CHECK(f.root.read("k") == "kept\n");
}

TEST_CASE("the sandbox stops deleting, renaming and changing files outside", "[runner][sandbox]") {
  if (!landlock_or_warn()) return;
  SandboxFixture f;
  f.outside.write("keep.txt", "original\n");
  std::string o = "'" + f.outside.path().string() + "'";
  std::string cmd;
  SECTION("rm") { cmd = "rm -f " + o + "/keep.txt"; }
  SECTION("mv into root") { cmd = "mv " + o + "/keep.txt ./stolen.txt"; }
  SECTION("append") { cmd = "echo more >> " + o + "/keep.txt"; }
  SECTION("truncate") { cmd = "truncate -s 0 " + o + "/keep.txt"; }
  SECTION("symlink") { cmd = "ln -s /etc/passwd " + o + "/link"; }
  SECTION("mkdir") { cmd = "mkdir " + o + "/dir"; }
  RunResult r = run_ok(f.spec(cmd));
  CHECK(r.exit_code != 0);
  CHECK(f.outside.read("keep.txt") == "original\n");
  CHECK_FALSE(f.outside.exists("link"));
  CHECK_FALSE(f.outside.exists("dir"));
  CHECK_FALSE(f.root.exists("stolen.txt"));
}

TEST_CASE("the sandbox can allow a single file and skips missing paths", "[runner][sandbox]") {
  if (!landlock_or_warn()) return;
  SandboxFixture f;
  f.outside.write("log.txt", "");
  RunSpec s = f.spec("echo line >> '" + (f.outside / "log.txt").string() + "' && echo x > '" +
                     (f.outside / "other.txt").string() + "'");
  s.writable.push_back(f.outside / "log.txt");
  s.writable.push_back(f.outside / "not-there");
  RunResult r = run_ok(s);
  CHECK(r.exit_code != 0);
  CHECK(f.outside.read("log.txt") == "line\n");
  CHECK_FALSE(f.outside.exists("other.txt"));
  CHECK_THAT(r.sandbox_note, Contains((f.outside / "log.txt").string()));
  CHECK_THAT(r.sandbox_note, Contains("not found, so not writable: " + (f.outside / "not-there").string()));
}

TEST_CASE("the sandbox keeps setuid programs from gaining privileges", "[runner][sandbox]") {
  if (!landlock_or_warn()) return;
  SandboxFixture f;
  RunResult r = run_ok(f.spec("grep NoNewPrivs /proc/self/status"));
  CHECK_THAT(r.out, Contains("1"));
}

TEST_CASE("run with the sandbox off writes anywhere and says so", "[runner][sandbox]") {
  SandboxFixture f;
  RunSpec s = f.spec("echo x > '" + (f.outside / "new.txt").string() + "'");
  s.sandbox = SandboxMode::none;
  RunResult r = run_ok(s);
  CHECK(r.exit_code == 0);
  CHECK(f.outside.exists("new.txt"));
  CHECK_THAT(r.sandbox_note, Contains("[run] sandbox = \"none\""));
}
