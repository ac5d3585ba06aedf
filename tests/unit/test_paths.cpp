// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "lib/gate/decide.hpp"
#include "lib/store/mac.hpp"
#include "lib/paths/paths.hpp"
#include "lib/gate/propose.hpp"
#include "unit/still_clock.hpp"
#include "unit/trusted_root.hpp"

using namespace std::literals;
using kai::Errc;
namespace fs = std::filesystem;

namespace {

// Every case runs in a fresh temp dir laid out as
//   T/root/              the governed root
//   T/outside/secret.txt something an escape would reach
//   T/root2/x.txt        a sibling whose name starts with the root's name
// `setup` adds to root, one item per word:
//   f:PATH          a file          d:PATH          a folder
//   l:PATH=TARGET   a symlink       h:PATH=EXISTING a hard link
// In targets, paths and cwd, {root}, {out} and {tmp} stand for T/root,
// T/outside and T.
enum class Check { resolve, write, read };
enum class Rails { standard, custom, unusual };  // unusual: standard + allow_unusual_names

struct Expect {
  std::optional<std::string> rel;  // set: resolve (and the check) succeed with this rel
  Errc code = Errc::io;
};
Expect ok(std::string rel) { return Expect{std::move(rel), Errc::io}; }
Expect no(Errc code) { return Expect{std::nullopt, code}; }

struct Case {
  std::string setup;
  std::string cwd;  // relative to root, or with a placeholder
  std::string path;
  Check check;
  Expect want;
  Rails rails = Rails::standard;
};

kai::Guardrails rails_for(Rails r) {
  kai::Guardrails g;
  g.allow_unusual_names = r == Rails::unusual;
  if (r == Rails::standard || r == Rails::unusual) {
    g.config_files = {"kaicoder.toml", "config/kai.toml"};
    g.deny_write = {"secrets/**", "*.generated.c", "/vendor/"};
    g.deny_read = {"private/**", "*.sqlite"};
  } else {
    g.state_dir = "var/kai/";
    g.changelog = "docs/CHANGES-KAI.md";
    g.config_files = {"conf/kai.toml"};
  }
  return g;
}

std::string expand(std::string s, const kai::test::TempDir& t) {
  auto swap = [&](std::string_view key, const std::string& value) {
    for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
      s.replace(at, key.size(), value);
  };
  swap("{root}", (t / "root").string());
  swap("{out}", (t / "outside").string());
  swap("{tmp}", t.path().string());
  return s;
}

void build(const kai::test::TempDir& t, const std::string& setup) {
  t.write("outside/secret.txt", "outside\n");
  t.write("root2/x.txt", "sibling\n");
  t.mkdir("root");
  std::istringstream words(setup);
  for (std::string w; words >> w;) {
    std::string body = expand(w.substr(2), t);
    size_t eq = body.find('=');
    std::string name = "root/" + body.substr(0, eq);
    if (w[0] == 'f')
      t.write(name, "x\n");
    else if (w[0] == 'd')
      t.mkdir(name);
    else if (w[0] == 'l')
      t.symlink(name, body.substr(eq + 1));
    else if (w[0] == 'h')
      t.hardlink(name, (fs::path("root") / body.substr(eq + 1)).string());  // absolute stays so
    else
      FAIL("bad setup word " << w);
  }
}

std::string long_name(size_t n) { return std::string(n, 'n'); }
std::string repeat(const std::string& part, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += (i ? "/" : "") + part;
  return out;
}

constexpr Check R = Check::resolve;
constexpr Check W = Check::write;
constexpr Check Rd = Check::read;
constexpr Errc denied = Errc::denied;
constexpr Errc usage = Errc::usage;

std::vector<Case> resolve_cases() {
  return {
      // plain paths, relative and absolute, existing or not
      {"f:a.txt", "", "a.txt", R, ok("a.txt")},
      {"", "", "new.txt", R, ok("new.txt")},
      {"d:src", "", "src/new/deep.c", R, ok("src/new/deep.c")},
      {"d:src", "src", "main.c", R, ok("src/main.c")},
      {"d:src/lib", "src/lib", "../x.c", R, ok("src/x.c")},
      {"", "", "./a/../b", R, ok("b")},
      {"", "", "a/./b", R, ok("a/b")},
      {"", "", "a//b", R, ok("a/b")},
      {"", "", ".//a", R, ok("a")},
      {"f:a.txt", "", "{root}/a.txt", R, ok("a.txt")},
      {"f:a.txt", "", "{root}/x/../a.txt", R, ok("a.txt")},
      {"d:src", "src", "{root}/a.txt", R, ok("a.txt")},
      {"", "{out}", "{root}/a.txt", R, ok("a.txt")},
      {"", "{out}", "../root/a.txt", R, ok("a.txt")},
      {"d:docs", "", "docs", R, ok("docs")},
      {"d:docs", "", "docs/", R, ok("docs")},
      {"d:d/e", "", "d/e/..", R, ok("d")},
      {"", "", "file.", R, ok("file.")},
      {"", "", "a/b.", R, ok("a/b.")},
      {"", "", "...", R, ok("...")},
      {"", "", "a b.txt", R, ok("a b.txt")},
      {"", "", "ünïcödé.txt", R, ok("ünïcödé.txt")},
      {"", "", "-rf", R, ok("-rf")},
      {"", "", "a~", R, ok("a~")},
      {"", "", "a/~/b", R, ok("a/~/b")},
      {"", "", long_name(255), R, ok(long_name(255))},
      {"", "", repeat(long_name(99), 40), R, ok(repeat(long_name(99), 40))},
      // trailing slashes and dots on something that is not a folder
      {"f:a.txt", "", "a.txt/", R, no(usage)},
      {"", "", "missing/", R, no(usage)},
      {"f:a.txt", "", "a.txt/.", R, no(usage)},
      {"f:d/e", "", "d/e/..", R, ok("d")},
      {"f:a.txt", "", "a.txt/x", R, no(usage)},
      {"f:f", "", "f/x/y", R, no(usage)},
      // relative and absolute escapes
      {"", "", "../x", R, no(denied)},
      {"", "", "..", R, no(denied)},
      {"", "", "../root2/x.txt", R, no(denied)},
      {"", "", "{tmp}/root2/x.txt", R, no(denied)},
      {"", "", "a/../../x", R, no(denied)},
      {"", "", "./../x", R, no(denied)},
      {"d:src", "src", "../../x", R, no(denied)},
      {"", "", "{out}/secret.txt", R, no(denied)},
      {"", "", "/etc/passwd", R, no(denied)},
      {"", "", "/", R, no(denied)},
      {"", "", "{root}/../outside/secret.txt", R, no(denied)},
      {"", "", "{root}/..", R, no(denied)},
      {"", "", "../../../../../../../../../../etc/passwd", R, no(denied)},
      {"", "{out}", "secret.txt", R, no(denied)},
      {"", "{out}", "new.txt", R, no(denied)},
      // the root itself
      {"", "", ".", R, no(denied)},
      {"", "", "./", R, no(denied)},
      {"", "", "{root}", R, no(denied)},
      {"", "", "{root}/", R, no(denied)},
      {"", "", "a/..", R, no(denied)},
      {"d:src", "src", "..", R, no(denied)},
      {"l:self=.", "", "self/x", R, ok("x")},
      {"l:self=.", "", "self", R, no(denied)},
      // '~' is never expanded
      {"", "", "~/x", R, no(denied)},
      {"", "", "~", R, no(denied)},
      {"", "", "~root/.ssh/id_rsa", R, no(denied)},
      {"", "", "a/~", R, ok("a/~")},
      // NUL, empty and over-long
      {"", "", std::string("a\0b", 3), R, no(usage)},
      {"", "", std::string("\0", 1), R, no(usage)},
      {"", "", std::string("a.txt\0.png", 10), R, no(usage)},
      {"", "", "", R, no(usage)},
      // control, bidi, zero-width and line-separator characters: a guardrail
      {"", "", "a\nb", R, no(denied)},
      {"", "", "a.txt\n- approver: alice", R, no(denied)},
      {"", "", "a\x1b[31mb", R, no(denied)},
      {"", "", "a\tb", R, no(denied)},
      {"", "", "a\x7f", R, no(denied)},
      {"", "", "docs/notes\u202Egnp.sh", R, no(denied)},
      {"", "", "a\u200Bb.txt", R, no(denied)},
      {"", "", "a\u2028b.txt", R, no(denied)},
      {"", "", "a\u00ADb.txt", R, no(denied)},
      {"", "",
       "a\xC2\x85"
       "b.txt",
       R, no(denied)},
      {"", "",
       "a\xC2\x9B"
       "b.txt",
       R, no(denied)},
      {"", "", "\u2066x\u2069.txt", R, no(denied)},
      {"", "", "\uFEFFx.txt", R, no(denied)},
      // out of the root and back in is refused, not normalised
      {"f:a.txt", "", "../root/a.txt", R, no(denied)},
      {"d:src", "src", "../../root/src/x.c", R, no(denied)},
      {"d:src", "src", "{root}/../root/src/x.c", R, no(denied)},
      {"", "", long_name(256), R, no(usage)},
      {"", "", "d/" + long_name(300) + "/x", R, no(usage)},
      {"", "", repeat("a", 2048), R, no(usage)},
      {"", "", repeat(long_name(99), 41), R, no(usage)},
      // a final component that is a symlink, wherever it points
      {"f:a.txt l:ln=a.txt", "", "ln", R, no(denied)},
      {"f:a.txt l:ln=a.txt", "", "{root}/ln", R, no(denied)},
      {"l:dang=nowhere", "", "dang", R, no(denied)},
      {"l:dang={out}/nowhere", "", "dang", R, no(denied)},
      {"l:lo={out}/secret.txt", "", "lo", R, no(denied)},
      {"l:ld={out}", "", "ld", R, no(denied)},
      {"d:src l:ls=src", "", "ls", R, no(denied)},
      {"l:loop1=loop2 l:loop2=loop1", "", "loop1", R, no(denied)},
      {"d:src l:src/ln=../a.txt", "src", "ln", R, no(denied)},
      // symlinked parent folders: inside is followed to its real spelling,
      // outside or dangling is refused
      {"d:src l:ls=src", "", "ls/new.c", R, ok("src/new.c")},
      {"d:src/lib l:ls=src", "", "ls/lib/x.c", R, ok("src/lib/x.c")},
      {"d:src l:l1=src l:l2=l1", "", "l2/x", R, ok("src/x")},
      {"d:src l:abs={root}/src", "", "abs/x", R, ok("src/x")},
      {"d:src l:ls=src", "", "{root}/ls/x", R, ok("src/x")},
      {"d:src l:ls=src", "ls", "x.c", R, ok("src/x.c")},
      {"d:a l:a/up=..", "", "a/up/x", R, ok("x")},
      {"d:.git l:docs=.git", "", "docs/config", R, ok(".git/config")},
      {"l:lo={out}", "", "lo/secret.txt", R, no(denied)},
      {"l:lo={out}", "", "lo/new.txt", R, no(denied)},
      {"l:lo=../outside", "", "lo/x", R, no(denied)},
      {"l:lo=../root2", "", "lo/x.txt", R, no(denied)},
      {"d:a l:a/up2=../..", "", "a/up2/x", R, no(denied)},
      {"d:x l:x/o={out}", "", "x/o/y/z", R, no(denied)},
      {"l:abs_out=/etc", "", "abs_out/passwd", R, no(denied)},
      {"l:lo={out}", "lo", "x", R, no(denied)},
      {"l:dd=missing", "", "dd/x", R, no(denied)},
      {"l:dd={out}/missing", "", "dd/x", R, no(denied)},
      {"l:loop1=loop2 l:loop2=loop1", "", "loop1/x", R, no(denied)},
      {"f:a.txt l:lf=a.txt", "", "lf/x", R, no(usage)},
      // hard links cannot be told from the original; replace_at breaks them
      {"f:a.txt h:hard=a.txt", "", "hard", R, ok("hard")},
      {"h:hout={out}/secret.txt", "", "hout", R, ok("hout")},
      {"h:hout={out}/secret.txt", "", "hout", W, ok("hout")},
  };
}

std::vector<Case> write_cases() {
  return {
      // .git, as a folder or as the file of a worktree or submodule, any case
      {"d:.git", "", ".git/config", W, no(denied)},
      {"f:.git", "", ".git", W, no(denied)},
      {"", "", "sub/.git", W, no(denied)},
      {"", "", "sub/.git/hooks/pre-commit", W, no(denied)},
      {"", "", ".GIT/config", W, no(denied)},
      {"", "", ".Git/HEAD", W, no(denied)},
      {"", "", "git~1/config", W, no(denied)},
      {"", "", ".git./config", W, no(denied)},
      {"", "", ".g\u200cit/config", W, no(denied)},
      {"d:.git l:docs=.git", "", "docs/config", W, no(denied)},
      {"", "", ".gitignore", W, ok(".gitignore")},
      {"", "", ".gitmodules", W, ok(".gitmodules")},
      {"", "", ".github/workflows/ci.yml", W, ok(".github/workflows/ci.yml")},
      {"", "", "my.git/x", W, ok("my.git/x")},
      // the state dir, here and in nested roots
      {"", "", ".kaicoder/staging/1/x", W, no(denied)},
      {"", "", ".kaicoder", W, no(denied)},
      {"", "", ".KaiCoder/lock", W, no(denied)},
      {"", "", ".kaicoder/changelog-archive/2026.md", W, no(denied)},
      {"", "", "sub/.kaicoder/x", W, no(denied)},
      {"", "", ".kaicoder2/x", W, ok(".kaicoder2/x")},
      // signed approvals (kaicoder certify), here and in nested roots
      {"", "", "kaicoder-approvals/20261201T101500Z-3f2a.toml", W, no(denied)},
      {"", "", "kaicoder-approvals/x.toml.sig", W, no(denied)},
      {"", "", "kaicoder-approvals", W, no(denied)},
      {"", "", "Kaicoder-Approvals/x.toml", W, no(denied)},
      {"", "", "sub/kaicoder-approvals/x.toml", W, no(denied)},
      {"", "", "kaicoder-approvals.md", W, ok("kaicoder-approvals.md")},
      {"", "", "docs/kaicoder-approvals-howto/x.md", W, ok("docs/kaicoder-approvals-howto/x.md")},
      // the changelog
      {"", "", "KAI-CODER-CHANGELOG.md", W, no(denied)},
      {"", "", "kai-coder-changelog.md", W, no(denied)},
      {"", "", "KAI-CODER-CHANGELOG.md.1", W, no(denied)},
      {"", "", "docs/KAI-CODER-CHANGELOG.md", W, no(denied)},
      {"", "", "CHANGELOG.md", W, ok("CHANGELOG.md")},
      // kaicoder's own config
      {"", "", "kaicoder.toml", W, no(denied)},
      {"", "", "KAICODER.TOML", W, no(denied)},
      {"", "", "sub/kaicoder.toml", W, no(denied)},
      {"", "", "config/kai.toml", W, no(denied)},
      {"", "", ".config/kaicoder/config.toml", W, no(denied)},
      {"", "", "kaicoder.toml.example", W, ok("kaicoder.toml.example")},
      // custom state dir, changelog and config add to the built-ins
      {"", "", "var/kai/lock", W, no(denied), Rails::custom},
      {"", "", "docs/CHANGES-KAI.md", W, no(denied), Rails::custom},
      {"", "", "conf/kai.toml", W, no(denied), Rails::custom},
      {"", "", ".kaicoder/x", W, no(denied), Rails::custom},
      {"", "", "KAI-CODER-CHANGELOG.md", W, no(denied), Rails::custom},
      {"", "", "var/kaix/lock", W, ok("var/kaix/lock"), Rails::custom},
      // backups: kaicoder's own names always, other *.bak* names once they exist
      {"", "", "a.txt.bak-kaicoder-20260709T142530Z", W, no(denied)},
      {"", "", "src/a.txt.bak-kaicoder-x/y", W, no(denied)},
      {"f:src/x.bak", "", "src/x.bak", W, no(denied)},
      {"f:x.BAK", "", "x.BAK", W, no(denied)},
      {"d:old.bak", "", "old.bak/x.c", W, no(denied)},
      {"f:notes.bak~", "", "notes.bak~", W, no(denied)},
      {"", "", "docs/archive.bak", W, ok("docs/archive.bak")},
      {"", "", "src/x.bak", W, ok("src/x.bak")},
      {"", "", "new.bak/x.c", W, ok("new.bak/x.c")},
      {"", "", "notes.bak~", W, ok("notes.bak~")},
      {"", "", "x.backup", W, ok("x.backup")},
      {"", "", "bakery.txt", W, ok("bakery.txt")},
      // secret files are never written either
      {"", "", ".env", W, no(denied)},
      {"", "", ".ENV", W, no(denied)},
      {"", "", "prod.env", W, no(denied)},
      {"", "", ".env.local", W, no(denied)},
      {"", "", ".env.", W, no(denied)},
      {"", "", "config/.env", W, no(denied)},
      {"", "", ".envrc", W, no(denied)},
      {"", "", "id_rsa", W, no(denied)},
      {"", "", "id_rsa.pub", W, no(denied)},
      {"", "", "id_ed25519", W, no(denied)},
      {"", "", "id_ecdsa", W, no(denied)},
      {"", "", "certs/server.pem", W, no(denied)},
      {"", "", "server.key", W, no(denied)},
      {"", "", "cert.p12", W, no(denied)},
      {"", "", "cert.PFX", W, no(denied)},
      {"", "", ".netrc", W, no(denied)},
      {"", "", ".npmrc", W, no(denied)},
      {"", "", ".pypirc", W, no(denied)},
      {"", "", "credentials", W, no(denied)},
      {"", "", ".aws/credentials", W, no(denied)},
      {"", "", "credentials.json", W, no(denied)},
      {"", "", "release.keystore", W, no(denied)},
      {"", "", ".htpasswd", W, no(denied)},
      {"", "", "secrets.yaml", W, no(denied)},
      {"", "", ".ssh/authorized_keys", W, no(denied)},
      // one row per credential file of issue 9, item 5
      {"", "", ".credentials.json", W, no(denied)},
      {"", "", "a/.claude/.credentials.json", W, no(denied)},
      {"", "", "service-account.json", W, no(denied)},
      {"", "", "deploy/service-account-prod.json", W, no(denied)},
      {"", "", "prod.tfvars", W, no(denied)},
      {"", "", "infra/terraform.tfvars.json", W, no(denied)},
      {"", "", ".vault-token", W, no(denied)},
      {"", "", "kubeconfig", W, no(denied)},
      {"", "", "ops/kubeconfig.yaml", W, no(denied)},
      {"", "", ".kube/config", W, no(denied)},
      {"", "", ".s3cfg", W, no(denied)},
      {"", "", ".boto", W, no(denied)},
      {"", "", "auth.json", W, no(denied)},
      {"", "", "a/b/c/.npmrc", W, no(denied)},
      {"", "", "a/b/c/.pypirc", W, no(denied)},
      {"", "", "a/b/c/.netrc", W, no(denied)},
      {"", "", ".docker/config.json", W, no(denied)},
      {"", "", ".config/gh/hosts.yml", W, no(denied)},
      {"", "", "a/b/c/d/e/tls.pem", W, no(denied)},
      {"", "", "a/b/c/d/e/tls.key", W, no(denied)},
      {"", "", "krb5cc_1000", W, no(denied)},
      // documentation of a secret file's shape is not a secret
      {"", "", ".env.example", W, ok(".env.example")},
      {"", "", "config/.env.sample", W, ok("config/.env.sample")},
      {"", "", "prod.tfvars.template", W, ok("prod.tfvars.template")},
      {"", "", "auth.json.example", W, ok("auth.json.example")},
      {"", "", ".ssh/config.example", W, no(denied)},
      {"", "", "gh/hosts.yml", W, ok("gh/hosts.yml")},
      {"", "", "service.json", W, ok("service.json")},
      {"", "", "environment.ts", W, ok("environment.ts")},
      {"", "", "env/x", W, ok("env/x")},
      {"", "", "keys.txt", W, ok("keys.txt")},
      {"", "", "monkey.js", W, ok("monkey.js")},
      // generated folders at any depth
      {"", "", "node_modules/x/index.js", W, no(denied)},
      {"", "", "a/node_modules/x.js", W, no(denied)},
      {"", "", "target/debug/app", W, no(denied)},
      {"", "", "dist/app.js", W, no(denied)},
      {"", "", "build/x", W, no(denied)},
      {"", "", "src/build/x", W, no(denied)},
      {"", "", "BUILD/x", W, no(denied)},
      {"", "", "Node_Modules/x", W, no(denied)},
      {"", "", "build", W, ok("build")},
      {"", "", "build.gradle", W, ok("build.gradle")},
      {"", "", "builder/x", W, ok("builder/x")},
      {"", "", "distance.c", W, ok("distance.c")},
      {"", "", "targets/x", W, ok("targets/x")},
      // [paths] deny_write
      {"", "", "secrets/db.txt", W, no(denied)},
      {"", "", "Secrets/db.txt", W, no(denied)},
      {"", "", "src/x.generated.c", W, no(denied)},
      {"", "", "vendor/lib.c", W, no(denied)},
      {"", "", "src/vendor/lib.c", W, ok("src/vendor/lib.c")},
      {"", "", "src/main.c", W, ok("src/main.c")},
      {"", "", "secrets/db.txt", W, ok("secrets/db.txt"), Rails::custom},
      // a name must leave room for its backup (name.bak-kaicoder-<id>) in 255 bytes
      {"", "", long_name(217), W, ok(long_name(217))},
      {"", "", long_name(218), W, no(denied)},
      {"", "", long_name(226), W, no(denied)},
      {"", "", long_name(250), W, no(denied)},
      {"", "", "d/" + long_name(255), W, no(denied)},
      {"", "", long_name(250) + "/x.txt", W, ok(long_name(250) + "/x.txt")},
      {"", "", long_name(250), W, no(denied), Rails::unusual},
      // names that are shell syntax
      {"", "", "$HOME/x.txt", W, no(denied)},
      {"", "", "`echo x`.txt", W, no(denied)},
      {"", "", "$(touch pwned).txt", W, no(denied)},
      {"", "", "-rf", W, no(denied)},
      {"", "", "src/-x/y.c", W, no(denied)},
      {"", "", "--checkpoint-action=exec=sh x.sh", W, no(denied)},
      {"", "", "a;rm -rf ~.txt", W, no(denied)},
      {"", "", "..\\..\\x.txt", W, no(denied)},
      {"", "", "a|b.txt", W, no(denied)},
      {"", "", "a&b.txt", W, no(denied)},
      {"", "", "a<b.txt", W, no(denied)},
      {"", "", "a>b.txt", W, no(denied)},
      {"", "", "a\xff.txt", W, no(denied)},
      {"", "", "a\xC3.txt", W, no(denied)},
      {"", "", "caf\u00E9.md", W, ok("caf\u00E9.md")},
      {"", "", "\u65E5\u672C\u8A9E/\u30E1\u30E2.md", W, ok("\u65E5\u672C\u8A9E/\u30E1\u30E2.md")},
      {"", "", "x-y_z+1 (copy), #2 @a=b%c'd\"e!.txt", W, ok("x-y_z+1 (copy), #2 @a=b%c'd\"e!.txt")},
      {"", "", "a-.txt", W, ok("a-.txt")},
      // ... unless [paths] allow_unusual_names; hidden characters never
      {"", "", "$HOME/x.txt", W, ok("$HOME/x.txt"), Rails::unusual},
      {"", "", "-rf", W, ok("-rf"), Rails::unusual},
      {"", "", "a;b|c&d<e>f`g\\h.txt", W, ok("a;b|c&d<e>f`g\\h.txt"), Rails::unusual},
      {"", "", "a\xff.txt", W, no(denied), Rails::unusual},
      {"", "", "docs/notes\u202Egnp.sh", W, no(denied), Rails::unusual},
  };
}

std::vector<Case> read_cases() {
  return {
      {"", "", ".env", Rd, no(denied)},
      {"", "", ".ENV.production", Rd, no(denied)},
      {"", "", "id_rsa", Rd, no(denied)},
      {"", "", "a/b/server.pem", Rd, no(denied)},
      {"", "", "credentials.json", Rd, no(denied)},
      {"", "", ".ssh/config", Rd, no(denied)},
      {"", "", "home/.docker/config.json", Rd, no(denied)},
      {"", "", "deep/a/b/c/d/.credentials.json", Rd, no(denied)},
      {"", "", "x/y/service-account-ci.json", Rd, no(denied)},
      {"", "", "env/prod.tfvars", Rd, no(denied)},
      {"", "", "home/.vault-token", Rd, no(denied)},
      {"", "", "home/.kube/config", Rd, no(denied)},
      {"", "", "kubeconfig", Rd, no(denied)},
      {"", "", "home/.s3cfg", Rd, no(denied)},
      {"", "", "home/.boto", Rd, no(denied)},
      {"", "", "composer/auth.json", Rd, no(denied)},
      {"", "", "home/.config/gh/hosts.yml", Rd, no(denied)},
      {"", "", ".env.example", Rd, ok(".env.example")},
      {"", "", "docs/.env.template", Rd, ok("docs/.env.template")},
      {"", "", "private/notes.md", Rd, no(denied)},
      {"", "", "data.sqlite", Rd, no(denied)},
      {"", "", "src/main.c", Rd, ok("src/main.c")},
      {"", "", ".git/config", Rd, ok(".git/config")},
      {"", "", "build/x", Rd, ok("build/x")},
      {"", "", "KAI-CODER-CHANGELOG.md", Rd, ok("KAI-CODER-CHANGELOG.md")},
      {"", "", "secrets/db.txt", Rd, ok("secrets/db.txt")},
      {"", "", "a.txt.bak-kaicoder-20260709T142530Z", Rd, ok("a.txt.bak-kaicoder-20260709T142530Z")},
      {"", "", "docker/config.json", Rd, ok("docker/config.json")},
      {"", "", "private/notes.md", Rd, ok("private/notes.md"), Rails::custom},
  };
}

std::string describe(const Case& c) {
  std::string path = c.path.size() > 60 ? c.path.substr(0, 60) + "..." : c.path;
  for (char& ch : path)
    if (ch == '\0') ch = '@';
  const char* check = c.check == R ? "resolve" : c.check == W ? "write" : "read";
  // Sections are told apart by name, so every field goes in.
  return "setup '" + c.setup + "' cwd '" + c.cwd + "' path '" + path + "' " + check +
         (c.rails == Rails::custom    ? " (custom rails)"
          : c.rails == Rails::unusual ? " (unusual names allowed)"
                                      : "") +
         " #" + std::to_string(c.path.size());
}

void run_case(const Case& c) {
  kai::test::TempDir t;
  build(t, c.setup);
  fs::path root = t / "root";
  fs::path cwd = c.cwd.empty() ? root : fs::path(expand(c.cwd, t));
  if (cwd.is_relative()) cwd = root / cwd;
  kai::Result<kai::RootPath> r = kai::resolve(root, cwd, expand(c.path, t));
  kai::Status verdict = kai::ok_status();
  if (!r)
    verdict = r.error();
  else if (c.check == W)
    verdict = kai::check_write(rails_for(c.rails), *r);
  else if (c.check == Rd)
    verdict = kai::check_read(rails_for(c.rails), *r);

  if (c.want.rel) {
    INFO((verdict.ok() ? std::string() : verdict.error().message));
    REQUIRE(verdict.ok());
    CHECK(r->rel == *c.want.rel);
    CHECK(r->abs == root / *c.want.rel);
    return;
  }
  REQUIRE_FALSE(verdict.ok());
  INFO(verdict.error().message);
  CHECK(verdict.error().code == c.want.code);
  CHECK_FALSE(verdict.error().message.empty());
  CHECK(verdict.error().message.back() != '.');
  // Nothing in the messages starts with a capital: they follow "error: ".
  CHECK_FALSE(std::isupper(static_cast<unsigned char>(verdict.error().message.front())));
}

// ----- the same rows through propose and apply ------------------------------------------------

// Every file below T/outside and T/root2, path → bytes: what an escape would change.
std::map<std::string, std::string> outside_of_root(const kai::test::TempDir& t) {
  std::map<std::string, std::string> seen;
  for (const char* top : {"outside", "root2"})
    for (const auto& e : fs::recursive_directory_iterator(t / top))
      seen[fs::relative(e.path(), t.path()).string()] =
          e.is_regular_file() ? t.read(fs::relative(e.path(), t.path()).string()) : "";
  return seen;
}

struct Staging {
  kai::test::StillClock clock;
  std::optional<kai::Workspace> ws;

