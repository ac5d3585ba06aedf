#include "lib/store/mac.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/sha.hpp"
#include "lib/util/strings.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_key_file = "key";

std::string key_path(const fs::path& owner_dir) { return (owner_dir / k_key_file).string(); }

Error unsound(const fs::path& owner_dir, const std::string& why) {
  return make_error(Errc::denied, fmt::format("kaicoder's key '{}' {}", key_path(owner_dir), why),
                    fmt::format("remove it and run 'kaicoder init' at a terminal to make a new one (records it sealed "
                                "then no longer verify); or fix it: chmod 600 {}",
                                key_path(owner_dir)));
}

// The folder that holds the key: a folder of ours nobody else may write
// (whoever can write it can swap the key).
Status check_folder(const fs::path& owner_dir, int dfd) {
  struct stat st {};
  if (::fstat(dfd, &st) != 0)
    return make_error(Errc::io, fmt::format("cannot inspect '{}': {}", owner_dir.string(), errno_text(errno)));
  if (st.st_uid != ::getuid())
    return make_error(Errc::denied, fmt::format("kaicoder's folder '{}' is not owned by you", owner_dir.string()),
                      "it must belong to the user who runs kaicoder");
  if ((st.st_mode & 022) != 0)
    return make_error(Errc::denied,
                      fmt::format("kaicoder's folder '{}' can be written by other users (mode {:o})",
                                  owner_dir.string(), st.st_mode & 0777),
                      fmt::format("chmod 700 {}", owner_dir.string()));
  return ok_status();
}

