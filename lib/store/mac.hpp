#pragma once
// Seals: keyed MACs (HMAC-SHA-256) over every record under the state dir
// that a later command trusts — proposal records (and so decisions),
// journal records and their pointers, intents, the dependency cache. Anyone
// who can write the state dir can write a record; only the owner's key can
// seal one, so a record kaicoder did not write is refused, never obeyed.
//
// The key is 32 random bytes in <owner_dir>/key (mode 600, folder 700),
// made once by `kaicoder init` and shared by every root of that owner. A seal
// covers what the record is (`kind`), the root it belongs to, its identity
// (proposal id, rollback id, intent name, path) and its bytes, so a valid
// record copied to another id or another root does not verify.
//
// Usage: create_key(owner_dir) once (init);
//        Sealer s{owner_dir, root};  auto mac = s.seal("proposal", "12", bytes);
//        s.check("proposal", "12", bytes, mac) == SealCheck::ok

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "lib/result.hpp"

namespace kai {

struct MacKey {
  std::array<unsigned char, 32> bytes{};
};

// Create <owner_dir>/key from getrandom() unless it exists: the folder made
// 0700, the file created exclusively (O_EXCL|O_NOFOLLOW), mode 0600. Returns
// true when it made a key, false when a sound one was already there; denied
// when the existing file fails load_key's checks, io on a system error.
Result<bool> create_key(const std::filesystem::path& owner_dir);

// Read <owner_dir>/key without following a symlink. not_found when it does
// not exist; denied when it is not a regular file owned by the real uid, is
// readable or writable by group or others, or is not exactly 32 bytes.
Result<MacKey> load_key(const std::filesystem::path& owner_dir);

// 32 fresh bytes from getrandom(). Errors: io when the kernel gives none.
Result<MacKey> random_key();

// HMAC-SHA-256 of `bytes` under `key`, as 64 lowercase hex digits.
std::string mac_hex(const MacKey& key, std::string_view bytes);

// Equal strings, compared in time that depends only on their lengths.
bool same_mac(std::string_view a, std::string_view b);

enum class SealCheck {
  ok,       // sealed by this owner's key for this root and identity
  missing,  // no seal at all (a record written before seals, or stripped)
  bad,      // a seal that does not verify: forged, changed, or copied
  no_key,   // the owner has no usable key, so nothing can be checked
};

class Sealer {
public:
  Sealer() = default;  // no key: nothing seals, nothing verifies
  // Loads the key now; a missing or unsound key is kept as the error that
  // usable() returns.
  Sealer(const std::filesystem::path& owner_dir, const std::filesystem::path& root);

  // ok when records can be sealed and checked; denied (with the fix) when not.
  Status usable() const;
  // The seal of a record; usable()'s error when there is no key.
  Result<std::string> seal(std::string_view kind, std::string_view id, std::string_view bytes) const;
  // Verdict on `mac` (empty = missing) for this record.
  SealCheck check(std::string_view kind, std::string_view id, std::string_view bytes, std::string_view mac) const;

  // Freshness, which a seal alone cannot give: a sealed record put back
  // after it was acted on still verifies. So what must happen once (a
  // proposal applied, a command run) is also noted in the owner's folder,
  // out of reach of whatever can write the state dir:
  // <owner_dir>/spent/<root's MAC>/<kind>-<id>, created exclusively.
  // spend(): ok when noted now or before; denied without a key, io on error.
  Status spend(std::string_view kind, std::string_view id) const;
  // True when spend() was called for this root, kind and id.
  bool spent(std::string_view kind, std::string_view id) const;

  // Bind every seal and once-only note to the store `id` as well as to the
  // root (lib/store/store, store_identity): a state dir removed and made
  // anew gets a new id, so neither the records nor the notes of the store
  // before it count in it. Empty (a store made before stores had an
  // identity): bound to the root alone, as before.
  void use_store(std::string id) { m_store = std::move(id); }
  const std::string& store_id() const { return m_store; }
  // The seal of a store identity itself, bound to the root alone.
  Result<std::string> seal_store_id(std::string_view id) const;
  SealCheck check_store_id(std::string_view id, std::string_view mac) const;
  // Note `id` as this root's store in the owner's folder
  // (<owner_dir>/stores/<root's MAC>); returns the id noted before, "" for
  // none, or "unknown" when this root had a store before stores had an
  // identity (its once-only notes are there).
  Result<std::string> note_store(std::string_view id) const;
  // Turn the sealer off: every seal and check then fails with `e`.
  void refuse(Error e) {
    m_key.reset();
    m_error = std::move(e);
  }

private:
  std::string input(std::string_view kind, std::string_view id, std::string_view bytes) const;

  std::filesystem::path spent_path(std::string_view kind, std::string_view id) const;

  std::optional<MacKey> m_key;
  std::optional<Error> m_error;
  std::string m_root;
  std::string m_store;
  std::filesystem::path m_owner_dir;
};

// The refusal for a record that did not verify: conflict, "<what> was not
// written by kaicoder (its seal does not verify)" or "… has no seal …", or
// the missing-key error for no_key. `hint` says what to do instead.
Error seal_error(const Sealer& sealer, SealCheck verdict, const std::string& what, const std::string& hint);

}  // namespace kai