  Staging(const kai::test::TempDir& t, Rails rails, bool break_links) {
    kai::Env env;
    env.cwd = t / "root";
    env.root_override = t / "root";
    env.user_config_dir = t / "no-user-config";
    kai::test::trust_for_test(t / "root", env.user_config_dir);
    env.user = "tester";
    REQUIRE(kai::create_key(env.user_config_dir));  // the owner's key, as init makes it
    auto w = kai::Workspace::open(env, clock);
    REQUIRE(w);
    ws.emplace(std::move(*w));
    ws->guards = rails_for(rails);
    ws->guards.break_hardlinks = break_links;
  }
  kai::Result<kai::Staged> stage(const Case& c, const kai::test::TempDir& t, kai::DryRun dry = kai::DryRun::no) {
    fs::path cwd = c.cwd.empty() ? t / "root" : fs::path(expand(c.cwd, t));
    if (cwd.is_relative()) cwd = t / "root" / cwd;
    kai::ProposeRequest r;
    r.path = expand(c.path, t);
    r.content = "new\n";
    r.why = "table";
    return kai::propose(*ws, r, cwd, dry, {});
  }
  kai::Result<kai::Approved> approve(int id) {
    auto p = ws->store.load(id);
    REQUIRE(p);
    return kai::approve(*ws, id, kai::digest(*p), "tester", kai::ApplyNow::yes);
  }
};

bool hard_linked(const Case& c) { return c.setup.find("h:") != std::string::npos; }

// The row as a proposal: propose must agree with the table (a file with
// several hard links is refused there unless links may be broken), and what
// it stages must apply to exactly the file the table names.
void propose_then_apply(const Case& c, bool break_links) {
  kai::test::TempDir t;
  build(t, c.setup);
  auto outside = outside_of_root(t);
  Staging s(t, c.rails, break_links);
  auto st = s.stage(c, t);
  bool want_ok = c.want.rel && (!hard_linked(c) || break_links);
  if (!want_ok) {
    REQUIRE_FALSE(st);
    INFO(st.error().message);
    CHECK(st.error().code == (c.want.rel ? Errc::denied : c.want.code));
  } else {
    INFO((st ? std::string() : st.error().message));
    REQUIRE(st);
    auto a = s.approve(st->proposal.id);
    INFO((a ? std::string() : a.error().message));
    REQUIRE(a);
    CHECK(t.read("root/" + *c.want.rel) == "new\n");
  }
  CHECK(outside_of_root(t) == outside);
}

// The row's setup made after a proposal was staged on a clean tree: apply
// must refuse it as propose would have, and change nothing outside root.
void dangerous_after_propose(const Case& c) {
  kai::test::TempDir t;
  build(t, "");
  Staging s(t, c.rails, false);
  auto st = s.stage(c, t);
  if (!st) return;  // refused on any tree: it can never be staged
  build(t, c.setup);
  auto outside = outside_of_root(t);
  auto a = s.approve(st->proposal.id);
  REQUIRE_FALSE(a);
  INFO(a.error().message);
  CHECK((a.error().code == Errc::denied || a.error().code == Errc::conflict || a.error().code == c.want.code));
  CHECK(outside_of_root(t) == outside);
  CHECK(s.ws->store.load(st->proposal.id)->state == kai::State::failed);
}

// Rows that say what a write may do: every write row, and every resolve
// row that refuses (a proposal resolves its path first). A resolve row that
// accepts says nothing about writing, so it is left to the first table.
std::vector<Case> write_rows() {
  std::vector<Case> rows;
  for (const auto& table : {resolve_cases(), write_cases()})
    for (const Case& c : table)
      if (c.check == W || (c.check == R && !c.want.rel)) rows.push_back(c);
  return rows;
}

void run_table(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    DYNAMIC_SECTION(describe(c)) { run_case(c); }
  }
}

}  // namespace

