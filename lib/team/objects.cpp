#include "lib/team/objects.hpp"

#include <algorithm>
#include <map>
#include <sys/stat.h>

#include <fmt/format.h>
#include <git2.h>

#include "lib/certify/signing_key.hpp"
#include "lib/gate/apply.hpp"
#include "lib/gate/propose.hpp"
#include "lib/util/fs.hpp"

namespace kai::team {
namespace fs = std::filesystem;

namespace {

using SignaturePtr = GitOwned<git_signature, git_signature_free>;
using BuilderPtr = GitOwned<git_treebuilder, git_treebuilder_free>;

constexpr size_t k_commit_max_bytes = 256 * 1024;
constexpr size_t k_trailer_max_bytes = 4096;

Result<git_oid> oid_of(const std::string& hex_id) {
  git_oid id;
  if (git_oid_fromstr(&id, hex_id.c_str()) != 0 || hex_id.size() != GIT_OID_HEXSZ)
    return make_error(Errc::usage, fmt::format("'{}' is not a commit id", hex_id));
  return id;
}

// One line, no control characters, cut at a character boundary.
std::string one_line(std::string_view v, size_t max = k_trailer_max_bytes) {
  std::string s;
  for (char c : v) s += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s.resize(cut);
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

Result<SignaturePtr> signature_of(const Identity& who, TimePoint now) {
  git_signature* raw = nullptr;
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  KAI_TRY(git_check(git_signature_new(&raw, who.name.c_str(), who.email.c_str(), static_cast<git_time_t>(secs), 0),
                    "making a commit signature"));
  return SignaturePtr(raw);
}

uint32_t git_mode(unsigned perm) { return (perm & 0111u) ? GIT_FILEMODE_BLOB_EXECUTABLE : GIT_FILEMODE_BLOB; }
unsigned perm_of(uint32_t git_mode) { return git_mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755u : 0644u; }

Error commit_first(const std::string& path, const std::string& why) {
  return make_error(Errc::conflict, fmt::format("'{}' {}: a proposal is published on HEAD's commit", path, why),
                    "commit first (git commit), then propose the change again and publish it");
}

// The file `path` at HEAD must be what the proposal found: `base`.
Status base_at_head(git_tree* head, const std::string& path, const Base& base) {
  auto e = entry_at(head, path);
  if (!base.exists) {
    if (e) return commit_first(path, "exists at HEAD but not in the work tree the proposal was made from");
    return ok_status();
  }
  if (!e) return commit_first(path, "is not committed");
  if (e->mode != GIT_FILEMODE_BLOB && e->mode != GIT_FILEMODE_BLOB_EXECUTABLE)
    return commit_first(path, "is not a regular file at HEAD");
  if (hex(e->id) != base.blob || git_mode(base.mode) != e->mode) return commit_first(path, "differs from HEAD");
  return ok_status();
}

struct Update {
  std::string path;
  std::optional<std::string> bytes;  // nullopt: removed
  uint32_t mode = GIT_FILEMODE_BLOB;
};

// What pending proposal `p` makes of the files at HEAD.
Result<std::vector<Update>> updates_of(git_repository* repo, git_tree* head, const Proposal& p) {
  std::vector<Update> out;
  if (p.kind == Kind::changeset) {
    for (const Change& c : p.changes) {
      KAI_TRY(base_at_head(head, c.path, c.base));
      const uint32_t mode = git_mode(c.after_mode);
      if (c.op == "rename") {
        if (entry_at(head, c.to)) return commit_first(c.to, "exists at HEAD");
        out.push_back(Update{c.path, std::nullopt, 0});
        out.push_back(Update{c.to, c.after, mode});
      } else if (!c.after_exists) {
        out.push_back(Update{c.path, std::nullopt, 0});
      } else {
        out.push_back(Update{c.path, c.after, mode});
      }
    }
    return out;
  }
  KAI_TRY(base_at_head(head, p.path, p.base));
  if (p.kind == Kind::del) {
    out.push_back(Update{p.path, std::nullopt, 0});
    return out;
  }
  const uint32_t mode = p.base.exists ? git_mode(p.base.mode) : uint32_t{GIT_FILEMODE_BLOB};
  if (p.kind == Kind::write) {
    out.push_back(Update{p.path, p.content, mode});
    return out;
  }
  auto current = blob_at(repo, head, p.path);
  if (!current) return current.error();
  if (!*current) return commit_first(p.path, "is not committed");
  if (p.replace_all) {
    ReplacedAll r = replace_every(**current, p.target, p.replacement);
    if (r.count != p.occurrences)
      return make_error(Errc::conflict,
                        fmt::format("'{}' at HEAD holds the target {} times, not {}", p.path, r.count, p.occurrences));
    out.push_back(Update{p.path, std::move(r.bytes), mode});
    return out;
  }
  auto edited = apply_edit(**current, p.target, p.replacement, p.path);
  if (!edited) return edited.error();
  out.push_back(Update{p.path, std::move(*edited), mode});
  return out;
}

std::string proposal_message(const Proposal& p, const std::string& origin, const std::string& expires) {
  const std::string subject = one_line(p.summary.empty() ? p.why : p.summary, 72);
  std::string m = fmt::format("kaicoder proposal {}/{}: {}\n\n", origin, p.id, subject);
  // The why as the agent wrote it, for git log; every line of it indented,
  // so nothing in it reads as a trailer.
  std::string body;
  for (char c : p.why) {
    if (body.empty() || body.back() == '\n') body += "    ";
    body += c;
  }
  if (!body.empty()) m += body + (body.back() == '\n' ? "\n" : "\n\n");
  m += fmt::format("Kaicoder-Proposal: {}/{}\n", origin, p.id);
  m += fmt::format("Kaicoder-Kind: {}\n", to_string(p.kind));
  m += fmt::format("Kaicoder-Agent: {}\n", one_line(p.agent));
  m += fmt::format("Kaicoder-Summary: {}\n", one_line(p.summary));
  m += fmt::format("Kaicoder-Why: {}\n", one_line(p.why));
  m += fmt::format("Kaicoder-Tier: {}\n", to_string(p.tier));
  m += fmt::format("Kaicoder-Expires: {}\n", expires);
  return m;
}

Error not_a_proposal(const std::string& commit, const std::string& why) {
  return make_error(Errc::conflict, fmt::format("proposal commit {} is refused: {}", commit.substr(0, 12), why),
                    "only kaicoder publish makes proposal commits; see kaicoder-team(7)");
}

// The trailers of `message`: its last paragraph, "Key: value" lines.
Result<std::map<std::string, std::string>> trailers_of(std::string_view message, const std::string& commit) {
  while (!message.empty() && message.back() == '\n') message.remove_suffix(1);
  const size_t cut = message.rfind("\n\n");
  std::string_view last = cut == std::string_view::npos ? message : message.substr(cut + 2);
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= last.size()) {
    size_t end = last.find('\n', start);
    if (end == std::string_view::npos) end = last.size();
    std::string_view line = last.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const size_t colon = line.find(": ");
    if (colon == std::string_view::npos || !line.starts_with("Kaicoder-"))
      return not_a_proposal(commit, "its message does not end with kaicoder's trailers");
    std::string key(line.substr(0, colon));
    if (out.count(key)) return not_a_proposal(commit, fmt::format("{} appears twice", key));
    out[key] = std::string(line.substr(colon + 2));
  }
  return out;
}

// A path from another clone's tree that kaicoder would write: relative,
// no empty, '.', '..' or '.git' part.
bool safe_path(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    std::string lower;
    for (char c : part) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (part.empty() || part == "." || part == ".." || lower == ".git") return false;
    start = end + 1;
  }
  return true;
}

Result<std::optional<std::string>> blob_bytes(git_repository* repo, git_odb* odb, const git_oid& id, size_t max,
                                              const std::string& path, const std::string& commit) {
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &type, odb, &id) != 0 || type != GIT_OBJECT_BLOB)
    return not_a_proposal(commit, fmt::format("'{}' cannot be read", path));
  if (size > max)
    return not_a_proposal(commit,
                          fmt::format("'{}' is {} bytes, over the {} bytes of [limits] content", path, size, max));
  git_blob* raw = nullptr;
  KAI_TRY(git_check(git_blob_lookup(&raw, repo, &id), "reading a blob"));
  BlobPtr blob(raw);
  return std::optional<std::string>(
      std::string(static_cast<const char*>(git_blob_rawcontent(raw)), static_cast<size_t>(git_blob_rawsize(raw))));
}

}  // namespace

