#include "lib/store/listing.hpp"

#include <charconv>
#include <vector>

#include "lib/util/strings.hpp"

namespace kai::listing {
namespace {

// A changeset row names its first files until their names are this long
// (and at least this many): what a list row or the review page shows.
constexpr size_t k_named_files = 3;
constexpr size_t k_named_bytes = 96;
// No line lists more files than this (a bound on what a line can make).
constexpr size_t k_max_changes = 100'000;

}  // namespace

void put_field(std::string& out, std::string_view s) {
  out += '\t';
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

std::optional<std::string> unescape_field(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return std::nullopt;
    switch (s[i]) {
      case '\\': out += '\\'; break;
      case 't': out += '\t'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      default: return std::nullopt;
    }
  }
  return out;
}


std::string line(const Proposal& p) {
  std::string out = std::to_string(p.id);
  put_field(out, to_string(p.state));
  put_field(out, to_string(p.kind));
  put_field(out, to_string(p.risk));
  put_field(out, to_string(p.tier));
  put_field(out, p.created);
  put_field(out, p.agent);
  put_field(out, p.path);
  put_field(out, p.summary);
  put_field(out, p.team.role);
  put_field(out, p.team.origin);
  put_field(out, std::to_string(p.team.remote_id));
  put_field(out, p.shell);
  put_field(out, std::to_string(p.argv.size()));
  for (const auto& a : p.argv) put_field(out, a);
  size_t named = 0, bytes = 0;
  while (named < p.changes.size() && (named < k_named_files || bytes <= k_named_bytes)) {
    bytes += p.changes[named].path.size() + p.changes[named].to.size() + 4;
    ++named;
  }
  put_field(out, std::to_string(p.changes.size()));
  put_field(out, std::to_string(named));
  for (size_t i = 0; i < named; ++i) {
    put_field(out, p.changes[i].op);
    put_field(out, p.changes[i].path);
    put_field(out, p.changes[i].to);
  }
  return out;
}

std::optional<int> id_of(std::string_view l) {
  const size_t tab = l.find('\t');
  if (tab == std::string_view::npos) return std::nullopt;
  return parse_proposal_id(l.substr(0, tab));
}

std::optional<Proposal> parse(std::string_view l) {
  Proposal p;
  if (!parse_into(l, p)) return std::nullopt;
  return p;
}

bool parse_into(std::string_view l, Proposal& p) {
  thread_local std::vector<std::string_view> f;
  split_into(l, "\t", f);
  if (f.size() < 16) return false;
  auto id = parse_proposal_id(f[0]);
  auto state = parse_state(f[1]);
  auto kind = parse_kind(f[2]);
  auto risk = parse_risk(f[3]);
  auto tier = parse_tier(f[4]);
  auto remote_id = parse_number<int>(f[11]);
  auto argc = parse_number<size_t>(f[13]);
  if (!id || !state || !kind || !risk || !tier || !remote_id || !argc || *argc > f.size() - 16) return false;
  p.id = *id;
  p.state = *state;
  p.kind = *kind;
  p.risk = *risk;
  p.tier = *tier;
  p.team.remote_id = *remote_id;
  std::string* text[] = {&p.created, &p.agent, &p.path, &p.summary, &p.team.role, &p.team.origin};
  for (size_t i = 0; i < 6; ++i) {
    auto s = unescape_field(f[5 + i]);
    if (!s) return false;
    *text[i] = std::move(*s);
  }
  auto shell = unescape_field(f[12]);
  if (!shell) return false;
  p.shell = std::move(*shell);
  size_t at = 14;
  for (size_t i = 0; i < *argc; ++i) {
    auto a = unescape_field(f[at++]);
    if (!a) return false;
    p.argv.push_back(std::move(*a));
  }
  auto changes = parse_number<size_t>(f[at]);
  auto named = parse_number<size_t>(f[at + 1]);
  at += 2;
  if (!changes || !named || *changes > k_max_changes || *named > *changes || f.size() != at + 3 * *named)
    return false;
  p.changes.resize(*changes);
  for (size_t i = 0; i < *named; ++i) {
    auto op = unescape_field(f[at]), path = unescape_field(f[at + 1]), to = unescape_field(f[at + 2]);
    if (!op || !path || !to) return false;
    p.changes[i].op = std::move(*op);
    p.changes[i].path = std::move(*path);
    p.changes[i].to = std::move(*to);
    at += 3;
  }
  p.payloads_loaded = false;
  return true;
}

std::string file(std::string_view seal, std::string_view body, std::string_view head) {
  std::string out;
  out.reserve(head.size() + seal.size() + 1 + body.size());
  out += head;
  out += seal;
  out += '\n';
  out += body;
  return out;
}

std::optional<Parts> split(std::string_view text, std::string_view head) {
  if (!text.starts_with(head)) return std::nullopt;
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  return Parts{text.substr(head.size(), nl - head.size()), text.substr(nl + 1)};
}

}  // namespace kai::listing
