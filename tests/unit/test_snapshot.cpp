// Snapshots of the working tree for undoing runs: what goes in, what stays
// out, diffs between two snapshots, what keep() makes independent of the
// user's repository, retention, and that the user's git state is only read.

#include "unit/temp_dir.hpp"

#include <cstdio>
#include <map>
#include <sys/stat.h>

#include "lib/git.hpp"
#include "lib/snapshot.hpp"

namespace {
using kai::test::TempDir;
namespace fs = std::filesystem;

std::string sh(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

const char* k_git = "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main";

void git(const TempDir& t, const std::string& args) { sh("cd '" + t.path().string() + "' && " + k_git + " " + args + " >/dev/null 2>&1"); }

kai::SnapshotStore store_of(const TempDir& t) {
  return kai::SnapshotStore{t.path() / ".kaicoder" / "snapshots.git", t.path(), kai::Guardrails{}};
}

// path → "mode blob" of the snapshot's tree, read with git itself from
// kaicoder's store plus the user's objects (subtrees equal to the user's are
// only there until keep() copies them).
std::map<std::string, std::string> listing(const TempDir& t, const kai::Snapshot& s) {
  std::string text = sh("GIT_ALTERNATE_OBJECT_DIRECTORIES='" + (t.path() / ".git/objects").string() + "' git --git-dir='" + (t.path() / ".kaicoder/snapshots.git").string() +
                        "' --work-tree=/nonexistent -c safe.directory='*' ls-tree -r --full-tree " + s.tree +
                        " 2>/dev/null || true");
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    // "100644 blob <id>\t<path>"
    out[line.substr(tab + 1)] = line.substr(0, 6) + " " + line.substr(12, tab - 12);
  }
  return out;
}

void seed_repo(TempDir& t) {
  t.git_init();
  t.write("a.txt", "alpha\n");
  t.write("src/deep/b.txt", "beta\n");
  t.write("run.sh", "#!/bin/sh\n");
  ::chmod((t / "run.sh").c_str(), 0755);
  t.write(".gitignore", "*.log\n.kaicoder/\n");
  t.write("kaicoder.toml", "");
  git(t, "add -A");
  git(t, "commit -q -m seed");
  t.write("untracked/u.txt", "you\n");
  t.write("ignored.log", "noise\n");
  t.write(".kaicoder/staging/x", "state\n");
  t.write("KAI-CODER-CHANGELOG.md", "# log\n");
  t.write("a.txt.bak-kaicoder-20260709T142530Z", "old\n");
  t.write(".env", "TOKEN=s3cret\n");
}

}  // namespace

TEST_CASE("a snapshot holds tracked and untracked files, not ignored ones or kaicoder's own", "[snapshot]") {
  TempDir t;
  seed_repo(t);
  std::string index_before = t.read(".git/index");
  std::string refs_before = sh("cd '" + t.path().string() + "' && git for-each-ref; git stash list");
  auto s = store_of(t).take();
  REQUIRE(s);
  CHECK(s->git);
  auto l = listing(t, *s);
  CHECK(l.size() == 5);
  CHECK(l["a.txt"] == "100644 " + kai::blob_id("alpha\n"));
  CHECK(l["src/deep/b.txt"] == "100644 " + kai::blob_id("beta\n"));
  CHECK(l["run.sh"] == "100755 " + kai::blob_id("#!/bin/sh\n"));
  CHECK(l["untracked/u.txt"] == "100644 " + kai::blob_id("you\n"));
  CHECK(l.count(".gitignore") == 1);
  for (const char* out : {"ignored.log", "kaicoder.toml", "KAI-CODER-CHANGELOG.md", ".env",
                          "a.txt.bak-kaicoder-20260709T142530Z", ".kaicoder/staging/x"})
    CHECK(l.count(out) == 0);
  // Clean tracked files were taken from the index, not read again.
  CHECK(s->files == 5);
  CHECK(s->hashed == 1);
  // The user's git state is read, never written.
  CHECK(t.read(".git/index") == index_before);
  CHECK(sh("cd '" + t.path().string() + "' && git for-each-ref; git stash list") == refs_before);
}

TEST_CASE("a diff of two snapshots names created, changed, deleted and re-moded files", "[snapshot]") {
  TempDir t;
  seed_repo(t);
  t.write("private.txt", "mine\n");
  ::chmod((t / "private.txt").c_str(), 0600);
  auto store = store_of(t);
  auto before = store.take();
  REQUIRE(before);
  t.write("a.txt", "ALPHA\n");
  fs::remove(t / "src/deep/b.txt");
  t.write("new/deeper/c.txt", "gamma\n");
  ::chmod((t / "run.sh").c_str(), 0644);
  t.write("private.txt", "still mine\n");
  t.write("ignored.log", "more noise\n");
  auto after = store.take();
  REQUIRE(after);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  REQUIRE(d->size() == 5);
  const auto& c = *d;
  CHECK(c[0].rel == "a.txt");
  CHECK(c[0].before.blob == kai::blob_id("alpha\n"));
  CHECK(c[0].after.blob == kai::blob_id("ALPHA\n"));
  CHECK(c[1].rel == "new/deeper/c.txt");
  CHECK_FALSE(c[1].before.exists);
  CHECK(c[1].after.exists);
  CHECK(c[2].rel == "private.txt");
  CHECK(c[2].before.mode == 0600u);
  CHECK(c[2].after.mode == 0600u);
  CHECK(c[3].rel == "run.sh");
  CHECK(c[3].before.mode == 0755u);
  CHECK(c[3].after.mode == 0644u);
  CHECK(c[3].before.blob == c[3].after.blob);
  CHECK(c[4].rel == "src/deep/b.txt");
  CHECK(c[4].before.exists);
  CHECK_FALSE(c[4].after.exists);
  for (const auto& x : c) CHECK(x.regular);
}