Result<RepoPtr> open_repo(const Workspace& ws) {
  git_init_once();
  git_repository* raw = nullptr;
  if (git_repository_open_ext(&raw, ws.root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0)
    return make_error(Errc::usage, fmt::format("'{}' is not a git work tree's top", ws.root.string()),
                      "team mode needs the root to be a git clone with the [team] remote");
  RepoPtr repo(raw);
  if (git_repository_is_bare(raw)) return make_error(Errc::usage, "team mode needs a work tree, not a bare repository");
  return repo;
}

Identity git_identity(const Workspace& ws) {
  Identity who{git_config_value(ws.root, ws.home, "user.name"), git_config_value(ws.root, ws.home, "user.email")};
  if (who.name.empty()) who.name = ws.user.empty() ? "kaicoder" : ws.user;
  if (who.email.empty()) who.email = "kaicoder@localhost";
  who.name = one_line(who.name, 200);
  who.email = one_line(who.email, 200);
  return who;
}

Result<std::string> head_commit(git_repository* repo) {
  git_oid id;
  if (git_reference_name_to_id(&id, repo, "HEAD") != 0)
    return make_error(Errc::usage, "HEAD names no commit yet", "make a first commit, then publish");
  return hex(id);
}

Result<ProposalInfo> make_proposal_commit(const Workspace& ws, git_repository* repo, const Proposal& p,
                                          const std::string& origin, const std::string& expires, TimePoint now) {
  auto head_id = head_commit(repo);
  if (!head_id) return head_id.error();
  auto hid = oid_of(*head_id);
  if (!hid) return hid.error();
  auto head = lookup_commit(repo, *hid, "HEAD");
  if (!head) return head.error();
  auto tree = tree_of(head->get());
  if (!tree) return tree.error();
  auto updates = updates_of(repo, tree->get(), p);
  if (!updates) return updates.error();
  std::vector<git_tree_update> ups;
  std::vector<git_oid> ids(updates->size());
  for (size_t i = 0; i < updates->size(); ++i) {
    const Update& u = (*updates)[i];
    git_tree_update up{};
    up.path = u.path.c_str();
    if (u.bytes) {
      KAI_TRY(
          git_check(git_blob_create_from_buffer(&ids[i], repo, u.bytes->data(), u.bytes->size()), "writing a blob"));
      up.action = GIT_TREE_UPDATE_UPSERT;
      up.id = ids[i];
      up.filemode = static_cast<git_filemode_t>(u.mode);
    } else {
      up.action = GIT_TREE_UPDATE_REMOVE;
    }
    ups.push_back(up);
  }
  git_oid tree_id;
  KAI_TRY(git_check(git_tree_create_updated(&tree_id, repo, tree->get(), ups.size(), ups.data()),
                    "writing the proposal's tree"));
  git_tree* raw_tree = nullptr;
  KAI_TRY(git_check(git_tree_lookup(&raw_tree, repo, &tree_id), "reading the proposal's tree"));
  TreePtr new_tree(raw_tree);
  auto sig = signature_of(git_identity(ws), now);
  if (!sig) return sig.error();
  const std::string message = proposal_message(p, origin, expires);
  const git_commit* parents[] = {head->get()};
  git_oid commit;
  KAI_TRY(git_check(
      git_commit_create(&commit, repo, nullptr, sig->get(), sig->get(), "UTF-8", message.c_str(), raw_tree, 1, parents),
      "writing the proposal commit"));
  ProposalInfo info;
  info.origin = origin;
  info.id = p.id;
  info.kind = std::string(to_string(p.kind));
  info.agent = p.agent;
  info.summary = p.summary;
  info.why = p.why;
  info.tier = std::string(to_string(p.tier));
  info.expires = expires;
  info.commit = hex(commit);
  info.base = *head_id;
  info.created = iso_utc(now);
  return info;
}

Result<RemoteProposal> read_proposal_commit(git_repository* repo, const std::string& commit, const TeamRef& named,
                                            size_t max_bytes) {
  auto id = oid_of(commit);
  if (!id) return id.error();
  git_odb* raw_odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&raw_odb, repo), "opening the object database"));
  OdbPtr odb(raw_odb);
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &type, raw_odb, &*id) != 0) return not_a_proposal(commit, "it was not fetched");
  if (type != GIT_OBJECT_COMMIT) return not_a_proposal(commit, "it is not a commit");
  if (size > k_commit_max_bytes) return not_a_proposal(commit, fmt::format("its commit is {} bytes", size));
  auto c = lookup_commit(repo, *id, "a proposal");
  if (!c) return c.error();
  if (git_commit_parentcount(c->get()) != 1) return not_a_proposal(commit, "it must have exactly one parent");
  RemoteProposal out;
  ProposalInfo& info = out.info;
  info.commit = commit;
  info.base = hex(*git_commit_parent_id(c->get(), 0));
  info.created = iso_utc(TimePoint(std::chrono::seconds(git_commit_time(c->get()))));
  const char* msg = git_commit_message_raw(c->get());
  auto t = trailers_of(msg ? msg : "", commit);
  if (!t) return t.error();
  const std::string want = fmt::format("{}/{}", named.origin, named.id);
  if (!t->count("Kaicoder-Proposal") || (*t)["Kaicoder-Proposal"] != want)
    return not_a_proposal(commit, fmt::format("it does not name itself {} as its ref does", want));
  info.origin = named.origin;
  info.id = named.id;
  info.kind = (*t)["Kaicoder-Kind"];
  if (info.kind != "edit" && info.kind != "write" && info.kind != "delete" && info.kind != "changeset")
    return not_a_proposal(commit, fmt::format("'{}' is not a kind kaicoder publishes", one_line(info.kind, 40)));
  info.agent = (*t)["Kaicoder-Agent"];
  info.summary = (*t)["Kaicoder-Summary"];
  info.why = (*t)["Kaicoder-Why"];
  info.tier = (*t)["Kaicoder-Tier"] == "normal" ? "normal" : "confirm";  // anything else asks for more
  info.expires = (*t)["Kaicoder-Expires"];
  TimePoint at;
  if (!parse_iso_utc(info.expires, at)) return not_a_proposal(commit, "its Kaicoder-Expires is not a UTC time");
  for (const auto& [k, v] : *t)
    if (k != "Kaicoder-Proposal" && k != "Kaicoder-Kind" && k != "Kaicoder-Agent" && k != "Kaicoder-Summary" &&
        k != "Kaicoder-Why" && k != "Kaicoder-Tier" && k != "Kaicoder-Expires")
      return not_a_proposal(commit, fmt::format("unknown trailer {}", one_line(k, 40)));

  git_commit* rp = nullptr;
  KAI_TRY(git_check(git_commit_parent(&rp, c->get(), 0), "reading the proposal's base"));
  CommitPtr parent(rp);
  auto old_tree = tree_of(rp);
  if (!old_tree) return old_tree.error();
  auto new_tree = tree_of(c->get());
  if (!new_tree) return new_tree.error();
  git_diff_options o = GIT_DIFF_OPTIONS_INIT;
  o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* raw_diff = nullptr;
  KAI_TRY(
      git_check(git_diff_tree_to_tree(&raw_diff, repo, old_tree->get(), new_tree->get(), &o), "diffing the proposal"));
  DiffPtr diff(raw_diff);
  const size_t n = git_diff_num_deltas(raw_diff);
  if (n == 0) return not_a_proposal(commit, "it changes nothing");
  if (n > 10000) return not_a_proposal(commit, fmt::format("it changes {} files", n));
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const git_diff_delta& d = *git_diff_get_delta(raw_diff, i);
    const bool had = d.status != GIT_DELTA_ADDED, has = d.status != GIT_DELTA_DELETED;
    auto regular = [](uint32_t m) { return m == GIT_FILEMODE_BLOB || m == GIT_FILEMODE_BLOB_EXECUTABLE; };
    const std::string path = has ? d.new_file.path : d.old_file.path;
    if ((had && !regular(d.old_file.mode)) || (has && !regular(d.new_file.mode)))
      return not_a_proposal(
          commit, fmt::format("'{}' is not a regular file there (a symlink or submodule)", one_line(path, 200)));
    if (!safe_path(path))
      return not_a_proposal(commit, fmt::format("'{}' is not a path in a tree", one_line(path, 200)));
    Change ch;
    ch.op = !had ? "create" : !has ? "delete" : git_oid_equal(&d.old_file.id, &d.new_file.id) ? "mode" : "write";
    ch.path = path;
    if (had) ch.base = Base{true, hex(d.old_file.id), perm_of(d.old_file.mode)};
    ch.after_exists = has;
    if (has) {
      ch.after_mode = perm_of(d.new_file.mode);
      auto bytes = blob_bytes(repo, raw_odb, d.new_file.id, max_bytes, path, commit);
      if (!bytes) return bytes.error();
      ch.after = std::move(**bytes);
      total += ch.after.size();
      if (total > 4 * max_bytes) return not_a_proposal(commit, "its files are too large together");
    }
    out.changes.push_back(std::move(ch));
  }
  return out;
}

