// Attacks through approved or policy-allowed command runs: the command's
// content is invisible at approval, so the kernel has to keep it away from
// kaicoder's guards, git's own settings and the secrets (SPEC §8 `[run]
// sandbox`).

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <sys/stat.h>

#include "lib/run/sandbox.hpp"
#include "tests/support/checks.hpp"
#include "tests/support/throwaway_user.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr const char* k_env_file = "API_KEY=sk-live-5f4e3d2c1b0a\n";
constexpr const char* k_env_base64 = "QVBJX0tFWT1zay1saXZlLTVmNGUzZDJjMWIwYQo=";

// The probe an agent gets approved as `python3 probe.py`.
constexpr const char* k_probe = R"(import base64, subprocess
def attempt(label, f):
    try:
        f()
        print(label, "DONE", flush=True)
    except Exception as e:
        print(label, "refused:", type(e).__name__, flush=True)
def hooks_path():
    subprocess.run(["git", "config", "core.hooksPath", "/tmp/evil-hooks"], check=True)
attempt("toml", lambda: open("kaicoder.toml", "w").write('[policy.default]\nedit = "allow"\nrun = "allow"\n'))
attempt("state", lambda: open(".kaicoder/forged-approval", "w").write("approved\n"))
attempt("hook", lambda: open(".git/hooks/post-checkout", "w").write("#!/bin/sh\ntouch PLANTED\n"))
attempt("hookspath", hooks_path)
attempt("env", lambda: print("LEAK", base64.b64encode(open(".env", "rb").read()).decode(), flush=True))
)";

// Tries to type into every terminal it can find (TIOCSTI) and into a tmux
// pane, now and again from a double-forked child after the run has ended.
constexpr const char* k_inject = R"(import fcntl, glob, os, subprocess, sys, termios, time
sock = sys.argv[1]
def inject():
    hits = []
    for p in ["/dev/tty", "/dev/console"] + glob.glob("/dev/pts/*") + glob.glob("/proc/*/fd/*"):
        try:
            if not os.path.realpath(p).startswith("/dev/"):
                continue
            fd = os.open(p, os.O_RDWR | os.O_NOCTTY)
        except OSError:
            continue
        try:
            for ch in b"y\n":
                fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch]))
            hits.append(p)
        except OSError as e:
            print("ioctl refused on", p, e.errno, flush=True)
        finally:
            os.close(fd)
    for cmd in (["tmux", "-S", sock, "send-keys", "-t", "victim", "INJECTED", "Enter"],
                ["tmux", "send-keys", "-t", "victim", "INJECTED", "Enter"]):
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=5)
            print("tmux exit", r.returncode, flush=True)
        except Exception as e:
            print("tmux failed", type(e).__name__, flush=True)
    return hits
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(1.5)
        inject()
        open(os.path.join(os.getcwd(), "LATE"), "w").write("outlived the run\n")
    os._exit(0)
print("typed into", inject(), flush=True)
)";

// Reads what it can of every process it can see and of its ancestors:
// environment, command line, memory (every readable mapping, searched for
// the owner's key), and says what it got.
constexpr const char* k_peek = R"(import os, sys
key = bytes.fromhex(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] else b''
me = os.getpid()
def ancestors():
    pid, out = me, []
    while pid > 1:
        try:
            pid = int([l for l in open('/proc/%d/status' % pid) if l.startswith('PPid:')][0].split()[1])
        except (OSError, IndexError):
            break
        out.append(pid)
    return out
pids = sorted(set(int(p) for p in os.listdir('/proc') if p.isdigit()) | set(ancestors()))
for pid in pids:
    if pid == me:
        continue
    try:
        comm = open('/proc/%d/comm' % pid).read().strip()
    except OSError:
        comm = '?'
    try:
        env = open('/proc/%d/environ' % pid, 'rb').read()
        print('environ', pid, comm, 'READ', len(env))
        print(env.decode('latin-1').replace('\0', '\n'))
    except OSError as e:
        print('environ', pid, comm, 'refused', e.errno)
    try:
        got = 0
        with open('/proc/%d/mem' % pid, 'rb') as mem:
            for line in open('/proc/%d/maps' % pid).read().splitlines():
                lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
                if 'r' not in line.split()[1]:
                    continue
                try:
                    mem.seek(lo)
                    data = mem.read(min(hi - lo, 64 << 20))
                except OSError:
                    continue
                got += len(data)
                if key and key in data:
                    print('KEY FOUND in', pid, comm)
        print('mem', pid, comm, 'READ' if got else 'empty', got)
    except OSError as e:
        print('mem', pid, comm, 'refused', e.errno)
)";

// Every way to a set-user-ID file, a file capability or a capability of
// the system's, and openat2 and io_uring (which a seccomp filter cannot
// look into).
constexpr const char* k_setid = R"(import ctypes, errno, os, socket, stat
libc = ctypes.CDLL(None, use_errno=True)
def attempt(label, f):
    try:
        f()
        print(label, "DONE", flush=True)
    except OSError as e:
        print(label, "refused", errno.errorcode.get(e.errno, e.errno), flush=True)
