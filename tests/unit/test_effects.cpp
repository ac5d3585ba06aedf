// A run's effects: the decision table as kaicoder-run(1) writes it, the row
// each effect falls under, how effects are told and stored, and reading
// them from an overlay's upper folder and from .git's files.

#include "unit/temp_dir.hpp"

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "lib/run/effects.hpp"
#include "lib/util/git.hpp"

namespace {
using kai::test::TempDir;
using namespace kai;
namespace fs = std::filesystem;

EffectContext plain_context() {
  EffectContext c;
  c.never_rule = [](const std::string& rel) -> std::string {
    if (rel == "kaicoder.toml" || rel.starts_with(".kaicoder/")) return "guarded";
    if (rel.starts_with(".claude/") || rel == ".mcp.json") return "harness";
    if (rel == ".env") return "never-write";
    return "";
  };
  c.confirm_reason = [](const std::string& rel) -> std::string {
    return rel.ends_with(".sh") ? "confirm path (*.sh)" : "";
  };
  c.tracked = [](const std::string& rel) { return rel.starts_with("src/"); };
  c.ignored = [](const std::string& rel) { return rel.starts_with("build/"); };
  c.nested = [](const std::string& rel) { return rel.starts_with("vendor/lib/"); };
  return c;
}

EntrySide file(unsigned mode, const std::string& bytes = "x") {
  return EntrySide{NodeType::file, mode, blob_id(bytes), "", bytes.size()};
}
EntrySide folder(unsigned mode) { return EntrySide{NodeType::dir, mode, "", "", 0}; }

Effect effect(EffectKind k, std::string path, EntrySide before, EntrySide after) {
  Effect e;
  e.kind = k;
  e.path = std::move(path);
  e.before = std::move(before);
  e.after = std::move(after);
  return e;
}

// The rule and verdict one effect gets on its own.
std::pair<std::string, EffectVerdict> judged(Effect e, const EffectContext& ctx = plain_context()) {
  Effects fx;
  fx.list.push_back(std::move(e));
  classify(fx, ctx);
  return {fx.list[0].rule, fx.list[0].verdict};
}

std::string sh(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  REQUIRE(::pclose(p) == 0);
  return out;
}

}  // namespace

TEST_CASE("the decision table is read from kaicoder-run(1) and names every rule the code gives", "[effects]") {
  const auto& table = effect_table();
  REQUIRE_FALSE(table.empty());
  std::set<std::string> rows;
  for (const auto& r : table) {
    INFO(r.id);
    CHECK(rows.insert(r.id).second);  // once each
    CHECK_FALSE(r.text.empty());
  }
  std::set<std::string> known;
  for (auto id : effect_rule_ids()) {
    INFO(id);
    CHECK(rows.count(std::string(id)) == 1);
    known.insert(std::string(id));
  }
  CHECK(rows == known);  // no row the code never gives
  CHECK(effect_rule("setid").verdict == EffectVerdict::never);
  CHECK(effect_rule("instructions").verdict == EffectVerdict::held);
  CHECK(effect_rule("file").verdict == EffectVerdict::lands);
  // A rule the page lost is never landed.
  CHECK(effect_rule("no-such-rule").verdict == EffectVerdict::never);
}

TEST_CASE("the table's rows parse, and a malformed row is an error naming its line", "[effects]") {
  auto t = parse_effect_table(".Bl -column\n.It Sy rule Ta Sy verdict Ta Sy effect\n.It Li a Ta held Ta the a\n.El\n");
  REQUIRE(t);
  REQUIRE(t->size() == 1);
  CHECK(t->at(0).id == "a");
  CHECK(t->at(0).verdict == EffectVerdict::held);
  CHECK(t->at(0).text == "the a");
  auto bad = parse_effect_table("x\n.It Li a Ta maybe Ta the a\n");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("line 2"));
  CHECK_FALSE(parse_effect_table("no rows\n"));
}