Result<std::vector<std::optional<std::string>>> base_bytes(git_repository* repo, const std::string& base,
                                                           const std::vector<Change>& changes, size_t max) {
  auto id = oid_of(base);
  if (!id) return id.error();
  auto c = lookup_commit(repo, *id, "the proposal's base");
  if (!c) return c.error();
  auto tree = tree_of(c->get());
  if (!tree) return tree.error();
  std::vector<std::optional<std::string>> out;
  for (const Change& ch : changes) {
    if (!ch.base.exists) {
      out.emplace_back(std::nullopt);
      continue;
    }
    auto b = blob_at(repo, tree->get(), ch.path, max);
    if (!b) return b.error();
    out.push_back(std::move(*b));
  }
  return out;
}

Result<std::string> make_decision_commit(git_repository* repo, const std::string& proposal, const std::string& text,
                                         const std::string& sig, const Identity& who, TimePoint now,
                                         const std::string& message) {
  auto pid = oid_of(proposal);
  if (!pid) return pid.error();
  auto parent = lookup_commit(repo, *pid, "the proposal commit");
  if (!parent) return parent.error();
  git_treebuilder* raw_tb = nullptr;
  KAI_TRY(git_check(git_treebuilder_new(&raw_tb, repo, nullptr), "making the decision's tree"));
  BuilderPtr tb(raw_tb);
  for (const auto& [name, bytes] : {std::pair{k_decision_file, &text}, std::pair{k_decision_sig, &sig}}) {
    git_oid blob;
    KAI_TRY(git_check(git_blob_create_from_buffer(&blob, repo, bytes->data(), bytes->size()), "writing a blob"));
    KAI_TRY(git_check(git_treebuilder_insert(nullptr, raw_tb, std::string(name).c_str(), &blob, GIT_FILEMODE_BLOB),
                      "making the decision's tree"));
  }
  git_oid tree_id;
  KAI_TRY(git_check(git_treebuilder_write(&tree_id, raw_tb), "writing the decision's tree"));
  git_tree* raw_tree = nullptr;
  KAI_TRY(git_check(git_tree_lookup(&raw_tree, repo, &tree_id), "reading the decision's tree"));
  TreePtr tree(raw_tree);
  auto s = signature_of(who, now);
  if (!s) return s.error();
  const git_commit* parents[] = {parent->get()};
  git_oid commit;
  KAI_TRY(git_check(
      git_commit_create(&commit, repo, nullptr, s->get(), s->get(), "UTF-8", message.c_str(), raw_tree, 1, parents),
      "writing the decision commit"));
  return hex(commit);
}

