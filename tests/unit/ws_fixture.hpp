#pragma once
// A workspace over a fresh TempDir with a given kaicoder.toml, for tests of
// the rooms that run commands for a proposal (validate, hooks).

#include "unit/temp_dir.hpp"

#include <initializer_list>
#include <optional>
#include <string>

#include "lib/store/mac.hpp"
#include "lib/gate/propose.hpp"
#include "lib/run/sandbox.hpp"
#include "lib/config/workspace.hpp"
#include "unit/still_clock.hpp"
#include "unit/trusted_root.hpp"

namespace kai::test {

struct WsFixture {
  TempDir dir;
  StillClock clock;
  std::optional<Workspace> ws;

  // `files` are written before the workspace opens (secret files feed its redactor).
  explicit WsFixture(const std::string& config, std::initializer_list<std::pair<std::string, std::string>> files = {}) {
    dir.write("kaicoder.toml", config);
    for (const auto& [rel, bytes] : files) dir.write(rel, bytes);
    Env env;
    env.cwd = dir.path();
    env.root_override = dir.path();
    env.user_config_dir = dir.path() / ".no-user-config";
    trust_for_test(dir.path(), env.user_config_dir);
    env.user = "tester";
    REQUIRE(kai::create_key(env.user_config_dir));  // the owner's key, as init makes it
    auto w = Workspace::open(env, clock);
    REQUIRE(w);
    ws.emplace(std::move(*w));
  }

  Result<Staged> write(const std::string& path, const std::string& content, DryRun dry = DryRun::no) {
    ProposeRequest r;
    r.path = path;
    r.content = content;
    r.why = "test";
    return propose(*ws, r, dir.path(), dry, {});
  }
};

// Landlock cases only mean something where the kernel has it.
inline bool have_landlock() {
  LandlockStatus st = landlock_status();
  if (st.abi == 0) WARN("SKIPPED: landlock is not available on this kernel (" << st.detail << ")");
  return st.abi > 0;
}

// Record proposal `id` as `s` under the store lock, as a decision does.
inline void decide(Workspace& ws, int id, State s) {
  auto lock = ws.store.lock();
  REQUIRE(lock);
  auto p = ws.store.load(id);
  REQUIRE(p);
  p->state = s;
  REQUIRE(ws.store.save(*p));
}

}  // namespace kai::test
