#pragma once
// Secrets never leave kaicoder (SPEC §7): values of environment variables
// whose names contain KEY, TOKEN, SECRET or PASSWORD, values assigned in
// secret files (.env and friends), and well-known token shapes are replaced
// by [REDACTED:NAME] in everything kaicoder prints or stores.
//
// Usage: Redactor r; r.add_env(vars); r.add_secret_file(".env", bytes);
//        std::string safe = r.apply(text);

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kai {

class Redactor {
public:
  // Values shorter than this are too likely to occur by chance to hide.
  static constexpr size_t k_min_length = 6;

  // Keeps the variables whose names mark them as secrets (case-insensitive).
  void add_env(const std::vector<std::pair<std::string, std::string>>& vars);
  // KEY=VALUE / export KEY="VALUE" / KEY: VALUE / "KEY": "VALUE", lines of a
  // secret file; every value is secret there, whatever its name.
  void add_secret_file(std::string_view label, std::string_view content);
  void add(std::string name, std::string value);

  // `text` with every known value and every token shape replaced.
  std::string apply(std::string_view text) const;
  // How many values apply() hides in `text`.
  size_t hidden(std::string_view text) const;
  // Whether apply() could change `text` at all (a known value, a token
  // shape's prefix or a private key block's start occurs in it): when not,
  // apply() returns it as it is, so a caller need not copy it.
  bool could_hide(std::string_view text) const;
  bool empty() const { return m_secrets.empty(); }

  static bool secret_name(std::string_view name);

private:
  std::vector<std::pair<std::string, std::string>> m_secrets;  // (name, value), longest value first
};

}  // namespace kai
