#pragma once
// TempRepo: a throwaway git work tree for one end-to-end case, and the ways
// to run the real kaicoder binary in it.
//
//   TempRepo repo{{"a.txt", "old\n"}};           // git init, files, one commit
//   Run r = repo.kai({"propose", "--path", "a.txt", "--target", "old",
//                     "--replacement", "new", "--why", "t"});
//   Run a = repo.kai_tty({"approve", "1"}, "y");  // answers the prompt on a pty
//   CHECK(repo.read("a.txt") == "new\n");
//
// Layout: <tmp>/kaicoder-e2e-XXXXXX/{repo,home}. Every child runs with cwd =
// repo in a mount namespace of its own where home is bind-mounted over the
// owner's real home directory (the one the password database names, which is
// where kaicoder looks for the owner's folder), and HOME / XDG_CONFIG_HOME
// point into home too: the real owner folder is never read or written. The folder is removed when the case ends, kept
// (and its path printed) when an assertion in the case failed or an exception is unwinding (except in cases tagged
// [!mayfail]); KAICODER_KEEP_TEMP=1 keeps every one.
//
// Every child runs under a time limit and is killed with its whole process
// group when it overstays, so a hang fails the case instead of the CI run.
//
// kai() gives the child no controlling terminal at all (it runs in a session
// of its own), so /dev/tty cannot be opened there: that is an agent in a pipe.
// kai_tty() gives it a pseudo-terminal as controlling terminal: that is a
// person at a terminal.

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace kai::test {

using namespace std::chrono_literals;

// Extra environment for one child: name → value; a nullopt value removes it.
using EnvOverrides = std::vector<std::pair<std::string, std::optional<std::string>>>;

constexpr std::chrono::milliseconds k_default_limit = 30s;

struct Run {
  int exit_code = -1;   // -1 when the child did not exit normally
  int term_signal = 0;  // the signal that ended it, 0 when it exited
  bool timed_out = false;
  std::string out;        // stdout (for kai_tty: see `tty`)
  std::string err;        // stderr
  std::string tty;        // what the terminal showed (kai_tty only): prompt, echo, …
  bool prompted = false;  // kai_tty: the prompt appeared and the answer was sent

  bool ok() const { return exit_code == 0; }
  bool killed_by(int sig) const { return exit_code == -1 && term_signal == sig; }
  // Everything the child printed, for messages in failed assertions.
  std::string all() const { return out + err + tty; }
};

// A child started in the background; finish() collects it.
class Process {
public:
  Process() = default;
  Process(Process&&) noexcept;
  Process& operator=(Process&&) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills a child that was never finished

  pid_t pid() const { return m_pid; }
  // Drain output until the child exits or `limit` passes (then it is killed).
  Run finish(std::chrono::milliseconds limit = k_default_limit);
  // Whether it has exited, without waiting (output is drained meanwhile).
  bool done();
  // What it has printed so far, without waiting (drains what is there).
  const Run& so_far();

private:
  friend class TempRepo;
  void pump(int timeout_ms);
  bool reap(int flags);
  void kill_group();
  pid_t m_pid = -1;
  int m_in = -1, m_out = -1, m_err = -1;
  std::string m_stdin;
  size_t m_stdin_off = 0;
  Run m_run;
  bool m_reaped = false;
};

// Where the stdout and stderr of a child on a pseudo-terminal go.
enum class TtyOutput { pipes, terminal };

// The size a pseudo-terminal reports (TIOCGWINSZ). By default a person's
// screen; k_unsized is a terminal nobody sized, as `script`, expect or a
// harness's own pty give (kaicoder pages only on a sized terminal).
struct TtySize {
  unsigned short rows = 50, cols = 200;
};
inline constexpr TtySize k_unsized{0, 0};

// A child whose controlling terminal is a pseudo-terminal we hold.
class TtyProcess {
public:
  TtyProcess() = default;
  TtyProcess(TtyProcess&&) noexcept;
  TtyProcess& operator=(TtyProcess&&) noexcept;
  TtyProcess(const TtyProcess&) = delete;
  TtyProcess& operator=(const TtyProcess&) = delete;
  ~TtyProcess();

  // Read until "[y/N]" (or "[y/N/a]") or "CONFIRM" shows on the terminal.
  // False when the child exited or the limit passed first.
  bool wait_for_prompt(std::chrono::milliseconds limit = k_default_limit);
  // Type `text` and Enter on the terminal.
  void answer(const std::string& text);
  // Read until `text` shows on the terminal (after what earlier waits
  // consumed). False when the child exited or the limit passed first.
  bool wait_for_text(const std::string& text, std::chrono::milliseconds limit = k_default_limit);
  // What the terminal showed so far.
  const std::string& tty() const { return m_run.tty; }
  pid_t pid() const { return m_pid; }
  // Ctrl-C on the terminal: SIGINT to its foreground process group.
  void interrupt();
  Run finish(std::chrono::milliseconds limit = k_default_limit);

private:
  friend class TempRepo;
  void pump(int timeout_ms);
  bool reap(int flags);
  void kill_group();
  pid_t m_pid = -1;
  int m_master = -1, m_out = -1, m_err = -1;
  Run m_run;
  size_t m_prompt_scan = 0;
  bool m_reaped = false;
};

class TempRepo {
public:
  // Files to create before the first commit: relative path → bytes.
  TempRepo(std::initializer_list<std::pair<std::string, std::string>> files = {});
  TempRepo(const TempRepo&) = delete;
  TempRepo& operator=(const TempRepo&) = delete;
  ~TempRepo();

  const std::filesystem::path& path() const { return m_repo; }
  const std::filesystem::path& home() const { return m_home; }
  // The owner's kaicoder folder (their config and key) as kaicoder finds it here.
  std::filesystem::path owner_dir() const { return m_home / ".config" / "kaicoder"; }
  std::filesystem::path abs(const std::string& rel) const { return m_repo / rel; }

  // Run kaicoder with no controlling terminal; `stdin_text` on a pipe.
  Run kai(const std::vector<std::string>& args, const std::string& stdin_text = "", const EnvOverrides& env = {},
          std::chrono::milliseconds limit = k_default_limit) const;
  // The same, in the background.
  Process spawn_kai(const std::vector<std::string>& args, const std::string& stdin_text = "",
                    const EnvOverrides& env = {}) const;
  // Any program (argv[0] looked up in PATH), cwd = repo, same environment.
  Process spawn(const std::vector<std::string>& argv, const std::string& stdin_text = "",
                const EnvOverrides& env = {}) const;

  // Run kaicoder on a pseudo-terminal and answer its prompt with `answer`.
  Run kai_tty(const std::vector<std::string>& args, const std::string& answer, const EnvOverrides& env = {},
              TtyOutput output = TtyOutput::pipes, std::chrono::milliseconds limit = k_default_limit,
              TtySize size = {}) const;
  TtyProcess spawn_kai_tty(const std::vector<std::string>& args, const EnvOverrides& env = {},
                           TtyOutput output = TtyOutput::pipes, TtySize size = {}) const;
  // Any program (argv[0] looked up in PATH) on a pseudo-terminal, the same way.
  TtyProcess spawn_tty(const std::vector<std::string>& argv, const EnvOverrides& env = {},
                       TtyOutput output = TtyOutput::pipes, TtySize size = {}) const;

  // Make the repo a root kaicoder governs, the way its owner does it:
  // `kaicoder init` at a pseudo-terminal, answered y; throws when that fails.
  // Tests call this, never `kai({"init"})`, unless init itself is what they test.
  void init() const;
  // Trust the repo's kaicoder.toml as it is now (a committed one, or one the
  // case changed), the way its owner does it: `kaicoder trust` at a
  // pseudo-terminal, answered y; throws when that fails.
  void trust() const;
  // Trust kaicoder.toml as it is now without kaicoder trust's checks, as an
  // earlier kaicoder did before a rule that refuses it was made (trust
  // refuses a config that does not load): for the cases that show every
  // command still refuses such a trusted config. Throws when it cannot.
  void trust_as_before() const;

  // Files, relative to the repo. write() creates folders as needed.
  std::string read(const std::string& rel) const;
  void write(const std::string& rel, const std::string& bytes) const;
  bool exists(const std::string& rel) const;  // true for a dangling symlink too
  void remove(const std::string& rel) const;
  void symlink(const std::string& rel, const std::string& target) const;
  bool is_symlink(const std::string& rel) const;
  void chmod(const std::string& rel, unsigned mode) const;
  unsigned mode(const std::string& rel) const;  // permission bits
  // Names in one folder (repo root by default), sorted, hidden ones included.
  std::vector<std::string> ls(const std::string& rel_dir = "") const;
  // Every file outside .git/ and .kaicoder/: path → bytes. A symlink maps to
  // "symlink -> TARGET", so swapping a file for a link shows up too.
  std::map<std::string, std::string> tree_snapshot() const;
  // Same walk, path → permission bits.
  std::map<std::string, unsigned> mode_snapshot() const;
  // Paths in the tree whose name contains `part`.
  std::vector<std::string> find(const std::string& part) const;

  // A copy of the repo (its state dir included) and of the home (the
  // owner's folder: key and trusted roots) as they are now, and putting that
  // copy back in place, at the same paths (cp -a: bytes, modes, times and
  // owners; the inodes are new). A matrix that kills a command at each of
  // its fault points sets its case up once, saves it, and restores it
  // before each point instead of making and approving it all again.
  void save(const std::string& name = "saved") const;
  void restore(const std::string& name = "saved") const;

  // Keep the folder even if the case passes.
  void keep() { m_keep = true; }

  // Runs git with `args` in the work tree; its stdout. Throws when git fails.
  std::string git(const std::vector<std::string>& args) const;

private:
  std::vector<std::string> environment(const EnvOverrides& env) const;

  std::filesystem::path m_top, m_repo, m_home;
  long m_failures_at_start = 0;
  int m_unwinding_at_start = 0;
  bool m_keep = false;
};

// The JSON object a command printed: the text from the first line that
// starts with '{' (anything on a terminal before it, like the prompt, is
// skipped). Throws when there is none.
std::string json_text(const std::string& out);

// The OS user name kaicoder records as approver for this process's uid.
std::string current_user();

// Path of the kaicoder binary under test.
const char* kaicoder_bin();

}  // namespace kai::test
