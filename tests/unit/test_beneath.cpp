// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <cstdint>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <string_view>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "lib/paths/beneath.hpp"
#include "lib/paths/paths.hpp"
#include "lib/util/fs.hpp"

using kai::CreateDirs;
using kai::Dir;
using kai::Errc;
using kai::test::mode_of;
using kai::test::TempDir;
namespace fs = std::filesystem;

namespace {

using OpenFn = kai::Result<Dir> (*)(const fs::path&, std::string_view, CreateDirs);

// Both ways of opening a parent must behave the same; every test that opens
// one runs once with each.
struct Opener {
  const char* name;
  OpenFn fn;
};
constexpr Opener k_openers[] = {{"openat2", kai::open_parent}, {"walk", kai::open_parent_walk}};

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

// T/root with T/outside next to it, holding one file.
struct RootAndOutside {
  TempDir t;
  fs::path root = t / "root";
  fs::path out = t / "outside";
  RootAndOutside() {
    t.mkdir("root");
    t.write("outside/keep.txt", "outside\n");
  }
};

}  // namespace

TEST_CASE("open_parent opens existing folders and reads beneath them", "[beneath]") {
  for (const Opener& o : k_openers) {
    DYNAMIC_SECTION(o.name) {
      RootAndOutside tr;
      tr.t.write("root/src/lib/a.c", "int a;\n");
      ::chmod((tr.root / "src/lib/a.c").c_str(), 0640);
      kai::Result<Dir> d = o.fn(tr.root, "src/lib/a.c", CreateDirs::no);
      REQUIRE(d.ok());
      kai::Result<kai::FileState> st = kai::read_at(*d, "a.c");
      REQUIRE(st.ok());
      CHECK(st->exists);
      CHECK(st->regular);
      CHECK(st->bytes == "int a;\n");
      CHECK(st->mode == 0640);
      CHECK(st->nlink == 1);

      kai::Result<Dir> top = o.fn(tr.root, "top.txt", CreateDirs::no);
      REQUIRE(top.ok());
      kai::Result<kai::FileState> missing = kai::read_at(*top, "top.txt");
      REQUIRE(missing.ok());
      CHECK_FALSE(missing->exists);
    }
  }
}

TEST_CASE("open_parent creates missing folders only when asked", "[beneath]") {
  for (const Opener& o : k_openers) {
    DYNAMIC_SECTION(o.name) {
      RootAndOutside tr;
      kai::Result<Dir> no = o.fn(tr.root, "a/b/c/f.txt", CreateDirs::no);
      REQUIRE_FALSE(no.ok());
      CHECK(no.error().code == Errc::conflict);
      CHECK_FALSE(tr.t.exists("root/a"));

      kai::Result<Dir> yes = o.fn(tr.root, "a/b/c/f.txt", CreateDirs::yes);
      REQUIRE(yes.ok());
      CHECK(fs::is_directory(tr.root / "a/b/c"));
      REQUIRE(kai::write_exclusive_at(*yes, "f.txt", "hi\n", 0644).ok());
      CHECK(tr.t.read("root/a/b/c/f.txt") == "hi\n");
    }
  }
}

TEST_CASE("open_parent refuses a symlinked folder, inside or outside the root", "[beneath]") {
  for (const Opener& o : k_openers) {
    DYNAMIC_SECTION(o.name) {
      RootAndOutside tr;
      tr.t.mkdir("root/src");
      tr.t.symlink("root/in", "src");
      tr.t.symlink("root/out", tr.out.string());
      tr.t.symlink("root/dangling", "nowhere");
      tr.t.write("root/file", "x");
      for (CreateDirs c : {CreateDirs::no, CreateDirs::yes}) {
        for (std::string_view rel : {"in/x", "out/x", "out/keep.txt", "out/new/x", "dangling/x"}) {
          INFO(rel);
          kai::Result<Dir> d = o.fn(tr.root, rel, c);
          REQUIRE_FALSE(d.ok());
          CHECK(d.error().code == Errc::denied);
        }
        kai::Result<Dir> f = o.fn(tr.root, "file/x", c);
        REQUIRE_FALSE(f.ok());
        CHECK(f.error().code == Errc::usage);
      }
      CHECK(entries(tr.out) == 1);
      CHECK_FALSE(tr.t.exists("root/nowhere"));
    }
  }
}

