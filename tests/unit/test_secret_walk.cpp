// The secret-file walk and its cache (lib/config/secret_walk): folders whose
// stat data match a sealed cache are not read again; anything else is.

#include "unit/temp_dir.hpp"

#include <algorithm>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/config/secret_walk.hpp"
#include "lib/store/mac.hpp"
#include "lib/util/stack.hpp"
#include "lib/util/stat.hpp"

namespace {
namespace fs = std::filesystem;
using kai::test::TempDir;

constexpr uint64_t k_walk_second = 1000000000ull;

struct WalkTree {
  TempDir d;
  fs::path root = d.path() / "root";
  fs::path owner = d.path() / "owner";
  kai::Guardrails g;

  WalkTree() {
    d.write("root/src/a.c", "int a;\n");
    d.write("root/src/b.c", "int b;\n");
    d.write("root/.env", "TOKEN=one\n");
    d.write("root/conf/id_rsa", "KEY\n");
    d.write("root/conf/app.toml", "x = 1\n");
    d.write("root/node_modules/pkg/.env", "SKIPPED=1\n");  // generated: never entered
    d.write("root/.kaicoder/secrets.env", "SKIPPED=1\n");
    REQUIRE(kai::create_key(owner));
  }
  kai::Sealer sealer() const { return kai::Sealer(owner, root); }
  // A walk as of `now`; `later` seconds past the clock keeps the folders
  // just made out of the racy window of the cache it writes.
  kai::SecretWalk walk(uint64_t later, kai::ListedFolders* listed = nullptr) const {
    return kai::walk_secret_files(root, g, sealer(), owner, listed, kai::now_ns() + later * k_walk_second);
  }
  fs::path cache() const { return kai::secret_walk_cache(sealer(), owner); }
};

std::vector<std::string> sorted_files(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string walk_cache_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void put_walk_cache(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

const std::vector<std::string> k_walk_secrets = {".env", "conf/id_rsa"};

}  // namespace

TEST_CASE("secret walk: a second walk of an unchanged tree reads no folder", "[secret_walk]") {
  WalkTree t;
  kai::ListedFolders listed;
  auto first = t.walk(5, &listed);
  CHECK(sorted_files(first.files) == k_walk_secrets);
  CHECK_FALSE(first.cache_used);
  CHECK(first.folders_read == 3);  // root, src, conf
  CHECK(first.cache_written);
  CHECK(listed.folders.size() == 3);
  // In the owner's folder, never in the tree.
  REQUIRE_FALSE(t.cache().empty());
  CHECK(fs::exists(t.cache()));
  CHECK(t.cache().parent_path().parent_path() == t.owner);

  kai::ListedFolders again;
  auto second = t.walk(6, &again);
  CHECK(second.files == first.files);
  CHECK(second.cache_used);
  CHECK(second.folders_read == 0);
  CHECK(second.folders_kept == 3);
  CHECK_FALSE(second.cache_written);  // nothing new to note
  CHECK(again.folders.empty());
}

TEST_CASE("secret walk: a tree deeper than the caller's stack is meant for is walked whole, once", "[secret_walk]") {
  // Past k_shallow_depth levels the walk starts again on a stack of its
  // own; what it finds and what it caches are those of one walk.
  WalkTree t;
  std::string deep = "root/chain";
  for (size_t i = 0; i < 4 * kai::k_shallow_depth; ++i) deep += "/n";
  t.d.write(deep + "/.env", "TOKEN=deep\n");
  t.d.write("root/chain/shallow/.env", "TOKEN=shallow\n");
  const std::string bottom = deep.substr(std::string("root/").size()) + "/.env";
  const size_t folders = 3 + 2 + 4 * kai::k_shallow_depth;  // root, src, conf; chain, shallow; the n's

  kai::ListedFolders listed;
  auto first = t.walk(5, &listed);
  CHECK(std::count(first.files.begin(), first.files.end(), bottom) == 1);
  CHECK(std::count(first.files.begin(), first.files.end(), "chain/shallow/.env") == 1);
  CHECK(first.files.size() == k_walk_secrets.size() + 2);
  CHECK(first.folders_read == folders);
  CHECK(listed.folders.size() == folders);  // each folder handed over once, not once per try
  CHECK(first.cache_written);

  auto second = t.walk(6);
  CHECK(second.files == first.files);
  CHECK(second.cache_used);
  CHECK(second.folders_read == 0);
  CHECK(second.folders_kept == folders);
}

TEST_CASE("secret walk: a changed folder is read again, the rest kept", "[secret_walk]") {
  WalkTree t;
  REQUIRE(t.walk(5).cache_written);
  SECTION("a secret file added") {
    t.d.write("root/conf/.env.local", "MORE=1\n");
    auto w = t.walk(6);
    CHECK(sorted_files(w.files) == std::vector<std::string>{".env", "conf/.env.local", "conf/id_rsa"});
    CHECK(w.folders_read == 1);
    CHECK(w.folders_kept == 2);
    CHECK(w.cache_written);
    auto next = t.walk(7);
    CHECK(next.folders_read == 0);
    CHECK(sorted_files(next.files) == sorted_files(w.files));
  }
  SECTION("a new folder deep down, with a secret file") {
    t.d.write("root/src/deep/er/credentials.json", "{}\n");
    auto w = t.walk(6);
    CHECK(sorted_files(w.files) == std::vector<std::string>{".env", "conf/id_rsa", "src/deep/er/credentials.json"});
    CHECK(w.folders_read == 3);  // src, deep, er
  }
  SECTION("a secret file renamed away") {
    fs::rename(t.root / "conf" / "id_rsa", t.root / "conf" / "notes.txt");
    CHECK(t.walk(6).files == std::vector<std::string>{".env"});
  }
  SECTION("a folder swapped for a symlink to one with a secret file") {
    t.d.write("elsewhere/.env", "OUT=1\n");
    fs::remove_all(t.root / "src");
    fs::create_directory_symlink(t.d.path() / "elsewhere", t.root / "src");
    CHECK(sorted_files(t.walk(6).files) == k_walk_secrets);  // a symlink is not followed, cached or not
  }
}

TEST_CASE("secret walk: a folder changed in the racy window of the cache is read again", "[secret_walk]") {
  WalkTree t;
  // Written as the folders were just made: within k_racy_ns of the walk.
  REQUIRE(t.walk(0).cache_written);
  auto w = t.walk(5);
  CHECK(w.cache_used);
  CHECK(w.folders_read == 3);  // the same stat data, but not trusted
  CHECK(w.cache_written);
  CHECK(t.walk(6).folders_read == 0);  // now written well after their change
}

TEST_CASE("secret walk: a cache that does not verify is walked past", "[secret_walk]") {
  WalkTree t;
  REQUIRE(t.walk(5).cache_written);
  const std::string text = walk_cache_text(t.cache());
  const size_t nl = text.find('\n');
  REQUIRE(nl != std::string::npos);
  std::string body = text.substr(nl + 1);
  // The forgery every case below tries: the conf folder's entry without its secret file.
  const std::string item = "s6:id_rsa";
  REQUIRE(body.find(item) != std::string::npos);
  std::string forged = body;
  forged.erase(forged.find(item), item.size());
  const size_t line_end = forged.find('\n', forged.find("5:conf/"));
  REQUIRE(forged.compare(line_end - 2, 2, " 1") == 0);
  forged.replace(line_end - 2, 2, " 0");
  {
    // Sealed with the owner's key, the forgery would be believed: only the seal stands in its way.
    auto mac = t.sealer().seal("secret-walk", "", forged);
    REQUIRE(mac);
    put_walk_cache(t.cache(), *mac + "\n" + forged);
    auto believed = t.walk(5);
    REQUIRE(believed.cache_used);
    REQUIRE(believed.files == std::vector<std::string>{".env"});
  }
  SECTION("the old seal over changed bytes") { put_walk_cache(t.cache(), text.substr(0, nl + 1) + forged); }
  SECTION("no seal") { put_walk_cache(t.cache(), "\n" + forged); }
  SECTION("sealed with another owner's key") {
    const fs::path other = t.d.path() / "agent";
    REQUIRE(kai::create_key(other));
    auto mac = kai::Sealer(other, t.root).seal("secret-walk", "", forged);
    REQUIRE(mac);
    put_walk_cache(t.cache(), *mac + "\n" + forged);
  }
  SECTION("a sound cache of another root") {
    TempDir o;
    o.write("root/.env", "X=1\n");
    const fs::path root2 = o.path() / "root";
    auto w = kai::walk_secret_files(root2, t.g, kai::Sealer(t.owner, root2), t.owner, nullptr,
                                    kai::now_ns() + 5 * k_walk_second);
    REQUIRE(w.cache_written);
    fs::copy_file(kai::secret_walk_cache(kai::Sealer(t.owner, root2), t.owner), t.cache(),
                  fs::copy_options::overwrite_existing);
  }
  SECTION("garbage") { put_walk_cache(t.cache(), std::string(1000, '\xff')); }
  SECTION("empty") { put_walk_cache(t.cache(), ""); }
  auto w = t.walk(6);
  CHECK_FALSE(w.cache_used);
  CHECK(sorted_files(w.files) == k_walk_secrets);
  CHECK(w.folders_read == 3);
  CHECK(w.cache_written);  // made sound again
  CHECK(t.walk(7).folders_read == 0);
}

TEST_CASE("secret walk: other guardrails or no key make a cache unused", "[secret_walk]") {
  WalkTree t;
  t.d.write("root/notes/plan.txt", "secret plan\n");
  REQUIRE(t.walk(5).cache_written);
  SECTION("deny_read added") {
    t.g.deny_read = {"notes/*.txt"};
    auto w = t.walk(6);
    CHECK_FALSE(w.cache_used);
    CHECK(sorted_files(w.files) == std::vector<std::string>{".env", "conf/id_rsa", "notes/plan.txt"});
  }
  SECTION("another state dir") {
    t.g.state_dir = ".state";
    auto w = t.walk(6);
    CHECK_FALSE(w.cache_used);
    CHECK(sorted_files(w.files) == std::vector<std::string>{".env", ".kaicoder/secrets.env", "conf/id_rsa"});
  }
  SECTION("no key: every folder read, nothing written") {
    fs::remove(t.owner / "key");
    auto w = t.walk(6);
    CHECK_FALSE(w.cache_used);
    CHECK_FALSE(w.cache_written);
    CHECK(sorted_files(w.files) == k_walk_secrets);
  }
}

TEST_CASE("secret walk: a cache that cannot be written changes nothing but the cost", "[secret_walk]") {
  WalkTree t;
  SECTION("its folder is a file") { t.d.write("owner/walk-cache", "in the way\n"); }
  SECTION("its name is a folder") {
    fs::create_directories(t.cache());
    t.d.write("owner/walk-cache/" + t.cache().filename().string() + "/x", "in the way\n");
  }
  auto w = t.walk(5);
  CHECK(sorted_files(w.files) == k_walk_secrets);
  CHECK_FALSE(w.cache_written);
  auto again = t.walk(6);
  CHECK(sorted_files(again.files) == k_walk_secrets);
  CHECK(again.folders_read == 3);
}

TEST_CASE("secret walk: a walk cut short by its bounds writes no cache", "[secret_walk]") {
  WalkTree t;
  for (size_t i = 0; i < kai::k_secret_walk_files + 5; ++i) t.d.write("root/many/" + std::to_string(i) + ".env", "");
  auto w = t.walk(5);
  CHECK(w.files.size() == kai::k_secret_walk_files);
  CHECK_FALSE(w.cache_written);
}

TEST_CASE("secret walk: the owner's cache folder keeps the newest caches and drops a crash's old temp files",
          "[secret_walk]") {
  WalkTree t;
  const fs::path folder = t.cache().parent_path();
  fs::create_directories(folder);
  const auto hex_name = [](int i) { return fmt::format("{:064x}", i + 1); };
  const auto aged = [&](const std::string& name, int64_t seconds_ago) {
    put_walk_cache(folder / name, "old");
    const timespec when[2] = {{static_cast<time_t>(::time(nullptr) - seconds_ago), 0},
                              {static_cast<time_t>(::time(nullptr) - seconds_ago), 0}};
    REQUIRE(::utimensat(AT_FDCWD, (folder / name).c_str(), when, 0) == 0);
  };
  // 70 other roots' caches, cache i written i minutes ago.
  for (int i = 0; i < 70; ++i) aged(hex_name(i), 60 * (i + 1));
  aged(hex_name(100) + ".tmp-123", 3600);  // a crash's, an hour ago
  aged(hex_name(101) + ".tmp-456", 5);     // another writer's, just now
  aged("notes.txt", 7200);                 // not a name kaicoder gives
  put_walk_cache(t.d.path() / "outside.txt", "not the cache's");
  fs::create_symlink(t.d.path() / "outside.txt", folder / hex_name(102));

  auto w = t.walk(2);
  REQUIRE(w.cache_written);
  CHECK(fs::exists(t.cache()));
  // 64 caches stay: the one just written and the 63 newest others.
  for (int i = 0; i < 63; ++i) CHECK(fs::exists(folder / hex_name(i)));
  for (int i = 63; i < 70; ++i) CHECK_FALSE(fs::exists(folder / hex_name(i)));
  CHECK_FALSE(fs::exists(folder / (hex_name(100) + ".tmp-123")));
  CHECK(fs::exists(folder / (hex_name(101) + ".tmp-456")));
  CHECK(fs::exists(folder / "notes.txt"));
  CHECK(fs::is_symlink(folder / hex_name(102)));
  CHECK(fs::exists(t.d.path() / "outside.txt"));
  // The walk's own result is unchanged by the pruning.
  CHECK(sorted_files(w.files) == k_walk_secrets);
}
