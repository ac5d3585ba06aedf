// Secrets never leave kaicoder; what the reviewer sees is what is there.

#include "unit/ws_fixture.hpp"

#include <catch2/catch.hpp>

#include "lib/gate/envelope.hpp"
#include "lib/paths/redact.hpp"
#include "lib/util/text.hpp"

TEST_CASE("environment secrets are redacted by name, short values are left alone", "[redact]") {
  kai::Redactor r;
  r.add_env({{"MY_API_KEY", "hunter2hunter2"},
             {"GITHUB_TOKEN", "abcdef123456"},
             {"db_password", "pa55word!"},
             {"PATH", "/usr/bin:/bin"},
             {"SHORT_TOKEN", "abc"}});
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
  CHECK(kai::make_visible("a\x1b[2Kb") == "a\\e[2Kb");
  CHECK(kai::make_visible("line\r\n") == "line\r\n");
  CHECK(kai::make_visible("over\rwrite") == "over\\rwrite");
  CHECK(kai::make_visible("x\xE2\x80\xAEy") == "x<U+202E>y");
  CHECK(kai::make_visible("zero\xE2\x80\x8Bwidth") == "zero<U+200B>width");
  CHECK(kai::make_visible("tab\tok \xC3\xA9") == "tab\tok \xC3\xA9");
  CHECK(kai::has_hidden_characters("a\bb"));
  CHECK_FALSE(kai::has_hidden_characters("plain\n"));
}