TEST_CASE("open_parent refuses paths that are not plain and relative", "[beneath]") {
  RootAndOutside tr;
  tr.t.mkdir("root/a");
  for (std::string_view rel :
       {"../outside/keep.txt", "/etc/passwd", "a/../../outside/x", "a/./x", "a//x", "", "a/", "./x", ".."}) {
    INFO(rel);
    for (const Opener& o : k_openers) {
      kai::Result<Dir> d = o.fn(tr.root, rel, CreateDirs::yes);
      REQUIRE_FALSE(d.ok());
      CHECK(d.error().code == Errc::denied);
    }
  }
  CHECK(entries(tr.out) == 1);
}

TEST_CASE("a folder swapped for a symlink after resolve cannot lead out of the root", "[beneath]") {
  for (const Opener& o : k_openers) {
    for (CreateDirs c : {CreateDirs::no, CreateDirs::yes}) {
      DYNAMIC_SECTION(o.name << (c == CreateDirs::yes ? " creating" : "")) {
        RootAndOutside tr;
        tr.t.mkdir("root/d/e/g");
        kai::Result<kai::RootPath> p = kai::resolve(tr.root, tr.root, "d/e/g/f.txt");
        REQUIRE(p.ok());
        REQUIRE(p->rel == "d/e/g/f.txt");

        // Swap: the checked folder becomes a symlink to outside, where the
        // rest of the path is waiting.
        fs::rename(tr.root / "d", tr.root / "d.old");
        tr.t.symlink("root/d", tr.out.string());
        tr.t.mkdir("outside/e/g");

        kai::Result<Dir> d = o.fn(tr.root, p->rel, c);
        REQUIRE_FALSE(d.ok());
        CHECK(d.error().code == Errc::denied);
        CHECK(entries(tr.out / "e/g") == 0);

        // A middle folder swapped instead, for a symlink that stays inside
        // the root but leads into .git: refused all the same.
        fs::remove(tr.root / "d");
        fs::rename(tr.root / "d.old", tr.root / "d");
        tr.t.mkdir("root/.git/g");
        fs::remove_all(tr.root / "d/e");
        tr.t.symlink("root/d/e", "../.git");
        kai::Result<Dir> d2 = o.fn(tr.root, p->rel, c);
        REQUIRE_FALSE(d2.ok());
        CHECK(d2.error().code == Errc::denied);
        CHECK(entries(tr.root / ".git/g") == 0);

        // And the last folder of the parent, too.
        fs::remove(tr.root / "d/e");
        tr.t.mkdir("root/d/e");
        tr.t.symlink("root/d/e/g", "../../.git/g");
        kai::Result<Dir> d3 = o.fn(tr.root, p->rel, c);
        REQUIRE_FALSE(d3.ok());
        CHECK(d3.error().code == Errc::denied);
        CHECK(entries(tr.root / ".git/g") == 0);
      }
    }
  }
}

TEST_CASE("read_at never follows a symlink and reports other kinds of file", "[beneath]") {
  RootAndOutside tr;
  tr.t.write("root/a.txt", "a");
  tr.t.symlink("root/ln", "a.txt");
  tr.t.symlink("root/out", (tr.out / "keep.txt").string());
  tr.t.symlink("root/dangling", "nowhere");
  tr.t.mkdir("root/sub");
  REQUIRE(::mkfifo((tr.root / "fifo").c_str(), 0600) == 0);
  kai::Result<Dir> d = kai::open_parent(tr.root, "a.txt", CreateDirs::no);
  REQUIRE(d.ok());
  for (std::string_view name : {"ln", "out", "dangling"}) {
    INFO(name);
    kai::Result<kai::FileState> st = kai::read_at(*d, name);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::denied);
  }
  for (std::string_view name : {"sub", "fifo"}) {
    INFO(name);
    kai::Result<kai::FileState> st = kai::read_at(*d, name);
    REQUIRE(st.ok());
    CHECK(st->exists);
    CHECK_FALSE(st->regular);
    CHECK(st->bytes.empty());
  }
  for (std::string_view name : {"a/b", "..", ".", ""}) {
    INFO(name);
    kai::Result<kai::FileState> st = kai::read_at(*d, name);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().code == Errc::usage);
  }
}

