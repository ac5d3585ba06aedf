#pragma once
// Team mode in throwaway repositories (kaicoder-team(7)): a bare repository
// as the team remote and two clones of it, each its own TempRepo with its
// own owner folder: the agent's, which proposes and publishes, and the
// person's, whose SSH key the committed allowed-signers file names. Keys are
// made by ssh-keygen in the case; nothing of the real home is used.
//
//   TeamRepos t;                                   // remote, clones, keys, trust
//   auto pub = t.publish_edit("a.txt", "alpha", "beta");
//   t.person.kai({"fetch"});
//   t.person.kai_tty({"approve", "1"}, "y");
//   t.agent.kai({"wait", "1"});                     // applies it

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/checks.hpp"

namespace kai::test {

// What the agent's clone commits: certified paths with the person as the
// only allowed signer, and the team remote.
inline const std::string k_team_toml =
    "[certify]\npaths = [\"certified/**\"]\nallowed_signers = \"signers\"\n\n[team]\nremote = \"origin\"\n";

// git with an identity, stdin, and the output trimmed; REQUIREs success.
inline std::string git_ok(const TempRepo& r, std::vector<std::string> args, const std::string& in = "") {
  std::vector<std::string> argv{
      "git", "-c", "user.name=Tester", "-c", "user.email=tester@example.com", "-c", "commit.gpgsign=false"};
  argv.insert(argv.end(), args.begin(), args.end());
  Run run = r.spawn(argv, in).finish(60s);
  INFO("git " << args.front() << ": " << run.all());
  REQUIRE(run.ok());
  std::string s = run.out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

inline void make_key(const TempRepo& r, const std::filesystem::path& file, const std::string& comment) {
  std::filesystem::create_directories(file.parent_path());
  Run run = r.spawn({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file.string()}).finish();
  INFO(run.all());
  REQUIRE(run.ok());
}

struct Published {
  int id = 0;
  std::string commit, base, origin, ref;
};

class TeamRepos {
public:
  TempRepo agent{{"a.txt", "alpha\n"},
                 {"b.txt", "bravo\n"},
                 {"certified/c.txt", "charlie\n"},
                 {".gitignore", ".kaicoder/\n*.bak-kaicoder-*\nKAI-CODER-CHANGELOG.md\n"}};
  TempRepo person;
  std::filesystem::path remote;

  // `url`: the team remote's URL when not the bare repository's path (a
  // git daemon's, say); `serve` is called once the bare repository exists.
  explicit TeamRepos(const std::string& url = "") {
    make_key(person, person_key(), "person");
    make_key(person, stranger_key(), "stranger");
    agent.write("signers", "person@example.com " + read_outside(person_key().string() + ".pub"));
    agent.write("kaicoder.toml", k_team_toml);
    git_ok(agent, {"add", "-A"});
    git_ok(agent, {"commit", "-q", "-m", "team mode"});
    remote = agent.home().parent_path() / "remote.git";
    git_ok(agent, {"init", "-q", "--bare", remote.string()});
    git_ok(agent, {"remote", "add", "origin", remote.string()});
    git_ok(agent, {"push", "-q", "origin", "main"});
    git_ok(person, {"remote", "add", "origin", remote.string()});
    git_ok(person, {"fetch", "-q", "origin"});
    git_ok(person, {"reset", "-q", "--hard", "origin/main"});
    if (!url.empty()) use_url(url);
    agent.trust();
    person.trust();
  }

  void use_url(const std::string& url) const {
    git_ok(agent, {"remote", "set-url", "origin", url});
    git_ok(person, {"remote", "set-url", "origin", url});
  }

  std::filesystem::path person_key() const { return person.home() / ".ssh" / "id_ed25519"; }
  std::filesystem::path stranger_key() const { return person.home() / "stranger"; }

  // propose (with --publish) as the agent; REQUIREs it published.
  Published publish(const std::vector<std::string>& propose_args, const std::string& stdin_text = "") const {
    std::vector<std::string> args{"--json"};
    args.insert(args.end(), propose_args.begin(), propose_args.end());
    args.push_back("--publish");
    Run r = agent.kai(args, stdin_text);
    KAI_REQUIRE_EXIT(r, 0);
    nlohmann::json j = json_of(r);
    Published p;
    p.id = j.at("proposal").at("id").get<int>();
    p.commit = j.at("published").at("commit").get<std::string>();
    p.base = j.at("published").at("base").get<std::string>();
    p.origin = j.at("published").at("origin").get<std::string>();
    p.ref = j.at("published").at("ref").get<std::string>();
    return p;
  }
  Published publish_edit(const std::string& path, const std::string& target, const std::string& replacement) const {
    return publish(edit(path, target, replacement, "team change"));
  }

  // The person fetches; REQUIREs one new proposal and returns its local id.
  int fetch_one() const {
    Run r = person.kai({"--json", "fetch"});
    KAI_REQUIRE_EXIT(r, 0);
    nlohmann::json j = json_of(r);
    REQUIRE(j.at("added").size() == 1);
    return j.at("added")[0].get<int>();
  }

  // A decision object made by hand (not by kaicoder): `text` signed with
  // `key` in the decision namespace, as a commit on `parent`, written in
  // the remote as `ref`. Returns the commit.
  // `sig_text`, when given, is the signature file as it is (nothing is
  // signed); `ns` the namespace signed in.
  std::string forge(const std::string& text, const std::filesystem::path& key, const std::string& parent,
                    const std::string& ref, const std::string& sig_text = "",
                    const std::string& ns = "kaicoder-decision") const {
    const std::filesystem::path dir = person.home() / "forge";
    std::filesystem::create_directories(dir);
    const std::filesystem::path file = dir / "decision.toml";
    std::filesystem::remove(file);
    std::filesystem::remove(dir / "decision.toml.sig");
    { std::ofstream(file, std::ios::binary) << text; }
    if (sig_text.empty()) {
      Run s = person.spawn({"ssh-keygen", "-Y", "sign", "-n", ns, "-f", key.string(), file.string()})
                  .finish();
      INFO(s.all());
      REQUIRE(s.ok());
    } else {
      std::ofstream(dir / "decision.toml.sig", std::ios::binary) << sig_text;
    }
    // Made in the remote itself, as whoever can push there would.
    const std::vector<std::string> in_remote{"--git-dir", remote.string()};
    auto there = [&](std::vector<std::string> args, const std::string& in = "") {
      args.insert(args.begin(), in_remote.begin(), in_remote.end());
      return git_ok(person, args, in);
    };
    const std::string b1 = there({"hash-object", "-w", file.string()});
    const std::string b2 = there({"hash-object", "-w", (dir / "decision.toml.sig").string()});
    const std::string tree =
        there({"mktree"}, "100644 blob " + b1 + "\tdecision.toml\n100644 blob " + b2 + "\tdecision.toml.sig\n");
    const std::string commit = there({"commit-tree", tree, "-p", parent, "-m", "a decision"});
    there({"update-ref", ref, commit});
    return commit;
  }

  // The signed text of a decision, as kaicoder writes one.
  static std::string decision_text(const Published& p, const std::string& verdict = "approve",
                                   const std::string& origin = "", int id = 0, const std::string& tier = "normal") {
    return "version = 1\ndecision = \"" + verdict + "\"\nproposal = \"" + p.commit + "\"\nbase = \"" + p.base +
           "\"\norigin = \"" + (origin.empty() ? p.origin : origin) + "\"\nid = " + std::to_string(id ? id : p.id) +
           "\ndecider = \"mallory\"\ntime = \"2026-01-01T00:00:00Z\"\ntier = \"" + tier + "\"\n";
  }

  // The file of the decision commit `commit` (git show COMMIT:PATH).
  std::string decision_file(const std::string& commit, const std::string& file) const {
    return git_ok(person, {"show", commit + ":" + file}) + "\n";
  }
};

}  // namespace kai::test