open("helper", "w").write("#!/bin/sh\necho root\n")
os.chmod("helper", 0o755)
def fchmod():
    fd = os.open("helper", os.O_RDONLY)
    try:
        os.fchmod(fd, 0o6755)
    finally:
        os.close(fd)
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
def openat2():
    how = How(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
    fd = libc.syscall(437, -100, b"via-openat2", ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "openat2")
    os.close(fd)
attempt("chmod-setuid", lambda: os.chmod("helper", 0o4755))
attempt("chmod-setgid", lambda: os.chmod("helper", 0o2755))
attempt("fchmod-setid", fchmod)
attempt("create-setuid", lambda: os.close(os.open("made", os.O_CREAT | os.O_WRONLY, 0o4755)))
attempt("mknod-setuid", lambda: os.mknod("node", 0o4755 | stat.S_IFREG))
attempt("openat2", openat2)
def io_uring():
    params = ctypes.create_string_buffer(120)
    fd = libc.syscall(425, 8, params)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
    os.close(fd)
attempt("io_uring", io_uring)
attempt("file-capability", lambda: os.setxattr("helper", "security.capability",
                                               bytes([0, 0, 0, 2, 0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])))
attempt("sethostname", lambda: socket.sethostname("pwned-by-run"))
)";

// Approves run proposal `id` the way its tier asks: y, or CONFIRM.
Run approve_run(const TempRepo& repo, int id) {
  Run a = repo.kai_tty({"approve", std::to_string(id)}, "y");
  if (show_json(repo, id).at("status") == "pending") a = repo.kai_tty({"approve", std::to_string(id)}, "CONFIRM");
  return a;
}

// Sets [run] sandbox = "landlock" and trusts the changed config, as the
// owner does at a terminal; returns the new config's text.
std::string use_landlock(const TempRepo& repo) {
  std::string toml = repo.read("kaicoder.toml");
  toml.replace(toml.find("sandbox = \"full\""), 16, "sandbox = \"landlock\"");
  repo.write("kaicoder.toml", toml);
  repo.trust();
  return toml;
}

bool full_sandbox_or_warn() {
  kai::NamespaceStatus ns = kai::namespace_status();
  if (!ns.ok) WARN("SKIPPED: the full sandbox is not available here: " << ns.detail);
  if (kai::landlock_status().abi == 0) WARN("SKIPPED: landlock is not available here");
  return ns.ok && kai::landlock_status().abi > 0;
}

std::string read_file_or_empty(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Proposes `python3 script` as a run and approves it; the approver was
// warned that it touched guarded paths. Returns its changelog summary, and
// what the approval printed in `shown`.
std::string run_touching_guards(const TempRepo& repo, const std::string& script, std::string& shown) {
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "check the build", "--", "python3", script}), 0);
  Run a = approve_run(repo, 1);
  shown = a.all();
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.out, Contains("WARNING: the command touched paths kaicoder guards"));
  return log_entries(repo).at(0).at("summary");
}

std::string git_config_value(const TempRepo& repo, const std::string& key) {
  std::string cmd = "git -C '" + repo.path().string() + "' config --get " + key + " 2>/dev/null";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

}  // namespace

TEST_CASE("an approved python3 probe.py cannot rewrite kaicoder.toml, forge state, plant a git hook or leak .env",
          "[attack][runs]") {
  if (!full_sandbox_or_warn()) return;
  TempRepo repo{{"probe.py", k_probe}, {"a.txt", "a\n"}};
  repo.init();
  repo.write(".env", k_env_file);
  const std::string toml = repo.read("kaicoder.toml");
  const std::string git_config = repo.read(".git/config");

  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "check the build", "--", "python3", "probe.py"}), 0);
  Run a = approve_run(repo, 1);
  KAI_REQUIRE_EXIT(a, 0);
  json shown = show_json(repo, 1);
  REQUIRE(shown.at("status") == "applied");
  const std::string seen = a.all() + repo.kai({"--json", "show", "1"}).out;
  INFO(seen);
  // The probe ran: each attempt printed its line.
  for (const char* label : {"toml ", "state ", "hook ", "hookspath ", "env "}) CHECK_THAT(seen, Contains(label));
  CHECK(seen.find("toml DONE") == std::string::npos);
  CHECK(seen.find("state DONE") == std::string::npos);
  CHECK(seen.find("hook DONE") == std::string::npos);
  CHECK(seen.find("hookspath DONE") == std::string::npos);
  // Nothing changed.
  CHECK(repo.read("kaicoder.toml") == toml);
  CHECK(repo.read(".git/config") == git_config);
  CHECK(git_config_value(repo, "core.hooksPath").empty());
  CHECK_FALSE(repo.exists(".kaicoder/forged-approval"));
  CHECK_FALSE(repo.exists(".git/hooks/post-checkout"));
  // The secret did not leave, not even encoded.
  CHECK(seen.find("sk-live-5f4e3d2c1b0a") == std::string::npos);
  CHECK(seen.find(k_env_base64) == std::string::npos);
  CHECK(repo.read(".env") == k_env_file);
}

