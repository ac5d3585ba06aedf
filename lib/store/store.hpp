#pragma once
// The staging store under <root>/.kaicoder/: one folder per proposal
// (staging/<id>/meta.json plus raw payload files), the id counter and the
// store lock. Every state change happens while the caller holds lock().
//
// Every meta.json carries a "seal" (lib/store/mac): the MAC of the rest of the
// record (compact JSON, keys sorted), which holds the payloads' digest,
// bound to the root and the proposal id. load() says whether it verified
// (Proposal::sealed); nothing that acts on a proposal trusts one that did not.
//
// The live index (staging/live) names the proposals still pending,
// approved (a run being carried out stays approved) or held (a run's
// effects waiting for a person), so that what every
// command reads grows with the work in flight, not with the history: see
// live(). It is sealed like a record and only ever says where to look; each
// proposal it names is loaded and its own seal checked as before.
//
// live_key(p, payload digest): what the index keeps of a request to find its
// twin (kind, path, base and payloads), short; the twin is then read from its
// record and compared in full. live_entry(p): p's entry, from p as sealed.
//
// Usage: Store s{state_dir}; s.use(Sealer{owner_dir, root}); s.ensure();
//        auto l = s.lock();
//        Proposal p = …; p.id = *s.next_id(); s.create(p); … s.save(p);

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "lib/store/mac.hpp"
#include "lib/store/proposal.hpp"
#include "lib/result.hpp"
#include "lib/util/lock.hpp"
#include "lib/util/stat.hpp"

namespace kai {

// A store's identity: <state>/store-id, JSON {"id": 32 hex digits,
// "replaces": the id this root's store had before it, "seal"}, made with
// the store and sealed for the root (Sealer::seal_store_id). Every record
// and once-only note is bound to it (Sealer::use_store), so a state dir
// removed and made anew (rm -rf .kaicoder, git clean -xdf, a clone into the
// same folder) starts clean: the spent notes of the store before it refuse
// none of its ids, and no record of that store verifies in it.
struct StoreIdentity {
  std::string id;        // "" for a store made before stores had an identity
  bool fresh = false;    // no store yet: `id` is new, Store::ensure() writes it
  std::string replaces;  // the store this root had before ("unknown": one without an identity); "" for none
};
// The identity of the store in `state_dir`, or a new one when there is no
// store yet. conflict when the file is not a store identity sealed for this
// root (forged, or copied from elsewhere).
Result<StoreIdentity> store_identity(const std::filesystem::path& state_dir, const Sealer& sealer);

class Store {
public:
  explicit Store(std::filesystem::path state_dir);

  // Create the state dir layout (0700 state dir). Idempotent.
  Status ensure() const;
  bool exists() const;
  const std::filesystem::path& dir() const { return m_dir; }
  // staging/<id>/: where a proposal is made and stays while it is live.
  std::filesystem::path staging_dir(int id) const;
  // archive/<id / 1000>/<id>/: where a decided proposal is kept once the
  // sweep has archived it (archive_decided).
  std::filesystem::path archive_dir(int id) const;
  // Where proposal `id`'s folder is now: staging_dir(id) when it is there,
  // else archive_dir(id) when that is, else staging_dir(id). Two lstat
  // calls at most; never a listing.
  std::filesystem::path folder(int id) const;

  // Seal and check records with `s` (Workspace::open sets the owner's).
  void use(Sealer s);
  // There is no store yet: ensure() writes s's store id (StoreIdentity)
  // before it makes the store's folders.
  void make_identity(bool fresh) { m_fresh = fresh; }
  // After ensure() made the store: the store this root had before it
  // (StoreIdentity::replaces), whose records are gone; "" otherwise.
  const std::string& replaced() const { return m_replaced; }
  const Sealer& sealer() const { return m_seal; }
  // [approval] timeout, written into the agent's status copies (lib/store/spool
  // mirror_status) so that its side sees a proposal expire on time.
  void use_approval_timeout(long seconds) { m_approval_timeout = seconds; }

  // The store lock. Every state change holds it, and every state change
  // writes sealed records: denied (with the fix) when there is no usable key.
  Result<FileLock> lock() const;

  // A fresh private folder <state>/scratch/<prefix>-XXXXXX (mode 0700) for
  // one validator or hook run; the caller removes it. io when it cannot be made.
  Result<std::filesystem::path> make_scratch(const std::string& prefix) const;