TEST_CASE("every kind of effect gets a rule the table has", "[effects]") {
  for (EffectKind k : k_all_effect_kinds) {
    INFO(to_string(k));
    Effect e = effect(k, k == EffectKind::ref_moved || k == EffectKind::head_moved ? ".git/HEAD" : "src/x",
                      file(0644, "a"), file(0644, "b"));
    if (k == EffectKind::objects_added || k == EffectKind::object_changed || k == EffectKind::git_file)
      e.path = ".git/objects/ab/cdef";
    Effects fx;
    fx.list.push_back(e);
    GitView v;
    git_meaning(fx, v);
    classify(fx, plain_context());
    for (const Effect& x : fx.list) {
      CHECK_FALSE(x.rule.empty());
      bool in_table = false;
      for (const auto& r : effect_table()) in_table = in_table || r.id == x.rule;
      CHECK(in_table);
    }
  }
}

TEST_CASE("each effect falls under the first row that matches", "[effects]") {
  // never
  CHECK(judged(effect(EffectKind::file_created, "build/helper", {}, file(04755))) ==
        std::pair{std::string("setid"), EffectVerdict::never});
  CHECK(judged(effect(EffectKind::mode_changed, "src/a.c", file(0755), file(02755))).first == "setid");
  CHECK(judged(effect(EffectKind::special_created, "dev0", {}, EntrySide{NodeType::device, 0600, "", "", 0})).first ==
        "device");
  CHECK(judged(effect(EffectKind::file_changed, "kaicoder.toml", file(0644), file(0644, "y"))).first == "guarded");
  CHECK(judged(effect(EffectKind::file_created, ".claude/settings.json", {}, file(0644))).first == "harness");
  CHECK(judged(effect(EffectKind::file_changed, ".env", file(0600), file(0600, "y"))).second == EffectVerdict::never);
  // held
  for (const char* p : {".vscode/tasks.json", ".husky/pre-commit", ".envrc", "sub/.envrc", "CLAUDE.md", "docs/AGENTS.md",
                        "GEMINI.md", ".gitattributes", ".gitmodules", ".github/workflows/ci.yml", ".idea/x.xml"}) {
    INFO(p);
    CHECK(judged(effect(EffectKind::file_created, p, {}, file(0644))) ==
          std::pair{std::string("instructions"), EffectVerdict::held});
  }
  CHECK(judged(effect(EffectKind::file_created, "run.sh", {}, file(0755))).first == "confirm-path");
  // A build tree's scripts are the build's own.
  CHECK(judged(effect(EffectKind::file_created, "build/CMakeFiles/x.sh", {}, file(0755))).first == "file");
  CHECK(judged(effect(EffectKind::file_changed, "vendor/lib/a.c", file(0644), file(0644, "y"))).first == "nested");
  CHECK(judged(effect(EffectKind::special_created, "ff", {}, EntrySide{NodeType::fifo, 0644, "", "", 0})).first ==
        "special");
  CHECK(judged(effect(EffectKind::mode_changed, "src", folder(0755), folder(0757))) ==
        std::pair{std::string("folder-mode"), EffectVerdict::held});
  CHECK(judged(effect(EffectKind::mode_changed, "", folder(0755), folder(0775))).first == "folder-mode");
  CHECK(judged(effect(EffectKind::mode_changed, "docs", folder(0755), folder(03755))).first == "folder-mode");
  CHECK(judged(effect(EffectKind::mode_changed, "docs", folder(0777), folder(0755))).first == "mode");  // tightened
  CHECK(judged(effect(EffectKind::mode_changed, "src/a.c", file(0644), file(0666))).first == "file-mode");
  CHECK(judged(effect(EffectKind::mode_changed, "src/a.c", file(0644), file(0744))).first == "file-mode");
  CHECK(judged(effect(EffectKind::mode_changed, "notes.txt", file(0644), file(0666))).first == "mode");  // untracked
  CHECK(judged(effect(EffectKind::file_deleted, "src/a.c", file(0644), {})) ==
        std::pair{std::string("tracked-deleted"), EffectVerdict::held});
  CHECK(judged(effect(EffectKind::file_deleted, "notes.txt", file(0644), {})).first == "file");
  // lands
  CHECK(judged(effect(EffectKind::file_changed, "src/a.c", file(0644), file(0644, "y"))) ==
        std::pair{std::string("file"), EffectVerdict::lands});
  CHECK(judged(effect(EffectKind::folder_created, "out", {}, folder(0777))).first == "file");
}