TEST_CASE("resolve confines paths to the root, lexically and on disk", "[paths]") { run_table(resolve_cases()); }

TEST_CASE("check_write refuses every built-in never-write path and deny_write", "[paths]") { run_table(write_cases()); }

TEST_CASE("check_read refuses secret files and deny_read", "[paths]") { run_table(read_cases()); }

TEST_CASE("every write row holds for a proposal at propose time and at apply time", "[paths][apply]") {
  const std::vector<Case> rows = write_rows();
  CHECK(rows.size() >= 100);
  for (const Case& c : rows) {
    DYNAMIC_SECTION("propose " << describe(c)) { propose_then_apply(c, false); }
    if (hard_linked(c)) DYNAMIC_SECTION("propose, links may break " << describe(c)) {
        propose_then_apply(c, true);
      }
    if (!c.want.rel || hard_linked(c)) DYNAMIC_SECTION("made dangerous after propose " << describe(c)) {
        dangerous_after_propose(c);
      }
  }
}

TEST_CASE("many refused rows can be staged on a clean tree, so apply is what must refuse them", "[paths][apply]") {
  size_t stageable = 0;
  // A dry run writes nothing: one clean tree and workspace serve every row,
  // each with its own rails.
  kai::test::TempDir t;
  build(t, "");
  Staging s(t, Rails{}, false);
  for (const Case& c : write_rows()) {
    if (c.want.rel && !hard_linked(c)) continue;
    s.ws->guards = rails_for(c.rails);
    stageable += s.stage(c, t, kai::DryRun::yes).ok();
  }
  CHECK(stageable >= 20);
}

