// Reads for agents: confined, secrets refused, redacted, capped.

#include "unit/temp_dir.hpp"

#include "lib/gate/reader.hpp"
#include "unit/trusted_root.hpp"

namespace {
using kai::test::TempDir;

struct Ws {
  TempDir dir;
  kai::Clock clock;
  std::optional<kai::Workspace> ws;
  Ws() {
    dir.write(".env", "API_TOKEN=supersecretvalue\n");
    dir.write("src/a.txt", "one\ntwo supersecretvalue\nthree\n");
    dir.write("src/b.md", "# b\n");
    kai::Env env;
    env.cwd = dir.path();
    env.root_override = dir.path();
    env.user_config_dir = dir.path() / ".none";
    kai::test::trust_for_test(dir.path(), env.user_config_dir);
    auto w = kai::Workspace::open(env, clock);
    REQUIRE(w);
    ws.emplace(std::move(*w));
  }
};
}  // namespace

TEST_CASE("read returns redacted text and line ranges", "[reader]") {
  Ws w;
  auto all = kai::read_for_agent(*w.ws, w.dir.path(), "src/a.txt", std::nullopt);
  REQUIRE(all);
  CHECK(all->text == "one\ntwo [REDACTED:API_TOKEN]\nthree\n");
  CHECK(all->total_lines == 3);
  auto range = kai::parse_line_range("2:3");
  REQUIRE(range);
  auto part = kai::read_for_agent(*w.ws, w.dir.path(), "src/a.txt", *range);
  REQUIRE(part);
  CHECK(part->text == "two [REDACTED:API_TOKEN]\nthree\n");
  CHECK_FALSE(kai::parse_line_range("3:2"));
  CHECK_FALSE(kai::parse_line_range("x"));
}

TEST_CASE("read refuses secret files and paths outside root", "[reader]") {
  Ws w;
  auto env = kai::read_for_agent(*w.ws, w.dir.path(), ".env", std::nullopt);
  REQUIRE_FALSE(env);
  CHECK(env.error().code == kai::Errc::denied);
  auto out = kai::read_for_agent(*w.ws, w.dir.path(), "/etc/passwd", std::nullopt);
  REQUIRE_FALSE(out);
  CHECK(out.error().code == kai::Errc::denied);
  auto up = kai::read_for_agent(*w.ws, w.dir.path(), "../x", std::nullopt);
  REQUIRE_FALSE(up);
  CHECK(up.error().code == kai::Errc::denied);
}

TEST_CASE("read caps its output and says so", "[reader]") {
  Ws w;
  w.dir.write("big.txt", std::string(1000, 'x'));
  auto r = kai::read_for_agent(*w.ws, w.dir.path(), "big.txt", std::nullopt, 100);
  REQUIRE(r);
  CHECK(r->text.size() == 100);
  CHECK(r->cut);
  CHECK(r->total_bytes == 1000);
}

TEST_CASE("ls lists a folder and globs beneath it, never outside", "[reader]") {
  Ws w;
  auto top = kai::list_for_agent(*w.ws, w.dir.path(), "", "");
  REQUIRE(top);
  bool has_src = false;
  for (const auto& e : top->entries) has_src |= e.path == "src" && e.type == 'd';
  CHECK(has_src);
  auto md = kai::list_for_agent(*w.ws, w.dir.path(), "", "**/*.md");
  REQUIRE(md);
  REQUIRE(md->entries.size() == 1);
  CHECK(md->entries[0].path == "src/b.md");
  CHECK_FALSE(kai::list_for_agent(*w.ws, w.dir.path(), "", "/etc/*"));
  CHECK_FALSE(kai::list_for_agent(*w.ws, w.dir.path(), "", "../*"));
  CHECK_FALSE(kai::list_for_agent(*w.ws, w.dir.path(), "..", ""));
}
