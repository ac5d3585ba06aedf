// Team mode attacked (kaicoder-team(7)): whoever can push to the team
// remote (the agent in its CI runner, say) plants decisions: signed with
// another key, edited after signing, unsigned, signed in another namespace,
// replayed onto another proposal or clone, answered with y where CONFIRM is
// due, or signed with a key the proposing clone itself holds. Each is
// refused where the proposal was made, with exit 3 or 6, logged as a
// `blocked` entry, the proposal still pending and the tree and branch as
// they were. The agent also cannot approve its own team proposal: not at
// the gate without a terminal, not by adding its key in the change, not as
// a remote proposal in its own clone.
// The remote itself is hostile too: refs named with `..`, a proposal or
// decision object hundreds of MB large (refused by its size, in bounded
// memory), or stored as a 1.4 KB delta that expands to 700 MiB (refused by
// git's bounded heap), a decision under one origin's name on another
// origin's proposal.

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include <zlib.h>

#include "tests/support/team.hpp"

namespace {
using namespace kai::test;
using Catch::Matchers::Contains;
using json = nlohmann::json;
namespace fs = std::filesystem;

std::string decision_ref(const Published& p, int id = 0) {
  return "refs/kaicoder/decisions/" + p.origin + "/" + std::to_string(id ? id : p.id);
}

// What a refused decision must leave alone on the proposing clone.
struct Held {
  const TempRepo& agent;
  std::map<std::string, std::string> tree;
  std::string head;
  explicit Held(const TempRepo& a) : agent(a), tree(files(a)), head(git_ok(a, {"rev-parse", "HEAD"})) {}
  // The tree but the changelog, which a refusal writes to.
  static std::map<std::string, std::string> files(const TempRepo& a) {
    auto t = a.tree_snapshot();
    t.erase("KAI-CODER-CHANGELOG.md");
    return t;
  }
  // `id` refused by its wait with `code`, saying `why`; still pending, logged, nothing moved.
  void refused(int id, int code, const std::string& why) const {
    Run w = agent.kai({"wait", std::to_string(id), "--timeout", "30"});
    KAI_CHECK_EXIT(w, code);
    CHECK_THAT(w.err, Contains(why));
    CHECK(files(agent) == tree);
    CHECK(git_ok(agent, {"rev-parse", "HEAD"}) == head);
    Run shown = agent.kai({"--json", "show", std::to_string(id)});
    KAI_REQUIRE_EXIT(shown, 0);
    CHECK(json_of(shown).at("proposal").at("status") == "pending");
    json e = log_entries(agent);
    REQUIRE(!e.empty());
    CHECK(e[0].at("kind") == "blocked");
    CHECK_THAT(e[0].at("result").get<std::string>(), Contains("refused team decision"));
    for (const auto& entry : e) CHECK(entry.at("kind") != "applied");
  }
};

}  // namespace

TEST_CASE("attack: a team decision signed with a key the base does not allow is refused", "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  Held held(t.agent);
  t.forge(TeamRepos::decision_text(pub), t.stranger_key(), pub.commit, decision_ref(pub));
  held.refused(pub.id, 3, "decision");
  // The person's clone does not take it as decided either.
  const int id = t.fetch_one();
  Run shown = t.person.kai({"--json", "show", std::to_string(id)});
  CHECK(json_of(shown).at("proposal").at("status") == "pending");
  // Refused once, logged once: a second wait adds no second entry.
  const size_t entries = log_entries(t.agent).size();
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "5"}), 3);
  CHECK(log_entries(t.agent).size() == entries);
  // The person's own decision still counts afterwards.
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 0);
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "30"}), 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
}