TEST_CASE("the tables cover at least a hundred distinct cases", "[paths]") {
  // Catch merges sections of the same name, so a duplicate would silently not run.
  std::set<std::string> names;
  size_t total = 0;
  for (const auto& table : {resolve_cases(), write_cases(), read_cases()}) {
    total += table.size();
    for (const Case& c : table) names.insert(describe(c));
  }
  CHECK(total >= 100);
  CHECK(names.size() == total);
}

TEST_CASE("refusals name the rule that fired", "[paths]") {
  kai::test::TempDir t;
  t.mkdir("r");
  fs::path root = t / "r";
  kai::Guardrails g;
  auto write_msg = [&](std::string_view rel) {
    kai::Status s = kai::check_write(g, kai::RootPath{std::string(rel), root / rel});
    return s.ok() ? std::string("ok") : s.error().message;
  };
  kai::Result<kai::RootPath> out = kai::resolve(root, root, "../x");
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message == "'../x' is outside the root '" + root.string() + "'");
  CHECK(write_msg(".env") == "'.env' is a secret file (never written)");
  CHECK(write_msg("build/x") == "'build/x' is under build/, which kaicoder never writes");
  CHECK(write_msg("Node_Modules/a.js") == "'Node_Modules/a.js' is under node_modules/, which kaicoder never writes");
  CHECK(write_msg(".git/config") == "'.git/config' is under .git/, which kaicoder never writes");
  CHECK(write_msg(".kaicoder/lock") ==
        "'.kaicoder/lock' is under the state dir .kaicoder/, which kaicoder never writes");
  CHECK(write_msg("KAI-CODER-CHANGELOG.md") ==
        "'KAI-CODER-CHANGELOG.md' is the changelog, which kaicoder never writes");
  CHECK(write_msg("kaicoder-approvals/x.toml") ==
        "'kaicoder-approvals/x.toml' is under kaicoder-approvals/, where only `kaicoder certify` writes signed "
        "approvals");
  CHECK(write_msg("kaicoder.toml") == "'kaicoder.toml' is kaicoder's own config, which kaicoder never writes");
  // A folder named '~' at the root spells the owner's home in kaicoder's
  // records; one deeper, or a name that only starts with '~', is ordinary.
  for (std::string_view rel : {"~"sv, "~/.claude.json"sv, "~/.codex/config.toml"sv, "~/src/a.c"sv})
    CHECK(write_msg(rel) == fmt::format("'{}' is under a folder named '~' at the root, the name kaicoder's records "
                                        "give your home folder (never written)",
                                        rel));
  for (std::string_view rel : {"a/~/x"sv, "~x/y"sv, "x~"sv}) CHECK(write_msg(rel) == "ok");
  CHECK(write_msg("a.bak") == "ok");  // a new file; an existing one is someone's backup
  t.write("r/a.bak", "x\n");
  CHECK(write_msg("a.bak") == "'a.bak' is an existing backup (*.bak*), which kaicoder never writes");
  CHECK(write_msg("a.txt.bak-kaicoder-1") ==
        "'a.txt.bak-kaicoder-1' is a kaicoder backup name (*.bak-kaicoder-*), which kaicoder never writes");
  g.deny_write = {"secrets/**"};
  CHECK(write_msg("secrets/a") == "'secrets/a' matches the deny_write pattern 'secrets/**'");
  kai::Status read = kai::check_read(g, kai::RootPath{"id_rsa", root / "id_rsa"});
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().message == "'id_rsa' is a secret file (never read)");
}

