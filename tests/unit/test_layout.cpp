// The shape of lib/, read from the source tree. lib/ is a handful of parts,
// one folder each, and each part's README.md says what it may include and
// which of its headers are public (ARCHITECTURE.md, STYLE.md §8). These
// cases hold the code to those lines: a part includes only itself, the
// central files at lib/'s top and the public headers of the parts its README
// names; the parts those lines allow form no cycle; cmd/ and bench/ include
// only public headers; the headers include each other without a cycle; and
// every source file is named in its part's own CMakeLists.txt. A wrong-way
// include fails here naming the file and the line of the README it breaks.

// temp_dir.hpp first: it registers its failure listener before Catch is included.
#include "tests/unit/temp_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/source_tree.hpp"
#include "tests/unit/temp_dir.hpp"

namespace fs = std::filesystem;

namespace {

using kai::test::slurp;
using kai::test::source_dir;

// The files at lib/'s top: included by every part, including none of them.
const std::set<std::string> k_central = {"lib/result.hpp", "lib/version.hpp", "lib/version.cpp.in"};

// Every .cpp and .hpp under `dir` (relative to the source tree, generic) →
// the quoted includes it names.
std::map<std::string, std::vector<std::string>> includes_under(const std::string& dir) {
  const fs::path src = source_dir();
  const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : fs::recursive_directory_iterator(src / dir)) {
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

// "a, b, c" (or "nothing") → {a, b, c}.
std::set<std::string> list_of(const std::string& text) {
  std::set<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t.") + 1);
    if (!item.empty() && item != "nothing") out.insert(item);
  }
  return out;
}

struct Part {
  std::string name;
  size_t readme_lines = 0;  // of its head, before the details
  bool has_may_include = false, has_public = false;
  std::set<std::string> may_include;  // other parts
  std::set<std::string> public_headers;  // file names inside the part's folder
};

// Every folder directly under lib/, read from its README.md.
std::map<std::string, Part> parts() {
  std::map<std::string, Part> out;
  for (const auto& e : fs::directory_iterator(source_dir() / "lib")) {
    if (!e.is_directory()) continue;
    Part p;
    p.name = e.path().filename().string();
    std::ifstream in(e.path() / "README.md");
    bool head = true;  // the lines before the first "## " heading: the part in brief
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("## ")) head = false;
      if (head) ++p.readme_lines;
      if (line.starts_with("May include:")) {
        p.has_may_include = true;
        p.may_include = list_of(line.substr(12));
      } else if (line.starts_with("Public headers:")) {
        p.has_public = true;
        p.public_headers = list_of(line.substr(15));
      }
    }
    out[p.name] = p;
  }
  return out;
}

// The part a file of lib/ belongs to ("" for the central files).
std::string part_of(const std::string& file) {
  if (!file.starts_with("lib/")) return "?";
  const auto slash = file.find('/', 4);
  return slash == std::string::npos ? "" : file.substr(4, slash - 4);
}

// Why `from` (a file of part `from_part`, or of cmd/ or bench/ when that is
// empty) may not include `inc`; "" when it may.
std::string refusal(const std::map<std::string, Part>& ps, const std::string& from_part, const std::string& inc) {
  if (!inc.starts_with("lib/")) return "";
  if (k_central.count(inc)) return "";
  const std::string to = part_of(inc);
  if (to.empty()) return inc + " is not a central file: lib/'s top holds only result.hpp and version.hpp";
  auto it = ps.find(to);
  if (it == ps.end()) return inc + " is in no part";
  if (to == from_part) return "";
  if (!from_part.empty() && !ps.at(from_part).may_include.count(to))
    return "lib/" + from_part + "/README.md does not name '" + to + "' under May include";
  const std::string name = inc.substr(4 + to.size() + 1);
  if (!it->second.public_headers.count(name))
    return name + " is private to lib/" + to + " (not under Public headers in its README.md)";
  return "";
}

}  // namespace

TEST_CASE("every part of lib/ is a folder with a README that says what it may include and what is public",
          "[meta][layout]") {
  const auto ps = parts();
  REQUIRE(ps.size() >= 10);
  CHECK(ps.size() <= 18);  // a newcomer finds a file from the part's name alone
  for (const auto& [name, p] : ps) {
    INFO("lib/" << name << "/README.md");
    CHECK(p.readme_lines >= 5);
    CHECK(p.readme_lines <= 16);
    CHECK(p.has_may_include);
    CHECK(p.has_public);
    CHECK_FALSE(p.public_headers.empty());
    for (const auto& other : p.may_include) {
      INFO("May include names " << other);
      CHECK(ps.count(other) == 1);
      CHECK(other != name);
    }
    for (const auto& h : p.public_headers) {
      INFO("Public headers names " << h);
      CHECK(fs::is_regular_file(source_dir() / "lib" / name / h));
    }
  }
  // Nothing else sits at lib/'s top.
  for (const auto& e : fs::directory_iterator(source_dir() / "lib"))
    if (e.is_regular_file()) {
      const std::string rel = "lib/" + e.path().filename().string();
      INFO(rel << " sits at lib/'s top: which part does it belong to?");
      CHECK(k_central.count(rel) == 1);
    }
}

