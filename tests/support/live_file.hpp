#pragma once
// The live index's file (lib/store/store.cpp, staging/live) as a test reads
// and forges it, without the key: its head, a sealed snapshot ("next N
// swept S", "due …", then one entry a line: id, state, mark, time, key,
// agent), then the changes appended since, one a line, each ending in its
// own seal ("put\t<entry>\t<seal>", "drop\t<id>\t<seal>", …).

#include <cctype>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kai::test {

inline std::vector<std::string> live_file_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

inline std::vector<std::string> split_tabs(const std::string& l) {
  std::vector<std::string> f;  // the last field may be empty
  size_t at = 0;
  for (size_t tab = l.find('\t'); tab != std::string::npos; tab = l.find('\t', at)) {
    f.push_back(l.substr(at, tab - at));
    at = tab + 1;
  }
  f.push_back(l.substr(at));
  return f;
}

inline std::string join_tabs(const std::vector<std::string>& f) {
  std::string line;
  for (size_t i = 0; i < f.size(); ++i) line += (i ? "\t" : "") + f[i];
  return line;
}

// The entries the file says, as they stand after its last line: id -> the
// entry's six fields joined by tabs (whether or not the file verifies).
inline std::map<int, std::string> live_file_entries(const std::string& text) {
  std::map<int, std::string> out;
  for (const std::string& l : live_file_lines(text)) {
    const auto f = split_tabs(l);
    if (f.size() == 6 && !f[0].empty() && std::isdigit(static_cast<unsigned char>(f[0][0])))
      out[std::stoi(f[0])] = l;
    else if (f.size() == 8 && f[0] == "put")
      out[std::stoi(f[1])] = join_tabs(std::vector<std::string>(f.begin() + 1, f.end() - 1));
    else if (f.size() == 3 && f[0] == "drop")
      out.erase(std::stoi(f[1]));
  }
  return out;
}

// The file with field `field` (0: the id, 1: the state, 2: the mark, 3:
// the time, 4: the request's key, 5: the agent) of every line that puts
// proposal `id`'s entry set to `value`: their seals kept, as an agent that
// cannot seal would forge it.
inline std::string forge_live_field(const std::string& text, int id, size_t field, const std::string& value) {
  std::string out;
  for (const std::string& l : live_file_lines(text)) {
    auto f = split_tabs(l);
    if (f.size() == 6 && f[0] == std::to_string(id))
      f[field] = value;
    else if (f.size() == 8 && f[0] == "put" && f[1] == std::to_string(id))
      f[field + 1] = value;
    out += join_tabs(f) + "\n";
  }
  return out;
}

// The file without the lines that put proposal `id`'s entry.
inline std::string drop_live_lines(const std::string& text, int id) {
  std::string out;
  for (const std::string& l : live_file_lines(text)) {
    const auto f = split_tabs(l);
    if ((f.size() == 6 && f[0] == std::to_string(id)) || (f.size() == 8 && f[0] == "put" && f[1] == std::to_string(id)))
      continue;
    out += l + "\n";
  }
  return out;
}

}  // namespace kai::test