TEST_CASE("resolve accepts a root given through a symlink", "[paths]") {
  kai::test::TempDir t;
  t.write("real/a.txt", "x");
  t.symlink("alias", "real");
  kai::Result<kai::RootPath> r = kai::resolve(t / "alias", t / "real", "a.txt");
  REQUIRE(r.ok());
  CHECK(r->rel == "a.txt");
  CHECK(r->abs == t / "real" / "a.txt");
}

TEST_CASE("resolve makes the root canonical again once its path leads to another folder", "[paths]") {
  kai::test::TempDir t;
  t.write("one/a.txt", "1");
  t.write("two/a.txt", "2");
  t.symlink("alias", "one");
  for (int i = 0; i < 2; ++i) {  // the second time from what the first kept
    kai::Result<kai::RootPath> r = kai::resolve(t / "alias", t / "alias", "a.txt");
    REQUIRE(r.ok());
    CHECK(r->abs == t / "one" / "a.txt");
  }
  std::filesystem::remove(t / "alias");
  t.symlink("alias", "two");
  kai::Result<kai::RootPath> r = kai::resolve(t / "alias", t / "alias", "a.txt");
  REQUIRE(r.ok());
  CHECK(r->abs == t / "two" / "a.txt");
  // The same folder moved, the alias following it: its new path.
  std::filesystem::remove(t / "alias");
  std::filesystem::rename(t / "two", t / "moved");
  t.symlink("alias", "moved");
  r = kai::resolve(t / "alias", t / "alias", "a.txt");
  REQUIRE(r.ok());
  CHECK(r->abs == t / "moved" / "a.txt");
  std::filesystem::remove(t / "alias");
  r = kai::resolve(t / "alias", t / "alias", "a.txt");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == kai::Errc::io);
}

