// Blast radius: import scanning per language, dependents, thresholds, the
// graph cache keyed by the index, and risk without a repository.

#include "unit/temp_dir.hpp"

#include <algorithm>
#include <cstdlib>

#include "lib/risk/deps.hpp"
#include "lib/risk/risk.hpp"
#include "lib/config/workspace.hpp"
#include "unit/trusted_root.hpp"

namespace {
using kai::test::sh;
using kai::test::TempDir;
using Paths = std::vector<std::string>;

// What `path` holding `text` depends on, among `tracked`.
Paths deps_of(const Paths& tracked, const std::string& path, const std::string& text,
              const std::vector<kai::GoModule>& mods = {}) {
  kai::FileSet files{tracked};
  Paths out;
  for (uint32_t i : kai::dependencies(files, mods, path, text)) out.push_back(files.paths()[i]);
  return out;
}

// A git work tree whose index holds `files`.
void git_repo(const TempDir& d, const std::vector<std::pair<std::string, std::string>>& files) {
  d.git_init();
  for (const auto& [p, text] : files) d.write(p, text);
  sh(d, "git add -A");
}

struct Assessed {
  kai::RiskResult result;
  kai::Proposal proposal;
};

// assess_risk of an edit of `path` in a workspace whose root is `root`,
// with no user config.
Assessed assess(const std::filesystem::path& root, const std::string& path) {
  kai::Clock clock;
  kai::Env env;
  env.cwd = root;
  env.root_override = root;
  env.user_config_dir = root / ".none";
  kai::test::trust_for_test(root, env.user_config_dir);
  REQUIRE(kai::create_key(env.user_config_dir));  // the owner's key, as init makes it
  auto ws = kai::Workspace::open(env, clock);
  REQUIRE(ws);
  Assessed a;
  a.proposal.kind = kai::Kind::edit;
  a.proposal.path = path;
  a.result = kai::assess_risk(*ws, a.proposal);
  return a;
}

kai::DepGraph graph(const Paths& files, const std::vector<std::vector<uint32_t>>& deps) { return {files, deps}; }
}  // namespace

TEST_CASE("C and C++ includes resolve from the file, its parents and include dirs", "[risk]") {
  const Paths tracked = {"src/a.c", "src/util.h", "lib/x.hpp", "include/proj/api.h", "common/c.h", "src/net/n.cc"};
  const std::string text =
      "#include <stdio.h>\n#include \"util.h\"\n  #  include \"lib/x.hpp\"\n#include <proj/api.h>\n"
      "#include \"../common/c.h\"\n#include \"missing.h\"\nint main() { return 0; }\n";
  CHECK(kai::import_names(kai::Lang::c, text) ==
        Paths{"stdio.h", "util.h", "lib/x.hpp", "proj/api.h", "../common/c.h", "missing.h"});
  CHECK(deps_of(tracked, "src/a.c", text) == Paths{"src/util.h", "lib/x.hpp", "include/proj/api.h", "common/c.h"});
  // From a deeper folder the parent's header is found by walking up.
  CHECK(deps_of(tracked, "src/net/n.cc", "#include \"util.h\"\n") == Paths{"src/util.h"});
}

TEST_CASE("JavaScript and TypeScript imports resolve extensions and index files", "[risk]") {
  const Paths tracked = {"web/app.ts",   "web/x.ts",   "y/index.js",   "web/z.ts",
                         "web/lazy.mjs", "web/c.json", "web/comp.tsx", "web/old.cjs"};
  const std::string text =
      "import { a } from './x'\nconst y = require('../y')\nexport * from './z.js'\n"
      "const l = await import('./lazy.mjs')\nimport React from 'react'\nimport './c.json'\n"
      "import {\n  Comp,\n} from \"./comp\"\nconst t = require(`./${name}`)\nimport old from './old'\n"
      "Array.from('abc')\n";
  CHECK(deps_of(tracked, "web/app.ts", text) ==
        Paths{"web/x.ts", "y/index.js", "web/z.ts", "web/lazy.mjs", "web/c.json", "web/comp.tsx", "web/old.cjs"});
  CHECK(kai::import_names(kai::Lang::js, "import type { T } from './t'\n") == Paths{"./t"});
}

