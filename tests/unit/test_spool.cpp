// The spool of two-user mode (lib/store/spool, lib/two_user/intake request formats) and
// what a Unix user can reach in a tree (lib/two_user/agent_user agent_access).

#include "unit/temp_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/two_user/agent_side.hpp"
#include "lib/two_user/agent_user.hpp"
#include "lib/gate/gate.hpp"
#include "lib/two_user/intake.hpp"
#include "lib/store/spool.hpp"
#include "lib/gate/status.hpp"
#include "unit/ws_fixture.hpp"

namespace {
using kai::Errc;
using kai::test::mode_of;
using kai::test::TempDir;
namespace fs = std::filesystem;

const std::string k_good =
    R"({"version":1,"type":"propose","cwd":"src","request":{"path":"a.txt","target":"old","replacement":"new","why":"t"}})";

kai::TimePoint some_time() { return kai::TimePoint(std::chrono::seconds(1767225600)); }

// Ticket `name` as intake leaves one whose entry it quarantined: no
// proposal, the usage error "malformed spool entry: x".
void write_quarantined(const fs::path& state, const std::string& name) {
  kai::TicketInfo bad;
  bad.ticket = name;
  bad.quarantined = true;
  bad.error = kai::Error{Errc::usage, "malformed spool entry: x", ""};
  REQUIRE(kai::write_ticket(state, bad));
}

}  // namespace

TEST_CASE("a spool entry is parsed strictly", "[spool]") {
  auto e = kai::parse_entry(k_good);
  REQUIRE(e);
  CHECK(e->type == kai::EntryType::propose);
  CHECK(e->cwd == "src");
  CHECK(e->request.at("path") == "a.txt");
  // What entry_text writes, parse_entry reads back.
  auto again = kai::parse_entry(kai::entry_text(*e));
  REQUIRE(again);
  CHECK(again->request == e->request);

  for (const std::string& bad : {
           std::string("{not json"),
           std::string("[1,2]"),
           std::string(R"({"version":1,"type":"propose","cwd":"","request":{}} trailing)"),
           std::string(R"({"version":2,"type":"propose","cwd":"","request":{}})"),
           std::string(R"({"version":"1","type":"propose","cwd":"","request":{}})"),
           std::string(R"({"version":1,"type":"delete-everything","cwd":"","request":{}})"),
           std::string(R"({"version":1,"type":"propose","cwd":"/etc","request":{}})"),
           std::string(R"({"version":1,"type":"propose","cwd":"src/../..","request":{}})"),
           std::string(R"({"version":1,"type":"propose","cwd":"","request":"x"})"),
           std::string(R"({"version":1,"type":"propose","request":{}})"),
           std::string(R"({"version":1,"type":"propose","cwd":"","request":{},"agent":"root"})"),
           std::string("{\"version\":1,\"type\":\"propose\",\"cwd\":\"\xff\",\"request\":{}}"),
       }) {
    INFO(bad);
    auto r = kai::parse_entry(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::usage);
    CHECK_THAT(r.error().message, Catch::Matchers::StartsWith("malformed spool entry"));
  }
}

TEST_CASE("a run request from the spool is parsed strictly", "[spool]") {
  kai::RunRequest r{{"make", "test"}, "", "sub", 30, true, "why", "me"};
  auto back = kai::run_request_from_json(kai::run_request_json(r));
  REQUIRE(back);
  CHECK(back->argv == r.argv);
  CHECK(back->cwd == "sub");
  CHECK(back->timeout == 30);
  CHECK(back->network);
  CHECK(back->proposer_uid == -1);  // never taken from the request
  for (const char* bad : {R"({"argv":"ls"})", R"({"argv":[1]})", R"({"timeout":-1})", R"({"timeout":999999})",
                          R"({"network":"yes"})", R"({"proposer_uid":0})", R"({"shell":5})", R"([])"}) {
    INFO(bad);
    auto j = nlohmann::json::parse(bad);
    auto p = kai::run_request_from_json(j);
    REQUIRE_FALSE(p);
    CHECK(p.error().code == Errc::usage);
  }
  // A propose request round-trips through the --json-input reader.
  kai::ProposeRequest pr;
  pr.path = "a.txt";
  pr.target = "old";
  pr.replacement = "new";
  pr.why = "w";
  pr.replace_all = true;
  auto pj = kai::request_from_json(kai::request_json(pr).dump());
  REQUIRE(pj);
  CHECK(pj->path == "a.txt");
  CHECK(pj->replace_all);  // --replace-all travels through the spool too
  CHECK(pj->target == std::optional<std::string>("old"));
  CHECK_FALSE(pj->content);
}