  // Next free id (reads and bumps staging/next-id). Caller holds the lock.
  Result<int> next_id() const;

  // Write a new proposal: payload files, then meta.json. Caller holds the lock.
  // Write a new proposal: payload files, then meta.json, sealed. Caller holds
  // the lock. Marks `p` sealed.
  Status create(Proposal& p) const;
  // Rewrite meta.json atomically, sealed (payloads never change). Marks `p` sealed.
  Status save(Proposal& p) const;
  // save() for many at once, synced once for all (lib/util/fs.hpp write_files_atomic).
  Status save_all(std::vector<Proposal>& ps) const;
  // Metadata and payloads, with Proposal::sealed saying whether the seal
  // verified. not_found for an unknown id, io for a corrupt record.
  // Payloads::none reads the metadata (and a run's command) only: the
  // payload files, up to [limits] content each, are checked to be there but
  // never opened, and whether they still match the seal is not known
  // (payload_changed stays false). What lists, sweeps and waits use;
  // showing, deciding and applying one proposal reads its payloads.
  enum class Payloads { none, all };
  Result<Proposal> load(int id, Payloads payloads = Payloads::all) const;
  // All ids present, in staging/ and in the archive, ascending. Corrupt
  // entries are still listed. A walk of the whole store: doctor's and the
  // rebuilds' business, not what a listing reads (catalog()).
  Result<std::vector<int>> ids() const;
  // The ids in staging/ only: the live set, what is not archived yet, and
  // records that do not verify (never archived). Few.
  std::vector<int> hot_ids() const;

  // Move every decided proposal in staging/ whose record verifies into the
  // archive (archive_dir), its bucket's summary written first. Caller holds
  // the lock (the sweep). Crash-safe at every step: each folder is moved by
  // one rename, so it is in exactly one place; a summary line for a folder
  // still in staging is ignored (the folder wins) and the next sweep
  // finishes the move. Returns how many were moved.
  Result<size_t> archive_decided() const;

  // Every proposal, metadata only, ascending id, for a full listing: the
  // folders in staging/ read from their records, the archived ones from
  // their buckets. Detail::records reads each bucket's summary
  // (archive/<bucket>/summary: one line per archived proposal, its record
  // as sealed, so a line verifies exactly as the record does): every field
  // of every record, for `list --json`. Detail::listed reads each bucket's
  // listing first (lib/store/listing: the fields a list row shows, the
  // whole bucket under one seal), so an archived proposal then holds only
  // those fields (and of a changeset's files, only the first few names);
  // an archived id the listing does not vouch for (no line, or a listing
  // that does not verify) is read as Detail::records reads it and named in
  // `unlisted`. An archived folder whose summary line is missing or does
  // not verify is read from its record instead and named in `from_records`.
  enum class Detail { listed, records };
  struct Catalog {
    std::vector<Proposal> proposals;
    std::vector<std::pair<int, std::string>> corrupt;  // unreadable: id, why
    std::vector<int> from_records;
    std::vector<int> unlisted;
  };
  Result<Catalog> catalog(Detail detail = Detail::records) const;
  // The archive buckets whose summary or listing disagrees with their
  // records (missing, a line that does not verify or says other than its
  // record, a folder without a line); `write` (under the lock) makes each
  // again from its records (the listing from the records that verify).
  // doctor's check. A summary is appended to (a bucket's new proposals, an
  // archived one's new line): the last line of an id is its word. One that
  // agrees but holds superseded lines is no disagreement; it is named in
  // `untidy`, and `write` writes it compact.
  std::vector<std::string> check_summaries(bool write, std::vector<std::string>* untidy = nullptr) const;
  // Each of `buckets` (numbers, as check_summaries names them) whose
  // summary holds superseded lines written again without them, each id's
  // last line kept as it is (no record read). Caller holds the lock.
  // Returns how many were written.
  size_t compact_summaries(const std::vector<std::string>& buckets) const;