TEST_CASE("a policy-allowed git status with a hostile GIT_CONFIG_PARAMETERS and TMPDIR runs no fsmonitor command",
          "[attack][runs]") {
  if (!full_sandbox_or_warn()) return;
  TempRepo repo{{"a.txt", "a\n"}};
  repo.init();
  repo.write("kaicoder.toml",
             repo.read("kaicoder.toml") +
                 "\n[[policy.rule]]\naction = \"run\"\ncommand = \"git status\"\ndecision = \"allow\"\n");
  repo.trust();  // the owner trusts the changed config at a terminal
  const EnvOverrides hostile = {{"GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch SENTINEL; false'"}, {"TMPDIR", "/"}};
  // The same environment does run the command when git gets it directly.
  std::string direct =
      "cd '" + repo.path().string() +
      "' && GIT_CONFIG_PARAMETERS=\"'core.fsmonitor'='touch SENTINEL; false'\" git status >/dev/null 2>&1";
  REQUIRE(std::system(direct.c_str()) == 0);
  REQUIRE(repo.exists("SENTINEL"));
  repo.remove("SENTINEL");

  Run r = repo.kai({"run", "--why", "status", "--", "git", "status"}, "", hostile);
  KAI_REQUIRE_EXIT(r, 0);
  json shown = show_json(repo, 1);
  CHECK(shown.at("status") == "applied");
  CHECK(shown.at("result") == "exit 0");
  CHECK_FALSE(repo.exists("SENTINEL"));
  // TMPDIR=/ did not become writable: the run's note lists what it could write.
  json e = log_entries(repo).at(0);
  std::string summary = e.at("summary");
  CHECK_THAT(summary, Contains("writes limited to " + repo.path().string()));
  CHECK(summary.find(", /;") == std::string::npos);
  CHECK(summary.find("limited to /;") == std::string::npos);
  CHECK(summary.find("limited to /,") == std::string::npos);
  CHECK(summary.find(", /,") == std::string::npos);
}

TEST_CASE("an approved run cannot type into a waiting approver's terminal or a tmux pane, now or after it ends",
          "[attack][runs]") {
  TempRepo repo{{"a.txt", "old\n"}, {"inject.py", k_inject}};
  repo.init();
  SECTION("full") {
    if (!full_sandbox_or_warn()) return;
  }
  SECTION("landlock") {
    if (kai::landlock_status().abi < 5) {
      WARN("SKIPPED: the landlock level keeps terminals out from Landlock ABI 5 on");
      return;
    }
    use_landlock(repo);
  }
  // A tmux pane of the person's, on a server socket outside root.
  const fs::path sock = repo.home().parent_path() / "tmux.sock";
  const fs::path pane_out = repo.home().parent_path() / "pane.out";
  const std::string tmux = "tmux -S '" + sock.string() + "' ";
  bool have_tmux =
      std::system((tmux + "new-session -d -s victim 'cat > " + pane_out.string() + "' 2>/dev/null").c_str()) == 0;
  if (have_tmux) {
    // The pane takes keys sent to it the ordinary way.
    REQUIRE(std::system((tmux + "send-keys -t victim HELLO Enter").c_str()) == 0);
    for (int i = 0; i < 50 && read_file_or_empty(pane_out).find("HELLO") == std::string::npos; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    REQUIRE_THAT(read_file_or_empty(pane_out), Contains("HELLO"));
  } else {
    WARN("tmux is not installed: the tmux part is not checked");
  }
  // Proposal 1: an edit the person has not decided yet, waiting at a prompt.
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "t"}),
                   0);
  TtyProcess waiting = repo.spawn_kai_tty({"approve", "1"});
  REQUIRE(waiting.wait_for_prompt());
  // Proposal 2: the injector, approved on another terminal.
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "lint", "--", "python3", "inject.py", sock.string()}), 0);
  Run a = approve_run(repo, 2);
  KAI_REQUIRE_EXIT(a, 0);
  REQUIRE(show_json(repo, 2).at("status") == "applied");
  INFO(a.all());
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // the late child would have acted by now
  CHECK_THAT(a.all(), Contains("typed into []"));
  CHECK_FALSE(repo.exists("LATE"));
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK(repo.read("a.txt") == "old\n");
  waiting.answer("n");
  Run w = waiting.finish();
  CHECK(repo.read("a.txt") == "old\n");
  if (have_tmux) {
    CHECK(read_file_or_empty(pane_out).find("INJECTED") == std::string::npos);
    (void)std::system((tmux + "kill-server 2>/dev/null").c_str());
  }
}