TEST_CASE("the agent side writes an entry exclusively and gets its ticket", "[spool]") {
  TempDir t;
  const fs::path state = t.path() / ".kaicoder";
  // No spool: nothing to write into.
  auto none = kai::write_entry(state, k_good, 1 << 20, some_time());
  REQUIRE_FALSE(none);
  CHECK(none.error().code == Errc::denied);

  fs::create_directories(kai::spool::dir(state));
  CHECK(kai::has_spool(state));
  auto ticket = kai::write_entry(state, k_good, 1 << 20, some_time());
  REQUIRE(ticket);
  CHECK(kai::is_ticket(*ticket));
  CHECK_THAT(*ticket, Catch::Matchers::StartsWith("20260101T000000Z-" + std::to_string(::getuid()) + "-"));
  const fs::path entry = kai::spool::dir(state) / (*ticket + ".json");
  CHECK(mode_of(entry) == 0644);
  CHECK(kai::waiting_entries(state) == std::vector<std::string>{*ticket + ".json"});
  // Two entries in the same second never share a name.
  auto second = kai::write_entry(state, k_good, 1 << 20, some_time());
  REQUIRE(second);
  CHECK(*second != *ticket);

  auto read = kai::read_claimed_entry(kai::spool::dir(state), *ticket + ".json", 1 << 20);
  REQUIRE(read);
  CHECK(read->uid == ::getuid());
  CHECK(kai::parse_entry(read->bytes));

  auto big = kai::write_entry(state, std::string(100, ' '), 99, some_time());
  REQUIRE_FALSE(big);
  CHECK(big.error().code == Errc::usage);
  CHECK(kai::waiting_entries(state).size() == 2);  // nothing left behind by the refusal
}

TEST_CASE("a claimed entry that is a symlink, a hard link, a folder, writable by others or too big is refused",
          "[spool]") {
  TempDir t;
  const fs::path dir = t.path() / "claimed";
  t.write("claimed/ok.json", k_good);
  t.write("target.txt", "secret\n");
  CHECK(kai::read_claimed_entry(dir, "ok.json", 1 << 20));

  t.symlink("claimed/link.json", "../target.txt");
  auto link = kai::read_claimed_entry(dir, "link.json", 1 << 20);
  REQUIRE_FALSE(link);
  CHECK(link.error().code == Errc::denied);
  CHECK_THAT(link.error().message, Catch::Matchers::Contains("symlink"));

  REQUIRE(::link((t.path() / "target.txt").c_str(), (dir / "hard.json").c_str()) == 0);
  auto hard = kai::read_claimed_entry(dir, "hard.json", 1 << 20);
  REQUIRE_FALSE(hard);
  CHECK_THAT(hard.error().message, Catch::Matchers::Contains("hard links"));

  fs::create_directories(dir / "folder.json");
  auto folder = kai::read_claimed_entry(dir, "folder.json", 1 << 20);
  REQUIRE_FALSE(folder);
  CHECK_THAT(folder.error().message, Catch::Matchers::Contains("not a regular file"));

  REQUIRE(::mkfifo((dir / "fifo.json").c_str(), 0644) == 0);
  auto fifo = kai::read_claimed_entry(dir, "fifo.json", 1 << 20);  // never blocks on a FIFO
  REQUIRE_FALSE(fifo);
  CHECK_THAT(fifo.error().message, Catch::Matchers::Contains("not a regular file"));

  t.write("claimed/open.json", k_good);
  fs::permissions(dir / "open.json", fs::perms(0666));
  auto open = kai::read_claimed_entry(dir, "open.json", 1 << 20);
  REQUIRE_FALSE(open);
  CHECK_THAT(open.error().message, Catch::Matchers::Contains("writable by others"));

  t.write("claimed/setid.json", k_good);
  REQUIRE(::chmod((dir / "setid.json").c_str(), 04644) == 0);
  auto setid = kai::read_claimed_entry(dir, "setid.json", 1 << 20);
  REQUIRE_FALSE(setid);
  CHECK_THAT(setid.error().message, Catch::Matchers::Contains("set-id"));

  auto small = kai::read_claimed_entry(dir, "ok.json", 10);
  REQUIRE_FALSE(small);
  CHECK_THAT(small.error().message, Catch::Matchers::Contains("over the limit"));

  auto missing = kai::read_claimed_entry(dir, "missing.json", 1 << 20);
  REQUIRE_FALSE(missing);
  CHECK(t.read("target.txt") == "secret\n");
}

