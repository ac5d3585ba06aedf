// The shape of lib/, read from the source tree: the header include graph has
// no cycle, lib/ never includes from cmd/, and lib/util/ includes nothing of
// kaicoder's but itself and result.hpp (STYLE.md §1, §9). A cycle or a
// wrong-way include fails here with the path that closes it.

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/source_tree.hpp"

namespace fs = std::filesystem;

namespace {

using kai::test::source_dir;

// Every file under lib/ (relative, generic) → the quoted includes it names.
std::map<std::string, std::vector<std::string>> lib_includes() {
  const fs::path src = source_dir();
  const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : fs::recursive_directory_iterator(src / "lib")) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".hpp" && ext != ".cpp")) continue;
    std::ifstream in(e.path());
    auto& incs = out[e.path().lexically_relative(src).generic_string()];
    std::smatch m;
    for (std::string line; std::getline(in, line);)
      if (std::regex_search(line, m, include_line)) incs.push_back(m[1]);
  }
  return out;
}

// The first cycle found among headers, as a path "a -> b -> a"; empty if none.
std::string header_cycle(const std::map<std::string, std::vector<std::string>>& g) {
  std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::string found;
  std::function<void(const std::string&)> visit = [&](const std::string& h) {
    state[h] = 1;
    stack.push_back(h);
    auto it = g.find(h);
    if (it != g.end())
      for (const auto& next : it->second) {
        if (!found.empty()) break;
        if (!next.ends_with(".hpp") || !g.count(next)) continue;
        if (state[next] == 1) {
          auto from = std::find(stack.begin(), stack.end(), next);
          for (; from != stack.end(); ++from) found += *from + " -> ";
          found += next;
        } else if (state[next] == 0) {
          visit(next);
        }
      }
    stack.pop_back();
    state[h] = 2;
  };
  for (const auto& [file, incs] : g)
    if (file.ends_with(".hpp") && state[file] == 0 && found.empty()) visit(file);
  return found;
}

}  // namespace

TEST_CASE("lib/ headers include each other without a cycle", "[meta][layout]") {
  const auto g = lib_includes();
  REQUIRE(g.size() > 50);
  const std::string cycle = header_cycle(g);
  INFO("include cycle: " << cycle);
  CHECK(cycle.empty());
}

TEST_CASE("lib/ never includes from cmd/, and lib/util/ includes only itself and result.hpp", "[meta][layout]") {
  for (const auto& [file, incs] : lib_includes())
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK_FALSE(inc.starts_with("cmd/"));
      if (file.starts_with("lib/util/")) CHECK((inc.starts_with("lib/util/") || inc == "lib/result.hpp"));
    }
}

TEST_CASE("lib/shell/ is pure: it includes only itself, its public header and the text helpers", "[meta][layout]") {
  size_t files = 0;
  for (const auto& [file, incs] : lib_includes()) {
    if (!file.starts_with("lib/shell/")) continue;
    ++files;
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK((inc.starts_with("lib/shell/") || inc == "lib/shell.hpp" || inc == "lib/result.hpp" ||
             inc == "lib/util/text.hpp" || inc == "lib/util/strings.hpp"));
    }
  }
  CHECK(files > 20);
}

TEST_CASE("every source file is named in a CMakeLists.txt, so none is left out of the build", "[meta][layout]") {
  const fs::path src = source_dir();
  auto slurp = [](const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const std::string top = slurp(src / "CMakeLists.txt"), tests = slurp(src / "tests" / "CMakeLists.txt");
  struct Where {
    const char* dir;
    const std::string* list;
    fs::path base;
  };
  for (const Where& w : {Where{"lib", &top, src}, Where{"cmd", &top, src}, Where{"tests/unit", &tests, src / "tests"},
                         Where{"tests/e2e", &tests, src / "tests"}, Where{"tests/support", &tests, src / "tests"}}) {
    for (const auto& e : fs::recursive_directory_iterator(src / w.dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;
      const std::string name = e.path().lexically_relative(w.base).generic_string();
      INFO(name << " is not named in " << (w.list == &top ? "CMakeLists.txt" : "tests/CMakeLists.txt"));
      CHECK((w.list->find(name + "\n") != std::string::npos || w.list->find(name + ")") != std::string::npos));
    }
  }
}