TEST_CASE("Python imports resolve modules, packages and relative imports", "[risk]") {
  const Paths tracked = {"app/main.py", "app/__init__.py", "app/models.py",      "app/db/__init__.py", "app/db/pool.py",
                         "app/util.py", "lib/helper.py",   "src/core/engine.py", "app/db/conn.py"};
  const std::string main =
      "import os\nimport app.models as m\nfrom app.db import pool\nfrom app import util, Thing\n"
      "from . import models\nfrom lib.helper import run  # comment\n"
      "from core.engine import (\n    start,\n    stop,\n)\n";
  CHECK(deps_of(tracked, "app/main.py", main) == Paths{"app/__init__.py", "app/models.py", "app/db/pool.py",
                                                       "app/util.py", "lib/helper.py", "src/core/engine.py"});
  // Relative: `.` is the package of the file, `..` the one above.
  CHECK(
      deps_of(tracked, "app/db/pool.py", "from .conn import connect\nfrom .. import models\nfrom ..util import u\n") ==
      Paths{"app/models.py", "app/util.py", "app/db/conn.py"});
  CHECK(kai::import_names(kai::Lang::python, "import a.b, c as d\n") == Paths{"a.b", "c"});
}

TEST_CASE("Rust mod declarations and crate paths resolve to module files", "[risk]") {
  const Paths tracked = {"Cargo.toml",    "src/lib.rs",     "src/net.rs", "src/net/tcp.rs",
                         "src/db/mod.rs", "src/db/pool.rs", "src/util.rs"};
  CHECK(deps_of(tracked, "src/lib.rs", "mod net;\npub mod db;\npub(crate) mod util;\nmod inline { }\n") ==
        Paths{"src/net.rs", "src/db/mod.rs", "src/util.rs"});
  CHECK(deps_of(tracked, "src/net.rs", "mod tcp;\nuse crate::db::pool::Pool;\n") ==
        Paths{"src/net/tcp.rs", "src/db/pool.rs"});
  CHECK(deps_of(tracked, "src/net/tcp.rs",
                "use crate::{\n    util::helper,\n    db,\n};\nuse super::Net;\nuse std::io;\n") ==
        Paths{"src/net.rs", "src/db/mod.rs", "src/util.rs"});
  // A crate path to an item of the crate root depends on the root file.
  CHECK(deps_of(tracked, "src/util.rs", "use crate::Config;\n") == Paths{"src/lib.rs"});
}

TEST_CASE("Go imports of the module depend on every file of the package", "[risk]") {
  const Paths tracked = {"go.mod",
                         "main.go",
                         "internal/store/store.go",
                         "internal/store/sql.go",
                         "internal/store/store_test.go",
                         "internal/store/sub/s.go",
                         "pkg/log/log.go"};
  CHECK(kai::go_module_path("// comment\nmodule example.com/app // the app\n\ngo 1.21\n") == "example.com/app");
  kai::FileSet files{tracked};
  auto mods = kai::go_modules(files, [](uint32_t) { return std::string("module example.com/app\n"); });
  REQUIRE(mods.size() == 1);
  const std::string text =
      "package main\n\nimport (\n\t\"fmt\"\n\tst \"example.com/app/internal/store\"\n)\n"
      "import \"example.com/app/pkg/log\"\nimport \"github.com/other/mod\"\n";
  CHECK(deps_of(tracked, "main.go", text, mods) ==
        Paths{"internal/store/store.go", "internal/store/sql.go", "pkg/log/log.go"});
}

TEST_CASE("dependents count direct and transitive importers, with a cap", "[risk]") {
  // 0 util.h ← 1 a.h ← 2 a.c, 3 b.c ; 4 c.c ← nobody; 1 also ← 4
  auto g = graph({"util.h", "a.h", "a.c", "b.c", "c.c"}, {{}, {0}, {1}, {1}, {0, 1}});
  auto d = kai::dependents_of(g, "util.h");
  CHECK(d.direct == Paths{"a.h", "c.c"});
  CHECK(d.transitive == 4);
  CHECK_FALSE(d.capped);
  CHECK(kai::dependents_of(g, "a.c").transitive == 0);
  CHECK(kai::dependents_of(g, "untracked.h").transitive == 0);
  auto capped = kai::dependents_of(g, "util.h", 2);
  CHECK(capped.transitive == 2);
  CHECK(capped.capped);
}

