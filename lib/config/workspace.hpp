#pragma once
// Everything one kaicoder invocation works with: the root, the merged config,
// the guardrails, the store, the journal and the changelog. cmd/ builds one
// per command from its Env; lib/ never looks at the process environment.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "lib/store/changelog.hpp"
#include "lib/config/config.hpp"
#include "lib/store/journal.hpp"
#include "lib/store/mac.hpp"
#include "lib/paths/paths.hpp"
#include "lib/paths/redact.hpp"
#include "lib/result.hpp"
#include "lib/store/store.hpp"
#include "lib/util/progress.hpp"
#include "lib/util/time.hpp"

namespace kai {

struct ListedFolders;

// What the process knows about where it runs; filled in by cmd/main.cpp.
struct Env {
  std::filesystem::path cwd;
  std::optional<std::filesystem::path> root_override;    // --root
  std::optional<std::filesystem::path> config_override;  // --config
  // The owner's kaicoder folder: <home from the password database>/.config/kaicoder,
  // never $HOME or XDG_*, which the caller sets.
  std::filesystem::path user_config_dir;
  std::string user;                                       // OS user name of the real uid
  std::vector<std::pair<std::string, std::string>> vars;  // the process environment (redaction, runs' allow-list)
  std::filesystem::path home;  // the owner's real home, from the password database (not $HOME)
  std::filesystem::path self_exe;  // the running kaicoder (/proc/self/exe): what integrate wires
};

class Workspace {
public:
  // The trusted root (lib/config/trust: find_trusted_root) with the owner's config,
  // its kaicoder.toml and any restricting --config overlay. Errc::denied when
  // there is no trusted root or it changed; Errc::usage for a bad --root or a
  // malformed or disallowed config.
  static Result<Workspace> open(const Env& env, const Clock& clock);
  // The root doctor looks at (trusted or not) with built-in defaults only,
  // for doctor when the root is untrusted or a config is broken.
  static Result<Workspace> open_without_config(const Env& env, const Clock& clock);

  std::filesystem::path root;
  Config cfg;
  Guardrails guards;
  Store store;
  Journal journal;
  Changelog changelog;
  const Clock* clock = nullptr;
  std::string user;
  // The owner's own kaicoder folder (Env::user_config_dir): their config,
  // the key that seals kaicoder's records (lib/store/mac), later the trusted roots.
  std::filesystem::path owner_dir;
  // Seals with the key in `owner_dir`; the store and the journal hold copies.
  Sealer sealer;
  // Set owner_dir and load its key into sealer, store and journal.
  void use_owner_dir(const std::filesystem::path& dir);
  // The owner's real home (Env::home): what runs get as HOME, hidden from
  // them but for the toolchains (lib/run/confine).
  std::filesystem::path home;
  // The process environment (Env::vars); runs get only an allow-list of it.
  std::vector<std::pair<std::string, std::string>> env_vars;
  Redactor redactor;  // environment secrets plus values from secret files in root
  // Each folder's names as the secret-file scan read them (not cached), for the snapshot
  // before a run (SnapshotStore::seed), which takes them over.
  std::shared_ptr<ListedFolders> listed;
  // Where long work (dependency scans, snapshots) reports how far it got;
  // cmd/ draws it on a terminal. Empty: nobody is watching.
  Progress progress;
  // [hooks] notify events waiting to be sent once no lock is held (lib/run/hooks).
  struct NotifyEvent {
    std::string event;
    int proposal = 0;
    std::string doc;  // the JSON the hook reads, redacted
    std::string ids;  // several proposals at once (an expiry burst): "3,4,9"; proposal is 0
  };
  std::vector<NotifyEvent> notify_queue;
  // What kaicoder did on the side that the person should hear of (a
  // half-done change finished or undone, debris of an interrupted command
  // removed, the state dir made anew); cmd/ prints each once.
  std::vector<std::string> notices;

  // An entry or text safe to print or store.
  std::string redact(std::string_view text) const { return redactor.apply(text); }
  Entry redact(Entry e) const;

  std::filesystem::path abs(const std::string& rel) const { return root / rel; }

private:
  Workspace(const std::filesystem::path& r, Config c, const Clock& clk, std::string u);
};

// Two-user mode: [two_user] agent is set in the owner's config or the
// trusted kaicoder.toml.
bool two_user(const Workspace& ws);

}  // namespace kai
