// The kernel's confinement of runs (lib/run/sandbox, lib/run/sandbox_ns, lib/run/confine):
// real commands run through the runner directly, the classifier bypassed,
// with the workspace's own layout and an injected home folder.
// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <arpa/inet.h>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <netinet/in.h>
#include <optional>
#include <set>
#include <string>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/config/config.hpp"
#include "lib/run/confine.hpp"
#include "lib/run/runner.hpp"
#include "lib/run/sandbox.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/config/workspace.hpp"
#include "tests/unit/ws_fixture.hpp"

using Catch::Matchers::Contains;
using kai::RunResult;
using kai::RunSpec;
using kai::SandboxMode;
using kai::test::TempDir;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr const char* k_secret = "hunter2-dotenv-7f3a9c";
constexpr const char* k_ssh_key = "PRIVATE-KEY-0c1d2e";

bool full_or_warn() {
  kai::NamespaceStatus ns = kai::namespace_status();
  kai::LandlockStatus ll = kai::landlock_status();
  if (!ns.ok) WARN("SKIPPED: the full sandbox is not available here: " << ns.detail);
  if (ll.abi == 0) WARN("SKIPPED: landlock is not available here: " << ll.detail);
  return ns.ok && ll.abi > 0;
}

// A root with git, kaicoder's state and a secret; a home with a key and a
// git config; a folder outside both.
struct Box {
  TempDir top;
  fs::path root = top / "root", home = top / "home", outside = top / "outside";
  kai::test::StillClock clock;
  std::optional<kai::Workspace> ws;

  explicit Box(const std::string& level = "full", const std::string& extra_config = "") {
    top.mkdir("root");
    top.mkdir("home/.ssh");
    top.mkdir("home/.config/kaicoder");
    top.mkdir("outside");
    top.write("root/kaicoder.toml", "[run]\nsandbox = \"" + level + "\"\n" + extra_config);
    top.write("root/.env", std::string("API_TOKEN=") + k_secret + "\n");
    top.write("root/src/main.c", "int main(void) { return 0; }\n");
    top.write("root/.kaicoder/state.json", "{}\n");
    top.write("home/.ssh/id_ed25519", k_ssh_key);
    top.write("home/.gitconfig", "[user]\n\tname = Box Owner\n\temail = owner@example.com\n");
    top.write("home/.config/kaicoder/key", "MAC-KEY-5e6f");
    git({"init", "-q"});
    git({"add", "src/main.c"});
    git({"commit", "-q", "-m", "first"});
    open();
  }

  void open() {
    kai::Env env;
    env.cwd = root;
    env.root_override = root;
    env.user_config_dir = home / ".config/kaicoder";
    env.user = "tester";
    env.home = home;
    env.vars = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                {"LANG", "C.UTF-8"},
                {"GIT_CONFIG_PARAMETERS", "'core.fsmonitor'='touch /tmp/x'"},
                {"LD_PRELOAD", "/nonexistent/evil.so"},
                {"TMPDIR", "/"},
                {"BASH_ENV", "/nonexistent/bashenv"},
                {"SERVICE_TOKEN", "tok-3b4c5d6e7f"}};
    kai::test::trust_for_test(root, env.user_config_dir);  // as the owner did at a terminal
    auto w = kai::Workspace::open(env, clock);
    REQUIRE(w);
    ws.emplace(std::move(*w));
  }

  void git(const std::vector<std::string>& args) const {
    std::string cmd = "cd '" + root.string() + "' && HOME='" + home.string() + "' git -c user.name=t -c user.email=t@e";
    for (const auto& a : args) cmd += " '" + a + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
  }

  kai::Result<RunResult> try_run(const std::string& shell) const {
    RunSpec s;
    s.shell = shell;
    s.cwd = root;
    s.timeout = 20s;
    kai::confine(*ws, s, kai::ConfineOptions{});
    kai::GuardWatch w = kai::watch_guards(*ws, s.sandbox);
    auto r = kai::run_command(s);
    if (r) r->guards = kai::check_guards(w);
    return r;
  }

  RunResult run(const std::string& shell) const {
    auto r = try_run(shell);
    if (!r) FAIL("run_command failed: " << r.error().message << " " << r.error().hint);
    return *r;
  }

  std::string read(const std::string& rel) const { return top.read("root/" + rel); }
  bool exists(const std::string& rel) const { return top.exists("root/" + rel); }
};

// A loopback listener the test holds open while a run tries to reach it.
struct Listener {
  int fd = -1;
  int port = 0;
  explicit Listener(int type) {
    fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
    if (type == SOCK_STREAM) REQUIRE(::listen(fd, 4) == 0);
    ::fcntl(fd, F_SETFL, O_NONBLOCK);
  }
  ~Listener() { ::close(fd); }
  // Whether anything arrived: a connection, or a datagram.
  bool reached() const {
    char buf[64];
    int c = ::accept(fd, nullptr, nullptr);
    if (c >= 0) {
      ::close(c);
      return true;
    }
    return ::recv(fd, buf, sizeof buf, 0) >= 0;
  }
};

// A UNIX socket the test listens on: at a path, or abstract (leading NUL).
struct UnixListener {
  int fd = -1;
  explicit UnixListener(const std::string& name) {
    fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, name.data(), name.size());
    auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0);
    REQUIRE(::listen(fd, 4) == 0);
  }
  ~UnixListener() { ::close(fd); }
  bool reached() const {
    int c = ::accept(fd, nullptr, nullptr);
    if (c >= 0) ::close(c);
    return c >= 0;
  }
};