TEST_CASE("attack: a signed rejection edited into an approval, an unsigned decision and one signed in another "
          "namespace are refused",
          "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  Held held(t.agent);
  const int id = t.fetch_one();
  KAI_REQUIRE_EXIT(t.person.kai_tty({"reject", std::to_string(id), "--reason", "no"}, "y"), 0);
  const std::string real = git_ok(t.person, {"ls-remote", "origin", decision_ref(pub)}).substr(0, 40);
  std::string text = t.decision_file(real, "decision.toml");
  const std::string sig = t.decision_file(real, "decision.toml.sig");
  REQUIRE(text.find("decision = \"reject\"") != std::string::npos);
  text.replace(text.find("decision = \"reject\""), 19, "decision = \"approve\"");
  t.forge(text, t.person_key(), pub.commit, decision_ref(pub), sig);
  held.refused(pub.id, 3, "decision");

  // No signature at all: a signature file that is not one.
  const Published second = t.publish_edit("b.txt", "bravo", "BRAVO");
  Held held2(t.agent);
  t.forge(TeamRepos::decision_text(second), t.person_key(), second.commit, decision_ref(second), "not a signature\n");
  held2.refused(second.id, 3, "decision");

  // The person's key, but the namespace of approval manifests: a signature
  // made for a manifest never counts as a decision.
  const Published third = t.publish_edit("certified/c.txt", "charlie", "CHARLIE");
  Held held3(t.agent);
  t.forge(TeamRepos::decision_text(third), t.person_key(), third.commit, decision_ref(third), "", "kaicoder");
  held3.refused(third.id, 3, "decision");
}

TEST_CASE("attack: a real decision replayed onto another proposal id, another clone or another commit is refused",
          "[e2e][attack][team]") {
  TeamRepos t;
  const Published first = t.publish_edit("a.txt", "alpha", "beta");
  const Published second = t.publish_edit("b.txt", "bravo", "BRAVO");
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  REQUIRE(json_of(fetched).at("added").size() == 2);
  // The person approves the first only.
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", "1"}, "y"), 0);
  const std::string real = git_ok(t.person, {"ls-remote", "origin", decision_ref(first)}).substr(0, 40);
  Held held(t.agent);
  // Its decision commit pushed as the second's decision: it names proposal 1.
  git_ok(t.person, {"push", "-q", "-f", "origin", real + ":" + decision_ref(second)});
  held.refused(second.id, 3, "it is for proposal 1, not 2");

  // Signed for the second's commit but for another clone: refused as replayed.
  t.forge(TeamRepos::decision_text(second, "approve", "0123456789ab"), t.person_key(), second.commit,
          decision_ref(second));
  held.refused(second.id, 3, "it is for clone 0123456789ab");

  // Signed naming the second proposal, but on the first proposal's commit.
  t.forge(TeamRepos::decision_text(second), t.person_key(), first.commit, decision_ref(second));
  held.refused(second.id, 6, "not on the proposal commit");

  // The first's own decision still applies the first.
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(first.id), "--timeout", "30"}), 0);
  CHECK(t.agent.read("a.txt") == "beta\n");
  CHECK(t.agent.read("b.txt") == "bravo\n");
}

TEST_CASE("attack: a y where CONFIRM is due is refused even when signed", "[e2e][attack][team]") {
  TeamRepos t;
  // scripts/** takes CONFIRM by default.
  const Published pub =
      t.publish({"propose", "--path", "scripts/go.sh", "--content-file", "-", "--why", "a script"}, "echo hi\n");
  Held held(t.agent);
  const std::string forged =
      t.forge(TeamRepos::decision_text(pub, "approve", "", 0, "normal"), t.person_key(), pub.commit, decision_ref(pub));
  held.refused(pub.id, 3, "CONFIRM");
  // The person's clone asks for CONFIRM too: a y is not enough there.
  const int id = t.fetch_one();
  Run y = t.person.kai_tty({"approve", std::to_string(id)}, "y");
  KAI_CHECK_EXIT(y, 4);  // not CONFIRM: declined
  CHECK_THAT(y.tty, Contains("CONFIRM"));
  CHECK(git_ok(t.person, {"ls-remote", "origin", decision_ref(pub)}).starts_with(forged));
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "CONFIRM"), 0);
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "30"}), 0);
  CHECK(t.agent.read("scripts/go.sh") == "echo hi\n");
}