TEST_CASE("tickets: names, what intake writes and what the agent reads", "[spool]") {
  CHECK(kai::is_ticket("20260101T000000Z-1001-0a1b2c3d4e5f"));
  CHECK(kai::is_ticket("t-bad"));
  for (const char* bad : {"", "12", "-x", "a/b", "a.json", "../x", "a b", "a\nb"}) {
    INFO(bad);
    CHECK_FALSE(kai::is_ticket(bad));
  }
  CHECK_FALSE(kai::is_ticket(std::string(81, 'a')));

  TempDir t;
  const fs::path state = t.path() / ".kaicoder";
  fs::create_directories(kai::spool::tickets(state));
  auto none = kai::read_ticket(state, "t-1");
  REQUIRE(none);
  CHECK_FALSE(*none);
  kai::TicketInfo ok;
  ok.ticket = "t-1";
  ok.proposal = 7;
  ok.uid = 1001;
  ok.proposer = "agent";
  REQUIRE(kai::write_ticket(state, ok));
  CHECK(mode_of(kai::spool::tickets(state) / "t-1.json") == 0640);
  auto back = kai::read_ticket(state, "t-1");
  REQUIRE(back);
  REQUIRE(*back);
  CHECK((*back)->proposal == 7);
  CHECK((*back)->proposer == "agent");
  auto id = kai::proposal_of_ticket(state, "t-1");
  REQUIRE(id);
  CHECK(*id == 7);

  write_quarantined(state, "t-2");
  auto refused = kai::proposal_of_ticket(state, "t-2");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::usage);
  CHECK(refused.error().message == "malformed spool entry: x");

  kai::TicketInfo taking;
  taking.ticket = "t-4";
  REQUIRE(kai::write_ticket(state, taking, kai::Replace::no));
  // Never over a ticket already there.
  kai::TicketInfo late = taking;
  late.proposal = 99;
  REQUIRE(kai::write_ticket(state, late, kai::Replace::no));
  CHECK((*kai::read_ticket(state, "t-4"))->proposal == 0);
  REQUIRE(kai::write_ticket(state, ok, kai::Replace::no));
  CHECK((*kai::read_ticket(state, "t-1"))->proposal == 7);
  for (const auto& e : fs::directory_iterator(kai::spool::tickets(state)))
    CHECK(e.path().filename().string().front() != '.');  // no temp file left behind
  auto being = kai::proposal_of_ticket(state, "t-4");
  REQUIRE_FALSE(being);
  CHECK(being.error().code == Errc::not_found);
  CHECK_THAT(being.error().message, Catch::Matchers::Contains("waiting for intake"));

  auto unknown = kai::proposal_of_ticket(state, "t-3");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == Errc::not_found);
  fs::create_directories(kai::spool::dir(state));
  t.write(".kaicoder/spool/t-3.json", k_good);
  auto waiting = kai::proposal_of_ticket(state, "t-3");
  REQUIRE_FALSE(waiting);
  CHECK_THAT(waiting.error().message, Catch::Matchers::Contains("waiting for intake"));

  kai::TicketInfo escaping;
  escaping.ticket = "../escape";
  escaping.quarantined = true;
  CHECK_FALSE(kai::write_ticket(state, escaping));
  CHECK_FALSE(kai::read_ticket(state, "../escape"));
}

TEST_CASE("status copies are written only where status/ exists", "[spool]") {
  TempDir t;
  const fs::path state = t.path() / ".kaicoder";
  fs::create_directories(state);
  REQUIRE(kai::mirror_status(state, 3, state / "staging" / "3", "{}"));
  CHECK_FALSE(fs::exists(kai::spool::status(state)));
  fs::create_directories(kai::spool::status(state));
  REQUIRE(kai::mirror_status(state, 3, state / "staging" / "3", R"({"id":3})"));
  REQUIRE(kai::mirror_status(state, 12, state / "staging" / "12",
                             R"({"id":12,"approved_digest":"d","payload_digest":"p","seal":"s","status":"approved"})"));
  CHECK_FALSE(kai::mirror_status(state, 13, state / "staging" / "13", "not json"));
  t.write(".kaicoder/status/junk.json", "{}");
  CHECK(kai::status_ids(state) == std::vector<int>{3, 12});
  auto s = kai::read_status(state, 12);
  REQUIRE(s);
  CHECK(nlohmann::json::parse(*s) == nlohmann::json{{"id", 12}, {"status", "approved"}});
  CHECK(mode_of(kai::spool::status(state) / "3.json") == 0640);
  auto missing = kai::read_status(state, 4);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == Errc::not_found);
}

