#include "lib/certify/certify.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <git2.h>

#include "lib/certify/decision.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/config/config.hpp"
#include "lib/util/git_tree.hpp"
#include "lib/paths/glob.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_config_file = "kaicoder.toml";
// The most of a committed kaicoder.toml or allowed-signers file read (by
// its size before its bytes): a base commit may have come from a team remote.
constexpr size_t k_committed_file_max = 4u << 20;

std::string mode_text(uint32_t mode) { return fmt::format("{:06o}", mode); }

// SPEC: the merge base with the upstream branch, else the root commit
// (following first parents).
Result<std::pair<CommitPtr, std::string>> default_base(git_repository* repo, git_commit* head) {
  git_reference* raw_head = nullptr;
  if (git_repository_head(&raw_head, repo) == 0) {
    RefPtr h(raw_head);
    git_reference* raw_up = nullptr;
    if (git_reference_is_branch(raw_head) && git_branch_upstream(&raw_up, raw_head) == 0) {
      RefPtr up(raw_up);
      git_oid mb;
      const git_oid* up_id = git_reference_target(raw_up);
      if (up_id && git_merge_base(&mb, repo, git_commit_id(head), up_id) == 0) {
        auto c = lookup_commit(repo, mb, "merge base");
        if (!c) return c.error();
        return std::pair{std::move(*c), fmt::format("merge base with {}", git_reference_shorthand(raw_up))};
      }
    }
  }
  git_commit* cur = nullptr;
  KAI_TRY(git_check(git_commit_dup(&cur, head), "reading HEAD"));
  CommitPtr c(cur);
  while (git_commit_parentcount(c.get()) > 0) {
    git_commit* p = nullptr;
    if (git_commit_parent(&p, c.get(), 0) != 0)
      return make_error(Errc::usage, "the root commit is not in this checkout",
                        "this checkout is shallow: fetch the full history (git fetch --unshallow, or fetch-depth: 0 in "
                        "CI), or name the base with --base");
    c.reset(p);
  }
  return std::pair{std::move(c), std::string("root commit")};
}

Result<Config> config_at(git_repository* repo, git_commit* commit) {
  auto tree = tree_of(commit);
  if (!tree) return tree.error();
  auto text = blob_at(repo, tree->get(), std::string(k_config_file), k_committed_file_max);
  if (!text) return text.error();
  if (!*text) return Config{};
  return parse_config_text(**text, fmt::format("{}@{}", k_config_file, hex(*git_commit_id(commit)).substr(0, 12)));
}

struct Scope {
  std::vector<std::string> globs;
  std::string signers;  // the allowed-signers path
  bool certified(const std::string& path) const {
    if (globs.empty()) return false;
    if (path.rfind(std::string(k_approvals_dir) + "/", 0) == 0) return false;
    if (path == k_config_file || (!signers.empty() && path == signers)) return true;
    return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) { return glob_match(g, path); });
  }
};

std::string mode_detail(uint32_t from, uint32_t to) {
  auto kind = [](uint32_t m) {
    return m == GIT_FILEMODE_LINK ? "symlink" : m == GIT_FILEMODE_COMMIT ? "submodule" : "file";
  };
  if (from == to || from == 0 || to == 0) return {};
  if (from == GIT_FILEMODE_BLOB && to == GIT_FILEMODE_BLOB_EXECUTABLE) return "executable bit set";
  if (from == GIT_FILEMODE_BLOB_EXECUTABLE && to == GIT_FILEMODE_BLOB) return "executable bit cleared";
  return fmt::format("{} became a {}", kind(from), kind(to));
}

// The blob id of a work-tree file as `git add` would store it.
Result<git_oid> workdir_id(git_repository* repo, const git_diff_file& f) {
  if (f.flags & GIT_DIFF_FLAG_VALID_ID && !git_oid_is_zero(&f.id)) return f.id;
  git_oid id;
  if (f.mode == GIT_FILEMODE_LINK) {
    std::error_code ec;
    fs::path target = fs::read_symlink(fs::path(git_repository_workdir(repo)) / f.path, ec);
    if (ec) return make_error(Errc::io, fmt::format("cannot read the symlink '{}': {}", f.path, ec.message()));
    std::string t = target.string();
    KAI_TRY(git_check(git_odb_hash(&id, t.data(), t.size(), GIT_OBJECT_BLOB), "hashing a symlink"));
    return id;
  }
  KAI_TRY(git_check(git_repository_hashfile(&id, repo, f.path, GIT_OBJECT_BLOB, nullptr),
                    fmt::format("hashing '{}'", f.path)));
  return id;
}