TEST_CASE("a run ends when the kaicoder approve that runs it is killed", "[attack][runs]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  SECTION("full") {
    if (!full_sandbox_or_warn()) return;
  }
  SECTION("landlock") {
    if (kai::landlock_status().abi == 0) {
      WARN("SKIPPED: landlock is not available here");
      return;
    }
    use_landlock(repo);
  }
  // A command that goes on writing, from a child that left its session too.
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "watch", "--shell",
                             "setsid sh -c 'while :; do echo x >> tick2.txt; sleep 0.1; done' & "
                             "while :; do echo x >> tick.txt; sleep 0.1; done"}),
                   0);
  const std::string tier = show_json(repo, 1).at("tier");
  // Where the run writes: the tree, or the upper folder of its overlay
  // (the full level, kaicoder-run(1)), whose effects land when it ends.
  auto written = [&repo](const std::string& name) {
    return std::max(read_file_or_empty(repo.abs(name)).size(),
                    read_file_or_empty(repo.abs(".kaicoder/runs/1/upper/" + name)).size());
  };
  TtyProcess approving = repo.spawn_kai_tty({"approve", "1"});
  REQUIRE(approving.wait_for_prompt());
  approving.answer(tier == "confirm" ? "CONFIRM" : "y");
  for (int i = 0; i < 200 && (written("tick.txt") < 4 || written("tick2.txt") < 4); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(written("tick.txt") >= 4);
  REQUIRE(::kill(approving.pid(), SIGKILL) == 0);
  (void)approving.finish();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const size_t one = written("tick.txt");
  const size_t two = written("tick2.txt");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(written("tick.txt") == one);
  CHECK(written("tick2.txt") == two);
}

TEST_CASE("an approved run gets EPERM from the kernel for every set-id bit, file capability and system capability",
          "[attack][runs]") {
  TempRepo repo{{"a.txt", "old\n"}, {"setid.py", k_setid}};
  repo.init();
  SECTION("full") {
    if (!full_sandbox_or_warn()) return;
  }
  SECTION("landlock") {
    if (kai::landlock_status().abi == 0) {
      WARN("SKIPPED: landlock is not available here");
      return;
    }
    use_landlock(repo);
  }
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "build", "--", "python3", "setid.py"}), 0);
  Run a = approve_run(repo, 1);
  KAI_REQUIRE_EXIT(a, 0);
  const std::string seen = a.all();
  INFO(seen);
  for (const char* label : {"chmod-setuid", "chmod-setgid", "fchmod-setid", "create-setuid", "mknod-setuid",
                            "file-capability", "sethostname"})
    CHECK_THAT(seen, Contains(std::string(label) + " refused EPERM"));
  // openat2 is answered as on a kernel without it, so that libc falls back
  // to openat; io_uring, whose operations no filter sees, is not there either.
  CHECK_THAT(seen, Contains("openat2 refused ENOSYS") && Contains("io_uring refused ENOSYS"));
  CHECK(seen.find(" DONE") == std::string::npos);
  for (const auto& [rel, mode] : repo.mode_snapshot()) {
    INFO(rel);
    CHECK((mode & 06000u) == 0u);
  }
  // Nothing was left to strip: the kernel refused it all.
  CHECK_THAT(log_entries(repo).at(0).at("summary").get<std::string>(), !Contains("SET-ID"));
}

TEST_CASE("an approved run reads neither the approver's environment nor kaicoder's memory, the owner's key among it",
          "[attack][runs]") {
  TempRepo repo{{"a.txt", "old\n"}, {"peek.py", k_peek}};
  repo.init();
  std::string level;
  SECTION("full") {
    if (!full_sandbox_or_warn()) return;
    level = "full";
  }
  SECTION("landlock") {
    if (kai::landlock_status().abi == 0) {
      WARN("SKIPPED: landlock is not available here");
      return;
    }
    use_landlock(repo);
    level = "landlock";
  }
  // The owner's sealing key, as bytes a memory dump would hold.
  const std::string key_text = read_file_or_empty(repo.owner_dir() / "key");
  std::string key_hex;
  for (unsigned char c : key_text) {
    key_hex += "0123456789abcdef"[c >> 4];
    key_hex += "0123456789abcdef"[c & 15];
  }
  const std::string canary = "approver-canary-" + std::to_string(::getpid());
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "lint", "--", "python3", "peek.py", key_hex}), 0);
  Run a = repo.kai_tty({"approve", "1"}, "y", {{"KAICODER_APPROVER_CANARY", canary}});
  if (show_json(repo, 1).at("status") == "pending")
    a = repo.kai_tty({"approve", "1"}, "CONFIRM", {{"KAICODER_APPROVER_CANARY", canary}});
  KAI_REQUIRE_EXIT(a, 0);
  const std::string seen = a.all();
  INFO(seen.substr(0, 6000));
  REQUIRE_THAT(seen, Contains("environ "));
  CHECK(seen.find(canary) == std::string::npos);
  CHECK(seen.find("KEY FOUND") == std::string::npos);
  // kaicoder's own processes: init at the full level (the one other process
  // the run sees), kaicoder approve and the sandbox's reaper at the landlock level.
  std::istringstream lines(seen);
  int kaicoders = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("environ ") && !line.starts_with("mem ")) continue;
    std::istringstream w(line);
    std::string what, pid, comm, verdict;
    w >> what >> pid >> comm >> verdict;
    if (level == "full" ? pid == "1" : comm == "kaicoder") {
      ++kaicoders;
      INFO(line);
      CHECK(verdict == "refused");
    }
  }
  CHECK(kaicoders >= 2);
}