TEST_CASE("attack: a proposal ref pushed again with other content is not decided on, and a decision for it is "
          "refused",
          "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const int id = t.fetch_one();
  // Someone pushes another commit at the proposal's ref.
  t.person.write("a.txt", "alpha, swapped\n");
  git_ok(t.person, {"commit", "-q", "-am", "swapped"});
  const std::string other = git_ok(t.person, {"rev-parse", "HEAD"});
  git_ok(t.person, {"reset", "-q", "--hard", "HEAD^"});
  git_ok(t.person, {"push", "-q", "-f", "origin", other + ":" + pub.ref});
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  CHECK(json_of(fetched).at("added").empty());
  CHECK_THAT(json_of(fetched).at("refused").dump(), Contains("pushed again with other content"));
  Run shown = t.person.kai({"--json", "show", std::to_string(id)});
  CHECK(json_of(shown).at("proposal").at("team").at("commit") == pub.commit);
  // A signed decision for the swapped commit does not count where it was proposed.
  Held held(t.agent);
  t.forge(TeamRepos::decision_text(Published{pub.id, other, pub.base, pub.origin, pub.ref}), t.person_key(), other,
          decision_ref(pub));
  held.refused(pub.id, 6, "not on the proposal commit");
}

TEST_CASE("attack: the agent cannot approve its own team proposal", "[e2e][attack][team]") {
  TeamRepos t;
  // The change adds the agent's own key to the allowed signers.
  make_key(t.agent, t.agent.home() / "agent-key", "agent");
  const std::string agent_pub = read_outside((t.agent.home() / "agent-key.pub").string());
  const Published pub = t.publish({"propose", "--path", "signers", "--content-file", "-", "--why", "one more signer"},
                                  t.agent.read("signers") + "agent@example.com " + agent_pub);
  Held held(t.agent);

  // Not at the gate: no terminal.
  Run gate = t.agent.kai({"approve", std::to_string(pub.id)});
  KAI_CHECK_EXIT(gate, 3);

  // Not as a remote proposal of its own clone: fetch there skips it.
  Run own = t.agent.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(own, 0);
  CHECK(json_of(own).at("added").empty());

  // Not with its own key, which only the change itself allows: trust is
  // read from the base commit.
  t.forge(TeamRepos::decision_text(pub), t.agent.home() / "agent-key", pub.commit, decision_ref(pub));
  held.refused(pub.id, 3, "decision");

  // Not with the person's key when it sits where the agent works: a
  // genuine decision signed with a key this clone holds is refused.
  fs::create_directories(t.agent.home() / ".ssh");
  fs::copy_file(t.person_key().string() + ".pub", t.agent.home() / ".ssh" / "id_ed25519.pub");
  const int id = t.fetch_one();
  KAI_REQUIRE_EXIT(t.person.kai_tty({"approve", std::to_string(id)}, "y"), 0);
  held.refused(pub.id, 3, "signed with a key this clone holds");

  // Once that key is gone from the agent's clone, the person's decision counts.
  fs::remove(t.agent.home() / ".ssh" / "id_ed25519.pub");
  KAI_CHECK_EXIT(t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "30"}), 0);
  CHECK_THAT(t.agent.read("signers"), Contains("agent@example.com"));
}

TEST_CASE("attack: a hostile remote's odd ref names and a decision on another clone's proposal are refused harmlessly",
          "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const std::string head = git_ok(t.person, {"rev-parse", "HEAD"});
  // Names team mode never makes: pushed to the remote with plain git.
  for (const std::string& name : std::vector<std::string>{
           "refs/kaicoder/proposals/ZZZZZZZZZZZZ/1", "refs/kaicoder/proposals/" + pub.origin + "/01",
        "refs/kaicoder/decisions/" + pub.origin + "/7/x", "refs/kaicoder/evil", "refs/kaicoder/incoming/x/1",
        "refs/kaicoder/proposals/" + pub.origin + "/99999999999999999999"})
    git_ok(t.person, {"push", "-q", "-f", "origin", head + ":" + name});
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  const json j = json_of(fetched);
  CHECK(j.at("added").size() == 1);
  CHECK(j.at("refused").size() >= 6);
  // Nothing was written outside refs/kaicoder/remote/ (and none of the odd names).
  const std::string refs = git_ok(t.person, {"for-each-ref", "--format=%(refname)", "refs/kaicoder/"});
  CHECK_THAT(refs, !Contains("evil") && !Contains("ZZZZ") && !Contains("/01") && !Contains("incoming"));
  CHECK(git_ok(t.person, {"rev-parse", "HEAD"}) == head);

  // A decision ref of this origin whose decision sits on a commit that is
  // not this clone's proposal: a plain commit as the parent.
  Held held(t.agent);
  t.forge(TeamRepos::decision_text(pub), t.person_key(), head, decision_ref(pub));
  held.refused(pub.id, 6, "not on the proposal commit");
  // A decision for a proposal id this clone never published.
  t.forge(TeamRepos::decision_text(pub, "approve", "", 42), t.person_key(), pub.commit, decision_ref(pub, 42));
  Run agent_fetch = t.agent.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(agent_fetch, 0);
  CHECK_THAT(json_of(agent_fetch).at("refused").dump(), Contains("did not publish"));
  CHECK(t.agent.read("a.txt") == "alpha\n");
}