TEST_CASE("a relative cwd is taken from the root", "[paths]") {
  kai::test::TempDir t;
  t.mkdir("src");
  kai::Result<kai::RootPath> r = kai::resolve(t.path(), "src", "a.c");
  REQUIRE(r.ok());
  CHECK(r->rel == "src/a.c");
}

TEST_CASE("is_secret_file knows keys, env files and credentials", "[paths]") {
  for (std::string_view rel : {".env"sv,
                               "a/.env.local"sv,
                               "prod.env"sv,
                               "id_rsa"sv,
                               "id_ed25519.pub"sv,
                               "x/tls.pem"sv,
                               "server.KEY"sv,
                               "c.p12"sv,
                               "c.pfx"sv,
                               ".netrc"sv,
                               ".npmrc"sv,
                               ".pypirc"sv,
                               "credentials"sv,
                               "credentials.json"sv,
                               "app.keystore"sv,
                               ".htpasswd"sv,
                               "secrets.toml"sv,
                               ".ssh/id_foo"sv,
                               ".gnupg/pubring.kbx"sv,
                               ".pgpass"sv,
                               ".git-credentials"sv,
                               "terraform.tfstate"sv})
    CHECK(kai::is_secret_file(rel));
  for (std::string_view rel : {"src/env.c"sv, "environment.md"sv, "keymap.c"sv, "README.md"sv, "pem.txt"sv,
                               "secretary.py"sv, "docs/credentials-howto.md"sv, "ssh/config.c"sv})
    CHECK_FALSE(kai::is_secret_file(rel));
}