Binding result_of(const std::string& path, const char* kind, const git_oid& id, uint32_t mode) {
  return Binding{path, kind, hex(id), mode_text(mode)};
}

// One delta as a change of certified paths; nullopt when it touches none.
Result<std::optional<CertChange>> change_of(git_repository* repo, const git_diff_delta& d, const Scope& scope,
                                            WorkTree wt) {
  const std::string oldp = d.old_file.path ? d.old_file.path : "", newp = d.new_file.path ? d.new_file.path : "";
  // Before hashing anything: most of a work tree is not certified.
  if (!scope.certified(oldp) && !scope.certified(newp)) return std::optional<CertChange>{};
  git_oid new_id = d.new_file.id;
  if (wt == WorkTree::yes && d.status != GIT_DELTA_DELETED) {
    auto id = workdir_id(repo, d.new_file);
    if (!id) return id.error();
    new_id = *id;
  }
  CertChange c;
  c.old_mode = d.old_file.mode ? mode_text(d.old_file.mode) : "";
  c.new_mode = d.new_file.mode && d.status != GIT_DELTA_DELETED ? mode_text(d.new_file.mode) : "";
  c.detail = mode_detail(d.old_file.mode, d.new_file.mode);
  switch (d.status) {
    case GIT_DELTA_ADDED:
    case GIT_DELTA_UNTRACKED:
      c.kind = "add";
      c.path = newp;
      if (scope.certified(newp)) c.needs.push_back(result_of(newp, "add", new_id, d.new_file.mode));
      break;
    case GIT_DELTA_DELETED:
      c.kind = "delete";
      c.path = oldp;
      if (scope.certified(oldp)) c.needs.push_back(Binding{oldp, "delete", "", ""});
      break;
    case GIT_DELTA_MODIFIED:
    case GIT_DELTA_TYPECHANGE:
    case GIT_DELTA_CONFLICTED: {
      bool same_bytes = git_oid_equal(&d.old_file.id, &new_id);
      c.kind = same_bytes && d.old_file.mode != d.new_file.mode ? "mode" : "content";
      c.path = newp;
      if (d.status == GIT_DELTA_TYPECHANGE) c.kind = "mode";
      if (scope.certified(newp))
        c.needs.push_back(result_of(newp, c.kind == "mode" ? "mode" : "modify", new_id, d.new_file.mode));
      break;
    }
    case GIT_DELTA_RENAMED:
    case GIT_DELTA_COPIED:
      c.kind = d.status == GIT_DELTA_RENAMED ? "rename" : "copy";
      c.path = newp;
      c.from = oldp;
      if (d.status == GIT_DELTA_RENAMED && scope.certified(oldp)) c.needs.push_back(Binding{oldp, "delete", "", ""});
      if (scope.certified(newp)) c.needs.push_back(result_of(newp, "add", new_id, d.new_file.mode));
      if (d.similarity < 100 && !git_oid_equal(&d.old_file.id, &new_id))
        c.detail = c.detail.empty() ? "content changed too" : c.detail + ", content changed too";
      break;
    default: return std::optional<CertChange>{};
  }
  if (c.needs.empty()) return std::optional<CertChange>{};
  c.blob = d.status == GIT_DELTA_DELETED ? "" : hex(new_id);
  return std::optional<CertChange>(std::move(c));
}