Status set_ref(git_repository* repo, const std::string& name, const std::string& id, const std::string& log) {
  if (!name.starts_with(k_refs)) return make_error(Errc::usage, fmt::format("'{}' is not under refs/kaicoder/", name));
  auto oid = oid_of(id);
  if (!oid) return oid.error();
  git_reference* raw = nullptr;
  KAI_TRY(git_check(git_reference_create(&raw, repo, name.c_str(), &*oid, 1, log.c_str()),
                    fmt::format("setting {}", name)));
  git_reference_free(raw);
  return ok_status();
}

Status delete_ref(git_repository* repo, const std::string& name) {
  if (!name.starts_with(k_refs)) return make_error(Errc::usage, fmt::format("'{}' is not under refs/kaicoder/", name));
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, name.c_str()) != 0) return ok_status();
  RefPtr ref(raw);
  return git_check(git_reference_delete(raw), fmt::format("deleting {}", name));
}

std::optional<std::string> ref_target(git_repository* repo, const std::string& name) {
  git_oid id;
  if (git_reference_name_to_id(&id, repo, name.c_str()) != 0) return std::nullopt;
  return hex(id);
}

std::vector<std::pair<std::string, std::string>> refs_under(git_repository* repo, const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  git_reference_iterator* raw_it = nullptr;
  if (git_reference_iterator_glob_new(&raw_it, repo, (prefix + "*").c_str()) != 0) return out;
  git_reference* raw = nullptr;
  while (git_reference_next(&raw, raw_it) == 0) {
    RefPtr ref(raw);
    const git_oid* t = git_reference_target(raw);
    if (t && std::string_view(git_reference_name(raw)).starts_with(prefix))
      out.emplace_back(git_reference_name(raw), hex(*t));
  }
  git_reference_iterator_free(raw_it);
  return out;
}