TEST_CASE("ReadCheck gives check_read's verdict for each file of a walk, folder after folder", "[paths]") {
  kai::Guardrails g;
  g.deny_read = {"private/", "*.secret"};
  kai::ReadCheck check(g);
  for (std::string_view rel : {"README.md"sv,
                               ".env"sv,
                               ".env.example"sv,
                               "a/.env.local"sv,
                               "a/b.c"sv,
                               "a/c.h"sv,
                               ".ssh/config.example"sv,
                               ".ssh/known_hosts"sv,
                               ".ssh/x/y"sv,
                               "docs/.env.sample"sv,
                               "docs/guide.md"sv,
                               "private/a"sv,
                               "private/b/c"sv,
                               "x/.docker/config.json"sv,
                               "x/.docker/other.json"sv,
                               "x/y.SECRET"sv,
                               "x/y.txt"sv,
                               "x/.kube/config"sv,
                               "x/.kube/cache"sv,
                               "src/id_rsa"sv,
                               "src/main.c"sv,
                               "README.md"sv}) {
    INFO("path '" << rel << "'");
    CHECK(check.readable(rel) == kai::check_read(g, kai::RootPath{std::string(rel), {}}).ok());
  }
  // Folded as a case-insensitive or forgiving file system would see a name
  // (case, trailing dots and spaces, HFS+-ignorable code points), the plain
  // ASCII names along their quicker way and the others along the long one.
  for (std::string_view rel : {"A/.ENV"sv, "a/.env."sv, "a/.env. ."sv, "a/B/Id_RSA"sv, "x/.Docker/CONFIG.json"sv,
                               ".SSH/x"sv, "a/.e\u200cnv"sv, "\u00e9/.ENV."sv, "PRIVATE/a"sv, "a/Y.Secret."sv})
    CHECK_FALSE(check.readable(rel));
  for (std::string_view rel : {"a/env."sv, "a/..."sv, "a/. ."sv, "A/README.md"sv, "\u00e9/readme"sv})
    CHECK(check.readable(rel));
  CHECK_FALSE(check.readable(".ssh/config.example"));  // in a secret folder
  CHECK_FALSE(check.readable("private/b/c"));
  CHECK(check.readable("docs/.env.sample"));
}