TEST_CASE("read_at reports the link count of a hard-linked file", "[beneath]") {
  RootAndOutside tr;
  tr.t.write("root/a.txt", "a");
  tr.t.hardlink("root/b.txt", "root/a.txt");
  kai::Result<Dir> d = kai::open_parent(tr.root, "a.txt", CreateDirs::no);
  REQUIRE(d.ok());
  kai::Result<kai::FileState> st = kai::read_at(*d, "b.txt");
  REQUIRE(st.ok());
  CHECK(st->nlink == 2);
}

TEST_CASE("write_exclusive_at never writes through a name that exists", "[beneath]") {
  RootAndOutside tr;
  tr.t.write("root/taken", "old");
  tr.t.symlink("root/ln", (tr.out / "keep.txt").string());
  tr.t.symlink("root/dangling", (tr.out / "planted.txt").string());
  kai::Result<Dir> d = kai::open_parent(tr.root, "x", CreateDirs::no);
  REQUIRE(d.ok());
  for (std::string_view name : {"taken", "ln", "dangling"}) {
    INFO(name);
    kai::Status s = kai::write_exclusive_at(*d, name, "new", 0644);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == Errc::conflict);
  }
  CHECK(tr.t.read("root/taken") == "old");
  CHECK(tr.t.read("outside/keep.txt") == "outside\n");
  CHECK_FALSE(tr.t.exists("outside/planted.txt"));

  REQUIRE(kai::write_exclusive_at(*d, "backup", "bytes", 0600).ok());
  CHECK(tr.t.read("root/backup") == "bytes");
  CHECK(mode_of(tr.root / "backup") == 0600);
}

TEST_CASE("replace_at swaps the whole file and keeps the requested mode", "[beneath]") {
  RootAndOutside tr;
  tr.t.write("root/src/run.sh", "old\n");
  kai::Result<Dir> d = kai::open_parent(tr.root, "src/run.sh", CreateDirs::no);
  REQUIRE(d.ok());
  REQUIRE(kai::replace_at(*d, "run.sh", "new\n", 0755).ok());
  CHECK(tr.t.read("root/src/run.sh") == "new\n");
  CHECK(mode_of(tr.root / "src/run.sh") == 0755);
  REQUIRE(kai::replace_at(*d, "created.txt", "", 0644).ok());
  CHECK(tr.t.read("root/src/created.txt").empty());
  CHECK(entries(tr.root / "src") == 2);  // no temp file left behind
}

TEST_CASE("replace_at refuses a symlink and breaks a hard link instead of writing through it", "[beneath]") {
  RootAndOutside tr;
  tr.t.symlink("root/ln", (tr.out / "keep.txt").string());
  tr.t.hardlink("root/hard", (tr.out / "keep.txt").string());
  tr.t.mkdir("root/folder");
  kai::Result<Dir> d = kai::open_parent(tr.root, "x", CreateDirs::no);
  REQUIRE(d.ok());
  kai::Status s = kai::replace_at(*d, "ln", "evil", 0644);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == Errc::denied);
  kai::Status f = kai::replace_at(*d, "folder", "x", 0644);
  REQUIRE_FALSE(f.ok());
  CHECK(f.error().code == Errc::conflict);

  REQUIRE(kai::replace_at(*d, "hard", "inside only", 0644).ok());
  CHECK(tr.t.read("root/hard") == "inside only");
  CHECK(tr.t.read("outside/keep.txt") == "outside\n");
  CHECK(entries(tr.root) == 3);
}

