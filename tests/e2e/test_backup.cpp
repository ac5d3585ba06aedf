// Backups beside the file, byte-exact content and file modes through apply
// and rollback.

#include <set>

#include "tests/support/loop.hpp"

namespace {
using namespace kai::test;
using json = nlohmann::json;

TEST_CASE("a backup sits beside the file as <file>.bak-kaicoder-<rollback-id> with the old bytes", "[e2e][backup]") {
  TempRepo repo{{"deep/er/x.cfg", "k=1\n"}};
  repo.init();
  KAI_REQUIRE_EXIT(repo.kai(edit("deep/er/x.cfg", "k=1", "k=2")), 0);
  std::string id = approve(repo, 1);
  CHECK(repo.find(".bak-kaicoder-") == std::vector<std::string>{"deep/er/x.cfg.bak-kaicoder-" + id});
  CHECK(repo.read("deep/er/x.cfg.bak-kaicoder-" + id) == "k=1\n");
  CHECK(repo.read("deep/er/x.cfg") == "k=2\n");
  CHECK(show_json(repo, 1).at("backup") == repo.abs("deep/er/x.cfg.bak-kaicoder-" + id).string());
}

TEST_CASE("two changes in one second get distinct rollback ids and backups", "[e2e][backup]") {
  TempRepo repo{{"a.txt", "1\n2\n3\n"}};
  repo.init();
  for (const char* l : {"1", "2", "3"}) KAI_REQUIRE_EXIT(repo.kai(edit("a.txt", l, std::string(l) + "x")), 0);
  for (const char* id : {"1", "2", "3"}) KAI_REQUIRE_EXIT(repo.kai_tty({"approve", id, "--no-apply"}, "y"), 0);
  std::set<std::string> ids;
  for (const char* id : {"1", "2", "3"}) {
    Run a = repo.kai({"--json", "apply", id});
    KAI_REQUIRE_EXIT(a, 0);
    std::string rid = json_of(a).at("applied").at("rollback_id");
    CHECK(is_rollback_id(rid));
    ids.insert(rid);
    CHECK(repo.exists("a.txt.bak-kaicoder-" + rid));
  }
  CHECK(ids.size() == 3);
  CHECK(repo.read("a.txt") == "1x\n2x\n3x\n");
}

TEST_CASE("CRLF, a missing final newline and binary bytes survive apply and rollback byte for byte", "[e2e][bytes]") {
  const std::string crlf = "one\r\ntwo\r\nthree\r\n";
  const std::string no_eol = "alpha\nbeta";
  std::string binary(
      "\x00\x01\xff\xfe\r\n\x7f"
      "ELF\x00\x00",
      12);
  std::string binary2 = binary + std::string("\x00\x80\x81", 3);
  TempRepo repo{{"crlf.txt", crlf}, {"noeol.txt", no_eol}, {"blob.bin", binary}};
  repo.init();
  repo.write("bin.in", binary2);

  KAI_REQUIRE_EXIT(repo.kai(edit("crlf.txt", "two\r\n", "TWO\r\n2b\r\n")), 0);
  KAI_REQUIRE_EXIT(repo.kai(edit("noeol.txt", "beta", "BETA")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "blob.bin", "--content-file", "bin.in", "--why", "w"}), 0);
  std::string r1 = approve(repo, 1);
  std::string r2 = approve(repo, 2);
  std::string r3 = approve(repo, 3);
  CHECK(repo.read("crlf.txt") == "one\r\nTWO\r\n2b\r\nthree\r\n");
  CHECK(repo.read("noeol.txt") == "alpha\nBETA");
  CHECK(repo.read("blob.bin") == binary2);
  CHECK(repo.read("crlf.txt.bak-kaicoder-" + r1) == crlf);
  CHECK(repo.read("noeol.txt.bak-kaicoder-" + r2) == no_eol);
  CHECK(repo.read("blob.bin.bak-kaicoder-" + r3) == binary);

  for (const std::string& id : {r1, r2, r3}) KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", id}, "y"), 0);
  CHECK(repo.read("crlf.txt") == crlf);
  CHECK(repo.read("noeol.txt") == no_eol);
  CHECK(repo.read("blob.bin") == binary);
}

TEST_CASE("apply keeps the file's mode", "[e2e][mode]") {
  TempRepo repo{{"run.py", "print(1)\n"}, {"w.txt", "w\n"}, {"w.in", "W\n"}};
  repo.init();
  repo.chmod("run.py", 0755);
  repo.chmod("w.txt", 0600);
  KAI_REQUIRE_EXIT(repo.kai(edit("run.py", "print(1)", "print(2)")), 0);
  KAI_REQUIRE_EXIT(repo.kai({"propose", "--path", "w.txt", "--content-file", "w.in", "--why", "w"}), 0);
  std::string r1 = approve(repo, 1);
  approve(repo, 2);
  CHECK(repo.mode("run.py") == 0755);
  CHECK(repo.mode("w.txt") == 0600);
  CHECK(repo.read("run.py") == "print(2)\n");
  KAI_REQUIRE_EXIT(repo.kai_tty({"rollback", r1}, "y"), 0);
  CHECK(repo.mode("run.py") == 0755);
  CHECK(repo.read("run.py") == "print(1)\n");
}

}  // namespace