namespace {

// In the remote itself, as whoever can push there would.
std::string in_remote(const TeamRepos& t, std::vector<std::string> args, const std::string& in = "") {
  args.insert(args.begin(), {"--git-dir", t.remote.string()});
  return git_ok(t.person, args, in);
}

// A blob of `size` zero bytes written straight into the remote, streamed
// (core.bigFileThreshold), so that making it holds nothing in memory.
std::string huge_blob(const TeamRepos& t, const std::string& size) {
  const fs::path file = t.person.home() / "huge";
  REQUIRE(t.person.spawn({"truncate", "-s", size, file.string()}).finish().ok());
  const std::string id = in_remote(t, {"-c", "core.bigFileThreshold=1m", "hash-object", "-w", file.string()});
  fs::remove(file);
  return id;
}

// `tree` (git ls-tree lines) with `name`'s blob replaced by `blob`.
std::string with_blob(const std::string& tree, const std::string& name, const std::string& blob) {
  std::string out, line;
  bool found = false;
  std::istringstream lines(tree);
  while (std::getline(lines, line)) {
    if (line.ends_with("\t" + name)) {
      line = "100644 blob " + blob + "\t" + name;
      found = true;
    }
    out += line + "\n";
  }
  REQUIRE(found);
  return out;
}

// SHA-1 of a file, by sha1sum (streamed: constant memory), as raw bytes.
std::string sha1_of(const TeamRepos& t, const std::string& shell) {
  Run r = t.person.spawn({"sh", "-c", shell + " | sha1sum"}).finish(120s);
  INFO(r.all());
  REQUIRE(r.ok());
  REQUIRE(r.out.size() >= 40);
  std::string raw;
  for (size_t i = 0; i < 40; i += 2) raw += static_cast<char>(std::stoi(r.out.substr(i, 2), nullptr, 16));
  return raw;
}

std::string hex_of(const std::string& raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

std::string deflated(const std::string& in) {
  uLongf size = compressBound(static_cast<uLong>(in.size()));
  std::string out(size, '\0');
  REQUIRE(compress2(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(in.data()),
                    static_cast<uLong>(in.size()), 9) == Z_OK);
  out.resize(size);
  return out;
}

// A pack object's header: its type and (inflated) size.
std::string object_header(int type, uint64_t size) {
  std::string out;
  unsigned char c = static_cast<unsigned char>((type << 4) | (size & 15));
  size >>= 4;
  while (size) {
    out += static_cast<char>(c | 0x80);
    c = size & 0x7f;
    size >>= 7;
  }
  return out + static_cast<char>(c);
}

std::string delta_size(uint64_t size) {
  std::string out;
  do {
    unsigned char c = size & 0x7f;
    size >>= 7;
    out += static_cast<char>(size ? c | 0x80 : c);
  } while (size);
  return out;
}

struct Bomb {
  std::string base, huge;  // blob ids
};

// A delta bomb written straight into the remote, as a hostile remote would
// store it: a pack (made here byte by byte, so that no process of this case
// ever holds the big object) of a base blob of 1 MiB of zero bytes and an
// OFS_DELTA of about 1.4 KB that copies it `copies` times over: a blob of
// `copies` MiB. Its id is hashed streaming (sha1sum), its index written
// by hand (git index-pack would inflate it).
Bomb delta_bomb(const TeamRepos& t, uint32_t copies) {
  const uint64_t mib = 1 << 20, big = copies * mib;
  const std::string base(mib, '\0');
  std::string delta = delta_size(mib) + delta_size(big);
  // Copy from offset 0, size 0x100000: only the third size byte is set.
  for (uint32_t i = 0; i < copies; ++i) delta += std::string{static_cast<char>(0x80 | 0x40), 0x10};
  Bomb b;
  b.base = hex_of(sha1_of(t, "{ printf 'blob 1048576\\000'; head -c 1048576 /dev/zero; }"));
  b.huge = hex_of(
      sha1_of(t, "{ printf 'blob " + std::to_string(big) + "\\000'; head -c " + std::to_string(big) + " /dev/zero; }"));
  std::string pack = "PACK";
  put_be32(pack, 2);
  put_be32(pack, 2);
  const uint32_t base_at = static_cast<uint32_t>(pack.size());
  pack += object_header(3, mib) + deflated(base);
  const uint32_t huge_at = static_cast<uint32_t>(pack.size());
  std::string ofs;
  uint64_t back = huge_at - base_at;
  ofs = static_cast<char>(back & 0x7f);
  while (back >>= 7) ofs.insert(ofs.begin(), static_cast<char>(0x80 | (--back & 0x7f)));
  pack += object_header(6, delta.size()) + ofs + deflated(delta);
  const fs::path dir = t.remote / "objects" / "pack";
  const fs::path tmp = t.person.home() / "bomb.pack";
  { std::ofstream(tmp, std::ios::binary) << pack; }
  const std::string pack_sum = sha1_of(t, "cat '" + tmp.string() + "'");
  pack += pack_sum;
  // The index (version 2): fan-out, sorted ids, CRC-32s, offsets, checksums.
  struct Entry {
    std::string id;
    uint32_t at, end;
  };
  std::vector<Entry> entries;
  auto raw_id = [](const std::string& hex) {
    std::string raw;
    for (size_t i = 0; i < 40; i += 2) raw += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return raw;
  };
  entries.push_back({raw_id(b.base), base_at, huge_at});
  entries.push_back({raw_id(b.huge), huge_at, static_cast<uint32_t>(pack.size() - 20)});
  std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) { return x.id < y.id; });
  std::string idx = "\377tOc";
  put_be32(idx, 2);
  for (int i = 0; i < 256; ++i) {
    uint32_t n = 0;
    for (const auto& e : entries) n += static_cast<unsigned char>(e.id[0]) <= i ? 1 : 0;
    put_be32(idx, n);
  }
  for (const auto& e : entries) idx += e.id;
  for (const auto& e : entries)
    put_be32(idx, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(pack.data() + e.at), e.end - e.at)));
  for (const auto& e : entries) put_be32(idx, e.at);
  idx += pack_sum;
  { std::ofstream(tmp, std::ios::binary | std::ios::trunc) << idx; }
  idx += sha1_of(t, "cat '" + tmp.string() + "'");
  fs::remove(tmp);
  const std::string name = "pack-" + hex_of(pack_sum);
  { std::ofstream(dir / (name + ".pack"), std::ios::binary) << pack; }
  { std::ofstream(dir / (name + ".idx"), std::ios::binary) << idx; }
  // The remote's own git reads it as stored: a blob of `copies` MiB, by its header.
  REQUIRE(in_remote(t, {"cat-file", "-s", b.huge}) == std::to_string(big));
  return b;
}

}  // namespace

