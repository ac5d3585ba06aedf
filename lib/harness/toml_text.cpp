#include "lib/harness/toml_text.hpp"

#include <regex>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace kai::harness {
namespace {

Result<toml::table> parse_toml(const std::string& text) {
  try {
    return toml::parse(text);
  } catch (const toml::parse_error& e) {
    return make_error(Errc::usage,
                      fmt::format("not valid TOML at line {}: {}", e.source().begin.line, e.description()));
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    out.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// The table a header line opens ("" when the line is not one); `array` for [[x]].
std::string header_of(const std::string& line, bool& array) {
  static const std::regex head(R"(^\s*(\[\[?)\s*([A-Za-z0-9_.\- "']+?)\s*\]\]?\s*(#.*)?$)");
  std::smatch m;
  if (!std::regex_match(line.begin(), line.end() - (line.ends_with("\n") ? 1 : 0), m, head)) return {};
  array = m[1].length() == 2;
  std::string name;
  for (char c : m[2].str())
    if (c != ' ') name += c;
  return name;
}

// Where the comment of a one-line scalar value starts (npos: none), or a
// conflict when the value goes on past the line.
Result<size_t> comment_after(const std::string& rest) {
  std::string v = trimmed(rest);
  if (v.starts_with("\"\"\"") || v.starts_with("'''")) return make_error(Errc::conflict, "a multi-line string");
  int depth = 0;
  char quote = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (quote) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '[' || c == '{')
      ++depth;
    else if (c == ']' || c == '}')
      --depth;
    else if (c == '#')
      return depth == 0 ? i : std::string::npos;
  }
  if (depth != 0 || quote) return make_error(Errc::conflict, "a value spread over several lines");
  return std::string::npos;
}

}  // namespace

Result<TomlText> TomlText::parse(std::string text) {
  auto t = parse_toml(text);
  if (!t) return t.error();
  return TomlText(std::move(text));
}

bool TomlText::holds(const std::string& table, const std::string& key, const std::string& value) const {
  auto have = parse_toml(m_text);
  auto want = parse_toml("v = " + value);
  if (!have || !want) return false;
  const toml::table* tbl = &*have;
  if (!table.empty()) tbl = have->at_path(table).as_table();
  if (!tbl) return false;
  const toml::node* got = tbl->get(key);
  const toml::node* exp = want->get("v");
  if (!got || !exp) return false;
  std::ostringstream a, b;
  a << toml::node_view<const toml::node>(got);
  b << toml::node_view<const toml::node>(exp);
  return a.str() == b.str();
}

Status TomlText::set(const std::string& table, const std::string& key, const std::string& value) {
  const std::string by_hand =
      fmt::format("add `{} = {}`{} by hand", key, value, table.empty() ? " at the top" : " under [" + table + "]");
  const std::string before = m_text;
  std::vector<std::string> lines = lines_of(m_text);
  // The region of the table: after its header up to the next header.
  size_t from = 0, to = lines.size();
  bool found_table = table.empty();
  for (size_t i = 0; i < lines.size(); ++i) {
    bool array = false;
    std::string h = header_of(lines[i], array);
    if (h.empty()) continue;
    if (found_table) {
      to = i;
      break;
    }
    if (!array && h == table) {
      found_table = true;
      from = i + 1;
    }
  }
  if (!found_table) {
    std::string add = m_text.empty() || m_text.ends_with("\n") ? "" : "\n";
    add += fmt::format("{}[{}]\n{} = {}\n", m_text.empty() ? "" : "\n", table, key, value);
    m_text += add;
  } else {
    const std::regex key_line("^\\s*" + std::regex_replace(key, std::regex(R"([.^$|()\[\]{}*+?\\-])"), R"(\$&)") +
                              R"(\s*=)");
    size_t hit = to;
    for (size_t i = from; i < to; ++i)
      if (std::regex_search(lines[i], key_line)) hit = i;
    if (hit < to) {
      std::string& l = lines[hit];
      size_t eq = l.find('=');
      std::string rest = l.substr(eq + 1);
      auto c = comment_after(rest);
      if (!c) m_text = before;
      if (!c)
        return make_error(Errc::conflict,
                          fmt::format("'{}' holds {}: kaicoder cannot edit it as text", key, c.error().message),
                          by_hand);
      std::string comment = *c == std::string::npos ? "" : " " + trimmed(rest.substr(*c));
      l = l.substr(0, eq + 1) + " " + value + comment + "\n";
    } else {
      size_t at = to;
      while (at > from && trimmed(lines[at - 1]).empty()) --at;
      lines.insert(lines.begin() + static_cast<long>(at), fmt::format("{} = {}\n", key, value));
      if (at > 0 && !lines[at - 1].ends_with("\n")) lines[at - 1] += "\n";
      if (table.empty() && at == 0 && lines.size() > 1 && !trimmed(lines[1]).empty())
        lines.insert(lines.begin() + 1, "\n");
    }
    m_text.clear();
    for (const auto& l : lines) m_text += l;
  }
  auto back = parse_toml(m_text);
  if (!back) m_text = before;
  if (!back)
    return make_error(Errc::conflict, fmt::format("the edit would not read back as TOML ({})", back.error().message),
                      by_hand);
  if (!holds(table, key, value)) {
    m_text = before;
    return make_error(Errc::conflict, fmt::format("'{}' is set elsewhere in a way kaicoder cannot edit as text", key),
                      by_hand);
  }
  return ok_status();
}

}  // namespace kai::harness