Result<std::vector<CertChange>> certified_changes(git_repository* repo, git_tree* base, git_tree* head,
                                                  const Scope& scope, WorkTree wt) {
  git_diff_options o = GIT_DIFF_OPTIONS_INIT;
  // Unmodified files stay in the diff so that a copy of an unchanged file is
  // found as a copy; the rename pass drops them again.
  o.flags = GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_INCLUDE_UNMODIFIED;
  git_diff* raw = nullptr;
  if (wt == WorkTree::yes) {
    o.flags |= GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS;
    KAI_TRY(
        git_check(git_diff_tree_to_workdir_with_index(&raw, repo, base, &o), "comparing the base with the work tree"));
  } else {
    KAI_TRY(git_check(git_diff_tree_to_tree(&raw, repo, base, head, &o), "comparing base and head"));
  }
  DiffPtr diff(raw);
  git_diff_find_options f = GIT_DIFF_FIND_OPTIONS_INIT;
  f.flags = GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_COPIES | GIT_DIFF_FIND_COPIES_FROM_UNMODIFIED |
            GIT_DIFF_FIND_REMOVE_UNMODIFIED | (wt == WorkTree::yes ? GIT_DIFF_FIND_FOR_UNTRACKED : 0);
  KAI_TRY(git_check(git_diff_find_similar(raw, &f), "finding renames and copies"));
  std::vector<CertChange> out;
  for (size_t i = 0; i < git_diff_num_deltas(raw); ++i) {
    auto c = change_of(repo, *git_diff_get_delta(raw, i), scope, wt);
    if (!c) return c.error();
    if (*c) out.push_back(std::move(**c));
  }
  return out;
}

// The newest commit of base..head that left `b.path` as `b` says while no
// parent had it so: the commit that introduced that result.
void attribute(git_repository* repo, const git_oid& base, git_commit* head, git_tree* head_tree, bool worktree,
               CertChange& c) {
  const Binding& b = c.needs.back();
  std::optional<TreeEntry> want;
  if (!b.deleted()) {
    TreeEntry e{};
    git_oid_fromstr(&e.id, b.blob.c_str());
    e.mode = static_cast<uint32_t>(std::stoul(b.mode, nullptr, 8));
    want = e;
  }
  if (worktree && entry_at(head_tree, b.path) != want) {
    c.introduced = "uncommitted";
    return;
  }
  git_revwalk* raw = nullptr;
  if (git_revwalk_new(&raw, repo) != 0) return;
  WalkPtr walk(raw);
  git_revwalk_sorting(raw, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME);
  git_revwalk_push(raw, git_commit_id(head));
  git_revwalk_hide(raw, &base);
  git_oid id;
  int rc;
  while ((rc = git_revwalk_next(&id, raw)) == 0) {
    auto commit = lookup_commit(repo, id, "a commit");
    if (!commit) break;
    auto tree = tree_of(commit->get());
    if (!tree || entry_at(tree->get(), b.path) != want) continue;
    bool from_parent = false;
    unsigned n = git_commit_parentcount(commit->get());
    for (unsigned i = 0; i < n && !from_parent; ++i) {
      git_commit* p = nullptr;
      if (git_commit_parent(&p, commit->get(), i) != 0) continue;
      CommitPtr parent(p);
      auto pt = tree_of(p);
      from_parent = pt && entry_at(pt->get(), b.path) == want;
    }
    if (from_parent) continue;
    c.commit = hex(id);
    const char* summary = git_commit_summary(commit->get());
    c.introduced = fmt::format("{} {}", c.commit.substr(0, 12), summary ? summary : "");
    return;
  }
  c.introduced = rc == GIT_ITEROVER ? "unknown: not found in base..head"
                                    : "unknown: the history is incomplete (shallow checkout?)";
}

struct SignedBinding {
  Binding b;
  std::string signer;
};

// Check every manifest; the bindings of valid ones are what covers changes.
Result<std::vector<SignedBinding>> check_manifests(const std::vector<FoundManifest>& found, Certification& c,
                                                   const SshTool& ssh,
                                                   std::vector<std::pair<Binding, std::string>>& unsigned_claims) {
  std::vector<SignedBinding> approved;
  for (const auto& f : found) {
    ManifestCheck mc{f.path, f.where, "", "", 0};
    auto m = parse_manifest(f.text, f.path);
    if (m) mc.entries = m->changes.size();
    if (!c.signers_problem.empty())
      mc.problem = c.signers_problem;
    else if (!f.sig)
      mc.problem = fmt::format("no signature ({}.sig is missing)", f.path);
    else {
      auto who = verify_signature(ssh, c.signers_text, f.text, *f.sig);
      if (!who && who.error().code != Errc::denied) return who.error();
      if (!who)
        mc.problem = who.error().message;
      else if (!m)
        mc.problem = m.error().message;
      else
        mc.signer = *who;
    }
    if (m) {
      for (const auto& b : m->changes) {
        if (mc.problem.empty())
          approved.push_back(SignedBinding{b, mc.signer});
        else
          unsigned_claims.emplace_back(b, fmt::format("{}: {}", f.path, mc.problem));
      }
    }
    c.manifests.push_back(std::move(mc));
  }
  return approved;
}