TEST_CASE("a tracked file renamed is no deletion, and a path is as strict as its strictest effect", "[effects]") {
  Effects fx;
  fx.list.push_back(effect(EffectKind::file_deleted, "src/a.c", file(0644, "moved"), {}));
  fx.list.push_back(effect(EffectKind::file_created, "src/b.c", {}, file(0644, "moved")));
  classify(fx, plain_context());
  CHECK(fx.list[0].rule == "file");
  CHECK(strictest(fx) == EffectVerdict::lands);

  Effects two;
  two.list.push_back(effect(EffectKind::file_changed, "x.txt", file(0644), file(0644, "y")));
  Effect setid = effect(EffectKind::mode_changed, "x.txt", file(0644), file(04644));
  two.list.push_back(setid);
  classify(two, plain_context());
  CHECK(two.list[0].verdict == EffectVerdict::never);
  CHECK(strictest(two) == EffectVerdict::never);
}

TEST_CASE("effects are told as the changelog writes them and stored whole", "[effects]") {
  CHECK(describe(effect(EffectKind::mode_changed, "src", folder(0755), folder(0757))) == "src/ 0755 \u2192 0757");
  CHECK(describe(effect(EffectKind::mode_changed, "", folder(0755), folder(0775))) == "./ 0755 \u2192 0775");
  Effect r;
  r.kind = EffectKind::ref_moved;
  r.path = ".git/refs/heads/main";
  r.ref = "refs/heads/main";
  r.before = EntrySide{NodeType::ref, 0, "", "177b9ca0000000000000000000000000000000000", 0};
  r.after = EntrySide{NodeType::ref, 0, "", "884b996000000000000000000000000000000000", 0};
  r.detail = "chore: tidy";
  CHECK(describe(r) == "refs/heads/main 177b9ca \u2192 884b996 \"chore: tidy\"");
  r.rule = "ref";
  r.verdict = EffectVerdict::held;
  Effects fx;
  fx.list.push_back(r);
  fx.notes.push_back("new files get the umask 022");
  auto back = effects_from_json(nlohmann::json::parse(to_json(fx).dump()));
  REQUIRE(back);
  REQUIRE(back->list.size() == 1);
  CHECK(describe(back->list[0]) == describe(r));
  CHECK(back->list[0].verdict == EffectVerdict::held);
  CHECK(back->list[0].rule == "ref");
  CHECK(back->notes == fx.notes);
  CHECK_FALSE(effects_from_json(nlohmann::json::parse("{\"effects\": [{\"kind\": \"nope\"}]}")));
}

