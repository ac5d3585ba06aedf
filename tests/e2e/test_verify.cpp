// kaicoder verify and certify, in throwaway repositories with real commits
// and real SSH keys: each kind of change to a certified path (content,
// delete, add, rename, copy, mode, symlink) uncovered and then covered by a
// signed manifest, every way a manifest can fail to count, the base as the
// trust anchor, and certify at a terminal and without one. The repositories
// are never initialised by kaicoder: verify must work in any checkout.

#include <filesystem>
#include <functional>

#include "tests/support/checks.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string k_config = "[certify]\npaths = [\"tests/**\", \"ci/**\"]\nallowed_signers = \"signers\"\n";

// Enough lines that rename and copy detection see a file, not a few bytes.
std::string lines(const std::string& word) {
  std::string s;
  for (int i = 0; i < 20; ++i) s += word + " line " + std::to_string(i) + "\n";
  return s;
}

class Certified {
public:
  TempRepo repo{{"tests/a.txt", lines("alpha")},
                {"tests/b.txt", lines("bravo")},
                {"ci/run.sh", lines("charlie")},
                {"free.txt", "free\n"}};

  Certified() {
    keygen("owner");
    keygen("stranger");
    repo.write("signers", "owner@example.com " + pub("owner"));
    repo.write("kaicoder.toml", k_config);
    commit("certify tests and ci");
    git({"tag", "base"});
  }

