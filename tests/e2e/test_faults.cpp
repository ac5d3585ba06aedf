// Faults other than a crash (SPEC §5): a disk that fills in the middle of a
// changeset, a stage cut short or killed, a state dir removed and made anew.
// The full disk is the KAICODER_FAULT "enospc:POINT:N" of lib/util/fault
// (compiled in with KAICODER_FAULTS): the Nth write there fails with ENOSPC;
// and, as root, a real one: a small tmpfs mounted over the repo and filled
// but for a given number of bytes ([tmpfs]; skipped with a warning
// elsewhere). A state dir on a read-only mount (root) or without write
// permission (anyone else) is the other disk that refuses writes.

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int k_ten = 10;

std::string ten_name(int i) { return fmt::format("f{}.txt", i); }

// A changeset over ten files: eight replaced, one new in a new folder, one removed.
std::map<std::string, std::optional<std::string>> ten_before() {
  std::map<std::string, std::optional<std::string>> s;
  for (int i = 0; i < k_ten; ++i) s[ten_name(i)] = fmt::format("old {}\n", i);
  s["deep/er/new.txt"] = std::nullopt;
  return s;
}

void propose_ten(const TempRepo& repo) {
  json changes = json::array();
  for (int i = 0; i < k_ten - 1; ++i)
    changes.push_back({{"op", "write"}, {"path", ten_name(i)}, {"content", fmt::format("new {}\n", i)}});
  changes.push_back({{"op", "delete"}, {"path", ten_name(k_ten - 1)}});
  changes.push_back({{"op", "write"}, {"path", "deep/er/new.txt"}, {"content", "made\n"}});
  json req = {{"why", "ten files"}, {"changes", changes}};
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--json-input"}, req.dump()), 0);
}

std::map<std::string, std::optional<std::string>> ten_state(const TempRepo& repo) {
  std::map<std::string, std::optional<std::string>> s;
  for (const auto& [path, _] : ten_before())
    s[path] = repo.exists(path) ? std::optional<std::string>(repo.read(path)) : std::nullopt;
  return s;
}

std::vector<std::string> json_records_in(const TempRepo& repo, const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(repo.abs(dir), ec))
    if (e.path().extension() == ".json") out.push_back(e.path().filename().string());
  return out;
}

void fill_ten(TempRepo& repo) {
  for (int i = 0; i < k_ten; ++i) repo.write(ten_name(i), fmt::format("old {}\n", i));
  repo.init();
}

