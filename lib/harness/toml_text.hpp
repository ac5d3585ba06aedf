#pragma once
// A TOML settings file (Codex's `.codex/config.toml`) edited as text, so
// that an edit keeps every key, every comment and the owner's layout. Each
// edit sets one key in one table, replacing its one-line value or adding
// the key (and the table, at the end, when there is none); the result is
// parsed again and an edit that would not read back as asked — a value
// spread over lines, a table also defined by dotted keys — is refused, so
// nothing is ever written that TOML readers would take differently.

#include <string>

#include "lib/result.hpp"

namespace kai::harness {

class TomlText {
public:
  // Errc::usage naming the line when `text` is not TOML. Empty text is fine.
  static Result<TomlText> parse(std::string text);

  const std::string& text() const { return m_text; }

  // Whether `key` of `table` ("" = the top level; "a.b" = [a.b]) holds the
  // value of TOML literal `value` (`"read-only"`, `true`, `["a", "b"]`).
  bool holds(const std::string& table, const std::string& key, const std::string& value) const;

  // Set `key` of `table` to the literal `value`. Errc::conflict when it
  // cannot be done as text (see above), naming what to add by hand.
  Status set(const std::string& table, const std::string& key, const std::string& value);

private:
  explicit TomlText(std::string text) : m_text(std::move(text)) {}
  std::string m_text;
};

}  // namespace kai::harness
