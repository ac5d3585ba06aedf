// Snapshots of the working tree for undoing runs: what goes in, what stays
// out, diffs between two snapshots, what keep() makes independent of the
// user's repository, retention, and that the user's git state is only read.

#include "unit/temp_dir.hpp"

#include <cstdio>
#include <map>
#include <fcntl.h>
#include <sys/stat.h>

#include "lib/util/git.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/util/fs.hpp"
#include "tests/support/tree_changes.hpp"

namespace {
using kai::test::TempDir;
namespace fs = std::filesystem;

std::string sh_output(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

const char* k_git = "git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main";

void git(const TempDir& t, const std::string& args) {
  sh_output("cd '" + t.path().string() + "' && " + k_git + " " + args + " >/dev/null 2>&1");
}

kai::SnapshotStore store_of(const TempDir& t) {
  return kai::SnapshotStore{t.path() / ".kaicoder" / "snapshots.git", t.path(), kai::Guardrails{}};
}

// path → "mode blob" of the snapshot's tree, read with git itself from
// kaicoder's store plus the user's objects (subtrees equal to the user's are
// only there until keep() copies them).
std::map<std::string, std::string> listing(const TempDir& t, const kai::Snapshot& s) {
  std::string text = sh_output("GIT_ALTERNATE_OBJECT_DIRECTORIES='" + (t.path() / ".git/objects").string() +
                               "' git --git-dir='" + (t.path() / ".kaicoder/snapshots.git").string() +
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
  std::string refs_before = sh_output("cd '" + t.path().string() + "' && git for-each-ref; git stash list");
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
  // The first snapshot reads every file: kaicoder trusts no index it did not write.
  CHECK(s->files == 5);
  CHECK(s->hashed == 5);
  // The user's git state is read, never written.
  CHECK(t.read(".git/index") == index_before);
  CHECK(sh_output("cd '" + t.path().string() + "' && git for-each-ref; git stash list") == refs_before);
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
  REQUIRE(d->size() == 7);
  // The folders the run created are listed, so that a rollback can remove them.
  CHECK((*d)[1].rel == "new");
  CHECK((*d)[2].rel == "new/deeper");
  for (size_t i : {1, 2}) {
    CHECK_FALSE((*d)[i].before.exists);
    CHECK((*d)[i].after.mode == kai::k_mode_dir);
    CHECK((*d)[i].undoable);
  }
  std::vector<kai::TreeChange> c = *d;
  c.erase(c.begin() + 1, c.begin() + 3);
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

namespace {

using kai::test::paths_of;

bool has_note(const std::vector<std::string>& notes, const std::string& text) {
  for (const auto& n : notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

// A committed repository whose files are older than the stat cache's racy window.
void seed_settled(TempDir& t) {
  t.git_init();
  t.write("src/main.c", "int main() { return 0; }\n");
  t.write("src/util.c", "int util;\n");
  t.write("README", "read me\n");
  t.write(".gitignore", "build/\n.kaicoder/\n*.o\n");
  git(t, "add -A");
  git(t, "commit -q -m seed");
  sh_output("cd '" + t.path().string() +
            "' && find . -path ./.git -prune -o -type f -exec touch -d '2020-01-01 00:00:00' {} +");
  ::usleep(1100 * 1000);  // ctime, which touch cannot set back, leaves the racy window too
}

}  // namespace

TEST_CASE("index flags and a rewritten index hide no change from a snapshot", "[snapshot]") {
  for (const std::string how : {"update-index --assume-unchanged src/main.c", "update-index --skip-worktree src/main.c",
                                "rm -q --cached src/main.c"}) {
    TempDir t;
    seed_settled(t);
    auto store = store_of(t);
    auto before = store.take();
    REQUIRE(before);
    git(t, how);  // what the run does to the index first
    t.write("src/main.c", "int main() { return 1; }\n");
    auto after = store.take();
    REQUIRE(after);
    auto d = store.diff(*before, *after);
    REQUIRE(d);
    INFO(how);
    REQUIRE(paths_of(*d) == std::vector<std::string>{"src/main.c"});
    CHECK((*d)[0].before.blob == kai::blob_id("int main() { return 0; }\n"));
    CHECK((*d)[0].after.blob == kai::blob_id("int main() { return 1; }\n"));
  }
}

TEST_CASE("kaicoder's stat cache reads only what changed, and a same-size rewrite with its mtime set back is seen",
          "[snapshot]") {
  TempDir t;
  seed_settled(t);
  auto store = store_of(t);
  auto first = store.take();
  REQUIRE(first);
  CHECK(first->hashed == 4);
  CHECK(fs::exists(t / ".kaicoder/snapshots.git/kaicoder-stat-cache"));
  auto second = store.take();
  REQUIRE(second);
  CHECK(second->hashed == 0);
  CHECK(second->tree == first->tree);
  // Same size, same mtime: only ctime (and kaicoder reading it) tells.
  t.write("src/util.c", "int UTIL;\n");
  sh_output("touch -d '2020-01-01 00:00:00' '" + (t / "src/util.c").string() + "'");
  auto third = store.take();
  REQUIRE(third);
  CHECK(third->hashed == 1);
  auto d = store.diff(*second, *third);
  REQUIRE(d);
  CHECK(paths_of(*d) == std::vector<std::string>{"src/util.c"});
  // A cache that does not parse is no cache: every file is read.
  t.write(".kaicoder/snapshots.git/kaicoder-stat-cache", "garbage");
  auto fourth = store_of(t).take();
  REQUIRE(fourth);
  CHECK(fourth->hashed == 4);
  CHECK(fourth->tree == third->tree);
}

TEST_CASE("a stat cache planted between a run's two snapshots hides nothing", "[snapshot]") {
  TempDir t;
  seed_settled(t);
  auto store = store_of(t);  // one object for both snapshots, as a run has
  auto before = store.take();
  REQUIRE(before);
  // The run rewrites a file, lets another store cache its new stat data,
  // then swaps the new blob id for the old one in the cache file.
  t.write("src/util.c", "int evil;\n");
  ::usleep(1100 * 1000);
  REQUIRE(store_of(t).take());
  std::string cache = t.read(".kaicoder/snapshots.git/kaicoder-stat-cache");
  auto at = cache.find(kai::blob_id("int evil;\n"));
  REQUIRE(at != std::string::npos);
  cache.replace(at, 40, kai::blob_id("int util;\n"));
  t.write(".kaicoder/snapshots.git/kaicoder-stat-cache", cache);
  auto after = store.take();
  REQUIRE(after);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  CHECK(paths_of(*d) == std::vector<std::string>{"src/util.c"});
  // And the planted file is replaced by what kaicoder saw.
  CHECK(t.read(".kaicoder/snapshots.git/kaicoder-stat-cache").find(kai::blob_id("int evil;\n")) != std::string::npos);
}

TEST_CASE("big files are streamed, and files over the limit are reported, not read", "[snapshot]") {
  TempDir t;
  seed_settled(t);
  std::string big(3u << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>('a' + i % 26);
  t.write("data/big.bin", big);
  auto store = store_of(t);
  auto before = store.take();
  REQUIRE(before);
  CHECK(listing(t, *before)["data/big.bin"] == "100644 " + kai::blob_id(big));
  sh_output("truncate -s 2G '" + (t / "huge.img").string() + "'");
  auto after = store.take();
  REQUIRE(after);
  CHECK(listing(t, *after).count("huge.img") == 0);
  CHECK(after->large.count("huge.img") == 1);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  CHECK(d->empty());
  auto notes = kai::snapshot_notes(*before, *after);
  CHECK(has_note(notes, "huge.img created, not snapshotted: too large (2048.0 MiB"));
  // A file that grows past the limit is neither deleted nor resurrected by a rollback.
  sh_output("truncate -s 200M '" + (t / "data/big.bin").string() + "'");
  auto grown = store.take();
  REQUIRE(grown);
  auto d2 = store.diff(*after, *grown);
  REQUIRE(d2);
  CHECK(d2->empty());
  CHECK(has_note(kai::snapshot_notes(*after, *grown), "data/big.bin created, not snapshotted: too large"));
}

TEST_CASE("snapshot notes name guarded files that changed and count changes in ignored trees", "[snapshot]") {
  TempDir t;
  seed_settled(t);
  t.write("kaicoder.toml", "mode = \"normal\"\n");
  t.write(".env", "TOKEN=one\n");
  t.write("build/a.o", "a");
  t.write("build/b.o", "b");
  t.write("src/x.o", "x");
  auto store = store_of(t);
  auto before = store.take();
  REQUIRE(before);
  t.write("kaicoder.toml", "mode = \"yolo\"\n");
  t.write(".env", "TOKEN=two, longer\n");
  t.write(".git/hooks/post-checkout", "#!/bin/sh\n");
  t.write("build/a.o", "AA");
  fs::remove(t / "build/b.o");
  t.write("build/sub/c.o", "c");
  t.write("src/x.o", "xx");
  auto after = store.take();
  REQUIRE(after);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  CHECK(d->empty());
  auto notes = kai::snapshot_notes(*before, *after);
  CHECK(has_note(notes, "GUARDED FILE CHANGED: kaicoder.toml"));
  CHECK(has_note(notes, "GUARDED FILE CHANGED: .env"));
  CHECK(has_note(notes, "GUARDED FILE CREATED: .git/hooks/post-checkout"));
  CHECK(has_note(notes, "build/: 3 files changed (ignored, not restorable)"));
  CHECK(has_note(notes, "src/: 1 file changed (ignored, not restorable)"));
  // The secret's bytes went nowhere.
  CHECK(sh_output("grep -r TOKEN '" + (t / ".kaicoder").string() + "' || true").empty());
}

TEST_CASE("a folder replaced by a symlink and a set-user-ID bit are diffed so a rollback can undo them", "[snapshot]") {
  TempDir t;
  seed_settled(t);
  auto store = store_of(t);
  auto before = store.take();
  REQUIRE(before);
  fs::remove_all(t / "src");
  t.symlink("src", "/etc");
  ::chmod((t / "README").c_str(), 04755);
  auto after = store.take();
  REQUIRE(after);
  auto d = store.diff(*before, *after);
  REQUIRE(d);
  REQUIRE(paths_of(*d) == std::vector<std::string>{"README", "src", "src/main.c", "src/util.c"});
  CHECK((*d)[0].after.mode == 0755u);
  CHECK((*d)[0].before.mode == 0644u);
  CHECK((*d)[1].after.mode == kai::k_mode_link);
  CHECK((*d)[1].after.blob == kai::blob_id("/etc"));
  CHECK_FALSE((*d)[1].before.exists);
  for (const auto& c : *d) CHECK(c.undoable);
  CHECK_FALSE((*d)[1].regular);
}

TEST_CASE("the stat cache finds every file again after files were added and removed between cached ones",
          "[snapshot]") {
  TempDir t;
  t.git_init();
  for (int i = 0; i < 40; ++i) t.write("d/f" + std::to_string(i) + ".c", "int v" + std::to_string(i) + ";\n");
  t.write(".gitignore", ".kaicoder/\n");
  sh_output("cd '" + t.path().string() +
            "' && find . -path ./.git -prune -o -type f -exec touch -d '2020-01-01 00:00:00' {} +");
  ::usleep(1100 * 1000);
  auto store = store_of(t);
  auto first = store.take();
  REQUIRE(first);
  CHECK(first->hashed == 41);
  // A fresh store object reads the cache from disk, in the order it was written.
  auto again = store_of(t).take();
  REQUIRE(again);
  CHECK(again->hashed == 0);
  CHECK(again->tree == first->tree);
  // Files gone and new files among the cached ones, and a same-size rewrite
  // with its mtime set back further on: each is found, nothing else is read.
  for (int i : {3, 4, 17}) fs::remove(t / ("d/f" + std::to_string(i) + ".c"));
  for (const char* n : {"d/new1.c", "d/zz.c", "d/f4b.c"}) t.write(n, "int added;\n");
  t.write("d/f30.c", "int vXX;\n");
  sh_output("touch -d '2020-01-01 00:00:00' '" + (t / "d/f30.c").string() + "'");
  auto second = store.take();
  REQUIRE(second);
  CHECK(second->hashed == 4);
  auto d = store.diff(*first, *second);
  REQUIRE(d);
  CHECK(paths_of(*d) ==
        std::vector<std::string>{"d/f17.c", "d/f3.c", "d/f30.c", "d/f4.c", "d/f4b.c", "d/new1.c", "d/zz.c"});
  auto third = store.take();
  REQUIRE(third);
  CHECK(third->tree == second->tree);
}

TEST_CASE("a folder's names kept from the last walk are read again once it changed, even with its mtime set back",
          "[snapshot]") {
  TempDir t;
  seed_settled(t);
  auto store = store_of(t);
  REQUIRE(store.take());  // creates the store, which changes root's ctime
  ::usleep(1100 * 1000);
  auto first = store.take();
  REQUIRE(first);
  auto same = store.take();  // names from memory: no folder changed
  REQUIRE(same);
  CHECK(same->tree == first->tree);
  // New and renamed names, and each folder's times put back exactly as they
  // were: only its ctime, which nobody can set back, tells.
  struct stat src {
  }, top{};
  REQUIRE(::stat((t / "src").c_str(), &src) == 0);
  REQUIRE(::stat(t.path().c_str(), &top) == 0);
  t.write("src/new.c", "int added;\n");
  fs::rename(t / "README", t / "READ2");
  const timespec src_times[2] = {src.st_atim, src.st_mtim}, top_times[2] = {top.st_atim, top.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, (t / "src").c_str(), src_times, 0) == 0);
  REQUIRE(::utimensat(AT_FDCWD, t.path().c_str(), top_times, 0) == 0);
  auto second = store.take();
  REQUIRE(second);
  auto d = store.diff(*first, *second);
  REQUIRE(d);
  CHECK(paths_of(*d) == std::vector<std::string>{"READ2", "README", "src/new.c"});
}

TEST_CASE("a folder's tree kept from the last walk is taken again only while the store still holds it", "[snapshot]") {
  TempDir t;
  seed_settled(t);
  t.write("src/untracked.c", "int u;\n");  // so that src/'s tree is the store's own, not the user's
  auto store = store_of(t);
  REQUIRE(store.take());
  ::usleep(1100 * 1000);
  auto first = store.take();
  REQUIRE(first);
  const auto files = listing(t, *first);
  REQUIRE_FALSE(files.empty());
  // The folder's tree object gone from the store between two walks, as a
  // prune by another process would leave it: the next walk writes it again.
  const std::string src = sh_output("GIT_ALTERNATE_OBJECT_DIRECTORIES='" + (t.path() / ".git/objects").string() +
                                    "' git --git-dir='" + (t.path() / ".kaicoder/snapshots.git").string() +
                                    "' -c safe.directory='*' rev-parse " + first->tree + ":src");
  REQUIRE(src.size() >= 41);
  const fs::path loose = t.path() / ".kaicoder/snapshots.git/objects" / src.substr(0, 2) / src.substr(2, 38);
  REQUIRE(fs::remove(loose));
  auto second = store.take();
  REQUIRE(second);
  CHECK(second->tree == first->tree);
  CHECK(fs::exists(loose));
  CHECK(listing(t, *second) == files);
}

TEST_CASE("a folder's names from the scan before a run are taken only while it is unchanged and settled",
          "[snapshot]") {
  TempDir t;
  seed_settled(t);
  REQUIRE(store_of(t).take());  // the store made, so that making it changes nothing below
  ::usleep(1100 * 1000);
  struct stat src {};
  REQUIRE(::stat((t / "src").c_str(), &src) == 0);
  const kai::StatKey key = kai::key_of(src);
  const uint64_t now = kai::now_ns();
  // A listing of src/ without util.c, which only a forged one could be: a
  // snapshot that took it would leave util.c out.
  auto has_util = [&](uint64_t read_after, kai::StatKey k) {
    kai::ListedFolders l;
    l.read_after = read_after;
    l.folders.push_back(kai::ListedFolders::Folder{"src/", k, {"main.c"}});
    auto store = store_of(t);
    store.seed(l);
    CHECK(l.folders.empty());
    auto s = store.take();
    REQUIRE(s);
    return listing(t, *s).count("src/util.c") == 1;
  };
  CHECK_FALSE(has_util(now, key));                             // settled and unchanged: taken
  CHECK(has_util(std::max(key.mtime_ns, key.ctime_ns), key));  // read in the second of its last change: not taken
  kai::StatKey changed = key;
  changed.ctime_ns -= 1;
  CHECK(has_util(now, changed));  // the folder changed since it was read: read again

  // A real scan's names, then a file added: the snapshot sees it.
  kai::ListedFolders scanned;
  scanned.read_after = now;
  kai::walk_tree(
      t.path(), 1000, [](std::string_view n) { return n != ".git" && n != ".kaicoder"; },
      [](const std::string&, int, const char*, unsigned) { return true; },
      [&](const std::string& prefix, const struct stat& before, std::vector<std::string>& names) {
        scanned.folders.push_back(kai::ListedFolders::Folder{prefix, kai::key_of(before), std::move(names)});
      });
  REQUIRE(scanned.folders.size() >= 2);
  t.write("src/added.c", "int added;\n");
  auto store = store_of(t);
  store.seed(scanned);
  auto s = store.take();
  REQUIRE(s);
  const auto files = listing(t, *s);
  CHECK(files.count("src/added.c") == 1);
  CHECK(files.count("src/util.c") == 1);
  CHECK(files.count("README") == 1);
}
