#include "lib/paths/redact.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstdint>

#include "lib/util/strings.hpp"

namespace kai {

namespace {

std::string upper(std::string_view s) {
  std::string u(s);
  for (auto& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Blanks either side, and the CR of a CRLF line.
std::string_view trim_env_line(std::string_view s) { return trim_right(trim_left(s), " \t\r"); }

bool token_char(char c, std::string_view extra) {
  return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
}

// A token shape: a fixed prefix followed by at least `min_tail` token characters.
struct Shape {
  std::string_view prefix;
  size_t min_tail;
  std::string_view extra;  // characters allowed in the tail besides letters and digits
  std::string_view name;
};

constexpr Shape k_shapes[] = {
    {"ghp_", 30, "", "GITHUB_TOKEN"},     {"gho_", 30, "", "GITHUB_TOKEN"},
    {"ghu_", 30, "", "GITHUB_TOKEN"},     {"ghs_", 30, "", "GITHUB_TOKEN"},
    {"ghr_", 30, "", "GITHUB_TOKEN"},     {"github_pat_", 30, "_", "GITHUB_TOKEN"},
    {"glpat-", 20, "_-", "GITLAB_TOKEN"}, {"AKIA", 16, "", "AWS_ACCESS_KEY"},
    {"ASIA", 16, "", "AWS_ACCESS_KEY"},   {"xoxb-", 10, "-", "SLACK_TOKEN"},
    {"xoxp-", 10, "-", "SLACK_TOKEN"},    {"xoxa-", 10, "-", "SLACK_TOKEN"},
    {"xoxs-", 10, "-", "SLACK_TOKEN"},    {"sk-ant-", 20, "_-", "API_KEY"},
    {"sk-proj-", 20, "_-", "API_KEY"},    {"sk-", 32, "_-", "API_KEY"},
    {"AIza", 35, "_-", "GOOGLE_API_KEY"}, {"npm_", 36, "", "NPM_TOKEN"},
    {"pypi-", 50, "_-", "PYPI_TOKEN"},
};

// How a private key block begins.
constexpr std::string_view k_key_begin = "-----BEGIN ";

void replace_shapes(std::string& text) {
  for (const Shape& s : k_shapes) {
    for (size_t at = text.find(s.prefix); at != std::string::npos; at = text.find(s.prefix, at + 1)) {
      if (at > 0 && token_char(text[at - 1], "_-")) continue;  // inside a longer word
      size_t end = at + s.prefix.size();
      while (end < text.size() && token_char(text[end], s.extra)) ++end;
      if (end - at - s.prefix.size() < s.min_tail) continue;
      std::string mark = "[REDACTED:" + std::string(s.name) + "]";
      text.replace(at, end - at, mark);
      at += mark.size() - 1;
    }
  }
}

void replace_private_keys(std::string& text) {
  const std::string_view begin = k_key_begin, end_mark = "-----END ";
  for (size_t at = text.find(begin); at != std::string::npos; at = text.find(begin, at + 1)) {
    size_t eol = text.find("-----", at + begin.size());
    if (eol == std::string::npos) break;
    std::string_view label(text.data() + at + begin.size(), eol - at - begin.size());
    if (label.find("PRIVATE KEY") == std::string_view::npos) continue;
    size_t stop = text.find(end_mark, eol);
    size_t close = stop == std::string::npos ? std::string::npos : text.find("-----", stop + end_mark.size());
    // An unterminated block is hidden to the end: better too much than a leak.
    size_t last = close == std::string::npos ? text.size() : close + 5;
    const std::string mark = "[REDACTED:PRIVATE_KEY]";
    text.replace(at, last - at, mark);
  }
}

// For each byte, the prefixes (bit i: k_shapes[i]; bit 31: the start of a
// private key block) that have it first, and those that have it second.
constexpr uint32_t k_key_bit = uint32_t{1} << 31;
static_assert(std::size(k_shapes) < 31);
static_assert(std::all_of(std::begin(k_shapes), std::end(k_shapes), [](const Shape& s) { return s.prefix.size() > 2; }) &&
              k_key_begin.size() > 2);
using ByteBits = std::array<uint32_t, 256>;
constexpr ByteBits prefix_bytes(size_t at) {
  ByteBits t{};
  for (size_t i = 0; i < std::size(k_shapes); ++i) t[static_cast<unsigned char>(k_shapes[i].prefix[at])] |= uint32_t{1} << i;
  t[static_cast<unsigned char>(k_key_begin[at])] |= k_key_bit;
  return t;
}
constexpr ByteBits k_first = prefix_bytes(0), k_second = prefix_bytes(1);

}  // namespace

bool Redactor::secret_name(std::string_view name) {
  std::string u = upper(name);
  for (const char* marker : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"})
    if (u.find(marker) != std::string::npos) return true;
  return false;
}

void Redactor::add(std::string name, std::string value) {
  if (value.size() < k_min_length) return;
  for (const auto& [n, v] : m_secrets)
    if (v == value) return;
  m_secrets.emplace_back(std::move(name), std::move(value));
  // Longest first, so a value that contains another is replaced whole.
  std::stable_sort(m_secrets.begin(), m_secrets.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
}

void Redactor::add_env(const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [name, value] : vars)
    if (secret_name(name)) add(name, value);
}

void Redactor::add_secret_file(std::string_view label, std::string_view content) {
  size_t pos = 0;
  while (pos < content.size()) {
    size_t eol = content.find('\n', pos);
    std::string_view line =
        trim_env_line(content.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos));
    pos = eol == std::string_view::npos ? content.size() : eol + 1;
    if (line.empty() || line.front() == '#') continue;
    if (line.substr(0, 7) == "export ") line = trim_env_line(line.substr(7));
    size_t sep = line.find_first_of("=:");
    if (sep == std::string_view::npos) continue;
    std::string_view name = trim_env_line(line.substr(0, sep));
    std::string_view value = trim_env_line(line.substr(sep + 1));
    // JSON credential files (auth.json, .docker/config.json): "name": "value",
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    if (!value.empty() && value.back() == ',') value = trim_env_line(value.substr(0, value.size() - 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    add(name.empty() ? std::string(label) : std::string(name), std::string(value));
  }
}

// Whether apply() could change `text` at all: a known value, the start of a
// private key block or a token shape's prefix occurs in it. Every step of
// apply() begins with one of these finds, so when none occurs it returns
// `text` as it is.
bool Redactor::could_hide(std::string_view text) const {
  for (const auto& [name, value] : m_secrets)
    if (text.find(value) != std::string_view::npos) return true;
  // One pass over the text for every prefix at once (a changeset's files
  // are megabytes): only where two bytes begin one are they compared.
  // Every prefix is longer than two bytes, so none begins at the last.
  for (size_t at = 0; at + 1 < text.size(); ++at) {
    uint32_t bits = k_first[static_cast<unsigned char>(text[at])] & k_second[static_cast<unsigned char>(text[at + 1])];
    if (bits == 0) continue;
    const std::string_view rest = text.substr(at);
    if ((bits & k_key_bit) && rest.starts_with(k_key_begin)) return true;
    bits &= ~k_key_bit;
    for (; bits != 0; bits &= bits - 1)
      if (rest.starts_with(k_shapes[std::countr_zero(bits)].prefix)) return true;
  }
  return false;
}

size_t Redactor::hidden(std::string_view text) const {
  // The common case, megabytes of content with no secret in them: scanned,
  // not copied.
  if (!could_hide(text)) return 0;
  auto marks = [](std::string_view s) {
    size_t n = 0;
    for (size_t at = s.find("[REDACTED:"); at != std::string_view::npos; at = s.find("[REDACTED:", at + 1)) ++n;
    return n;
  };
  size_t before = marks(text), after = marks(apply(text));
  return after > before ? after - before : 0;
}

std::string Redactor::apply(std::string_view text) const {
  std::string out(text);
  if (!could_hide(text)) return out;
  for (const auto& [name, value] : m_secrets) {
    const std::string mark = "[REDACTED:" + name + "]";
    for (size_t at = out.find(value); at != std::string::npos; at = out.find(value, at + mark.size()))
      out.replace(at, value.size(), mark);
  }
  replace_private_keys(out);
  replace_shapes(out);
  return out;
}

}  // namespace kai
