#include "lib/store/spool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/store/proposal.hpp"
#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/json_bounded.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace spool {
fs::path dir(const fs::path& state) { return state / "spool"; }
fs::path tickets(const fs::path& state) { return state / "tickets"; }
fs::path status(const fs::path& state) { return state / "status"; }
fs::path claimed(const fs::path& state) { return state / "intake"; }
fs::path quarantine(const fs::path& state) { return state / "spool-quarantine"; }
}  // namespace spool

namespace {

bool real_dir(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string random_hex(size_t bytes) {
  std::string raw(bytes, '\0');
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n <= 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += static_cast<size_t>(n);
  }
  std::string out;
  for (unsigned char c : raw) out += fmt::format("{:02x}", c);
  return out;
}

}  // namespace

bool has_spool(const fs::path& state) { return real_dir(spool::dir(state)); }

bool is_ticket(std::string_view s) {
  if (s.empty() || s.size() > 80) return false;
  bool digits_only = true;
  for (char c : s) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && c != '-') return false;
    if (c < '0' || c > '9') digits_only = false;
  }
  return !digits_only && s.front() != '-';
}

std::string entry_text(const SpoolEntry& e) {
  const char* type = e.type == EntryType::run ? "run" : e.type == EntryType::changeset ? "changeset" : "propose";
  json j{{"version", 1}, {"type", type}, {"cwd", e.cwd}, {"request", e.request}};
  return j.dump() + "\n";
}

Result<SpoolEntry> parse_entry(std::string_view text) {
  auto bad = [](const std::string& why) { return make_error(Errc::usage, "malformed spool entry: " + why); };
  // Strict: no comments, and invalid UTF-8 is an error, not replaced.
  json j = parse_bounded_json(text).value;
  if (j.is_discarded()) return bad("not one JSON value (or not UTF-8)");
  if (!j.is_object()) return bad("not a JSON object");
  for (const auto& [key, v] : j.items())
    if (key != "version" && key != "type" && key != "cwd" && key != "request")
      return bad(fmt::format("unknown field '{}'", key));
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<long>() != 1)
    return bad("'version' must be 1");
  SpoolEntry e;
  const char* k_types = "'type' must be \"propose\", \"run\" or \"changeset\"";
  if (!j.contains("type") || !j["type"].is_string()) return bad(k_types);
  const std::string type = j["type"].get<std::string>();
  if (type == "propose")
    e.type = EntryType::propose;
  else if (type == "run")
    e.type = EntryType::run;
  else if (type == "changeset")
    e.type = EntryType::changeset;
  else
    return bad(k_types);
  if (!j.contains("cwd") || !j["cwd"].is_string()) return bad("'cwd' must be a string");
  e.cwd = j["cwd"].get<std::string>();
  const fs::path cwd(e.cwd);
  if (cwd.is_absolute() || e.cwd.find('\0') != std::string::npos) return bad("'cwd' must be relative to root");
  for (const auto& part : cwd)
    if (part == "..") return bad("'cwd' must not climb out of root");
  if (!j.contains("request") || !j["request"].is_object()) return bad("'request' must be an object");
  e.request = j["request"];
  return e;
}