TEST_CASE(
    "at the landlock level a run that rewrites kaicoder.toml and plants a git hook is undone and its entry says so",
    "[attack][runs]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  TempRepo repo{{"a.txt", "a\n"}, {"probe.py", k_probe}};
  repo.init();
  const std::string toml = use_landlock(repo);
  const std::string git_config = repo.read(".git/config");
  std::string shown;
  const std::string summary = run_touching_guards(repo, "probe.py", shown);
  INFO(shown);
  CHECK(repo.read("kaicoder.toml") == toml);
  CHECK(repo.read(".git/config") == git_config);
  CHECK_FALSE(repo.exists(".git/hooks/post-checkout"));
  CHECK_FALSE(repo.exists(".kaicoder/forged-approval"));
  CHECK_THAT(summary, Contains("THE RUN TOUCHED GUARDED PATHS") && Contains("kaicoder.toml: restored") &&
                          Contains(".git/config: restored") && Contains(".git/hooks/post-checkout: removed") &&
                          Contains("created .kaicoder/forged-approval: removed"));
}

namespace {

// An approved `python3 tidy.py` that goes for the signed approvals `kaicoder
// verify` trusts: changes one, removes a signature, adds a manifest, and
// swaps the folder for one of its own.
constexpr const char* k_forge_approvals = R"(import os
def attempt(label, f):
    try:
        f()
        print(label, "DONE", flush=True)
    except Exception as e:
        print(label, "refused:", type(e).__name__, flush=True)
def swap():
    os.rename("kaicoder-approvals", "old-approvals")
    os.mkdir("kaicoder-approvals")
    open("kaicoder-approvals/all.toml", "w").write("forged\n")
attempt("change", lambda: open("kaicoder-approvals/a.toml", "w").write("forged\n"))
attempt("remove", lambda: os.remove("kaicoder-approvals/a.toml.sig"))
attempt("add", lambda: open("kaicoder-approvals/b.toml", "w").write("forged\n"))
attempt("swap", swap)
)";

constexpr const char* k_manifest = "base = \"0123\"\n";
constexpr const char* k_signature = "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n";

}  // namespace

TEST_CASE("an approved run cannot change, remove, add or swap signed approvals, nor can a proposal", "[attack][runs]") {
  if (!full_sandbox_or_warn()) return;
  TempRepo repo{{"tidy.py", k_forge_approvals},
                {"kaicoder-approvals/a.toml", k_manifest},
                {"kaicoder-approvals/a.toml.sig", k_signature}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"run", "--why", "tidy up", "--", "python3", "tidy.py"}), 0);
  Run a = approve_run(repo, 1);
  KAI_REQUIRE_EXIT(a, 0);
  REQUIRE(show_json(repo, 1).at("status") == "applied");
  INFO(a.all());
  for (const char* label : {"change ", "remove ", "add ", "swap "}) CHECK_THAT(a.all(), Contains(label));
  CHECK(a.all().find("DONE") == std::string::npos);
  CHECK(repo.read("kaicoder-approvals/a.toml") == k_manifest);
  CHECK(repo.read("kaicoder-approvals/a.toml.sig") == k_signature);
  CHECK_FALSE(repo.exists("kaicoder-approvals/b.toml"));
  CHECK_FALSE(repo.exists("old-approvals"));
  // A proposal is refused before anything is staged.
  Run p = repo.kai({"propose", "--path", "kaicoder-approvals/b.toml", "--content-file", "-", "--why", "w"}, "forged\n");
  KAI_CHECK_EXIT(p, 3);
  CHECK_THAT(p.all(), Contains("kaicoder-approvals/") && Contains("never-write"));
  Run e = repo.kai(
      {"propose", "--path", "kaicoder-approvals/a.toml", "--target", "0123", "--replacement", "4567", "--why", "w"});
  KAI_CHECK_EXIT(e, 3);
  CHECK_FALSE(repo.exists("kaicoder-approvals/b.toml"));
  CHECK(repo.read("kaicoder-approvals/a.toml") == k_manifest);
  CHECK_FALSE(repo.kai({"show", "2"}).ok());  // nothing was staged
}

TEST_CASE("at the landlock level a run that forges signed approvals is undone and its entry says so",
          "[attack][runs]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  TempRepo repo{{"tidy.py", k_forge_approvals},
                {"kaicoder-approvals/a.toml", k_manifest},
                {"kaicoder-approvals/a.toml.sig", k_signature}};
  repo.init();
  use_landlock(repo);
  std::string shown;
  const std::string summary = run_touching_guards(repo, "tidy.py", shown);
  INFO(shown);
  CHECK(repo.read("kaicoder-approvals/a.toml") == k_manifest);
  CHECK(repo.read("kaicoder-approvals/a.toml.sig") == k_signature);
  CHECK_FALSE(repo.exists("kaicoder-approvals/b.toml"));
  CHECK_FALSE(repo.exists("kaicoder-approvals/all.toml"));
  CHECK_THAT(summary, Contains("THE RUN TOUCHED GUARDED PATHS") && Contains("kaicoder-approvals/a.toml: restored") &&
                          Contains("kaicoder-approvals/a.toml.sig: restored"));
}

