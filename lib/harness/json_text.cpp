#include "lib/harness/json_text.hpp"

#include <fmt/format.h>

namespace kai::harness {
namespace {

using json = nlohmann::json;

struct Node {
  enum class Type { object, array, scalar } type = Type::scalar;
  size_t begin = 0, end = 0;  // the value's text: [begin, end)
  std::vector<std::string> keys;
  std::vector<size_t> key_begin;
  std::vector<Node> kids;  // members' values, or the array's items
  json value;
};

// Past whitespace and comments from `pos`; npos at an unterminated comment.
size_t skip_blank(std::string_view t, size_t pos) {
  while (pos < t.size()) {
    char c = t[pos];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos;
    } else if (t.compare(pos, 2, "//") == 0) {
      size_t nl = t.find('\n', pos);
      pos = nl == std::string_view::npos ? t.size() : nl + 1;
    } else if (t.compare(pos, 2, "/*") == 0) {
      size_t e = t.find("*/", pos + 2);
      if (e == std::string_view::npos) return std::string_view::npos;
      pos = e + 2;
    } else {
      break;
    }
  }
  return pos;
}

class JsonTextParser {
public:
  explicit JsonTextParser(std::string_view t) : m_t(t) {}

  Result<Node> document() {
    Node n;
    KAI_TRY(blank());
    if (m_pos == m_t.size()) return n;  // blank: filled in by the caller
    KAI_TRY(value(n, 0));
    KAI_TRY(blank());
    if (m_pos != m_t.size()) return fail("text after the end of the document");
    if (n.type != Node::Type::object) return make_error(Errc::usage, "the settings file is not a JSON object");
    return n;
  }

private:
  Error fail(std::string_view what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < m_pos && i < m_t.size(); ++i) {
      if (m_t[i] == '\n')
        ++line, col = 1;
      else
        ++col;
    }
    return make_error(Errc::usage, fmt::format("not valid JSON at line {}, column {}: {}", line, col, what));
  }
  Status blank() {
    size_t p = skip_blank(m_t, m_pos);
    if (p == std::string_view::npos) return fail("a comment that is never closed");
    m_pos = p;
    return ok_status();
  }
  Result<json> string() {
    size_t b = m_pos++;
    while (m_pos < m_t.size() && m_t[m_pos] != '"') m_pos += m_t[m_pos] == '\\' ? 2 : 1;
    if (m_pos >= m_t.size()) return fail("a string that is never closed");
    ++m_pos;
    json s = json::parse(m_t.substr(b, m_pos - b), nullptr, false);
    if (s.is_discarded()) return fail("a malformed string");
    return s;
  }
  Status value(Node& n, int depth) {
    if (depth > 200) return fail("nested too deeply");
    if (m_pos >= m_t.size()) return fail("a value is missing");
    n.begin = m_pos;
    char c = m_t[m_pos];
    if (c == '{') {
      n.type = Node::Type::object;
      n.value = json::object();
      ++m_pos;
      KAI_TRY(blank());
      while (m_pos < m_t.size() && m_t[m_pos] != '}') {
        if (m_t[m_pos] != '"') return fail("a member name is expected");
        size_t kb = m_pos;
        auto k = string();
        if (!k) return k.error();
        KAI_TRY(blank());
        if (m_pos >= m_t.size() || m_t[m_pos] != ':') return fail("':' is expected");
        ++m_pos;
        KAI_TRY(blank());
        Node kid;
        KAI_TRY(value(kid, depth + 1));
        n.value[k->get<std::string>()] = kid.value;
        n.keys.push_back(k->get<std::string>());
        n.key_begin.push_back(kb);
        n.kids.push_back(std::move(kid));
        KAI_TRY(blank());
        if (m_pos < m_t.size() && m_t[m_pos] == ',') {
          ++m_pos;
          KAI_TRY(blank());
        } else if (m_pos < m_t.size() && m_t[m_pos] != '}') {
          return fail("',' or '}' is expected");
        }
      }
      if (m_pos >= m_t.size()) return fail("an object that is never closed");
      n.end = ++m_pos;
      return ok_status();
    }
    if (c == '[') {
      n.type = Node::Type::array;
      n.value = json::array();
      ++m_pos;
      KAI_TRY(blank());
      while (m_pos < m_t.size() && m_t[m_pos] != ']') {
        Node kid;
        KAI_TRY(value(kid, depth + 1));
        n.value.push_back(kid.value);
        n.kids.push_back(std::move(kid));
        KAI_TRY(blank());
        if (m_pos < m_t.size() && m_t[m_pos] == ',') {
          ++m_pos;
          KAI_TRY(blank());
        } else if (m_pos < m_t.size() && m_t[m_pos] != ']') {
          return fail("',' or ']' is expected");
        }
      }
      if (m_pos >= m_t.size()) return fail("a list that is never closed");
      n.end = ++m_pos;
      return ok_status();
    }
    if (c == '"') {
      auto s = string();
      if (!s) return s.error();
      n.value = std::move(*s);
      n.end = m_pos;
      return ok_status();
    }
    size_t e = m_pos;
    while (e < m_t.size() && std::string_view(",]} \t\r\n/").find(m_t[e]) == std::string_view::npos) ++e;
    json v = json::parse(m_t.substr(m_pos, e - m_pos), nullptr, false);
    if (e == m_pos || v.is_discarded() || v.is_structured()) return fail("a value is expected");
    n.value = std::move(v);
    m_pos = e;
    n.end = e;
    return ok_status();
  }

