#pragma once
// The verbs of the command table (k_commands in cmd/main.cpp), read from the
// source tree, so that a verb added to cmd/ without its docs, completions or
// help fails a test. Empty when the table cannot be found.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

namespace kai::test {

inline std::vector<std::string> command_table_verbs(const std::filesystem::path& source_dir) {
  std::ifstream in(source_dir / "cmd" / "main.cpp", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = text.find("k_commands[]");
  if (at == std::string::npos) return {};
  size_t end = text.find("};", at);
  if (end == std::string::npos) return {};
  std::string table = text.substr(at, end - at);
  std::vector<std::string> verbs;
  std::regex row(R"re(\{\s*"([a-z][a-z0-9-]*)"\s*,)re");
  for (std::sregex_iterator it(table.begin(), table.end(), row), stop; it != stop; ++it) verbs.push_back((*it)[1]);
  return verbs;
}

}  // namespace kai::test