  // One read of every record, shared by doctor's checks (the records'
  // seals, the live index, the archive's summaries and listings): each id
  // in staging/ and the archive, ascending, its record loaded (metadata
  // only; an archived run's command read and checked too, as a listing
  // vouches for it), and for an archived one the summary line its record
  // makes.
  //
  // Depth::changed leaves out an archive bucket that nothing touched since
  // a whole check found it in order: `archive/audit/<bucket>`, sealed,
  // holds the stat data (lib/util/stat.hpp StatKey: size, inode, mode,
  // modification and change times to the nanosecond) of every file and
  // folder that check read, and each is as it was. A change of any of them
  // (a record rewritten, renamed over, a folder added or removed, a summary
  // or listing edited) moves its change time, which no one but the kernel
  // sets; stat data in the racy window (k_racy_ns before the check began)
  // is never vouched for, so a change in the same clock tick cannot hide.
  // Such a bucket is named in `vouched`, its entries not read. Depth::full
  // reads every record (doctor --full).
  struct Audit {
    struct Entry {
      int id = 0;
      bool archived = false;
      std::optional<Proposal> proposal;  // nullopt: unreadable (`error` says why)
      std::string error;
      std::string summary_line;  // archived: its record as its summary line copies it
      // archived: what was read, taken before it was read (absent: unreadable)
      std::optional<StatKey> folder, record, command;
    };
    std::vector<Entry> entries;
    // Archive buckets read whole, with their own stat data taken before
    // they were listed and read.
    struct Bucket {
      int number = 0;
      std::optional<StatKey> dir, summary, listing;
    };
    std::vector<Bucket> read;
    std::uint64_t began = 0;  // the wall clock (ns) before anything was read
    std::vector<int> vouched;  // buckets left out as unchanged (Depth::changed)
  };
  enum class Depth { full, changed };
  Audit audit(Depth depth = Depth::full) const;
  // check_live() and check_summaries() from one audit().
  std::string check_live(const Audit& a) const;
  std::vector<std::string> check_summaries(const Audit& a, bool write,
                                           std::vector<std::string>* untidy = nullptr) const;
  // Writes the `audited` file of each bucket `a` read whole and found in
  // order: every record there verified (a run's command too), none of them
  // live, and the bucket not among `wrong` (check_summaries' answer). A
  // bucket that is not in order loses its file. Best effort: a store that
  // cannot be written (read-only, full, no key) keeps what it has, and the
  // next check reads the bucket whole again. Returns how many were written.
  size_t vouch(const Audit& a, const std::vector<std::string>& wrong) const;
  // The ids whose staging folder holds no record (meta.json, written last):
  // debris of a create() killed or cut short (a full disk). Ascending.
  std::vector<int> unrecorded() const;

  // The live set: every proposal pending, approved or held, metadata only
  // (Payloads::none), ascending id, each loaded and seal-checked by load().
  // Read from the live index; when the index is missing, does not verify,
  // or is older than the store (a proposal exists at or past the id it
  // says comes next: an old copy put back, or a create it never heard of),
  // it is made again from every record (`rebuilt`). Entries that disagree
  // with their record (decided since, or their folder gone) are left out.
  // Refresh::write, under the lock, writes the index back when it was made
  // again or had such entries; Refresh::read_only never writes.
  struct Live {
    std::vector<Proposal> proposals;
    std::vector<std::pair<int, std::string>> corrupt;  // named but unreadable: id, why
    bool rebuilt = false;
  };
  enum class Refresh { read_only, write };
  Result<Live> live(Refresh refresh = Refresh::read_only) const;