  std::string_view m_t;
  size_t m_pos = 0;
};

std::string line_indent(std::string_view t, size_t pos) {
  size_t start = t.rfind('\n', pos == 0 ? 0 : pos - 1);
  start = start == std::string_view::npos ? 0 : start + 1;
  size_t e = start;
  while (e < t.size() && (t[e] == ' ' || t[e] == '\t')) ++e;
  return std::string(t.substr(start, e - start));
}

// The indentation of an item at `pos` when it starts its own line; empty when it shares one.
std::string own_line_indent(std::string_view t, size_t pos) {
  size_t start = t.rfind('\n', pos == 0 ? 0 : pos - 1);
  start = start == std::string_view::npos ? 0 : start + 1;
  std::string_view before = t.substr(start, pos - start);
  if (before.find_first_not_of(" \t") != std::string_view::npos) return {};
  return std::string(before);
}

std::string pretty(const json& v, const std::string& indent) {
  std::string d = v.dump(2, ' ', false, json::error_handler_t::replace);
  std::string out;
  for (char c : d) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

// Insert into container `n`: `alone` when it is empty (on a line of its
// own, or inline with `alone_inline`), else `next` after its last kid (a
// trailing comma the owner wrote is kept where it is).
void insert_into(std::string& t, const Node& n, const std::string& alone, bool alone_inline, const std::string& next) {
  if (n.kids.empty()) {
    if (alone_inline)
      t.insert(n.begin + 1, alone);
    else
      t.insert(n.begin + 1, "\n" + alone + "\n" + line_indent(t, n.begin));
    return;
  }
  const Node& last = n.kids.back();
  size_t after = skip_blank(t, last.end);
  if (after != std::string::npos && after < t.size() && t[after] == ',')
    t.insert(after + 1, next);
  else
    t.insert(last.end, "," + next);
}

}  // namespace