TEST_CASE("risk levels follow the [risk] thresholds", "[risk]") {
  kai::Config cfg;
  cfg.risk_medium = 5;
  cfg.risk_high = 20;
  CHECK(kai::risk_level(0, cfg) == kai::Risk::low);
  CHECK(kai::risk_level(4, cfg) == kai::Risk::low);
  CHECK(kai::risk_level(5, cfg) == kai::Risk::medium);
  CHECK(kai::risk_level(19, cfg) == kai::Risk::medium);
  CHECK(kai::risk_level(20, cfg) == kai::Risk::high);
}

TEST_CASE("the graph is cached by index state and rebuilt when the index changes", "[risk]") {
  TempDir d;
  git_repo(d, {{"src/util.h", "int u;\n"}, {"src/a.c", "#include \"util.h\"\n"}, {"src/b.c", "#include \"util.h\"\n"}});
  const auto cache = d.path() / ".kaicoder" / "cache" / "deps";
  std::vector<std::pair<size_t, size_t>> progress;
  auto first = kai::load_graph(d.path(), cache, [&](size_t done, size_t total) { progress.emplace_back(done, total); });
  REQUIRE(first);
  CHECK_FALSE(first->from_cache);
  CHECK(first->scanned == 3);
  REQUIRE_FALSE(progress.empty());
  CHECK(progress.back() == std::pair<size_t, size_t>{3, 3});
  CHECK(kai::dependents_of(first->graph, "src/util.h").transitive == 2);
  REQUIRE(std::filesystem::exists(cache));

  auto second = kai::load_graph(d.path(), cache);
  REQUIRE(second);
  CHECK(second->from_cache);
  CHECK(second->scanned == 0);
  CHECK(second->key == first->key);
  CHECK(kai::dependents_of(second->graph, "src/util.h").transitive == 2);

  // A new importer in the index is a new key: scanned again, and counted.
  d.write("src/c.c", "#include \"util.h\"\n");
  sh(d, "git add src/c.c");
  auto third = kai::load_graph(d.path(), cache);
  REQUIRE(third);
  CHECK_FALSE(third->from_cache);
  CHECK(third->scanned == 4);  // a new path: everything is resolved again
  CHECK(third->key != first->key);
  CHECK(kai::dependents_of(third->graph, "src/util.h").transitive == 3);
  // Only blobs changed, the same paths: just the changed file is read again.
  d.write("src/b.c", "int b;\n");
  sh(d, "git add src/b.c");
  auto edited = kai::load_graph(d.path(), cache);
  REQUIRE(edited);
  CHECK_FALSE(edited->from_cache);
  CHECK(edited->scanned == 1);
  CHECK(edited->reused == 3);
  CHECK(kai::dependents_of(edited->graph, "src/util.h").direct == Paths{"src/a.c", "src/c.c"});
  // The work tree alone does not count until it is added.
  d.write("src/d.c", "#include \"util.h\"\n");
  auto fourth = kai::load_graph(d.path(), cache);
  REQUIRE(fourth);
  CHECK(fourth->from_cache);
  CHECK(kai::dependents_of(fourth->graph, "src/util.h").transitive == 2);
}

TEST_CASE("a corrupt graph cache is ignored and rebuilt", "[risk]") {
  TempDir d;
  git_repo(d, {{"x.h", ""}, {"y.c", "#include \"x.h\"\n"}});
  const auto cache = d.path() / "cache-deps";
  REQUIRE(kai::load_graph(d.path(), cache));
  const std::string good = d.read("cache-deps");
  // Truncated, an index out of range, and garbage: each is a miss, never an error.
  for (std::string bad : {good.substr(0, good.size() - 3), good.substr(0, good.rfind('\0') + 1) + "99\n",
                          std::string("\x01\x02garbage")}) {
    d.write("cache-deps", bad);
    auto g = kai::load_graph(d.path(), cache);
    REQUIRE(g);
    CHECK_FALSE(g->from_cache);
    CHECK(kai::dependents_of(g->graph, "x.h").transitive == 1);
    CHECK(d.read("cache-deps") == good);
  }
}

TEST_CASE("a root in a subfolder of the repository counts paths from the root", "[risk]") {
  TempDir d;
  git_repo(d, {{"proj/kaicoder.toml", "[risk]\nmedium = 1\nhigh = 2\n"},
               {"proj/inc.h", ""},
               {"proj/a.c", "#include \"inc.h\"\n"}});
  auto [r, p] = assess(d.path() / "proj", "inc.h");
  CHECK(r.from_graph);
  CHECK(p.risk == kai::Risk::medium);
  CHECK(p.risk_reason == "1 tracked file depends on inc.h (a.c)");
  CHECK(p.tier == kai::Tier::normal);
}

