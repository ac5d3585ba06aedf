// Secrets never leave kaicoder; what the reviewer sees is what is there.

#include <catch2/catch.hpp>

#include "lib/redact.hpp"
#include "lib/util/text.hpp"

TEST_CASE("environment secrets are redacted by name, short values are left alone", "[redact]") {
  kai::Redactor r;
  r.add_env({{"MY_API_KEY", "hunter2hunter2"}, {"GITHUB_TOKEN", "abcdef123456"}, {"db_password", "pa55word!"},
             {"PATH", "/usr/bin:/bin"}, {"SHORT_TOKEN", "abc"}});
  CHECK(r.apply("key=hunter2hunter2 tok=abcdef123456 pw=pa55word!") ==
        "key=[REDACTED:MY_API_KEY] tok=[REDACTED:GITHUB_TOKEN] pw=[REDACTED:db_password]");
  CHECK(r.apply("/usr/bin:/bin abc") == "/usr/bin:/bin abc");
}

TEST_CASE("values assigned in secret files are redacted whatever their names", "[redact]") {
  kai::Redactor r;
  r.add_secret_file(".env", "# comment\nexport DB_URL=\"postgres://u:longpass@h/db\"\nPLAIN=value123\nEMPTY=\n");
  CHECK(r.apply("connect postgres://u:longpass@h/db now") == "connect [REDACTED:DB_URL] now");
  CHECK(r.apply("x value123 y") == "x [REDACTED:PLAIN] y");
}

TEST_CASE("well-known token shapes and private keys are redacted", "[redact]") {
  kai::Redactor r;
  CHECK(r.apply("t=ghp_abcdefghijklmnopqrstuvwxyz0123456789") == "t=[REDACTED:GITHUB_TOKEN]");
  CHECK(r.apply("AKIAIOSFODNN7EXAMPLE") == "[REDACTED:AWS_ACCESS_KEY]");
  CHECK(r.apply("xoxb-123456789012-abcdefghij") == "[REDACTED:SLACK_TOKEN]");
  CHECK(r.apply("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\nz") ==
        "a\n[REDACTED:PRIVATE_KEY]\nz");
  CHECK(r.apply("-----BEGIN PUBLIC KEY-----") == "-----BEGIN PUBLIC KEY-----");
  CHECK(r.apply("task-force and sky-high") == "task-force and sky-high");
}

TEST_CASE("a value containing another is replaced whole", "[redact]") {
  kai::Redactor r;
  r.add("SHORT_KEY", "secret1");
  r.add("LONG_KEY", "secret1secret2");
  CHECK(r.apply("secret1secret2") == "[REDACTED:LONG_KEY]");
}

TEST_CASE("control and invisible characters are made visible, CRLF is kept", "[text]") {
  CHECK(kai::make_visible("a\x1b[2Kb") == "a^[[2Kb");
  CHECK(kai::make_visible("line\r\n") == "line\r\n");
  CHECK(kai::make_visible("over\rwrite") == "over^Mwrite");
  CHECK(kai::make_visible("x\xE2\x80\xAEy") == "x<U+202E>y");
  CHECK(kai::make_visible("zero\xE2\x80\x8Bwidth") == "zero<U+200B>width");
  CHECK(kai::make_visible("tab\tok \xC3\xA9") == "tab\tok \xC3\xA9");
  CHECK(kai::has_hidden_characters("a\bb"));
  CHECK_FALSE(kai::has_hidden_characters("plain\n"));
}
