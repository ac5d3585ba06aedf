#include "lib/run/tree_scripts.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "lib/paths/beneath.hpp"
#include "lib/util/git.hpp"
#include "lib/paths/paths.hpp"
#include "lib/util/strings.hpp"
#include "lib/config/workspace.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 20> k_interpreters = {
    "sh",   "bash",  "dash", "zsh",    "ksh",  "mksh", "fish", "python",  "python2", "python3",
    "pypy", "pypy3", "node", "nodejs", "perl", "ruby", "php",  "Rscript", "tclsh",   "lua"};

std::string_view base_name(std::string_view prog) {
  const size_t slash = prog.rfind('/');
  return slash == std::string_view::npos ? prog : prog.substr(slash + 1);
}

bool is_interpreter(std::string_view prog) {
  std::string_view b = base_name(prog);
  // python3.11, lua5.4, perl5.36: the version is no other program.
  for (std::string_view fam : {"python", "lua", "perl", "ruby", "php", "pypy"})
    if (b.starts_with(fam) && b.size() > fam.size() &&
        b.find_first_not_of("0123456789.", fam.size()) == std::string_view::npos)
      return true;
  return std::find(k_interpreters.begin(), k_interpreters.end(), b) != k_interpreters.end();
}

bool is_python(std::string_view prog) {
  return base_name(prog).starts_with("python") || base_name(prog).starts_with("pypy");
}

// Options of interpreters that take the next word as their value.
bool takes_value(std::string_view prog, std::string_view opt) {
  if (is_python(prog)) return opt == "-W" || opt == "-X" || opt == "-Q";
  return opt == "-r" || opt == "--require" || opt == "-I" || opt == "--import" || opt == "-O" || opt == "-o";
}

// The files one leaf runs, as the command names them (relative to its folder).
std::vector<std::string> named_scripts(const std::vector<std::string>& argv, const std::string& cwd_rel,
                                       const Workspace& ws) {
  std::vector<std::string> out;
  if (argv.empty()) return out;
  const std::string& prog = argv[0];
  if (prog.find('/') != std::string::npos) out.push_back(prog);
  if (prog == "." || prog == "source" || is_interpreter(prog)) {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& w = argv[i];
      if (w == "--") {
        if (i + 1 < argv.size()) out.push_back(argv[i + 1]);
        break;
      }
      if (w.size() > 1 && w.front() == '-') {
        // Code given on the command line runs no file of the tree.
        if (w == "-c" || w == "-e" || w == "-p" || w == "--eval" || w == "--print") break;
        if (is_python(prog) && w == "-m" && i + 1 < argv.size()) {
          std::string mod = argv[i + 1];
          std::replace(mod.begin(), mod.end(), '.', '/');
          // The module file, or the package's __main__; whichever is there.
          const fs::path folder = ws.root / cwd_rel;
          std::error_code ec;
          out.push_back(fs::is_regular_file(folder / (mod + ".py"), ec) ? mod + ".py" : mod + "/__main__.py");
          break;
        }
        if (takes_value(prog, w)) ++i;
        continue;
      }
      out.push_back(w);
      break;
    }
  }
  const std::string_view b = base_name(prog);
  if (b == "make" || b == "gmake") {
    std::string dir, file;
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& w = argv[i];
      auto value = [&](std::string_view shortopt, std::string_view longopt, std::string& into) {
        if (w == shortopt || w == longopt) {
          if (i + 1 < argv.size()) into = argv[++i];
          return true;
        }
        if (w.size() > shortopt.size() && std::string_view(w).starts_with(shortopt)) {
          into = w.substr(shortopt.size());
          return true;
        }
        if (std::string_view(w).starts_with(std::string(longopt) + "=")) {
          into = w.substr(longopt.size() + 1);
          return true;
        }
        return false;
      };
      if (value("-f", "--file", file) || value("-C", "--directory", dir)) continue;
      if (w == "--makefile" && i + 1 < argv.size()) file = argv[++i];
      if (std::string_view(w).starts_with("--makefile=")) file = w.substr(11);
    }
    const std::string prefix = dir.empty() ? "" : dir + "/";
    if (!file.empty()) {
      out.push_back(prefix + file);
    } else {
      // GNU make's own order.
      std::string found = prefix + "Makefile";
      for (const char* name : {"GNUmakefile", "makefile", "Makefile"}) {
        std::error_code ec;
        if (fs::exists(ws.root / cwd_rel / (prefix + name), ec)) {
          found = prefix + name;
          break;
        }
      }
      out.push_back(found);
    }
  }
  return out;
}

// The blob id of `rel` now; "" when it is not a readable regular file.
std::string blob_now(const Workspace& ws, const std::string& rel) {
  auto dir = open_parent(ws.root, rel, CreateDirs::no);
  if (!dir) return {};
  const size_t slash = rel.rfind('/');
  auto st = read_at(*dir, slash == std::string::npos ? rel : rel.substr(slash + 1));
  if (!st || !st->exists || !st->regular) return {};
  return blob_id(st->bytes);
}

}  // namespace

FileBlobs tree_scripts(const Workspace& ws, const std::vector<Leaf>& leaves, const std::string& cwd_rel) {
  FileBlobs out;
  for (const Leaf& leaf : leaves)
    for (const std::string& named : named_scripts(leaf.argv, cwd_rel, ws)) {
      auto rp = resolve(ws.root, ws.root / cwd_rel, named);
      if (!rp || rp->rel.empty()) continue;  // outside root: not the tree's
      if (std::any_of(out.begin(), out.end(), [&](const auto& f) { return f.first == rp->rel; })) continue;
      out.emplace_back(rp->rel, blob_now(ws, rp->rel));
    }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kai