bool in_history(git_repository* repo, const std::string& commit) {
  auto id = oid_of(commit);
  git_oid head;
  if (!id || git_reference_name_to_id(&head, repo, "HEAD") != 0) return false;
  return git_oid_equal(&head, &*id) || git_graph_descendant_of(repo, &head, &*id) == 1;
}

Forwarded fast_forward(const Workspace& ws, git_repository* repo, const Proposal& p) {
  Forwarded out;
  auto fail = [&out](std::string why) {
    out.note = std::move(why);
    return out;
  };
  auto pid = oid_of(p.team.commit);
  auto bid = oid_of(p.team.base);
  if (!pid || !bid) return fail("the record names no commit");
  git_reference* raw_head = nullptr;
  if (git_reference_lookup(&raw_head, repo, "HEAD") != 0) return fail("HEAD cannot be read");
  RefPtr head(raw_head);
  std::string branch = "HEAD";
  if (git_reference_type(raw_head) == GIT_REFERENCE_SYMBOLIC) branch = git_reference_symbolic_target(raw_head);
  git_oid now;
  if (git_reference_name_to_id(&now, repo, branch.c_str()) != 0 || !git_oid_equal(&now, &*bid))
    return fail(fmt::format("{} has moved on from the base {}: the change is in the work tree, not committed", branch,
                            p.team.base.substr(0, 12)));
  auto commit = lookup_commit(repo, *pid, "the proposal commit");
  auto base = lookup_commit(repo, *bid, "the base");
  if (!commit || !base) return fail("the proposal commit is not here");
  auto new_tree = tree_of(commit->get());
  auto old_tree = tree_of(base->get());
  if (!new_tree || !old_tree) return fail("the proposal's trees cannot be read");
  git_diff* raw_diff = nullptr;
  if (git_diff_tree_to_tree(&raw_diff, repo, old_tree->get(), new_tree->get(), nullptr) != 0)
    return fail("the proposal cannot be diffed");
  DiffPtr diff(raw_diff);
  git_index* raw_index = nullptr;
  if (git_repository_index(&raw_index, repo) != 0) return fail("the index cannot be read");
  IndexPtr index(raw_index);
  if (git_index_read(raw_index, 0) != 0) return fail("the index cannot be read");
  // Every file the commit changes: the work tree holds its result, the index still the base.
  for (size_t i = 0; i < git_diff_num_deltas(raw_diff); ++i) {
    const git_diff_delta& d = *git_diff_get_delta(raw_diff, i);
    const std::string path = d.status == GIT_DELTA_DELETED ? d.old_file.path : d.new_file.path;
    auto cur = read_file(ws.root / path);
    if (d.status == GIT_DELTA_DELETED) {
      std::error_code ec;
      if (fs::exists(fs::symlink_status(ws.root / path, ec)))
        return fail(fmt::format("'{}' is still in the work tree", path));
    } else {
      struct stat st {};
      if (!cur || ::lstat((ws.root / path).c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
          blob_id(*cur) != hex(d.new_file.id) || git_mode(st.st_mode & 0777) != d.new_file.mode)
        return fail(fmt::format("'{}' in the work tree is not the proposal commit's", path));
    }
    const git_index_entry* e = git_index_get_bypath(raw_index, path.c_str(), 0);
    const bool base_had = d.status != GIT_DELTA_ADDED;
    if (base_had != (e != nullptr) || (e && (!git_oid_equal(&e->id, &d.old_file.id) || e->mode != d.old_file.mode)))
      return fail(fmt::format("the index holds other changes to '{}'", path));
  }
  for (size_t i = 0; i < git_diff_num_deltas(raw_diff); ++i) {
    const git_diff_delta& d = *git_diff_get_delta(raw_diff, i);
    if (d.status == GIT_DELTA_DELETED) {
      if (git_index_remove_bypath(raw_index, d.old_file.path) != 0) return fail("the index cannot be changed");
      continue;
    }
    git_index_entry e{};
    e.path = d.new_file.path;
    e.id = d.new_file.id;
    e.mode = d.new_file.mode;
    if (git_index_add(raw_index, &e) != 0) return fail("the index cannot be changed");
  }
  const Identity who = git_identity(ws);
  (void)git_repository_set_ident(repo, who.name.c_str(), who.email.c_str());
  const std::string log =
      fmt::format("kaicoder: team proposal {}/{} approved by {}", p.team.origin, p.team.remote_id, p.team.signer);
  git_reference* moved = nullptr;
  if (git_reference_create_matching(&moved, repo, branch.c_str(), &*pid, 1, &*bid, log.c_str()) != 0)
    return fail(fmt::format("{} moved meanwhile", branch));
  git_reference_free(moved);
  if (git_index_write(raw_index) != 0) {
    git_reference* back = nullptr;
    if (git_reference_create_matching(&back, repo, branch.c_str(), &*bid, 1, &*pid, "kaicoder: undo") == 0)
      git_reference_free(back);
    return fail("the index cannot be written");
  }
  out.moved = true;
  out.branch = branch;
  return out;
}

}  // namespace kai::team