// Host processes whose command line contains `marker`.
int processes_with(const std::string& marker) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string cmd;
    if (FILE* f = std::fopen((e.path() / "cmdline").c_str(), "r")) {
      char buf[512];
      size_t got = std::fread(buf, 1, sizeof buf, f);
      std::fclose(f);
      cmd.assign(buf, got);
      for (char& c : cmd)
        if (c == '\0') c = ' ';
    }
    if (cmd.find(marker) != std::string::npos && std::to_string(::getpid()) != e.path().filename().string()) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("a full-sandboxed run starts and reports its confinement", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  RunResult r = b.run("echo hello; id -u; cat /proc/self/status | grep -E '^(CapEff|CapBnd|NoNewPrivs)'; echo $$");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("hello"));
  CHECK_THAT(r.out, Contains("CapEff:\t0000000000000000"));
  CHECK_THAT(r.out, Contains("CapBnd:\t0000000000000000"));
  CHECK_THAT(r.out, Contains("NoNewPrivs:\t1"));
  CHECK_THAT(r.sandbox_note, Contains("full sandbox"));
}

TEST_CASE("full: the kernel refuses writes to kaicoder's guards and to git's own settings", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  const std::string toml = b.read("kaicoder.toml"), config = b.read(".git/config");
  std::string target, cmd;
  SECTION(".kaicoder") {
    cmd = "echo forged > .kaicoder/approval.json";
    target = ".kaicoder/approval.json";
  }
  SECTION("kaicoder.toml") { cmd = "echo '[policy.default]' > kaicoder.toml"; }
  SECTION(".git/config") { cmd = "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config"; }
  SECTION(".git/hooks") {
    cmd = "echo 'touch /tmp/pwned' > .git/hooks/post-checkout";
    target = ".git/hooks/post-checkout";
  }
  SECTION("git config core.hooksPath") { cmd = "git config core.hooksPath /tmp/evil"; }
  SECTION("rename .git away") { cmd = "mv .git .git-old && mkdir .git"; }
  SECTION("remove kaicoder.toml") { cmd = "rm -f kaicoder.toml"; }
  SECTION("chmod a guarded file") { cmd = "chmod 666 .git/config && chmod 777 kaicoder.toml"; }
  RunResult r = b.run(cmd + " && echo DONE");
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("DONE") == std::string::npos);
  CHECK(b.read("kaicoder.toml") == toml);
  CHECK(b.read(".git/config") == config);
  CHECK(b.exists(".git/HEAD"));
  CHECK_FALSE(b.exists(".git-old"));
  CHECK((fs::status(b.root / "kaicoder.toml").permissions() & fs::perms::others_write) == fs::perms::none);
  CHECK((fs::status(b.root / ".git/config").permissions() & fs::perms::others_write) == fs::perms::none);
  if (!target.empty()) CHECK_FALSE(b.exists(target));
}

TEST_CASE("full: a new entry at the top of .git is removed after the run and reported", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  fs::create_directories(b.outside / "evil");
  RunResult r = b.run("echo '" + (b.outside / "evil").string() + "' > .git/commondir; echo x > .git/config.worktree");
  CHECK_FALSE(b.exists(".git/commondir"));
  CHECK_FALSE(b.exists(".git/config.worktree"));
  CHECK_THAT(Catch::Detail::stringify(r.guards), Contains(".git/commondir") && Contains("removed"));
  CHECK_THAT(Catch::Detail::stringify(r.guards), Contains(".git/config.worktree"));
}

TEST_CASE("full: secrets in root, in home and in other processes cannot be read", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  // A sibling process of the same user with a secret in its environment.
  pid_t sibling = ::fork();
  if (sibling == 0) {
    char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    char env0[] = "SIBLING_SECRET=sib-9d8c7b6a5f";
    char* envp[] = {env0, nullptr};
    ::execve("/bin/sleep", argv, envp);
    ::_exit(127);
  }
  REQUIRE(sibling > 0);
  std::string cmd;
  SECTION(".env") { cmd = "cat .env; base64 .env"; }
  SECTION("home .ssh") {
    cmd = "cat " + (b.home / ".ssh/id_ed25519").string() + "; ls -a " + (b.home / ".ssh").string();
  }
  SECTION("the owner's kaicoder folder") { cmd = "cat " + (b.home / ".config/kaicoder/key").string(); }
  SECTION("a sibling's environ") { cmd = "cat /proc/" + std::to_string(sibling) + "/environ; cat /proc/*/environ"; }
  RunResult r = b.run(cmd);
  ::kill(sibling, SIGKILL);
  ::waitpid(sibling, nullptr, 0);
  CHECK(r.out.find(k_secret) == std::string::npos);
  CHECK(r.out.find("aHVudGVyMi1kb3RlbnYtN2Yz") == std::string::npos);  // base64 of the secret's start
  CHECK(r.out.find(k_ssh_key) == std::string::npos);
  CHECK(r.out.find("MAC-KEY") == std::string::npos);
  CHECK(r.out.find("sib-9d8c7b6a5f") == std::string::npos);
  CHECK(b.read(".env").find(k_secret) != std::string::npos);  // hidden, not changed
}

TEST_CASE("full: secrets and kaicoder backups deep in root are hidden or read-only, a symlink to one is no way round",
          "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  b.top.write("root/a/b/c/id_rsa", k_ssh_key);
  b.top.write("root/a/b/prod.env", std::string("TOKEN=") + k_secret + "\n");
  b.top.write("root/a/b/c/main.c.bak-kaicoder-1", "old bytes\n");
  b.top.write("root/a/b/c/plain.txt", "plain\n");
  fs::create_symlink("b/c/id_rsa", b.root / "a/key-link");
  RunResult r = b.run(
      "cat a/b/c/id_rsa a/key-link a/b/prod.env a/b/c/plain.txt; echo new > a/b/c/main.c.bak-kaicoder-1; echo END");
  CHECK(r.out.find(k_ssh_key) == std::string::npos);
  CHECK(r.out.find(k_secret) == std::string::npos);
  CHECK_THAT(r.out, Contains("plain") && Contains("END"));
  CHECK(b.read("a/b/c/main.c.bak-kaicoder-1") == "old bytes\n");
  CHECK(b.read("a/b/c/id_rsa") == k_ssh_key);  // hidden, not changed
}