TEST_CASE("attack: a hostile remote's huge proposal blob and huge decision blob are refused, in bounded memory",
          "[e2e][attack][team][long]") {
  TeamRepos t;
  // The remote serves big objects without inflating them: its memory is its
  // own, not this clone's (which is what the bound below measures).
  in_remote(t, {"config", "core.bigFileThreshold", "1m"});
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const std::string huge = huge_blob(t, "700M");

  // A proposal commit of this origin whose a.txt is 700 MB, under the next id.
  const std::string tree = in_remote(t, {"mktree"}, with_blob(in_remote(t, {"ls-tree", pub.base}), "a.txt", huge));
  std::string message = in_remote(t, {"log", "-1", "--format=%B", pub.commit});
  const std::string named = "Kaicoder-Proposal: " + pub.origin + "/1";
  REQUIRE(message.find(named) != std::string::npos);
  message.replace(message.find(named), named.size(), "Kaicoder-Proposal: " + pub.origin + "/2");
  const std::string big = in_remote(t, {"commit-tree", tree, "-p", pub.base, "-F", "-"}, message);
  in_remote(t, {"update-ref", "refs/kaicoder/proposals/" + pub.origin + "/2", big});
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  const json j = json_of(fetched);
  CHECK(j.at("added").size() == 1);  // the real one only
  CHECK_THAT(j.at("refused").dump(), Contains("/2: ") && Contains("bytes of [limits] content"));
  CHECK(t.person.read("a.txt") == "alpha\n");

  // A decision whose decision.toml is 700 MB, on the real proposal.
  Held held(t.agent);
  const std::string sig = in_remote(t, {"hash-object", "-w", "--stdin"}, "not a signature\n");
  const std::string dtree =
      in_remote(t, {"mktree"}, "100644 blob " + huge + "\tdecision.toml\n100644 blob " + sig + "\tdecision.toml.sig\n");
  const std::string decision = in_remote(t, {"commit-tree", dtree, "-p", pub.commit, "-m", "a decision"});
  in_remote(t, {"update-ref", decision_ref(pub), decision});
  held.refused(pub.id, 6, "decision.toml is 734003200 bytes");
  // The person's clone refuses it as a decision on its record too.
  Run again = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(again, 0);
  CHECK_THAT(json_of(again).at("refused").dump(), Contains(decision_ref(pub)));

  // No process this case started held the 700 MB object: not git fetching
  // it, not kaicoder reading it.
  CHECK(children_max_rss_kib() < k_bounded_rss_kib);
}

