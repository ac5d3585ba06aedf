#include "lib/store/store.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "lib/paths/beneath.hpp"
#include "lib/store/listing.hpp"
#include "lib/store/spool.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/git.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json_bounded.hpp"
#include "lib/util/last_read.hpp"
#include "lib/util/time.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {
constexpr const char* k_payloads[] = {"target", "replacement", "content"};

std::string* payload(Proposal& p, std::string_view name) {
  if (name == "target") return &p.target;
  if (name == "replacement") return &p.replacement;
  return &p.content;
}
}  // namespace

namespace {

// A state dir, or a folder in it, that is a symlink would carry every write
// of the store out of root (a cloned repository can commit one): refused,
// never followed. The files in them are read with lib/paths/beneath read_owned.
Status refuse_symlinked_folders(const fs::path& dir) {
  for (const char* sub :
       {"", "staging", "archive", "journal", "journal/paths", "intents", "scratch", "cache", "changelog-archive"}) {
    fs::path p = *sub ? dir / sub : dir;
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return make_error(Errc::denied, fmt::format("'{}' is a symlink, which kaicoder never follows", p.string()),
                        "the state dir and its folders must be real folders inside the root; remove the link");
  }
  return ok_status();
}

}  // namespace

namespace {
constexpr const char* k_identity_file = "store-id";

bool hex_id(const std::string& id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The id and the store it replaces in a store-id file's text; conflict
// when it is not one sealed for this root.
Result<StoreIdentity> parse_identity(const fs::path& file, const std::string& text, const Sealer& sealer) {
  nlohmann::json j = parse_bounded_json(text).value;
  auto str = [&j](const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  StoreIdentity ident{str("id"), false, str("replaces")};
  const SealCheck verdict =
      hex_id(ident.id) ? sealer.check_store_id(ident.id + "\n" + ident.replaces, str("seal")) : SealCheck::bad;
  if (verdict == SealCheck::ok || verdict == SealCheck::no_key) return ident;
  return seal_error(sealer, verdict, fmt::format("the store identity '{}'", file.string()),
                    "kaicoder acts on no record of this store while it does not verify: if nothing in the state dir "
                    "is to be kept, move the state dir aside and kaicoder makes a new store");
}
}  // namespace

Result<StoreIdentity> store_identity(const fs::path& state_dir, const Sealer& sealer) {
  // Without the key nothing is sealed or checked (the agent's side of two-user mode).
  if (!sealer.usable()) return StoreIdentity{};
  const fs::path file = state_dir / k_identity_file;
  auto text = read_owned(file);
  if (text) return parse_identity(file, *text, sealer);
  std::error_code ec;
  struct stat st {};
  if (::lstat(file.c_str(), &st) == 0) return text.error();  // there, but not readable as kaicoder's
  // A store made before stores had an identity keeps the root alone.
  if (fs::exists(state_dir / "staging", ec) || fs::exists(state_dir / "journal", ec)) return StoreIdentity{};
  auto random = random_key();
  if (!random) return random.error();
  std::string id;
  for (size_t i = 0; i < 16; ++i) id += fmt::format("{:02x}", random->bytes[i]);
  return StoreIdentity{id, true, ""};
}

Status Store::write_identity() const {
  const fs::path file = m_dir / k_identity_file;
  const std::string& id = m_seal.store_id();
  if (auto text = read_owned(file)) {
    // Another command made the store meanwhile, with an identity of its own.
    auto other = parse_identity(file, *text, m_seal);
    if (!other) return other.error();
    if (other->id != id)
      return make_error(Errc::conflict, "another kaicoder command made the store at the same moment",
                        "run the command again");
    m_fresh = false;
    return ok_status();
  }
  auto before = m_seal.note_store(id);
  if (!before) return before.error();
  auto mac = m_seal.seal_store_id(id + "\n" + *before);
  if (!mac) return mac.error();
  nlohmann::json j = {{"id", id}, {"replaces", *before}, {"seal", *mac}};
  auto w = write_file_exclusive(file, j.dump(2) + "\n", 0600);
  if (!w && w.error().code == Errc::conflict) return write_identity();  // made meanwhile: compare
  if (!w) return w.error();
  m_fresh = false;
  m_replaced = *before;
  return ok_status();
}

Status Store::ensure() const {
  KAI_TRY(refuse_symlinked_folders(m_dir));
  if (m_fresh && !m_seal.store_id().empty()) {
    KAI_TRY(make_dirs(m_dir, 0700));
    KAI_TRY(write_identity());
  }
  // Two-user mode: the agent user passes through to the spool and its
  // tickets (lib/store/spool), and reads nothing else here.
  KAI_TRY(make_dirs(m_dir, has_spool(m_dir) ? 0711 : 0700));
  KAI_TRY(make_dirs(m_dir / "staging", 0700));
  KAI_TRY(make_dirs(m_dir / "journal", 0700));
  return ok_status();
}

Result<fs::path> Store::make_scratch(const std::string& prefix) const {
  KAI_TRY(ensure());
  KAI_TRY(make_dirs(m_dir / "scratch", 0700));
  std::string templ = (m_dir / "scratch" / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(templ.data()))
    return make_error(Errc::io, fmt::format("cannot create '{}': {}", templ, errno_text(errno)));
  return fs::path(templ);
}

bool Store::exists() const {
  std::error_code ec;
  return fs::is_directory(m_dir / "staging", ec);
}

fs::path Store::staging_dir(int id) const { return m_dir / "staging" / std::to_string(id); }

namespace {
// Archived proposals are kept by blocks of ids, so that an id names its
// bucket: finding one is a stat, never a walk of the archive.
constexpr int k_bucket_size = 1000;

fs::path bucket_of(const fs::path& state, int id) { return state / "archive" / std::to_string(id / k_bucket_size); }

bool plain_dir(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The numbered entries of `dir` (proposal folders, or buckets), ascending.
std::vector<int> numbered(const fs::path& dir) {
  std::vector<int> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return out;
  for (const auto& e : it) {
    // Named as kaicoder names them: "010" is no proposal's folder.
    if (auto id = parse_proposal_id(e.path().filename().string()); id && *id >= 0) out.push_back(*id);
  }
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

fs::path Store::archive_dir(int id) const { return bucket_of(m_dir, id) / std::to_string(id); }

fs::path Store::folder(int id) const {
  fs::path hot = staging_dir(id);
  if (plain_dir(hot)) return hot;
  fs::path cold = archive_dir(id);
  return plain_dir(cold) ? cold : hot;
}

Result<FileLock> Store::lock() const {
  KAI_TRY(m_seal.usable());
  KAI_TRY(ensure());
  return FileLock::acquire(m_dir / "lock");
}

Result<int> Store::next_id() const {
  fs::path counter = m_dir / "staging" / "next-id";
  int next = 1;
  if (auto text = read_owned(counter)) {
    auto r = std::from_chars(text->data(), text->data() + text->size(), next);
    if (r.ec != std::errc{} || next < 1) next = 1;
  }
  // A counter lost or rolled back by hand must never hand out an id twice:
  // the live index remembers the next id too, and a folder already there
  // is stepped over (one stat, not a listing of the store).
  if (auto x = read_live()) next = std::max(next, x->next);
  std::error_code ec;
  while (fs::exists(fs::symlink_status(staging_dir(next), ec)) || fs::exists(fs::symlink_status(archive_dir(next), ec)))
    ++next;
  KAI_TRY(write_file_atomic(counter, fmt::format("{}\n", next + 1), 0600));
  return next;
}

Status Store::create(Proposal& p) const {
  fs::path dir = staging_dir(p.id);
  // The index names the id before its folder exists: a create cut short
  // leaves an entry with no folder (dropped at the next refresh), never a
  // live proposal the index does not name.
  {
    // Named settled, with what its record will say: a create cut short
    // leaves no record, which the next sweep finds (settle_created).
    auto x = current_live();
    if (!x) return x.error();
    const int next = std::max((*x)->next, p.id + 1), swept = std::max((*x)->swept, m_swept_below);
    x->reset();
    KAI_TRY(change_live({put_change(live_entry(p), false), marks_change(next, swept)}));
  }
  fault_point("after-live-index");
  std::error_code ec;
  if (!fs::create_directory(dir, ec) || ec)
    return make_error(Errc::io, fmt::format("cannot create staging folder '{}': {}", dir.string(),
                                            ec ? ec.message() : "it already exists"));
  // A write that fails (a full disk) takes the folder with it: no debris.
  Status s = fill(p, dir);
  if (!s) {
    fs::remove_all(dir, ec);
    return s;
  }
  return ok_status();
}

Status Store::fill(Proposal& p, const fs::path& dir) const {
  for (const char* name : k_payloads) KAI_TRY(write_file_exclusive(dir / name, *payload(p, name), 0600));
  // A command is a payload too: it runs exactly as staged, so it is kept
  // raw beside the metadata (which is redacted), never inside it.
  if (p.kind == Kind::run) {
    nlohmann::json cmd = {{"argv", p.argv}, {"shell", p.shell}};
    KAI_TRY(write_file_exclusive(dir / "command", cmd.dump(), 0600));
  }
  // A changeset's resulting bytes, one file after the other in the order of
  // its changes (the record holds each one's size): one payload file, one
  // sync, however many files it changes.
  if (p.kind == Kind::changeset) {
    std::string all;
    size_t size = 0;
    for (const Change& c : p.changes) size += c.after.size();
    all.reserve(size);
    for (const Change& c : p.changes) all += c.after;
    KAI_TRY(write_file_exclusive(dir / "changes", all, 0600));
  }
  // Test builds (lib/util/fault): killed, or the record's write failing as
  // on a full disk, between the payloads and the record.
  fault_point("after-payloads");
  if (int err = fault_errno("stage-write"))
    return make_error(Errc::io, fmt::format("cannot write the record of proposal {}: {}", p.id, errno_text(err)));
  return save(p);
}

namespace {
// A proposal's seal covers the record minus its seal, in one canonical form
// (compact; nlohmann sorts keys). meta.json holds the record with its seal
// in that form too, on one line (older stores' indented records read the
// same). The record holds the payloads' digest
// ("payload_digest"), so the payloads are bound too, and a payload changed
// alone can be told from a record kaicoder did not write.
}  // namespace

Result<std::string> Store::sealed_record(Proposal& p, std::string* compact) const {
  nlohmann::json j = to_json(p);
  // A record loaded without its payloads keeps the digest it was sealed with.
  // Kept in `p` too: loaded_digest(p) is then the digest of what was sealed.
  if (p.payloads_loaded) p.sealed_payload_digest = digest(p);
  j["payload_digest"] = p.sealed_payload_digest;
  auto mac = m_seal.seal("proposal", std::to_string(p.id), j.dump());
  if (!mac) return mac.error();
  j["seal"] = *mac;
  // Written in the same compact form, one line: dumping a changeset's
  // record (hundreds of KB) a third time, indented, cost as much as the
  // seal.
  std::string text = j.dump();
  if (compact) *compact = text;
  return text + "\n";
}

Status Store::save(Proposal& p) const {
  const fs::path dir = folder(p.id);
  // An archived record changing (an applied proposal rolled back): its
  // summary line goes first and comes back after, so a crash between
  // leaves the line missing (the listing reads the record), never stale.
  const bool archived = dir != staging_dir(p.id);
  std::string compact;  // the record as its summary line copies it
  auto text = sealed_record(p, archived ? &compact : nullptr);
  if (!text) return text.error();
  if (archived) KAI_TRY(put_summary_line(p.id, nullptr, nullptr));
  // What the live index says of it is marked unsettled first when it is
  // to change, and settled after: a crash between leaves it read from the
  // record, never believed stale.
  KAI_TRY(tell_live({&p}, false));
  KAI_TRY(write_file_atomic(dir / "meta.json", *text, 0600));
  p.sealed = SealCheck::ok;
  (void)mirror_status(m_dir, p.id, dir, *text, m_approval_timeout);  // the agent's view; the record above is what counts
  fault_point("after-record");
  if (archived) KAI_TRY(put_summary_line(p.id, &p, &compact));
  return tell_live({&p}, true);
}

Status Store::save_all(std::vector<Proposal>& ps) const {
  // The sweep saves live proposals, which are never archived; one that is
  // goes through save() and its summary line.
  if (std::any_of(ps.begin(), ps.end(), [this](const Proposal& p) { return folder(p.id) != staging_dir(p.id); })) {
    for (auto& p : ps) KAI_TRY(save(p));
    return ok_status();
  }
  std::vector<std::pair<fs::path, std::string>> files;
  files.reserve(ps.size());
  std::vector<const Proposal*> saved;
  for (auto& p : ps) {
    auto text = sealed_record(p);
    if (!text) return text.error();
    files.emplace_back(staging_dir(p.id) / "meta.json", std::move(*text));
    saved.push_back(&p);
  }
  KAI_TRY(tell_live(saved, false));  // as save()
  KAI_TRY(write_files_atomic(files, 0600));
  for (auto& p : ps) p.sealed = SealCheck::ok;
  for (size_t i = 0; i < ps.size(); ++i) (void)mirror_status(m_dir, ps[i].id, staging_dir(ps[i].id), files[i].second, m_approval_timeout);
  fault_point("after-record");
  return tell_live(saved, true);
}

// What one meta.json's bytes parse to.
struct LoadedRecord {
  Proposal meta;       // no payloads, its verdict and sealed digest set
  std::string record;  // the compact record with its seal, when a caller asked for it
};
struct Store::LoadCache : LastRead<int, LoadedRecord> {};

Result<Proposal> Store::load(int id, Payloads payloads) const { return load(id, payloads, nullptr); }

Result<Proposal> Store::load(int id, Payloads payloads, std::string* record) const {
  fs::path dir = folder(id);
  std::error_code ec;
  if (id < 1 || !fs::is_directory(dir, ec))
    return make_error(Errc::not_found, fmt::format("no proposal {}", id), "see 'kaicoder list' for the ids there are");
  return load_in(dir, id, payloads, record);
}

Result<Proposal> Store::load_in(const fs::path& dir, int id, Payloads payloads, std::string* record) const {
  std::error_code ec;
  auto text = read_owned(dir / "meta.json");
  if (!text)
    return make_error(Errc::io, fmt::format("proposal {} has no readable record: {}", id, text.error().message));
  auto p = parse_record(id, std::move(*text), record);
  if (!p) return p.error();
  for (const char* name : k_payloads) {
    if (payloads == Payloads::none) {
      if (!fs::exists(fs::symlink_status(dir / name, ec)))
        return make_error(Errc::io, fmt::format("proposal {} is missing its '{}' payload", id, name));
      continue;
    }
    auto bytes = read_owned(dir / name);
    if (!bytes) return make_error(Errc::io, fmt::format("proposal {} is missing its '{}' payload", id, name));
    *payload(*p, name) = std::move(*bytes);
  }
  if (p->kind == Kind::run) {
    auto cmd_text = read_owned(dir / "command");
    nlohmann::json cmd = cmd_text ? parse_bounded_json(*cmd_text).value : nlohmann::json();
    if (!cmd.is_object()) return make_error(Errc::io, fmt::format("proposal {} is missing its command", id));
    p->argv = cmd.value("argv", std::vector<std::string>{});
    p->shell = cmd.value("shell", "");
  }
  bool split_failed = false;
  if (p->kind == Kind::changeset) {
    if (payloads == Payloads::none) {
      if (!fs::exists(fs::symlink_status(dir / "changes", ec)))
        return make_error(Errc::io, fmt::format("proposal {} is missing its 'changes' payload", id));
    } else {
      auto all = read_owned(dir / "changes");
      if (!all) return make_error(Errc::io, fmt::format("proposal {} is missing its 'changes' payload", id));
      size_t at = 0;
      for (Change& c : p->changes) {
        const size_t n = c.after.size();
        if (at + n > all->size()) {
          split_failed = true;
          break;
        }
        c.after.assign(*all, at, n);
        at += n;
      }
      split_failed = split_failed || at != all->size();
    }
  }
  p->payloads_loaded = payloads == Payloads::all;
  p->payload_changed =
      p->sealed == SealCheck::ok && p->payloads_loaded && (split_failed || p->sealed_payload_digest != digest(*p));
  return p;
}

Result<Proposal> Store::parse_record(int id, std::string text, std::string* record) const {
  LoadCache& cache = *m_load_cache;
  if (auto hit = cache.find(id, text); hit && (!record || !hit->record.empty())) {
    if (record) *record = std::move(hit->record);
    return std::move(hit->meta);
  }
  nlohmann::json j = parse_bounded_json(text).value;
  if (j.is_discarded())
    return make_error(Errc::io,
                      fmt::format("proposal {} has a corrupt record '{}'", id, (folder(id) / "meta.json").string()));
  if (record) *record = j.dump();
  std::string mac;
  if (j.is_object() && j.contains("seal") && j["seal"].is_string()) mac = j["seal"].get<std::string>();
  if (j.is_object()) j.erase("seal");
  auto p = from_json(j);
  if (!p) return make_error(Errc::io, fmt::format("proposal {}: {}", id, p.error().message));
  // The folder names the id: a record copied from another folder keeps its
  // own id inside, and its seal is bound to that one.
  p->sealed = p->id != id ? SealCheck::bad : m_seal.check("proposal", std::to_string(id), j.dump(), mac);
  p->sealed_payload_digest = j.value("payload_digest", "");
  p->id = id;
  cache.keep(id, std::move(text), LoadedRecord{*p, record ? *record : std::string()});
  return p;
}

std::vector<int> Store::hot_ids() const {
  std::vector<int> out = numbered(m_dir / "staging");
  out.erase(std::remove(out.begin(), out.end(), 0), out.end());
  return out;
}

Result<std::vector<int>> Store::ids() const {
  std::vector<int> out = hot_ids();
  for (int bucket : numbered(m_dir / "archive"))
    for (int id : numbered(m_dir / "archive" / std::to_string(bucket)))
      if (id > 0 && id / k_bucket_size == bucket) out.push_back(id);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {
// held: a run's effects still wait for a person (lib/gate/run_effects).
bool live_state(State s) { return s == State::pending || s == State::approved || s == State::held; }
// The index's seal kinds: "-3" since changes are appended to it, each line
// sealed and chained to the one before (an index of an older format, a
// whole file under one seal, does not verify: made again, never misread).
constexpr const char* k_live_kind = "live-index-3";
constexpr const char* k_live_change_kind = "live-index-3-change";
constexpr const char* k_live_id = "live";
constexpr std::string_view k_live_head = "kaicoder-live-3 ";
// A key is a candidate filter (the twin's record is compared in full), so
// 64 bits of it are plenty and keep a line short.
constexpr size_t k_key_chars = 16;

// A line of the index: id, state ("?": unreadable), mark ("=" settled,
// "?" unsettled), clock and time ("r<secs>", "a<secs>" or "-"), key, agent.
void put_line(std::string& out, const Store::LiveEntry& e, bool unsettled) {
  out += std::to_string(e.id);
  out += '\t';
  out += e.readable ? std::string(to_string(e.state)) : std::string("?");
  out += unsettled ? "\t?\t" : "\t=\t";
  if (e.clock == '-')
    out += '-';
  else
    out += fmt::format("{}{}", e.clock, e.at);
  listing::put_field(out, e.key);
  listing::put_field(out, e.agent);
  out += '\n';
}

std::optional<std::pair<Store::LiveEntry, bool>> parse_line(std::string_view l) {
  std::string_view f[6];
  size_t n = 0;
  while (n < 6) {
    const size_t tab = l.find('\t');
    f[n++] = l.substr(0, tab);
    if (tab == std::string_view::npos) break;
    l.remove_prefix(tab + 1);
  }
  if (n != 6 || l.find('\t') != std::string_view::npos) return std::nullopt;
  Store::LiveEntry e;
  auto id = parse_number<int>(f[0]);
  if (!id || *id < 1) return std::nullopt;
  e.id = *id;
  if (f[1] == "?") {
    e.readable = false;
  } else {
    auto st = parse_state(f[1]);
    if (!st || !live_state(*st)) return std::nullopt;
    e.state = *st;
  }
  if (f[2] != "=" && f[2] != "?") return std::nullopt;
  if (f[3] == "-") {
    e.clock = '-';
  } else {
    if (f[3].empty() || (f[3][0] != 'r' && f[3][0] != 'a')) return std::nullopt;
    auto at = parse_number<int64_t>(f[3].substr(1));
    if (!at) return std::nullopt;
    e.clock = f[3][0];
    e.at = *at;
  }
  auto key = listing::unescape_field(f[4]);
  auto agent = listing::unescape_field(f[5]);
  if (!key || !agent) return std::nullopt;
  e.key = std::move(*key);
  e.agent = std::move(*agent);
  return std::make_pair(std::move(e), f[2] == "?");
}

// "<id> <id> …", ascending, each at least 1 ("" for none).
std::optional<std::vector<int>> parse_ids(std::string_view text) {
  std::vector<int> out;
  while (!text.empty()) {
    const size_t sp = text.find(' ');
    auto id = parse_number<int>(text.substr(0, sp));
    if (!id || *id < 1 || (!out.empty() && out.back() >= *id)) return std::nullopt;
    out.push_back(*id);
    text = sp == std::string_view::npos ? std::string_view() : text.substr(sp + 1);
    if (sp != std::string_view::npos && text.empty()) return std::nullopt;
  }
  return out;
}

Store::LiveEntry unreadable_entry(int id) {
  Store::LiveEntry e;
  e.id = id;
  e.readable = false;
  return e;
}
}  // namespace

std::string live_key(const Proposal& p, const std::string& payload_digest) {
  // What pending_twin compares besides the agent and the state: kind, path,
  // base (existence and blob) and the payloads' digest, length-prefixed.
  std::string s;
  for (std::string_view v : {to_string(p.kind), std::string_view(p.path), std::string_view(p.base.exists ? "1" : "0"),
                             std::string_view(p.base.blob), std::string_view(payload_digest)})
    s += fmt::format("{}:", v.size()).append(v).append("\n");
  return blob_id(s).substr(0, k_key_chars);
}

Store::LiveEntry live_entry(const Proposal& p) {
  Store::LiveEntry e;
  e.id = p.id;
  e.state = p.state;
  e.agent = p.agent;
  e.key = live_key(p, p.payloads_loaded ? digest(p) : p.sealed_payload_digest);
  // The time past_timeout reads: a team proposal of another clone ends at
  // its origin's time; held effects wait from when they were held.
  TimePoint t;
  if (p.team.remote()) {
    if (parse_iso_utc(p.team.expires, t)) e.clock = 'a';
  } else if (parse_iso_utc(p.state == State::held ? p.held_since : p.created, t)) {
    e.clock = 'r';
  }
  if (e.clock != '-') e.at = unix_seconds(t);
  return e;
}

namespace store_detail {
// What says a file is the one read before: its first line (the index's
// head, seal included; up to 256 bytes) and its stat data. Opened as
// read_owned opens: a regular file, never through a symlink. Empty when it
// cannot be read.
struct FileMark {
  std::string head;
  dev_t dev = 0;
  StatKey key;
  bool operator==(const FileMark&) const = default;
};

FileMark mark_of(const fs::path& file) {
  FileMark m;
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return m;
  char buf[256];
  struct stat st {};
  ssize_t n = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ::read(fd, buf, sizeof buf) : -1;
  ::close(fd);
  if (n <= 0) return m;
  std::string_view s(buf, static_cast<size_t>(n));
  const size_t nl = s.find('\n');
  if (nl == std::string_view::npos) return m;
  m.head = std::string(s.substr(0, nl + 1));
  m.dev = st.st_dev;
  m.key = key_of(st);
  return m;
}
}  // namespace store_detail
using store_detail::FileMark;
using store_detail::mark_of;

struct Store::LiveCache {
  std::mutex mutex;
  FileMark mark;  // the file as read or written last: its head (with the seal) and stat data
  std::shared_ptr<LiveIndex> index;  // null: nothing kept
  std::string tail;     // the seal of its last line: what the next appended line is chained to
  size_t appended = 0;  // lines appended after its snapshot
};

Store::Store(fs::path state_dir)
    : m_dir(std::move(state_dir)), m_live_cache(std::make_shared<LiveCache>()),
      m_load_cache(std::make_shared<LoadCache>()) {}

void Store::use(Sealer s) {
  m_seal = std::move(s);
  // Verdicts were another sealer's: the record and the index are checked again.
  m_load_cache = std::make_shared<LoadCache>();
  m_live_cache = std::make_shared<LiveCache>();
}

// One change as its line's text (before its seal).
std::string Store::change_text(const LiveChange& c) {
  std::string out;
  if (c.what == LiveChange::What::put) {
    out = "put\t";
    put_line(out, c.named.entry, c.named.unsettled);
    out.pop_back();  // its newline
  } else if (c.what == LiveChange::What::drop) {
    out = fmt::format("drop\t{}", c.id);
  } else if (c.what == LiveChange::What::archived) {
    out = fmt::format("archived\t{}", fmt::join(c.ids, " "));
  } else {
    out = fmt::format("marks\t{}\t{}", c.next, c.swept);
  }
  return out;
}

void Store::apply_change(LiveIndex& x, const LiveChange& c) {
  auto at = std::lower_bound(x.named.begin(), x.named.end(), c.what == LiveChange::What::put ? c.named.entry.id : c.id,
                             [](const Named& n, int id) { return n.entry.id < id; });
  const int id = c.what == LiveChange::What::put ? c.named.entry.id : c.id;
  const bool there = at != x.named.end() && at->entry.id == id;
  switch (c.what) {
    case LiveChange::What::put:
      if (there)
        *at = c.named;
      else
        x.named.insert(at, c.named);
      break;
    case LiveChange::What::drop: {
      if (there) x.named.erase(at);
      auto d = std::lower_bound(x.due.begin(), x.due.end(), c.id);
      if (d == x.due.end() || *d != c.id) x.due.insert(d, c.id);
      break;
    }
    case LiveChange::What::archived: {
      std::vector<int> left;
      left.reserve(x.due.size());
      std::set_difference(x.due.begin(), x.due.end(), c.ids.begin(), c.ids.end(), std::back_inserter(left));
      x.due = std::move(left);
      break;
    }
    case LiveChange::What::marks:
      x.next = c.next;
      x.swept = c.swept;
      break;
  }
}

std::optional<Store::LiveChange> Store::parse_change(std::string_view text) {
  LiveChange c;
  if (text.starts_with("put\t")) {
    auto e = parse_line(text.substr(4));
    if (!e) return std::nullopt;
    c.what = LiveChange::What::put;
    c.named = {std::move(e->first), e->second};
    return c;
  }
  if (text.starts_with("drop\t")) {
    auto id = parse_number<int>(text.substr(5));
    if (!id || *id < 1) return std::nullopt;
    c.what = LiveChange::What::drop;
    c.id = *id;
    return c;
  }
  if (text.starts_with("archived\t")) {
    c.what = LiveChange::What::archived;
    auto ids = parse_ids(text.substr(9));
    if (!ids) return std::nullopt;
    c.ids = std::move(*ids);
    return c;
  }
  if (text.starts_with("marks\t")) {
    text.remove_prefix(6);
    const size_t tab = text.find('\t');
    if (tab == std::string_view::npos) return std::nullopt;
    auto next = parse_number<int>(text.substr(0, tab));
    auto swept = parse_number<int>(text.substr(tab + 1));
    if (!next || !swept || *next < 1) return std::nullopt;
    c.what = LiveChange::What::marks;
    c.next = *next;
    c.swept = *swept;
    return c;
  }
  return std::nullopt;
}

// The file: "kaicoder-live-3 <snapshot bytes> <seal>\n", the snapshot
// ("next N swept S\n", then one line per entry, ascending) under the head's
// seal, then the changes appended since, each "<change>\t<seal>\n" sealed
// (kind k_live_change_kind) with the seal of the line before it (the
// head's, for the first) as its identity: a line dropped, reordered,
// replayed from elsewhere in the file or from another store, forged or
// torn breaks the chain from there on, and the whole file is not believed.
Store::LiveRef Store::load_live() const {
  const fs::path file = m_dir / "staging" / "live";
  {
    // The index this process read or wrote last, while the file is still
    // the one it read or wrote: a change by any other command changes its
    // size, times or inode (a forged file that copies them is never
    // believed either way: what is kept is what verified).
    std::lock_guard<std::mutex> hold(m_live_cache->mutex);
    if (m_live_cache->index && !m_live_cache->mark.head.empty() && mark_of(file) == m_live_cache->mark)
      return m_live_cache->index;
  }
  const FileMark mark = mark_of(file);
  auto text = read_owned(file);
  if (!text || !text->starts_with(k_live_head)) return nullptr;
  const size_t nl = text->find('\n');
  if (nl == std::string::npos) return nullptr;
  const std::string_view head = std::string_view(*text).substr(0, nl + 1);
  std::string_view fields = head.substr(k_live_head.size(), head.size() - k_live_head.size() - 1);
  const size_t sp = fields.find(' ');
  if (sp == std::string_view::npos) return nullptr;
  auto size = parse_number<size_t>(fields.substr(0, sp));
  const std::string_view mac = fields.substr(sp + 1);
  if (!size || *size > text->size() - nl - 1) return nullptr;
  std::string_view body = std::string_view(*text).substr(nl + 1, *size);
  std::string_view changes = std::string_view(*text).substr(nl + 1 + *size);
  if (m_seal.check(k_live_kind, k_live_id, body, mac) != SealCheck::ok) return nullptr;
  // "next N swept S", then the entries, ascending.
  const size_t first = body.find('\n');
  if (first == std::string_view::npos) return nullptr;
  std::string_view top = body.substr(0, first);
  body.remove_prefix(first + 1);
  auto got = std::make_shared<LiveIndex>();
  const size_t sw = top.find(" swept ");
  if (!top.starts_with("next ") || sw == std::string_view::npos) return nullptr;
  auto next = parse_number<int>(top.substr(5, sw - 5));
  auto swept = parse_number<int>(top.substr(sw + 7));
  if (!next || !swept || *next < 1) return nullptr;
  got->next = *next;
  got->swept = *swept;
  // "due <id> …": left the live set, maybe not archived yet.
  const size_t due_end = body.find('\n');
  if (due_end == std::string_view::npos || !body.starts_with("due")) return nullptr;
  const std::string_view due = body.substr(0, due_end);
  auto due_ids = due.size() == 3 ? std::optional<std::vector<int>>(std::vector<int>{})
                                 : due[3] == ' ' ? parse_ids(due.substr(4)) : std::nullopt;
  if (!due_ids) return nullptr;
  got->due = std::move(*due_ids);
  body.remove_prefix(due_end + 1);
  while (!body.empty()) {
    const size_t end = body.find('\n');
    if (end == std::string_view::npos) return nullptr;
    auto e = parse_line(body.substr(0, end));
    body.remove_prefix(end + 1);
    if (!e || (!got->named.empty() && got->named.back().entry.id >= e->first.id)) return nullptr;
    got->named.push_back({std::move(e->first), e->second});
  }
  // The appended changes, each chained to the seal before it.
  std::string tail(mac);
  size_t appended = 0;
  while (!changes.empty()) {
    const size_t end = changes.find('\n');
    if (end == std::string_view::npos) return nullptr;  // torn: cut short mid-line
    const std::string_view line = changes.substr(0, end);
    changes.remove_prefix(end + 1);
    const size_t tab = line.rfind('\t');
    if (tab == std::string_view::npos) return nullptr;
    const std::string_view what = line.substr(0, tab), seal = line.substr(tab + 1);
    if (m_seal.check(k_live_change_kind, tail, what, seal) != SealCheck::ok) return nullptr;
    auto c = parse_change(what);
    if (!c) return nullptr;
    apply_change(*got, *c);
    tail.assign(seal);
    ++appended;
  }
  // Kept only when the file read is the one marked (no write between).
  std::lock_guard<std::mutex> hold(m_live_cache->mutex);
  if (mark.head == head && mark_of(file) == mark) {
    m_live_cache->mark = mark;
    m_live_cache->index = got;
    m_live_cache->tail = std::move(tail);
    m_live_cache->appended = appended;
  } else {
    m_live_cache->mark = FileMark{};
    m_live_cache->index.reset();
  }
  return got;
}

Store::LiveRef Store::read_live() const {
  LiveRef x = load_live();
  if (!x) return nullptr;
  // Older than the store: a proposal was made after this index was written
  // (a sealed copy put back, or its last lines cut off), so it may not name
  // every live one.
  std::error_code ec;
  if (fs::exists(fs::symlink_status(staging_dir(x->next), ec)) || fs::exists(fs::symlink_status(archive_dir(x->next), ec)))
    return nullptr;
  return x;
}

Store::LiveIndex Store::scan_live() const {
  LiveIndex x;
  auto all = ids();
  const std::vector<int> hot = hot_ids();
  for (int id : all ? *all : std::vector<int>{}) {
    x.next = std::max(x.next, id + 1);
    auto p = load(id, Payloads::none);
    // An unreadable record stays named, so listings keep saying it is there.
    if (!p)
      x.named.push_back({unreadable_entry(id), false});
    else if (live_state(p->state))
      x.named.push_back({live_entry(*p), false});
    else if (std::binary_search(hot.begin(), hot.end(), id))
      x.due.push_back(id);  // decided, still in staging/: the archiver's to move
  }
  return x;
}

Result<Store::LiveRef> Store::current_live() const {
  if (auto x = read_live()) return x;
  KAI_TRY(write_live(scan_live()));
  std::lock_guard<std::mutex> hold(m_live_cache->mutex);
  if (m_live_cache->index) return LiveRef(m_live_cache->index);
  return make_error(Errc::io, "the live index changed while it was written");
}

Status Store::write_live(LiveIndex x) const {
  x.swept = std::max(x.swept, m_swept_below);
  std::string body = fmt::format("next {} swept {}\ndue{}{}\n", x.next, x.swept, x.due.empty() ? "" : " ",
                                 fmt::join(x.due, " "));
  body.reserve(body.size() + x.named.size() * 64);
  for (const Named& n : x.named) put_line(body, n.entry, n.unsettled);
  auto mac = m_seal.seal(k_live_kind, k_live_id, body);
  if (!mac) return mac.error();
  const std::string head = fmt::format("{}{} {}\n", k_live_head, body.size(), *mac);
  KAI_TRY(write_file_atomic(m_dir / "staging" / "live", head + body, 0600));
  std::lock_guard<std::mutex> hold(m_live_cache->mutex);
  m_live_cache->mark = mark_of(m_dir / "staging" / "live");
  m_live_cache->index = std::make_shared<LiveIndex>(std::move(x));
  m_live_cache->tail = *mac;
  m_live_cache->appended = 0;
  if (m_live_cache->mark.head != head) {  // changed already: read it
    m_live_cache->mark = FileMark{};
    m_live_cache->index.reset();
  }
  return ok_status();
}

Status Store::change_live(const std::vector<LiveChange>& changes) const {
  if (changes.empty()) return ok_status();
  auto current = current_live();
  if (!current) return current.error();
  const fs::path file = m_dir / "staging" / "live";
  std::unique_lock<std::mutex> hold(m_live_cache->mutex);
  // Appended to the index this process holds, when the file is still that
  // one and its lines have not outgrown its entries (then written whole:
  // what a reader parses stays within a few times the live set).
  const bool kept = m_live_cache->index && m_live_cache->index == *current;
  const size_t room = 2 * (*current)->named.size() + 64;
  if (!kept || m_live_cache->appended + changes.size() > room) {
    LiveIndex x = **current;
    hold.unlock();
    current->reset();
    for (const LiveChange& c : changes) apply_change(x, c);
    return write_live(std::move(x));
  }
  std::string lines;
  std::string tail = m_live_cache->tail;
  for (const LiveChange& c : changes) {
    std::string what = change_text(c);
    auto mac = m_seal.seal(k_live_change_kind, tail, what);
    if (!mac) return mac.error();
    lines += what;
    lines += '\t';
    lines += *mac;
    lines += '\n';
    tail = std::move(*mac);
  }
  // Only onto the file this process read or wrote last: a plain file with
  // one link, never through a symlink, its stat data as marked.
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  const FileMark& m = m_live_cache->mark;
  const bool same = fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
                    st.st_dev == m.dev && static_cast<uint64_t>(st.st_ino) == m.key.ino &&
                    static_cast<uint64_t>(st.st_size) == m.key.size;
  if (!same) {
    if (fd >= 0) ::close(fd);
    LiveIndex x = **current;
    m_live_cache->index.reset();
    hold.unlock();
    current->reset();
    for (const LiveChange& c : changes) apply_change(x, c);
    return write_live(std::move(x));
  }
  const bool written = write_all(fd, lines) && ::fdatasync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!written) {
    m_live_cache->index.reset();
    m_live_cache->mark = FileMark{};
    return make_error(Errc::io, fmt::format("cannot write '{}': {}", file.string(), errno_text(err)));
  }
  // The kept index changes in place when no one else holds it (another
  // thread may be reading it: MCP calls run side by side), else a copy.
  current->reset();
  if (m_live_cache->index.use_count() > 1) m_live_cache->index = std::make_shared<LiveIndex>(*m_live_cache->index);
  for (const LiveChange& c : changes) apply_change(*m_live_cache->index, c);
  m_live_cache->tail = std::move(tail);
  m_live_cache->appended += changes.size();
  m_live_cache->mark = mark_of(file);
  if (m_live_cache->mark.head.empty()) m_live_cache->index.reset();
  return ok_status();
}

std::optional<Store::LiveEntry> Store::settle(const Named& n) const {
  if (!n.unsettled) return n.entry;
  auto p = load(n.entry.id, Payloads::none);
  if (!p && p.error().code == Errc::not_found) return std::nullopt;
  if (!p) return unreadable_entry(n.entry.id);
  if (!live_state(p->state)) return std::nullopt;
  // A record that does not verify is not believed over the index's word.
  return p->sealed == SealCheck::ok ? live_entry(*p) : n.entry;
}

Store::LiveChange Store::put_change(LiveEntry e, bool unsettled) {
  LiveChange c;
  c.what = LiveChange::What::put;
  c.named.entry = std::move(e);
  c.named.unsettled = unsettled;
  return c;
}

Store::LiveChange Store::drop_change(int id) {
  LiveChange c;
  c.what = LiveChange::What::drop;
  c.id = id;
  return c;
}

Store::LiveChange Store::marks_change(int next, int swept) {
  LiveChange c;
  c.what = LiveChange::What::marks;
  c.next = next;
  c.swept = swept;
  return c;
}

Status Store::tell_live(const std::vector<const Proposal*>& ps, bool settled) const {
  std::vector<LiveChange> changes;
  {
    auto x = current_live();
    if (!x) return x.error();
    const LiveIndex& in = **x;
    for (const Proposal* p : ps) {
      auto at = std::lower_bound(in.named.begin(), in.named.end(), p->id,
                                 [](const Named& n, int id) { return n.entry.id < id; });
      const bool there = at != in.named.end() && at->entry.id == p->id;
      const bool live = live_state(p->state);
      if (!settled) {
        // Before the record: its entry may change, so it is read from the
        // record until it is settled (a crash between leaves it so).
        if (there) {
          if (!at->unsettled && (!live || !(at->entry == live_entry(*p)))) {
            changes.push_back(put_change(at->entry, true));
          }
        } else if (live) {
          changes.push_back(put_change(live_entry(*p), true));
        }
        continue;
      }
      // Decided: due for the archiver (also when the index no longer named
      // it, while its folder is in staging/).
      if (!live && (there || (!std::binary_search(in.due.begin(), in.due.end(), p->id) && plain_dir(staging_dir(p->id)))))
        changes.push_back(drop_change(p->id));
      if (live) {
        Named want{live_entry(*p), false};
        if (!there || !(*at == want)) changes.push_back(put_change(std::move(want.entry), false));
      }
    }
  }
  return change_live(changes);
}

std::vector<Store::LiveEntry> Store::LiveView::entries() const {
  std::vector<LiveEntry> out;
  each([&out](const LiveEntry& e) {
    out.push_back(e);
    return true;
  });
  std::sort(out.begin(), out.end(), [](const LiveEntry& a, const LiveEntry& b) { return a.id < b.id; });
  return out;
}

Result<Store::LiveView> Store::live_index(Refresh refresh) const {
  LiveView out;
  LiveRef x = read_live();
  std::optional<LiveIndex> scanned;
  if (!x) {
    scanned = scan_live();
    out.rebuilt = true;
  }
  const LiveIndex& in = x ? *x : *scanned;
  std::vector<LiveChange> changes;
  for (const Named& n : in.named) {
    if (!n.unsettled) continue;
    std::optional<LiveEntry> e = settle(n);
    if (!e) {
      changes.push_back(drop_change(n.entry.id));
      continue;
    }
    changes.push_back(put_change(*e, false));
    out.extra.push_back(std::move(*e));
  }
  if (refresh == Refresh::write) {
    if (out.rebuilt) {
      LiveIndex kept = std::move(*scanned);
      for (const LiveChange& c : changes) apply_change(kept, c);
      KAI_TRY(write_live(std::move(kept)));
      // As written: every entry settled.
      auto now = current_live();
      if (!now) return now.error();
      out.index = std::move(*now);
      out.extra.clear();
      return out;
    }
    x.reset();
    KAI_TRY(change_live(changes));
    // The kept index, its entries settled now (extra read from it).
    auto now = current_live();
    if (!now) return now.error();
    out.index = std::move(*now);
    out.extra.clear();
    return out;
  }
  if (x) {
    out.index = std::move(x);
  } else {
    for (const Named& n : scanned->named) out.extra.push_back(n.entry);
  }
  return out;
}

Result<std::vector<int>> Store::settle_created() const {
  std::vector<int> gone;
  std::vector<LiveChange> changes;
  int next = 0, swept = 0;
  {
    auto x = current_live();
    if (!x) return x.error();
    const LiveIndex& in = **x;
    next = in.next;
    swept = in.swept;
    auto from = std::lower_bound(in.named.begin(), in.named.end(), std::max(in.swept, m_swept_below),
                                 [](const Named& n, int id) { return n.entry.id < id; });
    for (auto n = from; n != in.named.end(); ++n) {
      const fs::path dir = staging_dir(n->entry.id);
      struct stat st {};
      const bool folder = ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      if (folder && ::lstat((dir / "meta.json").c_str(), &st) != 0 && errno == ENOENT) {
        std::error_code ec;
        fs::remove_all(dir, ec);
        if (ec)
          return make_error(Errc::io, fmt::format("cannot remove '{}', left without a record by an interrupted command: {}",
                                                  dir.string(), ec.message()));
        gone.push_back(n->entry.id);
        changes.push_back(drop_change(n->entry.id));
        continue;
      }
      // Neither folder nor archived one: a create cut short before its folder.
      if (!folder && !plain_dir(archive_dir(n->entry.id)) && ::lstat(dir.c_str(), &st) != 0)
        changes.push_back(drop_change(n->entry.id));
    }
  }
  m_swept_below = std::max(m_swept_below, next);
  if (changes.empty()) return gone;
  changes.push_back(marks_change(next, std::max(swept, m_swept_below)));
  KAI_TRY(change_live(changes));
  return gone;
}

Result<Store::Live> Store::live(Refresh refresh) const {
  Live out;
  LiveRef x = read_live();
  std::optional<LiveIndex> scanned;
  if (!x) {
    scanned = scan_live();
    out.rebuilt = true;
  }
  const LiveIndex& in = x ? *x : *scanned;
  std::vector<LiveChange> changes;
  for (const Named& n : in.named) {
    const int id = n.entry.id;
    auto p = load(id, Payloads::none);
    if (!p && p.error().code == Errc::not_found) {  // a create cut short before its folder
      changes.push_back(drop_change(id));
      continue;
    }
    if (!p) {
      out.corrupt.emplace_back(id, p.error().message);
      if (n.unsettled || n.entry.readable) changes.push_back(put_change(unreadable_entry(id), false));
      continue;
    }
    if (!live_state(p->state)) {  // decided since it was named
      changes.push_back(drop_change(id));
      continue;
    }
    // The record's word settles an entry a save left unsettled; a record
    // that does not verify is not believed over a settled one.
    if (n.unsettled) changes.push_back(put_change(p->sealed == SealCheck::ok ? live_entry(*p) : n.entry, false));
    out.proposals.push_back(std::move(*p));
  }
  if (refresh != Refresh::write) return out;
  if (out.rebuilt) {
    LiveIndex kept = std::move(*scanned);
    for (const LiveChange& c : changes) apply_change(kept, c);
    KAI_TRY(write_live(std::move(kept)));
  } else {
    x.reset();
    KAI_TRY(change_live(changes));
  }
  return out;
}

Result<size_t> Store::rebuild_live() const {
  LiveIndex x = scan_live();
  const size_t n = x.named.size();
  KAI_TRY(write_live(std::move(x)));
  return n;
}
std::string Store::check_live() const { return check_live(audit()); }

Store::LiveIndex Store::scan_live(const Audit& a) const {
  LiveIndex x;
  for (const auto& e : a.entries) {
    x.next = std::max(x.next, e.id + 1);
    // An unreadable record stays named, so listings keep saying it is there.
    if (!e.proposal)
      x.named.push_back({unreadable_entry(e.id), false});
    else if (live_state(e.proposal->state))
      x.named.push_back({live_entry(*e.proposal), false});
  }
  return x;
}

std::string Store::check_live(const Audit& a) const {
  std::error_code ec;
  LiveIndex all = scan_live(a);
  if (!fs::exists(fs::symlink_status(m_dir / "staging" / "live", ec)))
    return all.named.empty() ? "" : "it is missing";  // none yet: the first proposal makes it
  auto x = read_live();
  if (!x) return "it does not verify, or is older than the proposals there are";
  std::vector<int> unnamed, differ;
  for (const Named& want : all.named) {
    auto at = std::lower_bound(x->named.begin(), x->named.end(), want.entry.id,
                               [](const Named& n, int id) { return n.entry.id < id; });
    if (at == x->named.end() || at->entry.id != want.entry.id)
      unnamed.push_back(want.entry.id);
    else if (!at->unsettled && !(at->entry == want.entry))
      differ.push_back(want.entry.id);
  }
  if (!unnamed.empty()) return fmt::format("it does not name live proposals {}", fmt::join(unnamed, ", "));
  // What its entries say (the agent, the request's key, the state, the
  // time) must be what each record says: the sweep, the twin and the limit
  // believe them.
  if (!differ.empty()) return fmt::format("its entries for proposals {} say other than their records", fmt::join(differ, ", "));
  return "";
}

// ---- The archive: archive/<id / 1000>/<id>/ and each bucket's summary ----
//
// A summary line is "<id>\t<the record as sealed, compact>\t<a run's command
// file, or empty>". The record carries its own seal (kind "proposal", bound
// to the root and the id), so a line is believed exactly when the record it
// copies would be; the command is a payload, shown as a listing shows it
// from the folder (Payloads::none: never checked against the seal there
// either).

namespace {
constexpr const char* k_summary = "summary";
constexpr const char* k_listing = "listing";
constexpr const char* k_listing_kind = "archive-listing";

// Whether a listing may vouch for `p`: its record verified, and a run's
// command (a payload, which only a load of the payloads checks) was read
// and matches the seal.
bool listable(const Proposal& p) {
  return p.sealed == SealCheck::ok && (p.kind != Kind::run || (p.payloads_loaded && !p.payload_changed));
}

// `compact`: the record as nlohmann's dump() writes it.
std::string summary_line_of(int id, const std::string& compact, const std::string& command) {
  std::string cmd;
  if (!command.empty()) {
    nlohmann::json c = parse_bounded_json(command).value;
    if (c.is_object()) cmd = c.dump();
  }
  return fmt::format("{}\t{}\t{}", id, compact, cmd);
}
}  // namespace

namespace {
using SummaryLines = std::vector<std::pair<int, std::string_view>>;

// A drop line, "<id>\t-": the id has no line (its record says).
constexpr std::string_view k_dropped = "-";

// What a summary's text says, as views into it: each id's last line (the
// file is appended to: a later line is the newer word, and a drop line says
// there is none), ascending by id. A last line without its newline was cut
// short by a crash mid-append and is not read. `raw` counts every line
// that names an id, superseded and drop lines too: more than the ids left
// means the file holds lines no reader needs (doctor compacts it).
struct SummaryText {
  SummaryLines lines;
  size_t raw = 0;
};

SummaryText summary_lines(std::string_view text) {
  SummaryText out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    if (end == std::string_view::npos) break;
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    auto id = parse_proposal_id(std::string(line.substr(0, tab)));
    if (id && *id > 0) out.lines.emplace_back(*id, line);
  }
  out.raw = out.lines.size();
  std::stable_sort(out.lines.begin(), out.lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = 0;
  for (size_t i = 0; i < out.lines.size(); ++i) {
    if (i + 1 < out.lines.size() && out.lines[i + 1].first == out.lines[i].first) continue;  // superseded
    const std::string_view line = out.lines[i].second;
    if (line.substr(line.find('\t') + 1) == k_dropped) continue;
    out.lines[kept++] = out.lines[i];
  }
  out.lines.resize(kept);
  return out;
}

// Written whole, ascending by id, as pieces, and `after` (whole lines)
// following them: a bucket's summary holds every record whole (a
// changeset's names each of its files), and is never copied whole to be
// written. Lines are in `lines`' order (already ascending, as
// summary_lines() gives them and a repair makes them).
Status write_summary_lines(const fs::path& file, const SummaryLines& lines,
                           std::span<const std::string_view> after = {}) {
  std::vector<std::string_view> pieces;
  pieces.reserve(2 * lines.size() + after.size());
  for (const auto& l : lines) {
    pieces.push_back(l.second);
    pieces.push_back("\n");
  }
  pieces.insert(pieces.end(), after.begin(), after.end());
  return write_file_atomic(file, pieces, 0600);
}

// `added` (pieces of whole lines, each ended by a newline) put at the end
// of the bucket's summary: appended to it, or, when it is missing or not a
// plain file of this user with one name, the summary written whole from
// what it says and `added` after. Moving a proposal into the archive, or
// changing an archived one's line, costs that line, not the bucket's
// thousand records.
Status add_summary_lines(const fs::path& file, std::span<const std::string_view> added) {
  auto appended = append_lines_to(file, added);
  if (!appended) return appended.error();
  if (*appended) return ok_status();
  std::string text;
  if (auto read = read_owned(file)) text = std::move(*read);
  return write_summary_lines(file, summary_lines(text).lines, added);
}
}  // namespace

std::vector<std::pair<int, std::string>> Store::read_summary(const fs::path& bucket, size_t* raw) const {
  std::vector<std::pair<int, std::string>> out;
  if (raw) *raw = 0;
  auto text = read_owned(bucket / k_summary);
  if (!text) return out;
  SummaryText read = summary_lines(*text);
  if (raw) *raw = read.raw;
  out.reserve(read.lines.size());
  for (const auto& [id, line] : read.lines) out.emplace_back(id, std::string(line));
  return out;
}

Status Store::write_summary(const fs::path& bucket, std::vector<std::pair<int, std::string>> lines) const {
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  SummaryLines views;
  views.reserve(lines.size());
  for (const auto& [id, line] : lines) views.emplace_back(id, line);
  return write_summary_lines(bucket / k_summary, views);
}

Status Store::put_summary_line(int id, const Proposal* p, const std::string* record) const {
  const fs::path bucket = bucket_of(m_dir, id);
  // One proposal's line changes: its new line (or a drop line) is appended,
  // and the last line of an id is its word.
  std::string added;
  if (record) {
    std::string command;
    if (auto c = read_owned(archive_dir(id) / "command")) command = std::move(*c);
    added = summary_line_of(id, *record, command);
  } else {
    added = fmt::format("{}\t{}", id, k_dropped);
  }
  const std::string_view line[] = {added, "\n"};
  KAI_TRY(add_summary_lines(bucket / k_summary, line));
  // The listing as the summary: the line goes first, and comes back only
  // for a record the listing may vouch for. A listing that no longer
  // verifies keeps only what is written now (the rest is read from the
  // summary until doctor makes it again).
  auto listed = read_listing(bucket).value_or(std::vector<std::pair<int, std::string>>{});
  const size_t had = listed.size();
  listed.erase(std::remove_if(listed.begin(), listed.end(), [id](const auto& l) { return l.first == id; }),
               listed.end());
  const bool add = p && listable(*p);
  if (!add && listed.size() == had) return ok_status();
  if (add) listed.emplace_back(id, listing::line(*p));
  return write_listing(bucket, std::move(listed));
}

std::optional<std::vector<std::pair<int, std::string>>> Store::read_listing(const fs::path& bucket) const {
  auto text = read_owned(bucket / k_listing);
  if (!text) return std::nullopt;
  auto parts = listing::split(*text);
  if (!parts) return std::nullopt;
  const SealCheck verdict = m_seal.check(k_listing_kind, bucket.filename().string(), parts->body, parts->seal);
  if (verdict != SealCheck::ok && verdict != SealCheck::no_key) return std::nullopt;
  std::vector<std::pair<int, std::string>> out;
  std::string_view body = parts->body;
  while (!body.empty()) {
    const size_t nl = body.find('\n');
    const std::string_view l = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    if (auto id = listing::id_of(l)) out.emplace_back(*id, std::string(l));
  }
  return out;
}

Status Store::write_listing(const fs::path& bucket, std::vector<std::pair<int, std::string>> lines) const {
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string body;
  for (const auto& [id, line] : lines) body += line + "\n";
  auto mac = m_seal.seal(k_listing_kind, bucket.filename().string(), body);
  if (!mac) return mac.error();
  return write_file_atomic(bucket / k_listing, listing::file(*mac, body), 0600);
}

Result<Proposal> Store::from_line(int id, const std::string& line) const {
  const size_t t1 = line.find('\t');
  const size_t t2 = t1 == std::string::npos ? std::string::npos : line.find('\t', t1 + 1);
  if (t2 == std::string::npos) return make_error(Errc::io, fmt::format("proposal {}: a summary line cut short", id));
  nlohmann::json j = parse_bounded_json(std::string_view(line).substr(t1 + 1, t2 - t1 - 1)).value;
  if (!j.is_object() || !j.contains("seal") || !j["seal"].is_string())
    return make_error(Errc::conflict, fmt::format("proposal {}: a summary line without a seal", id));
  const std::string mac = j["seal"].get<std::string>();
  j.erase("seal");
  // Without the owner's key nothing is checked, the records no more than
  // their lines (SealCheck::no_key, as load() says of a record).
  const SealCheck verdict = m_seal.check("proposal", std::to_string(id), j.dump(), mac);
  if (verdict != SealCheck::ok && verdict != SealCheck::no_key)
    return make_error(Errc::conflict, fmt::format("proposal {}: a summary line that does not verify", id));
  auto p = from_json(j);
  if (!p || p->id != id) return make_error(Errc::conflict, fmt::format("proposal {}: a summary line of another", id));
  if (p->kind == Kind::run) {
    nlohmann::json cmd = parse_bounded_json(std::string_view(line).substr(t2 + 1)).value;
    if (!cmd.is_object()) return make_error(Errc::io, fmt::format("proposal {}: a summary line without its command", id));
    p->argv = cmd.value("argv", std::vector<std::string>{});
    p->shell = cmd.value("shell", "");
  }
  p->sealed = verdict;
  p->sealed_payload_digest = j.value("payload_digest", "");
  p->payloads_loaded = false;
  p->payload_changed = false;
  return p;
}

Result<size_t> Store::archive_decided() const {
  // Only the ids the live index says left the live set since they were
  // last looked at: staging/ is never listed (it holds the live set).
  std::vector<int> due;
  {
    auto index = current_live();
    if (!index) return index.error();
    due = (*index)->due;
  }
  if (due.empty()) return size_t{0};
  struct Move {
    int id;
    std::string line;
    std::string listed;  // its listing line, "" when the listing cannot vouch for it
  };
  std::vector<Move> moves;
  for (int id : due) {
    if (!plain_dir(staging_dir(id))) continue;  // moved already, or never made
    std::string record;  // as it verified, compact: what its summary line copies
    auto p = load(id, Payloads::none, &record);
    // What does not verify stays where doctor lists it and nothing acts on it.
    if (!p || live_state(p->state) || p->sealed != SealCheck::ok) continue;
    // A run's command is a payload: checked against the seal before the
    // listing vouches for it (once, here).
    if (p->kind == Kind::run) p = load(id, Payloads::all);
    if (!p) continue;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(archive_dir(id), ec))) continue;  // a copy there already: left for doctor
    std::string command;
    if (p->kind == Kind::run)
      if (auto c = read_owned(staging_dir(id) / "command")) command = std::move(*c);
    moves.push_back({id, summary_line_of(id, record, command), listable(*p) ? listing::line(*p) : std::string()});
  }
  // Every id looked at leaves the due list once the moves are done (a
  // crash before leaves them due: the next sweep finds them moved).
  LiveChange looked;
  looked.what = LiveChange::What::archived;
  looked.ids = std::move(due);
  if (moves.empty()) {
    KAI_TRY(change_live({looked}));
    return size_t{0};
  }
  KAI_TRY(make_dirs(m_dir / "archive", 0700));
  // Each bucket's summary names its new proposals before they move: a line
  // whose folder is still in staging/ is not read (the folder wins), so a
  // crash between leaves every proposal listed once, and the next sweep
  // moves the rest.
  std::vector<int> buckets;
  buckets.reserve(moves.size());
  for (const Move& m : moves) buckets.push_back(m.id / k_bucket_size);
  buckets.erase(std::unique(buckets.begin(), buckets.end()), buckets.end());
  for (int b : buckets) {
    const fs::path bucket = m_dir / "archive" / std::to_string(b);
    struct stat st {};
    if (::lstat(bucket.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
      return make_error(Errc::denied, fmt::format("'{}' is not a folder (a symlink?), which kaicoder never follows",
                                                  bucket.string()),
                        "the archive's folders must be real folders inside the state dir; remove it");
    KAI_TRY(make_dirs(bucket, 0700));
    // Appended: a line already there for one of them (a sweep killed after
    // it wrote) is superseded by the newer one.
    std::vector<std::string_view> added;
    for (const Move& m : moves)
      if (m.id / k_bucket_size == b) added.insert(added.end(), {m.line, "\n"});
    KAI_TRY(add_summary_lines(bucket / k_summary, added));
  }
  fault_point("after-archive-summary");
  // Then each bucket's listing, as its summary: a line whose folder is
  // still in staging/ is not read either.
  for (int b : buckets) {
    const fs::path bucket = m_dir / "archive" / std::to_string(b);
    auto listed = read_listing(bucket).value_or(std::vector<std::pair<int, std::string>>{});
    for (const Move& m : moves) {
      if (m.id / k_bucket_size != b) continue;
      listed.erase(std::remove_if(listed.begin(), listed.end(), [&m](const auto& l) { return l.first == m.id; }),
                   listed.end());
      if (!m.listed.empty()) listed.emplace_back(m.id, m.listed);
    }
    KAI_TRY(write_listing(bucket, std::move(listed)));
  }
  fault_point("after-archive-listing");
  size_t moved = 0;
  for (const Move& m : moves) {
    std::error_code ec;
    fs::rename(staging_dir(m.id), archive_dir(m.id), ec);
    if (ec)
      return make_error(Errc::io, fmt::format("cannot move proposal {} into the archive: {}", m.id, ec.message()));
    ++moved;
    fault_point("after-archive-move");
  }
  (void)fsync_dir(m_dir / "staging");
  for (int b : buckets) (void)fsync_dir(m_dir / "archive" / std::to_string(b));
  KAI_TRY(change_live({looked}));
  return moved;
}

Result<Store::Catalog> Store::catalog(Detail detail) const {
  Catalog out;
  const std::vector<int> hot = hot_ids();
  auto take = [&out](int id, Result<Proposal> p) {
    if (p)
      out.proposals.push_back(std::move(*p));
    else
      out.corrupt.emplace_back(id, p.error().message);
  };
  for (int id : hot) take(id, load(id, Payloads::none));  // a listing never reads payloads
  const size_t hot_end = out.proposals.size();
  // Without the owner's key nothing is checked, the listings no more than the records.
  const SealCheck listed_as = m_seal.usable() ? SealCheck::ok : SealCheck::no_key;
  // First each bucket's folders and listing (its seal checked once), so
  // that the records are made in place, in room made once for all.
  struct Bucket {
    fs::path dir;
    std::vector<int> ids;                // its archived folders, ascending
    std::optional<std::string> listing;  // the listing's text, when its seal verifies
    size_t body = 0;                     // where its lines start in `listing`
  };
  std::vector<Bucket> buckets;
  size_t room = out.proposals.size();
  for (int b : numbered(m_dir / "archive")) {
    Bucket k{m_dir / "archive" / std::to_string(b), {}, std::nullopt, 0};
    if (!plain_dir(k.dir)) continue;
    for (int id : numbered(k.dir))
      if (id > 0 && id / k_bucket_size == b && !std::binary_search(hot.begin(), hot.end(), id)) k.ids.push_back(id);
    room += k.ids.size();
    if (detail == Detail::listed) {
      if (auto text = read_owned(k.dir / k_listing)) k.listing = std::move(*text);
      auto parts = k.listing ? listing::split(*k.listing) : std::nullopt;
      const SealCheck verdict =
          parts ? m_seal.check(k_listing_kind, std::to_string(b), parts->body, parts->seal) : SealCheck::bad;
      if (verdict == SealCheck::ok || verdict == SealCheck::no_key)
        k.body = static_cast<size_t>(parts->body.data() - k.listing->data());
      else
        k.listing.reset();
    }
    buckets.push_back(std::move(k));
  }
  out.proposals.reserve(room);
  for (Bucket& k : buckets) {
    std::optional<std::vector<std::pair<int, std::string>>> lines;  // the summary, read when first needed
    size_t at = 0;
    // The listing's lines not passed yet.
    std::string_view rest = k.listing ? std::string_view(*k.listing).substr(k.body) : std::string_view();
    for (int id : k.ids) {
      if (k.listing) {
        bool listed = false;
        // Lines and folders both ascend: step past the lines before `id`.
        while (!rest.empty()) {
          const size_t nl = rest.find('\n');
          const std::string_view l = rest.substr(0, nl);
          auto lid = listing::id_of(l);
          if (lid && *lid > id) break;
          rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
          if (!lid || *lid < id) continue;
          Proposal& p = out.proposals.emplace_back();
          if (listing::parse_into(l, p) && p.id == id) {
            p.sealed = listed_as;
            listed = true;
            break;
          }
          out.proposals.pop_back();
        }
        if (listed) continue;
      }
      if (detail == Detail::listed) out.unlisted.push_back(id);
      if (!lines) lines = read_summary(k.dir);
      while (at < lines->size() && (*lines)[at].first < id) ++at;
      if (at < lines->size() && (*lines)[at].first == id) {
        if (auto p = from_line(id, (*lines)[at].second)) {
          out.proposals.push_back(std::move(*p));
          continue;
        }
      }
      // No line, or one that does not verify: the record says, as it would without a summary.
      out.from_records.push_back(id);
      take(id, load(id, Payloads::none));
    }
  }
  // Both runs are ascending (staging/'s ids, then the buckets' in order):
  // merged, not sorted, and only when they interleave.
  auto by_id = [](const Proposal& x, const Proposal& y) { return x.id < y.id; };
  const auto mid = out.proposals.begin() + static_cast<std::ptrdiff_t>(hot_end);
  if (mid != out.proposals.begin() && mid != out.proposals.end() && by_id(*mid, *(mid - 1)))
    std::inplace_merge(out.proposals.begin(), mid, out.proposals.end(), by_id);
  return out;
}

size_t Store::compact_summaries(const std::vector<std::string>& buckets) const {
  size_t written = 0;
  for (const std::string& b : buckets) {
    auto n = parse_proposal_id(b);
    if (!n || *n < 0) continue;
    const fs::path bucket = m_dir / "archive" / std::to_string(*n);
    if (!plain_dir(bucket)) continue;
    size_t raw = 0;
    auto lines = read_summary(bucket, &raw);
    if (raw > lines.size() && write_summary(bucket, std::move(lines))) ++written;
  }
  return written;
}

std::vector<std::string> Store::check_summaries(bool write, std::vector<std::string>* untidy) const {
  return check_summaries(audit(), write, untidy);
}

namespace {
// ---- doctor's audit: archive/audit/<bucket> ----
//
// Kept beside the buckets, not in them: writing it in a bucket would move
// the bucket folder's own stamp. "kaicoder-audited-1 <seal>\n" and a body of lines, the whole body under
// the seal (kind "archive-audit", bound to the bucket's number, the root
// and the store as every seal is):
//   bucket <stamp>               the bucket's folder
//   summary <stamp>              its summary
//   listing <stamp>              its listing
//   <id> <stamp> <stamp> <stamp> the record's folder, meta.json, and a
//                                run's command ("-" for no command)
// A stamp is the stat data (lib/util/stat.hpp StatKey), comma-separated
// decimals: size, modification time, change time (nanoseconds), inode, mode.
constexpr const char* k_audited_kind = "archive-audit";
constexpr std::string_view k_audited_head = "kaicoder-audited-1 ";
// A bucket's file at its largest: three stamps for each of its 1,000
// records, each under 120 bytes. A larger one is not read (nor believed).
constexpr size_t k_audited_max = 1 << 20;

std::optional<StatKey> stamp_at(int dirfd, const char* name) {
  struct stat st {};
  if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return key_of(st);
}

std::optional<StatKey> stamp_of(const fs::path& p) { return stamp_at(AT_FDCWD, p.c_str()); }

std::string stamp_text(const StatKey& k) {
  return fmt::format("{},{},{},{},{}", k.size, k.mtime_ns, k.ctime_ns, k.ino, k.mode);
}

std::optional<StatKey> parse_stamp(std::string_view t) {
  StatKey k;
  uint64_t mode = 0;
  uint64_t* field[] = {&k.size, &k.mtime_ns, &k.ctime_ns, &k.ino, &mode};
  for (size_t i = 0; i < std::size(field); ++i) {
    const bool last = i + 1 == std::size(field);
    const size_t comma = last ? t.size() : t.find(',');
    if (comma == std::string_view::npos || comma == 0) return std::nullopt;
    auto r = std::from_chars(t.data(), t.data() + comma, *field[i]);
    if (r.ec != std::errc() || r.ptr != t.data() + comma) return std::nullopt;
    t.remove_prefix(last ? comma : comma + 1);
  }
  if (mode > UINT32_MAX) return std::nullopt;
  k.mode = static_cast<uint32_t>(mode);
  return k;
}

// What an `audited` file vouches for, once its seal verified.
struct Vouched {
  StatKey dir, summary, listing;
  struct Record {
    int id = 0;
    StatKey folder, record;
    std::optional<StatKey> command;
  };
  std::vector<Record> records;
};

std::optional<Vouched> parse_vouched(std::string_view body) {
  Vouched v;
  auto next = [&body]() {
    const size_t nl = body.find('\n');
    std::string_view l = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    return l;
  };
  auto named = [](std::string_view l, std::string_view name) -> std::optional<StatKey> {
    if (!l.starts_with(name) || l.size() <= name.size() || l[name.size()] != ' ') return std::nullopt;
    return parse_stamp(l.substr(name.size() + 1));
  };
  auto dir = named(next(), "bucket");
  auto summary = named(next(), "summary");
  auto listing = named(next(), "listing");
  if (!dir || !summary || !listing) return std::nullopt;
  v.dir = *dir;
  v.summary = *summary;
  v.listing = *listing;
  while (!body.empty()) {
    std::string_view l = next();
    std::string_view f[4];
    for (int k = 0; k < 4; ++k) {
      const size_t sp = k < 3 ? l.find(' ') : l.size();
      if (sp == std::string_view::npos) return std::nullopt;
      f[k] = l.substr(0, sp);
      l.remove_prefix(k < 3 ? sp + 1 : sp);
    }
    Vouched::Record r;
    auto id = parse_proposal_id(std::string(f[0]));
    auto folder = parse_stamp(f[1]);
    auto record = parse_stamp(f[2]);
    if (!id || *id < 1 || !folder || !record) return std::nullopt;
    r.id = *id;
    r.folder = *folder;
    r.record = *record;
    if (f[3] != "-") {
      r.command = parse_stamp(f[3]);
      if (!r.command) return std::nullopt;
    }
    v.records.push_back(r);
  }
  return v;
}

// Whether only the kernel sets change times on the file system that holds
// `dir`: the local ones whose ctime follows every change. Elsewhere (vfat
// keeps none and shows the modification time; a FUSE file system says what
// it likes) no bucket is vouched for.
bool change_times_kept(const fs::path& dir) {
  struct statfs s {};
  if (::statfs(dir.c_str(), &s) != 0) return false;
  switch (static_cast<unsigned long>(s.f_type)) {
    case EXT4_SUPER_MAGIC:  // ext2, ext3 and ext4
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case F2FS_SUPER_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case 0x2fc12fc1UL:  // zfs
      return true;
    default:
      return false;
  }
}

// Whether every file `v` names is as it was, the bucket's own folder first
// (its stamp moves when a name in it is added, removed or renamed), and no
// id it vouches for has a folder in staging/ (which would be read instead).
bool unchanged(int bucket_fd, const Vouched& v, const std::vector<int>& hot) {
  if (stamp_at(bucket_fd, ".") != v.dir || stamp_at(bucket_fd, k_summary) != v.summary ||
      stamp_at(bucket_fd, k_listing) != v.listing)
    return false;
  std::string name;
  for (const Vouched::Record& r : v.records) {
    if (std::binary_search(hot.begin(), hot.end(), r.id)) return false;
    name = std::to_string(r.id);
    const size_t n = name.size();
    if (stamp_at(bucket_fd, name.c_str()) != r.folder) return false;
    name += "/meta.json";
    if (stamp_at(bucket_fd, name.c_str()) != r.record) return false;
    if (r.command) {
      name.resize(n);
      name += "/command";
      if (stamp_at(bucket_fd, name.c_str()) != r.command) return false;
    }
  }
  return true;
}
}  // namespace

Store::Audit Store::audit(Depth depth) const {
  Audit a;
  a.began = now_ns();
  std::vector<int> hot;  // folders in staging/: each wins over an archived copy
  for (int id : hot_ids()) {
    const bool dir = plain_dir(staging_dir(id));
    struct stat st {};
    if (dir)
      hot.push_back(id);
    else if (::lstat(archive_dir(id).c_str(), &st) == 0)
      continue;  // read with its bucket
    Audit::Entry e;
    e.id = id;
    e.archived = !dir;
    auto p = load(id, Payloads::none);
    if (p)
      e.proposal = std::move(*p);
    else
      e.error = p.error().message;
    a.entries.push_back(std::move(e));
  }
  const size_t hot_end = a.entries.size();
  const bool may_skip = depth == Depth::changed && change_times_kept(m_dir / "archive");
  for (int b : numbered(m_dir / "archive")) {
    const fs::path bucket = m_dir / "archive" / std::to_string(b);
    if (may_skip) {
      const int fd = ::open(bucket.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0) {
        bool same = false;
        if (auto text = read_owned(m_dir / "archive" / "audit" / std::to_string(b), k_audited_max)) {
          if (auto parts = listing::split(*text, k_audited_head);
              parts && m_seal.check(k_audited_kind, std::to_string(b), parts->body, parts->seal) == SealCheck::ok)
            if (auto v = parse_vouched(parts->body)) same = unchanged(fd, *v, hot);
        }
        ::close(fd);
        if (same) {
          a.vouched.push_back(b);
          continue;
        }
      }
    }
    // Read whole: each stamp taken before what it describes is read, so a
    // change made after it moves the stamp and the next check reads again.
    Audit::Bucket read;
    read.number = b;
    read.dir = stamp_of(bucket);
    read.summary = stamp_of(bucket / k_summary);
    read.listing = stamp_of(bucket / k_listing);
    a.read.push_back(read);
    for (int id : numbered(bucket)) {
      if (id < 1 || id / k_bucket_size != b || std::binary_search(hot.begin(), hot.end(), id)) continue;
      Audit::Entry e;
      e.id = id;
      e.archived = true;
      const fs::path dir = bucket / std::to_string(id);
      e.folder = stamp_of(dir);
      e.record = stamp_of(dir / "meta.json");
      // A plain folder, and no folder in staging/ for it: where load() would look.
      const bool plain = e.folder && S_ISDIR(e.folder->mode);
      std::string record;
      auto p = plain ? load_in(dir, id, Payloads::none, &record) : load(id, Payloads::none, &record);
      // An archived run: its command is read and checked against the seal,
      // as the listing vouches for it.
      if (p && p->kind == Kind::run) {
        e.command = stamp_of(dir / "command");
        p = plain ? load_in(dir, id, Payloads::all, nullptr) : load(id, Payloads::all);
      }
      if (p)
        e.proposal = std::move(*p);
      else
        e.error = p.error().message;
      if (!record.empty()) {
        std::string command;
        if (e.proposal && e.proposal->kind == Kind::run)
          if (auto c = read_owned(dir / "command")) command = std::move(*c);
        e.summary_line = summary_line_of(id, record, command);
      }
      a.entries.push_back(std::move(e));
    }
  }
  // staging/'s ids, then the buckets' in order: merged when they interleave.
  auto by_id = [](const Audit::Entry& x, const Audit::Entry& y) { return x.id < y.id; };
  const auto mid = a.entries.begin() + static_cast<std::ptrdiff_t>(hot_end);
  if (mid != a.entries.begin() && mid != a.entries.end() && by_id(*mid, *(mid - 1)))
    std::inplace_merge(a.entries.begin(), mid, a.entries.end(), by_id);
  return a;
}

size_t Store::vouch(const Audit& a, const std::vector<std::string>& wrong) const {
  if (a.read.empty() || !m_seal.usable() || !change_times_kept(m_dir / "archive")) return 0;
  // Stat data in the racy window (a change within it could leave the
  // times as they were) is never vouched for, as the secret-file walk's.
  const uint64_t racy = racy_from(a.began);
  size_t written = 0;
  auto entry = a.entries.begin();
  for (const Audit::Bucket& b : a.read) {
    const fs::path file = m_dir / "archive" / "audit" / std::to_string(b.number);
    bool in_order = b.dir && b.summary && b.listing &&
                    std::find(wrong.begin(), wrong.end(), std::to_string(b.number)) == wrong.end();
    std::vector<StatKey> stamps;
    std::string body;
    if (in_order) {
      body += fmt::format("bucket {}\nsummary {}\nlisting {}\n", stamp_text(*b.dir), stamp_text(*b.summary),
                          stamp_text(*b.listing));
      stamps = {*b.dir, *b.summary, *b.listing};
    }
    while (entry != a.entries.end() && entry->id / k_bucket_size < b.number) ++entry;
    for (; entry != a.entries.end() && entry->id / k_bucket_size == b.number; ++entry) {
      if (!entry->archived || !in_order) continue;
      const auto& p = entry->proposal;
      // Only what doctor would pass over: a record that verified (a run's
      // command too), decided, not failed.
      if (!p || !listable(*p) || live_state(p->state) || p->state == State::failed || !entry->folder ||
          !entry->record || (p->kind == Kind::run) != entry->command.has_value()) {
        in_order = false;
        continue;
      }
      body += fmt::format("{} {} {} {}\n", entry->id, stamp_text(*entry->folder), stamp_text(*entry->record),
                          entry->command ? stamp_text(*entry->command) : std::string("-"));
      stamps.push_back(*entry->folder);
      stamps.push_back(*entry->record);
      if (entry->command) stamps.push_back(*entry->command);
    }
    for (const StatKey& k : stamps) in_order = in_order && settled_before(k, racy);
    std::error_code ec;
    if (!in_order) {
      fs::remove(file, ec);
      continue;
    }
    auto mac = m_seal.seal(k_audited_kind, std::to_string(b.number), body);
    if (mac && make_dirs(file.parent_path(), 0700) &&
        write_file_atomic(file, listing::file(*mac, body, k_audited_head), 0600))
      ++written;
  }
  return written;
}

std::vector<std::string> Store::check_summaries(const Audit& a, bool write, std::vector<std::string>* untidy) const {
  std::vector<std::string> wrong;
  auto entry = a.entries.begin();
  for (int b : numbered(m_dir / "archive")) {
    const fs::path bucket = m_dir / "archive" / std::to_string(b);
    if (!plain_dir(bucket) || std::binary_search(a.vouched.begin(), a.vouched.end(), b)) continue;
    // The summary line is the record as it is: one that does not verify
    // makes a line that does not either, and the listing reads that record
    // itself. The listing names only what it may vouch for.
    std::vector<std::pair<int, std::string>> want, want_listed;
    while (entry != a.entries.end() && entry->id / k_bucket_size < b) ++entry;
    for (; entry != a.entries.end() && entry->id / k_bucket_size == b; ++entry) {
      if (!entry->archived || entry->summary_line.empty()) continue;
      want.emplace_back(entry->id, entry->summary_line);
      if (entry->proposal && listable(*entry->proposal))
        want_listed.emplace_back(entry->id, listing::line(*entry->proposal));
    }
    const auto listed = read_listing(bucket);
    size_t raw = 0;
    const bool summary_ok = read_summary(bucket, &raw) == want;
    const bool listing_ok = listed && *listed == want_listed;
    // Lines superseded by newer ones (a rollback of an archived proposal
    // appends its new line) are no disagreement, only room: a repair
    // writes the summary compact.
    const bool compact = raw == want.size();
    if (summary_ok && listing_ok) {
      if (!compact) {
        if (untidy) untidy->push_back(bucket.filename().string());
        if (write) (void)write_summary(bucket, std::move(want));
      }
      continue;
    }
    wrong.push_back(bucket.filename().string());
    if (!write) continue;
    if (!summary_ok || !compact) (void)write_summary(bucket, std::move(want));
    if (!listing_ok) (void)write_listing(bucket, std::move(want_listed));
  }
  return wrong;
}

std::vector<int> Store::unrecorded() const {
  // Only the ids the live index names (create() names an id there before
  // it makes the folder), or every id when there is no index to trust.
  std::vector<int> out;
  std::vector<int> named;
  if (auto x = read_live()) {
    for (const Named& n : x->named) named.push_back(n.entry.id);
  } else {
    named = hot_ids();
  }
  for (int id : named) {
    struct stat st {};
    const fs::path dir = staging_dir(id);
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;  // not a folder kaicoder made
    if (::lstat((dir / "meta.json").c_str(), &st) != 0 && errno == ENOENT) out.push_back(id);
  }
  return out;
}

}  // namespace kai

namespace kai {

Status require_sealed(const Store& store, const Proposal& p) {
  if (p.sealed == SealCheck::ok && p.payload_changed)
    return make_error(Errc::conflict,
                      fmt::format("proposal {} was changed after it was {}", p.id,
                                  p.approved_digest.empty() ? "proposed" : "approved"),
                      "its staged files no longer match the record kaicoder sealed; propose it again");
  if (p.sealed == SealCheck::ok) return ok_status();
  return seal_error(store.sealer(), p.sealed, fmt::format("the record of proposal {}", p.id),
                    fmt::format("kaicoder acts only on records it sealed; reject it (kaicoder reject {}) and propose "
                                "the change again; 'kaicoder doctor' lists every record that does not verify",
                                p.id));
}

}  // namespace kai