  // What the live index says of one live proposal, under the index's seal:
  // what the sweep (expiry), the pending twin and the per-agent pending
  // limit need, so that they read the index and no record.
  struct LiveEntry {
    int id = 0;
    bool readable = true;  // false: named, but its record did not read (nothing else is known)
    State state = State::pending;
    // When its wait ends: 'r' — `at` is when it began (created, or held_since
    // for held effects) and [approval] timeout counts from it; 'a' — `at` is
    // the end itself (a team proposal of another clone); '-' — never (no
    // time that parses, as past_timeout reads it).
    char clock = '-';
    int64_t at = 0;  // unix seconds
    // live_key() of the request: a retry of the same request has the same.
    std::string key;
    std::string agent;  // as recorded
    bool operator==(const LiveEntry&) const = default;
  };
  // The index as this process keeps it (never copied while it is read: a
  // change made while a LiveRef to it is held goes to a copy, so let go
  // of the view before changing the store, or the change copies it).
  struct LiveIndex;
  struct LiveView {
    std::shared_ptr<const LiveIndex> index;  // its settled entries, but those in `left_out`
    std::vector<int> left_out;               // ascending
    std::vector<LiveEntry> extra;            // read from their records
    bool rebuilt = false;                    // made again from every record (as live() says)
    // Each entry, the index's (ascending id) then `extra`, until `f`
    // (bool(const LiveEntry&)) returns false.
    template <class F>
    void each(F&& f) const;
    // Every entry, copied, ascending id (doctor's and the tests' view).
    std::vector<LiveEntry> entries() const;
  };
  // The live set as the index says it, no record read: what propose's one
  // pass (the sweep, the twin, the limit) reads. An entry a save cut short
  // left unsettled (marked before its record was written, not settled
  // after) is read from its record instead, as are all when the index is
  // missing, does not verify or is old (then `rebuilt`). Refresh::write
  // (under the lock) writes back what was made again or settled.
  // In one process the index read or written last is kept, and used again
  // while the file is the same one: its first line (with the seal, one
  // short read) and its stat data (device, inode, size, times) unchanged.
  // Any other write (another command's, or a hand's) changes them, and the
  // file is read and its seal checked again: memory is never believed over
  // a changed file.
  Result<LiveView> live_index(Refresh refresh = Refresh::read_only) const;
  // The sweep's check for a create cut short: each id the index names that
  // this process has not checked since it last wrote the index (those past
  // its `swept` mark) whose folder is missing or has no record. Removes
  // such folders and drops their entries. Caller
  // holds the lock (create() runs under it too, so none of them is in the
  // making). Returns the ids of the folders removed.
  Result<std::vector<int>> settle_created() const;