  Run git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{
        "git", "-c", "user.name=Owner", "-c", "user.email=owner@example.com", "-c", "commit.gpgsign=false"};
    argv.insert(argv.end(), args.begin(), args.end());
    Run r = repo.spawn(argv).finish();
    INFO("git " << args.front() << ": " << r.all());
    REQUIRE(r.ok());
    return r;
  }
  std::string git_out(const std::vector<std::string>& args) const {
    std::string s = git(args).out;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  void commit(const std::string& message) const {
    git({"add", "-A"});
    git({"commit", "-q", "-m", message});
  }
  std::string head() const { return git_out({"rev-parse", "HEAD"}); }
  // A branch `mainline` at `at`, made the upstream of the current branch.
  void track_mainline(const std::string& at) const {
    git({"branch", "mainline", at});
    git({"branch", "--set-upstream-to=mainline"});
  }

  fs::path key(const std::string& name) const { return repo.home() / name; }
  std::string pub(const std::string& name) const { return repo.read("../home/" + name + ".pub"); }
  void keygen(const std::string& name) const {
    Run r = repo.spawn({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", key(name).string()}).finish();
    INFO(r.all());
    REQUIRE(r.ok());
  }

  // A [[change]] binding `path` to what it is at HEAD (a delete when it is gone).
  std::string binding(const std::string& path, const std::string& kind) const {
    if (kind == "delete") return "[[change]]\npath = \"" + path + "\"\nkind = \"delete\"\n";
    std::string mode = git_out({"ls-tree", "HEAD", "--", path}).substr(0, 6);
    return "[[change]]\npath = \"" + path + "\"\nkind = \"" + kind + "\"\nblob = \"" +
           git_out({"rev-parse", "HEAD:" + path}) + "\"\nmode = \"" + mode + "\"\n";
  }
  // kaicoder-approvals/<name>.toml signed as ssh-keygen -Y sign makes it, then committed.
  void approve(const std::string& name, const std::string& changes, const std::string& signer = "owner") const {
    write_signed(name, "version = 1\n" + changes, signer);
    commit("approve " + name);
  }
  void write_signed(const std::string& name, const std::string& text, const std::string& signer) const {
    const std::string rel = "kaicoder-approvals/" + name + ".toml";
    repo.write(rel, text);
    Run r = repo.spawn({"ssh-keygen", "-Y", "sign", "-n", "kaicoder", "-f", key(signer).string(), rel}).finish();
    INFO(r.all());
    REQUIRE(r.ok());
  }

  Run verify(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"--json", "verify", "--base", "base"};
    args.insert(args.end(), extra.begin(), extra.end());
    return repo.kai(args);
  }
};

// The change to `path` in verify's JSON; null when it reported none.
json change_at(const json& j, const std::string& path) {
  for (const auto& c : j.at("changes"))
    if (c.at("path") == path) return c;
  return nullptr;
}

struct Kind {
  const char* name;
  std::function<void(const Certified&)> make;  // the change, committed
  std::string path, kind, from, detail, new_mode;
  std::function<std::string(const Certified&)> approval;  // the manifest that covers it
};

std::vector<Kind> kinds() {
  return {
      {"content",
       [](const Certified& f) {
         f.repo.write("tests/a.txt", lines("ALPHA"));
         f.commit("edit a");
       },
       "tests/a.txt", "content", "", "", "100644",
       [](const Certified& f) { return f.binding("tests/a.txt", "modify"); }},
      {"delete",
       [](const Certified& f) {
         f.git({"rm", "-q", "tests/b.txt"});
         f.commit("drop b");
       },
       "tests/b.txt", "delete", "", "", "", [](const Certified& f) { return f.binding("tests/b.txt", "delete"); }},
      {"add",
       [](const Certified& f) {
         f.repo.write("tests/new.txt", lines("new"));
         f.commit("add new");
       },
       "tests/new.txt", "add", "", "", "100644", [](const Certified& f) { return f.binding("tests/new.txt", "add"); }},
      {"rename",
       [](const Certified& f) {
         f.git({"mv", "tests/b.txt", "tests/renamed.txt"});
         f.commit("rename b");
       },
       "tests/renamed.txt", "rename", "tests/b.txt", "", "100644",
       [](const Certified& f) { return f.binding("tests/b.txt", "delete") + f.binding("tests/renamed.txt", "add"); }},
      {"copy",
       [](const Certified& f) {
         f.repo.write("tests/copy.txt", lines("alpha"));
         f.commit("copy a");
       },
       "tests/copy.txt", "copy", "tests/a.txt", "", "100644",
       [](const Certified& f) { return f.binding("tests/copy.txt", "add"); }},
      {"mode",
       [](const Certified& f) {
         f.repo.chmod("ci/run.sh", 0755);
         f.commit("make run.sh executable");
       },
       "ci/run.sh", "mode", "", "executable bit set", "100755",
       [](const Certified& f) { return f.binding("ci/run.sh", "mode"); }},
      {"symlink",
       [](const Certified& f) {
         f.repo.remove("tests/a.txt");
         f.repo.symlink("tests/a.txt", "b.txt");
         f.commit("a becomes a link");
       },
       "tests/a.txt", "mode", "", "file became a symlink", "120000",
       [](const Certified& f) { return f.binding("tests/a.txt", "mode"); }},
  };
}

}  // namespace

TEST_CASE("verify reports each kind of change to a certified path until a signed manifest covers it", "[e2e][verify]") {
  for (const Kind& k : kinds()) {
    DYNAMIC_SECTION(k.name) {
      Certified f;
      k.make(f);
      const std::string commit = f.head();
      Run r = f.verify();
      KAI_CHECK_EXIT(r, 6);
      json j = json_of(r);
      CHECK(j.at("ok") == false);
      CHECK(j.at("command") == "verify");
      CHECK(j.at("error").at("code") == 6);
      CHECK(j.at("uncovered") == 1);
      REQUIRE(j.at("changes").size() == 1);
      json c = j.at("changes")[0];
      CHECK(c.at("path") == k.path);
      CHECK(c.at("kind") == k.kind);
      CHECK(c.at("covered") == false);
      CHECK(c.at("commit") == commit);
      CHECK(c.at("new_mode") == k.new_mode);
      if (!k.from.empty()) CHECK(c.at("from") == k.from);
      if (!k.detail.empty()) CHECK(c.at("detail") == k.detail);
      CHECK_THAT(c.at("reason").get<std::string>(), Contains("no signed approval"));

      f.approve("owner-ok", k.approval(f));
      Run ok = f.verify();
      KAI_CHECK_EXIT(ok, 0);
      json jo = json_of(ok);
      CHECK(jo.at("ok") == true);
      CHECK(jo.at("uncovered") == 0);
      REQUIRE(jo.at("changes").size() == 1);
      CHECK(jo.at("changes")[0].at("covered") == true);
      CHECK(jo.at("changes")[0].at("signer") == "owner@example.com");
      CHECK(jo.at("manifests")[0].at("valid") == true);
    }
  }
}