TEST_CASE("one scanner covers C1, separators, soft hyphen, fillers and invalid UTF-8", "[text]") {
  using kai::Allow;
  using kai::make_visible;
  // C1 controls as UTF-8: CSI and NEL.
  CHECK(make_visible("a\xC2\x9B"
                     "31mb") == "a<U+009B>31mb");
  CHECK(make_visible("a\xC2\x85"
                     "b") == "a<U+0085>b");
  CHECK(make_visible("a\xE2\x80\xA8"
                     "b\xE2\x80\xA9") == "a<U+2028>b<U+2029>");
  CHECK(make_visible("soft\xC2\xAD"
                     "hyphen") == "soft<U+00AD>hyphen");
  CHECK(make_visible("\xE1\xA0\x8E\xE2\x81\xA0\xEF\xBB\xBF\xE3\x85\xA4") == "<U+180E><U+2060><U+FEFF><U+3164>");
  CHECK(make_visible("\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C\xE2\x81\xA6\xE2\x81\xA9") ==
        "<U+200E><U+200F><U+061C><U+2066><U+2069>");
  // Invalid UTF-8: a lone continuation byte, a truncated sequence, an overlong form.
  CHECK(make_visible("a\x9B"
                     "b") == "a\\x9bb");
  CHECK(make_visible("a\xE2\x80") == "a\\xe2\\x80");
  CHECK(make_visible("\xC0\xAF") == "\\xc0\\xaf");
  CHECK(make_visible("del\x7f") == "del\\x7f");
  // OSC 52 (clipboard) and OSC 0 (window title) end with BEL or ST.
  CHECK(make_visible("\x1b]52;c;aGk=\x07") == "\\e]52;c;aGk=\\x07");
  CHECK(make_visible("\x1b]0;title\x1b\\") == "\\e]0;title\\e\\");
  // One-line contexts escape layout too.
  CHECK(make_visible("a\nb\tc\r\n", Allow::nothing) == "a\\nb\\tc\\r\\n");
  CHECK(make_visible("a\nb\tc", Allow::tab) == "a\\nb\tc");
  // Letters of any script are not hidden.
  CHECK(make_visible("caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80");
  // Stable: escaping twice changes nothing more.
  std::string once = make_visible("\x1b[31m\xE2\x80\xAE\xC2\x9B\xFF\n", Allow::nothing);
  CHECK(make_visible(once, Allow::nothing) == once);
  auto h = kai::find_hidden("ab\xE2\x80\xAE", Allow::nothing);
  REQUIRE(h);
  CHECK(h->at == 2);
  CHECK(h->len == 3);
  CHECK(kai::code_point_name(h->cp) == "U+202E");
  CHECK(h->kind == "bidirectional control");
  CHECK_FALSE(kai::first_invalid_utf8("caf\xC3\xA9 \xF0\x9F\x98\x80 \x1b"));
  CHECK(kai::first_invalid_utf8("ok\xED\xA0\x80") == 2u);  // a surrogate
  CHECK(kai::not_utf8("--why", "a\xFF") == "--why is not valid UTF-8 (byte 1)");
}

TEST_CASE("hidden() counts what apply() hides, in a large text too", "[redact]") {
  kai::Redactor r;
  r.add("MY_API_KEY", "hunter2hunter2");
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "    value_" + std::to_string(i) + " = compute(1, 2, \"x\");\n";
  CHECK(r.hidden(big) == 0);
  CHECK(r.apply(big) == big);
  // One of each kind, at the very end of the text, is still found.
  CHECK(r.hidden(big + "key=hunter2hunter2\n") == 1);
  CHECK(r.hidden(big + "t=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n") == 1);
  CHECK(r.hidden(big + "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n") == 1);
  // A prefix alone (too short a tail, inside a word) hides nothing.
  CHECK(r.hidden(big + "ghp_short sk-x task-force\n") == 0);
  // A mark already in the text is not a hidden value.
  CHECK(r.hidden(big + "[REDACTED:X] and hunter2hunter2\n") == 1);
}

TEST_CASE("hidden() finds every token shape wherever it stands in the text", "[redact]") {
  kai::Redactor r;
  // One token of each shape, its tail long enough; and text around it full
  // of the bytes the prefixes begin with.
  const std::vector<std::string> tokens = {
      "ghp_" + std::string(30, 'a'),     "gho_" + std::string(30, 'b'),     "ghu_" + std::string(30, 'c'),
      "ghs_" + std::string(30, 'd'),     "ghr_" + std::string(30, 'e'),     "github_pat_" + std::string(30, 'f'),
      "glpat-" + std::string(20, 'g'),   "AKIA" + std::string(16, 'H'),     "ASIA" + std::string(16, 'J'),
      "xoxb-" + std::string(10, '1'),    "xoxp-" + std::string(10, '2'),    "xoxa-" + std::string(10, '3'),
      "xoxs-" + std::string(10, '4'),    "sk-ant-" + std::string(20, 'k'),  "sk-proj-" + std::string(20, 'm'),
      "sk-" + std::string(32, 'n'),      "AIza" + std::string(35, 'p'),     "npm_" + std::string(36, 'q'),
      "pypi-" + std::string(50, 'r')};
  std::string noise;
  for (int i = 0; i < 200; ++i) noise += "gh sk- xox AI npm pyp --- gl ASI AKI github_ sk-an g x s n p A - ";
  CHECK(r.hidden(noise) == 0);
  for (const auto& t : tokens) {
    INFO(t);
    CHECK(r.hidden(t) == 1);
    CHECK(r.hidden(noise + t) == 1);
    CHECK(r.hidden(t + " " + noise) == 1);
    CHECK(r.hidden(noise + t + " " + noise) == 1);
    // One byte short of its tail: nothing to hide.
    CHECK(r.hidden(noise + t.substr(0, t.size() - 1) + " ") == 0);
  }
}

TEST_CASE("a workspace redacts the values of secret files anywhere in root, not in the trees it skips", "[redact]") {
  const std::string big(2 << 20, 'x');
  kai::test::WsFixture f("", {{"services/api/config/.env", "DEEP_TOKEN=deep-value-4d5e6f\n"},
                              {".env", "TOP_TOKEN=top-value-7a8b9c\n"},
                              {"node_modules/pkg/.env", "SKIPPED_TOKEN=skipped-value-1a2b3c\n"},
                              {"big/.env", "BIG_TOKEN=big-value-0f0e0d\n" + big},
                              {"src/main.c", "int main;\n"}});
  const std::string text = f.ws->redact("deep-value-4d5e6f top-value-7a8b9c skipped-value-1a2b3c big-value-0f0e0d");
  CHECK(text.find("deep-value-4d5e6f") == std::string::npos);
  CHECK(text.find("top-value-7a8b9c") == std::string::npos);
  // Skipped: a dependency tree, and a secret file over the 1 MiB read limit.
  CHECK(text.find("skipped-value-1a2b3c") != std::string::npos);
  CHECK(text.find("big-value-0f0e0d") != std::string::npos);
}

TEST_CASE("a JSON answer has every string redacted where it stands, and nothing else changed", "[redact]") {
  kai::Redactor r;
  r.add("MY_API_KEY", "hunter2hunter2");
  const nlohmann::json in = {
      {"summary", "uses hunter2hunter2"},
      {"files", {{{"path", "a.txt"}, {"after", "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 here"}},
                 {{"path", "b.txt"}, {"after", "nothing to hide"}, {"lines", 3}}}},
      {"hunter2hunter2", true},  // a key is not a value: left as it is
      {"list", {"plain", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", 7}}};
  const nlohmann::json out = kai::redacted_json(in, r);
  CHECK(out["summary"] == "uses [REDACTED:MY_API_KEY]");
  CHECK(out["files"][0]["after"] == "token [REDACTED:GITHUB_TOKEN] here");
  CHECK(out["files"][1] == in["files"][1]);
  CHECK(out["hunter2hunter2"] == true);
  CHECK(out["list"][0] == "plain");
  CHECK(out["list"][1] == "[REDACTED:PRIVATE_KEY]");
  CHECK(out["list"][2] == 7);
  CHECK(r.could_hide("has -----BEGIN here"));
  CHECK_FALSE(r.could_hide("nothing at all"));
}