TEST_CASE("as an unprivileged user the full sandbox refuses the probe just the same", "[attack][runs][users]") {
  if (!full_sandbox_or_warn() || !UnprivilegedUser::available()) return;
  TempRepo repo{{"probe.py", k_probe}, {"a.txt", "a\n"}};
  repo.init();
  repo.write(".env", k_env_file);
  repo.write("kaicoder.toml",
             repo.read("kaicoder.toml") +
                 "\n[[policy.rule]]\naction = \"run\"\ncommand = \"python3 probe.py\"\ndecision = \"allow\"\n");
  repo.trust();  // the owner trusts the changed config at a terminal
  const std::string toml = repo.read("kaicoder.toml");
  UnprivilegedUser user(repo);
  const fs::path out = repo.path().parent_path() / "run.out";
  std::string cmd = "cd '" + repo.path().string() + "' && " +
                    user.shell({kaicoder_bin(), "run", "--why", "t", "--", "python3", "probe.py"}) + " </dev/null >'" +
                    out.string() + "' 2>&1";
  int rc = std::system(cmd.c_str());
  const std::string seen = read_file_or_empty(out);
  INFO(seen);
  REQUIRE(rc == 0);
  CHECK_THAT(seen, Contains("full sandbox"));
  for (const char* label : {"toml ", "state ", "hook ", "hookspath ", "env "}) CHECK_THAT(seen, Contains(label));
  for (const char* done : {"toml DONE", "state DONE", "hook DONE", "hookspath DONE"})
    CHECK(seen.find(done) == std::string::npos);
  CHECK(repo.read("kaicoder.toml") == toml);
  CHECK_FALSE(repo.exists(".kaicoder/forged-approval"));
  CHECK_FALSE(repo.exists(".git/hooks/post-checkout"));
  CHECK(git_config_value(repo, "core.hooksPath").empty());
  CHECK(seen.find("sk-live-5f4e3d2c1b0a") == std::string::npos);
  CHECK(seen.find(k_env_base64) == std::string::npos);
}

namespace {

// Changes a run makes deep in the tree, each a way round a watch of the
// tree's folders: a write through a second name made in a new folder (the
// one write no folder's watch sees, so the link must be refused), a write,
// a mode change, a rename over a file, a write through a shared mapping
// whose descriptor is closed first, a truncation.
constexpr const char* k_sneak = R"SH(mkdir -p n
if ln src/a/deep/one.c n/one 2>/dev/null; then echo sneaked >> n/one; echo LINKED; else echo LINK-REFUSED; fi
rm -rf n
printf 'two changed\n' > src/b/two.c
chmod +x src/b/three.c
printf 'keep2\n' > src/tmp && mv src/tmp src/keep.c
python3 -c "import mmap, os
fd = os.open('src/a/deep/map.c', os.O_RDWR)
m = mmap.mmap(fd, 0)
os.close(fd)
m[0:3] = b'MAP'
m.close()"
truncate -s 2 src/a/cut.c
echo SNEAK-DONE
)SH";

}  // namespace