TEST_CASE("verify without --json names path, kind and commit of an uncovered change", "[e2e][verify]") {
  Certified f;
  f.git({"mv", "tests/b.txt", "tests/renamed.txt"});
  f.commit("rename b to renamed");
  const std::string commit = f.head();
  f.repo.write("free.txt", "still free\n");
  f.commit("unrelated later commit");
  Run r = f.repo.kai({"verify", "--base", "base"});
  KAI_CHECK_EXIT(r, 6);
  CHECK_THAT(r.out, Contains("rename  tests/b.txt -> tests/renamed.txt"));
  CHECK_THAT(r.out, Contains("introduced by " + commit.substr(0, 12) + " rename b to renamed"));
  CHECK_THAT(r.out, Contains("no signed approval of deleting 'tests/b.txt'"));
  CHECK_THAT(r.err, Contains("kaicoder: error: 1 change to certified paths lacks a signed approval"));
}

TEST_CASE("verify passes when only uncertified paths changed and writes nothing", "[e2e][verify]") {
  Certified f;
  f.repo.write("free.txt", "changed\n");
  f.commit("free change");
  auto before = f.repo.tree_snapshot();
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 0);
  json j = json_of(r);
  CHECK(j.at("ok") == true);
  CHECK(j.at("changes").empty());
  CHECK(f.repo.tree_snapshot() == before);
  CHECK_FALSE(f.repo.exists(".kaicoder"));
}

TEST_CASE("a rename needs both the delete and the add approved", "[e2e][verify]") {
  Certified f;
  f.git({"mv", "tests/b.txt", "tests/renamed.txt"});
  f.commit("rename b");
  f.approve("only-add", f.binding("tests/renamed.txt", "add"));
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 6);
  json c = change_at(json_of(r), "tests/renamed.txt");
  REQUIRE(c != nullptr);
  CHECK(c.at("covered") == false);
  CHECK_THAT(c.at("reason").get<std::string>(), Contains("deleting 'tests/b.txt'"));
}

TEST_CASE("a manifest signed by a key the allowed signers do not name does not count", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("edit a");
  f.approve("stranger", f.binding("tests/a.txt", "modify"), "stranger");
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("manifests")[0].at("valid") == false);
  CHECK(j.at("manifests")[0].at("path") == "kaicoder-approvals/stranger.toml");
  json c = change_at(j, "tests/a.txt");
  CHECK(c.at("covered") == false);
  CHECK_THAT(c.at("reason").get<std::string>(), Contains("does not count"));
}

TEST_CASE("a manifest edited after signing does not count", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.repo.write("ci/run.sh", lines("CHARLIE"));
  f.commit("edit a and run.sh");
  // Signed for a.txt only; run.sh's binding added to the text afterwards.
  f.write_signed("edited", "version = 1\n" + f.binding("tests/a.txt", "modify"), "owner");
  f.repo.write("kaicoder-approvals/edited.toml",
               "version = 1\n" + f.binding("tests/a.txt", "modify") + f.binding("ci/run.sh", "modify"));
  f.commit("approval, edited");
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("uncovered") == 2);
  CHECK(j.at("manifests")[0].at("valid") == false);
  CHECK_THAT(j.at("manifests")[0].at("problem").get<std::string>(), Contains("does not verify"));
}

