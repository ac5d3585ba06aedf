#pragma once
// The staging store under <root>/.kaicoder/: one folder per proposal
// (staging/<id>/meta.json plus raw payload files), the id counter and the
// store lock. Every state change happens while the caller holds lock().
//
// Usage: Store s{state_dir}; s.ensure(); auto l = s.lock();
//        Proposal p = …; p.id = *s.next_id(); s.create(p); … s.save(p);

#include <filesystem>
#include <vector>

#include "lib/proposal.hpp"
#include "lib/result.hpp"
#include "lib/util/lock.hpp"

namespace kai {

class Store {
public:
  explicit Store(std::filesystem::path state_dir) : m_dir(std::move(state_dir)) {}

  // Create the state dir layout (0700 state dir). Idempotent.
  Status ensure() const;
  bool exists() const;
  const std::filesystem::path& dir() const { return m_dir; }
  std::filesystem::path staging_dir(int id) const;

  Result<FileLock> lock() const;

  // A fresh private folder <state>/scratch/<prefix>-XXXXXX (mode 0700) for
  // one validator or hook run; the caller removes it. io when it cannot be made.
  Result<std::filesystem::path> make_scratch(const std::string& prefix) const;

  // Next free id (reads and bumps staging/next-id). Caller holds the lock.
  Result<int> next_id() const;

  // Write a new proposal: payload files, then meta.json. Caller holds the lock.
  Status create(const Proposal& p) const;
  // Rewrite meta.json atomically (payloads never change).
  Status save(const Proposal& p) const;
  // save() for many at once, synced once for all (lib/util/fs.hpp write_files_atomic).
  Status save_all(const std::vector<Proposal>& ps) const;
  // Metadata and payloads. not_found for an unknown id, io for a corrupt record.
  // Payloads::none reads the metadata (and a run's command) only: the
  // payload files, up to [limits] content each, are checked to be there but
  // never opened. What lists, sweeps and waits use; showing, deciding and
  // applying one proposal reads its payloads.
  enum class Payloads { none, all };
  Result<Proposal> load(int id, Payloads payloads = Payloads::all) const;
  // All ids present, ascending. Corrupt entries are still listed.
  Result<std::vector<int>> ids() const;

private:
  std::filesystem::path m_dir;
};

}  // namespace kai