TEST_CASE("an absolute path through an alias of the root lands on its real spelling", "[paths]") {
  kai::test::TempDir t;
  t.write("root/a.txt", "x");
  t.mkdir("root/.git");
  t.symlink("root/ln", "a.txt");
  t.write("outside/secret.txt", "s");
  t.symlink("alias", "root");
  t.symlink("gitalias", "root/.git");
  t.symlink("outalias", "outside");
  fs::path root = t / "root";
  kai::Result<kai::RootPath> a = kai::resolve(root, root, (t / "alias/a.txt").string());
  REQUIRE(a.ok());
  CHECK(a->rel == "a.txt");
  kai::Result<kai::RootPath> g = kai::resolve(root, root, (t / "gitalias/config").string());
  REQUIRE(g.ok());
  CHECK(g->rel == ".git/config");
  CHECK(kai::check_write(kai::Guardrails{}, *g).error().code == Errc::denied);
  kai::Result<kai::RootPath> ln = kai::resolve(root, root, (t / "alias/ln").string());
  REQUIRE_FALSE(ln.ok());
  CHECK(ln.error().code == Errc::denied);
  kai::Result<kai::RootPath> self = kai::resolve(root, root, (t / "alias").string());
  REQUIRE_FALSE(self.ok());
  CHECK(self.error().code == Errc::denied);
  kai::Result<kai::RootPath> out = kai::resolve(root, root, (t / "outalias/secret.txt").string());
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().code == Errc::denied);
}

TEST_CASE("an empty changelog or state dir setting does not swallow other paths", "[paths]") {
  kai::Guardrails g;
  g.changelog.clear();
  g.state_dir.clear();
  g.config_files = {""};
  for (std::string_view rel : {".gitignore"sv, ".clang-format"sv, "src/a.c"sv}) {
    INFO(rel);
    CHECK(kai::check_write(g, kai::RootPath{std::string(rel), fs::path("/r") / rel}).ok());
  }
  CHECK_FALSE(kai::check_write(g, kai::RootPath{".kaicoder/lock", "/r/.kaicoder/lock"}).ok());
  CHECK_FALSE(kai::check_write(g, kai::RootPath{"KAI-CODER-CHANGELOG.md", "/r/KAI-CODER-CHANGELOG.md"}).ok());
}

TEST_CASE("every walk over the tree skips git's folder, the configured state dir and the generated folders",
          "[paths]") {
  kai::Guardrails g;
  g.state_dir = "state";
  for (const char* name : {".git", "state", "node_modules", "target", "dist", "build"}) {
    INFO(name);
    CHECK(kai::walk_skips(g, name));
  }
  // The default state dir's name is nothing special once another is configured.
  for (const char* name : {".kaicoder", "src", "git", "State", "builds", ""}) {
    INFO(name);
    CHECK_FALSE(kai::walk_skips(g, name));
  }
  CHECK(kai::walk_skips(kai::Guardrails{}, ".kaicoder"));
}
