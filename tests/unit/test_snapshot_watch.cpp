// The snapshot after a run with a file system watch (lib/run/snapshot_watch),
// of either kind (one fanotify mark as root, an inotify watch per folder for
// anyone): it stats only what the kernel saw touched, and still misses
// nothing a run can do to a file — a write deep in the tree, through a hard
// link outside root or (file_system kind; sandboxed runs can make none) one
// made during the run, through a shared mapping, a mode change, a rename
// into the tree or over a file, a truncation, a folder removed or swapped
// for another — and walks the whole tree when the kernel's queue overflowed.
// Each case compares the watched snapshot with a full walk of the same tree
// by a fresh store.

#include "unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <fstream>
#include <string>
#include <vector>

#include "lib/run/snapshot.hpp"
#include "lib/run/snapshot_watch.hpp"
#include "tests/support/tree_changes.hpp"

namespace {
using kai::test::TempDir;
namespace fs = std::filesystem;

kai::SnapshotStore store_in(const TempDir& t) {
  return kai::SnapshotStore{t.path() / ".kaicoder" / "snapshots.git", t.path(), kai::Guardrails{}};
}

// A tree of 40 files, settled: out of the stat cache's racy window, and
// snapshotted once so that the cache holds every file. src/util.c has a
// second name outside root, outside/util-link.
void settle(const TempDir& t, const TempDir& outside) {
  t.git_init();
  t.write(".gitignore", ".kaicoder/\n");
  for (int i = 0; i < 40; ++i)
    t.write("src/m" + std::to_string(i % 4) + "/deep/f" + std::to_string(i) + ".c",
            "int f" + std::to_string(i) + ";\n");
  t.write("src/util.c", "int util;\n");
  REQUIRE(::link((t / "src/util.c").c_str(), (outside / "util-link").c_str()) == 0);
  REQUIRE(store_in(t).take());
}

// A tree and its outside folder, settled and out of the racy window. Made
// eight at a time, so that the wait out of the window (stat data of the
// last second is never cached, ctime included, which no test can set back)
// is paid once for eight cases, not once for each.
struct Settled {
  std::unique_ptr<TempDir> t = std::make_unique<TempDir>(), outside = std::make_unique<TempDir>();
};
Settled settled() {
  static std::vector<Settled> pool;
  if (pool.empty()) {
    pool.resize(8);
    for (auto& s : pool) settle(*s.t, *s.outside);
    ::usleep(1100 * 1000);
  }
  Settled s = std::move(pool.back());
  pool.pop_back();
  return s;
}

using kai::test::paths_of;

using Kind = kai::SnapshotWatch::Kind;

// A watch of the kind asked for, or null (with a warning) where the
// file_system kind cannot be placed.
std::unique_ptr<kai::SnapshotWatch> start_or_warn(const TempDir& t, Kind kind) {
  auto w = kai::SnapshotWatch::start(t.path(), kind);
  if (w && w->kind() != kind) w.reset();
  if (!w) WARN("SKIPPED: no file system watch here (it needs CAP_SYS_ADMIN and inode-number file handles)");
  return w;
}

// A settled tree, a watch (null where there can be none) and the snapshot
// before a run, taken with it.
struct Watched {
  Settled trees = settled();
  TempDir &t = *trees.t, &outside = *trees.outside;
  std::unique_ptr<kai::SnapshotWatch> watch;
  kai::SnapshotStore store = store_in(t);
  std::optional<kai::Snapshot> before;
  explicit Watched(Kind kind) {
    watch = start_or_warn(t, kind);
    if (!watch) return;
    auto b = store.take({}, watch.get());
    REQUIRE(b);
    before = *b;
  }
};

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("with a file system watch the snapshot after a run stats only what was touched, and misses nothing",
          "[snapshot]") {
  const Kind kind = GENERATE(Kind::file_system, Kind::folders);
  CAPTURE(kind == Kind::folders ? "folders" : "file_system");
  Watched w(kind);
  if (!w.watch) return;
  CHECK(w.before->unstatted == 0);  // the first walk stats everything
  std::string want;                 // a path the diff must name
  SECTION("nothing") {}
  SECTION("a write deep in the tree") {
    w.t.write("src/m2/deep/f6.c", "int changed;\n");
    want = "src/m2/deep/f6.c";
  }
  SECTION("a write through a hard link outside root") {
    std::ofstream(w.outside / "util-link", std::ios::app) << "int more;\n";
    want = "src/util.c";
  }
  // The folders kind cannot see this one: sandboxed runs may make no new
  // hard link (test_sandbox_links.cpp).
  SECTION("a write through a hard link made during the run in a new folder") {
    if (kind == Kind::folders) return;
    w.t.mkdir("new");
    REQUIRE(::link((w.t / "src/m1/deep/f5.c").c_str(), (w.t / "new/f5-link").c_str()) == 0);
    std::ofstream(w.t / "new/f5-link", std::ios::app) << "int more;\n";
    want = "src/m1/deep/f5.c";
  }
  SECTION("a write through a shared mapping") {
    int fd = ::open((w.t / "src/m3/deep/f7.c").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    void* m = ::mmap(nullptr, 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REQUIRE(m != MAP_FAILED);
    static_cast<char*>(m)[0] = 'I';
    ::munmap(m, 4);
    ::close(fd);
    want = "src/m3/deep/f7.c";
  }
  SECTION("a mode change") {
    REQUIRE(::chmod((w.t / "src/m0/deep/f4.c").c_str(), 0755) == 0);
    want = "src/m0/deep/f4.c";
  }
  SECTION("a rename into the tree") {
    w.outside.write("moved.c", "int moved;\n");
    fs::rename(w.outside / "moved.c", w.t / "src/m1/deep/moved.c");
    want = "src/m1/deep/moved.c";
  }
  SECTION("a write to a file replaced by a rename in its folder") {
    w.t.write("src/m0/deep/tmp.c", "int swapped;\n");
    fs::rename(w.t / "src/m0/deep/tmp.c", w.t / "src/m0/deep/f0.c");
    want = "src/m0/deep/f0.c";
  }
  SECTION("a truncation by path") {
    REQUIRE(::truncate((w.t / "src/m1/deep/f1.c").c_str(), 2) == 0);
    want = "src/m1/deep/f1.c";
  }
  SECTION("a folder removed and made again") {
    fs::remove_all(w.t / "src/m3");
    w.t.write("src/m3/deep/f3.c", "int again;\n");
    want = "src/m3/deep/f7.c";
  }
  SECTION("a folder swapped for another holding the same names") {
    fs::rename(w.t / "src/m2", w.outside / "m2");
    for (int i = 2; i < 40; i += 4)
      w.t.write("src/m2/deep/f" + std::to_string(i) + ".c", "int g" + std::to_string(i) + ";\n");
    want = "src/m2/deep/f2.c";
  }
  auto after = w.store.take({}, w.watch.get());
  REQUIRE(after);
  CHECK(after->unstatted > 0);  // the watch's word was taken
  auto full = store_in(w.t).take();
  REQUIRE(full);
  CHECK(full->unstatted == 0);
  CHECK(after->tree == full->tree);
  CHECK(after->dirs == full->dirs);
  auto d = w.store.diff(*w.before, *after);
  REQUIRE(d);
  if (want.empty())
    CHECK(d->empty());
  else
    CHECK(has(paths_of(*d), want));
}

TEST_CASE("when the watch's queue overflowed the snapshot walks the whole tree", "[snapshot]") {
  const Kind kind = GENERATE(Kind::file_system, Kind::folders);
  Watched w(kind);
  if (!w.watch) return;
  // More events than the kernel queues, in a watched folder, then the
  // change: its event is lost.
  long queued = 16384;
  std::ifstream(kind == Kind::folders ? "/proc/sys/fs/inotify/max_queued_events"
                                      : "/proc/sys/fs/fanotify/max_queued_events") >>
      queued;
  for (long i = 0; i <= queued; ++i) {
    const fs::path p = w.t / "src" / ("n" + std::to_string(i));
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
    REQUIRE(::unlink(p.c_str()) == 0);
  }
  w.t.write("src/m2/deep/f6.c", "int changed;\n");
  auto after = w.store.take({}, w.watch.get());
  REQUIRE(after);
  CHECK_FALSE(w.watch->sound());
  CHECK(after->unstatted == 0);
  auto d = w.store.diff(*w.before, *after);
  REQUIRE(d);
  CHECK(paths_of(*d) == std::vector<std::string>{"src/m2/deep/f6.c"});
  // And the next snapshot with that watch does not trust it either.
  auto again = w.store.take({}, w.watch.get());
  REQUIRE(again);
  CHECK(again->unstatted == 0);
}

TEST_CASE("a watch started after the snapshot before a run is not taken at its word", "[snapshot]") {
  const Kind kind = GENERATE(Kind::file_system, Kind::folders);
  Settled trees = settled();
  TempDir& t = *trees.t;
  auto store = store_in(t);
  auto before = store.take();
  REQUIRE(before);
  t.write("src/m2/deep/f6.c", "int changed;\n");  // before the watch began: it saw nothing
  auto watch = start_or_warn(t, kind);
  if (!watch) return;
  auto after = store.take({}, watch.get());
  REQUIRE(after);
  CHECK(after->unstatted == 0);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  CHECK(paths_of(*d) == std::vector<std::string>{"src/m2/deep/f6.c"});
}
