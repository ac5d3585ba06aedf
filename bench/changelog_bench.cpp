// Changelog cost against history length.
//
// One prepend() and one newest(1) are timed with 100, 10,000 and 100,000
// entries already logged (keep = 500, so the long histories have rotated
// into archives). Rotation should make the cost depend on `keep`, not on the
// number of entries ever written: the 100,000 / 100 ratio stays near the
// ratio of live-file sizes, and 100,000 / 10,000 stays near 1.
//
// Usage: changelog_bench [WORK_DIR]   (default: a new folder under $TMPDIR)
//
// On a disk, prepend() is dominated by its fsyncs (one per replaced file and
// folder); a WORK_DIR on tmpfs (/dev/shm) shows the CPU and copy cost alone
// and fills the 100,000 entries in a fraction of the time.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ctime>
#include <string>
#include <vector>

#include "lib/store/changelog.hpp"
#include "lib/util/time.hpp"

namespace fs = std::filesystem;

namespace {

constexpr size_t k_keep = 500;
constexpr int k_runs = 51;

kai::Entry nth_entry(long i) {
  kai::TimePoint t = kai::TimePoint{} + std::chrono::seconds(1783000000 + i);
  kai::Entry e;
  e.time = kai::iso_utc(t);
  e.kind = "edit";
  e.rollback_id = kai::compact_utc(t);
  e.files = {"/home/me/proj/src/leo.mjs"};
  e.action = "edit_file";
  e.summary = "Guarded the TTS call with a null-voice check (" + std::to_string(i) + ").";
  e.why = "Leo crashed on empty text; add a guard.";
  e.backup = "/home/me/proj/src/leo.mjs.bak-kaicoder-" + e.rollback_id;
  e.approver = "ryan";
  e.result = "ok";
  e.rollback = "restore leo.mjs.bak-kaicoder-" + e.rollback_id + " \xE2\x86\x92 leo.mjs";
  return e;
}

// Wall time alone is unreliable on a shared machine, so each operation also
// records its thread CPU time; both are summarised over k_runs.
struct Timing {
  double wall_min_us = 0;
  double cpu_median_us = 0;
};

struct Sample {
  Timing prepend;
  Timing newest;
  size_t live_entries = 0;
  size_t archives = 0;
};

double cpu_now_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

template <typename F>
Timing time_runs(F&& f) {
  std::vector<double> wall, cpu;
  for (int r = 0; r < k_runs; ++r) {
    double c0 = cpu_now_us();
    auto t0 = std::chrono::steady_clock::now();
    f();
    auto t1 = std::chrono::steady_clock::now();
    cpu.push_back(cpu_now_us() - c0);
    wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(cpu.begin(), cpu.end());
  return {*std::min_element(wall.begin(), wall.end()), cpu[cpu.size() / 2]};
}

bool fill(kai::Changelog& log, long& next, long upto) {
  for (; next < upto; ++next) {
    if (auto s = log.prepend(nth_entry(next)); !s) {
      std::fprintf(stderr, "changelog_bench: %s\n", s.error().message.c_str());
      return false;
    }
    if (next % 10000 == 0 && next > 0) std::fprintf(stderr, "  %ld entries...\n", next);
  }
  return true;
}

// Each timed prepend adds one entry, which is noise next to the history
// lengths compared. The reads are timed in their own loop: right after an
// fsync wait the CPU is still clocked down.
Sample measure(kai::Changelog& log, long& next, const fs::path& archive_dir) {
  Sample s;
  auto parsed = log.parse_live();
  s.live_entries = parsed ? parsed->entries.size() : 0;
  for (const auto& d : fs::directory_iterator(archive_dir)) s.archives += d.path().extension() == ".md";
  s.prepend = time_runs([&] { (void)log.prepend(nth_entry(next++)); });
  (void)log.newest(1);
  s.newest = time_runs([&] { (void)log.newest(1); });
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir;
  if (argc > 1) {
    dir = argv[1];
    fs::create_directories(dir);
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/kaicoder-bench-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) return 1;
    dir = tmpl;
  }
  fs::path archive_dir = dir / "archive";
  fs::create_directories(archive_dir);
  kai::Changelog log{dir / "KAI-CODER-CHANGELOG.md", archive_dir, k_keep};

  std::printf("changelog bench in %s (keep = %zu, %d runs each)\n", dir.c_str(), k_keep, k_runs);
  std::printf("%9s %6s %9s | %-26s | %-26s\n", "history", "live", "archives", "prepend (us)", "newest(1) (us)");
  std::printf("%9s %6s %9s | %12s %13s | %12s %13s\n", "", "", "", "wall min", "cpu median", "wall min", "cpu median");
  long next = 0;
  std::vector<Sample> rows;
  for (long target : {100L, 10000L, 100000L}) {
    if (!fill(log, next, target)) return 1;
    Sample s = measure(log, next, archive_dir);
    rows.push_back(s);
    std::printf("%9ld %6zu %9zu | %12.1f %13.1f | %12.1f %13.1f\n", target, s.live_entries, s.archives,
                s.prepend.wall_min_us, s.prepend.cpu_median_us, s.newest.wall_min_us, s.newest.cpu_median_us);
    std::fflush(stdout);
  }
  auto ratio = [&](const char* what, const Sample& a, const Sample& b) {
    std::printf("ratio %s: prepend %.2fx wall, %.2fx cpu; newest(1) %.2fx wall, %.2fx cpu\n", what,
                a.prepend.wall_min_us / b.prepend.wall_min_us, a.prepend.cpu_median_us / b.prepend.cpu_median_us,
                a.newest.wall_min_us / b.newest.wall_min_us, a.newest.cpu_median_us / b.newest.cpu_median_us);
  };
  ratio("100000/100  ", rows[2], rows[0]);
  ratio("100000/10000", rows[2], rows[1]);
  if (argc <= 1) fs::remove_all(dir);
  return 0;
}