TEST_CASE("what a Unix user can reach is judged from mode bits and groups", "[spool][twouser]") {
  TempDir t;
  t.write("a.txt", "a\n");
  t.write("src/b.txt", "b\n");
  t.write(".env", "TOKEN=x\n");
  t.write("closed/c.txt", "c\n");
  t.write("owner/key", std::string(32, 'k'));
  const fs::path root = t.path();
  for (const char* f : {"a.txt", "src/b.txt", "closed/c.txt"}) fs::permissions(root / f, fs::perms(0644));
  fs::permissions(root / ".env", fs::perms(0600));
  for (const char* d : {"", "src", "owner"}) fs::permissions(root / d, fs::perms(0755));
  fs::permissions(root / "owner" / "key", fs::perms(0600));
  fs::permissions(root.parent_path(), fs::perms(fs::status(root.parent_path()).permissions()));
  // A user that is neither the files' owner nor in their group: an "other".
  kai::UnixUser other{"other", 54321, 54321, {54321}, {}};
  kai::Guardrails g;
  auto a = kai::agent_access(root, g, other, root / "owner");
  // TempDir's own folder may be private (mkdtemp); judge only when it is reachable.
  if (!a.reaches_root) {
    fs::permissions(root, fs::perms(0755));
    a = kai::agent_access(root, g, other, root / "owner");
  }
  if (!a.reaches_root) {
    WARN("skipped: the temp folder's parents are not passable for others here");
    return;
  }
  CHECK(a.writable.empty());
  CHECK(a.secrets_readable.empty());
  CHECK(a.owner_dir.empty() == false);  // the owner folder is 0755 here: listed
  CHECK(std::find(a.owner_dir.begin(), a.owner_dir.end(), (root / "owner").string() + "/") != a.owner_dir.end());
  CHECK(kai::two_user_level(a, "other").find("does not hold") != std::string::npos);

  fs::permissions(root / "owner", fs::perms(0700));
  fs::permissions(root / "a.txt", fs::perms(0646));
  fs::permissions(root / ".env", fs::perms(0604));
  fs::permissions(root / "src", fs::perms(0757));
  fs::permissions(root / "closed", fs::perms(0700));
  fs::permissions(root / "closed" / "c.txt", fs::perms(0666));  // writable, but out of reach
  a = kai::agent_access(root, g, other, root / "owner");
  CHECK(a.owner_dir.empty());
  CHECK(a.writable == std::vector<std::string>{"a.txt", "src/"});
  CHECK(a.secrets_readable == std::vector<std::string>{".env"});
  CHECK(kai::two_user_level(a, "other").find("can write a.txt, src/") != std::string::npos);

  // Through a group it belongs to.
  fs::permissions(root / "a.txt", fs::perms(0664));
  fs::permissions(root / "src", fs::perms(0755));
  fs::permissions(root / ".env", fs::perms(0600));
  kai::UnixUser member = other;
  struct stat st {};
  REQUIRE(::stat((root / "a.txt").c_str(), &st) == 0);
  member.groups.push_back(st.st_gid);
  a = kai::agent_access(root, g, member, root / "owner");
  CHECK(a.writable == std::vector<std::string>{"a.txt"});
  a = kai::agent_access(root, g, other, root / "owner");
  CHECK(a.writable.empty());
  CHECK(kai::two_user_level(a, "other") == "two-user: the agent cannot write the tree or approve (agent user 'other')");
}

TEST_CASE("agent-user names and the store a setup governs", "[spool][twouser]") {
  for (const char* ok : {"kai-agent", "_agent", "a1"}) CHECK(kai::valid_user_name(ok));
  for (const char* bad : {"", "1agent", "-x", "a b", "a;rm", "a/b", "ab\n"}) {
    INFO(bad);
    CHECK_FALSE(kai::valid_user_name(bad));
  }
  CHECK_FALSE(kai::valid_user_name(std::string(33, 'a')));
  TempDir t;
  t.write(".kaicoder/x", "");
  t.write("src/deep/f", "");
  auto r = kai::store_root(t.path() / "src" / "deep");
  REQUIRE(r);
  CHECK(*r == t.path());
  auto none = kai::store_root("/proc/self");
  CHECK_FALSE(none);
}