Result<std::string> write_entry(const fs::path& state, std::string_view text, size_t max, TimePoint now) {
  if (text.size() > max)
    return make_error(Errc::usage, fmt::format("the request is over {} bytes, the most a spool entry may hold", max),
                      "send a smaller change; nothing was spooled");
  const fs::path dir = spool::dir(state);
  if (!real_dir(dir))
    return make_error(Errc::denied, fmt::format("'{}' is not a spool folder", dir.string()),
                      "the owner sets two-user mode up with: kaicoder agent-user setup NAME");
  Fd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dfd.get() < 0)
    return make_error(Errc::denied, fmt::format("cannot open the spool '{}': {}", dir.string(), errno_text(errno)));
  const std::string ticket = fmt::format("{}-{}-{}", compact_utc(now), ::getuid(), random_hex(6));
  const std::string tmp = "." + ticket + ".tmp", name = ticket + ".json";
  Fd fd(::openat(dfd.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0)
    return make_error(errno == EACCES || errno == EPERM ? Errc::denied : Errc::io,
                      fmt::format("cannot write to the spool '{}': {}", dir.string(), errno_text(errno)),
                      "only the agent user (a member of the spool's group) drops proposals there");
  // 0644: the owner, who is not in the agent's group, reads it through the
  // "others" bits; nobody else can pass through the spool folder (3770).
  ::fchmod(fd.get(), 0644);
  if (!write_all(fd.get(), text) || ::fsync(fd.get()) != 0) {
    int err = errno;
    ::unlinkat(dfd.get(), tmp.c_str(), 0);
    return make_error(Errc::io, fmt::format("cannot write the spool entry: {}", errno_text(err)));
  }
  fd.reset();
  if (::renameat2(dfd.get(), tmp.c_str(), dfd.get(), name.c_str(), RENAME_NOREPLACE) != 0) {
    int err = errno;
    ::unlinkat(dfd.get(), tmp.c_str(), 0);
    return make_error(Errc::io, fmt::format("cannot name the spool entry '{}': {}", name, errno_text(err)));
  }
  ::fsync(dfd.get());
  return ticket;
}

Result<EntryRead> read_claimed_entry(const fs::path& dir, const std::string& name, size_t max) {
  const fs::path path = dir / name;
  Fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ELOOP) return make_error(Errc::denied, "the entry is a symlink, which kaicoder never follows");
    return make_error(Errc::denied, fmt::format("cannot open the entry: {}", errno_text(errno)));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return make_error(Errc::io, fmt::format("cannot stat the entry: {}", errno_text(errno)));
  if (!S_ISREG(st.st_mode)) return make_error(Errc::denied, "the entry is not a regular file");
  if (st.st_nlink != 1)
    return make_error(Errc::denied, fmt::format("the entry has {} hard links; an entry has one", st.st_nlink));
  if (st.st_mode & 0002) return make_error(Errc::denied, "the entry is writable by others");
  if (st.st_mode & 07000) return make_error(Errc::denied, "the entry has set-id or sticky bits");
  if (static_cast<unsigned long long>(st.st_size) > max)
    return make_error(Errc::denied, fmt::format("the entry is {} bytes, over the limit of {}", st.st_size, max));
  auto bytes = read_all(fd.get(), max + 1);
  if (!bytes) return bytes.error();
  if (bytes->size() > max)
    return make_error(Errc::denied, fmt::format("the entry grew past the limit of {} bytes", max));
  return EntryRead{static_cast<unsigned>(st.st_uid), std::move(*bytes)};
}

json to_json(const TicketInfo& t) {
  json j{{"ticket", t.ticket},
         {"proposal", t.proposal},
         {"uid", t.uid},
         {"proposer", t.proposer},
         {"quarantined", t.quarantined}};
  if (!t.verdict.empty()) j["verdict"] = t.verdict;
  if (t.error)
    j["error"] = {{"code", static_cast<int>(t.error->code)}, {"message", t.error->message}, {"hint", t.error->hint}};
  return j;
}

Status write_ticket(const fs::path& state, const TicketInfo& t, Replace replace) {
  if (!is_ticket(t.ticket)) return make_error(Errc::usage, "not a ticket name");
  const fs::path to = spool::tickets(state) / (t.ticket + ".json");
  const std::string text = to_json(t).dump() + "\n";
  if (replace == Replace::yes) return write_file_atomic(to, text, 0640);
  const fs::path tmp = spool::tickets(state) / ("." + t.ticket + "." + random_hex(6) + ".tmp");
  KAI_TRY(write_file_exclusive(tmp, text, 0640));
  // link() never replaces: the whole ticket appears at once, or not at all when one is there.
  const bool linked = ::link(tmp.c_str(), to.c_str()) == 0;
  const int err = errno;
  ::unlink(tmp.c_str());
  if (!linked && err != EEXIST)
    return make_error(Errc::io, fmt::format("cannot write ticket '{}': {}", t.ticket, errno_text(err)));
  return ok_status();
}