TEST_CASE("a manifest for another blob does not cover the change", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("first"));
  f.commit("edit a");
  f.approve("first", f.binding("tests/a.txt", "modify"));
  f.repo.write("tests/a.txt", lines("second"));
  f.commit("edit a again");
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 6);
  json c = change_at(json_of(r), "tests/a.txt");
  CHECK(c.at("covered") == false);
  CHECK(c.at("commit") == f.head());
  CHECK_THAT(c.at("reason").get<std::string>(), Contains("for another result"));
}

TEST_CASE("a change cannot add its own signer to the allowed signers", "[e2e][verify]") {
  Certified f;
  f.repo.write("signers", f.repo.read("signers") + "agent@example.com " + f.pub("stranger"));
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("trust myself and edit a");
  f.approve("self", f.binding("tests/a.txt", "modify") + f.binding("signers", "modify"), "stranger");
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("uncovered") == 2);
  CHECK(change_at(j, "tests/a.txt").at("covered") == false);
  CHECK(change_at(j, "signers").at("covered") == false);
  CHECK(j.at("manifests")[0].at("valid") == false);
}

TEST_CASE("a change cannot drop a path from [certify] paths", "[e2e][verify]") {
  Certified f;
  f.repo.write("kaicoder.toml", "[certify]\npaths = [\"ci/**\"]\nallowed_signers = \"signers\"\n");
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("stop certifying tests");
  Run r = f.verify();
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("paths") == json::array({"tests/**", "ci/**"}));
  CHECK(change_at(j, "tests/a.txt").at("covered") == false);
  CHECK(change_at(j, "kaicoder.toml").at("covered") == false);
}

TEST_CASE("a revision that does not resolve exits 2 with the shallow-checkout hint", "[e2e][verify]") {
  Certified f;
  for (const auto& args : std::vector<std::vector<std::string>>{{"verify", "--base", "no-such-branch"},
                                                                {"verify", "--base", "base", "--head", "deadbeef"}}) {
    Run r = f.repo.kai(args);
    KAI_CHECK_EXIT(r, 2);
    CHECK_THAT(r.err, Contains("does not resolve to a commit"));
    CHECK_THAT(r.err, Contains("fetch the full history"));
  }
  Run j = f.repo.kai({"--json", "verify", "--base", "no-such-branch"});
  KAI_CHECK_EXIT(j, 2);
  CHECK(json_of(j).at("error").at("kind") == "usage");
}

TEST_CASE("verify --worktree checks uncommitted changes", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.repo.write("tests/untracked.txt", lines("untracked"));
  KAI_CHECK_EXIT(f.verify(), 0);
  Run r = f.verify({"--worktree"});
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("uncovered") == 2);
  json c = change_at(j, "tests/a.txt");
  CHECK(c.at("commit") == nullptr);
  CHECK(c.at("introduced") == "uncommitted");
  CHECK(change_at(j, "tests/untracked.txt").at("kind") == "add");
  KAI_CHECK_EXIT(f.repo.kai({"verify", "--worktree", "--head", "HEAD"}), 2);
}

TEST_CASE("verify counts from the merge base with the upstream branch by default", "[e2e][verify]") {
  Certified f;
  f.track_mainline("base");
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("edit a");
  Run r = f.repo.kai({"--json", "verify"});
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("base_from") == "merge base with mainline");
  CHECK(j.at("base") == f.git_out({"rev-parse", "base"}));
}

TEST_CASE("verify refuses a folder outside any git repository", "[e2e][verify]") {
  TempRepo repo;
  Run r = repo.kai({"--root", repo.home().string(), "verify"});
  KAI_CHECK_EXIT(r, 2);
  CHECK_THAT(r.err, Contains("is not in a git repository"));
}

