#include "lib/store/store.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <iterator>
#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "lib/paths/beneath.hpp"
#include "lib/store/listing.hpp"
#include "lib/store/spool.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json_bounded.hpp"

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
    auto x = current_live();
    if (!x) return x.error();
    if (!std::binary_search(x->ids.begin(), x->ids.end(), p.id))
      x->ids.insert(std::upper_bound(x->ids.begin(), x->ids.end(), p.id), p.id);
    x->next = std::max(x->next, p.id + 1);
    KAI_TRY(write_live(*x));
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
  Proposal copy = p;
  for (const char* name : k_payloads) KAI_TRY(write_file_exclusive(dir / name, *payload(copy, name), 0600));
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
// (compact; nlohmann sorts keys). The record holds the payloads' digest
// ("payload_digest"), so the payloads are bound too, and a payload changed
// alone can be told from a record kaicoder did not write.
}  // namespace

Result<std::string> Store::sealed_record(Proposal& p) const {
  nlohmann::json j = to_json(p);
  // A record loaded without its payloads keeps the digest it was sealed with.
  // Kept in `p` too: loaded_digest(p) is then the digest of what was sealed.
  if (p.payloads_loaded) p.sealed_payload_digest = digest(p);
  j["payload_digest"] = p.sealed_payload_digest;
  auto mac = m_seal.seal("proposal", std::to_string(p.id), j.dump());
  if (!mac) return mac.error();
  j["seal"] = *mac;
  return j.dump(2) + "\n";
}

Status Store::save(Proposal& p) const {
  auto text = sealed_record(p);
  if (!text) return text.error();
  const fs::path dir = folder(p.id);
  // An archived record changing (an applied proposal rolled back): its
  // summary line goes first and comes back after, so a crash between
  // leaves the line missing (the listing reads the record), never stale.
  const bool archived = dir != staging_dir(p.id);
  if (archived) KAI_TRY(put_summary_line(p.id, nullptr, nullptr));
  KAI_TRY(write_file_atomic(dir / "meta.json", *text, 0600));
  p.sealed = SealCheck::ok;
  (void)mirror_status(m_dir, p.id, dir, *text, m_approval_timeout);  // the agent's view; the record above is what counts
  fault_point("after-record");
  if (archived) KAI_TRY(put_summary_line(p.id, &p, &*text));
  return forget_decided({&p});
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
  for (auto& p : ps) {
    auto text = sealed_record(p);
    if (!text) return text.error();
    files.emplace_back(staging_dir(p.id) / "meta.json", std::move(*text));
  }
  KAI_TRY(write_files_atomic(files, 0600));
  for (auto& p : ps) p.sealed = SealCheck::ok;
  for (size_t i = 0; i < ps.size(); ++i) (void)mirror_status(m_dir, ps[i].id, staging_dir(ps[i].id), files[i].second, m_approval_timeout);
  fault_point("after-record");
  std::vector<const Proposal*> saved;
  for (const auto& p : ps) saved.push_back(&p);
  return forget_decided(saved);
}

Result<Proposal> Store::load(int id, Payloads payloads) const { return load(id, payloads, nullptr); }

Result<Proposal> Store::load(int id, Payloads payloads, std::string* record) const {
  fs::path dir = folder(id);
  std::error_code ec;
  if (id < 1 || !fs::is_directory(dir, ec))
    return make_error(Errc::not_found, fmt::format("no proposal {}", id), "see 'kaicoder list' for the ids there are");
  auto text = read_owned(dir / "meta.json");
  if (!text)
    return make_error(Errc::io, fmt::format("proposal {} has no readable record: {}", id, text.error().message));
  nlohmann::json j = parse_bounded_json(*text).value;
  if (j.is_discarded())
    return make_error(Errc::io, fmt::format("proposal {} has a corrupt record '{}'", id, (dir / "meta.json").string()));
  if (record) *record = j.dump();
  std::string mac;
  if (j.is_object() && j.contains("seal") && j["seal"].is_string()) mac = j["seal"].get<std::string>();
  if (j.is_object()) j.erase("seal");
  auto p = from_json(j);
  if (!p) return make_error(Errc::io, fmt::format("proposal {}: {}", id, p.error().message));
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
  // The folder names the id: a record copied from another folder keeps its
  // own id inside, and its seal is bound to that one.
  p->sealed = p->id != id ? SealCheck::bad : m_seal.check("proposal", std::to_string(id), j.dump(), mac);
  p->sealed_payload_digest = j.value("payload_digest", "");
  p->payloads_loaded = payloads == Payloads::all;
  p->payload_changed =
      p->sealed == SealCheck::ok && p->payloads_loaded && (split_failed || p->sealed_payload_digest != digest(*p));
  p->id = id;
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
constexpr const char* k_live_kind = "live-index";
constexpr const char* k_live_id = "live";
}  // namespace

