#include "lib/run/snapshot_cache.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/util/git_tree.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {
constexpr std::string_view k_cache_magic = "kaicoder stat cache 2\n";
}  // namespace

// "<size> <mtime> <ctime> <ino> <mode> <git mode> <usable> <id>\t<path>\0" per file,
// after these lines.
std::string cache_head(const fs::path& root, const Guardrails& g) {
  std::string out = std::string(k_cache_magic) + root.string() + "\n" + g.state_dir + "\n" + g.changelog + "\n";
  for (const auto* list : {&g.config_files, &g.deny_read}) out += fmt::format("{}\n", fmt::join(*list, "\t"));
  return out;
}

Cache load_cache(const fs::path& file, const std::string& head, std::vector<const Cache::value_type*>* order) {
  Cache out;
  std::vector<const Cache::value_type*> seen;  // handed over only when the whole file parsed
  auto text = read_file(file);
  if (!text || !text->starts_with(head)) return out;
  std::string_view t = *text;
  size_t pos = head.size();
  out.reserve(static_cast<size_t>(std::count(t.begin() + static_cast<ptrdiff_t>(pos), t.end(), '\0')));
  while (pos < t.size()) {
    size_t tab = t.find('\t', pos), nul = t.find('\0', pos);
    if (tab == std::string_view::npos || nul == std::string_view::npos || tab > nul) return {};
    std::string_view f = t.substr(pos, tab - pos);
    Cached c;
    uint64_t v[7];
    const char* p = f.data();
    const char* e = f.data() + f.size();
    for (int i = 0; i < 7; ++i) {
      auto r = std::from_chars(p, e, v[i]);
      if (r.ec != std::errc{} || r.ptr == e || *r.ptr != ' ') return {};
      p = r.ptr + 1;
    }
    if (e - p != GIT_OID_HEXSZ || git_oid_fromstrn(&c.id, p, GIT_OID_HEXSZ) < 0) return {};
    c.st = {v[0], v[1], v[2], v[3], static_cast<uint32_t>(v[4])};
    c.git_mode = static_cast<uint32_t>(v[5]);
    c.usable = v[6] == 1;
    auto [it, added] = out.emplace(std::string(t.substr(tab + 1, nul - tab - 1)), c);
    if (added) seen.push_back(&*it);
    pos = nul + 1;
  }
  if (order) *order = std::move(seen);
  return out;
}

Status save_cache(const fs::path& file, const std::string& head, const std::vector<const Cache::value_type*>& order) {
  std::string out = head;
  out.reserve(out.size() + order.size() * 120);
  for (const auto* entry : order) {
    const auto& [rel, c] = *entry;
    out += fmt::format("{} {} {} {} {} {} {} {}\t{}", c.st.size, c.st.mtime_ns, c.st.ctime_ns, c.st.ino, c.st.mode,
                       c.git_mode, c.usable ? 1 : 0, hex(c.id), rel) +
           '\0';
  }
  return write_file_atomic(file, out, 0600);
}

void StatCache::load(const fs::path& file, const std::string& head) {
  order.clear();
  files = load_cache(file, head, &order);
  loaded = true;
  // In walk order, a folder's files come one after another: its folders
  // are looked up once, not once a file.
  std::string_view last;
  for (const auto* entry : order) {
    const std::string& rel = entry->first;
    std::string_view folder(rel.data(), std::min(rel.size(), rel.rfind('/')));
    if (folder == last) continue;
    last = folder;
    for (auto slash = rel.rfind('/'); slash != std::string::npos && slash > 0; slash = rel.rfind('/', slash - 1))
      if (!dirs.insert(rel.substr(0, slash)).second) break;
  }
  struct stat st;
  if (::stat(file.c_str(), &st) == 0) on_disk = key_of(st);
}

}  // namespace kai