// A file system of the repo's own: a tmpfs of `bytes` mounted over the
// repo's folder, its files copied in; unmounted when the case ends (the
// TempRepo, declared first, then removes the empty folder). Root only:
// null, with a warning saying the case is skipped, for anyone else.
class SmallDisk {
public:
  static std::unique_ptr<SmallDisk> over(const TempRepo& repo, uint64_t bytes) {
    if (::geteuid() != 0) {
      WARN("not root: a tmpfs cannot be mounted, so this real-full-disk case is skipped");
      return nullptr;
    }
    const fs::path at = repo.path(), aside = at.string() + ".aside";
    fs::rename(at, aside);
    fs::create_directory(at);
    const std::string opts = fmt::format("size={},mode=0755", bytes);
    if (::mount("tmpfs", at.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, opts.c_str()) != 0) {
      const int e = errno;
      fs::remove(at);
      fs::rename(aside, at);
      WARN("cannot mount a tmpfs (" << std::strerror(e) << "): this real-full-disk case is skipped");
      return nullptr;
    }
    std::unique_ptr<SmallDisk> d(new SmallDisk(at));
    fs::copy(aside, at, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    fs::remove_all(aside);
    return d;
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  ~SmallDisk() { ::umount2(m_at.c_str(), MNT_DETACH); }

  uint64_t free_bytes() const {
    struct statvfs v {};
    REQUIRE(::statvfs(m_at.c_str(), &v) == 0);
    return static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  }
  // A filler file (in .git/, out of every walk) takes all but `bytes`.
  void leave_free(uint64_t bytes) const {
    const fs::path filler = m_at / ".git" / "filler";
    ::unlink(filler.c_str());
    const uint64_t now = free_bytes();
    if (now <= bytes) return;
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    const int rc = ::fallocate(fd, 0, 0, static_cast<off_t>(now - bytes));
    ::close(fd);
    REQUIRE(rc == 0);
    REQUIRE(free_bytes() == bytes);
  }

private:
  explicit SmallDisk(fs::path at) : m_at(std::move(at)) {}
  fs::path m_at;
};

constexpr uint64_t k_page = 4096;
constexpr uint64_t k_small_disk = 8 * 1024 * 1024;

// The store holds no trace of a change that did not happen.
void check_store_clean(const TempRepo& repo) {
  CHECK(repo.find(".bak-kaicoder-").empty());
  CHECK(repo.find("kaicoder-tmp").empty());
  CHECK(json_records_in(repo, ".kaicoder/intents").empty());
  CHECK(json_records_in(repo, ".kaicoder/journal").empty());
  CHECK_FALSE(repo.exists(".kaicoder/reserve"));
}

}  // namespace

TEST_CASE("a full disk at any write of a ten-file changeset leaves every file as it was, and the store clean",
          "[e2e][faults][enospc][long]") {
  TempRepo repo;
  fill_ten(repo);
  propose_ten(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto before = ten_state(repo);
  REQUIRE(before == ten_before());
  const std::string meta = show_json(repo, 1).at("status");
  REQUIRE(meta == "approved");

  // Every write the apply makes, one after the other, until one is not reached.
  int n = 1;
  for (; n < 100; ++n) {
    INFO("the write that fails: " << n);
    Run r = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", fmt::format("enospc:txn-write:{}", n)}});
    INFO(r.all());
    if (r.exit_code == 0) break;
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("No space left on device"));
    CHECK_THAT(r.err, Contains("nothing changed"));
    CHECK(ten_state(repo) == before);
    CHECK(repo.find(".bak-kaicoder-").empty());
    CHECK(repo.find("kaicoder-tmp").empty());
    CHECK_FALSE(repo.exists("deep"));
    CHECK(json_records_in(repo, ".kaicoder/intents").empty());
    CHECK(json_records_in(repo, ".kaicoder/journal").empty());
    CHECK_FALSE(repo.exists(".kaicoder/reserve"));
    // The failed apply may be tried again (its log entry is checked below).
    CHECK(show_json(repo, 1).at("status") == "failed");
  }
  // Intent, room, ten temps and nine backups, ten renames, four json_records_in.
  CHECK(n > 30);
  INFO("the apply that reached no armed write: " << n);
  // The last run reached no armed write: it applied, once.
  auto after = ten_state(repo);
  for (int i = 0; i < k_ten - 1; ++i) CHECK(after[ten_name(i)] == fmt::format("new {}\n", i));
  CHECK_FALSE(after[ten_name(k_ten - 1)]);
  CHECK(after["deep/er/new.txt"] == "made\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
  const std::string rid = show_json(repo, 1).at("rollback_id");
  // Each failed apply is logged as one entry with no rollback id (nothing
  // to roll back), the one that applied as one with its id: the log only
  // grows, so reading it once here sees what each failure left.
  const json entries = log_entries(repo);
  CHECK(entries.size() == static_cast<size_t>(n));
  size_t with_rid = 0;
  for (const auto& e : entries) {
    const std::string id = e.value("rollback_id", "");
    with_rid += id == rid;
    CHECK((id == rid || id.empty() || id == "\u2014"));  // none: nothing to roll back
  }
  CHECK(with_rid == 1);
  // And the rollback removes the folders the changeset made.
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(ten_state(repo) == before);
  CHECK_FALSE(repo.exists("deep"));
}

TEST_CASE("a full disk while a rollback writes leaves the tree as it was and the entry still undoable",
          "[e2e][faults][enospc][rollback]") {
  TempRepo repo;
  fill_ten(repo);
  propose_ten(repo);
  Run a = repo.kai_tty({"--json", "approve", "1"}, "y");
  KAI_REQUIRE_EXIT(a, 0);
  const std::string rid = json_of(a).at("applied").at("rollback_id");
  const auto applied = ten_state(repo);
  const auto backups = repo.find(".bak-kaicoder-");
  for (int n : {1, 3, 12, 20, 25}) {
    INFO("the write that fails: " << n);
    Run r = repo.kai_tty({"rollback", rid}, "y", {{"KAICODER_FAULT", fmt::format("enospc:txn-write:{}", n)}});
    INFO(r.all());
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.all(), Contains("nothing changed"));
    CHECK(ten_state(repo) == applied);
    CHECK(repo.find(".bak-kaicoder-") == backups);
    CHECK(json_records_in(repo, ".kaicoder/intents").empty());
    CHECK(log_entries(repo).size() == 1);
  }
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  CHECK(ten_state(repo) == ten_before());
  CHECK_FALSE(repo.exists("deep"));
}

TEST_CASE("a proposal whose record cannot be written leaves no staging folder", "[e2e][faults][staging]") {
  TempRepo repo{{"f.txt", "old\n"}};
  repo.init();
  Run r = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "new\n",
                   {{"KAICODER_FAULT", "enospc:stage-write:1"}});
  INFO(r.all());
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Contains("No space left on device"));
  // Beside the id counter only the live index (derived data, rebuilt from
  // the records), which may still name the id that was never made.
  std::vector<std::string> left = repo.ls(".kaicoder/staging");
  std::erase(left, "live");
  CHECK(left == std::vector<std::string>{"next-id"});
}

