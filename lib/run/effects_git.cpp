// What a run's changes to .git mean (lib/run/effects.hpp git_meaning): refs
// created, moved and deleted, HEAD, the index, the stash, objects, rebase
// todo lists; and which of them a commit of the tree's own content made.

#include "lib/run/effects.hpp"

#include <algorithm>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <map>
#include <set>

#include <fmt/format.h>
#include <git2.h>

#include "lib/util/fs.hpp"
#include "lib/util/git.hpp"
#include "lib/util/git_tree.hpp"
#include "lib/util/strings.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_git = ".git/";

// The name at .git's top that `rel` (".git/…") lies under.
std::string_view git_top_of(std::string_view rel) {
  std::string_view r = rel.substr(k_git.size());
  return r.substr(0, r.find('/'));
}

bool git_state_top_name(std::string_view top) {
  static constexpr std::string_view exact[] = {"HEAD",       "ORIG_HEAD",      "FETCH_HEAD", "COMMIT_EDITMSG",
                                               "packed-refs", "index",         "refs",       "logs",
                                               "sequencer",  "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
                                               "AUTO_MERGE", "shallow",        "objects",    "lfs"};
  for (auto e : exact)
    if (top == e) return true;
  return top.starts_with("MERGE_") || top.starts_with("rebase-") || top.starts_with("BISECT_");
}

// A rebase's or sequencer's state, its todo list first: git takes the
// folder's presence for a rebase in progress and runs the list's exec
// lines when it continues, so the folder and all it holds are one effect.
bool is_todo_list(std::string_view rel) {
  for (std::string_view dir : {".git/rebase-merge", ".git/rebase-apply", ".git/sequencer"})
    if (rel == dir || (rel.starts_with(dir) && rel.size() > dir.size() && rel[dir.size()] == '/')) return true;
  return false;
}

bool has_exec_line(std::string_view text) {
  for (std::string_view line : split(text, "\n")) {
    line = trim(line);
    if (line.starts_with("exec ") || line.starts_with("x ") || line == "x" || line == "exec") return true;
  }
  return false;
}

// packed-refs: name → value.
std::map<std::string, std::string> parse_packed_refs(const std::optional<std::string>& text) {
  std::map<std::string, std::string> out;
  if (!text) return out;
  for (std::string_view line : split(*text, "\n")) {
    if (line.empty() || line.front() == '#' || line.front() == '^') continue;
    auto sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    out[std::string(line.substr(sp + 1))] = std::string(line.substr(0, sp));
  }
  return out;
}

std::string ref_text_value(const std::optional<std::string>& text) {
  if (!text) return {};
  return std::string(trim(*text, " \t\r\n"));
}

// The object database of the repository as the run leaves it: the live
// objects, and the folders of the objects the run added.
struct Odb {
  RepoPtr repo;
  bool ok = false;
};

Odb open_run_odb(const GitView& v) {
  Odb o;
  git_init_once();
  git_odb* odb = nullptr;
  if (git_odb_new(&odb) != 0) return o;
  OdbPtr own(odb);
  std::error_code ec;
  if (fs::is_directory(v.objects, ec) && git_odb_add_disk_alternate(odb, v.objects.c_str()) != 0) return o;
  for (const auto& extra : v.new_objects)
    if (fs::is_directory(extra, ec)) (void)git_odb_add_disk_alternate(odb, extra.c_str());
  git_repository* repo = nullptr;
  if (git_repository_wrap_odb(&repo, odb) != 0) return o;
  o.repo.reset(repo);
  o.ok = true;
  return o;
}

std::optional<git_oid> oid(const std::string& text) {
  git_oid id;
  if (text.size() < GIT_OID_HEXSZ || git_oid_fromstrn(&id, text.data(), GIT_OID_HEXSZ) != 0) return std::nullopt;
  return id;
}

// Everything git_meaning needs to judge refs: HEAD's commit before the
// run, the index as the run leaves it.
class ObjectJudge {
public:
  ObjectJudge(const GitView& v, const std::optional<std::string>& index_after) : m_view(v), m_odb(open_run_odb(v)) {
    if (!m_odb.ok || !index_after) return;
    std::error_code ec;
    fs::create_directories(v.scratch, ec);
    const fs::path copy = v.scratch / "index-after";
    if (!write_file_atomic(copy, *index_after, 0600)) return;
    git_index* idx = nullptr;
    if (git_index_open(&idx, copy.c_str()) == 0) m_index.reset(idx);
  }