std::optional<Store::LiveIndex> Store::read_live() const {
  auto text = read_owned(m_dir / "staging" / "live");
  if (!text) return std::nullopt;
  nlohmann::json j = parse_bounded_json(*text).value;
  if (!j.is_object() || !j.contains("seal") || !j["seal"].is_string()) return std::nullopt;
  const std::string mac = j["seal"].get<std::string>();
  j.erase("seal");
  if (m_seal.check(k_live_kind, k_live_id, j.dump(), mac) != SealCheck::ok) return std::nullopt;
  LiveIndex x;
  try {
    x.next = j.at("next").get<int>();
    x.ids = j.at("ids").get<std::vector<int>>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (x.next < 1 || !std::is_sorted(x.ids.begin(), x.ids.end())) return std::nullopt;
  // Older than the store: a proposal was made after this index was written
  // (a sealed copy put back), so it may not name every live one.
  std::error_code ec;
  if (fs::exists(fs::symlink_status(staging_dir(x.next), ec)) || fs::exists(fs::symlink_status(archive_dir(x.next), ec)))
    return std::nullopt;
  return x;
}

Store::LiveIndex Store::scan_live() const {
  LiveIndex x;
  auto all = ids();
  for (int id : all ? *all : std::vector<int>{}) {
    x.next = std::max(x.next, id + 1);
    auto p = load(id, Payloads::none);
    // An unreadable record stays named, so listings keep saying it is there.
    if (!p || live_state(p->state)) x.ids.push_back(id);
  }
  return x;
}

Result<Store::LiveIndex> Store::current_live() const {
  if (auto x = read_live()) return *x;
  LiveIndex x = scan_live();
  KAI_TRY(write_live(x));
  return x;
}

Status Store::write_live(const LiveIndex& x) const {
  nlohmann::json j = {{"next", x.next}, {"ids", x.ids}};
  auto mac = m_seal.seal(k_live_kind, k_live_id, j.dump());
  if (!mac) return mac.error();
  j["seal"] = *mac;
  return write_file_atomic(m_dir / "staging" / "live", j.dump() + "\n", 0600);
}

Status Store::forget_decided(const std::vector<const Proposal*>& ps) const {
  if (std::all_of(ps.begin(), ps.end(), [](const Proposal* p) { return live_state(p->state); })) return ok_status();
  auto x = read_live();
  if (!x) {  // made again from the records, which already say decided
    KAI_TRY(current_live());
    return ok_status();
  }
  const size_t before = x->ids.size();
  for (const Proposal* p : ps)
    if (!live_state(p->state)) x->ids.erase(std::remove(x->ids.begin(), x->ids.end(), p->id), x->ids.end());
  return x->ids.size() == before ? ok_status() : write_live(*x);
}

Result<Store::Live> Store::live(Refresh refresh) const {
  Live out;
  std::optional<LiveIndex> x = read_live();
  if (!x) {
    x = scan_live();
    out.rebuilt = true;
  }
  LiveIndex kept{x->next, {}};
  for (int id : x->ids) {
    auto p = load(id, Payloads::none);
    if (!p && p.error().code == Errc::not_found) continue;  // a create cut short before its folder
    if (!p) {
      out.corrupt.emplace_back(id, p.error().message);
      kept.ids.push_back(id);
      continue;
    }
    if (!live_state(p->state)) continue;  // decided since it was named
    kept.ids.push_back(id);
    out.proposals.push_back(std::move(*p));
  }
  if (refresh == Refresh::write && (out.rebuilt || kept.ids.size() != x->ids.size())) KAI_TRY(write_live(kept));
  return out;
}

Result<size_t> Store::rebuild_live() const {
  LiveIndex x = scan_live();
  KAI_TRY(write_live(x));
  return x.ids.size();
}

std::string Store::check_live() const { return check_live(audit()); }

Store::LiveIndex Store::scan_live(const Audit& a) const {
  LiveIndex x;
  for (const auto& e : a.entries) {
    x.next = std::max(x.next, e.id + 1);
    // An unreadable record stays named, so listings keep saying it is there.
    if (!e.proposal || live_state(e.proposal->state)) x.ids.push_back(e.id);
  }
  return x;
}

std::string Store::check_live(const Audit& a) const {
  std::error_code ec;
  LiveIndex all = scan_live(a);
  if (!fs::exists(fs::symlink_status(m_dir / "staging" / "live", ec)))
    return all.ids.empty() ? "" : "it is missing";  // none yet: the first proposal makes it
  auto x = read_live();
  if (!x) return "it does not verify, or is older than the proposals there are";
  std::vector<int> unnamed;
  std::set_difference(all.ids.begin(), all.ids.end(), x->ids.begin(), x->ids.end(), std::back_inserter(unnamed));
  if (!unnamed.empty()) return fmt::format("it does not name live proposals {}", fmt::join(unnamed, ", "));
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

std::string summary_line(int id, const std::string& record, const std::string& command) {
  nlohmann::json j = parse_bounded_json(record).value;
  return summary_line_of(id, j.is_discarded() ? std::string("{}") : j.dump(), command);
}
}  // namespace

std::vector<std::pair<int, std::string>> Store::read_summary(const fs::path& bucket) const {
  std::vector<std::pair<int, std::string>> out;
  auto text = read_owned(bucket / k_summary);
  if (!text) return out;
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    std::string_view line(text->data() + at, end - at);
    at = end + 1;
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) continue;
    auto id = parse_proposal_id(std::string(line.substr(0, tab)));
    if (id && *id > 0) out.emplace_back(*id, std::string(line));
  }
  return out;
}

