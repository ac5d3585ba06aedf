// The import scanners on hostile tracked files (bench/hostile_deps.hpp):
// linear in their input, bounded, still right; the scan budget; a scan
// that runs out of it is cached as far as it got.

#include "unit/trusted_root.hpp"
#include "unit/temp_dir.hpp"

#include <algorithm>
#include <cstdlib>

#include "bench/hostile_deps.hpp"
#include "lib/risk/deps.hpp"
#include "lib/risk/risk.hpp"
#include "lib/config/workspace.hpp"

namespace {
using kai::test::sh;
using kai::test::TempDir;
using Paths = std::vector<std::string>;

// The edges `f` yields, sorted, scanned with `budget`.
Paths edges(const kai::bench::HostileFile& f, kai::ScanBudget& budget) {
  kai::FileSet files{f.tracked};
  Paths out;
  for (uint32_t i : kai::dependencies(files, {}, f.path, f.text, budget)) out.push_back(files.paths()[i]);
  std::sort(out.begin(), out.end());
  return out;
}

Paths sorted(Paths p) {
  std::sort(p.begin(), p.end());
  return p;
}

// A budget of a few lookups per input byte: a super-linear scanner runs
// out of it, a linear one does not.
kai::ScanBudget linear_budget(size_t bytes) {
  kai::ScanBudget::Limits l;
  l.bytes = bytes + 1;
  l.steps = 4 * bytes + 1000;
  return kai::ScanBudget{l};
}

}  // namespace

TEST_CASE("a deeply nested Rust use tree is scanned in one pass and still resolves", "[risk][deps]") {
  auto f = kai::bench::rust_nested(200000);  // 40,000 levels
  auto budget = linear_budget(f.text.size());
  CHECK(edges(f, budget) == sorted(f.expected));
  CHECK_FALSE(budget.spent());
  // Past k_max_use_depth levels the tree counts as the path down to there.
  auto names = kai::import_names(kai::Lang::rust, f.text);
  REQUIRE(names.size() == 1);
  CHECK(names[0].size() == 3 * (kai::k_max_use_depth + 1) - 2);  // "a::" 33 times, without the last "::"
}

TEST_CASE("a long Rust use chain is cut at a path no file can have", "[risk][deps]") {
  auto f = kai::bench::rust_chain(240000);
  auto budget = linear_budget(f.text.size());
  CHECK(edges(f, budget) == sorted(f.expected));
  CHECK_FALSE(budget.spent());
  auto names = kai::import_names(kai::Lang::rust, f.text);
  REQUIRE(names.size() == 1);
  CHECK(names[0].size() < kai::k_max_name);
  CHECK(names[0].rfind("crate::a::a::", 0) == 0);
}

TEST_CASE("many includes in a deep folder cost lookups per name, not per folder", "[risk][deps]") {
  auto f = kai::bench::c_includes(200000, 300);  // about 12,000 names, 900 candidate folders each
  auto budget = linear_budget(f.text.size());
  CHECK(edges(f, budget) == sorted(f.expected));
  CHECK_FALSE(budget.spent());
  // "../" climbs from each folder as before, with the same ranking.
  kai::FileSet files{{"a/b/c/x.c", "a/h.h", "a/b/include/h.h", "a/inc/k.h", "a/b/include/j.h", "a/j.h"}};
  kai::ScanBudget plenty;
  auto d = kai::dependencies(files, {}, "a/b/c/x.c",
                             "#include \"h.h\"\n#include \"../j.h\"\n#include \"../../inc/k.h\"\n", plenty);
  Paths got;
  for (uint32_t i : d) got.push_back(files.paths()[i]);
  CHECK(sorted(got) == Paths{"a/b/include/h.h", "a/inc/k.h", "a/j.h"});
}

TEST_CASE("Rust use trees expand as before", "[risk][deps]") {
  CHECK(kai::import_names(kai::Lang::rust, "use crate::a::{b, c::{d, e as f}, g as h, {}};\n") ==
        Paths{"crate::a::b", "crate::a::c::d", "crate::a::c::e", "crate::a::g"});
  CHECK(kai::import_names(kai::Lang::rust, "pub use  crate :: x  as y;\nuse std::{\n  io,\n  fs::File,\n};\n") ==
        Paths{"crate::x", "std::io", "std::fs::File"});
  // An unbalanced tree ends at its semicolon; a use without one finds nothing.
  CHECK(kai::import_names(kai::Lang::rust, "use a::{b,\nuse c;\n") == Paths{"a::b", "c"});
  CHECK(kai::import_names(kai::Lang::rust, "use a::b\nuse c\n").empty());
}