TEST_CASE("an upper folder's entries, whiteouts and opaque folders are read against the live tree", "[effects]") {
  TempDir t;
  // The live tree.
  t.write("root/src/a.txt", "a\n");
  t.write("root/src/same.txt", "same\n");
  t.write("root/gone.txt", "bye\n");
  t.write("root/old/x.txt", "x\n");
  t.write("root/old/deep/y.txt", "y\n");
  t.write("root/mode.txt", "m\n");
  const fs::path root = t.path() / "root", up = t.path() / "upper";
  // What the run wrote.
  t.write("upper/src/a.txt", "changed\n");
  t.write("upper/src/same.txt", "same\n");  // copied up, nothing changed
  t.write("upper/new/n.txt", "new\n");
  t.write("upper/mode.txt", "m\n");
  REQUIRE(::chmod((up / "mode.txt").c_str(), 0666) == 0);
  REQUIRE(::chmod((root / "mode.txt").c_str(), 0644) == 0);
  // A whiteout, as an unprivileged overlay may write it (a file with an
  // xattr); a character device 0/0 where the process may make one.
  t.write("upper/gone.txt", "");
  bool xattrs = ::setxattr((up / "gone.txt").c_str(), "user.overlay.whiteout", "", 0, 0) == 0;
  if (!xattrs) {
    fs::remove(up / "gone.txt");
    REQUIRE(::mknod((up / "gone.txt").c_str(), S_IFCHR | 0000, makedev(0, 0)) == 0);
  }
  // An opaque folder: old/ removed and made again with one file.
  t.write("upper/old/z.txt", "z\n");
  if (::setxattr((up / "old").c_str(), "user.overlay.opaque", "y", 1, 0) != 0) {
    WARN("SKIPPED in part: this file system takes no user xattrs");
    return;
  }
  REQUIRE(::symlink("src/a.txt", (up / "link").c_str()) == 0);
  REQUIRE(::mkfifo((up / "pipe").c_str(), 0644) == 0);
  REQUIRE(::chmod(up.c_str(), 0700) == 0);
  REQUIRE(::chmod(root.c_str(), 0755) == 0);

  auto fx = read_upper(up, root, INT64_MAX);
  REQUIRE(fx);
  std::map<std::string, std::string> seen;
  for (const Effect& e : fx->list) seen[e.path] += std::string(to_string(e.kind)) + ";";
  INFO(nlohmann::json(to_json(*fx)).dump(2));
  CHECK(seen[""] == "mode-changed;");
  CHECK(seen["src/a.txt"] == "file-changed;");
  CHECK(seen.count("src/same.txt") == 0);
  CHECK(seen.count("src") == 0);  // only written into
  CHECK(seen["new"] == "folder-created;");
  CHECK(seen["new/n.txt"] == "file-created;");
  CHECK(seen["mode.txt"] == "mode-changed;");
  CHECK(seen["gone.txt"] == "file-deleted;");
  CHECK(seen["old/x.txt"] == "file-deleted;");
  CHECK(seen["old/deep/y.txt"] == "file-deleted;");
  CHECK(seen["old/deep"] == "folder-deleted;");
  CHECK(seen["old/z.txt"] == "file-created;");
  CHECK(seen["link"] == "symlink-created;");
  CHECK(seen["pipe"] == "special-created;");
  for (const Effect& e : fx->list)
    if (e.path == "src/a.txt") {
      CHECK(e.before.blob == blob_id("a\n"));
      CHECK(e.after.blob == blob_id("changed\n"));
      CHECK_FALSE(e.conflict);
    }
  // A live file changed at or after the run's start is a conflict.
  auto late = read_upper(up, root, 0);
  REQUIRE(late);
  for (const Effect& e : late->list)
    if (e.path == "src/a.txt") CHECK(e.conflict);
}

namespace {

// What read_upper makes of `up` over `root`, as "path" -> "kind;…".
std::map<std::string, std::string> kinds_of(const fs::path& up, const fs::path& root, OverlayXattrs x) {
  auto fx = read_upper(up, root, INT64_MAX, {}, x);
  REQUIRE(fx);
  std::map<std::string, std::string> seen;
  for (const Effect& e : fx->list) seen[e.path] += std::string(to_string(e.kind)) + ";";
  return seen;
}

bool trusted_xattrs_or_warn(const fs::path& dir) {
  if (::geteuid() == 0 && ::setxattr(dir.c_str(), "trusted.overlay.probe", "y", 1, 0) == 0) {
    ::removexattr(dir.c_str(), "trusted.overlay.probe");
    return true;
  }
  WARN("SKIPPED: trusted extended attributes need root and a file system that takes them");
  return false;
}

}  // namespace