const json* json_at(const json& j, const JsonPath& path) {
  const json* at = &j;
  for (const auto& k : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(k);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

Result<JsonText> JsonText::parse(std::string text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) text = "{}\n";
  JsonText t(std::move(text));
  KAI_TRY(t.reparse());
  return t;
}

Status JsonText::reparse() {
  auto n = JsonTextParser(m_text).document();
  if (!n) return n.error();
  m_value = std::move(n->value);
  return ok_status();
}

Status JsonText::set(const JsonPath& path, const json& v) {
  auto root = JsonTextParser(m_text).document();
  if (!root) return root.error();
  const Node* n = &*root;
  for (size_t i = 0; i < path.size(); ++i) {
    if (n->type != Node::Type::object)
      return make_error(Errc::conflict, fmt::format("'{}' is not an object",
                                                    fmt::join(path.begin(), path.begin() + static_cast<long>(i), ".")));
    size_t at = n->keys.size();
    for (size_t k = 0; k < n->keys.size(); ++k)
      if (n->keys[k] == path[i]) at = k;  // the last one is the one that counts
    if (at < n->keys.size() && i + 1 < path.size()) {
      n = &n->kids[at];
      continue;
    }
    if (at < n->keys.size()) {
      const Node& old = n->kids[at];
      m_text.replace(old.begin, old.end - old.begin, pretty(v, line_indent(m_text, n->key_begin[at])));
      return reparse();
    }
    json nested = v;
    for (size_t j = path.size() - 1; j > i; --j) nested = json{{path[j], nested}};
    std::string indent =
        n->kids.empty() ? line_indent(m_text, n->begin) + "  " : own_line_indent(m_text, n->key_begin[0]);
    const bool same_line = indent.empty();
    if (same_line) indent = line_indent(m_text, n->begin);
    const std::string member = json(path[i]).dump() + ": " + pretty(nested, indent);
    insert_into(m_text, *n, indent + member, false, (same_line ? " " : "\n" + indent) + member);
    return reparse();
  }
  return make_error(Errc::usage, "an empty path");
}

Status JsonText::append(const JsonPath& path, const json& v) {
  const json* cur = json_at(m_value, path);
  if (!cur) return set(path, json::array({v}));
  if (!cur->is_array()) return make_error(Errc::conflict, fmt::format("'{}' is not a list", fmt::join(path, ".")));
  auto root = JsonTextParser(m_text).document();
  if (!root) return root.error();
  const Node* n = &*root;
  for (const auto& k : path) {
    size_t at = 0;
    for (size_t i = 0; i < n->keys.size(); ++i)
      if (n->keys[i] == k) at = i;
    n = &n->kids[at];
  }
  if (n->kids.empty()) {
    const std::string indent = line_indent(m_text, n->begin) + "  ";
    if (v.is_structured())
      insert_into(m_text, *n, indent + pretty(v, indent), false, "");
    else
      insert_into(m_text, *n, v.dump(-1, ' ', false, json::error_handler_t::replace), true, "");
    return reparse();
  }
  std::string indent = own_line_indent(m_text, n->kids[0].begin);
  if (indent.empty())
    insert_into(m_text, *n, "", false, " " + pretty(v, line_indent(m_text, n->begin)));
  else
    insert_into(m_text, *n, "", false, "\n" + indent + pretty(v, indent));
  return reparse();
}

Status JsonText::remove_items(const JsonPath& path, const std::function<bool(const json&)>& drop) {
  for (;;) {
    const json* cur = json_at(m_value, path);
    if (!cur || !cur->is_array()) return ok_status();
    size_t k = 0;
    while (k < cur->size() && !drop((*cur)[k])) ++k;
    if (k == cur->size()) return ok_status();
    auto root = JsonTextParser(m_text).document();
    if (!root) return root.error();
    const Node* n = &*root;
    for (const auto& key : path) {
      size_t at = 0;
      for (size_t i = 0; i < n->keys.size(); ++i)
        if (n->keys[i] == key) at = i;  // the last one is the one that counts
      n = &n->kids[at];
    }
    const Node& kid = n->kids[k];
    size_t from = kid.begin, to = kid.end;
    if (k + 1 < n->kids.size()) {
      to = n->kids[k + 1].begin;  // its comma and the space before the next item
    } else if (k > 0) {
      from = n->kids[k - 1].end;  // the comma after the item before it
    } else {
      const size_t after = skip_blank(m_text, kid.end);
      if (after != std::string::npos && after < m_text.size() && m_text[after] == ',') to = after + 1;
    }
    m_text.erase(from, to - from);
    KAI_TRY(reparse());
  }
}

}  // namespace kai::harness