TEST_CASE("intake stages sound entries with the entry's owner as proposer and quarantines the rest",
          "[spool][twouser]") {
  kai::test::WsFixture f("[two_user]\nagent = \"nobody-here\"\n", {{"a.txt", "old\n"}});
  const fs::path state = f.ws->store.dir();
  REQUIRE(f.ws->store.ensure());
  // Nothing happens without a spool.
  auto none = kai::intake(*f.ws);
  REQUIRE(none);
  CHECK(none->taken.empty());
  fs::create_directories(kai::spool::dir(state));
  fs::create_directories(kai::spool::status(state));
  // This process owns its entries: it is the owner, whose entries intake accepts.
  auto good = kai::write_entry(
      state,
      R"({"version":1,"type":"propose","cwd":"","request":{"path":"a.txt","target":"old","replacement":"new","why":"t"}})",
      1 << 20, some_time());
  REQUIRE(good);
  auto bad = kai::write_entry(state, R"({"version":1,"type":"propose","cwd":"","request":{"path":"a.txt","nope":1}})",
                              1 << 20, some_time());
  REQUIRE(bad);
  auto conflict = kai::write_entry(
      state,
      R"({"version":1,"type":"propose","cwd":"","request":{"path":"a.txt","target":"absent","replacement":"x","why":"t"}})",
      1 << 20, some_time());
  REQUIRE(conflict);
  auto r = kai::intake(*f.ws);
  REQUIRE(r);
  REQUIRE(r->taken.size() == 2);
  REQUIRE(r->quarantined.size() == 1);
  CHECK(r->quarantined[0].ticket == *bad);
  CHECK_THAT(r->quarantined[0].error->message, Catch::Matchers::Contains("unknown field 'nope'"));
  CHECK(fs::exists(kai::spool::quarantine(state) / (*bad + ".json")));
  CHECK(kai::waiting_entries(state).empty());
  const kai::TicketInfo* staged = nullptr;
  for (const auto& t : r->taken)
    if (t.ticket == *good) staged = &t;
  REQUIRE(staged);
  REQUIRE(staged->proposal > 0);
  auto p = f.ws->store.load(staged->proposal);
  REQUIRE(p);
  CHECK(p->proposer_uid == static_cast<long>(::getuid()));
  CHECK(p->agent == kai::uid_name(::getuid()));
  CHECK(p->sealed == kai::SealCheck::ok);
  // Its status copy is there for the agent.
  CHECK(kai::read_status(state, staged->proposal));
  // A request the guardrails refuse is a ticket with the error, not a quarantine.
  auto refused = kai::proposal_of_ticket(state, *conflict);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::conflict);
  CHECK(f.dir.read("a.txt") == "old\n");
}

TEST_CASE("gate: the uid that proposed through the spool never approves, and the agent user never decides",
          "[twouser][gate]") {
  namespace gate = kai::gate;
  kai::test::WsFixture f("[two_user]\nagent = \"eve\"\n");
  kai::ProposeRequest r;
  r.path = "a.txt";
  r.content = "new\n";
  r.why = "t";
  r.agent = "bob";
  r.proposer_uid = 1001;
  auto st = kai::propose(*f.ws, r, f.dir.path(), kai::DryRun::no, {});
  REQUIRE(st);
  const int id = st->proposal.id;
  for (const char* who : {"bob", "eve"}) {
    INFO(who);
    auto rv = gate::prepare_approval(*f.ws, id, gate::Decider{who, gate::Channel::terminal}, {});
    REQUIRE_FALSE(rv);
    CHECK(rv.error().code == Errc::denied);
  }
  auto alice = gate::prepare_approval(*f.ws, id, gate::Decider{"alice", gate::Channel::terminal}, {});
  REQUIRE(alice);
  // A request sent straight to approve, past what a door shows, is refused under the lock too.
  gate::Request req;
  req.id = id;
  req.who = gate::Decider{"bob", gate::Channel::spool};
  req.answer = gate::Answer::yes;
  req.seen_digest = alice->digest;
  auto by_bob = gate::approve(*f.ws, req);
  REQUIRE_FALSE(by_bob);
  CHECK(by_bob.error().code == Errc::denied);
  CHECK_THAT(by_bob.error().message, Catch::Matchers::Contains("who may not approve it"));
  CHECK_FALSE(fs::exists(f.dir.path() / "a.txt"));
  req.who = gate::Decider{"alice", gate::Channel::terminal};
  auto by_alice = gate::approve(*f.ws, req);
  REQUIRE(by_alice);
  CHECK(f.dir.read("a.txt") == "new\n");
}