TEST_CASE("a stage killed before its record leaves a folder that doctor names and the next command removes",
          "[e2e][faults][staging]") {
  TempRepo repo{{"f.txt", "old\n"}};
  repo.init();
  Run killed = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "new\n",
                        {{"KAICODER_FAULT", "after-payloads"}});
  REQUIRE(killed.killed_by(SIGKILL));
  REQUIRE(repo.exists(".kaicoder/staging/1"));
  REQUIRE_FALSE(repo.exists(".kaicoder/staging/1/meta.json"));

  Run doc = repo.kai({"doctor"});
  CHECK_THAT(doc.all(), Contains("interrupted proposals"));
  CHECK_THAT(doc.all(), Contains("hold no record"));
  // list only reads.
  KAI_CHECK_EXIT(repo.kai({"list"}), 0);
  CHECK(repo.exists(".kaicoder/staging/1"));

  Run next = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "again"}, "new\n");
  KAI_REQUIRE_EXIT(next, 0);
  CHECK_THAT(next.err, Contains("removed"));
  CHECK_THAT(next.err, Contains("without a record"));
  CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  Run doc2 = repo.kai({"doctor"});
  CHECK_THAT(doc2.all(), !Contains("interrupted proposals"));
}

TEST_CASE("a state dir removed and made anew is a new store: its ids are not refused as applied before",
          "[e2e][faults][identity]") {
  TempRepo repo{{"f.txt", "one\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, "two\n"), 0);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1"}, "y"), 0);
  REQUIRE(repo.read("f.txt") == "two\n");
  // Kept by whoever reset the store, to be put back into the new one.
  const std::string old_meta = repo.read(".kaicoder/staging/1/meta.json");
  std::map<std::string, std::string> old_payloads;
  for (const auto& name : repo.ls(".kaicoder/staging/1"))
    old_payloads[name] = repo.read(".kaicoder/staging/1/" + name);

  fs::remove_all(repo.abs(".kaicoder"));  // git clean -xdf, or a clone into the same folder
  Run p = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "again"}, "three\n");
  KAI_REQUIRE_EXIT(p, 0);
  CHECK_THAT(p.err, Contains("made anew"));
  CHECK(show_json(repo, 1).at("status") == "pending");
  Run a = repo.kai_tty({"approve", "1"}, "y");
  INFO(a.all());
  KAI_REQUIRE_EXIT(a, 0);
  CHECK(repo.read("f.txt") == "three\n");
  Run doc = repo.kai({"doctor"});
  CHECK_THAT(doc.all(), Contains("made anew"));

  // A record of the store before never verifies in the new one.
  for (const auto& [name, bytes] : old_payloads) repo.write(".kaicoder/staging/1/" + name, bytes);
  Run replayed = repo.kai({"doctor"});
  INFO(replayed.all());
  CHECK_THAT(replayed.all(), Contains("unverified proposals"));
  Run again = repo.kai({"apply", "1"});
  CHECK(again.exit_code != 0);
  CHECK(repo.read("f.txt") == "three\n");
}

