#pragma once
// TempDir: a fresh folder under the system temp folder for one test case,
// removed when the case ends, kept (and its path printed on stderr) when an
// assertion in the case failed or an exception is unwinding, so the tree can
// be inspected. Set KAICODER_KEEP_TEMP=1 to keep every one.
//
// Include this before <catch2/catch.hpp> so that it can register its
// failure listener (see below). One test file per binary doing so is enough;
// where Catch came first, failed CHECKs alone do not keep the folder.
//
//   TempDir t;
//   t.write("src/a.c", "int x;\n");
//   t.symlink("src/link", "../a.c");
//   REQUIRE(t.read("src/a.c") == "int x;\n");

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

// Listeners are only declared with external interfaces on. The build turns
// them on for every test file (catch.hpp is precompiled); this covers a
// file compiled without that.
#if !defined(TWOBLUECUBES_SINGLE_INCLUDE_CATCH_HPP_INCLUDED) && !defined(CATCH_CONFIG_EXTERNAL_INTERFACES)
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#endif
#include <catch2/catch.hpp>

namespace kai::test {

// Catch2 v2 offers no "did the current case fail" query, so a listener
// counts failed assertions and each TempDir compares the count at its birth
// and death. Every test file that includes this registers its own listener;
// the count then grows by more than one per failure, which is harmless.
inline std::atomic<long> g_failed_assertions{0};

#ifdef CATCH_CONFIG_EXTERNAL_INTERFACES
struct FailureCounter : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  bool assertionEnded(const Catch::AssertionStats& stats) override {
    if (!stats.assertionResult.isOk()) ++g_failed_assertions;
    return true;
  }
};
CATCH_REGISTER_LISTENER(FailureCounter)
#endif

class TempDir {
public:
  TempDir() {
    namespace fs = std::filesystem;
    std::string pattern = (fs::temp_directory_path() / "kaicoder-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temp dir in " + pattern);
    // Canonical, because the code under test compares against realpaths and
    // the temp folder itself may sit behind a symlink.
    m_path = fs::canonical(pattern);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  ~TempDir() {
    bool failed = g_failed_assertions.load() > m_failures_at_start || std::uncaught_exceptions() > m_unwinding_at_start;
    if (failed || std::getenv("KAICODER_KEEP_TEMP") != nullptr) {
      std::fprintf(stderr, "kept temp dir %s\n", m_path.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }

  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path operator/(std::string_view rel) const { return m_path / rel; }

  // Creates the parent folders as needed.
  void write(std::string_view rel, std::string_view content) const {
    std::filesystem::path p = m_path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out) throw std::runtime_error("cannot write " + p.string());
  }

  std::string read(std::string_view rel) const {
    std::ifstream in(m_path / rel, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + (m_path / rel).string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // True for anything at `rel`, including a dangling symlink.
  bool exists(std::string_view rel) const {
    std::error_code ec;
    return std::filesystem::symlink_status(m_path / rel, ec).type() != std::filesystem::file_type::not_found;
  }

  void mkdir(std::string_view rel) const { std::filesystem::create_directories(m_path / rel); }

  // `target` is stored as given: relative targets resolve from the link's folder.
  void symlink(std::string_view rel, std::string_view target) const {
    std::filesystem::path p = m_path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_symlink(std::string(target), p);
  }

  void hardlink(std::string_view rel, std::string_view existing) const {
    std::filesystem::path p = m_path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_hard_link(m_path / existing, p);
  }

  // Makes the folder a git work tree, for cases that need one.
  void git_init(std::string_view rel = {}) const {
    std::string cmd = "git init -q '" + (m_path / rel).string() + "' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("git init failed in " + m_path.string());
  }

  // Keep this folder even if the case passes.
  void keep() { m_failures_at_start = -1; }

private:
  std::filesystem::path m_path;
  long m_failures_at_start = g_failed_assertions.load();
  int m_unwinding_at_start = std::uncaught_exceptions();
};

// Run shell command `cmd` in `d`, its output discarded; the case fails
// when it fails.
inline void sh(const TempDir& d, const std::string& cmd) {
  std::string full = "cd '" + d.path().string() + "' && " + cmd + " >/dev/null 2>&1";
  REQUIRE(std::system(full.c_str()) == 0);
}

// Permission bits of what is at `p` (a symlink itself, not its target).
inline unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

// The whole file at `p`; the case fails when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) FAIL("cannot read " << p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace kai::test