TEST_CASE("a changeset request from the spool round-trips and is parsed strictly", "[spool][twouser]") {
  kai::ChangesetRequest r;
  r.changes.push_back({"write", "bin/x", "", std::nullopt, std::nullopt, false,
                       std::string("\x7f"
                                   "ELF\xff\x00",
                                   6),
                       0755u});
  r.changes.push_back({"edit", "a.txt", "", std::string("old"), std::string("new"), true, std::nullopt, std::nullopt});
  r.changes.push_back({"rename", "b.txt", "c.txt", std::nullopt, std::nullopt, false, std::nullopt, std::nullopt});
  r.why = "w";
  auto j = kai::changeset_request_json(r);
  REQUIRE(j);
  CHECK(j->at("changes")[0].contains("content_base64"));  // bytes that are not UTF-8 travel as base64
  auto back = kai::changeset_request_from_json(*j);
  REQUIRE(back);
  REQUIRE(back->changes.size() == 3);
  CHECK(back->changes[0].content == r.changes[0].content);
  CHECK(back->changes[0].mode == std::optional<unsigned>(0755u));
  CHECK(back->changes[1].replace_all);
  CHECK(back->changes[2].to == "c.txt");
  CHECK(back->proposer_uid == -1);  // never taken from the request

  kai::ChangesetRequest patch;
  patch.patch = std::string("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-\xe9t\xe9\n+ete\n");
  auto pj = kai::changeset_request_json(patch);
  REQUIRE(pj);
  CHECK(pj->contains("patch_base64"));
  auto pback = kai::changeset_request_from_json(*pj);
  REQUIRE(pback);
  CHECK(pback->patch == patch.patch);

  kai::ChangesetRequest bad_why;
  bad_why.patch = "x";
  bad_why.why = "\xff";
  CHECK_FALSE(kai::changeset_request_json(bad_why));

  const std::string many = [] {
    std::string s = R"({"changes":[)";
    for (int i = 0; i <= 10000; ++i)
      s += std::string(i ? "," : "") + R"({"op":"delete","path":"f)" + std::to_string(i) + "\"}";
    return s + "]}";
  }();
  for (const std::string& text : {
           std::string(R"({})"),
           std::string(R"({"patch":"x","changes":[{"op":"delete","path":"a"}]})"),
           std::string(R"({"patch":"x","patch_base64":"eA=="})"),
           std::string(R"({"patch":""})"),
           std::string(R"({"patch":5})"),
           std::string(R"({"patch_base64":"*not base64*"})"),
           std::string(R"({"patch":"x","proposer_uid":0})"),
           std::string(R"({"changes":[]})"),
           std::string(R"({"changes":"a.txt"})"),
           std::string(R"({"changes":[{"op":"chmod","path":"a"}]})"),
           std::string(R"({"changes":[{"op":"delete","path":"a","extra":1}]})"),
           std::string(R"({"changes":[{"op":"mode","path":"a","mode":"4755"}]})"),
           std::string(R"({"changes":[{"op":"delete","path":"a"}],"agent":7})"),
           many,
           std::string(R"([])"),
       }) {
    INFO(text.substr(0, 120));
    auto p = kai::changeset_request_from_json(nlohmann::json::parse(text));
    REQUIRE_FALSE(p);
    CHECK(p.error().code == Errc::usage);
    CHECK_THAT(p.error().message, Catch::Matchers::StartsWith("malformed changeset request"));
  }
  // The entry type itself.
  auto e = kai::parse_entry(R"({"version":1,"type":"changeset","cwd":"","request":{"patch":"x"}})");
  REQUIRE(e);
  CHECK(e->type == kai::EntryType::changeset);
  auto again = kai::parse_entry(kai::entry_text(*e));
  REQUIRE(again);
  CHECK(again->type == kai::EntryType::changeset);
}

