// Attacks through what kaicoder reads for an agent: the input files of a
// proposal, hard links and symlinks to files outside root, kaicoder's own
// changelog planted as a link, a mount inside root, and credential files the
// secret list did not know.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "tests/support/checks.hpp"

namespace kai::test {
namespace {
namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using nlohmann::json;

const std::string k_token = "sk-live-0123456789abcdefSECRET";
const std::string k_outside_secret = "aws_secret_access_key = OUTSIDEwJalrXUtnFEMI0123456789\n";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A file outside root the agent wants: `home/.aws/credentials`, beside the
// repository (so it can be hard-linked into it).
fs::path plant_outside(const TempRepo& repo) {
  fs::path f = repo.home() / ".aws" / "credentials";
  fs::create_directories(f.parent_path());
  std::ofstream(f) << "[default]\n" << k_outside_secret;
  return f;
}

// A folder outside root and outside /tmp (the cases run under $TMPDIR,
// often /tmp itself, whose files of the caller's are allowed as input).
struct OutsideDir {
  fs::path path;
  OutsideDir() {
    std::string templ = "/var/tmp/kaicoder-outside-XXXXXX";
    REQUIRE(::mkdtemp(templ.data()) != nullptr);
    path = templ;
  }
  ~OutsideDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path write(const std::string& rel, const std::string& bytes) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << bytes;
    return path / rel;
  }
};

// Nothing staged, nothing logged, tree as before, outside file as before.
struct Untouched {
  const TempRepo& repo;
  std::map<std::string, std::string> tree = repo.tree_snapshot();
  std::vector<std::string> staging = repo.ls(".kaicoder/staging");
  void check() const {
    CHECK(repo.tree_snapshot() == tree);
    CHECK(repo.ls(".kaicoder/staging") == staging);
  }
};

void refused(const Run& r, const std::string& why) {
  KAI_CHECK_EXIT(r, 3);
  CHECK_THAT(r.err, Contains(why));
  CHECK_THAT(r.all(), !Contains("OUTSIDEwJalr"));
  CHECK_THAT(r.all(), !Contains(k_token));
}

std::vector<std::string> write_with(const std::string& path, const std::string& opt, const std::string& file) {
  return {"propose", "--dry-run", "--path", path, opt, file, "--why", "t"};
}

// A file of ours directly in /tmp (not $TMPDIR), removed at the end.
struct TmpFile {
  fs::path path;
  explicit TmpFile(const std::string& bytes) {
    std::string templ = "/tmp/kaicoder-input-XXXXXX";
    int fd = ::mkstemp(templ.data());
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(fd);
    path = templ;
  }
  ~TmpFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

}  // namespace

TEST_CASE("attack: input files outside root, secret or linked are refused, and the secret is never printed",
          "[attack][inputs]") {
  TempRepo repo{
      {"a.txt", "old\n"}, {"services/api/config/.env", "API_TOKEN=" + k_token + "\n"}, {"notes.txt", "hello\n"}};
  repo.init();
  const fs::path beside = plant_outside(repo);
  OutsideDir far;
  const fs::path outside = far.write(".aws/credentials", "[default]\n" + k_outside_secret);
  const fs::path notes = far.write("notes.txt", "plain notes\n");
  repo.symlink("creds-link", outside.string());
  REQUIRE(::link(beside.c_str(), repo.abs("creds-hard").c_str()) == 0);
  REQUIRE(::link(repo.abs("services/api/config/.env").c_str(), repo.abs("env-hard").c_str()) == 0);
  const std::string outside_before = slurp(outside);
  Untouched before{repo};

  // A secret file inside root, at any depth.
  refused(repo.kai(write_with("a.txt", "--content-file", "services/api/config/.env")), "secret file");
  refused(repo.kai(write_with("a.txt", "--replacement-file", "services/api/config/.env")), "secret file");
  // A file outside root, by absolute and by relative path.
  refused(repo.kai(write_with("a.txt", "--content-file", outside.string())), "outside the root");
  refused(repo.kai(write_with("a.txt", "--content-file", notes.string())), "outside the root");
  refused(repo.kai(write_with("a.txt", "--content-file", "../home/.aws/credentials")), "");
  refused(repo.kai({"propose", "--dry-run", "--path", "a.txt", "--target-file", outside.string(), "--replacement", "x",
                    "--why", "t"}),
          "outside the root");
  // Through a symlink or a hard link inside root.
  refused(repo.kai(write_with("a.txt", "--content-file", "creds-link")), "symlink");
  refused(repo.kai(write_with("a.txt", "--content-file", "creds-hard")), "hard links");
  refused(repo.kai(write_with("a.txt", "--content-file", "env-hard")), "hard links");
  // $TMPDIR is the caller's to set: only /tmp itself counts.
  const fs::path in_tmpdir = far.write("tmp/c.txt", "from tmpdir\n");
  refused(repo.kai(write_with("a.txt", "--content-file", in_tmpdir.string()), "",
                   {{"TMPDIR", in_tmpdir.parent_path().string()}}),
          "outside the root");
  // And nothing happened on the real (non-dry) path either.
  refused(repo.kai({"propose", "--path", "a.txt", "--content-file", outside.string(), "--why", "t"}), "outside");
  before.check();
  CHECK(slurp(outside) == outside_before);
}

TEST_CASE("attack: an input file in /tmp counts only when it is the caller's, plain and single-linked",
          "[attack][inputs]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  OutsideDir far;
  const fs::path outside = far.write(".aws/credentials", "[default]\n" + k_outside_secret);
  TmpFile mine("new from tmp\n");
  Run ok = repo.kai(write_with("a.txt", "--content-file", mine.path.string()));
  KAI_CHECK_EXIT(ok, 0);
  CHECK_THAT(ok.out, Contains("+new from tmp"));

  // A symlink in /tmp to the outside secret.
  const fs::path link = mine.path.string() + "-link";
  fs::create_symlink(outside, link);
  refused(repo.kai(write_with("a.txt", "--content-file", link.string())), "symlink");
  fs::remove(link);
  // A file of ours with a second name: either name may be the other file.
  const fs::path hard = mine.path.string() + "-hard";
  REQUIRE(::link(mine.path.c_str(), hard.c_str()) == 0);
  refused(repo.kai(write_with("a.txt", "--content-file", hard.string())), "hard links");
  refused(repo.kai(write_with("a.txt", "--content-file", mine.path.string())), "hard links");
  fs::remove(hard);
  // A secret file of ours in /tmp is still a secret file.
  const fs::path folder = mine.path.string() + "-dir";
  fs::create_directories(folder / ".aws");
  ::chmod(folder.c_str(), 0700);
  std::ofstream(folder / ".aws" / "credentials") << k_outside_secret;
  refused(repo.kai(write_with("a.txt", "--content-file", (folder / ".aws" / "credentials").string())), "secret file");
  fs::remove_all(folder);
  // Someone else's file (the tests run as root in CI, which can give it away).
  if (::geteuid() == 0) {
    TmpFile theirs("someone else's\n");
    REQUIRE(::chown(theirs.path.c_str(), 65534, 65534) == 0);
    refused(repo.kai(write_with("a.txt", "--content-file", theirs.path.string())), "not your file");
  } else {
    WARN("not root: the case of another user's file in /tmp is not checked");
  }
  // stdin stays what it was.
  Run in = repo.kai(write_with("a.txt", "--content-file", "-"), "from stdin\n");
  KAI_CHECK_EXIT(in, 0);
  CHECK_THAT(in.out, Contains("+from stdin"));
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("attack: content that holds a secret value is shown redacted, needs CONFIRM and says how many were hidden",
          "[attack][inputs]") {
  TempRepo repo{{"a.txt", "old\n"}, {"deep/er/still/deeper/.env", "DB_PASSWORD=" + k_token + "\n"}};
  repo.init();
  TmpFile content("line one\npassword = " + k_token + "\n");
  Run p = repo.kai({"propose", "--path", "a.txt", "--content-file", content.path.string(), "--why", "t"});
  KAI_REQUIRE_EXIT(p, 0);
  CHECK_THAT(p.all(), !Contains(k_token));
  CHECK_THAT(p.out, Contains("[REDACTED:DB_PASSWORD]"));
  json shown = show_json(repo, 1);
  CHECK(shown.at("tier") == "confirm");
  CHECK_THAT(shown.at("tier_reason").get<std::string>(), Contains("1 secret value"));
  Run s = repo.kai({"show", "1"});
  CHECK_THAT(s.all(), !Contains(k_token));
  CHECK_THAT(s.out, Contains("1 secret value"));
  // Plain y is not enough.
  Run y = repo.kai_tty({"approve", "1"}, "y");
  CHECK_THAT(y.tty, Contains("CONFIRM"));
  CHECK_THAT(y.all(), Contains("not approved"));
  CHECK(show_json(repo, 1).at("status") == "pending");
  CHECK_THAT(y.all(), !Contains(k_token));
  CHECK(repo.read("a.txt") == "old\n");
}

TEST_CASE("attack: read refuses a hard link to a file outside root or to a secret file", "[attack][inputs]") {
  TempRepo repo{{"a.txt", "plain\n"}, {".env", "API_TOKEN=" + k_token + "\n"}};
  repo.init();
  const fs::path outside = plant_outside(repo);
  REQUIRE(::link(outside.c_str(), repo.abs("creds").c_str()) == 0);
  REQUIRE(::link(repo.abs(".env").c_str(), repo.abs("env-copy").c_str()) == 0);
  Untouched before{repo};
  refused(repo.kai({"read", "creds"}), "hard links");
  refused(repo.kai({"read", "env-copy"}), "hard links");
  refused(repo.kai({"--json", "read", "creds"}), "");
  KAI_CHECK_EXIT(repo.kai({"read", "a.txt"}), 0);
  before.check();
}

TEST_CASE("attack: a changelog planted as a symlink to an outside file is never read into the new changelog",
          "[attack][inputs]") {
  TempRepo repo{{"a.txt", "old\n"}};
  repo.init();
  const fs::path outside = plant_outside(repo);
  const std::string outside_before = slurp(outside);
  KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", "old", "new")), 0);
  if (repo.exists("KAI-CODER-CHANGELOG.md")) repo.remove("KAI-CODER-CHANGELOG.md");
  repo.symlink("KAI-CODER-CHANGELOG.md", outside.string());
  Run a = repo.kai_tty({"approve", "1"}, "y");
  KAI_CHECK_EXIT(a, 3);
  CHECK_THAT(a.all(), Contains("symlink"));
  CHECK_THAT(a.all(), !Contains("OUTSIDEwJalr"));
  // No file in the tree or the store holds the outside bytes; the tree and
  // the outside file are as they were.
  CHECK(repo.read("a.txt") == "old\n");
  CHECK(repo.is_symlink("KAI-CODER-CHANGELOG.md"));
  CHECK(slurp(outside) == outside_before);
  std::error_code ec;
  for (fs::recursive_directory_iterator it(repo.path(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink() || !it->is_regular_file()) continue;
    INFO(it->path());
    CHECK(slurp(it->path()).find("OUTSIDEwJalr") == std::string::npos);
  }
  // log and show still answer; they only read.
  Run log = repo.kai({"log"});
  CHECK(log.exit_code == 3);
  CHECK_THAT(log.all(), !Contains("OUTSIDEwJalr"));
}

TEST_CASE("attack: a state dir or changelog folder planted as a symlink takes no write outside root",
          "[attack][inputs]") {
  for (const std::string sub : {"", "/journal", "/staging"}) {
    INFO("symlinked: .kaicoder" << sub);
    TempRepo repo{{"a.txt", "old\n"}};
    repo.init();
    OutsideDir far;
    // As a cloned repository could commit it: the folder is a link elsewhere.
    // Copied, then removed: the cases' temp folder may be another file system than /var/tmp.
    fs::copy(repo.abs(".kaicoder" + sub), far.path / "state", fs::copy_options::recursive);
    fs::remove_all(repo.abs(".kaicoder" + sub));
    repo.symlink(".kaicoder" + sub, (far.path / "state").string());
    auto outside_before = [&] {
      std::vector<std::string> names;
      for (const auto& e : fs::recursive_directory_iterator(far.path)) names.push_back(e.path().string());
      std::sort(names.begin(), names.end());
      return names;
    };
    const auto before = outside_before();
    Run p = repo.kai(edit("a.txt", "old", "new"));
    KAI_CHECK_EXIT(p, 3);
    CHECK_THAT(p.err, Contains("symlink"));
    CHECK(outside_before() == before);
    CHECK(repo.read("a.txt") == "old\n");
  }
}

TEST_CASE("attack: a bind mount inside root takes no read and no write outside it", "[attack][inputs]") {
  TempRepo repo{{"a.txt", "old\n"}, {"sub/keep.txt", "k\n"}};
  repo.init();
  // Writes under sub/ pass without a person, so that the agent alone could
  // land one: exactly what the mount must not carry outside.
  repo.write("kaicoder.toml", repo.read("kaicoder.toml") +
                                  "\n[[policy.rule]]\naction = \"write\"\npath = \"sub/**\"\ndecision = \"allow\"\n");
  repo.trust();  // the owner trusts the changed config at a terminal
  const fs::path outdir = repo.home() / "outdir";
  fs::create_directories(outdir);
  std::ofstream(outdir / "secret.txt") << k_outside_secret;
  const std::string kai = kaicoder_bin();
  auto in_namespace = [&](const std::string& then) {
    std::string body = "mount --bind '" + outdir.string() + "' sub || exit 77; " + then;
    return repo.spawn({"unshare", "-m", "--propagation", "private", "sh", "-c", body}).finish();
  };
  Run r = in_namespace("'" + kai + "' read sub/secret.txt");
  if (r.exit_code == 77 || r.exit_code == 127 || r.err.find("unshare failed") != std::string::npos) {
    WARN("SKIPPED: cannot mount in a namespace here: " << r.all());
    return;
  }
  refused(r, "mount point");
  Run w = in_namespace("printf 'pwned\\n' | '" + kai + "' propose --path sub/new.txt --content-file - --why t");
  KAI_CHECK_EXIT(w, 3);
  CHECK_THAT(w.err, Contains("mount point"));
  CHECK_FALSE(fs::exists(outdir / "new.txt"));
  CHECK(fs::exists(outdir / "secret.txt"));
  CHECK_FALSE(repo.exists("sub/new.txt"));
  // The same write without the mount lands where it belongs.
  KAI_CHECK_EXIT(repo.kai({"propose", "--path", "sub/new.txt", "--content-file", "-", "--why", "t"}, "ok\n"), 0);
  CHECK(repo.read("sub/new.txt") == "ok\n");
}

TEST_CASE("attack: credential files at any depth are refused and their values redacted everywhere",
          "[attack][inputs]") {
  TempRepo repo{{"a/b/c/d/e/.env", "DEEP_VALUE=" + k_token + "\n"},
                {"copy.txt", "the value is " + k_token + "\n"},
                {"k8s/kubeconfig", "token: kube-token-0123456789\n"},
                {"php/auth.json", "{\n  \"github-oauth\": \"gho_0123456789abcdef\"\n}\n"},
                {"infra/prod.tfvars", "db_password = \"tfvars-secret-012345\"\n"},
                {".config/gh/hosts.yml", "github.com:\n  oauth_token: gho_abcdef0123456789\n"},
                {"x/y/z/service-account-ci.json", "{\"private_key_id\": \"sa-key-0123456789\"}\n"},
                {".env.example", "DEEP_VALUE=changeme\n"},
                {"config.txt", "kube-token-0123456789 tfvars-secret-012345\n"}};
  repo.init();
  for (const char* f : {"a/b/c/d/e/.env", "k8s/kubeconfig", "php/auth.json", "infra/prod.tfvars",
                        ".config/gh/hosts.yml", "x/y/z/service-account-ci.json"}) {
    INFO(f);
    refused(repo.kai({"read", f}), "secret file");
  }
  // Values found five folders down are hidden in every other file.
  Run copy = repo.kai({"read", "copy.txt"});
  KAI_CHECK_EXIT(copy, 0);
  CHECK_THAT(copy.out, Contains("[REDACTED:DEEP_VALUE]"));
  Run cfg = repo.kai({"read", "config.txt"});
  CHECK_THAT(cfg.out, !Contains("kube-token-0123456789"));
  CHECK_THAT(cfg.out, !Contains("tfvars-secret-012345"));
  // Documentation of a secret file is an ordinary file.
  KAI_CHECK_EXIT(repo.kai({"read", ".env.example"}), 0);
  KAI_CHECK_EXIT(repo.kai({"propose", "--path", ".env.example", "--content-file", "-", "--why", "t"}, "X=1\n"), 0);
}

TEST_CASE("attack: only existing *.bak* backups and kaicoder's own backup names are never written",
          "[attack][inputs]") {
  TempRepo repo{{"notes.bak", "someone's backup\n"}, {"a.txt", "a\n"}};
  repo.init();
  Untouched before{repo};
  refused(repo.kai({"propose", "--path", "notes.bak", "--content-file", "-", "--why", "t"}, "x\n"), "existing backup");
  refused(repo.kai({"propose", "--path", "a.txt.bak-kaicoder-20260101T000000Z", "--content-file", "-", "--why", "t"},
                   "x\n"),
          "kaicoder backup name");
  before.check();
  Run made = repo.kai({"propose", "--path", "docs/archive.bak", "--content-file", "-", "--why", "t"}, "archive\n");
  KAI_CHECK_EXIT(made, 0);
}

}  // namespace kai::test

TEST_CASE("attack: a changeset naming a file whose name is not UTF-8 is refused whole, saying so", "[attack][inputs]") {
  const std::string name = "n\xff.txt";
  TempRepo repo{{"a.txt", "old\n"}, {name, "x\n"}};
  repo.init();
  const auto tree = repo.tree_snapshot();
  const std::string quoted = "\"a/n\\377.txt\"", quoted_b = "\"b/n\\377.txt\"";
  const std::string change = "diff --git " + quoted + " " + quoted_b + "\n--- " + quoted + "\n+++ " + quoted_b +
                             "\n@@ -1 +1 @@\n-x\n+y\n";
  const std::string remove = "diff --git " + quoted + " " + quoted_b + "\ndeleted file mode 100644\n--- " + quoted +
                             "\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
  const std::string with_other = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n" +
                                 change;
  for (const std::string& patch : {change, remove, with_other}) {
    INFO(patch);
    Run r = repo.kai({"propose", "--patch", "-", "--why", "w"}, patch);
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("n\\xff.txt") && Contains("not valid UTF-8") &&
                          Contains("the whole changeset is refused"));
    CHECK(repo.tree_snapshot() == tree);
    CHECK_FALSE(repo.exists(".kaicoder/staging/1"));
  }
  // A single-file proposal is refused by the same guardrail, with the same code.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"propose", "--path", name, "--content-file", "-", "--why", "w"},
        {"propose", "--path", name, "--delete", "--why", "w"}}) {
    Run r = repo.kai(args, "y\n");
    KAI_CHECK_EXIT(r, 3);
    CHECK_THAT(r.err, Contains("not valid UTF-8"));
    CHECK(repo.tree_snapshot() == tree);
  }
}