// Whether `id` is a commit of base..head: reachable from head, not from base.
bool in_range(git_repository* repo, const git_oid& id, const git_oid& base, const git_oid& head) {
  if (git_oid_equal(&id, &base)) return false;
  if (!git_oid_equal(&id, &head) && git_graph_descendant_of(repo, &head, &id) != 1) return false;
  return git_graph_descendant_of(repo, &base, &id) != 1;
}

// Team decisions (lib/certify/decision) under refs/kaicoder/decisions/ and
// refs/kaicoder/remote/decisions/ that approve a proposal commit of
// base..head: each counts as a manifest of the results that commit makes,
// signed in the decision namespace by a key the base allows.
Status check_decisions(git_repository* repo, const git_oid& base, const git_oid& head, Certification& c,
                       const SshTool& ssh, std::vector<SignedBinding>& approved,
                       std::vector<std::pair<Binding, std::string>>& unsigned_claims) {
  struct Found {
    std::string ref;
    git_oid id;
    TeamRef names;
  };
  std::vector<Found> found;
  git_reference_iterator* raw_it = nullptr;
  if (git_reference_iterator_glob_new(&raw_it, repo, "refs/kaicoder/*") != 0) return ok_status();
  std::vector<std::string> seen;
  git_reference* raw_ref = nullptr;
  while (git_reference_next(&raw_ref, raw_it) == 0) {
    RefPtr ref(raw_ref);
    const std::string name = git_reference_name(raw_ref);
    std::string_view rest(name);
    rest.remove_prefix(std::string_view("refs/kaicoder/").size());
    if (rest.starts_with("remote/")) rest.remove_prefix(7);
    auto names = parse_team_ref(rest);
    const git_oid* target = git_reference_target(raw_ref);
    if (!names || names->kind != "decisions" || !target) continue;
    const std::string h = hex(*target);
    if (std::find(seen.begin(), seen.end(), h) != seen.end()) continue;
    seen.push_back(h);
    found.push_back(Found{name, *target, *names});
  }
  git_reference_iterator_free(raw_it);
  for (const auto& f : found) {
    auto o = read_decision_commit(repo, f.id);
    if (!o) continue;  // not a decision: it binds nothing
    if (o->decision.verdict != "approve") continue;
    git_oid proposal;
    if (git_oid_fromstr(&proposal, o->parent.c_str()) != 0 || !in_range(repo, proposal, base, head)) continue;
    auto commit = lookup_commit(repo, proposal, "a proposal commit");
    if (!commit) return commit.error();
    ManifestCheck mc{f.ref, "decision", "", "", 0};
    const bool on_base =
        git_commit_parentcount(commit->get()) == 1 && hex(*git_commit_parent_id(commit->get(), 0)) == o->decision.base;
    if (o->decision.proposal != o->parent || o->decision.origin != f.names.origin || o->decision.id != f.names.id ||
        !on_base)
      mc.problem = "it names another proposal than the one its ref and parent name";
    else if (!c.signers_problem.empty())
      mc.problem = c.signers_problem;
    else {
      auto who = verify_signature(ssh, c.signers_text, o->text, o->sig, k_decision_namespace);
      if (!who && who.error().code != Errc::denied) return who.error();
      if (!who)
        mc.problem = who.error().message;
      else
        mc.signer = *who;
    }
    auto bindings = commit_bindings(repo, commit->get());
    if (!bindings) return bindings.error();
    mc.entries = bindings->size();
    for (const auto& b : *bindings) {
      if (mc.problem.empty())
        approved.push_back(SignedBinding{b, mc.signer});
      else
        unsigned_claims.emplace_back(b, fmt::format("{}: {}", f.ref, mc.problem));
    }
    c.manifests.push_back(std::move(mc));
  }
  return ok_status();
}

