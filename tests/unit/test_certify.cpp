// Approval manifests are strict: whatever does not parse exactly as the
// format says binds nothing. format_manifest writes what parse_manifest reads.

#include <catch2/catch.hpp>

#include "lib/config/config.hpp"
#include "lib/certify/manifest.hpp"

namespace {
const std::string k_blob = "3b18e512dba79e4c8300dd08aeb37f8e728b8dad";

std::string change(const std::string& body) { return "version = 1\n[[change]]\n" + body; }
}  // namespace

TEST_CASE("a manifest binds paths to a blob and mode, or to deleted", "[certify]") {
  auto m = kai::parse_manifest("version = 1\nbase = \"" + k_blob +
                                   "\"\n"
                                   "[[change]]\npath = \"tests/a b.txt\"\nkind = \"modify\"\nblob = \"" +
                                   k_blob +
                                   "\"\nmode = \"100755\"\n"
                                   "[[change]]\npath = \"tests/old.txt\"\nkind = \"delete\"\n",
                               "m.toml");
  REQUIRE(m);
  CHECK(m->base == k_blob);
  CHECK(m->head.empty());
  REQUIRE(m->changes.size() == 2);
  CHECK(m->changes[0].path == "tests/a b.txt");
  CHECK(m->changes[0].blob == k_blob);
  CHECK(m->changes[0].mode == "100755");
  CHECK_FALSE(m->changes[0].deleted());
  CHECK(m->changes[1].deleted());
  CHECK(m->changes[1].mode.empty());
}

TEST_CASE("the same result means the same path, blob and mode", "[certify]") {
  kai::Binding a{"p", "modify", k_blob, "100644"};
  kai::Binding b = a;
  b.kind = "add";  // the kind is for the reader
  CHECK(a.same_result(b));
  b.mode = "100755";
  CHECK_FALSE(a.same_result(b));
  kai::Binding gone{"p", "delete", "", ""};
  CHECK_FALSE(a.same_result(gone));
  CHECK(gone.same_result(kai::Binding{"p", "delete", "", ""}));
}

TEST_CASE("malformed manifests are refused with file and line", "[certify]") {
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases = {
      {"[[change]]\npath = \"a\"\nkind = \"delete\"\n", "version"},
      {"version = 2\n[[change]]\npath = \"a\"\nkind = \"delete\"\n", "only version 1"},
      {"version = 1\n", "no [[change]]"},
      {"version = 1\nsigner = \"me\"\n[[change]]\npath = \"a\"\nkind = \"delete\"\n", "signer: unknown key"},
      {change("path = \"../etc/passwd\"\nkind = \"delete\"\n"), "not a path inside the repository"},
      {change("path = \"/abs\"\nkind = \"delete\"\n"), "not a path inside the repository"},
      {change("path = \"a//b\"\nkind = \"delete\"\n"), "not a path inside the repository"},
      {change("path = \"a/./b\"\nkind = \"delete\"\n"), "not a path inside the repository"},
      {change("path = \"a\"\nkind = \"rename\"\n"), "is not one of"},
      {change("path = \"a\"\nkind = \"modify\"\nblob = \"" + k_blob + "\"\n"), "needs blob and mode"},
      {change("path = \"a\"\nkind = \"delete\"\nblob = \"" + k_blob + "\"\n"), "a delete has no blob"},
      {change("path = \"a\"\nkind = \"add\"\nblob = \"XYZ\"\nmode = \"100644\"\n"), "object id"},
      {change("path = \"a\"\nkind = \"add\"\nblob = \"" + k_blob + "\"\nmode = \"100777\"\n"), "is not one of"},
      {change("path = \"a\"\nkind = \"add\"\nblob = \"" + k_blob + "\"\nmode = \"100644\"\nnote = 1\n"),
       "expected a string"},
      {change("kind = \"delete\"\n"), "needs path and kind"},
      {"version = 1\nchange = \"a\"\n", "expected [[change]]"},
      {"version = 1\n[[change]\n", "m.toml:2"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto m = kai::parse_manifest(c.text, "m.toml");
    REQUIRE_FALSE(m);
    CHECK(m.error().code == kai::Errc::usage);
    CHECK_THAT(m.error().message, Catch::Matchers::Contains(c.expect) && Catch::Matchers::StartsWith("m.toml"));
  }
}

TEST_CASE("format_manifest writes what parse_manifest reads", "[certify]") {
  kai::Manifest m;
  m.head = k_blob;
  m.changes = {{"tests/quote\"and\\back.txt", "add", k_blob, "120000"}, {"gone.txt", "delete", "", ""}};
  const std::string text = kai::format_manifest(m);
  auto back = kai::parse_manifest(text, "m.toml");
  INFO(text);
  REQUIRE(back);
  CHECK(back->head == k_blob);
  REQUIRE(back->changes.size() == 2);
  CHECK(back->changes[0].same_result(m.changes[0]));
  CHECK(back->changes[1].same_result(m.changes[1]));
}

TEST_CASE("[certify] keys are validated", "[certify][config]") {
  auto ok = kai::parse_config_text(
      "[certify]\npaths = [\"tests/**\"]\nbase = \"origin/main\"\nallowed_signers = \".signers\"\n", "kaicoder.toml@x");
  REQUIRE(ok);
  CHECK(ok->certify_paths == std::vector<std::string>{"tests/**"});
  CHECK(ok->certify_base == "origin/main");
  CHECK(ok->allowed_signers == ".signers");
  for (const char* bad :
       {"[certify]\nallowed_signers = \"../x\"\n", "[certify]\nallowed_signers = \"/etc/x\"\n",
        "[certify]\nbase = \"--all\"\n", "[certify]\npaths = [\"a/../b\"]\n", "[certify]\nsigners = 1\n"}) {
    INFO(bad);
    auto c = kai::parse_config_text(bad, "kaicoder.toml@x");
    REQUIRE_FALSE(c);
    CHECK(c.error().code == kai::Errc::usage);
    CHECK_THAT(c.error().message, Catch::Matchers::StartsWith("kaicoder.toml@x:"));
  }
}