TEST_CASE("a folder root's overlay moved is made whole before its effects are read: a rename, not a loss",
          "[effects]") {
  TempDir t;
  const fs::path root = t.path() / "root", up = t.path() / "upper", work = t.path() / "work";
  t.write("root/src/a.txt", "a\n");
  t.write("root/src/b.txt", "b\n");
  t.write("root/src/sub/c.txt", "c\n");
  t.write("root/src/sub/d.txt", "d\n");
  t.write("root/src/.env", "TOKEN=1\n");
  REQUIRE(::chmod((root / "src/b.txt").c_str(), 0755) == 0);
  fs::create_directories(up);
  fs::create_directories(work);
  if (!trusted_xattrs_or_warn(up)) return;
  // As overlayfs leaves `mv src lib; echo n > lib/n.txt; mv lib/sub out;
  // rm out/d.txt`: lib/ names src (relative), out/ names /src/sub (absolute),
  // and whiteouts where things were.
  t.write("upper/lib/n.txt", "n\n");
  REQUIRE(::setxattr((up / "lib").c_str(), "trusted.overlay.redirect", "src", 3, 0) == 0);
  REQUIRE(::mknod((up / "src").c_str(), S_IFCHR | 0000, makedev(0, 0)) == 0);
  REQUIRE(::mknod((up / "lib/sub").c_str(), S_IFCHR | 0000, makedev(0, 0)) == 0);
  fs::create_directories(up / "out");
  REQUIRE(::setxattr((up / "out").c_str(), "trusted.overlay.redirect", "/src/sub", 8, 0) == 0);
  REQUIRE(::mknod((up / "out/d.txt").c_str(), S_IFCHR | 0000, makedev(0, 0)) == 0);
  // A command may set user.overlay.* on its own files over root's overlay:
  // an ordinary attribute there.
  t.write("upper/plain/x.txt", "x\n");
  t.write("root/plain/kept.txt", "kept\n");
  REQUIRE(::setxattr((up / "plain").c_str(), "user.overlay.opaque", "y", 1, 0) == 0);

  auto keep_out = [](const std::string& rel) { return rel.ends_with("/.env"); };
  REQUIRE(settle_redirects(up, root, work, {}, keep_out));
  CHECK(t.read("upper/lib/a.txt") == "a\n");
  CHECK(t.read("upper/lib/b.txt") == "b\n");
  struct stat st {};
  REQUIRE(::stat((up / "lib/b.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0755);
  CHECK(t.read("upper/out/c.txt") == "c\n");
  CHECK_FALSE(fs::exists(up / "lib/.env"));  // a secret stays where it was
  char buf[8];
  CHECK(::getxattr((up / "lib").c_str(), "trusted.overlay.redirect", buf, sizeof buf) < 0);
  CHECK(::getxattr((up / "lib").c_str(), "trusted.overlay.opaque", buf, sizeof buf) == 1);
  // Again (after a crash): nothing more to do, nothing changes.
  REQUIRE(settle_redirects(up, root, work, {}, keep_out));

  auto seen = kinds_of(up, root, OverlayXattrs::trusted);
  CHECK(seen["src/a.txt"] == "file-deleted;");
  CHECK(seen["src/sub/c.txt"] == "file-deleted;");
  CHECK(seen["src/.env"] == "file-deleted;");  // the decision table never lands it
  CHECK(seen["lib"] == "folder-created;");
  CHECK(seen["lib/a.txt"] == "file-created;");
  CHECK(seen["lib/b.txt"] == "file-created;");
  CHECK(seen["lib/n.txt"] == "file-created;");
  CHECK(seen.count("lib/sub") == 0);
  CHECK(seen.count("lib/.env") == 0);
  CHECK(seen["out/c.txt"] == "file-created;");
  CHECK(seen.count("out/d.txt") == 0);
  CHECK(seen["plain/x.txt"] == "file-created;");
  CHECK(seen.count("plain/kept.txt") == 0);  // user.overlay.opaque means nothing here
}

TEST_CASE("a move kaicoder cannot follow leaves none of a run's effects known", "[effects]") {
  TempDir t;
  const fs::path root = t.path() / "root", up = t.path() / "upper", work = t.path() / "work";
  t.write("root/src/a.txt", "a\n");
  fs::create_directories(up / "lib");
  fs::create_directories(work);
  if (!trusted_xattrs_or_warn(up)) return;
  for (const char* bad : {"../outside", "/src/../..", "a/b", "/src//a"}) {
    REQUIRE(::setxattr((up / "lib").c_str(), "trusted.overlay.redirect", bad, std::strlen(bad), 0) == 0);
    Status s = settle_redirects(up, root, work);
    INFO(bad);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Matchers::Contains("cannot follow"));
  }
}

TEST_CASE("git's files mean refs, HEAD, the index and the stash: a commit of the tree's own content lands, a "
          "history rewritten is held",
          "[effects][git]") {
  TempDir t;
  const std::string in = "cd '" + t.path().string() + "' && ";
  const std::string g = "git -c user.name=t -c user.email=t@example.com ";
  const std::string git = in + g;
  t.write("a.txt", "a\n");
  sh(git + "init -q -b main . && " + g + "add a.txt && " + g + "commit -q -m one");
  auto view_of = [&](const GitCapture& b, const GitCapture& a) {
    GitView v;
    v.objects = t.path() / ".git" / "objects";
    v.scratch = t.path() / "scratch";
    v.before = [b](const std::string& rel) -> std::optional<std::string> {
      auto it = b.files.find(rel);
      return it == b.files.end() ? std::nullopt : std::optional(it->second);
    };
    v.after = [a](const std::string& rel) -> std::optional<std::string> {
      auto it = a.files.find(rel);
      return it == a.files.end() ? std::nullopt : std::optional(it->second);
    };
    v.file_after = [&t](const std::string& rel) -> std::optional<EntrySide> {
      std::error_code ec;
      if (!fs::exists(t.path() / rel, ec)) return std::nullopt;
      std::string bytes = t.read(rel);
      struct stat st {};
      ::lstat((t.path() / rel).c_str(), &st);
      return EntrySide{NodeType::file, st.st_mode & 07777, blob_id(bytes), "", bytes.size()};
    };
    return v;
  };
  auto effects_of = [&](const GitCapture& b, const GitCapture& a) {
    Effects fx = from_snapshots({}, {}, {}, b, a);
    GitView v = view_of(b, a);
    git_meaning(fx, v);
    classify(fx, plain_context());
    return fx;
  };
  auto find = [](const Effects& fx, EffectKind k) -> const Effect* {
    for (const Effect& e : fx.list)
      if (e.kind == k) return &e;
    return nullptr;
  };

  SECTION("git add and git commit of the tree's own content") {
    GitCapture b = capture_git(t.path());
    t.write("a.txt", "a2\n");
    sh(git + "commit -q -am two");
    Effects fx = effects_of(b, capture_git(t.path()));
    const Effect* moved = find(fx, EffectKind::ref_moved);
    REQUIRE(moved);
    CHECK(moved->ref == "refs/heads/main");
    CHECK(moved->rule == "commit");
    CHECK(moved->detail == "two");
    const Effect* index = find(fx, EffectKind::index_changed);
    REQUIRE(index);
    CHECK(index->rule == "index-update");
    CHECK(strictest(fx) == EffectVerdict::lands);
  }
  SECTION("a branch made at the current commit, and HEAD moved onto it") {
    GitCapture b = capture_git(t.path());
    sh(git + "checkout -q -b topic");
    Effects fx = effects_of(b, capture_git(t.path()));
    const Effect* made = find(fx, EffectKind::ref_created);
    REQUIRE(made);
    CHECK(made->rule == "commit");
    const Effect* head = find(fx, EffectKind::head_moved);
    REQUIRE(head);
    CHECK(head->rule == "commit");
    CHECK(strictest(fx) == EffectVerdict::lands);
  }
  SECTION("hash-object, mktree, commit-tree and update-ref: a commit nobody saw") {
    GitCapture b = capture_git(t.path());
    std::string blob = sh(in + "printf 'evil\\n' | " + g + "hash-object -w --stdin");
    blob.pop_back();
    std::string tree = sh(in + "printf '100644 blob " + blob + "\\ta.txt\\n' | " + g + "mktree");
    tree.pop_back();
    std::string commit = sh(git + "commit-tree " + tree + " -p HEAD -m 'chore: tidy'");
    commit.pop_back();
    sh(git + "update-ref refs/heads/main " + commit);
    Effects fx = effects_of(b, capture_git(t.path()));
    const Effect* moved = find(fx, EffectKind::ref_moved);
    REQUIRE(moved);
    CHECK(moved->rule == "ref");
    CHECK(moved->verdict == EffectVerdict::held);
    CHECK_THAT(describe(*moved), Catch::StartsWith("refs/heads/main ") && Catch::EndsWith("\"chore: tidy\""));
  }
  SECTION("an index entry that differs from its file") {
    GitCapture b = capture_git(t.path());
    std::string blob = sh(in + "printf 'staged only\\n' | " + g + "hash-object -w --stdin");
    blob.pop_back();
    sh(git + "update-index --cacheinfo 100644," + blob + ",a.txt");
    Effects fx = effects_of(b, capture_git(t.path()));
    const Effect* index = find(fx, EffectKind::index_changed);
    REQUIRE(index);
    CHECK(index->rule == "index");
    CHECK(index->verdict == EffectVerdict::held);
  }
  SECTION("a stash dropped, and one pushed") {
    t.write("a.txt", "stashed\n");
    sh(git + "stash -q");
    GitCapture b = capture_git(t.path());
    t.write("a.txt", "stashed again\n");
    sh(git + "stash -q");
    Effects pushed = effects_of(b, capture_git(t.path()));
    CHECK(find(pushed, EffectKind::stash_dropped) == nullptr);
    GitCapture b2 = capture_git(t.path());
    sh(git + "stash drop -q");
    Effects dropped = effects_of(b2, capture_git(t.path()));
    const Effect* s = find(dropped, EffectKind::stash_dropped);
    REQUIRE(s);
    CHECK(s->verdict == EffectVerdict::held);
  }
  SECTION("git's settings, hooks, a lock left behind and a rebase todo list") {
    GitCapture b = capture_git(t.path());
    Effects fx;
    fx.list.push_back(effect(EffectKind::file_changed, ".git/config", file(0644), file(0644, "y")));
    fx.list.push_back(effect(EffectKind::file_created, ".git/hooks/pre-commit", {}, file(0755)));
    fx.list.push_back(effect(EffectKind::file_created, ".git/index.lock", {}, file(0644)));
    fx.list.push_back(effect(EffectKind::file_created, ".git/rebase-merge/git-rebase-todo", {}, file(0644)));
    fx.list.push_back(effect(EffectKind::file_changed, ".git/objects/ab/cdef", file(0444), file(0444, "y")));
    fx.list.push_back(effect(EffectKind::file_created, ".git/objects/cd/ef01", {}, file(0444)));
    GitView v = view_of(b, b);
    v.after = [](const std::string&) -> std::optional<std::string> { return "pick 1 x\nexec touch PWNED\n"; };
    git_meaning(fx, v);
    classify(fx, plain_context());
    std::map<std::string, std::string> rules;
    for (const Effect& e : fx.list) rules[e.path] = e.rule;
    CHECK(rules[".git/config"] == "git-settings");
    CHECK(rules[".git/hooks/pre-commit"] == "git-settings");
    CHECK(rules[".git/index.lock"] == "git-lock");
    CHECK(rules[".git/rebase-merge/git-rebase-todo"] == "rebase-todo");
    CHECK(rules[".git/objects/ab/cdef"] == "object");
    CHECK(rules[".git/objects/cd/ef01"] == "objects");
  }
}

TEST_CASE("git's index is read once a command and again when it changes; tracked() knows files and folders",
          "[effects][git]") {
  TempDir t;
  const std::string git = "cd '" + t.path().string() + "' && git -c user.name=t -c user.email=t@example.com ";
  t.write("a.txt", "a\n");
  t.write("src/b/c.txt", "c\n");
  t.write("src-x.txt", "x\n");  // sorts between "src" and "src/"
  sh(git + "init -q -b main . && " + git + "add a.txt src src-x.txt");
  auto first = index_entries(t.path());
  REQUIRE(first.ok());
  const IndexEntries& ix = **first;
  CHECK(ix.entries.size() == 3);
  CHECK(ix.tracked("a.txt"));
  CHECK(ix.tracked("src"));
  CHECK(ix.tracked("src/b"));
  CHECK(ix.tracked("src/b/c.txt"));
  CHECK(ix.tracked("src-x.txt"));
  CHECK_FALSE(ix.tracked("src/b/c"));
  CHECK_FALSE(ix.tracked("sr"));
  CHECK_FALSE(ix.tracked("b"));
  // Unchanged: the same read, shared.
  auto again = index_entries(t.path());
  REQUIRE(again.ok());
  CHECK(again->get() == first->get());
  // Changed (git writes a new file and renames it over): read again.
  t.write("d.txt", "d\n");
  sh(git + "add d.txt");
  auto after = index_entries(t.path());
  REQUIRE(after.ok());
  CHECK(after->get() != first->get());
  CHECK((*after)->tracked("d.txt"));
  CHECK_FALSE(ix.tracked("d.txt"));  // the first read stays as it was for whoever holds it
  auto paths = tracked_paths(t.path());
  REQUIRE(paths.ok());
  CHECK(*paths == std::vector<std::string>{"a.txt", "d.txt", "src-x.txt", "src/b/c.txt"});
  // Not a work tree's top: nothing.
  auto none = index_entries(t.path() / "src");
  REQUIRE(none.ok());
  CHECK((*none)->entries.empty());
}