TEST_CASE("full: a secret file a build copied into build/ or dist/ is hidden like the original", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  b.top.write("root/build/.env", std::string("TOKEN=") + k_secret + "\n");
  b.top.write("root/dist/app/prod.env", std::string("TOKEN=") + k_secret + "\n");
  b.top.write("root/dist/app/index.js", "plain\n");
  RunResult r = b.run("cat build/.env dist/app/prod.env dist/app/index.js; echo END");
  CHECK(r.out.find(k_secret) == std::string::npos);
  CHECK_THAT(r.out, Contains("plain") && Contains("END"));
}

TEST_CASE("the layout judges the files the snapshot before a run met as its own walk of root would", "[sandbox]") {
  Box b;
  b.top.write("root/.gitignore", "out/\nnode_modules/\n*.log\n");
  b.top.write("root/a/b/c/id_rsa", k_ssh_key);
  b.top.write("root/a/b/prod.env", "TOKEN=1\n");
  b.top.write("root/a/b/c/main.c.bak-kaicoder-1", "old bytes\n");
  b.top.write("root/a/plain.txt", "plain\n");
  b.top.write("root/build/.env", "TOKEN=2\n");                 // not ignored here: walked by both
  b.top.write("root/out/gen/.env.local", "TOKEN=3\n");         // an ignored tree
  b.top.write("root/out/gen/app.js.bak-kaicoder-3", "old\n");  // a backup in it
  b.top.write("root/out/gen/app.js", "plain\n");
  b.top.write("root/out/target/.env", "TOKEN=4\n");        // below a folder the walk passes by
  b.top.write("root/node_modules/pkg/.env", "TOKEN=5\n");  // ignored and passed by
  b.top.write("root/debug.log", "plain\n");                // a single ignored file
  b.top.write("root/vendor/lib/.git/config", "[core]\n");  // a nested repository
  b.top.write("root/vendor/lib/.env", "TOKEN=6\n");
  b.top.write("root/vendor/lib/x.c.bak-kaicoder-4", "old\n");
  b.top.write("root/conf/.ssh/id_ed25519", k_ssh_key);  // a secret folder
  b.top.write("root/conf/.ssh/known_hosts", "plain\n");
  fs::create_symlink("a/b/prod.env", b.root / "link.env");  // never mounted over
  REQUIRE(::mkfifo((b.root / "a/pipe.env").c_str(), 0600) == 0);
  auto layout = [&](const kai::Snapshot* seen) {
    RunSpec spec;
    spec.shell = "true";
    spec.cwd = b.root;
    kai::confine(*b.ws, spec,
                 kai::ConfineOptions{.root_writable = true, .writable = {}, .network = false, .seen = seen});
    std::set<fs::path> hidden(spec.layout.hidden.begin(), spec.layout.hidden.end());
    std::set<fs::path> read_only(spec.layout.read_only.begin(), spec.layout.read_only.end());
    return std::pair{hidden, read_only};
  };
  const auto walked = layout(nullptr);
  for (const char* rel : {"a/b/c/id_rsa", "a/b/prod.env", "build/.env", "out/gen/.env.local", "vendor/lib/.env",
                          "conf/.ssh/id_ed25519", "a/pipe.env"})
    CHECK(walked.first.count(b.root / rel) == 1);
  for (const char* rel : {"out/target/.env", "node_modules/pkg/.env", "link.env", "a/plain.txt", "debug.log"})
    CHECK(walked.first.count(b.root / rel) == 0);
  for (const char* rel :
       {"a/b/c/main.c.bak-kaicoder-1", "out/gen/app.js.bak-kaicoder-3", "vendor/lib/x.c.bak-kaicoder-4"})
    CHECK(walked.second.count(b.root / rel) == 1);

  kai::SnapshotStore store{b.root / ".kaicoder/snapshots.git", b.root, b.ws->guards};
  std::this_thread::sleep_for(1100ms);  // out of the stat cache's racy window: the second take uses it
  auto first = store.take();
  REQUIRE(first);
  CHECK(layout(&*first) == walked);
  // A later snapshot, served from the stat cache and its kept listings, meets the same files.
  auto second = store.take();
  REQUIRE(second);
  CHECK(second->hashed == 0);
  CHECK(layout(&*second) == walked);
}

TEST_CASE("full: no terminal can be opened", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  RunResult r = b.run(
      "for t in /dev/tty /dev/ptmx /dev/pts/0 /dev/console; do (exec 3<>$t) 2>/dev/null && echo OPENED $t; done; "
      "ls /dev/pts 2>/dev/null | wc -l; echo END");
  CHECK(r.out.find("OPENED") == std::string::npos);
  CHECK_THAT(r.out, Contains("END"));
}

TEST_CASE("full: the network is off: TCP, UDP and UNIX sockets outside the run are out of reach", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  Listener tcp(SOCK_STREAM), udp(SOCK_DGRAM);
  const std::string path = (b.outside / "agent.sock").string();
  UnixListener named(path);
  UnixListener abstract(std::string("\0kaicoder-test-", 15) + std::to_string(::getpid()));
  RunResult r = b.run(
      "/usr/bin/python3 - <<'PY'\n"
      "import socket\n"
      "def attempt(label, f):\n"
      "    try:\n"
      "        f(); print(label, 'REACHED')\n"
      "    except OSError as e:\n"
      "        print(label, 'refused', e.errno)\n"
      "attempt('tcp', lambda: socket.create_connection(('127.0.0.1', " +
      std::to_string(tcp.port) +
      "), timeout=2))\n"
      "attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', " +
      std::to_string(udp.port) +
      ")))\n"
      "def unix(name):\n"
      "    s = socket.socket(socket.AF_UNIX); s.settimeout(2); s.connect(name)\n"
      "attempt('named', lambda: unix('" +
      path +
      "'))\n"
      "attempt('abstract', lambda: unix('\\0kaicoder-test-" +
      std::to_string(::getpid()) +
      "'))\n"
      "PY");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("tcp refused") && Contains("udp refused") && Contains("named refused") &&
                        Contains("abstract refused"));
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(tcp.reached());
  CHECK_FALSE(udp.reached());
  CHECK_FALSE(named.reached());
  CHECK_FALSE(abstract.reached());
}