TEST_CASE("a changeset killed half-applied is undone by the next command while the disk stays full",
          "[e2e][faults][enospc][crash]") {
  // Killed after 5 of its files were replaced, or after all of them.
  const std::string point = GENERATE(as<std::string>{}, "after-replace:5", "after-replace:11");
  INFO("killed at " << point);
  TempRepo repo;
  fill_ten(repo);
  propose_ten(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto before = ten_state(repo);
  Run crashed = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", point}});
  INFO(crashed.all());
  REQUIRE(crashed.killed_by(SIGKILL));
  REQUIRE(ten_state(repo) != before);

  // Every write of a transaction now fails: recovery needs none to undo.
  Run full = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", "enospc:txn-write:1+"}});
  INFO(full.all());
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.err, Contains("undid the interrupted change of proposal 1"));
  CHECK_THAT(full.err, Contains("nothing changed"));
  CHECK(ten_state(repo) == before);
  CHECK(repo.find(".bak-kaicoder-").empty());
  CHECK(repo.find("kaicoder-tmp").empty());
  CHECK(json_records_in(repo, ".kaicoder/intents").empty());
  CHECK(json_records_in(repo, ".kaicoder/journal").empty());
  CHECK(show_json(repo, 1).at("status") == "failed");  // this apply failed, and says so

  // With room again the same approval applies.
  KAI_REQUIRE_EXIT(repo.kai({"apply", "1"}), 0);
  CHECK(ten_state(repo).at(ten_name(0)) == "new 0\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
}

TEST_CASE("on a real full disk every write of a ten-file changeset fails whole: all before, the store clean, and "
          "it says so",
          "[e2e][faults][enospc][tmpfs][long]") {
  TempRepo repo;
  auto disk = SmallDisk::over(repo, k_small_disk);
  if (!disk) return;
  fill_ten(repo);
  propose_ten(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto before = ten_state(repo);
  REQUIRE(before == ten_before());

  // One page more room each time, until the apply has all it needs: the
  // first write that finds the disk full moves from the intent through the
  // reserved room to each file's new bytes.
  std::set<std::string> failed_at;
  std::string messages;
  uint64_t room = 0;
  Run r;
  for (; room < 400 * k_page; room += k_page) {
    disk->leave_free(room);
    r = repo.kai({"apply", "1"});
    INFO("free: " << room << " bytes\n" << r.all());
    if (r.exit_code == 0) break;
    REQUIRE(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("nothing changed"));
    CHECK((r.err.find("No space left on device") != std::string::npos ||
           r.err.find("not enough free space") != std::string::npos));
    CHECK(ten_state(repo) == before);
    CHECK_FALSE(repo.exists("deep"));
    check_store_clean(repo);
    const std::string st = show_json(repo, 1).at("status");
    CHECK((st == "approved" || st == "failed"));
    for (int i = 0; i < k_ten; ++i)
      if (r.err.find(ten_name(i)) != std::string::npos) failed_at.insert(ten_name(i));
    if (r.err.find("new.txt") != std::string::npos) failed_at.insert("new.txt");
    if (r.err.find("not enough free space") != std::string::npos) failed_at.insert("reserve");
    messages += r.err;
    // The room for the records is one amount, and the message names it.
    // When the reserve found nothing free, what was written before it took
    // all the room given, so the boundary lies at least `need` further on:
    // go most of that way in one step (four pages short), then page by page.
    static const std::regex k_lacks{R"(needs about (\d+) KiB[^\n]*, 0 KiB are free)"};
    if (std::smatch m; std::regex_search(r.err, m, k_lacks)) {
      const uint64_t need = std::stoull(m[1].str()) * 1024 / k_page * k_page;
      if (need > 5 * k_page) room += need - 5 * k_page;
    }
  }
  INFO("free when it applied: " << room << "; failed at: " << Catch::Detail::stringify(failed_at) << "\n"
                                << messages);
  KAI_REQUIRE_EXIT(r, 0);
  // The room for the records, and each of the ten files written (nine
  // replaced, one new), was once the write that found the disk full.
  CHECK(failed_at.count("reserve") == 1);
  CHECK(failed_at.size() == 1 + k_ten);
  auto after = ten_state(repo);
  for (int i = 0; i < k_ten - 1; ++i) CHECK(after[ten_name(i)] == fmt::format("new {}\n", i));
  CHECK_FALSE(after[ten_name(k_ten - 1)]);
  CHECK(after["deep/er/new.txt"] == "made\n");
  CHECK(show_json(repo, 1).at("status") == "applied");
  CHECK_FALSE(repo.exists(".kaicoder/reserve"));

  // Undone on a disk that is full again: a rollback needs no new room for the tree.
  const std::string rid = show_json(repo, 1).at("rollback_id");
  disk->leave_free(0);
  Run back = repo.kai_tty({"rollback", rid}, "y");
  INFO(back.all());
  if (back.exit_code != 0) {
    // It may lack room for its own records; then it changed nothing and says so.
    CHECK(back.exit_code == 1);
    CHECK_THAT(back.all(), Contains("nothing changed"));
    CHECK(ten_state(repo) == after);
    disk->leave_free(200 * k_page);
    KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", rid}, "y"), 0);
  }
  CHECK(ten_state(repo) == before);
  CHECK_FALSE(repo.exists("deep"));
}

TEST_CASE("on a real full disk a changeset killed half-applied is undone by the next command, and the reads work",
          "[e2e][faults][enospc][tmpfs][crash]") {
  TempRepo repo;
  auto disk = SmallDisk::over(repo, k_small_disk);
  if (!disk) return;
  fill_ten(repo);
  propose_ten(repo);
  KAI_REQUIRE_EXIT(repo.kai_tty({"approve", "1", "--no-apply"}, "y"), 0);
  const auto before = ten_state(repo);
  Run crashed = repo.kai({"apply", "1"}, "", {{"KAICODER_FAULT", "after-replace:5"}});
  REQUIRE(crashed.killed_by(SIGKILL));
  REQUIRE(ten_state(repo) != before);
  disk->leave_free(0);

  // The reads only report it, and work on the full disk.
  for (const std::vector<std::string>& read : {std::vector<std::string>{"list"}, {"show", "1"}, {"log"}}) {
    Run l = repo.kai(read);
    INFO(l.all());
    CHECK(l.exit_code == 0);
  }
  Run doc = repo.kai({"doctor"});
  INFO(doc.all());
  CHECK_THAT(doc.all(), Contains("half-done"));
  CHECK_THAT(doc.all(), Contains("state dir writes"));
  CHECK(doc.exit_code == 1);  // nothing can be written there
  CHECK(ten_state(repo) != before);

  // The next command that writes undoes it, with not one byte free. Undone,
  // the change gives back the room its new bytes took, which is less than
  // this proposal needs: it fails, and says so.
  Run next = repo.kai({"propose", "--path", "other.txt", "--content-file", "-", "--why", "w"},
                      std::string(64 * k_page, 'x'));
  INFO(next.all());
  CHECK(next.exit_code == 1);
  CHECK_THAT(next.err, Contains("undid the interrupted change of proposal 1"));
  CHECK_THAT(next.err, Contains("No space left on device"));
  CHECK(ten_state(repo) == before);
  check_store_clean(repo);
  CHECK(show_json(repo, 1).at("status") == "approved");

  disk->leave_free(200 * k_page);
  KAI_REQUIRE_EXIT(repo.kai({"apply", "1"}), 0);
  CHECK(ten_state(repo).at(ten_name(0)) == "new 0\n");
}

TEST_CASE("on a real full disk a proposal leaves no staging folder, and one killed is removed by the next command",
          "[e2e][faults][staging][tmpfs]") {
  TempRepo repo{{"f.txt", "old\n"}};
  auto disk = SmallDisk::over(repo, k_small_disk);
  if (!disk) return;
  repo.init();
  auto staged = [&] {
    std::vector<std::string> left = repo.exists(".kaicoder/staging") ? repo.ls(".kaicoder/staging")
                                                                      : std::vector<std::string>{};
    std::erase(left, "live");
    std::erase(left, "next-id");
    return left;
  };
  const std::string big(6 * k_page, 'x');
  uint64_t room = 0;
  Run r;
  for (; room < 100 * k_page; room += k_page) {
    disk->leave_free(room);
    r = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, big);
    INFO("free: " << room << " bytes\n" << r.all());
    if (r.exit_code == 0) break;
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Contains("No space left on device"));
    CHECK(staged().empty());
  }
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(room > 0);
  CHECK(staged().size() == 1);

  // Killed before its record; then the disk is full.
  disk->leave_free(200 * k_page);
  // (Other bytes each time: the same proposal again is the pending one.)
  Run killed = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "w"}, big + "killed",
                        {{"KAICODER_FAULT", "after-payloads"}});
  INFO(killed.all());
  REQUIRE(killed.killed_by(SIGKILL));
  REQUIRE(staged().size() == 2);
  disk->leave_free(0);
  Run next = repo.kai({"propose", "--path", "f.txt", "--content-file", "-", "--why", "again"}, big + "next");
  INFO(next.all());
  CHECK(next.exit_code == 1);  // no room for its own
  CHECK_THAT(next.err, Contains("without a record"));
  CHECK(staged().size() == 1);  // the first proposal, whole
  CHECK(repo.read("f.txt") == "old\n");
}