void judge(CertChange& c, const std::vector<SignedBinding>& approved,
           const std::vector<std::pair<Binding, std::string>>& unsigned_claims) {
  std::vector<std::string> why;
  std::vector<std::string> signers;
  for (const auto& need : c.needs) {
    auto hit =
        std::find_if(approved.begin(), approved.end(), [&](const SignedBinding& a) { return a.b.same_result(need); });
    if (hit != approved.end()) {
      if (std::find(signers.begin(), signers.end(), hit->signer) == signers.end()) signers.push_back(hit->signer);
      continue;
    }
    auto claim = std::find_if(unsigned_claims.begin(), unsigned_claims.end(),
                              [&](const auto& u) { return u.first.same_result(need); });
    auto other =
        std::find_if(approved.begin(), approved.end(), [&](const SignedBinding& a) { return a.b.path == need.path; });
    std::string what = need.deleted()
                           ? fmt::format("deleting '{}'", need.path)
                           : fmt::format("'{}' as blob {} mode {}", need.path, need.blob.substr(0, 12), need.mode);
    if (claim != unsigned_claims.end())
      why.push_back(fmt::format("the approval of {} does not count: {}", what, claim->second));
    else if (other != approved.end())
      why.push_back(fmt::format(
          "the signed approval for '{}' is for another result ({})", need.path,
          other->b.deleted() ? "deleted" : "blob " + other->b.blob.substr(0, 12) + " mode " + other->b.mode));
    else
      why.push_back(fmt::format("no signed approval of {}", what));
  }
  c.covered = why.empty();
  if (c.covered) {
    for (const auto& s : signers) c.signer += (c.signer.empty() ? "" : ", ") + s;
  } else {
    for (const auto& w : why) c.reason += (c.reason.empty() ? "" : "; ") + w;
  }
}

}  // namespace

Result<SignersAt> signers_at(git_repository* repo, git_commit* commit) {
  auto cfg = config_at(repo, commit);
  if (!cfg) return cfg.error();
  SignersAt out;
  out.path = cfg->allowed_signers;
  if (out.path.empty()) {
    out.problem = "no [certify] allowed_signers at the base";
    return out;
  }
  auto tree = tree_of(commit);
  if (!tree) return tree.error();
  auto text = blob_at(repo, tree->get(), out.path, k_committed_file_max);
  if (!text) return text.error();
  if (!*text)
    out.problem = fmt::format("the allowed-signers file '{}' is not in the base", out.path);
  else
    out.text = **text;
  return out;
}

size_t Certification::uncovered() const {
  return static_cast<size_t>(
      std::count_if(changes.begin(), changes.end(), [](const CertChange& c) { return !c.covered; }));
}