TEST_CASE("full: no process of the run outlives it", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  const std::string marker = "4711.0815";
  RunResult r = b.run("(setsid sh -c 'sleep " + marker +
                      "' </dev/null >/dev/null 2>&1 &); "
                      "(nohup sleep " +
                      marker + " </dev/null >/dev/null 2>&1 &); sleep 0.2; echo started");
  CHECK_THAT(r.out, Contains("started"));
  CHECK(processes_with("sleep " + marker) == 0);
}

TEST_CASE("full: the run's environment is kaicoder's, not the proposer's", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  RunResult r = b.run(
      "env; echo probe > \"$TMPDIR/kaicoder-probe\" && echo TMPWRITE; "
      "echo probe > /kaicoder-probe-root 2>/dev/null && echo ROOTWRITE; "
      "git status --short >/dev/null && echo GITOK");
  INFO(r.out << r.err);
  CHECK(r.out.find("GIT_CONFIG_PARAMETERS") == std::string::npos);
  CHECK(r.out.find("LD_PRELOAD") == std::string::npos);
  CHECK(r.out.find("BASH_ENV") == std::string::npos);
  CHECK(r.out.find("tok-3b4c5d6e7f") == std::string::npos);
  CHECK_THAT(r.out, Contains("TMPDIR=/tmp\n"));
  CHECK_THAT(r.out, Contains("HOME=" + b.home.string() + "\n"));
  CHECK_THAT(r.out, Contains("GIT_CONFIG_KEY_0=core.fsmonitor"));
  CHECK_THAT(r.out, Contains("TMPWRITE") && Contains("GITOK"));
  CHECK(r.out.find("ROOTWRITE") == std::string::npos);
  CHECK_FALSE(fs::exists("/kaicoder-probe-root"));
  CHECK_FALSE(fs::exists("/tmp/kaicoder-probe"));  // the run's /tmp was its own
}

TEST_CASE("full: ordinary work goes through: git commit, a build, new files, temp files, the home's git config",
          "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  RunResult r = b.run(
      "git config user.name && echo 'int x;' > src/new.c && git add src/new.c && "
      "git commit -q -m 'add new.c' && mkdir -p build && echo obj > build/main.o && "
      "echo generated > GENERATED.txt && echo t > /tmp/scratch && cat /tmp/scratch && echo OK");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Box Owner") && Contains("OK"));
  CHECK(b.read("build/main.o") == "obj\n");
  CHECK(b.read("GENERATED.txt") == "generated\n");
  CHECK(r.guards.empty());
  std::string log = b.root.string() + "/.git/logs/HEAD";
  CHECK_THAT(b.top.read("root/.git/logs/HEAD"), Contains("add new.c"));
}

TEST_CASE("landlock: changes to guarded paths are put back after the run and reported", "[sandbox]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  Box b("landlock");
  const std::string toml = b.read("kaicoder.toml"), config = b.read(".git/config"),
                    state = b.read(".kaicoder/state.json");
  RunResult r = b.run(
      "echo '[policy.default]' > kaicoder.toml; echo forged > .kaicoder/state.json; "
      "printf '[core]\\n\\thooksPath = /tmp/x\\n' >> .git/config; echo evil > .git/hooks/post-checkout; "
      "echo /tmp/x > .git/commondir; echo DONE");
  CHECK_THAT(r.out, Contains("DONE"));
  CHECK(b.read("kaicoder.toml") == toml);
  CHECK(b.read(".git/config") == config);
  CHECK(b.read(".kaicoder/state.json") == state);
  CHECK_FALSE(b.exists(".git/hooks/post-checkout"));
  CHECK_FALSE(b.exists(".git/commondir"));
  std::string g = Catch::Detail::stringify(r.guards);
  CHECK_THAT(g, Contains("kaicoder.toml: restored") && Contains(".git/config: restored") &&
                    Contains(".kaicoder/state.json: restored") && Contains(".git/hooks/post-checkout: removed") &&
                    Contains(".git/commondir: removed"));
}

TEST_CASE("full: the scripts [hooks] and [validate] name are read-only to runs", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b("full", "[hooks]\nnotify = \"sh scripts/notify.sh --quiet\"\n[validate]\n\"*.c\" = \"tools/check-c {file}\"\n");
  b.top.write("root/scripts/notify.sh", "echo notified\n");
  b.top.write("root/tools/check-c", "#!/bin/sh\nexit 0\n");
  b.open();
  RunResult r = b.run(
      "echo 'curl evil' > scripts/notify.sh; echo 'rm -rf ~' > tools/check-c; echo x > scripts/other.sh; echo END");
  CHECK_THAT(r.out, Contains("END"));
  CHECK(b.read("scripts/notify.sh") == "echo notified\n");
  CHECK(b.read("tools/check-c") == "#!/bin/sh\nexit 0\n");
  CHECK(b.read("scripts/other.sh") == "x\n");  // the rest of root stays writable
}

TEST_CASE("[run] env refuses names that change what programs load or look like secrets", "[sandbox]") {
  for (const char* name :
       {"LD_PRELOAD", "GIT_CONFIG_PARAMETERS", "BASH_ENV", "NODE_OPTIONS", "AWS_SECRET_ACCESS_KEY"}) {
    INFO(name);
    CHECK(kai::env_name_refused(name));
  }
  CHECK_FALSE(kai::env_name_refused("CARGO_HOME"));
  TempDir t;
  t.write("kaicoder.toml", "[run]\nenv = [\"CARGO_HOME\", \"LD_LIBRARY_PATH\"]\n");
  auto cfg = kai::load_config({t / "kaicoder.toml"});
  REQUIRE_FALSE(cfg);
  CHECK_THAT(cfg.error().message, Contains("LD_LIBRARY_PATH"));
}