TEST_CASE("certify signs the uncovered changes at a terminal and verify then passes", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.git({"mv", "tests/b.txt", "tests/renamed.txt"});
  f.commit("edit a, rename b");
  Run r = f.repo.kai_tty({"certify", "--base", "base", "--key", f.key("owner").string()}, "y");
  KAI_REQUIRE_EXIT(r, 0);
  CHECK(r.prompted);
  CHECK_THAT(r.out, Contains("tests/a.txt"));
  CHECK_THAT(r.out, Contains("tests/b.txt -> tests/renamed.txt"));
  auto written = f.repo.ls("kaicoder-approvals");
  REQUIRE(written.size() == 2);
  CHECK(written[1] == written[0] + ".sig");
  KAI_CHECK_EXIT(f.verify({"--worktree"}), 0);
  KAI_CHECK_EXIT(f.verify(), 6);  // not committed yet
  f.commit("approve");
  Run ok = f.verify();
  KAI_CHECK_EXIT(ok, 0);
  CHECK(json_of(ok).at("changes").size() == 2);
  // Nothing left to sign.
  Run again = f.repo.kai_tty({"certify", "--base", "base", "--key", f.key("owner").string()}, "y");
  KAI_CHECK_EXIT(again, 0);
  CHECK_THAT(again.out, Contains("nothing to certify"));
}

TEST_CASE("certify refuses without a terminal and writes nothing", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("edit a");
  auto before = f.repo.tree_snapshot();
  Run r = f.repo.kai({"certify", "--base", "base", "--key", f.key("owner").string()}, "y\n");
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains("no terminal to sign from"));
  CHECK(f.repo.tree_snapshot() == before);
  CHECK_FALSE(f.repo.exists("kaicoder-approvals"));
}

TEST_CASE("certify writes nothing when the person says no or the key is not allowed", "[e2e][verify]") {
  Certified f;
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("edit a");
  Run no = f.repo.kai_tty({"certify", "--base", "base", "--key", f.key("owner").string()}, "n");
  KAI_CHECK_EXIT(no, 4);  // declined (SPEC §3)
  CHECK_THAT(no.err, Contains("not signed"));
  CHECK_FALSE(f.repo.exists("kaicoder-approvals"));
  Run stranger = f.repo.kai_tty({"certify", "--base", "base", "--key", f.key("stranger").string()}, "y");
  KAI_CHECK_EXIT(stranger, 3);
  CHECK_THAT(stranger.err, Contains("not an allowed signer"));
  CHECK_FALSE(f.repo.exists("kaicoder-approvals"));
}

TEST_CASE("doctor warns about uncovered changes to certified paths", "[e2e][verify]") {
  Certified f;
  f.track_mainline("base");
  Run clean = f.repo.kai({"--json", "doctor"});
  auto check = [](const Run& r) {
    const json j = json_of(r);
    for (const auto& c : j.at("checks"))
      if (c.at("name") == "certification") return c;
    return json(nullptr);
  };
  CHECK(check(clean).at("level") == "ok");
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("edit a");
  Run warn = f.repo.kai({"--json", "doctor"});
  json c = check(warn);
  CHECK(c.at("level") == "warn");
  CHECK_THAT(c.at("detail").get<std::string>(), Contains("1 change to certified paths"));
}

TEST_CASE("[certify] base is read from the default base, so a change cannot move its own base", "[e2e][verify]") {
  Certified f;
  f.repo.write("kaicoder.toml", k_config + "base = \"base\"\n");
  f.commit("count from the base tag");
  f.track_mainline("HEAD");
  f.repo.write("tests/a.txt", lines("ALPHA"));
  f.commit("edit a");
  // The change tries to move the base up to itself.
  f.repo.write("kaicoder.toml", k_config + "base = \"HEAD\"\n");
  f.commit("move the base");
  Run r = f.repo.kai({"--json", "verify"});
  KAI_CHECK_EXIT(r, 6);
  json j = json_of(r);
  CHECK(j.at("base_from") == "[certify] base = \"base\"");
  CHECK(j.at("base") == f.git_out({"rev-parse", "base"}));
  CHECK(change_at(j, "tests/a.txt").at("covered") == false);
  CHECK(change_at(j, "kaicoder.toml").at("covered") == false);
}