TEST_CASE("without a repository risk comes from paths only", "[risk]") {
  TempDir d;
  d.write("run.sh", "echo\n");
  d.write("a.c", "int a;\n");
  auto r = kai::load_graph(d.path(), d.path() / "cache");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == kai::Errc::not_found);

  auto plain = assess(d.path(), "a.c");
  CHECK_FALSE(plain.result.from_graph);
  CHECK(plain.proposal.risk == kai::Risk::low);
  CHECK(plain.proposal.risk_reason == "not in a git repository: risk from paths only");
  auto script = assess(d.path(), "run.sh");  // a default confirm path
  CHECK(script.proposal.risk == kai::Risk::medium);
  CHECK(script.proposal.risk_reason == "not in a git repository: risk from paths only; confirm path (*.sh)");
}

TEST_CASE("a failing scan falls back to paths only and says why", "[risk]") {
  TempDir d;
  git_repo(d, {{"inc.h", ""}, {"a.c", "#include \"inc.h\"\n"}});
  d.write(".git/index", "DIRC this is not an index");
  auto [r, p] = assess(d.path(), "inc.h");
  CHECK_FALSE(r.from_graph);
  CHECK(p.risk == kai::Risk::low);
  CHECK_THAT(p.risk_reason, Catch::Matchers::StartsWith("dependency scan failed ("));
  CHECK_THAT(p.risk_reason, Catch::Matchers::EndsWith("): risk from paths only"));
}

TEST_CASE("symlinks are targets but never scanned, and submodules are not files", "[risk]") {
  TempDir d;
  git_repo(d, {{"real.h", ""}, {"a.c", "#include \"link.h\"\n"}});
  d.symlink("link.h", "real.h");
  sh(d, "git add link.h");
  // A submodule entry (mode 160000) with an arbitrary commit id.
  sh(d, "git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,vendor/sub");
  auto g = kai::load_graph(d.path(), {});
  REQUIRE(g);
  CHECK(g->scanned == 2);  // a.c and real.h, not the link
  CHECK(std::find(g->graph.files.begin(), g->graph.files.end(), "vendor/sub") == g->graph.files.end());
  CHECK(kai::dependents_of(g->graph, "link.h").direct == Paths{"a.c"});
  CHECK(kai::dependents_of(g->graph, "real.h").transitive == 0);
}

TEST_CASE("a sealed graph cache is used, and one changed outside kaicoder is ignored and rebuilt", "[risk][mac]") {
  TempDir d;
  git_repo(d, {{"x.h", ""}, {"y.c", "#include \"x.h\"\n"}, {"z.c", "#include \"x.h\"\n"}});
  REQUIRE(kai::create_key(d.path() / "owner"));
  const kai::Sealer sealer(d.path() / "owner", d.path());
  kai::ScanOptions sealed;
  sealed.sealer = &sealer;
  const auto cache = d.path() / "cache-deps";
  REQUIRE(kai::load_graph(d.path(), cache, {}, sealed));
  auto again = kai::load_graph(d.path(), cache, {}, sealed);
  REQUIRE(again);
  CHECK(again->from_cache);
  // A planted cache that says nothing depends on x.h: the seal does not match.
  const std::string good = d.read("cache-deps");
  std::string forged = good;
  auto at = forged.find("y.c");
  REQUIRE(at != std::string::npos);
  forged[at] = 'Y';
  d.write("cache-deps", forged);
  auto g = kai::load_graph(d.path(), cache, {}, sealed);
  REQUIRE(g);
  CHECK_FALSE(g->from_cache);
  CHECK(kai::dependents_of(g->graph, "x.h").transitive == 2);
  CHECK(d.read("cache-deps") == good);
  // Without a key nothing is read from the cache or written to it.
  const kai::Sealer none;
  kai::ScanOptions keyless;
  keyless.sealer = &none;
  std::filesystem::remove(cache);
  auto cold = kai::load_graph(d.path(), cache, {}, keyless);
  REQUIRE(cold);
  CHECK_FALSE(cold->from_cache);
  CHECK_FALSE(std::filesystem::exists(cache));
}