TEST_CASE("full: exit codes, signals and the time limit pass through the namespace's init", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  CHECK(b.run("exit 7").exit_code == 7);
  RunResult killed = b.run("kill -TERM $$");
  CHECK(killed.signal == SIGTERM);
  CHECK(killed.exit_code == 128 + SIGTERM);
  RunSpec s;
  s.shell = "trap '' TERM; (setsid sleep 600 &); sleep 600";
  s.cwd = b.root;
  s.timeout = 200ms;
  s.kill_grace = 200ms;
  kai::confine(*b.ws, s, kai::ConfineOptions{});
  auto r = kai::run_command(s);
  REQUIRE(r);
  CHECK(r->timed_out);
  CHECK(r->elapsed < 10s);
  CHECK(processes_with("sleep 600") == 0);
}

TEST_CASE("full: signed approvals in kaicoder-approvals/ cannot be changed, removed or added to", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  b.top.write("root/kaicoder-approvals/a.toml", "base = \"1\"\n");
  b.top.write("root/kaicoder-approvals/a.toml.sig", "SIG\n");
  RunResult r = b.run(
      "echo forged > kaicoder-approvals/a.toml && echo CHANGED; rm -f kaicoder-approvals/a.toml.sig && echo GONE; "
      "echo forged > kaicoder-approvals/b.toml && echo ADDED; mv kaicoder-approvals k2 && echo MOVED; "
      "chmod 777 kaicoder-approvals/a.toml && echo CHMOD; echo END");
  INFO(r.out << r.err);
  CHECK_THAT(r.out, Contains("END"));
  for (const char* done : {"CHANGED", "GONE", "ADDED", "MOVED", "CHMOD"}) CHECK(r.out.find(done) == std::string::npos);
  CHECK(b.read("kaicoder-approvals/a.toml") == "base = \"1\"\n");
  CHECK(b.read("kaicoder-approvals/a.toml.sig") == "SIG\n");
  CHECK_FALSE(b.exists("kaicoder-approvals/b.toml"));
  CHECK_FALSE(b.exists("k2"));
  CHECK(r.guards.empty());
}

TEST_CASE("full: a guarded path that did not exist and that the run creates is removed and reported", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  REQUIRE_FALSE(b.exists("kaicoder-approvals"));
  RunResult r = b.run(
      "mkdir kaicoder-approvals && echo forged > kaicoder-approvals/x.toml && "
      "mkdir .claude && echo '{}' > .claude/settings.json && echo '{}' > .mcp.json && "
      "echo ok > ordinary.txt && echo MADE");
  INFO(r.out << r.err);
  CHECK_THAT(r.out, Contains("MADE"));
  CHECK_FALSE(b.exists("kaicoder-approvals"));
  CHECK_FALSE(b.exists(".claude"));
  CHECK_FALSE(b.exists(".mcp.json"));
  CHECK(b.read("ordinary.txt") == "ok\n");
  const std::string g = Catch::Detail::stringify(r.guards);
  CHECK_THAT(g, Contains("created kaicoder-approvals: removed") && Contains("created .claude: removed") &&
                    Contains("created .mcp.json: removed"));
  CHECK(g.find("ordinary") == std::string::npos);
}

TEST_CASE("landlock: kaicoder-approvals/ is put back after the run: changes, removals and new files", "[sandbox]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  SECTION("an existing folder") {
    Box b("landlock");
    b.top.write("root/kaicoder-approvals/a.toml", "base = \"1\"\n");
    b.top.write("root/kaicoder-approvals/a.toml.sig", "SIG\n");
    RunResult r = b.run(
        "echo forged > kaicoder-approvals/a.toml; rm -f kaicoder-approvals/a.toml.sig; "
        "echo forged > kaicoder-approvals/b.toml; mkdir kaicoder-approvals/sub; echo DONE");
    CHECK_THAT(r.out, Contains("DONE"));
    CHECK(b.read("kaicoder-approvals/a.toml") == "base = \"1\"\n");
    CHECK(b.read("kaicoder-approvals/a.toml.sig") == "SIG\n");
    CHECK_FALSE(b.exists("kaicoder-approvals/b.toml"));
    CHECK_FALSE(b.exists("kaicoder-approvals/sub"));
    const std::string g = Catch::Detail::stringify(r.guards);
    CHECK_THAT(g, Contains("changed kaicoder-approvals/a.toml: restored") &&
                      Contains("removed kaicoder-approvals/a.toml.sig: restored") &&
                      Contains("created kaicoder-approvals/b.toml: removed") &&
                      Contains("created kaicoder-approvals/sub: removed"));
  }
  SECTION("a folder the run creates") {
    Box b("landlock");
    RunResult r = b.run("mkdir kaicoder-approvals && echo forged > kaicoder-approvals/x.toml; echo DONE");
    CHECK_THAT(r.out, Contains("DONE"));
    CHECK_FALSE(b.exists("kaicoder-approvals"));
    CHECK_THAT(Catch::Detail::stringify(r.guards), Contains("created kaicoder-approvals: removed"));
  }
}