TEST_CASE("intake stages a changeset entry whole and quarantines a malformed one without touching the others",
          "[spool][twouser]") {
  kai::test::WsFixture f("[two_user]\nagent = \"nobody-here\"\n", {{"a.txt", "old\n"}, {"b.txt", "bee\n"}});
  const fs::path state = f.ws->store.dir();
  REQUIRE(f.ws->store.ensure());
  fs::create_directories(kai::spool::dir(state));
  fs::create_directories(kai::spool::status(state));
  kai::ChangesetRequest r;
  r.changes.push_back({"edit", "a.txt", "", std::string("old"), std::string("new"), false, std::nullopt, std::nullopt});
  r.changes.push_back({"write", "c.txt", "", std::nullopt, std::nullopt, false, std::string("made\n"), std::nullopt});
  r.why = "two files";
  r.agent = "claims-to-be-root";
  auto j = kai::changeset_request_json(r);
  REQUIRE(j);
  auto good = kai::write_entry(state, kai::entry_text({kai::EntryType::changeset, "", *j}), 1 << 20, some_time());
  REQUIRE(good);
  auto malformed = kai::write_entry(
      state,
      R"({"version":1,"type":"changeset","cwd":"","request":{"changes":[{"op":"edit","path":"b.txt","target":"bee"}]}})",
      1 << 20, some_time());
  REQUIRE(malformed);
  // Well formed, but it leaves root: a refusal on its ticket, not a quarantine.
  auto outside = kai::write_entry(
      state,
      R"({"version":1,"type":"changeset","cwd":"","request":{"changes":[{"op":"write","path":"../x.txt","content":"x"}]}})",
      1 << 20, some_time());
  REQUIRE(outside);
  auto plain = kai::write_entry(
      state,
      R"({"version":1,"type":"propose","cwd":"","request":{"path":"b.txt","target":"bee","replacement":"bea","why":"t"}})",
      1 << 20, some_time());
  REQUIRE(plain);
  auto in = kai::intake(*f.ws);
  REQUIRE(in);
  REQUIRE(in->quarantined.size() == 1);
  CHECK(in->quarantined[0].ticket == *malformed);
  CHECK_THAT(in->quarantined[0].error->message, Catch::Matchers::Contains("malformed changeset request"));
  REQUIRE(in->taken.size() == 3);
  auto id = kai::proposal_of_ticket(state, *good);
  REQUIRE(id);
  auto p = f.ws->store.load(*id);
  REQUIRE(p);
  CHECK(p->kind == kai::Kind::changeset);
  CHECK(p->changes.size() == 2);
  CHECK(p->proposer_uid == static_cast<long>(::getuid()));
  CHECK(p->agent == kai::uid_name(::getuid()));
  auto refused = kai::proposal_of_ticket(state, *outside);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("malformed") == std::string::npos);
  bool on_its_ticket = false;
  for (const auto& t : in->taken) on_its_ticket |= t.ticket == *outside && t.error && !t.quarantined;
  CHECK(on_its_ticket);
  CHECK_FALSE(fs::exists(kai::spool::quarantine(state) / (*outside + ".json")));
  CHECK(kai::proposal_of_ticket(state, *plain));
  CHECK(f.dir.read("a.txt") == "old\n");
  CHECK(f.dir.read("b.txt") == "bee\n");
  CHECK_FALSE(fs::exists(f.dir.path() / "c.txt"));
}

TEST_CASE("a status copy carries the owner's timeout, and the agent side sees the expiry", "[spool][twouser]") {
  kai::test::WsFixture f("[approval]\ntimeout = 60\n", {{"a.txt", "old\n"}});
  const fs::path state = f.ws->store.dir();
  REQUIRE(f.ws->store.ensure());
  fs::create_directories(kai::spool::status(state));
  auto st = f.write("a.txt", "new\n");
  REQUIRE(st);
  const int id = st->proposal.id;
  auto text = kai::read_status(state, id);
  REQUIRE(text);
  CHECK(nlohmann::json::parse(*text).at("approval_timeout") == 60);
  auto fresh = kai::read_status_copy(*f.ws, id);
  REQUIRE(fresh);
  CHECK_FALSE(fresh->expired);
  CHECK(fresh->proposal.state == kai::State::pending);
  CHECK_FALSE(kai::copy_done(*fresh));
  f.clock.t += std::chrono::seconds(61);
  auto late = kai::read_status_copy(*f.ws, id);
  REQUIRE(late);
  CHECK(late->expired);
  CHECK(late->proposal.state == kai::State::timeout);
  CHECK(kai::copy_done(*late));
  auto w = kai::wait_on_agent_side(*f.ws, std::to_string(id), std::chrono::seconds(5));
  REQUIRE(w);
  REQUIRE(w->status);
  CHECK(w->status->expired);
  // A copy without the owner's timeout never expires on this side.
  auto j = nlohmann::json::parse(*text);
  j.erase("approval_timeout");
  f.dir.write(".kaicoder/status/" + std::to_string(id) + ".json", j.dump());
  auto old = kai::read_status_copy(*f.ws, id);
  REQUIRE(old);
  CHECK_FALSE(old->expired);
}

TEST_CASE("the agent's show --file keeps one file's part of a changeset's diff", "[spool][twouser]") {
  const std::string a =
      "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+uno\n";
  const std::string gone =
      "diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 "
      "@@\n-bye\n";
  const std::string moved =
      "diff --git a/old.txt b/new.txt\nsimilarity index 100%\nrename from old.txt\nrename to new.txt\n";
  const std::string quoted = "diff --git \"a/sp\\303\\251cial\" \"b/sp\\303\\251cial\"\n@@ -1 +1 @@\n-x\n+y\n";
  const std::string all = a + gone + moved + quoted;
  CHECK(kai::diff_of_file(all, "a.txt") == a);
  CHECK(kai::diff_of_file(all, "gone.txt") == gone);
  CHECK(kai::diff_of_file(all, "old.txt") == moved);
  CHECK(kai::diff_of_file(all, "new.txt") == moved);
  CHECK(kai::diff_of_file(all,
                          "sp\xc3\xa9"
                          "cial") == quoted);
  CHECK(kai::diff_of_file(all, "a.tx").empty());  // a prefix of a name is not the name
  CHECK(kai::diff_of_file(all, "absent.txt").empty());
}

