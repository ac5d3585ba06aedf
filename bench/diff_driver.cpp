// Benchmark driver for kai::diff_buffers; bench/diff_bench.sh builds and runs it.
//
//   diff_driver gen DIR LINES KIND   write DIR/old and DIR/new; KIND is one of
//                                    one, pct1, pct30, different
//   diff_driver diff OLD NEW         full diff of two files on stdout; on stderr
//                                    "cpu_ms added removed hunks" for diff_buffers
//                                    alone (process CPU time: the benchmark may
//                                    share its cores with other work)
//
// The generated files look like code: mostly unique statements, with blank
// lines, braces and repeated returns that give the diff real choices to make.

#include <time.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "lib/diff/diff.hpp"
#include "lib/util/git.hpp"
#include "bench/rng.hpp"

namespace {

void code_line(std::string& out, long i, Rng& rng) {
  const uint64_t r = rng.next();
  switch (r % 10) {
    case 0: out += "\n"; break;
    case 1: out += "}\n"; break;
    case 2: out += "    return result;\n"; break;
    default:
      fmt::format_to(std::back_inserter(out), "    value_{} = compute({}, {}, \"{}\");\n", i, r % 1000, r % 77,
                     r % 4096);
  }
}

// Each line is changed with probability `p`: replaced, deleted, or followed
// by a new line, in equal shares.
void edit(std::string& out, const std::string& line, long i, double p, Rng& rng) {
  if (!rng.chance(p)) {
    out += line;
    return;
  }
  switch (rng.next() % 3) {
    case 0: fmt::format_to(std::back_inserter(out), "    edited_{} = {};\n", i, rng.next() % 100000); break;
    case 1: break;
    default: out += line; fmt::format_to(std::back_inserter(out), "    inserted_{} = {};\n", i, rng.next() % 100000);
  }
}

bool write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(f);
}

int generate(const std::string& dir, long lines, std::string_view kind) {
  Rng base{42}, edits{7};
  std::string old_text, new_text, line;
  const double p = kind == "pct1" ? 0.01 : kind == "pct30" ? 0.30 : 0.0;
  for (long i = 0; i < lines; ++i) {
    line.clear();
    code_line(line, i, base);
    old_text += line;
    if (kind == "different")
      fmt::format_to(std::back_inserter(new_text), "other_{} = {};\n", i, edits.next() % 1000000);
    else if (kind == "one" && i == lines / 2)
      new_text += "    changed = 1;\n";
    else
      edit(new_text, line, i, p, edits);
  }
  if (kind != "one" && kind != "pct1" && kind != "pct30" && kind != "different") {
    std::fprintf(stderr, "unknown kind %.*s\n", static_cast<int>(kind.size()), kind.data());
    return 2;
  }
  return write_file(dir + "/old", old_text) && write_file(dir + "/new", new_text) ? 0 : 1;
}

double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// One sized read, as the real CLI reads a file: no per-character streaming.
bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return false;
  out.resize(static_cast<size_t>(f.tellg()));
  f.seekg(0);
  f.read(out.data(), static_cast<std::streamsize>(out.size()));
  return static_cast<bool>(f);
}

int diff_files(const std::string& old_path, const std::string& new_path) {
  std::string before, after;
  if (!read_file(old_path, before) || !read_file(new_path, after)) return 1;
  kai::DiffOptions opts;
  opts.full = true;
  // libgit2's one-time start-up is paid by the process (and shows in the
  // process's CPU time), not by each diff.
  kai::git_init_once();
  const double t0 = cpu_ms();
  kai::Result<kai::FileDiff> d = kai::diff_buffers("file", before, after, 0644, opts);
  const double t1 = cpu_ms();
  if (!d) {
    std::fprintf(stderr, "%s\n", d.error().message.c_str());
    return 1;
  }
  std::fwrite(d->text.data(), 1, d->text.size(), stdout);
  std::fprintf(stderr, "%.1f %zu %zu %zu\n", t1 - t0, d->added, d->removed, d->hunks);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view cmd = argc > 1 ? argv[1] : "";
  if (cmd == "gen" && argc == 5) return generate(argv[2], std::stol(argv[3]), argv[4]);
  if (cmd == "diff" && argc == 4) return diff_files(argv[2], argv[3]);
  std::fprintf(stderr, "usage: diff_driver gen DIR LINES KIND | diff_driver diff OLD NEW\n");
  return 2;
}