TEST_CASE("the parts may include each other without a cycle: util at the bottom, the doors on top",
          "[meta][layout]") {
  const auto ps = parts();
  std::map<std::string, int> state;  // 0 new, 1 on the stack, 2 done
  std::vector<std::string> stack;
  std::string found;
  std::function<void(const std::string&)> visit = [&](const std::string& p) {
    state[p] = 1;
    stack.push_back(p);
    for (const auto& next : ps.at(p).may_include) {
      if (!found.empty() || !ps.count(next)) break;
      if (state[next] == 1) {
        for (auto from = std::find(stack.begin(), stack.end(), next); from != stack.end(); ++from)
          found += *from + " -> ";
        found += next;
      } else if (state[next] == 0) {
        visit(next);
      }
    }
    stack.pop_back();
    state[p] = 2;
  };
  for (const auto& [name, p] : ps)
    if (state[name] == 0 && found.empty()) visit(name);
  INFO("the parts' May include lines close a cycle: " << found);
  CHECK(found.empty());
  // The floors the code already keeps.
  CHECK(ps.at("util").may_include.empty());
  for (const char* door : {"harness", "mcp", "web"})
    for (const auto& [name, p] : ps) {
      INFO("lib/" << name << " may include the door " << door);
      CHECK((name == "doctor" || !p.may_include.count(door)));
    }
}

TEST_CASE("a part includes only itself, the central files and the public headers of the parts it names",
          "[meta][layout]") {
  const auto ps = parts();
  const auto lib = includes_under("lib");
  REQUIRE(lib.size() > 100);
  for (const auto& [file, incs] : lib) {
    const std::string from = part_of(file);
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK_FALSE(inc.starts_with("cmd/"));
      if (from.empty()) {
        CHECK((!inc.starts_with("lib/") || k_central.count(inc)));
        continue;
      }
      CHECK(refusal(ps, from, inc) == "");
    }
  }
}

TEST_CASE("cmd/ and bench/ include only the parts' public headers", "[meta][layout]") {
  const auto ps = parts();
  for (const char* dir : {"cmd", "bench"})
    for (const auto& [file, incs] : includes_under(dir))
      for (const auto& inc : incs) {
        INFO(file << " includes " << inc);
        CHECK(refusal(ps, "", inc) == "");
      }
}

TEST_CASE("lib/ headers include each other without a cycle", "[meta][layout]") {
  const auto g = includes_under("lib");
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
  INFO("include cycle: " << found);
  CHECK(found.empty());
}

TEST_CASE("lib/shell/ is pure: it includes only itself and the text helpers", "[meta][layout]") {
  size_t files = 0;
  for (const auto& [file, incs] : includes_under("lib/shell")) {
    ++files;
    for (const auto& inc : incs) {
      INFO(file << " includes " << inc);
      CHECK((inc.starts_with("lib/shell/") || inc == "lib/result.hpp" || inc == "lib/util/text.hpp" ||
             inc == "lib/util/strings.hpp"));
    }
  }
  CHECK(files > 20);
}

TEST_CASE("every source file is named in a CMakeLists.txt: a part's in its own", "[meta][layout]") {
  const fs::path src = source_dir();
  const std::string top = slurp(src / "CMakeLists.txt"), tests = slurp(src / "tests" / "CMakeLists.txt");
  auto named = [](const std::string& list, const std::string& name) {
    return list.find(name + "\n") != std::string::npos || list.find(name + ")") != std::string::npos ||
           list.find(name + " ") != std::string::npos;
  };
  for (const auto& [name, p] : parts()) {
    const fs::path dir = src / "lib" / name;
    INFO("lib/" << name << "/CMakeLists.txt");
    REQUIRE(fs::is_regular_file(dir / "CMakeLists.txt"));
    CHECK(named(top, "add_subdirectory(lib/" + name));
    const std::string list = slurp(dir / "CMakeLists.txt");
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;
      const std::string rel = e.path().lexically_relative(dir).generic_string();
      INFO(rel << " is not named in lib/" << name << "/CMakeLists.txt");
      CHECK(named(list, rel));
    }
  }
  struct Where {
    const char* dir;
    const std::string* list;
    fs::path base;
  };
  for (const Where& w : {Where{"cmd", &top, src}, Where{"tests/unit", &tests, src / "tests"},
                         Where{"tests/e2e", &tests, src / "tests"}, Where{"tests/support", &tests, src / "tests"}}) {
    for (const auto& e : fs::recursive_directory_iterator(src / w.dir)) {
      if (!e.is_regular_file() || e.path().extension() != ".cpp") continue;
      const std::string name = e.path().lexically_relative(w.base).generic_string();
      INFO(name << " is not named in " << (w.list == &top ? "CMakeLists.txt" : "tests/CMakeLists.txt"));
      CHECK(named(*w.list, name));
    }
  }
}