Result<Certification> check_certification(const CertifyRequest& req) {
  git_init_once();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, req.start.c_str(), 0, nullptr) != 0)
    return make_error(Errc::usage, fmt::format("'{}' is not in a git repository", req.start.string()),
                      "run kaicoder verify inside the checkout to certify");
  RepoPtr repo(raw);
  if (req.worktree == WorkTree::yes && (!req.head.empty() || git_repository_is_bare(raw)))
    return make_error(Errc::usage, git_repository_is_bare(raw) ? "a bare repository has no work tree"
                                                               : "--worktree compares the work tree, not --head");
  Certification c;
  c.worktree = req.worktree == WorkTree::yes;
  if (const char* wd = git_repository_workdir(raw)) c.workdir = wd;
  auto head = resolve_commit(raw, req.head.empty() ? "HEAD" : req.head);
  if (!head) return head.error();
  CommitPtr base;
  if (!req.base.empty()) {
    auto b = resolve_commit(raw, req.base);
    if (!b) return b.error();
    base = std::move(*b);
    c.base_from = fmt::format("--base {}", req.base);
  } else {
    // [certify] base is read from the commit that would otherwise be the base,
    // so a change cannot move its own base forward past itself.
    auto d = default_base(raw, head->get());
    if (!d) return d.error();
    auto cfg = config_at(raw, d->first.get());
    if (!cfg) return cfg.error();
    if (!cfg->certify_base.empty()) {
      auto b = resolve_commit(raw, cfg->certify_base);
      if (!b) return b.error();
      base = std::move(*b);
      c.base_from = fmt::format("[certify] base = \"{}\"", cfg->certify_base);
    } else {
      base = std::move(d->first);
      c.base_from = d->second;
    }
  }
  c.base = hex(*git_commit_id(base.get()));
  c.head = hex(*git_commit_id(head->get()));
  auto cfg = config_at(raw, base.get());
  if (!cfg) return cfg.error();
  auto base_tree = tree_of(base.get());
  if (!base_tree) return base_tree.error();
  auto head_tree = tree_of(head->get());
  if (!head_tree) return head_tree.error();
  c.paths = cfg->certify_paths;
  auto signers = signers_at(raw, base.get());
  if (!signers) return signers.error();
  c.allowed_signers = signers->path;
  c.signers_text = signers->text;
  c.signers_problem = signers->problem;
  Scope scope{c.paths, c.allowed_signers};
  auto changes = certified_changes(raw, base_tree->get(), head_tree->get(), scope, req.worktree);
  if (!changes) return changes.error();
  c.changes = std::move(*changes);
  if (c.changes.empty()) return c;

  std::vector<FoundManifest> found;
  KAI_TRY(manifests_in_tree(raw, head_tree->get(), found));
  if (req.worktree == WorkTree::yes) manifests_in_workdir(c.workdir, found);
  std::vector<std::pair<Binding, std::string>> unsigned_claims;
  auto approved = check_manifests(found, c, req.ssh, unsigned_claims);
  if (!approved) return approved.error();
  KAI_TRY(check_decisions(raw, *git_commit_id(base.get()), *git_commit_id(head->get()), c, req.ssh, *approved,
                          unsigned_claims));
  for (auto& ch : c.changes) {
    judge(ch, *approved, unsigned_claims);
    if (!ch.covered) attribute(raw, *git_commit_id(base.get()), head->get(), head_tree->get(), c.worktree, ch);
  }
  return c;
}

Manifest draft_manifest(const Certification& c) {
  Manifest m;
  m.base = c.base;
  m.head = c.head;
  for (const auto& ch : c.changes) {
    if (ch.covered) continue;
    for (const auto& b : ch.needs)
      if (std::none_of(m.changes.begin(), m.changes.end(), [&](const Binding& x) { return x.same_result(b); }))
        m.changes.push_back(b);
  }
  return m;
}

Result<std::string> write_signed_manifest(const Certification& c, const Manifest& m, const SigningKey& key,
                                          const SshTool& ssh, TimePoint now) {
  if (c.workdir.empty())
    return make_error(Errc::usage, "a bare repository has no work tree to write the manifest into");
  if (!c.signers_problem.empty())
    return make_error(Errc::denied, fmt::format("no signature can count: {}", c.signers_problem),
                      "name an allowed-signers file in [certify] allowed_signers and commit it to the base first");
  const std::string text = format_manifest(m);
  auto sig = sign_with(ssh, key, text, k_signature_namespace);
  if (!sig) return sig.error();
  auto who = verify_signature(ssh, c.signers_text, text, *sig);
  if (!who)
    return make_error(
        who.error().code,
        fmt::format("the key {} is not an allowed signer at the base: {}", key.shown(), who.error().message),
        fmt::format("add its public key to '{}' (itself a certified change, signed by a key the base allows)",
                    c.allowed_signers));
  const std::string name = fmt::format("{}-{}.toml", compact_utc(now), c.head.substr(0, 12));
  const std::string rel = fmt::format("{}/{}", k_approvals_dir, name);
  auto dir = open_parent(c.workdir, rel, CreateDirs::yes);
  if (!dir) return dir.error();
  KAI_TRY(write_exclusive_at(*dir, name, text, 0644));
  if (auto s = write_exclusive_at(*dir, name + ".sig", *sig, 0644); !s) {
    (void)unlink_at(*dir, name);
    return s.error();
  }
  return rel;
}

}  // namespace kai