TEST_CASE("as an unprivileged user every change a run makes deep in the tree is named and undone, and no link is made",
          "[attack][runs][users]") {
  if (!full_sandbox_or_warn() || !UnprivilegedUser::available()) return;
  const std::map<std::string, std::string> files = {{"src/a/deep/one.c", "one\n"}, {"src/a/deep/map.c", "map\n"},
                                                    {"src/a/cut.c", "cut me\n"},   {"src/b/two.c", "two\n"},
                                                    {"src/b/three.c", "three\n"},  {"src/keep.c", "keep\n"},
                                                    {"src/c/quiet.c", "quiet\n"},  {"sneak.sh", k_sneak}};
  TempRepo repo;
  for (const auto& [rel, text] : files) repo.write(rel, text);
  repo.init();
  repo.write("kaicoder.toml",
             repo.read("kaicoder.toml") +
                 "\n[[policy.rule]]\naction = \"run\"\ncommand = \"sh sneak.sh\"\ndecision = \"allow\"\n");
  repo.trust();
  UnprivilegedUser user(repo);
  const fs::path out = repo.path().parent_path() / "run.out", log = repo.path().parent_path() / "log.json";
  auto as_user = [&](const std::vector<std::string>& argv, const fs::path& to) {
    std::string cmd =
        "cd '" + repo.path().string() + "' && " + user.shell(argv) + " </dev/null >'" + to.string() + "' 2>&1";
    return std::system(cmd.c_str());
  };
  // Twice: the first run's snapshot fills the stat cache, so that the second
  // one's watch is what stands between a change and its entry.
  REQUIRE(as_user({kaicoder_bin(), "run", "--why", "warm", "--", "true"}, out) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // out of the stat cache's racy window
  int rc = as_user({kaicoder_bin(), "run", "--why", "t", "--", "sh", "sneak.sh"}, out);
  const std::string seen = read_file_or_empty(out);
  INFO(seen);
  REQUIRE(rc == 0);
  CHECK_THAT(seen, Contains("LINK-REFUSED") && Contains("SNEAK-DONE"));
  CHECK(repo.read("src/a/deep/one.c") == "one\n");
  REQUIRE(as_user({kaicoder_bin(), "--json", "log", "-n", "1"}, log) == 0);
  const json entry = json::parse(read_file_or_empty(log)).at("entries").at(0);
  INFO(entry.dump(2));
  REQUIRE(entry.at("kind") == "run");
  std::set<std::string> named;
  for (const auto& f : entry.at("files")) named.insert(f.get<std::string>());
  for (const char* rel : {"src/b/two.c", "src/b/three.c", "src/keep.c", "src/a/deep/map.c", "src/a/cut.c"})
    CHECK(named.count((repo.path() / rel).string()) == 1);
  CHECK(named.count((repo.path() / "src/c/quiet.c").string()) == 0);
  CHECK(named.count((repo.path() / "src/a/deep/one.c").string()) == 0);
  TtyProcess rb = repo.spawn_tty(user.as({kaicoder_bin(), "rollback", entry.at("rollback_id").get<std::string>()}));
  REQUIRE(rb.wait_for_prompt());
  rb.answer("y");
  Run r = rb.finish();
  INFO(r.all());
  KAI_REQUIRE_EXIT(r, 0);
  for (const auto& [rel, text] : files) CHECK(repo.read(rel) == text);
  struct stat st {};
  REQUIRE(::stat(repo.abs("src/b/three.c").c_str(), &st) == 0);
  CHECK((st.st_mode & 0111) == 0);
}

namespace {

size_t count_of(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("as an unprivileged user an approved run cannot type into the approver's terminal or a tmux pane",
          "[attack][runs][users]") {
  if (!full_sandbox_or_warn() || !UnprivilegedUser::available()) return;
  TempRepo repo{{"a.txt", "old\n"}, {"inject.py", k_inject}};
  repo.init();
  const fs::path top = repo.path().parent_path();
  const fs::path sock = top / "tmux.sock", pane_out = top / "pane.out", elsewhere = top / "elsewhere";
  fs::create_directories(elsewhere);
  UnprivilegedUser user(repo);
  REQUIRE(std::system(("chown " + user.name + " '" + elsewhere.string() + "'").c_str()) == 0);
  // The user's tmux pane, on a server socket outside root.
  const bool have_tmux = std::system("command -v tmux >/dev/null 2>&1") == 0 &&
                         std::system((user.shell({"tmux", "-S", sock.string(), "new-session", "-d", "-s", "victim",
                                                  "cat > '" + pane_out.string() + "'"}) +
                                      " 2>/dev/null")
                                         .c_str()) == 0;
  struct KillServer {
    std::string cmd;
    ~KillServer() {
      if (!cmd.empty()) (void)std::system(cmd.c_str());
    }
  } kill_server{have_tmux ? user.shell({"tmux", "-S", sock.string(), "kill-server"}) + " 2>/dev/null" : ""};
  if (!have_tmux) WARN("SKIPPED in part: tmux is not installed or does not start, so the tmux part is not checked");

  // Without kaicoder, the same script as the same user on a terminal of its
  // own types into it (when the kernel still has the legacy TIOCSTI) and
  // into the pane: what the sandbox has to stop.
  TtyProcess control = repo.spawn_tty(user.as({"sh", "-c",
                                               "cd '" + elsewhere.string() + "' && exec python3 '" +
                                                   repo.abs("inject.py").string() + "' '" + sock.string() + "'"}));
  Run c = control.finish();
  INFO("without kaicoder: " << c.all());
  const bool legacy_tiocsti = c.all().find("typed into ['/dev/tty'") != std::string::npos;
  if (!legacy_tiocsti)
    WARN(
        "SKIPPED in part: this kernel refuses the legacy TIOCSTI ioctl to unprivileged processes "
        "(dev.tty.legacy_tiocsti "
        "= 0), so typing into a terminal is not checked");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // the control's late child has acted by now
  if (have_tmux) REQUIRE(count_of(read_file_or_empty(pane_out), "INJECTED") >= 1);
  const size_t injected_before = count_of(read_file_or_empty(pane_out), "INJECTED");
  if (!legacy_tiocsti && !have_tmux) return;

  // The injector proposed by the user, then approved by the user at a terminal.
  std::string propose =
      "cd '" + repo.path().string() + "' && " +
      user.shell({kaicoder_bin(), "run", "--why", "lint", "--", "python3", "inject.py", sock.string()}) +
      " </dev/null >/dev/null 2>&1";
  REQUIRE(std::system(propose.c_str()) == 0);
  Run a;
  for (const char* answer : {"y", "CONFIRM"}) {  // as its tier asks
    TtyProcess approver = repo.spawn_tty(user.as({kaicoder_bin(), "approve", "1"}));
    REQUIRE(approver.wait_for_prompt());
    approver.answer(answer);
    a = approver.finish();
    if (a.all().find("typed into") != std::string::npos) break;
  }
  INFO("approved: " << a.all());
  KAI_REQUIRE_EXIT(a, 0);
  CHECK_THAT(a.all(), Contains("full sandbox"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // the late child would have acted by now
  CHECK_THAT(a.all(), Contains("typed into []"));
  CHECK_FALSE(repo.exists("LATE"));
  if (have_tmux) CHECK(count_of(read_file_or_empty(pane_out), "INJECTED") == injected_before);
  CHECK(repo.read("a.txt") == "old\n");
}

namespace {

// A TCP listener on 127.0.0.1 that the test holds open; the kernel completes
// connections into its backlog without an accept.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener() { ::close(fd); }
};

constexpr const char* k_connect = R"(import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=3).close()
    print("CONNECTED", flush=True)
except OSError as e:
    print("REFUSED", type(e).__name__, flush=True)
)";

}  // namespace

TEST_CASE("run --network is confirm tier, shown to the approver, and only its run reaches a TCP listener",
          "[attack][runs][network]") {
  Listener listener;
  const std::string port = std::to_string(listener.port);
  TempRepo repo{{"net.py", k_connect}};
  repo.init();

  // The twin without the request: an ordinary run, no network.
  Run plain = repo.kai({"--json", "run", "--why", "check the port", "--", "python3", "net.py", port});
  KAI_REQUIRE_EXIT(plain, 0);
  json pj = json::parse(plain.out);
  INFO(plain.out);
  CHECK(pj.at("verdict") == "ask");
  CHECK(pj.at("network") == false);

  Run staged = repo.kai({"--json", "run", "--network", "--why", "check the port", "--", "python3", "net.py", port});
  KAI_REQUIRE_EXIT(staged, 0);
  json sj = json::parse(staged.out);
  INFO(staged.out);
  CHECK(sj.at("verdict") == "confirm");
  CHECK(sj.at("network") == true);
  CHECK_THAT(sj.at("reasons").dump(), Contains("asks for network access"));
  json shown = show_json(repo, 2);
  CHECK(shown.at("network") == true);
  CHECK(shown.at("tier") == "confirm");
  CHECK_THAT(shown.at("tier_reason").get<std::string>(), Contains("asks for network access"));
  CHECK_THAT(repo.kai({"show", "2"}).out, Contains("network:  on for this run"));

  // A plain y does not run it: the approver has to type CONFIRM.
  Run y = repo.kai_tty({"approve", "2"}, "y");
  CHECK_THAT(y.all(), Contains("network:  on for this run"));
  CHECK(y.all().find("CONNECTED") == std::string::npos);
  CHECK(show_json(repo, 2).at("status") == "pending");

  if (!full_sandbox_or_warn()) {
    WARN("SKIPPED: the connect part needs the full sandbox");
    return;
  }
  Run without = repo.kai_tty({"approve", "1"}, "y");
  KAI_REQUIRE_EXIT(without, 0);
  CHECK_THAT(without.all(), Contains("REFUSED"));
  CHECK(without.all().find("CONNECTED") == std::string::npos);

  Run with = repo.kai_tty({"approve", "2"}, "CONFIRM");
  KAI_REQUIRE_EXIT(with, 0);
  CHECK(show_json(repo, 2).at("status") == "applied");
  CHECK_THAT(with.all(), Contains("CONNECTED"));
}

TEST_CASE("at the landlock level a proposal made while a run executes waits for it and survives the put-back",
          "[attack][runs]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  TempRepo repo{
      {"a.txt", "old\n"},
      {"slow.py",
       "import time\nopen('.kaicoder/forged-approval', 'w').write('approved\\n')\ntime.sleep(3)\nprint('slept')\n"}};
  repo.init();
  repo.write("kaicoder.toml",
             repo.read("kaicoder.toml") +
                 "\n[[policy.rule]]\naction = \"run\"\ncommand = \"python3 slow.py\"\ndecision = \"allow\"\n");
  use_landlock(repo);
  // Policy-allowed: it runs at once, in the proposer's process.
  Process run = repo.spawn_kai({"run", "--why", "slow", "--", "python3", "slow.py"});
  for (int i = 0; i < 100 && !repo.exists(".kaicoder/forged-approval"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(repo.exists(".kaicoder/forged-approval"));  // the run is executing
  Run p = repo.kai({"propose", "--path", "a.txt", "--target", "old", "--replacement", "new", "--why", "meanwhile"});
  // The proposal waited for the store lock, which the run held to its end:
  // the run, which still had seconds to sleep when the proposal was made, is
  // over or exiting now (it lets go of the lock just before it exits).
  for (int i = 0; i < 50 && !run.done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(run.done());
  Run r = run.finish();
  INFO(r.all() << p.all());
  KAI_CHECK_EXIT(r, 0);
  KAI_CHECK_EXIT(p, 0);
  CHECK_THAT(r.all(), Contains("slept"));
  // The run's forgery is gone; the proposal made meanwhile is there and pending.
  CHECK_FALSE(repo.exists(".kaicoder/forged-approval"));
  CHECK(show_json(repo, 2).at("status") == "pending");
  std::string summary = log_entries(repo).at(0).at("summary");
  CHECK_THAT(summary, Contains("created .kaicoder/forged-approval: removed"));
  CHECK(summary.find("staging/2") == std::string::npos);
}