  std::string subject(const std::string& value) const {
    auto id = oid(value);
    if (!id || !m_odb.ok) return {};
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, m_odb.repo.get(), &*id) != 0) return {};
    CommitPtr own(c);
    const char* s = git_commit_summary(c);
    return s ? std::string(s) : std::string();
  }

  // Whether `to` adds commits on `from` (or is it) and its tree is the index
  // as the run leaves it: what `git commit` of the tree's own content makes.
  bool commits_of_own_content(const std::string& from, const std::string& to) const {
    auto t = oid(to);
    if (!t || !m_odb.ok) return false;
    if (from == to) return true;
    if (auto f = oid(from)) {
      if (git_graph_descendant_of(m_odb.repo.get(), &*t, &*f) != 1) return false;
    } else if (!from.empty()) {
      return false;  // a symbolic or malformed old value: not a commit to build on
    }
    return tree_is_index(*t);
  }

private:
  bool tree_is_index(const git_oid& commit) const {
    if (!m_index) return false;
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, m_odb.repo.get(), &commit) != 0) return false;
    CommitPtr own(c);
    git_tree* tree = nullptr;
    if (git_commit_tree(&tree, c) != 0) return false;
    TreePtr own_tree(tree);
    git_diff* d = nullptr;
    if (git_diff_tree_to_index(&d, m_odb.repo.get(), tree, m_index.get(), nullptr) != 0) return false;
    DiffPtr own_d(d);
    return git_diff_num_deltas(d) == 0;
  }
  const GitView& m_view;
  Odb m_odb;
  IndexPtr m_index;
};

// Index entries (path → id, mode) of `bytes`, read through a copy.
std::map<std::string, std::pair<std::string, uint32_t>> index_entries_of(const GitView& v,
                                                                      const std::optional<std::string>& bytes,
                                                                      const std::string& name) {
  std::map<std::string, std::pair<std::string, uint32_t>> out;
  if (!bytes) return out;
  std::error_code ec;
  fs::create_directories(v.scratch, ec);
  const fs::path copy = v.scratch / name;
  if (!write_file_atomic(copy, *bytes, 0600)) return out;
  git_init_once();
  git_index* idx = nullptr;
  if (git_index_open(&idx, copy.c_str()) != 0) return out;
  IndexPtr own(idx);
  for (size_t i = 0, n = git_index_entrycount(idx); i < n; ++i) {
    const git_index_entry* e = git_index_get_byindex(idx, i);
    if (!e || git_index_entry_stage(e) != 0) continue;
    out[e->path] = {hex(e->id), e->mode};
  }
  fs::remove(copy, ec);
  return out;
}

void set_stricter_rule(Effect& e, std::string rule) {
  auto rank = [](const std::string& r) {
    EffectVerdict v = effect_rule(r).verdict;
    return v == EffectVerdict::never ? 2 : v == EffectVerdict::held ? 1 : 0;
  };
  if (e.rule.empty() || rank(rule) > rank(e.rule)) e.rule = std::move(rule);
}

}  // namespace