TEST_CASE("a kept snapshot gives its before-bytes back without the user's objects", "[snapshot]") {
  TempDir t;
  seed_repo(t);
  auto store = store_of(t);
  auto before = store.take();
  REQUIRE(before);
  REQUIRE(store.hold(*before, "1"));
  t.write("a.txt", "ALPHA\n");
  fs::remove(t / "untracked/u.txt");
  auto after = store.take();
  REQUIRE(after);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  REQUIRE(store.hold(*before, "2"));
  CHECK(*store.pending() == std::vector<std::string>{"1", "2"});
  REQUIRE(store.keep(*before, *d, "20260709T142530Z", "1", 50));
  CHECK(*store.pending() == std::vector<std::string>{"2"});
  REQUIRE(store.release("2"));
  CHECK(store.pending()->empty());
  auto names = store.names();
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"20260709T142530Z"});
  // The user's repository vanishing (or a gc in it) cannot lose those bytes.
  fs::remove_all(t / ".git");
  auto a = store.blob("20260709T142530Z", kai::blob_id("alpha\n"));
  REQUIRE(a);
  CHECK(*a == "alpha\n");
  auto u = store.blob("20260709T142530Z", kai::blob_id("you\n"));
  REQUIRE(u);
  CHECK(*u == "you\n");
  auto missing = store.blob("20260709T142530Z", kai::blob_id("never stored\n"));
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == kai::Errc::conflict);
}

TEST_CASE("retention keeps the newest snapshots and prunes the rest with their objects", "[snapshot]") {
  TempDir t;
  t.git_init();
  auto store = store_of(t);
  std::vector<std::string> ids = {"20260709T142530Z", "20260709T142530Z-2", "20260709T142531Z"};
  std::vector<std::string> texts;
  for (size_t i = 0; i < ids.size(); ++i) {
    texts.push_back("version " + std::to_string(i) + "\n");
    t.write("f.txt", texts.back());
    auto before = store.take();
    REQUIRE(before);
    t.write("f.txt", "changed\n");
    auto after = store.take();
    REQUIRE(after);
    auto d = store.diff(*before, *after);
    REQUIRE(d);
    REQUIRE(store.keep(*before, *d, ids[i], std::to_string(i), 2));
  }
  auto names = store.names();
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{ids[1], ids[2]});
  auto pruned = store.blob(ids[0], kai::blob_id(texts[0]));
  REQUIRE_FALSE(pruned);
  CHECK(pruned.error().code == kai::Errc::not_found);
  CHECK_FALSE(fs::exists(t / ".kaicoder/snapshots.git/objects" / kai::blob_id(texts[0]).substr(0, 2) /
                         kai::blob_id(texts[0]).substr(2)));
  auto kept = store.blob(ids[2], kai::blob_id(texts[2]));
  REQUIRE(kept);
  CHECK(*kept == texts[2]);
}

TEST_CASE("a root that is not a git work tree is snapshotted by walking it", "[snapshot]") {
  TempDir t;
  t.write("a.txt", "alpha\n");
  t.write("x/y/z.txt", "zed\n");
  t.write(".kaicoder/lock", "");
  t.write("KAI-CODER-CHANGELOG.md", "# log\n");
  t.symlink("link", "a.txt");
  auto store = store_of(t);
  auto before = store.take();
  REQUIRE(before);
  CHECK_FALSE(before->git);
  auto l = listing(t, *before);
  CHECK(l.size() == 3);
  CHECK(l["x/y/z.txt"] == "100644 " + kai::blob_id("zed\n"));
  CHECK(l["link"] == "120000 " + kai::blob_id("a.txt"));
  t.write("x/y/z.txt", "ZED\n");
  fs::remove(t / "link");
  auto after = store.take();
  REQUIRE(after);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  REQUIRE(d->size() == 2);
  CHECK((*d)[0].rel == "link");
  CHECK_FALSE((*d)[0].regular);
  CHECK((*d)[1].rel == "x/y/z.txt");
}

TEST_CASE("files whose index blob differs from the disk through a filter are read from disk", "[snapshot]") {
  TempDir t;
  t.git_init();
  git(t, "config core.autocrlf true");
  t.write("dos.txt", "one\r\ntwo\r\n");
  git(t, "add -A");
  git(t, "commit -q -m crlf");
  auto s = store_of(t).take();
  REQUIRE(s);
  // The index holds "one\ntwo\n"; a restore must give the bytes on disk back.
  CHECK(listing(t, *s)["dos.txt"] == "100644 " + kai::blob_id("one\r\ntwo\r\n"));
}
