// Drives a changeset through the library for bench/changeset_bench.sh:
// propose (parse, place every hunk, grade every file, stage), approve and
// apply (check every base, back up, write, one syncfs, journal, changelog),
// exactly the calls `kaicoder propose --patch` and `kaicoder approve` make.
//
//   changeset_driver gen DIR N           N files of about 60 lines, 50 to a folder
//   changeset_driver edit DIR            change a few lines of every file (the commit to diff)
//   changeset_driver apply ROOT PATCH OWNER
//                                        trust ROOT for a fresh owner folder OWNER, then
//                                        propose PATCH, approve it and apply it; prints
//                                        "files propose_ms approve_ms"
//
// The approval is the library call the terminal door makes once the person
// has answered yes (lib/gate.hpp approve): the bench measures kaicoder's
// work, not a person's typing.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "lib/gate/changeset.hpp"
#include "lib/gate/gate.hpp"
#include "lib/store/mac.hpp"
#include "lib/config/trust.hpp"
#include "lib/util/fs.hpp"
#include "lib/config/workspace.hpp"

namespace fs = std::filesystem;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int fail(const std::string& what, const kai::Error& e) {
  std::fprintf(stderr, "changeset_driver: %s: %s\n", what.c_str(), e.message.c_str());
  return 1;
}

std::string file_path(const fs::path& dir, int i) {
  return (dir / fmt::format("d{}", i / 50) / fmt::format("f{}.c", i)).string();
}

int gen(const fs::path& dir, int n) {
  for (int i = 0; i < n; ++i) {
    fs::create_directories(fs::path(file_path(dir, i)).parent_path());
    std::ofstream out(file_path(dir, i), std::ios::binary);
    for (int l = 0; l < 60; ++l)
      out << "int f" << i << "_" << l << "(int x) { return x + " << (l * 7 + i) % 97 << "; }\n";
  }
  return 0;
}

int edit(const fs::path& dir) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".c") continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    for (const char* line : {"_10(int x)", "_40(int x)"}) {
      size_t at = text.find(line);
      if (at != std::string::npos) text.replace(at, std::string(line).size(), std::string(line) + " /* changed */");
    }
    std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << text;
  }
  return 0;
}

int apply(const fs::path& root, const fs::path& patch_file, const fs::path& owner) {
  kai::Env env;
  env.cwd = root;
  env.root_override = root;
  env.user_config_dir = owner;
  env.user = "bench";
  if (!fs::exists(root / "kaicoder.toml")) std::ofstream(root / "kaicoder.toml").flush();
  auto cfg = kai::read_file(root / "kaicoder.toml");
  if (!cfg) return fail("config", cfg.error());
  if (auto k = kai::create_key(owner); !k) return fail("key", k.error());
  if (auto t = kai::TrustList(owner).record(fs::canonical(root), *cfg, "2026-07-09T14:15:30Z"); !t)
    return fail("trust", t.error());
  kai::Clock clock;
  auto ws = kai::Workspace::open(env, clock);
  if (!ws) return fail("workspace", ws.error());
  auto text = kai::read_file(patch_file);
  if (!text) return fail("patch", text.error());

  auto t0 = std::chrono::steady_clock::now();
  kai::ChangesetRequest req;
  req.patch = std::move(*text);
  req.why = "benchmark";
  auto st = kai::propose_changeset(*ws, req, root, kai::DryRun::no, {});
  if (!st) return fail("propose", st.error());
  const double propose_ms = ms_since(t0);

  auto t1 = std::chrono::steady_clock::now();
  const kai::gate::Decider who{"bench", kai::gate::Channel::terminal};
  auto rv = kai::gate::prepare_approval(*ws, st->proposal.id, who, {});
  if (!rv) return fail("prepare", rv.error());
  kai::gate::Request r{st->proposal.id, who, kai::gate::Answer::confirm, rv->digest, rv->diff_cut, {}};
  auto done = kai::gate::approve(*ws, r);
  if (!done) return fail("approve", done.error());
  if (!done->applied) return fail("approve", kai::make_error(kai::Errc::io, "approved but not applied"));
  std::printf("%zu %.1f %.1f\n", st->proposal.changes.size(), propose_ms, ms_since(t1));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gen" && argc == 4) return gen(argv[2], std::stoi(argv[3]));
  if (cmd == "edit" && argc == 3) return edit(argv[2]);
  if (cmd == "apply" && argc == 5) return apply(argv[2], argv[3], argv[4]);
  std::fprintf(stderr, "usage: changeset_driver gen DIR N | edit DIR | apply ROOT PATCH OWNER\n");
  return 2;
}