TEST_CASE("a ticket's standing is typed: unknown, in the spool, being taken in, staged, refused", "[spool][twouser]") {
  TempDir t;
  const fs::path state = t.path() / ".kaicoder";
  fs::create_directories(kai::spool::tickets(state));
  auto unknown = kai::ticket_standing(state, "t-3");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == Errc::not_found);
  CHECK(unknown.error().message == "no ticket t-3");

  fs::create_directories(kai::spool::dir(state));
  t.write(".kaicoder/spool/t-3.json", k_good);
  auto spooled = kai::ticket_standing(state, "t-3");
  REQUIRE(spooled);
  CHECK(spooled->waiting == kai::TicketWait::in_spool);
  CHECK(spooled->proposal == 0);

  kai::TicketInfo taking;
  taking.ticket = "t-4";
  REQUIRE(kai::write_ticket(state, taking, kai::Replace::no));
  auto being = kai::ticket_standing(state, "t-4");
  REQUIRE(being);
  CHECK(being->waiting == kai::TicketWait::being_taken_in);
  CHECK(being->proposal == 0);

  kai::TicketInfo staged;
  staged.ticket = "t-1";
  staged.proposal = 7;
  REQUIRE(kai::write_ticket(state, staged));
  auto done = kai::ticket_standing(state, "t-1");
  REQUIRE(done);
  CHECK(done->waiting == kai::TicketWait::no);
  CHECK(done->proposal == 7);

  write_quarantined(state, "t-2");
  auto refused = kai::ticket_standing(state, "t-2");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::usage);
  CHECK(refused.error().message == "malformed spool entry: x");
}

TEST_CASE("how far a waited-on proposal has come is the same answer for every door", "[spool][twouser]") {
  using kai::Standing;
  using kai::State;
  const std::pair<State, Standing> rows[] = {
      {State::pending, Standing::pending},     {State::approved, Standing::approved},
      {State::applied, Standing::settled},     {State::rejected, Standing::settled},
      {State::timeout, Standing::settled},     {State::failed, Standing::settled},
      {State::rolled_back, Standing::settled},
  };
  for (const auto& [state, standing] : rows) {
    INFO(kai::to_string(state));
    kai::Proposal p;
    p.state = state;
    CHECK(kai::standing(p) == standing);
    CHECK(kai::still_open(p) == (state == State::pending || state == State::approved || state == State::failed));
  }
  // The agent side's wait: a ticket not taken in, then no copy yet, then the copy's state.
  kai::AgentWaited w;
  CHECK(kai::standing(w) == Standing::in_spool);
  w.id = 5;
  CHECK(kai::standing(w) == Standing::no_status);
  kai::StatusCopy c;
  c.proposal.id = 5;
  w.status = c;
  CHECK(kai::standing(w) == Standing::pending);
  CHECK_FALSE(kai::copy_done(*w.status));
  w.status->proposal.state = State::timeout;  // as read_status_copy marks an expired copy
  w.status->expired = true;
  CHECK(kai::standing(w) == Standing::settled);
  CHECK(kai::copy_done(*w.status));
}

TEST_CASE("show --file names a file of the proposal on either side, or is not_found", "[spool][twouser]") {
  kai::Proposal edit;
  edit.id = 3;
  edit.path = "a.txt";
  CHECK(kai::names_file(edit, ""));
  CHECK(kai::names_file(edit, "a.txt"));
  auto other = kai::names_file(edit, "b.txt");
  REQUIRE_FALSE(other);
  CHECK(other.error().code == Errc::not_found);
  CHECK(other.error().message == "proposal 3 changes 'a.txt', not 'b.txt'");

  kai::Proposal cs;
  cs.id = 4;
  cs.kind = kai::Kind::changeset;
  kai::Change moved;
  moved.path = "old.txt";
  moved.to = "new.txt";
  kai::Change changed;
  changed.path = "src/a.c";
  cs.changes = {moved, changed};
  for (const char* f : {"old.txt", "new.txt", "src/a.c"}) {
    INFO(f);
    CHECK(kai::names_file(cs, f));
  }
  auto gone = kai::names_file(cs, "src/b.c");
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == Errc::not_found);
}
