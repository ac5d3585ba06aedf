// [limits] checks (lib/gate/limits.hpp) and the character counts they use.

#include "unit/temp_dir.hpp"

#include "lib/gate/limits.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/text.hpp"

TEST_CASE("characters are counted and cut as UTF-8", "[limits]") {
  CHECK(kai::utf8_length("") == 0);
  CHECK(kai::utf8_length("caf\xC3\xA9") == 4);
  CHECK(kai::utf8_length("\xE6\x97\xA5\xE6\x9C\xAC") == 2);
  CHECK(kai::cut_to_length("abcdef", 6) == "abcdef");
  CHECK(kai::cut_to_length("abcdef", 4) == "abc\xE2\x80\xA6");
  CHECK(kai::cut_to_length("\xC3\xA9\xC3\xA9\xC3\xA9", 2) == "\xC3\xA9\xE2\x80\xA6");  // never half a character
  CHECK(kai::cut_to_length("abc", 0).empty());
}

TEST_CASE("text, path and payload limits say which limit and by how much", "[limits]") {
  kai::Config::Limits l;
  CHECK(kai::check_text_limits(l, std::string(4096, 'w'), std::string(200, 's'), std::string(64, 'a')));
  auto why = kai::check_text_limits(l, std::string(4097, 'w'), "", "");
  REQUIRE_FALSE(why);
  CHECK(why.error().code == kai::Errc::usage);
  CHECK(why.error().message == "--why is 4097 bytes; the limit is 4096 ([limits] why)");
  CHECK_FALSE(kai::check_text_limits(l, "w", std::string(201, 's'), ""));
  CHECK_FALSE(kai::check_text_limits(l, "w", "", std::string(65, 'a')));

  CHECK(kai::check_path_limits(l, "--path", std::string(255, 'n') + "/" + std::string(255, 'n')));
  auto name = kai::check_path_limits(l, "--path", "a/" + std::string(256, 'n') + "/b");
  REQUIRE_FALSE(name);
  CHECK(name.error().message == "a name in --path is 256 bytes; the limit is 255 ([limits] path_component)");
  CHECK_FALSE(kai::check_path_limits(l, "--cwd", std::string(4097, '/')));

  CHECK(kai::check_payload_limit(l, "the content", 64 << 20));
  auto big = kai::check_payload_limit(l, "the content", (64 << 20) + 1);
  REQUIRE_FALSE(big);
  CHECK(big.error().code == kai::Errc::usage);
}

TEST_CASE("a bounded read stops one byte past its limit", "[limits]") {
  kai::test::TempDir d;
  d.write("f", std::string(100000, 'x'));
  auto r = kai::read_file(d / "f", 10);
  REQUIRE(r);
  CHECK(r->size() == 11);
  auto exact = kai::read_file(d / "f", 100000);
  REQUIRE(exact);
  CHECK(exact->size() == 100000);
}