Result<std::optional<TicketInfo>> read_ticket(const fs::path& state, const std::string& ticket) {
  if (!is_ticket(ticket)) return make_error(Errc::usage, fmt::format("'{}' is not a ticket", ticket));
  const fs::path p = spool::tickets(state) / (ticket + ".json");
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return std::optional<TicketInfo>{};
  if (!S_ISREG(st.st_mode)) return make_error(Errc::io, fmt::format("ticket '{}' is not a regular file", ticket));
  auto text = read_file(p, 1 << 16);
  if (!text) return text.error();
  json j = parse_bounded_json(*text).value;
  if (j.is_discarded() || !j.is_object()) return make_error(Errc::io, fmt::format("ticket '{}' is malformed", ticket));
  try {
    TicketInfo t;
    t.ticket = ticket;
    t.proposal = j.value("proposal", 0);
    t.uid = j.value("uid", -1L);
    t.proposer = j.value("proposer", "");
    t.verdict = j.value("verdict", "");
    t.quarantined = j.value("quarantined", false);
    if (j.contains("error") && j["error"].is_object()) {
      const json& e = j["error"];
      int code = e.value("code", 1);
      t.error = Error{code >= 1 && code <= 8 ? static_cast<Errc>(code) : Errc::io, e.value("message", ""),
                      e.value("hint", "")};
    }
    return std::optional<TicketInfo>(std::move(t));
  } catch (const std::exception&) {
    return make_error(Errc::io, fmt::format("ticket '{}' is malformed", ticket));
  }
}

Status mirror_status(const fs::path& state, int id, const fs::path& folder, std::string_view record,
                     long approval_timeout) {
  const fs::path dir = spool::status(state);
  if (!real_dir(dir)) return ok_status();
  // The status, not what binds a decision: the approval digest, the
  // payloads' digest and the seal stay where the agent user cannot read them.
  json j = parse_bounded_json(record).value;
  if (j.is_discarded() || !j.is_object()) return make_error(Errc::io, "not a proposal record");
  for (const char* k : {"approved_digest", "payload_digest", "seal"}) j.erase(k);
  if (approval_timeout > 0) j["approval_timeout"] = approval_timeout;
  // What a run printed (captured, capped and redacted when it ran) goes with
  // it, so the agent's `run --wait` reports it as the owner's would.
  for (const char* stream : {"stdout", "stderr"}) {
    const fs::path from = folder / stream;
    struct stat st {};
    if (::lstat(from.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (auto bytes = read_file(from, 16 << 20))
      (void)write_file_atomic(dir / fmt::format("{}.{}", id, stream), *bytes, 0640);
  }
  return write_file_atomic(dir / fmt::format("{}.json", id), j.dump(2) + "\n", 0640);
}

Status mirror_status_diff(const fs::path& state, int id, std::string_view diff) {
  const fs::path dir = spool::status(state);
  if (!real_dir(dir)) return ok_status();
  return write_file_atomic(dir / fmt::format("{}.diff", id), diff, 0640);
}

std::string read_status_output(const fs::path& state, int id, const std::string& stream) {
  const fs::path p = spool::status(state) / fmt::format("{}.{}", id, stream);
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  auto bytes = read_file(p, 16 << 20);
  return bytes ? *bytes : std::string();
}

Result<std::string> read_status(const fs::path& state, int id) {
  const fs::path p = spool::status(state) / fmt::format("{}.json", id);
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return make_error(Errc::not_found, fmt::format("no proposal {}", id));
  return read_file(p, 16 << 20);
}

std::vector<int> status_ids(const fs::path& state) {
  std::vector<int> ids;
  std::error_code ec;
  for (fs::directory_iterator it(spool::status(state), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 6 || name.substr(name.size() - 5) != ".json") continue;
    const std::string num = name.substr(0, name.size() - 5);
    if (auto id = parse_proposal_id(num)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> waiting_entries(const fs::path& state) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(spool::dir(state), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.empty() && name.front() != '.') out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kai
