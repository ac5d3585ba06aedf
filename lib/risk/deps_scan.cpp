#include "lib/risk/deps_scan.hpp"

#include "lib/util/strings.hpp"

namespace kai::deps_scan {

std::optional<std::string> join(std::string_view dir, std::string_view rel) {
  std::vector<std::string_view> parts;
  auto push = [&](std::string_view s) -> bool {
    for (std::string_view part : split(s, "/")) {
      if (part == "..") {
        if (parts.empty()) return false;
        parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
    }
    return true;
  };
  if (!push(dir) || !push(rel)) return std::nullopt;
  std::string out;
  for (auto p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

std::vector<std::string_view> ancestors(std::string_view dir) {
  std::vector<std::string_view> out{dir};
  while (!dir.empty()) {
    dir = dir_of(dir);
    out.push_back(dir);
  }
  return out;
}

void add_name(Names& out, std::string_view name) {
  if (out.size() < k_max_names && !name.empty() && name.size() <= k_max_name) out.emplace_back(name);
}

Folded fold(std::string_view rel) {
  Folded f;
  std::vector<std::string_view> parts;
  for (std::string_view part : split(rel, "/")) {
    if (part == "..") {
      if (parts.empty())
        ++f.up;
      else
        parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
  }
  for (auto p : parts) {
    if (!f.rest.empty()) f.rest += '/';
    f.rest += p;
  }
  return f;
}

std::optional<std::string_view> climb(std::string_view dir, size_t up) {
  for (; up > 0; --up) {
    if (dir.empty()) return std::nullopt;
    dir = dir_of(dir);
  }
  return dir;
}

// Folders a name may be found in, best first (a missing one keeps its rank).

Ranked::Hit Ranked::find(const FileSet& files, std::string_view rest, ScanBudget& budget) const {
  Hit best;
  if (rest.empty()) return best;
  const auto& cands = files.named(file_name(rest));
  if (cands.empty()) return best;
  if (m_dirs.size() <= cands.size()) {
    std::string cand;
    for (size_t r = 0; r < m_dirs.size(); ++r) {
      if (!budget.step()) break;
      if (!m_dirs[r]) continue;
      cand = m_dirs[r]->empty() ? std::string(rest) : *m_dirs[r] + "/" + std::string(rest);
      if (long hit = files.find(cand); hit >= 0) return {r, hit};
    }
    return best;
  }
  if (m_rank.empty())
    for (size_t r = m_dirs.size(); r-- > 0;)
      if (m_dirs[r]) m_rank[*m_dirs[r]] = r;  // the best rank is written last
  for (uint32_t i : cands) {
    if (!budget.step()) break;
    std::string_view p = files.paths()[i];
    if (!p.ends_with(rest)) continue;
    std::string_view dir;
    if (p.size() > rest.size()) {
      if (p[p.size() - rest.size() - 1] != '/') continue;
      dir = p.substr(0, p.size() - rest.size() - 1);
    }
    auto it = m_rank.find(dir);
    if (it != m_rank.end() && (best.file < 0 || it->second < best.rank)) best = {it->second, static_cast<long>(i)};
  }
  return best;
}

bool eat_word(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word || (s.size() > word.size() && ident_char(s[word.size()]))) return false;
  s = trim_left(s.substr(word.size()), k_blank);
  return true;
}

}  // namespace kai::deps_scan