TEST_CASE("replace_at handles a name at the length limit", "[beneath]") {
  RootAndOutside tr;
  std::string name(255, 'n');
  kai::Result<Dir> d = kai::open_parent(tr.root, name, CreateDirs::no);
  REQUIRE(d.ok());
  REQUIRE(kai::replace_at(*d, name, "one", 0644).ok());
  REQUIRE(kai::replace_at(*d, name, "two", 0644).ok());
  CHECK(tr.t.read("root/" + name) == "two");
  CHECK(entries(tr.root) == 1);
}

TEST_CASE("unlink_at removes a file, tolerates a missing one and refuses a folder", "[beneath]") {
  RootAndOutside tr;
  tr.t.write("root/a.txt", "a");
  tr.t.mkdir("root/sub");
  tr.t.symlink("root/ln", (tr.out / "keep.txt").string());
  kai::Result<Dir> d = kai::open_parent(tr.root, "a.txt", CreateDirs::no);
  REQUIRE(d.ok());
  REQUIRE(kai::unlink_at(*d, "a.txt").ok());
  CHECK_FALSE(tr.t.exists("root/a.txt"));
  CHECK(kai::unlink_at(*d, "a.txt").ok());
  kai::Status s = kai::unlink_at(*d, "sub");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == Errc::conflict);
  // Removing a symlink removes the link, never what it points at.
  REQUIRE(kai::unlink_at(*d, "ln").ok());
  CHECK(tr.t.read("outside/keep.txt") == "outside\n");
}

TEST_CASE("Dir owns its descriptor and hands it over on move", "[beneath]") {
  RootAndOutside tr;
  kai::Result<Dir> d = kai::open_parent(tr.root, "x", CreateDirs::no);
  REQUIRE(d.ok());
  int fd = d->fd();
  CHECK(fd >= 0);
  Dir moved(std::move(*d));
  CHECK(moved.fd() == fd);
  CHECK(d->fd() == -1);
  Dir other;
  other = std::move(moved);
  CHECK(other.fd() == fd);
  CHECK(::fcntl(fd, F_GETFD) != -1);
}

namespace {

// Runs `body` in a forked child with a mount namespace of its own, so that
// mounts made there vanish with it and never touch the host. Returns the
// child's exit code: 0 when every check in `body` held, the number of the
// first check that failed otherwise, or 77 when mounting is not permitted.
template <class Body>
int in_mount_namespace(Body body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNS) != 0 || ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(77);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a bind mount inside the root is never crossed, by either way of opening", "[beneath][mount]") {
  TempDir t;
  t.write("root/a.txt", "inside\n");
  t.mkdir("root/sub");
  t.write("root/planted.txt", "inside\n");
  t.write("outside/secret.txt", "outside\n");
  t.mkdir("outside/dir");
  const fs::path root = t / "root";
  int rc = in_mount_namespace([&]() -> int {
    if (::mount((t / "outside/dir").c_str(), (root / "sub").c_str(), nullptr, MS_BIND, nullptr) != 0) return 77;
    if (::mount((t / "outside/secret.txt").c_str(), (root / "planted.txt").c_str(), nullptr, MS_BIND, nullptr) != 0)
      return 77;
    int check = 0;
    for (const Opener& o : k_openers) {
      // A write beneath the mounted folder is refused before anything is made.
      ++check;
      auto d = o.fn(root, "sub/new.txt", CreateDirs::no);
      if (d || d.error().code != Errc::denied || d.error().message.find("mount point") == std::string::npos)
        return check;
      ++check;
      auto made = o.fn(root, "sub/deeper/new.txt", CreateDirs::yes);
      if (made || made.error().code != Errc::denied) return check;
      ++check;
      if (fs::exists(t / "outside/dir/deeper")) return check;
    }
    // A file mounted over a name in root is not read through that name.
    ++check;
    auto top = kai::open_parent(root, "planted.txt", CreateDirs::no);
    if (!top) return check;
    ++check;
    auto st = kai::read_at(*top, "planted.txt");
    if (st || st.error().code != Errc::denied) return check;
    // The rest of the root still works.
    ++check;
    auto a = kai::read_at(*top, "a.txt");
    if (!a || a->bytes != "inside\n") return check;
    return 0;
  });
  if (rc == 77) {
    WARN("SKIPPED: mounting is not permitted here (needs CAP_SYS_ADMIN in a mount namespace)");
    return;
  }
  INFO("first failed check in the child: " << rc);
  CHECK(rc == 0);
  CHECK_FALSE(fs::exists(t / "outside/dir/new.txt"));
}