TEST_CASE("landlock: files the run creates or removes in the state dir are removed or put back", "[sandbox]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  Box b("landlock");
  b.top.write("root/.kaicoder/journal/LAST", "20260101T000000Z\n");
  b.top.write("root/.kaicoder/staging/1/meta.json", "{\"id\": 1}\n");
  b.top.mkdir("root/.kaicoder/intents");
  b.top.write("root/.kaicoder/scratch/hook-1/out", "x\n");
  const std::string meta = b.read(".kaicoder/staging/1/meta.json");
  RunResult r = b.run(
      "rm -f .kaicoder/state.json; rm -rf .kaicoder/journal; rmdir .kaicoder/intents; "
      "echo forged > .kaicoder/forged-approval; mkdir -p .kaicoder/staging/99 && "
      "echo '{\"state\": \"approved\"}' > .kaicoder/staging/99/meta.json; "
      "echo '{}' > .kaicoder/intents-x.json; echo y > .kaicoder/scratch/hook-1/out2; echo DONE");
  INFO(r.out << r.err);
  CHECK_THAT(r.out, Contains("DONE"));
  CHECK(b.read(".kaicoder/state.json") == "{}\n");
  CHECK(b.read(".kaicoder/journal/LAST") == "20260101T000000Z\n");
  CHECK(fs::is_directory(b.root / ".kaicoder/intents"));
  CHECK(b.read(".kaicoder/staging/1/meta.json") == meta);
  CHECK_FALSE(b.exists(".kaicoder/forged-approval"));
  CHECK_FALSE(b.exists(".kaicoder/staging/99"));
  CHECK_FALSE(b.exists(".kaicoder/intents-x.json"));
  // The scratch folders of hooks and checks are not watched.
  CHECK(b.exists(".kaicoder/scratch/hook-1/out2"));
  const std::string g = Catch::Detail::stringify(r.guards);
  CHECK_THAT(g, Contains("removed .kaicoder/state.json: restored") &&
                    Contains("removed .kaicoder/journal/LAST: restored") &&
                    Contains("removed .kaicoder/intents/: restored") &&
                    Contains("created .kaicoder/forged-approval: removed") &&
                    Contains("created .kaicoder/staging/99: removed"));
  CHECK(g.find("scratch") == std::string::npos);
}

TEST_CASE("the sandbox's seccomp filter refuses new hard links and io_uring, and nothing else it was given",
          "[sandbox]") {
  TempDir t;
  t.write("a/f", "f\n");
  t.mkdir("b");
  const std::string a = (t / "a/f").string(), b = (t / "b").string();
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Bits of the exit code: each check that failed.
    int bad = 0;
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || kai::install_run_filter(false) != 0) ::_exit(255);
    if (::link(a.c_str(), (b + "/l1").c_str()) == 0 || errno != EXDEV) bad |= 1;
    if (::linkat(AT_FDCWD, a.c_str(), AT_FDCWD, (b + "/l2").c_str(), 0) == 0 || errno != EXDEV) bad |= 2;
    if (::syscall(425, 8, nullptr) != -1 || errno != ENOSYS) bad |= 4;  // io_uring_setup
    if (::symlink(a.c_str(), (b + "/s").c_str()) != 0) bad |= 8;
    if (::rename(a.c_str(), (b + "/moved").c_str()) != 0) bad |= 16;
    // The filter outlives exec: a shell's ln is refused the same way.
    if (std::system(("ln '" + b + "/moved' '" + b + "/l3' 2>/dev/null").c_str()) == 0) bad |= 32;
    ::_exit(bad);
  }
  int st = 0;
  REQUIRE(::waitpid(pid, &st, 0) == pid);
  REQUIRE(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  CHECK_FALSE(t.exists("b/l1"));
  CHECK_FALSE(t.exists("b/l2"));
  CHECK_FALSE(t.exists("b/l3"));
  CHECK(t.exists("b/moved"));
}

TEST_CASE("full: a run cannot give a file a second name, and the tools that make one fall back", "[sandbox]") {
  if (!full_or_warn()) return;
  Box b;
  // A second name in a new folder is the one write a folder's watch misses.
  const std::string py_link =
      "python3 -c \"import os\ntry:\n  os.link('src/main.c', 'n/py')\nexcept OSError as e:\n  print('PY', e.errno)\"";
  RunResult r =
      b.run("mkdir n && { ln src/main.c n/alias 2>&1 || echo LINK-REFUSED; } && " + py_link +
            " && echo 'int y;' > src/y.c && git add src/y.c && git -c user.name=t -c user.email=t@e commit -q -m y && "
            "cp -l src/main.c n/cp 2>/dev/null || cp src/main.c n/cp && echo DONE");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Invalid cross-device link") && Contains("LINK-REFUSED") && Contains("DONE"));
  CHECK_THAT(r.out, Contains("PY " + std::to_string(EXDEV)));
  CHECK_FALSE(b.exists("n/alias"));
  CHECK(b.read("n/cp") == b.read("src/main.c"));
  struct stat st {};
  REQUIRE(::stat((b.root / "src/main.c").c_str(), &st) == 0);
  CHECK(st.st_nlink == 1);
}

TEST_CASE("landlock: a run cannot give a file a second name either", "[sandbox]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  Box b("landlock");
  RunResult r = b.run("mkdir -p n && { ln src/main.c n/alias 2>&1 || echo LINK-REFUSED; } && echo DONE");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("Invalid cross-device link") && Contains("LINK-REFUSED") && Contains("DONE"));
  CHECK_FALSE(b.exists("n/alias"));
}

namespace {

// Runs `body` in a forked child under the run filter; its exit code is a
// bit mask of the checks that failed (0: all held).
int under_filter(bool unix_sockets_off, const std::function<int()>& body) {
  pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || kai::install_run_filter(unix_sockets_off) != 0) ::_exit(255);
    ::_exit(body() & 0xff);
  }
  int st = 0;
  if (::waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

// The open_how of openat2(2), which older headers lack.
struct OpenHow {
  uint64_t flags, mode, resolve;
};

}  // namespace