  // Make the index again from every record and write it (doctor). Caller
  // holds the lock. Returns how many proposals it names.
  Result<size_t> rebuild_live() const;
  // Whether the index on disk verifies, is current, and names every live
  // record there is, with what the record says (a full scan: doctor's
  // check). Empty when it does; else what is wrong with it.
  std::string check_live() const;

private:
  struct Named {
    LiveEntry entry;
    bool unsettled = false;  // its record may say otherwise: read it
    bool operator==(const Named&) const = default;
  };
public:
  struct LiveIndex {
    int next = 1;   // the id the next proposal gets at the earliest
    int swept = 0;  // every id named below it was found with its record by a sweep
    std::vector<Named> named;  // ascending id
    // Ids that left the live set (decided, or a create cut short) and may
    // still be in staging/: what the archiver looks at (archive_decided),
    // so it never lists staging/. Ascending.
    std::vector<int> due;
    bool operator==(const LiveIndex&) const = default;
  };

private:
  // One change to the index, appended to its file as one sealed line
  // (chained to the line before it): an entry put (made or replaced), an
  // entry dropped (its id then due for the archiver), the `next` and
  // `swept` marks set, or ids the archiver has looked at (no longer due).
  struct LiveChange {
    enum class What { put, drop, marks, archived } what = What::put;
    Named named;              // put
    int id = 0;               // drop
    int next = 0, swept = 0;  // marks
    std::vector<int> ids;     // archived, ascending
  };
  using LiveRef = std::shared_ptr<const LiveIndex>;
  static LiveChange put_change(LiveEntry e, bool unsettled);
  static LiveChange drop_change(int id);
  static LiveChange marks_change(int next, int swept);
  // A change's line as sealed ("put\t<entry>", "drop\t<id>", "marks\t<next>\t<swept>"), and back.
  static std::string change_text(const LiveChange& c);
  static std::optional<LiveChange> parse_change(std::string_view text);
  static void apply_change(LiveIndex& x, const LiveChange& c);
  // The index when it verifies and is current; null otherwise. The one
  // this process keeps (never copied): valid while the caller holds it.
  LiveRef read_live() const;
  // The index as its file says when it verifies, current or not.
  LiveRef load_live() const;
  // Every record's verdict: the ids that are live (or unreadable) and the next id.
  LiveIndex scan_live() const;
  LiveIndex scan_live(const Audit& a) const;
  // load(), and the record's compact text with its seal (what a summary line copies) in `record`.
  Result<Proposal> load(int id, Payloads payloads, std::string* record) const;
  // load() from `dir`, the folder the id's record is in, already found (a
  // plain folder, as folder() finds it).
  Result<Proposal> load_in(const std::filesystem::path& dir, int id, Payloads payloads, std::string* record) const;
  // meta.json's bytes `text` as a proposal without its payloads, its seal
  // checked (Proposal::sealed, sealed_payload_digest), through LoadCache.
  Result<Proposal> parse_record(int id, std::string text, std::string* record) const;
  Result<LiveRef> current_live() const;
  // The whole index written again (a rebuild, or the file compacted).
  Status write_live(LiveIndex x) const;
  // `changes` made to the current index: appended to its file, one sealed
  // line each, or the whole file written again when there is no current
  // index to append to or the appended lines outgrow the entries.
  Status change_live(const std::vector<LiveChange>& changes) const;
  // After records were saved, or before (`settled` false: their entries
  // marked unsettled), what the index says of them.
  Status tell_live(const std::vector<const Proposal*>& ps, bool settled) const;
  // An unsettled entry read from its record: nullopt when it has none (a create cut short).
  std::optional<LiveEntry> settle(const Named& n) const;
  // The index read last in this process, by its seal (live_index()).
  struct LiveCache;
  // The record load() parsed and checked last, by its exact bytes: the same
  // bytes read again are the same record with the same verdict, so loading
  // one proposal again (approve: its peek, before the question, after the
  // pause) reads the file but parses it and checks its seal once. Any byte
  // changed on disk misses. A new sealer (use()) starts an empty one.
  struct LoadCache;
  // The summary of archive bucket `bucket`: each id's last line, ascending
  // (`raw`: how many lines the file holds, superseded and drop lines too).
  std::vector<std::pair<int, std::string>> read_summary(const std::filesystem::path& bucket,
                                                        size_t* raw = nullptr) const;
  Status write_summary(const std::filesystem::path& bucket, std::vector<std::pair<int, std::string>> lines) const;
  // Replace (with nullptr drop) archived proposal `id`'s summary and listing
  // lines: `record` is p's record as sealed, compact (sealed_record()'s
  // `compact`). The summary's new line (or a
  // drop line, "<id>\t-") is appended; the listing is written again.
  Status put_summary_line(int id, const Proposal* p, const std::string* record) const;
  // The listing of archive bucket `bucket`: each line by id, when its seal
  // verifies; nullopt when it is missing or does not.
  std::optional<std::vector<std::pair<int, std::string>>> read_listing(const std::filesystem::path& bucket) const;
  Status write_listing(const std::filesystem::path& bucket, std::vector<std::pair<int, std::string>> lines) const;
  // A summary line's record, seal-checked as load() checks meta.json.
  Result<Proposal> from_line(int id, const std::string& line) const;
  // create()'s writes into the new folder `dir`.
  Status fill(Proposal& p, const std::filesystem::path& dir) const;
  // meta.json's text for `p`: the record, its payloads' digest and its seal
  // (and in `compact`, the same record on one line: what a summary line copies).
  Result<std::string> sealed_record(Proposal& p, std::string* compact = nullptr) const;
  // Write <state>/store-id (exclusively) for a new store.
  Status write_identity() const;
  std::filesystem::path m_dir;
  Sealer m_seal;
  long m_approval_timeout = 0;
  mutable bool m_fresh = false;
  mutable std::string m_replaced;
  std::shared_ptr<LiveCache> m_live_cache;  // shared by copies with this sealer
  std::shared_ptr<LoadCache> m_load_cache;  // shared by copies with this sealer
  mutable int m_swept_below = 0;  // this process checked every id named below it (settle_created)
};

template <class F>
void Store::LiveView::each(F&& f) const {
  if (index) {
    auto out = left_out.begin();
    for (const Named& n : index->named) {
      if (n.unsettled) continue;
      while (out != left_out.end() && *out < n.entry.id) ++out;
      if (out != left_out.end() && *out == n.entry.id) continue;
      if (!f(n.entry)) return;
    }
  }
  for (const LiveEntry& e : extra)
    if (!f(e)) return;
}

std::string live_key(const Proposal& p, const std::string& payload_digest);
Store::LiveEntry live_entry(const Proposal& p);

// The refusal for acting on proposal `p` when its record did not verify or
// its payloads changed since it was sealed (conflict, or denied without a
// key); ok otherwise.
Status require_sealed(const Store& store, const Proposal& p);

}  // namespace kai