TEST_CASE("attack: a hostile remote's small delta that expands to a huge blob is refused, in bounded memory",
          "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  // 1.4 KB of delta on the wire that makes 700 MiB when resolved.
  const Bomb bomb = delta_bomb(t, 700);
  // A proposal commit of this origin whose a.txt is the bomb (its base blob
  // beside it, so that the remote sends the delta as it is stored).
  std::string lines = with_blob(in_remote(t, {"ls-tree", pub.base}), "a.txt", bomb.huge);
  lines += "100644 blob " + bomb.base + "\tzeros.bin\n";
  const std::string tree = in_remote(t, {"mktree"}, lines);
  std::string message = in_remote(t, {"log", "-1", "--format=%B", pub.commit});
  const std::string named = "Kaicoder-Proposal: " + pub.origin + "/1";
  message.replace(message.find(named), named.size(), "Kaicoder-Proposal: " + pub.origin + "/2");
  const std::string big = in_remote(t, {"commit-tree", tree, "-p", pub.base, "-F", "-"}, message);
  in_remote(t, {"update-ref", "refs/kaicoder/proposals/" + pub.origin + "/2", big});
  // git resolves a delta in memory, whatever core.bigFileThreshold says: the
  // fetch runs with git's heap bounded, and fails instead of holding it.
  Run fetched = t.person.kai({"fetch"});
  KAI_CHECK_EXIT(fetched, 3);
  CHECK_THAT(fetched.err, Contains("sent an object that git could not unpack within 256 MiB") &&
                              Contains("nothing was fetched") && Contains("remove the ref"));
  CHECK(t.person.read("a.txt") == "alpha\n");
  CHECK(git_ok(t.person, {"for-each-ref", "refs/kaicoder/"}).empty());
  KAI_CHECK_EXIT(t.person.kai({"list"}), 0);  // local work goes on
  // Without the bomb's ref, the real proposal comes through.
  in_remote(t, {"update-ref", "-d", "refs/kaicoder/proposals/" + pub.origin + "/2"});
  const int id = t.fetch_one();

  // A decision on the real proposal whose decision.toml is the bomb (and
  // its signature the bomb's base, so that the delta travels as stored).
  Held held(t.agent);
  const std::string dtree =
      in_remote(t, {"mktree"},
                "100644 blob " + bomb.huge + "\tdecision.toml\n100644 blob " + bomb.base + "\tdecision.toml.sig\n");
  const std::string decision = in_remote(t, {"commit-tree", dtree, "-p", pub.commit, "-m", "a decision"});
  in_remote(t, {"update-ref", decision_ref(pub), decision});
  Run w = t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "30"});
  KAI_CHECK_EXIT(w, 3);
  CHECK_THAT(w.err, Contains("could not unpack within 256 MiB"));
  CHECK(Held::files(t.agent) == held.tree);
  CHECK(git_ok(t.agent, {"rev-parse", "HEAD"}) == held.head);
  CHECK(show_json(t.agent, pub.id).at("status") == "pending");
  // The person's clone refuses it too, and its record stays undecided.
  KAI_CHECK_EXIT(t.person.kai({"fetch"}), 3);
  CHECK(show_json(t.person, id).at("status") == "pending");

  // No process this case started resolved the 700 MiB object in memory.
  CHECK(children_max_rss_kib() < k_bounded_rss_kib);
}