TEST_CASE("the run filter refuses a set-user-ID or set-group-ID bit in every call that sets a mode", "[sandbox]") {
  TempDir t;
  t.write("f", "f\n");
  t.mkdir("d");
  const std::string f = (t / "f").string(), d = (t / "d").string();
  auto in_d = [&](const char* name) { return d + "/" + name; };
  std::vector<std::string> failed;
  // Each form in turn, so a failure names the one that got through.
  auto check = [&](const std::string& what, const std::function<long()>& call, int want) {
    int bad = under_filter(false, [&] {
      errno = 0;
      long rc = call();
      return rc == -1 && errno == want ? 0 : 1;
    });
    if (bad != 0) failed.push_back(what);
  };
  check("chmod 4755", [&] { return ::chmod(f.c_str(), 04755); }, EPERM);
  check("chmod 2755", [&] { return ::chmod(f.c_str(), 02755); }, EPERM);
#ifdef SYS_chmod
  check("SYS_chmod", [&] { return ::syscall(SYS_chmod, f.c_str(), 04755); }, EPERM);
#endif
  check("fchmod", [&] { return ::fchmod(::open(f.c_str(), O_RDONLY), 06755); }, EPERM);
  check("fchmodat", [&] { return ::syscall(SYS_fchmodat, AT_FDCWD, f.c_str(), 04755); }, EPERM);
  check("fchmodat2", [&] { return ::syscall(452, AT_FDCWD, f.c_str(), 04755, 0); }, EPERM);
  check("chmod of a folder", [&] { return ::chmod(d.c_str(), 02775); }, EPERM);
#ifdef SYS_open
  check("SYS_open O_CREAT", [&] { return ::syscall(SYS_open, in_d("o1").c_str(), O_CREAT | O_WRONLY, 04755); }, EPERM);
#endif
  check("open O_CREAT", [&] { return ::open(in_d("o2").c_str(), O_CREAT | O_WRONLY, 04755); }, EPERM);
  check("openat O_CREAT", [&] { return ::openat(AT_FDCWD, in_d("o3").c_str(), O_CREAT | O_WRONLY, 02700); }, EPERM);
  check("open O_TMPFILE", [&] { return ::open(d.c_str(), O_TMPFILE | O_WRONLY, 04700); }, EPERM);
#ifdef SYS_creat
  check("SYS_creat", [&] { return ::syscall(SYS_creat, in_d("c1").c_str(), 04755); }, EPERM);
#endif
  check("creat", [&] { return ::creat(in_d("c2").c_str(), 06755); }, EPERM);
#ifdef SYS_mknod
  check("SYS_mknod", [&] { return ::syscall(SYS_mknod, in_d("m1").c_str(), S_IFREG | 04755, 0); }, EPERM);
#endif
  check("mknodat", [&] { return ::mknodat(AT_FDCWD, in_d("m2").c_str(), S_IFIFO | 02644, 0); }, EPERM);
  OpenHow how{O_RDONLY, 0, 0};
  check("openat2", [&] { return ::syscall(437, AT_FDCWD, f.c_str(), &how, sizeof how); }, ENOSYS);
  INFO(Catch::Detail::stringify(failed));
  CHECK(failed.empty());
  for (const char* name : {"o1", "o2", "o3", "c1", "c2", "m1", "m2"}) CHECK_FALSE(t.exists(std::string("d/") + name));
  struct stat st {};
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 06000) == 0);
  // Everything else about modes stays as it was: chmod, a new file, a new
  // folder, a FIFO, sticky bits, a shell's chmod +x; and a shell's chmod
  // u+s is refused the same way.
  int bad = under_filter(false, [&] {
    int out = 0;
    if (::chmod(f.c_str(), 0755) != 0) out |= 1;
    int fd = ::open(in_d("plain").c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd < 0) out |= 2;
    if (::mkdir(in_d("sub").c_str(), 0755) != 0 || ::chmod(in_d("sub").c_str(), 01777) != 0) out |= 4;
    if (::mkfifo(in_d("fifo").c_str(), 0600) != 0) out |= 8;
    if (std::system(("chmod +x '" + f + "'").c_str()) != 0) out |= 16;
    if (std::system(("chmod u+s '" + f + "' 2>/dev/null").c_str()) == 0) out |= 32;
    if (std::system(("python3 -c \"import os; os.chmod('" + f + "', 0o4755)\" 2>/dev/null").c_str()) == 0) out |= 64;
    return out;
  });
  CHECK(bad == 0);
  REQUIRE(::stat(f.c_str(), &st) == 0);
  CHECK((st.st_mode & 06000) == 0);
}

TEST_CASE("the landlock level's filter refuses a UNIX socket of the run's own, not a socket pair", "[sandbox]") {
  int bad = under_filter(true, [] {
    int out = 0;
    errno = 0;
    if (::socket(AF_UNIX, SOCK_STREAM, 0) != -1 || errno != EPERM) out |= 1;
    if (::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0) != -1 || errno != EPERM) out |= 2;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) out |= 4;
    if (::socket(AF_INET, SOCK_STREAM, 0) < 0) out |= 8;
    return out;
  });
  CHECK(bad == 0);
  // The full level's filter leaves them: its mounts hide the sockets outside.
  CHECK(under_filter(false, [] { return ::socket(AF_UNIX, SOCK_STREAM, 0) >= 0 ? 0 : 1; }) == 0);
}

TEST_CASE("no run holds a capability, at either level, also as root: no file capability, no sethostname", "[sandbox]") {
  std::string level;
  SECTION("full") {
    if (!full_or_warn()) return;
    level = "full";
  }
  SECTION("landlock") {
    if (kai::landlock_status().abi == 0) {
      WARN("SKIPPED: landlock is not available here");
      return;
    }
    level = "landlock";
  }
  Box b(level);
  b.top.write("root/helper", "#!/bin/sh\n");
  // A version 2 security.capability value granting cap_net_raw, effective.
  const std::string py =
      "import os, struct\n"
      "v = struct.pack('<IIIII', 0x02000001, 1 << 13, 0, 0, 0)\n"
      "try:\n"
      "    os.setxattr('helper', 'security.capability', v)\n"
      "    print('FCAP-SET')\n"
      "except OSError as e:\n"
      "    print('FCAP-REFUSED', e.errno)\n";
  b.top.write("root/fcap.py", py);
  RunResult r = b.run(
      "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status; "
      "hostname \"$(hostname)\" 2>/dev/null && echo HOSTNAME-SET; python3 fcap.py; "
      "setcap cap_net_raw+ep helper 2>/dev/null && echo SETCAP-DONE; echo END");
  INFO(r.out << r.err);
  CHECK_THAT(r.out, Contains("CapEff:\t0000000000000000") && Contains("CapPrm:\t0000000000000000") &&
                        Contains("CapInh:\t0000000000000000") && Contains("CapAmb:\t0000000000000000") &&
                        Contains("NoNewPrivs:\t1") && Contains("END"));
  if (::geteuid() == 0 || level == "full") CHECK_THAT(r.out, Contains("CapBnd:\t0000000000000000"));
  CHECK(r.out.find("HOSTNAME-SET") == std::string::npos);
  CHECK(r.out.find("FCAP-SET") == std::string::npos);
  CHECK_THAT(r.out, Contains("FCAP-REFUSED " + std::to_string(EPERM)));
  CHECK(r.out.find("SETCAP-DONE") == std::string::npos);
  char buf[64];
  CHECK(::getxattr((b.root / "helper").c_str(), "security.capability", buf, sizeof buf) < 0);
}