Result<MacKey> read_key(const fs::path& owner_dir, int dfd) {
  Fd f(::openat(dfd, std::string(k_key_file).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (f.get() < 0) {
    if (errno == ENOENT)
      return make_error(Errc::not_found, fmt::format("there is no kaicoder key at '{}'", key_path(owner_dir)));
    if (errno == ELOOP) return unsound(owner_dir, "is a symlink");
    return make_error(Errc::io, fmt::format("cannot open '{}': {}", key_path(owner_dir), errno_text(errno)));
  }
  struct stat st {};
  if (::fstat(f.get(), &st) != 0)
    return make_error(Errc::io, fmt::format("cannot inspect '{}': {}", key_path(owner_dir), errno_text(errno)));
  if (!S_ISREG(st.st_mode)) return unsound(owner_dir, "is not a regular file");
  if (st.st_uid != ::getuid()) return unsound(owner_dir, "is not owned by you");
  if ((st.st_mode & 077) != 0)
    return unsound(owner_dir, fmt::format("is open to other users (mode {:o})", st.st_mode & 0777));
  MacKey k;
  if (st.st_size != static_cast<off_t>(k.bytes.size())) return unsound(owner_dir, "is not 32 bytes long");
  auto bytes = read_all(f.get());
  if (!bytes) return bytes.error();
  if (bytes->size() != k.bytes.size()) return unsound(owner_dir, "is not 32 bytes long");
  std::copy(bytes->begin(), bytes->end(), k.bytes.begin());
  return k;
}

Result<int> open_folder(const fs::path& owner_dir) {
  int dfd = ::open(owner_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    if (errno == ENOENT)
      return make_error(Errc::not_found, fmt::format("there is no kaicoder key at '{}'", key_path(owner_dir)));
    return make_error(Errc::io, fmt::format("cannot open '{}': {}", owner_dir.string(), errno_text(errno)));
  }
  return dfd;
}

}  // namespace

Result<MacKey> load_key(const fs::path& owner_dir) {
  if (owner_dir.empty())
    return make_error(Errc::not_found, "there is no kaicoder key: no folder for kaicoder's own files is known");
  auto dfd = open_folder(owner_dir);
  if (!dfd) return dfd.error();
  Fd d(*dfd);
  KAI_TRY(check_folder(owner_dir, d.get()));
  return read_key(owner_dir, d.get());
}

Result<bool> create_key(const fs::path& owner_dir) {
  if (owner_dir.empty()) return make_error(Errc::io, "no folder for kaicoder's own files is known");
  std::error_code ec;
  if (!fs::exists(owner_dir, ec)) {
    KAI_TRY(make_dirs(owner_dir.parent_path(), 0755));
    if (::mkdir(owner_dir.c_str(), 0700) != 0 && errno != EEXIST)
      return make_error(Errc::io, fmt::format("cannot create '{}': {}", owner_dir.string(), errno_text(errno)));
  }
  auto dfd = open_folder(owner_dir);
  if (!dfd) return dfd.error();
  Fd d(*dfd);
  KAI_TRY(check_folder(owner_dir, d.get()));
  ::fchmod(d.get(), 0700);  // the folder holds the key: nobody else looks in
  if (auto k = read_key(owner_dir, d.get()); k || k.error().code != Errc::not_found) {
    if (!k) return k.error();
    return false;
  }
  auto fresh = random_key();
  if (!fresh) return fresh.error();
  const MacKey& k = *fresh;
  const std::string name(k_key_file);
  Fd f(::openat(d.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (f.get() < 0) {
    // Another init made it meanwhile: use that one if it is sound.
    if (errno == EEXIST) {
      auto again = read_key(owner_dir, d.get());
      if (!again) return again.error();
      return false;
    }
    return make_error(Errc::io, fmt::format("cannot create '{}': {}", key_path(owner_dir), errno_text(errno)));
  }
  std::string_view bytes(reinterpret_cast<const char*>(k.bytes.data()), k.bytes.size());
  if (::fchmod(f.get(), 0600) != 0 || !write_all(f.get(), bytes) || ::fsync(f.get()) != 0) {
    int err = errno;
    ::unlinkat(d.get(), name.c_str(), 0);
    return make_error(Errc::io, fmt::format("cannot write '{}': {}", key_path(owner_dir), errno_text(err)));
  }
  ::fsync(d.get());
  return true;
}

Result<MacKey> random_key() {
  MacKey k;
  for (size_t got = 0; got < k.bytes.size();) {
    ssize_t n = ::getrandom(k.bytes.data() + got, k.bytes.size() - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(Errc::io, fmt::format("cannot get random bytes for a key: {}", errno_text(errno)));
    got += static_cast<size_t>(n);
  }
  return k;
}

std::string mac_hex(const MacKey& key, std::string_view bytes) {
  const auto out = hmac_sha256(std::string_view(reinterpret_cast<const char*>(key.bytes.data()), key.bytes.size()), bytes);
  return lower_hex(std::string_view(reinterpret_cast<const char*>(out.data()), out.size()));
}

bool same_mac(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Sealer::Sealer(const fs::path& owner_dir, const fs::path& root) : m_root(root.string()), m_owner_dir(owner_dir) {
  auto k = load_key(owner_dir);
  if (k) {
    m_key = *k;
    return;
  }
  Error e = k.error();
  if (e.code == Errc::not_found) {
    e.code = Errc::denied;
    e.message += "; kaicoder cannot seal or check its records without it";
    e.hint = "run 'kaicoder init' at a terminal (it makes the key once for all your trees)";
  }
  m_error = std::move(e);
}

Status Sealer::usable() const {
  if (m_key) return ok_status();
  if (m_error) return *m_error;
  return make_error(Errc::denied, "there is no kaicoder key to seal or check records with",
                    "run 'kaicoder init' at a terminal");
}

std::string Sealer::input(std::string_view kind, std::string_view id, std::string_view bytes) const {
  // Length prefixes keep every field apart, whatever bytes it holds.
  std::string s;
  auto field = [&s](std::string_view f) {
    s += fmt::format("{}:", f.size());
    s += f;
    s += '\n';
  };
  if (m_store.empty()) {
    s = "kaicoder-seal-1\n";  // a store from before identities: the root alone
    for (std::string_view f : {kind, std::string_view(m_root), id, bytes}) field(f);
  } else {
    s = "kaicoder-seal-2\n";
    for (std::string_view f : {kind, std::string_view(m_root), std::string_view(m_store), id, bytes}) field(f);
  }
  return s;
}

Result<std::string> Sealer::seal_store_id(std::string_view id) const {
  Sealer root_only = *this;
  root_only.m_store.clear();
  return root_only.seal("store", id, "");
}

SealCheck Sealer::check_store_id(std::string_view id, std::string_view mac) const {
  Sealer root_only = *this;
  root_only.m_store.clear();
  return root_only.check("store", id, "", mac);
}

Result<std::string> Sealer::note_store(std::string_view id) const {
  KAI_TRY(usable());
  Sealer root_only = *this;
  root_only.m_store.clear();
  const std::string root_mac = mac_hex(*m_key, root_only.input("root", "", ""));
  const fs::path note = m_owner_dir / "stores" / root_mac;
  std::string before;
  if (auto text = read_file(note)) before = text->substr(0, text->find('\n'));
  std::error_code ec;
  if (before.empty() && fs::is_directory(m_owner_dir / "spent" / root_mac, ec)) before = "unknown";
  KAI_TRY(make_dirs(note.parent_path(), 0700));
  KAI_TRY(write_file_atomic(note, std::string(id) + "\n", 0600));
  return before;
}

Result<std::string> Sealer::seal(std::string_view kind, std::string_view id, std::string_view bytes) const {
  KAI_TRY(usable());
  return mac_hex(*m_key, input(kind, id, bytes));
}

SealCheck Sealer::check(std::string_view kind, std::string_view id, std::string_view bytes,
                        std::string_view mac) const {
  if (!m_key) return SealCheck::no_key;
  if (mac.empty()) return SealCheck::missing;
  return same_mac(mac_hex(*m_key, input(kind, id, bytes)), mac) ? SealCheck::ok : SealCheck::bad;
}

fs::path Sealer::spent_path(std::string_view kind, std::string_view id) const {
  // Named by a MAC of the root: no path characters, and nothing learnt from a name.
  return m_owner_dir / "spent" / mac_hex(*m_key, input("root", "", "")) / fmt::format("{}-{}", kind, id);
}

Status Sealer::spend(std::string_view kind, std::string_view id) const {
  KAI_TRY(usable());
  const fs::path p = spent_path(kind, id);
  KAI_TRY(make_dirs(p.parent_path().parent_path(), 0700));
  KAI_TRY(make_dirs(p.parent_path(), 0700));
  auto w = write_file_exclusive(p, "", 0600);
  if (!w && w.error().code != Errc::conflict) return w.error();
  return ok_status();
}

bool Sealer::spent(std::string_view kind, std::string_view id) const {
  if (!m_key) return false;
  struct stat st {};
  return ::lstat(spent_path(kind, id).c_str(), &st) == 0;
}

Error seal_error(const Sealer& sealer, SealCheck verdict, const std::string& what, const std::string& hint) {
  if (verdict == SealCheck::no_key) {
    auto u = sealer.usable();
    if (!u) return u.error();
  }
  return make_error(Errc::conflict,
                    verdict == SealCheck::missing
                        ? fmt::format("{} was not written by kaicoder (it has no seal: a record from before seals, or "
                                      "a forged one)",
                                      what)
                        : fmt::format("{} was not written by kaicoder (its seal does not verify)", what),
                    hint);
}

}  // namespace kai
