#pragma once
// Assertions for end-to-end cases: on failure they print everything the
// child wrote, so a red case says why without a rerun.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <stdexcept>
#include <string>

#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "lib/store/mac.hpp"
#include "lib/store/store.hpp"
#include "tests/support/repo.hpp"

// The most memory (KiB) any process this case started held at once, and
// the bound a case checks it against when no process may hold a huge file
// or object whole: AddressSanitizer keeps up to 256 MiB of freed memory in
// quarantine, so a sanitized build gets that much more.
inline long children_max_rss_kib() {
  struct rusage ru {};
  REQUIRE(::getrusage(RUSAGE_CHILDREN, &ru) == 0);
  return ru.ru_maxrss;
}
#if defined(__SANITIZE_ADDRESS__)
inline constexpr long k_bounded_rss_kib = 512 * 1024;
#else
inline constexpr long k_bounded_rss_kib = 256 * 1024;
#endif

// The run exited with `code`; otherwise show its output. `run` is evaluated
// once, so it may be the call itself.
#define KAI_CHECK_EXIT(run, code) KAI_EXIT_IMPL(CHECK, run, code)
#define KAI_REQUIRE_EXIT(run, code) KAI_EXIT_IMPL(REQUIRE, run, code)
#define KAI_EXIT_IMPL(check, run, code)                                      \
  do {                                                                       \
    const ::kai::test::Run& kai_run_ = (run);                                \
    INFO("exit " << kai_run_.exit_code << " signal " << kai_run_.term_signal \
                 << (kai_run_.timed_out ? " (timed out)" : "") << "\n"       \
                 << kai_run_.all());                                         \
    check(kai_run_.exit_code == (code));                                     \
  } while (0)

namespace kai::test {

// The JSON object the run printed on stdout (after any prompt).
// A file outside the repo (in home, say): its bytes, empty when it is missing.
inline std::string read_outside(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json json_of(const Run& r) { return nlohmann::json::parse(json_text(r.out)); }

// `kaicoder propose` arguments for a surgical edit.
inline std::vector<std::string> edit(const std::string& path, const std::string& target, const std::string& replacement,
                                     const std::string& why = "test change") {
  return {"propose", "--path", path, "--target", target, "--replacement", replacement, "--why", why};
}

// The tree without kaicoder's changelog: what a refused apply must leave as
// it was (the refusal itself is logged as a `failed` entry, SPEC §6).
inline std::map<std::string, std::string> tree_but_log(const TempRepo& repo) {
  auto t = repo.tree_snapshot();
  t.erase("KAI-CODER-CHANGELOG.md");
  return t;
}

// Every changelog entry (`log --json -n 0`), newest first.
inline nlohmann::json log_entries(const TempRepo& repo) {
  Run r = repo.kai({"--json", "log", "-n", "0"});
  if (!r.ok()) throw std::runtime_error("kaicoder log failed: " + r.all());
  return json_of(r).at("entries");
}

// kaicoder set up and everything committed, so that the user's own git
// state is clean.
inline void init_and_commit(TempRepo& repo) {
  repo.init();
  repo.git({"add", "-A"});
  repo.git({"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "kaicoder"});
}

// The reason of a Claude Code PreToolUse hook's denial; empty when the hook
// printed nothing (the call is let through).
inline std::string claude_denial(const Run& r) {
  nlohmann::json j = nlohmann::json::parse(r.out);
  if (j.empty()) return "";
  REQUIRE(j.at("hookSpecificOutput").at("hookEventName") == "PreToolUse");
  REQUIRE(j.at("hookSpecificOutput").at("permissionDecision") == "deny");
  return j.at("hookSpecificOutput").at("permissionDecisionReason").get<std::string>();
}

// One proposal as `show --json` prints it.
inline nlohmann::json show_json(const TempRepo& repo, int id) {
  Run r = repo.kai({"--json", "show", std::to_string(id)});
  if (!r.ok()) throw std::runtime_error("kaicoder show failed: " + r.all());
  return json_of(r);
}

// Rewrite proposal `id`'s record as kaicoder itself would: sealed with the
// owner's key (lib/store/mac). For cases that stand in for what only time can do
// (an old `created`); an agent has no key and cannot do this.
// The sealer kaicoder uses for this repository's store: the owner's key,
// the root and the store's identity when it has one.
inline Sealer store_sealer(const TempRepo& repo) {
  Sealer sealer(repo.owner_dir(), repo.path());
  if (std::filesystem::exists(repo.abs(".kaicoder/store-id"))) {
    auto ident = store_identity(repo.abs(".kaicoder"), sealer);
    if (!ident) throw std::runtime_error("cannot read the store's identity: " + ident.error().message);
    sealer.use_store(ident->id);
  }
  return sealer;
}

inline void write_sealed_record(const TempRepo& repo, int id, nlohmann::json meta) {
  meta.erase("seal");
  auto mac = store_sealer(repo).seal("proposal", std::to_string(id), meta.dump());
  if (!mac) throw std::runtime_error("cannot seal: " + mac.error().message);
  meta["seal"] = *mac;
  repo.write(".kaicoder/staging/" + std::to_string(id) + "/meta.json", meta.dump(2));
  // The live index keeps each live record's state and time under its own
  // seal; a record rewritten behind its back (time passing) leaves it
  // saying the old ones, so it goes too and the next command makes it again
  // from the records, as kaicoder does with an index it cannot believe.
  std::error_code ec;
  std::filesystem::remove(repo.abs(".kaicoder/staging/live"), ec);
}

}  // namespace kai::test