void git_meaning(Effects& fx, const GitView& view) {
  std::vector<Effect> added;
  std::set<std::string> loose_changed;
  bool packed_changed = false, head_changed = false, index_changed = false, stash_log_changed = false;
  Effect* packed_effect = nullptr;
  size_t objects_new = 0;
  for (Effect& e : fx.list) {
    if (!(e.path.starts_with(k_git) || e.path == ".git")) continue;
    if (e.path == ".git") {
      e.rule = "git-settings";
      continue;
    }
    const std::string_view top = git_top_of(e.path);
    const std::string_view name = std::string_view(e.path).substr(e.path.rfind('/') + 1);
    if (name.ends_with(".lock")) {
      e.rule = "git-lock";
      continue;
    }
    if (top == "modules") {
      e.rule = "nested";
      continue;
    }
    if (!git_state_top_name(top)) {
      e.rule = "git-settings";
      continue;
    }
    if (top == "objects") {
      const bool info = e.path.starts_with(".git/objects/info/");
      if (info && (name == "alternates" || name == "http-alternates")) {
        e.rule = "git-settings";
      } else if (!e.before.exists() && e.after.exists()) {
        if (e.after.type == NodeType::file) {
          e.kind = EffectKind::objects_added;
          ++objects_new;
        }
        e.rule = "objects";
      } else if (info) {
        e.rule = "git-state";  // a commit-graph or packs list written again
      } else {
        e.kind = EffectKind::object_changed;
        e.rule = "object";
      }
      continue;
    }
    if (is_todo_list(e.path)) {
      e.kind = EffectKind::git_file;
      e.rule = "rebase-todo";
      if (auto text = view.after ? view.after(e.path) : std::nullopt; text && has_exec_line(*text))
        e.detail = "exec lines";
      continue;
    }
    if (e.after.type == NodeType::dir || e.before.type == NodeType::dir) {
      e.rule = "git-state";
      continue;
    }
    e.kind = EffectKind::git_file;
    e.rule = "git-state";
    if (top == "refs" && e.path != ".git/refs/stash") loose_changed.insert(e.path.substr(k_git.size()));
    if (e.path == ".git/refs/stash") loose_changed.insert("refs/stash");
    if (e.path == ".git/packed-refs") {
      packed_changed = true;
      packed_effect = &e;
    }
    if (e.path == ".git/HEAD") head_changed = true;
    if (e.path == ".git/index") index_changed = true;
    if (e.path == ".git/logs/refs/stash") stash_log_changed = true;
  }
  if (loose_changed.empty() && !packed_changed && !head_changed && !index_changed && !stash_log_changed) {
    for (Effect& e : fx.list)
      if (e.kind == EffectKind::objects_added) e.detail = fmt::format("{} object{}", objects_new, objects_new == 1 ? "" : "s");
    return;
  }
  auto before = [&](const std::string& rel) { return view.before ? view.before(rel) : std::nullopt; };
  auto after = [&](const std::string& rel) { return view.after ? view.after(rel) : std::nullopt; };
  const std::optional<std::string> index_after = index_changed ? after(".git/index") : before(".git/index");
  ObjectJudge judge(view, index_after);
  // The effective value of a ref: its loose file, else packed-refs.
  const auto packed_before = parse_packed_refs(before(".git/packed-refs"));
  const auto packed_after = packed_changed ? parse_packed_refs(after(".git/packed-refs")) : packed_before;
  auto value = [&](const std::string& ref, bool is_after) {
    std::optional<std::string> loose = is_after && loose_changed.count(ref) ? after(".git/" + ref) : before(".git/" + ref);
    if (loose) return ref_text_value(loose);
    const auto& packed = is_after ? packed_after : packed_before;
    auto it = packed.find(ref);
    return it == packed.end() ? std::string() : it->second;
  };
  // HEAD's commit before the run.
  auto resolve = [&](const std::string& head, bool is_after) {
    std::string v = head;
    for (int depth = 0; depth < 5 && v.starts_with("ref: "); ++depth) v = value(v.substr(5), is_after);
    return v;
  };
  const std::string head_before = ref_text_value(before(".git/HEAD"));
  const std::string head_after = head_changed ? ref_text_value(after(".git/HEAD")) : head_before;
  const std::string commit_before = resolve(head_before, false);

  std::set<std::string> refs = loose_changed;
  for (const auto& [name, v] : packed_after)
    if (auto it = packed_before.find(name); it == packed_before.end() || it->second != v) refs.insert(name);
  for (const auto& [name, v] : packed_before)
    if (!packed_after.count(name)) refs.insert(name);
  for (const std::string& ref : refs) {
    const std::string was = value(ref, false), now = value(ref, true);
    if (was == now) continue;
    Effect r;
    r.path = loose_changed.count(ref) ? ".git/" + ref : ".git/packed-refs";
    r.ref = ref;
    r.before = was.empty() ? EntrySide{} : EntrySide{NodeType::ref, 0, "", was, 0};
    r.after = now.empty() ? EntrySide{} : EntrySide{NodeType::ref, 0, "", now, 0};
    r.kind = was.empty() ? EffectKind::ref_created : now.empty() ? EffectKind::ref_deleted : EffectKind::ref_moved;
    r.detail = now.empty() ? "" : judge.subject(now);
    if (ref == "refs/stash") {
      r.rule = now.empty() ? "stash" : "git-state";
      if (now.empty()) {
        r.kind = EffectKind::stash_dropped;
        r.detail = "the whole stash";
      }
    } else if (now.empty()) {
      r.rule = "ref";
    } else if (was.empty()) {
      r.rule = now == commit_before || judge.commits_of_own_content(commit_before, now) ? "commit" : "ref";
    } else {
      r.rule = judge.commits_of_own_content(was, now) ? "commit" : "ref";
    }
    // packed-refs carries this ref too: it lands only as this ref does.
    if (packed_effect && r.path != ".git/packed-refs" &&
        (packed_before.count(ref) != packed_after.count(ref) ||
         (packed_before.count(ref) && packed_before.at(ref) != packed_after.at(ref))))
      set_stricter_rule(*packed_effect, r.rule);
    added.push_back(std::move(r));
  }
  if (head_changed) {
    Effect h;
    h.kind = EffectKind::head_moved;
    h.path = ".git/HEAD";
    h.ref = "HEAD";
    h.before = EntrySide{NodeType::ref, 0, "", head_before, 0};
    h.after = EntrySide{NodeType::ref, 0, "", head_after, 0};
    const std::string commit_after = resolve(head_after, true);
    h.detail = judge.subject(commit_after);
    h.rule = commit_after == commit_before || judge.commits_of_own_content(commit_before, commit_after) ? "commit"
                                                                                                        : "ref";
    added.push_back(std::move(h));
  }
  if (stash_log_changed) {
    // A stash push appends to the stash's log; a drop takes a line out.
    const std::string was = before(".git/logs/refs/stash").value_or("");
    const std::string now = after(".git/logs/refs/stash").value_or("");
    std::vector<std::string_view> a = split(was, "\n"), b = split(now, "\n");
    std::erase(a, std::string_view{});
    std::erase(b, std::string_view{});
    size_t kept = 0;
    for (std::string_view line : a) kept += std::find(b.begin(), b.end(), line) != b.end();
    if (kept < a.size()) {
      Effect s;
      s.kind = EffectKind::stash_dropped;
      s.path = ".git/logs/refs/stash";
      s.ref = "refs/stash";
      s.detail = fmt::format("{} of {}", a.size() - kept, a.size());
      s.rule = "stash";
      added.push_back(std::move(s));
    }
  }
  if (index_changed) {
    Effect ix;
    ix.kind = EffectKind::index_changed;
    ix.path = ".git/index";
    const auto was = index_entries_of(view, before(".git/index"), "index-before");
    const auto now = index_entries_of(view, index_after, "index-check");
    std::vector<std::string> differ;
    size_t changed = 0;
    for (const auto& [path, entry] : now) {
      auto it = was.find(path);
      if (it != was.end() && it->second == entry) continue;
      ++changed;
      std::optional<EntrySide> file = view.file_after ? view.file_after(path) : std::nullopt;
      const bool exec = (entry.second & 0111) != 0;
      const bool link = entry.second == GIT_FILEMODE_LINK, gitlink = entry.second == GIT_FILEMODE_COMMIT;
      if (gitlink) continue;  // a submodule's commit: the nested row judges its changes
      const bool same = file && file->blob == entry.first &&
                        (link ? file->type == NodeType::link
                              : file->type == NodeType::file && ((file->mode & 0100) != 0) == exec);
      if (!same) differ.push_back(path);
    }
    size_t removed = 0;
    for (const auto& [path, entry] : was) removed += !now.count(path);
    if (!differ.empty()) {
      ix.rule = "index";
      ix.detail = fmt::format("{} entr{} differ from the files: {}{}", differ.size(), differ.size() == 1 ? "y" : "ies",
                              fmt::join(differ.begin(), differ.begin() + static_cast<long>(std::min<size_t>(differ.size(), 5)), ", "),
                              differ.size() > 5 ? ", …" : "");
    } else {
      ix.rule = "index-update";
      ix.detail = fmt::format("{} entr{} added or changed, {} removed", changed, changed == 1 ? "y" : "ies", removed);
    }
    added.push_back(std::move(ix));
  }
  for (Effect& e : fx.list)
    if (e.kind == EffectKind::objects_added) e.detail = fmt::format("{} object{}", objects_new, objects_new == 1 ? "" : "s");
  // The plain file effects of HEAD, the index, a loose ref and the stash's
  // log stay beside their meaning: they are what lands (or not), as strict
  // as the meaning (classify), and shown through it (shown_effects).
  for (Effect& a : added) fx.list.push_back(std::move(a));
  std::stable_sort(fx.list.begin(), fx.list.end(), [](const Effect& a, const Effect& b) { return a.path < b.path; });
}

std::string overlay_owner_problem(const std::filesystem::path& root, unsigned uid, unsigned gid) {
  auto foreign = [&](const struct stat& st) { return st.st_uid != uid || st.st_gid != gid; };
  auto said = [&](const std::string& rel) {
    return fmt::format("'{}' belongs to another user or group, which overlayfs in a user namespace cannot copy",
                       rel.empty() ? "." : rel);
  };
  struct stat st {};
  if (::lstat(root.c_str(), &st) != 0) return "the root cannot be read";
  if (foreign(st)) return said("");
  // The root's own entries, as the folder lists them.
  if (DIR* d = ::opendir(root.c_str())) {
    std::string found;
    while (dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(st.st_mode) && foreign(st)) {
        found = name;
        break;
      }
    }
    ::closedir(d);
    if (!found.empty()) return said(found);
  }
  // The tracked files, as git's index last saw them (no walk of the tree).
  const std::filesystem::path index = root / ".git" / "index";
  if (::lstat(index.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  auto entries = index_entries(root);  // read once for every question of the command
  if (!entries) return {};
  for (const auto& e : (*entries)->entries)
    if ((e.uid != uid || e.gid != gid) && (e.mode & 0170000) != 0120000) return said(e.path);
  return {};
}

}  // namespace kai