TEST_CASE("unclosed imports and blocks cost one pass", "[risk][deps]") {
  std::string js, go = "package x\n", py;
  for (int i = 0; i < 20000; ++i) {
    js += "import 'x\n";
    go += "import (\n";
    py += "from a import (\n";
  }
  for (auto [lang, path, text] : {std::tuple{kai::Lang::js, "a.js", js}, std::tuple{kai::Lang::go, "a.go", go},
                                  std::tuple{kai::Lang::python, "a.py", py}}) {
    kai::FileSet files{{path}};
    auto budget = linear_budget(text.size());
    CHECK(kai::dependencies(files, {}, path, text, budget).empty());
    CHECK_FALSE(budget.spent());
    CHECK(kai::import_names(lang, text).size() <= kai::k_max_names);
  }
}

TEST_CASE("a file yields at most k_max_names names, none longer than k_max_name", "[risk][deps]") {
  std::string text;
  for (size_t i = 0; i < kai::k_max_names + 50; ++i) text += "#include \"h" + std::to_string(i) + ".h\"\n";
  text += "#include \"" + std::string(kai::k_max_name + 1, 'x') + "\"\n";
  auto names = kai::import_names(kai::Lang::c, text);
  CHECK(names.size() == kai::k_max_names);
  CHECK(std::all_of(names.begin(), names.end(), [](const std::string& n) { return n.size() <= kai::k_max_name; }));
}

TEST_CASE("the scan budget stops at each of its limits", "[risk][deps]") {
  auto f = kai::bench::c_includes(20000, 5);
  kai::ScanBudget::Limits l;
  l.bytes = 100;
  kai::ScanBudget bytes{l};
  edges(f, bytes);
  CHECK(bytes.why() == "bytes scanned");

  kai::ScanBudget::Limits s;
  s.steps = 50;
  kai::ScanBudget steps{s};
  edges(f, steps);
  CHECK(steps.why() == "lookups");

  int asked = 0;
  kai::ScanBudget timed{{}, [&] { return ++asked > 1; }};
  CHECK(timed.check_time());
  CHECK_FALSE(timed.check_time());
  CHECK(timed.why() == "time");
  CHECK_FALSE(timed.step());
}

TEST_CASE("a scan that runs out of time is cached as far as it got and then goes on", "[risk][deps]") {
  TempDir d;
  d.git_init();
  d.write("util.h", "int u;\n");
  for (int i = 0; i < 6; ++i) d.write("f" + std::to_string(i) + ".c", "#include \"util.h\"\n");
  sh(d, "git add -A");
  const auto cache = d.path() / "cache-deps";
  // The deadline passes after two files.
  int checks = 0;
  kai::ScanOptions opts;
  opts.past_deadline = [&] { return ++checks > 2; };
  auto first = kai::load_graph(d.path(), cache, {}, opts);
  REQUIRE(first);
  CHECK_FALSE(first->complete);
  CHECK(first->stopped == "time");
  CHECK(first->scanned == 2);
  CHECK(first->unscanned == 5);  // four .c files and util.h
  REQUIRE(std::filesystem::exists(cache));

  // The next scan reads only what the first did not reach.
  auto second = kai::load_graph(d.path(), cache);
  REQUIRE(second);
  CHECK(second->complete);
  CHECK_FALSE(second->from_cache);
  CHECK(second->reused == 2);
  CHECK(second->scanned == 5);
  CHECK(kai::dependents_of(second->graph, "util.h").transitive == 6);
  auto third = kai::load_graph(d.path(), cache);
  REQUIRE(third);
  CHECK(third->from_cache);
}

TEST_CASE("risk falls back to paths when the scan stops, and says so", "[risk][deps]") {
  TempDir d;
  d.git_init();
  d.write("util.h", "int u;\n");
  d.write("a.c", "#include \"util.h\"\n");
  sh(d, "git add -A");
  // A clock that jumps an hour on every reading: the deadline has passed
  // before the first file.
  struct Jumping : kai::Clock {
    mutable kai::TimePoint t{};
    kai::TimePoint now() const override { return t += std::chrono::hours(1); }
  } clock;
  kai::Env env;
  env.cwd = d.path();
  env.root_override = d.path();
  env.user_config_dir = d.path() / ".none";
  kai::test::trust_for_test(d.path(), env.user_config_dir);
  auto ws = kai::Workspace::open(env, clock);
  REQUIRE(ws);
  kai::Proposal p;
  p.kind = kai::Kind::edit;
  p.path = "util.h";
  auto r = kai::assess_risk(*ws, p);
  CHECK_FALSE(r.from_graph);
  CHECK(p.risk == kai::Risk::low);
  CHECK(p.risk_reason.find("the dependency scan stopped at its time limit") != std::string::npos);
  CHECK(p.risk_reason.find("risk from paths only") != std::string::npos);
}