TEST_CASE("landlock: no process of the run outlives it, whatever session it made", "[sandbox]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  Box b("landlock");
  const std::string marker = "4712.0815";
  RunResult r = b.run("(setsid sh -c 'sleep " + marker +
                      "' </dev/null >/dev/null 2>&1 &); "
                      "(nohup sleep " +
                      marker + " </dev/null >/dev/null 2>&1 &); sleep 0.2; echo started");
  CHECK_THAT(r.out, Contains("started"));
  CHECK(processes_with("sleep " + marker) == 0);
  // The time limit takes them too.
  RunSpec s;
  s.shell = "trap '' TERM; (setsid sleep 601 &); sleep 601";
  s.cwd = b.root;
  s.timeout = 200ms;
  s.kill_grace = 200ms;
  kai::confine(*b.ws, s, kai::ConfineOptions{});
  auto timed = kai::run_command(s);
  REQUIRE(timed);
  CHECK(timed->timed_out);
  CHECK(processes_with("sleep 601") == 0);
}

TEST_CASE("no process of a run reads the environment or memory of kaicoder's processes", "[sandbox]") {
  std::string level;
  SECTION("full") {
    if (!full_or_warn()) return;
    level = "full";
  }
  SECTION("landlock") {
    if (kai::landlock_status().abi == 0) {
      WARN("SKIPPED: landlock is not available here");
      return;
    }
    level = "landlock";
  }
  Box b(level);
  // What kaicoder's own processes hold: this process's environment.
  const std::string canary = "kaicoder-canary-" + std::to_string(::getpid());
  ::setenv("KAICODER_TEST_CANARY", canary.c_str(), 1);
  b.top.write("root/peek.py", R"(import os, re
me = os.getpid()
for pid in sorted(int(p) for p in os.listdir('/proc') if p.isdigit()):
    if pid == me:
        continue
    try:
        env = open('/proc/%d/environ' % pid, 'rb').read()
        print('environ', pid, 'READ', len(env))
        print(env.decode('latin-1').replace('\0', '\n'))
    except OSError as e:
        print('environ', pid, 'refused', e.errno)
    try:
        maps = open('/proc/%d/maps' % pid).read().splitlines()
        with open('/proc/%d/mem' % pid, 'rb') as mem:
            for line in maps:
                lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
                if 'r' not in line.split()[1]:
                    continue
                mem.seek(lo)
                data = mem.read(min(hi - lo, 1 << 20))
                print('mem', pid, 'READ', len(data))
                print(data.decode('latin-1'))
                break
    except OSError as e:
        print('mem', pid, 'refused', e.errno)
)");
  std::string cmd = "python3 peek.py";
  // At the landlock level the run shares the system's /proc: the process
  // that started it is this one.
  if (level == "landlock") cmd += "; cat /proc/" + std::to_string(::getpid()) + "/environ && echo ENVIRON-READ; true";
  RunResult r = b.run(cmd);
  ::unsetenv("KAICODER_TEST_CANARY");
  INFO(r.out.substr(0, 4000) << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find(canary) == std::string::npos);
  CHECK(r.err.find(canary) == std::string::npos);
  CHECK(r.out.find("ENVIRON-READ") == std::string::npos);
  if (level == "full") {
    // Init, the one other process the run can see, is kaicoder's fork.
    CHECK_THAT(r.out, Contains("environ 1 refused") && Contains("mem 1 refused"));
  } else {
    const std::string me = std::to_string(::getpid());
    CHECK_THAT(r.out, Contains("environ " + me + " refused") && Contains("mem " + me + " refused"));
  }
}

TEST_CASE("landlock: a run can neither read nor write a terminal, and reads everything else", "[sandbox]") {
  if (kai::landlock_status().abi == 0) {
    WARN("SKIPPED: landlock is not available here");
    return;
  }
  // A terminal of the owner's: a pseudo-terminal this process holds open.
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string pts = ::ptsname(master);
  Box b("landlock");
  b.top.write("root/tty.py", R"(import glob, os, sys
for p in [sys.argv[1], "/dev/tty", "/dev/console", "/dev/ptmx"] + glob.glob("/dev/char/*"):
    for mode in (os.O_RDONLY, os.O_WRONLY):
        try:
            os.close(os.open(p, mode | os.O_NOCTTY | os.O_NONBLOCK))
            if os.path.realpath(p).startswith(("/dev/pts", "/dev/tty", "/dev/console", "/dev/ptmx")):
                print("OPENED", p, mode)
        except OSError:
            pass
for p in ["/dev/null", "/dev/urandom", "/etc/hostname", "/proc/self/status"]:
    open(p, "rb").read(1)
print("READ-OK")
)");
  RunResult r = b.run("python3 tty.py " + pts);
  ::close(master);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("READ-OK"));
  CHECK(r.out.find("OPENED") == std::string::npos);
  CHECK_THAT(r.sandbox_note, Contains("no terminals") && Contains("no UNIX sockets"));
}