TEST_CASE("a state dir that cannot be written: doctor fails and says why, writes refuse, reads work",
          "[e2e][faults][readonly]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "a.txt", "--content-file", "-", "--why", "w"}, "new\n"), 0);
  const fs::path state = repo.abs(".kaicoder");
  // Read-only: a read-only bind mount as root (root writes through any
  // mode), the write bits taken off every folder otherwise.
  struct ReadOnly {
    fs::path at;
    bool mounted = false;
    std::vector<fs::path> dirs;
    explicit ReadOnly(fs::path p) : at(std::move(p)) {
      if (::geteuid() == 0) {
        REQUIRE(::mount(at.c_str(), at.c_str(), nullptr, MS_BIND, nullptr) == 0);
        mounted = true;
        REQUIRE(::mount(nullptr, at.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0);
        return;
      }
      dirs.push_back(at);
      for (const auto& e : fs::recursive_directory_iterator(at))
        if (e.is_directory()) dirs.push_back(e.path());
      for (const auto& d : dirs) fs::permissions(d, fs::perms::owner_write, fs::perm_options::remove);
    }
    ~ReadOnly() {
      if (mounted) ::umount2(at.c_str(), MNT_DETACH);
      for (const auto& d : dirs) fs::permissions(d, fs::perms::owner_write, fs::perm_options::add);
    }
  } ro(state);
  const auto tree = repo.tree_snapshot();

  Run doc = repo.kai({"--json", "doctor"});
  INFO(doc.all());
  CHECK(doc.exit_code == 1);
  bool named = false;
  const json report = json_of(doc);  // alive while the loop reads it
  for (const auto& c : report.at("checks"))
    if (c.at("name") == "state dir writes") {
      named = true;
      CHECK(c.at("level") == "fail");
      CHECK_THAT(c.at("detail").get<std::string>(), Contains("cannot write in"));
    }
  CHECK(named);

  // Every command that writes refuses, says why, and changes nothing.
  const std::vector<std::vector<std::string>> writes = {
      {"propose", "--path", "a.txt", "--content-file", "-", "--why", "again"}, {"reject", "1"}, {"apply", "1"}};
  for (const auto& w : writes) {
    Run r = repo.kai(w, "newer\n");
    INFO(r.all());
    CHECK(r.exit_code == 1);
    CHECK((r.err.find("Read-only file system") != std::string::npos ||
           r.err.find("Permission denied") != std::string::npos));
    CHECK_THAT(r.err, Contains("make the state dir writable"));
    CHECK(repo.tree_snapshot() == tree);
  }
  Run a = repo.kai_tty({"approve", "1"}, "y");
  INFO(a.all());
  CHECK(a.exit_code == 1);
  CHECK(repo.read("a.txt") == "old\n");

  // The reads still answer.
  Run l = repo.kai({"list"});
  INFO(l.all());
  CHECK(l.exit_code == 0);
  CHECK_THAT(l.out, Contains("pending"));
  KAI_CHECK_EXIT(repo.kai({"show", "1"}), 0);
  KAI_CHECK_EXIT(repo.kai({"log"}), 0);
  CHECK(show_json(repo, 1).at("status") == "pending");
}