TEST_CASE(
    "attack: refs named with '..' on the remote are never fetched, and a remote that breaks on one leaves local "
    "work going",
    "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  const std::string head = git_ok(t.person, {"rev-parse", "HEAD"});
  // Loose refs git would never make: written into the remote by hand.
  for (const std::string& name :
       {"refs/kaicoder/proposals/" + pub.origin + "..x/1", "refs/kaicoder/proposals/" + pub.origin + "/1..2",
        "refs/kaicoder/decisions/" + pub.origin + "..x/1"}) {
    fs::create_directories((t.remote / name).parent_path());
    std::ofstream(t.remote / name) << pub.commit << "\n";
  }
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  CHECK(json_of(fetched).at("added").size() == 1);
  auto refs = [&] { return git_ok(t.person, {"for-each-ref", "--format=%(refname)"}); };
  CHECK_THAT(refs(), !Contains(".."));
  CHECK(git_ok(t.person, {"rev-parse", "HEAD"}) == head);

  // A name that climbs out of refs/kaicoder/: the remote's git itself
  // refuses to list anything then. The fetch says the remote cannot be
  // read; nothing is written; local work goes on.
  {
    std::ofstream packed(t.remote / "packed-refs", std::ios::app);
    packed << pub.commit << " refs/kaicoder/proposals/../../heads/evil\n";
  }
  const std::string before = refs();
  Run broken = t.person.kai({"fetch"});
  KAI_CHECK_EXIT(broken, 1);
  CHECK_THAT(broken.err, Contains("cannot read the team remote 'origin'"));
  CHECK(refs() == before);
  CHECK_THAT(refs(), !Contains("evil"));
  KAI_CHECK_EXIT(t.person.kai({"show", "1"}), 0);
  KAI_CHECK_EXIT(t.person.kai({"list"}), 0);
  Run w = t.agent.kai({"wait", std::to_string(pub.id), "--timeout", "1"});
  KAI_CHECK_EXIT(w, 8);
  CHECK_THAT(w.err, Contains("could not be asked"));
  CHECK(t.agent.read("a.txt") == "alpha\n");
}

TEST_CASE("attack: a decision ref pointing at a proposal of another origin is refused on both clones",
          "[e2e][attack][team]") {
  TeamRepos t;
  const Published pub = t.publish_edit("a.txt", "alpha", "beta");
  // The person's clone publishes a proposal of its own: another origin.
  Run mine = t.person.kai({"--json", "propose", "--path", "b.txt", "--target", "bravo", "--replacement", "BRAVO",
                           "--why", "w", "--publish"});
  KAI_REQUIRE_EXIT(mine, 0);
  const json m = json_of(mine);
  const Published theirs{m.at("proposal").at("id").get<int>(), m.at("published").at("commit"),
                         m.at("published").at("base"), m.at("published").at("origin"), m.at("published").at("ref")};
  REQUIRE(theirs.origin != pub.origin);

  // Under the agent's origin, naming the agent's proposal, signed by the
  // person: but on the person's proposal commit.
  Held held(t.agent);
  t.forge(TeamRepos::decision_text(pub), t.person_key(), theirs.commit, decision_ref(pub));
  held.refused(pub.id, 6, "not on the proposal commit");
  // Under the person's origin, naming the person's proposal: on the agent's commit.
  t.forge(TeamRepos::decision_text(theirs), t.person_key(), pub.commit, decision_ref(theirs));
  Run fetched = t.person.kai({"--json", "fetch"});
  KAI_REQUIRE_EXIT(fetched, 0);
  const json j = json_of(fetched);
  CHECK(j.at("received").empty());
  CHECK(j.at("decided").empty());
  CHECK_THAT(j.at("refused").dump(), Contains(decision_ref(pub)) && Contains(decision_ref(theirs)));
  Run shown = t.person.kai({"--json", "show", std::to_string(theirs.id)});
  CHECK(json_of(shown).at("proposal").at("status") == "pending");
  CHECK(t.person.read("b.txt") == "bravo\n");
  CHECK(t.agent.read("a.txt") == "alpha\n");
}