Status Store::write_summary(const fs::path& bucket, std::vector<std::pair<int, std::string>> lines) const {
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string all;
  for (const auto& [id, line] : lines) all += line + "\n";
  return write_file_atomic(bucket / k_summary, all, 0600);
}

Status Store::put_summary_line(int id, const Proposal* p, const std::string* record) const {
  const fs::path bucket = bucket_of(m_dir, id);
  auto lines = read_summary(bucket);
  const size_t before = lines.size();
  lines.erase(std::remove_if(lines.begin(), lines.end(), [id](const auto& l) { return l.first == id; }), lines.end());
  if (record || lines.size() != before) {
    if (record) {
      std::string command;
      if (auto c = read_owned(archive_dir(id) / "command")) command = std::move(*c);
      lines.emplace_back(id, summary_line(id, *record, command));
    }
    KAI_TRY(write_summary(bucket, std::move(lines)));
  }
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
  const auto index = read_live();
  struct Move {
    int id;
    std::string line;
    std::string listed;  // its listing line, "" when the listing cannot vouch for it
  };
  std::vector<Move> moves;
  for (int id : hot_ids()) {
    if (index && std::binary_search(index->ids.begin(), index->ids.end(), id)) continue;  // live: stays
    auto p = load(id, Payloads::none);
    // What does not verify stays where doctor lists it and nothing acts on it.
    if (!p || live_state(p->state) || p->sealed != SealCheck::ok) continue;
    // A run's command is a payload: checked against the seal before the
    // listing vouches for it (once, here).
    if (p->kind == Kind::run) p = load(id, Payloads::all);
    if (!p) continue;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(archive_dir(id), ec))) continue;  // a copy there already: left for doctor
    auto record = read_owned(staging_dir(id) / "meta.json");
    if (!record) continue;
    std::string command;
    if (p->kind == Kind::run)
      if (auto c = read_owned(staging_dir(id) / "command")) command = std::move(*c);
    moves.push_back({id, summary_line(id, *record, command), listable(*p) ? listing::line(*p) : std::string()});
  }
  if (moves.empty()) return size_t{0};
  KAI_TRY(make_dirs(m_dir / "archive", 0700));
  // Each bucket's summary names its new proposals before they move: a line
  // whose folder is still in staging/ is not read (the folder wins), so a
  // crash between leaves every proposal listed once, and the next sweep
  // moves the rest.
  std::vector<int> buckets;
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
    auto lines = read_summary(bucket);
    for (const Move& m : moves) {
      if (m.id / k_bucket_size != b) continue;
      lines.erase(std::remove_if(lines.begin(), lines.end(), [&m](const auto& l) { return l.first == m.id; }),
                  lines.end());
      lines.emplace_back(m.id, m.line);
    }
    KAI_TRY(write_summary(bucket, std::move(lines)));
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

std::vector<std::string> Store::check_summaries(bool write) const { return check_summaries(audit(), write); }

Store::Audit Store::audit() const {
  Audit a;
  auto all = ids();
  for (int id : all ? *all : std::vector<int>{}) {
    Audit::Entry e;
    e.id = id;
    e.archived = !plain_dir(staging_dir(id));
    std::string record;
    auto p = load(id, Payloads::none, e.archived ? &record : nullptr);
    // An archived run: its command is read and checked against the seal,
    // as the listing vouches for it.
    if (p && e.archived && p->kind == Kind::run) p = load(id, Payloads::all);
    if (p)
      e.proposal = std::move(*p);
    else
      e.error = p.error().message;
    if (e.archived && !record.empty()) {
      std::string command;
      if (e.proposal && e.proposal->kind == Kind::run)
        if (auto c = read_owned(archive_dir(id) / "command")) command = std::move(*c);
      e.summary_line = summary_line_of(id, record, command);
    }
    a.entries.push_back(std::move(e));
  }
  return a;
}

std::vector<std::string> Store::check_summaries(const Audit& a, bool write) const {
  std::vector<std::string> wrong;
  auto entry = a.entries.begin();
  for (int b : numbered(m_dir / "archive")) {
    const fs::path bucket = m_dir / "archive" / std::to_string(b);
    if (!plain_dir(bucket)) continue;
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
    const bool summary_ok = read_summary(bucket) == want;
    const bool listing_ok = listed && *listed == want_listed;
    if (summary_ok && listing_ok) continue;
    wrong.push_back(bucket.filename().string());
    if (!write) continue;
    if (!summary_ok) (void)write_summary(bucket, std::move(want));
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
    named = x->ids;
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

Result<std::vector<int>> Store::remove_unrecorded() const {
  std::vector<int> gone = unrecorded();
  for (int id : gone) {
    std::error_code ec;
    fs::remove_all(staging_dir(id), ec);
    if (ec)
      return make_error(Errc::io, fmt::format("cannot remove '{}', left without a record by an interrupted command: {}",
                                              staging_dir(id).string(), ec.message()));
  }
  return gone;
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