TEST_CASE("read_all reads a file whole, a pipe whole, and never more than max + 1 bytes", "[beneath][read_all]") {
  TempDir t;
  std::string big(200000, 'x');
  for (size_t i = 0; i < big.size(); i += 97) big[i] = static_cast<char>('a' + i % 26);
  t.write("big", big);
  t.write("empty", "");
  auto read = [&](const char* name, size_t max) {
    int fd = ::open((t.path() / name).c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    auto r = kai::read_all(fd, max);
    ::close(fd);
    REQUIRE(r);
    return *r;
  };
  CHECK(read("big", SIZE_MAX - 1) == big);
  CHECK(read("big", big.size()) == big);
  // One byte past the limit says the file is too long; no more is read.
  CHECK(read("big", 1000) == big.substr(0, 1001));
  CHECK(read("big", 0) == big.substr(0, 1));
  CHECK(read("empty", SIZE_MAX - 1).empty());

  // A pipe says no size: read in steps until its end.
  int p[2];
  REQUIRE(::pipe(p) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(p[0]);
    bool ok = kai::write_all(p[1], big);
    ::_exit(ok ? 0 : 1);
  }
  ::close(p[1]);
  auto piped = kai::read_all(p[0], SIZE_MAX - 1);
  ::close(p[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(piped);
  CHECK(*piped == big);
}

TEST_CASE("read_owned reads a file of kaicoder's whole, at one read past its size, and refuses one over its bound",
          "[beneath]") {
  TempDir t;
  const std::string bytes(5000, 'x');
  t.write("f", bytes);
  auto all = kai::read_owned(t.path() / "f");
  REQUIRE(all);
  CHECK(*all == bytes);
  auto at_bound = kai::read_owned(t.path() / "f", 5000);
  REQUIRE(at_bound);
  CHECK(at_bound->size() == 5000);
  auto over = kai::read_owned(t.path() / "f", 4999);
  REQUIRE_FALSE(over);
  CHECK(over.error().code == Errc::io);
  CHECK(over.error().message.find("larger than 4999 bytes") != std::string::npos);
  t.write("empty", "");
  auto empty = kai::read_owned(t.path() / "empty");
  REQUIRE(empty);
  CHECK(empty->empty());
  // A file that says it has no size (as /proc's do) is read to its end.
  int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto proc = kai::read_all(fd);
  ::close(fd);
  REQUIRE(proc);
  CHECK(proc->find("VmRSS") != std::string::npos);
}

TEST_CASE("write_owned writes its pieces one after another, and check_owned judges a file as read_owned would",
          "[beneath]") {
  TempDir t;
  const std::string big(100000, 'b');
  const std::string_view pieces[] = {"head\n", "", big, "tail\n"};
  REQUIRE(kai::write_owned(t.path() / "f", pieces, 0640).ok());
  CHECK(t.read("f") == "head\n" + big + "tail\n");
  CHECK(mode_of(t.path() / "f") == 0640);
  CHECK(entries(t.path()) == 1);  // no temp file left behind
  CHECK(kai::check_owned(t.path() / "f").ok());
  CHECK(kai::check_owned(t.path() / "missing").error().code == Errc::not_found);
  fs::create_hard_link(t.path() / "f", t.path() / "g");
  CHECK(kai::check_owned(t.path() / "f").error().code == Errc::denied);
  fs::create_symlink(t.path() / "f", t.path() / "link");
  CHECK(kai::check_owned(t.path() / "link").error().code == Errc::denied);
  CHECK(kai::check_owned(t.path()).error().code == Errc::denied);  // not a regular file
}

TEST_CASE("write_all writes thousands of pieces in order, past the pieces one call takes", "[beneath]") {
  TempDir t;
  std::vector<std::string> lines;
  std::vector<std::string_view> pieces;
  std::string want;
  for (int i = 0; i < 3000; ++i) lines.push_back("line " + std::to_string(i));
  for (const auto& l : lines) {
    pieces.push_back(l);
    pieces.push_back("");
    pieces.push_back("\n");
    want += l + "\n";
  }
  REQUIRE(kai::write_file_atomic(t.path() / "f", pieces, 0600).ok());
  CHECK(t.read("f") == want);
}

TEST_CASE("overwrite_in_place writes only a regular file of this user with one name, judged by what it opened",
          "[beneath][fs]") {
  TempDir d;
  d.write("own", "old bytes of a longer pointer\n");
  SECTION("a regular file of its own: rewritten where it is, the old tail cut") {
    struct stat before {};
    REQUIRE(::stat((d / "own").c_str(), &before) == 0);
    auto r = kai::overwrite_in_place(d / "own", "new\n", 0600);
    REQUIRE(r);
    CHECK(*r);
    CHECK(d.read("own") == "new\n");
    struct stat after {};
    REQUIRE(::stat((d / "own").c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);
    CHECK((after.st_mode & 07777) == 0600);
  }
  SECTION("nothing there: false, nothing made") {
    auto r = kai::overwrite_in_place(d / "missing", "new\n");
    REQUIRE(r);
    CHECK_FALSE(*r);
    CHECK_FALSE(fs::exists(d / "missing"));
  }
  SECTION("a symlink: false, and what it points at is untouched") {
    fs::create_symlink(d / "own", d / "link");
    auto r = kai::overwrite_in_place(d / "link", "new\n");
    REQUIRE(r);
    CHECK_FALSE(*r);
    CHECK(d.read("own") == "old bytes of a longer pointer\n");
  }
  SECTION("a file with a second name: false, both names keep their bytes") {
    REQUIRE(::link((d / "own").c_str(), (d / "second").c_str()) == 0);
    auto r = kai::overwrite_in_place(d / "own", "new\n");
    REQUIRE(r);
    CHECK_FALSE(*r);
    CHECK(d.read("second") == "old bytes of a longer pointer\n");
  }
  SECTION("a FIFO, with or without a reader: false, and the open never hangs") {
    REQUIRE(::mkfifo((d / "fifo").c_str(), 0600) == 0);
    auto r = kai::overwrite_in_place(d / "fifo", "new\n");
    REQUIRE(r);
    CHECK_FALSE(*r);
    const int reader = ::open((d / "fifo").c_str(), O_RDONLY | O_NONBLOCK);
    REQUIRE(reader >= 0);
    auto with_reader = kai::overwrite_in_place(d / "fifo", "new\n");
    char got[8];
    const ssize_t n = ::read(reader, got, sizeof got);
    ::close(reader);
    REQUIRE(with_reader);
    CHECK_FALSE(*with_reader);
    CHECK(n <= 0);  // nothing was written into it
  }
  SECTION("another user's file: false, its bytes kept (as root, which may open it)") {
    if (::geteuid() == 0) {
      REQUIRE(::chown((d / "own").c_str(), 65534, 65534) == 0);
      auto r = kai::overwrite_in_place(d / "own", "new\n");
      REQUIRE(r);
      CHECK_FALSE(*r);
      CHECK(d.read("own") == "old bytes of a longer pointer\n");
    } else {
      WARN("not root: another user's file cannot be made here");
    }
  }
  SECTION("a folder: false") {
    fs::create_directory(d / "folder");
    auto r = kai::overwrite_in_place(d / "folder", "new\n");
    REQUIRE(r);
    CHECK_FALSE(*r);
  }
}
