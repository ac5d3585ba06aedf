// A run's effects through the gate: the run's folder, reading and judging
// what the command did, landing the plain effects, holding the sensitive
// ones, putting back what must not stay (lib/gate/run_effects.hpp).

#include "lib/gate/run_effects.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <git2.h>
#include <nlohmann/json.hpp>

#include "lib/config/policy.hpp"
#include "lib/gate/decide.hpp"
#include "lib/gate/txn.hpp"
#include "lib/paths/beneath.hpp"
#include "lib/paths/glob.hpp"
#include "lib/paths/paths.hpp"
#include "lib/run/hooks.hpp"
#include "lib/run/sandbox.hpp"
#include "lib/run/snapshot.hpp"
#include "lib/run/snapshot_watch.hpp"
#include "lib/util/fault.hpp"
#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/git.hpp"
#include "lib/util/git_tree.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai {
namespace fs = std::filesystem;
using json = nlohmann::json;

RunFolder RunFolder::of(const Workspace& ws, int id) {
  RunFolder f;
  f.dir = ws.store.dir() / "runs" / std::to_string(id);
  f.upper = f.dir / "upper";
  f.work = f.dir / "work";
  f.objects = f.dir / "objects";
  f.scratch = f.dir / "scratch";
  f.redirect = f.dir / "redirect";
  return f;
}

// The snapshots of the levels without an overlay.
struct RunUndo {
  SnapshotStore store;
  std::optional<Snapshot> before;
  std::string tag;  // the pending ref while the run is in flight
  std::unique_ptr<SnapshotWatch> watch;
  GitCapture git;
  std::map<std::string, unsigned> dirs;
};

EffectsRun::EffectsRun() = default;
EffectsRun::EffectsRun(EffectsRun&&) noexcept = default;
EffectsRun& EffectsRun::operator=(EffectsRun&&) noexcept = default;
EffectsRun::~EffectsRun() = default;
const Snapshot* EffectsRun::seen() const { return undo && undo->before ? &*undo->before : nullptr; }

namespace {

constexpr std::string_view k_git = ".git/";

int64_t change_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
}

// The owner's umask, which the files and folders a run creates get.
unsigned owner_umask() {
  auto status = read_file("/proc/self/status", 1 << 16);
  if (!status) return 022;
  for (std::string_view line : split(*status, "\n"))
    if (line.starts_with("Umask:"))
      return static_cast<unsigned>(std::strtoul(std::string(trim(line.substr(6))).c_str(), nullptr, 8));
  return 022;
}

bool rel_under(std::string_view rel, std::string_view dir) {
  return rel == dir || (rel.size() > dir.size() && rel.starts_with(dir) && rel[dir.size()] == '/');
}

// ----- what each path is -----------------------------------------------------

// git's index and ignore rules of the repository root lies in, opened once.
class GitLookup {
public:
  explicit GitLookup(const fs::path& root) {
    git_init_once();
    git_repository* repo = nullptr;
    if (git_repository_open_ext(&repo, root.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) return;
    m_repo.reset(repo);
    const char* wd = git_repository_workdir(repo);
    if (!wd) return;
    std::error_code ec;
    fs::path rel = fs::weakly_canonical(root, ec).lexically_relative(fs::weakly_canonical(wd, ec));
    m_prefix = rel == "." ? "" : rel.generic_string() + "/";
    // The index as this command read it already, when it did (one read a command).
    if (auto entries = index_entries(root)) m_index = std::move(*entries);
  }
  bool tracked(const std::string& rel) const { return m_index && m_index->tracked(m_prefix + rel); }
  bool ignored(const std::string& rel) const {
    if (!m_repo) return false;
    int ign = 0;
    return git_ignore_path_is_ignored(&ign, m_repo.get(), (m_prefix + rel).c_str()) == 0 && ign == 1;
  }

private:
  RepoPtr m_repo;
  std::shared_ptr<const IndexEntries> m_index;
  std::string m_prefix;
};

const char* const k_harness_names[] = {".mcp.json", ".claude", ".codex", ".gemini", ".cursor"};

EffectContext context_of(const Workspace& ws) {
  auto git = std::make_shared<GitLookup>(ws.root);
  std::vector<std::string> guarded;
  for (const auto& g : guarded_paths(ws)) {
    auto rel = g.lexically_relative(ws.root).generic_string();
    if (!rel.empty() && !rel.starts_with("..")) guarded.push_back(rel);
  }
  EffectContext c;
  c.never_rule = [&ws, guarded](const std::string& rel) -> std::string {
    for (const char* h : k_harness_names)
      if (rel_under(rel, h)) return "harness";
    for (const auto& g : guarded)
      if (rel_under(rel, g)) return "guarded";
    for (std::string_view part : split(rel, "/"))
      if (part.find(".bak-kaicoder-") != std::string_view::npos) return "guarded";
    if (is_secret_file(rel)) return "never-write";
    for (const std::string& pat : ws.guards.deny_write)
      if (glob_match(pat, rel)) return "never-write";
    return "";
  };
  c.confirm_reason = [&ws](const std::string& rel) -> std::string {
    std::string why;
    return path_tier(ws.cfg, rel, &why) == Tier::confirm ? why : std::string();
  };
  c.tracked = [git](const std::string& rel) { return git->tracked(rel); };
  c.ignored = [git](const std::string& rel) { return git->ignored(rel); };
  auto nested_dirs = std::make_shared<std::map<std::string, bool>>();
  c.nested = [root = ws.root, nested_dirs](const std::string& rel) {
    // Any folder on the way (not root) that holds a .git of its own.
    for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
      const std::string dir = rel.substr(0, slash);
      auto [it, fresh] = nested_dirs->emplace(dir, false);
      if (fresh) {
        struct stat st {};
        it->second = ::lstat((root / dir / ".git").c_str(), &st) == 0;
      }
      if (it->second) return true;
    }
    return false;
  };
  return c;
}

// The [run] direct trees that are used: existing folders at root's top,
// ignored by git, that no row makes sensitive.
std::vector<fs::path> direct_trees(const Workspace& ws, const EffectContext& ctx) {
  std::vector<fs::path> out;
  for (const std::string& name : ws.cfg.direct) {
    struct stat st {};
    if (::lstat((ws.root / name).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (!ctx.ignored(name) && !ctx.ignored(name + "/")) continue;
    if (!ctx.never_rule(name).empty() || !ctx.confirm_reason(name).empty() || is_instruction_file(name)) continue;
    out.push_back(ws.root / name);
  }
  return out;
}

// ----- kept in the proposal --------------------------------------------------

fs::path effects_file(const Workspace& ws, int id) { return ws.store.folder(id) / "effects.json"; }
fs::path diff_file(const Workspace& ws, int id) { return ws.store.folder(id) / "effects.diff"; }

Status keep_effects(Workspace& ws, Proposal& p, const Effects& fx, const std::string& diff) {
  const std::string text = to_json(fx).dump(1) + "\n";
  KAI_TRY(write_file_atomic(effects_file(ws, p.id), text, 0600));
  KAI_TRY(write_file_atomic(diff_file(ws, p.id), diff, 0600));
  p.effects_digest = blob_id(text + "\n--\n" + diff);
  return ok_status();
}

}  // namespace

Result<KeptEffects> kept_effects(const Workspace& ws, const Proposal& p) {
  if (p.effects_digest.empty()) return make_error(Errc::not_found, fmt::format("proposal {} keeps no effects", p.id));
  auto text = read_owned(effects_file(ws, p.id));
  if (!text) return text.error();
  auto diff = read_owned(diff_file(ws, p.id));
  const std::string d = diff ? *diff : std::string();
  const std::string digest = blob_id(*text + "\n--\n" + d);
  if (digest != p.effects_digest)
    return make_error(
        Errc::conflict, fmt::format("the effects kept with proposal {} were changed", p.id),
        "they are no longer what kaicoder recorded; reject them: kaicoder reject " + std::to_string(p.id));
  json j = json::parse(*text, nullptr, false);
  auto fx = effects_from_json(j);
  if (!fx) return fx.error();
  return KeptEffects{std::move(*fx), d, digest};
}

// ----- telling them ----------------------------------------------------------

std::vector<std::string> effect_lines(const Effects& fx) {
  std::vector<std::string> out;
  for (const Effect* e : shown_effects(fx)) {
    std::string line = describe(*e);
    if (e->conflict)
      line += " (CONFLICT: changed in the tree while the run went on; not applied)";
    else if (e->verdict == EffectVerdict::held)
      line += fmt::format(" (HELD: {})", effect_rule(e->rule).text);
    else if (e->verdict == EffectVerdict::never)
      line += fmt::format(" (NEVER: {}; dropped)", effect_rule(e->rule).text);
    out.push_back(std::move(line));
  }
  return out;
}

std::string effects_diff(const Effects& fx, const std::function<std::optional<std::string>(const Effect&)>& before,
                         const std::function<std::optional<std::string>(const Effect&)>& after,
                         const DiffOptions& opts) {
  constexpr uint64_t k_max_shown = 1 << 20;
  std::string text;
  size_t budget = opts.max_changed_lines;
  for (const Effect& e : fx.list) {
    const bool file = e.kind == EffectKind::file_created || e.kind == EffectKind::file_changed ||
                      e.kind == EffectKind::file_deleted || (e.rule == "rebase-todo" && e.after.type == NodeType::file);
    if (!file) continue;
    if (e.path.starts_with(k_git) && e.rule != "rebase-todo") continue;
    if (is_secret_file(e.path)) {
      text += fmt::format("diff --git a/{0} b/{0}\n[a secret file: not shown]\n", e.path);
      continue;
    }
    if (e.before.size > k_max_shown || e.after.size > k_max_shown) {
      text += fmt::format("diff --git a/{0} b/{0}\n[too large to show: {1} bytes]\n", e.path,
                          std::max(e.before.size, e.after.size));
      continue;
    }
    if (budget == 0 && !opts.full) {
      text += fmt::format("diff --git a/{0} b/{0}\n[not shown: past the display limit]\n", e.path);
      continue;
    }
    std::optional<std::string> b = e.before.type == NodeType::file ? before(e) : std::nullopt;
    std::optional<std::string> a = e.after.type == NodeType::file ? after(e) : std::nullopt;
    DiffOptions o = opts;
    o.max_changed_lines = std::max<size_t>(budget, 1);
    std::optional<std::string_view> bv, av;
    if (b) bv = *b;
    if (a) av = *a;
    auto d = diff_buffers(e.path, bv, av, e.after.exists() ? e.after.mode & 0777 : e.before.mode & 0777, o);
    if (!d) continue;
    text += d->text;
    if (d->truncated) text += "[this file's diff was cut for display]\n";
    budget -= std::min(budget, d->truncated ? d->shown_changed : d->added + d->removed);
  }
  return text;
}

namespace {

// ----- landing ---------------------------------------------------------------

// One path a landing changes: from `before` to `after`, ending with `mode`.
struct LandOp {
  std::string path;
  EntrySide before, after;
  unsigned mode = 0;
};

json op_side_json(const EntrySide& s) {
  return {{"type", to_string(s.type)}, {"mode", s.mode}, {"blob", s.blob}, {"text", s.text}, {"size", s.size}};
}
EntrySide op_side_from(const json& j) {
  EntrySide s;
  const std::string t = j.value("type", "none");
  for (NodeType x : {NodeType::none, NodeType::file, NodeType::dir, NodeType::link, NodeType::fifo, NodeType::socket,
                     NodeType::device, NodeType::ref})
    if (to_string(x) == t) s.type = x;
  s.mode = j.value("mode", 0u);
  s.blob = j.value("blob", "");
  s.text = j.value("text", "");
  s.size = j.value("size", uint64_t{0});
  return s;
}

json entry_json(const Entry& e) {
  return {{"time", e.time},     {"kind", e.kind},        {"rollback_id", e.rollback_id},
          {"files", e.files},   {"action", e.action},    {"summary", e.summary},
          {"why", e.why},       {"backup", e.backup},    {"approver", e.approver},
          {"result", e.result}, {"rollback", e.rollback}};
}
Entry entry_from(const json& j) {
  Entry e;
  e.time = j.value("time", "");
  e.kind = j.value("kind", "");
  e.rollback_id = j.value("rollback_id", "");
  e.files = j.value("files", std::vector<std::string>{});
  e.action = j.value("action", "");
  e.summary = j.value("summary", "");
  e.why = j.value("why", "");
  e.backup = j.value("backup", "");
  e.approver = j.value("approver", "");
  e.result = j.value("result", "");
  e.rollback = j.value("rollback", "");
  return e;
}

// A landing: its ops, then the record, the entry and the proposal's state
// that finish it; sealed while it is under way.
struct Landing {
  std::string id;  // rollback id; empty: nothing to roll back (snapshots off)
  int proposal = 0;
  std::vector<LandOp> ops;
  Entry entry;
  State state = State::applied;
  std::string held_since;
  std::string result;
  bool drop_folder = true;  // the run's folder goes once it landed
};

json landing_json(const Landing& l) {
  json ops = json::array();
  for (const LandOp& o : l.ops)
    ops.push_back(
        {{"path", o.path}, {"before", op_side_json(o.before)}, {"after", op_side_json(o.after)}, {"mode", o.mode}});
  return {{"id", l.id},
          {"proposal", l.proposal},
          {"ops", ops},
          {"entry", entry_json(l.entry)},
          {"state", to_string(l.state)},
          {"held_since", l.held_since},
          {"result", l.result},
          {"drop_folder", l.drop_folder}};
}

std::optional<Landing> landing_from(const json& j) {
  if (!j.is_object()) return std::nullopt;
  Landing l;
  l.id = j.value("id", "");
  l.proposal = j.value("proposal", 0);
  for (const json& o : j.value("ops", json::array()))
    l.ops.push_back({o.value("path", ""), op_side_from(o.value("before", json::object())),
                     op_side_from(o.value("after", json::object())), o.value("mode", 0u)});
  l.entry = entry_from(j.value("entry", json::object()));
  l.state = parse_state(j.value("state", "applied")).value_or(State::applied);
  l.held_since = j.value("held_since", "");
  l.result = j.value("result", "");
  l.drop_folder = j.value("drop_folder", true);
  if (l.proposal <= 0) return std::nullopt;
  return l;
}

fs::path landing_path(const RunFolder& f) { return f.dir / "landing.json"; }

FileSide journal_side(const EntrySide& s, unsigned mode) {
  switch (s.type) {
    case NodeType::none: return {};
    case NodeType::dir: return {true, "", k_mode_dir | (mode & 07777)};
    case NodeType::link: return {true, s.blob, k_mode_link};
    case NodeType::fifo: return {true, "", k_mode_fifo};
    case NodeType::socket: return {true, "", k_mode_socket};
    default: return {true, s.blob, mode & 07777};
  }
}

// The state of `rel` in the live tree now, as an EntrySide (files hashed).
std::optional<EntrySide> live_side(const fs::path& base, const std::string& rel) {
  auto d = open_parent(base, rel, CreateDirs::no);
  if (!d) {
    // A missing folder on the way: nothing there (a folder the landing makes first).
    if (d.error().code == Errc::conflict) return EntrySide{};
    return std::nullopt;
  }
  const std::string name = rel.substr(rel.rfind('/') + 1);
  struct stat st {};
  if (::fstatat(d->fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return EntrySide{};
  EntrySide s;
  s.mode = st.st_mode & 07777;
  if (S_ISREG(st.st_mode)) {
    s.type = NodeType::file;
    s.size = static_cast<uint64_t>(st.st_size);
    // Hashed as a stream: a run may leave a file of any size.
    s.blob = blob_at_fd(d->fd(), name);
    if (s.blob.empty()) return std::nullopt;
  } else if (S_ISDIR(st.st_mode)) {
    s.type = NodeType::dir;
  } else if (S_ISLNK(st.st_mode)) {
    s.type = NodeType::link;
    std::string buf(4096, '\0');
    ssize_t n = ::readlinkat(d->fd(), name.c_str(), buf.data(), buf.size());
    if (n < 0) return std::nullopt;
    buf.resize(static_cast<size_t>(n));
    s.text = buf;
    s.blob = blob_id(buf);
  } else if (S_ISFIFO(st.st_mode)) {
    s.type = NodeType::fifo;
  } else if (S_ISSOCK(st.st_mode)) {
    s.type = NodeType::socket;
  } else {
    s.type = NodeType::device;
  }
  return s;
}

bool same_side(const EntrySide& a, const EntrySide& b, bool with_mode) {
  if (a.type != b.type) return false;
  if (a.type == NodeType::none) return true;
  if ((a.type == NodeType::file || a.type == NodeType::link) && a.blob != b.blob) return false;
  return !with_mode || (a.mode & 07777) == (b.mode & 07777);
}

std::string leaf_of(const std::string& rel) { return rel.substr(rel.rfind('/') + 1); }

// Order of the steps: removals deepest first, folders made shallowest
// first, then files, links and the rest, then modes (folders deepest first).
int stage_of(const LandOp& o) {
  if (!o.after.exists()) return o.before.type == NodeType::dir ? 1 : 0;
  if (o.after.type == NodeType::dir && o.before.type != NodeType::dir) return 2;
  if (o.after.type == NodeType::dir) return 4;  // a folder's mode
  return 3;
}

void order_ops(std::vector<LandOp>& ops) {
  std::stable_sort(ops.begin(), ops.end(), [](const LandOp& a, const LandOp& b) {
    const int sa = stage_of(a), sb = stage_of(b);
    if (sa != sb) return sa < sb;
    const bool deep_first = sa == 0 || sa == 1 || sa == 4;
    return deep_first ? a.path > b.path : a.path < b.path;
  });
}

// One step, done once: nothing happens when `rel` already is what it
// lands as. Returns why it could not be done, empty when it was (or had been).
std::string perform(const Workspace& ws, const RunFolder& f, const LandOp& o) {
  auto live = live_side(ws.root, o.path);
  if (!live) return "its folder is gone";
  EntrySide landed = o.after;
  landed.mode = o.mode;
  if (same_side(*live, landed, o.after.type != NodeType::link)) return {};
  const bool at_before = same_side(*live, o.before, o.before.type == NodeType::dir && o.after.type == NodeType::dir);
  auto dir = open_parent(ws.root, o.path, CreateDirs::no);
  if (!dir) return "its folder is gone";
  const std::string name = leaf_of(o.path);
  if (!o.after.exists()) {
    if (!live->exists()) return {};
    if (!at_before) return "it changed in the tree";
    int flags = live->type == NodeType::dir ? AT_REMOVEDIR : 0;
    if (::unlinkat(dir->fd(), name.c_str(), flags) != 0 && errno != ENOENT)
      return errno == ENOTEMPTY ? "the folder is not empty" : errno_text(errno);
    return {};
  }
  if (o.after.type == NodeType::dir) {
    if (live->type == NodeType::dir) {
      if (::fchmodat(dir->fd(), name.c_str(), o.mode & 07777, 0) != 0) return errno_text(errno);
      return {};
    }
    if (live->exists() && !(at_before && o.before.exists())) return "something else is there now";
    if (live->exists() && ::unlinkat(dir->fd(), name.c_str(), 0) != 0 && errno != ENOENT) return errno_text(errno);
    if (::mkdirat(dir->fd(), name.c_str(), 0700) != 0 && errno != EEXIST) return errno_text(errno);
    if (::fchmodat(dir->fd(), name.c_str(), o.mode & 07777, 0) != 0) return errno_text(errno);
    return {};
  }
  // A mode only.
  if (o.before.type == o.after.type && o.before.exists() && same_side(*live, o.after, false) &&
      o.after.type == NodeType::file) {
    if (::fchmodat(dir->fd(), name.c_str(), o.mode & 07777, 0) != 0) return errno_text(errno);
    return {};
  }
  if (!at_before) return "it changed in the tree";
  // Another kind of entry than the one there: the old one goes first (a
  // folder is empty by now: its entries' removals came before).
  if (live->exists() && o.before.exists() && o.before.type != o.after.type) {
    int flags = live->type == NodeType::dir ? AT_REMOVEDIR : 0;
    if (::unlinkat(dir->fd(), name.c_str(), flags) != 0 && errno != ENOENT)
      return errno == ENOTEMPTY ? "the folder is not empty" : errno_text(errno);
  }
  // Everything else comes from the upper folder, checked to be what was recorded.
  auto src_dir = open_parent(f.upper, o.path, CreateDirs::no);
  if (!src_dir) return "its new state is gone from the run's folder";
  auto src = live_side(f.upper, o.path);
  if (!src || !same_side(*src, o.after, false)) return "its new state in the run's folder is not what was recorded";
  const bool object = o.path.starts_with(".git/objects/");
  if (object) {
    // Never over an existing object.
    if (::linkat(src_dir->fd(), name.c_str(), dir->fd(), name.c_str(), 0) != 0 && errno != EEXIST)
      return errno_text(errno);
    (void)::unlinkat(src_dir->fd(), name.c_str(), 0);
    return {};
  }
  if (::renameat(src_dir->fd(), name.c_str(), dir->fd(), name.c_str()) != 0) return errno_text(errno);
  if (o.after.type == NodeType::file && ::fchmodat(dir->fd(), name.c_str(), o.mode & 07777, 0) != 0)
    return errno_text(errno);
  return {};
}

Status write_landing(Workspace& ws, const RunFolder& f, const Landing& l) {
  json j = landing_json(l);
  auto mac = ws.sealer.seal("landing", std::to_string(l.proposal), j.dump());
  if (!mac) return mac.error();
  j["seal"] = *mac;
  return write_file_atomic(landing_path(f), j.dump(1) + "\n", 0600);
}

Result<Landing> read_landing(Workspace& ws, const RunFolder& f, int id) {
  auto text = read_owned(landing_path(f));
  if (!text) return text.error();
  json j = json::parse(*text, nullptr, false);
  std::string mac = j.is_object() && j.contains("seal") && j["seal"].is_string() ? j["seal"].get<std::string>() : "";
  if (j.is_object()) j.erase("seal");
  auto l = landing_from(j);
  if (!l || l->proposal != id) return make_error(Errc::io, "not a well-formed landing");
  SealCheck v = ws.sealer.check("landing", std::to_string(id), j.dump(), mac);
  if (v != SealCheck::ok) return seal_error(ws.sealer, v, "the landing of run " + std::to_string(id), "");
  for (const LandOp& o : l->ops) {
    auto rp = resolve(ws.root, ws.root, o.path);
    if (!rp || rp->rel != o.path) return make_error(Errc::denied, fmt::format("it names '{}'", o.path));
  }
  return std::move(*l);
}

// Whether a rollback may put `rel` back: kaicoder may write it (a build
// tree, .git or a guarded path is changed only by the run itself).
bool restorable(const Workspace& ws, const std::string& rel, bool dir) {
  const std::string probe = dir ? (rel.empty() ? "x" : rel + "/x") : rel;
  return check_write(ws.guards, RootPath{probe, ws.root / probe}).ok();
}

// The record, the entry and the state once every step is done. Idempotent.
Status finish_landing(Workspace& ws, const RunFolder& f, Landing& l, const std::vector<LandOp>& done) {
  if (!l.id.empty() && !done.empty() && !ws.journal.has(l.id)) {
    Record rec;
    rec.id = l.id;
    rec.kind = "run";
    rec.time = l.entry.time;
    rec.proposal = l.proposal;
    for (const LandOp& o : done) {
      if (!restorable(ws, o.path, o.after.type == NodeType::dir || o.before.type == NodeType::dir)) continue;
      FileChange c;
      c.rel = o.path;
      c.before = journal_side(o.before, o.before.mode);
      c.after = journal_side(o.after, o.mode);
      // A folder made: as rollback knows it (removed when empty).
      if (o.after.type == NodeType::dir && o.before.type != NodeType::dir) c.after = {true, "", k_mode_dir};
      rec.files.push_back(std::move(c));
    }
    if (!rec.files.empty()) KAI_TRY(ws.journal.write(rec));
  }
  fault_point("after-journal");
  auto logged = l.entry.rollback_id.empty() ? Result<bool>(false) : ws.changelog.live_contains(l.entry.rollback_id);
  if (!logged) return logged.error();
  if (!*logged) KAI_TRY(ws.changelog.prepend(l.entry));
  fault_point("after-changelog");
  auto p = ws.store.load(l.proposal);
  if (p && p->sealed == SealCheck::ok) {
    p->state = l.state;
    p->held_since = l.held_since;
    if (!l.result.empty()) p->result = l.result;
    if (!l.entry.rollback_id.empty() && p->rollback_id.empty()) p->rollback_id = l.entry.rollback_id;
    KAI_TRY(ws.store.save(*p));
  }
  std::error_code ec;
  fs::remove(landing_path(f), ec);
  if (l.drop_folder) fs::remove_all(f.dir, ec);
  return ok_status();
}

// Lands `l.ops` (from `f`'s upper folder): checks each against the live
// tree (a path not at its before state is a conflict: left, named in
// `conflicts`), keeps the bytes each replaces, then the sealed intent, the
// steps, one sync, and finish_landing.
Status land(Workspace& ws, const RunFolder& f, Landing& l, std::vector<std::string>& conflicts, bool keep_bytes) {
  std::vector<LandOp> ok;
  std::vector<std::string> replaced;        // link texts
  std::vector<std::string> replaced_files;  // regular files (root-relative), kept as streams
  std::vector<std::string> replaced_ids;
  for (LandOp& o : l.ops) {
    auto live = live_side(ws.root, o.path);
    const bool dir_mode = o.before.type == NodeType::dir && o.after.type == NodeType::dir;
    // An object already there is the same object: nothing to do.
    if (o.path.starts_with(".git/objects/") && live && live->type == o.after.type) continue;
    if (!live || !same_side(*live, o.before, dir_mode)) {
      conflicts.push_back(o.path);
      continue;
    }
    if (keep_bytes && (live->type == NodeType::file || live->type == NodeType::link)) {
      auto d = open_parent(ws.root, o.path, CreateDirs::no);
      if (!d) {
        conflicts.push_back(o.path);
        continue;
      }
      if (live->type == NodeType::link) {
        replaced.push_back(live->text);
      } else {
        Fd fd(::openat(d->fd(), leaf_of(o.path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        auto id = fd.get() >= 0 ? blob_id_of_fd(fd.get()) : Result<std::string>(make_error(Errc::io, "gone"));
        if (!id || *id != o.before.blob) {
          conflicts.push_back(o.path);
          continue;
        }
        replaced_files.push_back(o.path);
        replaced_ids.push_back(std::move(*id));
      }
    }
    ok.push_back(o);
  }
  l.ops = std::move(ok);
  order_ops(l.ops);
  if (keep_bytes && !l.id.empty() && !l.ops.empty()) {
    auto kept = snapshots_of(ws).keep_blobs(l.id, replaced, replaced_files, ws.cfg.snapshots_keep);
    if (!kept) return kept.error();
    // A file that changed between its check and its keeping is not the one
    // compared: nothing lands.
    if (*kept != replaced_ids)
      return make_error(Errc::conflict, "a file the run replaces changed while its bytes were being kept",
                        "look at what else writes the tree, then approve the run's effects again");
  }
  KAI_TRY(write_landing(ws, f, l));
  fault_point("after-landing-intent");
  // As every transaction (lib/gate/txn execute): the room for the records
  // written after the tree is taken before the tree is touched. The new
  // bytes are in the run's folder already and the replaced ones kept, so
  // the steps below are renames, unlinks and modes: no new space. Without
  // the room nothing lands, and nothing changed.
  {
    txn::Txn t;
    t.rec.id = l.id;
    t.rec.kind = "run";
    t.rec.files.resize(l.ops.size());
    t.entry = l.entry;
    t.proposal = l.proposal;
    std::error_code ec;
    const auto intent = fs::file_size(landing_path(f), ec);
    if (auto r = txn::reserve_room(ws, t, ec ? 0 : intent); !r) {
      fs::remove(landing_path(f), ec);
      return make_error(r.error().code, fmt::format("{}: nothing of the run landed", r.error().message),
                        r.error().hint);
    }
  }
  std::vector<LandOp> done;
  for (const LandOp& o : l.ops) {
    std::string why = perform(ws, f, o);
    if (why.empty())
      done.push_back(o);
    else
      conflicts.push_back(fmt::format("{} ({})", o.path, why));
  }
  if (auto s = sync_file_system(ws.root); !s) {
    txn::release_room(ws);
    return s;
  }
  txn::release_room(ws);
  return finish_landing(ws, f, l, done);
}

// ----- the levels without an overlay: putting back what must not stay -----------

// Moves the entry at `rel` in the live tree into the upper folder (held).
Status keep_aside(const Workspace& ws, const RunFolder& f, const std::string& rel) {
  KAI_TRY(make_dirs((f.upper / rel).parent_path(), 0700));
  if (::rename((ws.root / rel).c_str(), (f.upper / rel).c_str()) != 0)
    return make_error(Errc::io, fmt::format("cannot keep '{}' aside: {}", rel, errno_text(errno)));
  return ok_status();
}

Status copy_aside(const RunFolder& f, const std::string& rel, const std::string& bytes, unsigned mode) {
  KAI_TRY(make_dirs((f.upper / rel).parent_path(), 0700));
  return write_file_atomic(f.upper / rel, bytes, static_cast<mode_t>(mode & 0777));
}

}  // namespace

// ----- the start -------------------------------------------------------------

namespace {

// A snapshot is long work on a big tree: whoever watches the workspace sees it.
Result<Snapshot> take_snapshot(const Workspace& ws, const SnapshotStore& store, std::string_view what,
                               SnapshotWatch* watch) {
  auto s = store.take(
      [&](size_t done) {
        if (ws.progress) ws.progress(what, done, 0);
      },
      watch);
  if (ws.progress) ws.progress("", 0, 0);
  return s;
}

// What the snapshot before a run leaves for a later command that records
// the run as interrupted: its tree, folders and set-id files, the folders'
// modes; .git's files are copied beside it.
Status persist_before(const RunFolder& f, const RunUndo& u) {
  json dirs = json::object();
  for (const auto& [rel, mode] : u.dirs) dirs[rel] = mode;
  json setid = json::object();
  for (const auto& [rel, mode] : u.before->setid) setid[rel] = mode;
  json j = {{"tree", u.before->tree}, {"git", u.before->git}, {"dirs", dirs}, {"setid", setid}};
  json objects = json::object();
  for (const auto& [rel, stamp] : u.git.objects) objects[rel] = stamp;
  j["objects"] = objects;
  KAI_TRY(write_file_atomic(f.dir / "before.json", j.dump() + "\n", 0600));
  for (const auto& [rel, bytes] : u.git.files) {
    const fs::path to = f.dir / "git-before" / rel;
    KAI_TRY(make_dirs(to.parent_path(), 0700));
    KAI_TRY(write_file_atomic(to, bytes, 0600));
  }
  return ok_status();
}

// The snapshot before an interrupted run, as persist_before left it.
std::unique_ptr<RunUndo> restore_before(const Workspace& ws, const RunFolder& f, int id) {
  auto text = read_file(f.dir / "before.json");
  if (!text) return nullptr;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object()) return nullptr;
  auto u = std::make_unique<RunUndo>(RunUndo{snapshots_of(ws), Snapshot{}, std::to_string(id), nullptr, {}, {}});
  u->before->tree = j.value("tree", "");
  u->before->git = j.value("git", false);
  // Each object named before it is iterated: items() of a temporary would
  // outlive it (the loop keeps the proxy, not the value it points into).
  const json dirs = j.value("dirs", json::object()), setid = j.value("setid", json::object()),
             objects = j.value("objects", json::object());
  for (const auto& [rel, mode] : dirs.items()) {
    u->dirs[rel] = mode.get<unsigned>();
    if (!rel.empty()) u->before->dirs.insert(rel);
  }
  for (const auto& [rel, mode] : setid.items()) u->before->setid[rel] = mode.get<unsigned>();
  for (const auto& [rel, stamp] : objects.items()) u->git.objects[rel] = stamp.get<std::string>();
  std::error_code ec;
  const fs::path git = f.dir / "git-before";
  for (auto it = fs::recursive_directory_iterator(git, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec))
      if (auto bytes = read_file(it->path()))
        u->git.files[it->path().lexically_relative(git).generic_string()] = *bytes;
  return u;
}

}  // namespace

OverlayStatus overlay_for_runs(const Workspace& ws) {
  OverlayStatus o = overlay_status(ws.store.dir() / "runs");
  if (o.ok) {
    std::string owners = overlay_owner_problem(ws.root, ::geteuid(), ::getegid());
    if (!owners.empty()) o = OverlayStatus{false, owners};
  }
  return o;
}

bool effects_from_overlay(const Workspace& ws) {
  return sandbox_mode(ws.cfg.sandbox) == SandboxMode::full && ws.cfg.overlay && overlay_for_runs(ws).ok;
}

std::vector<std::string> unrestorable_names(const Workspace& ws) {
  std::vector<std::string> out;
  if (auto tracked = tracked_paths(ws.root))
    for (const auto& rel : *tracked)
      if (!check_name(ws.guards, rel)) out.push_back(rel);
  return out;
}

Status run_restorable(const Workspace& ws, const std::vector<std::string>* known) {
  if (ws.cfg.snapshots_keep <= 0 || effects_from_overlay(ws)) return ok_status();
  const std::vector<std::string> names = known ? *known : unrestorable_names(ws);
  if (names.empty()) return ok_status();
  std::vector<std::string> shown;
  for (size_t i = 0; i < names.size() && i < 5; ++i) shown.push_back(make_visible(names[i], Allow::nothing));
  const bool one = names.size() == 1;
  const std::string level = sandbox_mode(ws.cfg.sandbox) != SandboxMode::full
                                ? fmt::format("'{}' sandbox level", ws.cfg.sandbox)
                            : !ws.cfg.overlay ? std::string("full level with [run] overlay = false")
                                              : fmt::format("full level without an overlay ({})", overlay_for_runs(ws).detail);
  return make_error(
      Errc::denied,
      fmt::format("not run: at the {} a run's effects are read from snapshots, and {} tracked file{} here {} "
                  "a name kaicoder may not write (not UTF-8, hidden or shell characters): if the run removed or "
                  "changed {}, it could be neither held for you nor put back: {}{}",
                  level, names.size(), one ? "" : "s", one ? "has" : "have",
                  one ? "it" : "them", fmt::join(shown, ", "), names.size() > shown.size() ? ", ..." : ""),
      "rename the file with git mv to a plain name, or run at the full level where the kernel allows an overlay "
      "([run] sandbox = \"full\", overlay = true in kaicoder.toml)");
}

Result<EffectsRun> start_effects(Workspace& ws, const Proposal& p, SandboxMode mode) {
  EffectsRun r;
  r.id = p.id;
  r.folder = RunFolder::of(ws, p.id);
  const RunFolder& f = r.folder;
  KAI_TRY(make_dirs(ws.store.dir() / "runs", 0700));
  std::error_code ec;
  fs::remove_all(f.dir, ec);  // a claim happens once: nothing there belongs to a run
  if (::mkdir(f.dir.c_str(), 0700) != 0)
    return make_error(Errc::io,
                      fmt::format("cannot make the run's folder '{}': {}", f.dir.string(), errno_text(errno)));
  auto alive = FileLock::acquire(f.dir / "alive");
  if (!alive) return alive.error();
  r.alive = std::move(*alive);
  KAI_TRY(write_file_exclusive(f.dir / "started", iso_utc(ws.clock->now()) + "\n", 0600));
  struct stat st {};
  if (::lstat((f.dir / "started").c_str(), &st) != 0)
    return make_error(Errc::io, fmt::format("cannot read '{}': {}", (f.dir / "started").string(), errno_text(errno)));
  r.start_ns = change_ns(st);
  if (mode == SandboxMode::full && ws.cfg.overlay) {
    OverlayStatus o = overlay_for_runs(ws);
    struct stat rs {};
    if (o.ok && ::stat(ws.root.c_str(), &rs) == 0) {
      // The upper folder is what the run sees as root: the root's mode.
      if (::mkdir(f.upper.c_str(), 0700) != 0 || ::chmod(f.upper.c_str(), rs.st_mode & 07777) != 0 ||
          ::mkdir(f.work.c_str(), 0700) != 0)
        return make_error(Errc::io, fmt::format("cannot make the run's overlay folders: {}", errno_text(errno)));
      r.way = EffectsWay::overlay;
      r.plan.upper = f.upper;
      r.plan.work = f.work;
      if (o.redirect) {
        KAI_TRY(write_file_exclusive(f.redirect, "trusted\n", 0600));
        r.plan.redirect = true;
      }
      r.plan.direct = direct_trees(ws, context_of(ws));
      return r;
    }
    r.note = fmt::format("no overlay: {}", o.detail);
  }
  r.way = EffectsWay::snapshots;
  auto u = std::make_unique<RunUndo>(RunUndo{snapshots_of(ws), std::nullopt, std::to_string(p.id), nullptr, {}, {}});
  if (ws.cfg.snapshots_keep <= 0) {
    r.way = EffectsWay::none;
    r.undo = std::move(u);
    return r;
  }
  // The names the secret-file scan just read spare the first snapshot a
  // second reading of every folder that has not changed since.
  if (ws.listed) u->store.seed(*ws.listed);
  // A pending ref whose run has finished (or failed) was left behind by an
  // error path; only a proposal still approved can be in flight. A run whose
  // process died mid-command stays approved, and so keeps its ref.
  if (auto tags = u->store.pending())
    for (const auto& tag : *tags) {
      auto q = ws.store.load(std::atoi(tag.c_str()), Store::Payloads::none);
      if (!q || q->state != State::approved) (void)u->store.release(tag);
    }
  // Not under sandbox "none": a run left unconfined could write where no
  // file system event is made (a raw block device).
  if (mode != SandboxMode::none) u->watch = SnapshotWatch::start(ws.root);
  auto s = take_snapshot(ws, u->store, "snapshotting the tree before the run", u->watch.get());
  Status held = s ? u->store.hold(*s, u->tag) : Status(s.error());
  if (held) {
    u->before = *s;
    std::vector<std::string> dirs(s->dirs.begin(), s->dirs.end());
    u->dirs = folder_modes(ws.root, dirs);
    u->git = capture_git(ws.root);
    // At the full level .git/objects is read-only to the run.
    if (mode == SandboxMode::full) {
      u->git.objects.clear();
      if (::mkdir(f.objects.c_str(), 0700) == 0) r.plan.objects = f.objects;
    }
    (void)persist_before(f, *u);
  } else {
    r.note = fmt::format("no snapshot: {}", ws.redact(held.error().message));
  }
  r.undo = std::move(u);
  return r;
}

// ----- the end -----------------------------------------------------------------

namespace {

bool lands_by_path(EffectKind k) {
  switch (k) {
    case EffectKind::ref_created:
    case EffectKind::ref_moved:
    case EffectKind::ref_deleted:
    case EffectKind::head_moved:
    case EffectKind::index_changed:
    case EffectKind::stash_dropped: return false;
    default: return true;
  }
}

// The mode an entry lands with: what the run made, and for what it created
// the owner's umask on top (never a special bit).
unsigned landing_mode(const Effect& e, unsigned umask) {
  if (!e.before.exists() || e.before.type != e.after.type) return e.after.mode & 0777 & ~umask;
  return e.after.mode & 07777;
}

// One op per path of `fx` whose effects pass `want`, none of them a conflict.
std::vector<LandOp> ops_of(const Effects& fx, unsigned umask, const std::function<bool(const Effect&)>& want) {
  std::set<std::string> conflicted;
  for (const Effect& e : fx.list)
    if (e.conflict) conflicted.insert(e.path);
  std::vector<LandOp> out;
  std::map<std::string, size_t> at;
  for (const Effect& e : fx.list) {
    if (!lands_by_path(e.kind) || conflicted.count(e.path) || !want(e)) continue;
    // A path replaced by another kind of entry (a folder by a symlink) is
    // told as a removal and a creation: it lands as one step from the old
    // entry to the new one.
    if (auto it = at.find(e.path); it != at.end()) {
      LandOp& o = out[it->second];
      if (!o.after.exists() && e.after.exists() && !e.before.exists()) {
        o.after = e.after;
        o.mode = landing_mode(Effect{e.kind, e.path, o.before, e.after, "", "", "", e.verdict, false}, umask);
        continue;
      }
      if (o.after.exists() && !o.before.exists() && e.before.exists() && !e.after.exists()) {
        o.before = e.before;
        continue;
      }
    }
    at[e.path] = out.size();
    out.push_back({e.path, e.before, e.after, landing_mode(e, umask)});
  }
  return out;
}

// Files that changed in a [run] direct tree since the run started, counted;
// set-user-ID and set-group-ID bits found there are stripped.
std::vector<std::string> direct_notes(const Workspace& ws, const std::vector<fs::path>& trees, int64_t start) {
  std::vector<std::string> out;
  for (const fs::path& t : trees) {
    size_t changed = 0;
    std::vector<std::string> stripped;
    walk_tree(
        t, 2'000'000, [](std::string_view) { return true; },
        [&](const std::string& rel, int dirfd, const char* name, unsigned) {
          struct stat st {};
          if (::fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return true;
          if (change_ns(st) >= start) ++changed;
          if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
            (void)::fchmodat(dirfd, name, st.st_mode & 0777, 0);
            stripped.push_back(
                fmt::format("{} (mode {:04o}, now {:04o})", rel, st.st_mode & 07777u, st.st_mode & 0777u));
          }
          return true;
        });
    const std::string name = t.lexically_relative(ws.root).generic_string();
    out.push_back(
        fmt::format("{}/: {} file{} written directly (not reviewed)", name, changed, changed == 1 ? "" : "s"));
    for (const auto& s : stripped) out.push_back(fmt::format("SET-ID BIT STRIPPED: {}/{}", name, s));
  }
  return out;
}

std::optional<std::string> read_rel_file(const fs::path& base, const std::string& rel) {
  auto d = open_parent(base, rel, CreateDirs::no);
  if (!d) return std::nullopt;
  auto st = read_at(*d, leaf_of(rel), 8u << 20);
  if (!st || !st->exists || !st->regular) return std::nullopt;
  return std::move(st->bytes);
}

EntrySide side_of_tree(const FileSide& s, unsigned setid) {
  if (!s.exists) return {};
  if (s.mode == k_mode_dir) return {NodeType::dir, 0755, "", "", 0};
  if (s.mode == k_mode_link) return {NodeType::link, 0777, s.blob, "", 0};
  return {NodeType::file, (s.mode & 07777) | (setid & 06000), s.blob, "", 0};
}

// Puts back, at the levels without an overlay, each effect that must not
// stay: the held ones kept aside in the upper folder first. One line for
// each that could not be put back.
std::vector<std::string> put_back(const Workspace& ws, const RunFolder& f, const RunUndo& u, const Effects& fx,
                                  const GitCapture& git_after, std::set<std::string>& undone) {
  std::vector<std::string> failed;
  auto fail = [&](const std::string& rel, const std::string& why) {
    failed.push_back(fmt::format("{}: could NOT be put back ({})", rel, why));
  };
  std::vector<const Effect*> to_put_back;
  for (const Effect& e : fx.list)
    if (lands_by_path(e.kind) && e.verdict != EffectVerdict::lands) to_put_back.push_back(&e);
  auto before_bytes = [&](const Effect& e) -> std::optional<std::string> {
    if (e.path.starts_with(k_git)) {
      auto it = u.git.files.find(e.path);
      if (it == u.git.files.end()) return std::nullopt;
      return it->second;
    }
    auto b = u.store.bytes_of(e.before.blob);
    if (!b) return std::nullopt;
    return std::move(*b);
  };
  // Kept aside (held) and removed, deepest first; then put back, shallowest first.
  std::sort(to_put_back.begin(), to_put_back.end(), [](const Effect* a, const Effect* b) { return a->path > b->path; });
  for (const Effect* e : to_put_back) {
    const bool held = e->verdict == EffectVerdict::held;
    const std::string& rel = e->path;
    if (e->kind == EffectKind::object_changed) {
      fail(rel, "git objects are not kept before a run at this level");
      continue;
    }
    if (!e->after.exists()) continue;  // a removal: put back below
    if (e->path.starts_with(k_git)) {
      if (held) {
        auto it = git_after.files.find(rel);
        if (it != git_after.files.end()) (void)copy_aside(f, rel, it->second, 0644);
      }
      continue;  // written back below
    }
    const bool created = !e->before.exists() || e->before.type != e->after.type;
    if (e->kind == EffectKind::mode_changed && !created) continue;  // below
    if (created) {
      Status s = ok_status();
      if (e->after.type == NodeType::dir) {
        if (held) (void)make_dirs(f.upper / rel, 0700);
        std::error_code ec;
        fs::remove(ws.root / rel, ec);  // its entries went first; what is left is not the run's
        if (ec)
          fail(rel, ec.message());
        else
          undone.insert(rel);
        continue;
      }
      if (held)
        s = keep_aside(ws, f, rel);
      else if (::unlink((ws.root / rel).c_str()) != 0 && errno != ENOENT)
        s = make_error(Errc::io, errno_text(errno));
      if (!s)
        fail(rel, s.error().message);
      else
        undone.insert(rel);
      continue;
    }
    // Changed: the new state aside, the old one back below.
    if (held) {
      if (e->after.type == NodeType::link) {
        if (auto s = keep_aside(ws, f, rel); !s) fail(rel, s.error().message);
      } else if (auto now = read_rel_file(ws.root, rel)) {
        (void)copy_aside(f, rel, *now, e->after.mode);
      }
    }
  }
  std::sort(to_put_back.begin(), to_put_back.end(), [](const Effect* a, const Effect* b) { return a->path < b->path; });
  for (const Effect* e : to_put_back) {
    const std::string& rel = e->path;
    if (!e->before.exists() || e->kind == EffectKind::object_changed) continue;
    if (e->before.type == NodeType::dir) {
      std::error_code ec;
      if (e->after.type == NodeType::dir)
        fs::permissions(ws.root / rel, static_cast<fs::perms>(e->before.mode & 07777), ec);
      else
        (void)make_dirs(ws.root / rel, static_cast<mode_t>(e->before.mode & 0777));
      if (ec)
        fail(rel, ec.message());
      else
        undone.insert(rel);
      continue;
    }
    if (e->kind == EffectKind::mode_changed && e->after.exists()) {
      if (::chmod((ws.root / rel).c_str(), e->before.mode & 0777) != 0)
        fail(rel, errno_text(errno));
      else
        undone.insert(rel);
      continue;
    }
    auto bytes = before_bytes(*e);
    if (!bytes) {
      fail(rel, "its bytes before the run are not in the snapshot");
      continue;
    }
    if (e->before.type == NodeType::link) {
      std::error_code ec;
      fs::remove(ws.root / rel, ec);
      if (::symlink(bytes->c_str(), (ws.root / rel).c_str()) != 0)
        fail(rel, errno_text(errno));
      else
        undone.insert(rel);
      continue;
    }
    (void)make_dirs((ws.root / rel).parent_path(), 0755);
    if (auto s = write_file_atomic(ws.root / rel, *bytes, static_cast<mode_t>(e->before.mode & 0777)); !s)
      fail(rel, s.error().message);
    else
      undone.insert(rel);
  }
  return failed;
}

// What a run's entry says about its effects, on its summary line.
std::string effects_summary(const Effects& fx, const std::vector<std::string>& notes) {
  std::vector<std::string> lines = effect_lines(fx);
  constexpr size_t k_shown = 40;
  std::string out;
  if (!lines.empty()) {
    out =
        fmt::format("effects: {}",
                    fmt::join(lines.begin(), lines.begin() + static_cast<long>(std::min(lines.size(), k_shown)), "; "));
    if (lines.size() > k_shown) out += fmt::format("; and {} more (kaicoder show)", lines.size() - k_shown);
  } else {
    out = "effects: none";
  }
  for (const auto& n : notes) out += "; " + n;
  return out;
}

}  // namespace

Result<RunEffects> finish_effects(Workspace& ws, Proposal& p, EffectsRun& run, Entry entry) {
  RunEffects out;
  const RunFolder& f = run.folder;
  const unsigned umask = owner_umask();
  EffectContext ctx = context_of(ws);
  Effects& fx = out.fx;
  std::vector<std::string> notes;
  if (!run.note.empty()) notes.push_back(run.note);
  GitCapture git_after;
  std::vector<TreeChange> changes;
  std::optional<Snapshot> after;
  std::function<std::optional<std::string>(const Effect&)> before_of, after_of;
  if (run.way == EffectsWay::overlay) {
    // Effects not all known never land: said, and the upper folder dropped
    // with everything in it (the tree is as it was before the run).
    const bool trusted = fs::exists(f.redirect);
    // A moved folder's secrets and guarded files are not copied to its new
    // place: they stay where they were.
    auto keep_out = [&ws, &ctx](const std::string& rel) {
      return !ctx.never_rule(rel).empty() || !check_read(ws.guards, RootPath{rel, ws.root / rel}).ok();
    };
    Status settled =
        trusted ? settle_redirects(f.upper, ws.root, f.work, {ws.guards.state_dir}, keep_out) : ok_status();
    auto read = settled ? read_upper(f.upper, ws.root, run.start_ns, {ws.guards.state_dir},
                                     trusted ? OverlayXattrs::trusted : OverlayXattrs::user)
                        : Result<Effects>(settled.error());
    if (!read)
      notes.push_back(fmt::format("no effect landed: {}", ws.redact(read.error().message)));
    else
      fx = std::move(*read);
    for (const auto& n : fx.notes) notes.push_back(n);
    std::map<std::string, const Effect*> by_path;
    for (const Effect& e : fx.list)
      if (lands_by_path(e.kind)) by_path[e.path] = &e;
    GitView v;
    v.objects = ws.root / ".git" / "objects";
    v.new_objects = {f.upper / ".git" / "objects"};
    v.scratch = f.scratch;
    v.before = [&ws](const std::string& rel) { return read_rel_file(ws.root, rel); };
    v.after = [&ws, &f, by_path](const std::string& rel) -> std::optional<std::string> {
      auto it = by_path.find(rel);
      if (it == by_path.end()) return read_rel_file(ws.root, rel);
      if (!it->second->after.exists()) return std::nullopt;
      return read_rel_file(f.upper, rel);
    };
    v.file_after = [&ws, by_path](const std::string& rel) -> std::optional<EntrySide> {
      auto it = by_path.find(rel);
      if (it != by_path.end()) return it->second->after.exists() ? std::optional(it->second->after) : std::nullopt;
      auto s = live_side(ws.root, rel);
      if (!s || !s->exists()) return std::nullopt;
      return s;
    };
    git_meaning(fx, v);
    for (const auto& n : direct_notes(ws, run.plan.direct, run.start_ns)) notes.push_back(n);
    before_of = [&ws](const Effect& e) { return read_rel_file(ws.root, e.path); };
    after_of = [&f](const Effect& e) { return read_rel_file(f.upper, e.path); };
  } else if (run.way == EffectsWay::snapshots && run.undo && run.undo->before) {
    RunUndo& u = *run.undo;
    auto a = take_snapshot(ws, u.store, "snapshotting the tree after the run", u.watch.get());
    u.watch.reset();
    auto d = a ? u.store.diff(*u.before, *a) : Result<std::vector<TreeChange>>(a.error());
    if (!d) {
      (void)u.store.release(u.tag);
      notes.push_back(fmt::format("no snapshot: {}", ws.redact(d.error().message)));
    } else {
      after = std::move(*a);
      changes = std::move(*d);
      for (const auto& n : snapshot_notes(*u.before, *after)) notes.push_back(n);
      // A set-id bit on a file the snapshots compare is an effect judged
      // below (never kept, put back); one elsewhere (an ignored tree) is
      // stripped now, and said once.
      {
        Snapshot unseen = *after;
        for (const TreeChange& c : changes) unseen.setid.erase(c.rel);
        for (auto& n : strip_set_id(ws.root, *u.before, unseen)) notes.push_back(std::move(n));
      }
      std::vector<SnapshotChange> sc;
      for (const TreeChange& c : changes) {
        auto sid = after->setid.find(c.rel);
        SnapshotChange x{c.rel, side_of_tree(c.before, 0),
                         side_of_tree(c.after, sid == after->setid.end() ? 0 : sid->second)};
        if (x.after.type == NodeType::link) {
          std::error_code ec;
          x.after.text = fs::read_symlink(ws.root / c.rel, ec).string();
        } else if (struct stat st {}; x.after.type == NodeType::file && ::lstat((ws.root / c.rel).c_str(), &st) == 0 &&
                                      S_ISREG(st.st_mode)) {
          x.after.size = static_cast<uint64_t>(st.st_size);  // a snapshot keeps no sizes: the tree as the run left it
        }
        sc.push_back(std::move(x));
      }
      std::vector<std::string> dirs(after->dirs.begin(), after->dirs.end());
      git_after = capture_git(ws.root);
      if (u.git.objects.empty()) git_after.objects.clear();
      fx = from_snapshots(sc, u.dirs, folder_modes(ws.root, dirs), u.git, git_after);
      GitView v;
      v.objects = ws.root / ".git" / "objects";
      if (!run.plan.objects.empty()) v.new_objects = {run.plan.objects};
      v.scratch = f.scratch;
      v.before = [&u](const std::string& rel) -> std::optional<std::string> {
        auto it = u.git.files.find(rel);
        return it == u.git.files.end() ? std::nullopt : std::optional(it->second);
      };
      v.after = [&git_after](const std::string& rel) -> std::optional<std::string> {
        auto it = git_after.files.find(rel);
        return it == git_after.files.end() ? std::nullopt : std::optional(it->second);
      };
      v.file_after = [&ws](const std::string& rel) -> std::optional<EntrySide> {
        auto s = live_side(ws.root, rel);
        if (!s || !s->exists()) return std::nullopt;
        return s;
      };
      git_meaning(fx, v);
      // New objects written to the run's own folder are objects added.
      if (!run.plan.objects.empty()) {
        size_t n = 0;
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(run.plan.objects, ec);
             !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
          if (it->is_regular_file(ec)) {
            const std::string rel = ".git/objects/" + it->path().lexically_relative(run.plan.objects).generic_string();
            fx.list.push_back(Effect{EffectKind::objects_added,
                                     rel,
                                     {},
                                     EntrySide{NodeType::file, 0444, "", "", 0},
                                     "",
                                     "",
                                     "objects",
                                     EffectVerdict::lands,
                                     false});
            ++n;
          }
        for (Effect& e : fx.list)
          if (e.kind == EffectKind::objects_added) e.detail = fmt::format("{} object{}", n, n == 1 ? "" : "s");
      }
      before_of = [&u](const Effect& e) -> std::optional<std::string> {
        auto b = u.store.bytes_of(e.before.blob);
        if (!b) return std::nullopt;
        return std::move(*b);
      };
      after_of = [&ws](const Effect& e) { return read_rel_file(ws.root, e.path); };
    }
  }
  classify(fx, ctx);
  bool created = false;
  for (const Effect& e : fx.list) {
    out.held += e.verdict == EffectVerdict::held && lands_by_path(e.kind) && !e.conflict;
    out.dropped += e.verdict == EffectVerdict::never && lands_by_path(e.kind);
    out.conflicts += e.conflict;
    created = created || ((e.kind == EffectKind::file_created || e.kind == EffectKind::folder_created) &&
                          e.verdict == EffectVerdict::lands);
  }
  if (created && run.way == EffectsWay::overlay)
    notes.push_back(fmt::format("new files and folders get the owner's umask {:03o}", umask));
  if (before_of) out.diff = ws.redact(effects_diff(fx, before_of, after_of, DiffOptions{}));
  KAI_TRY(keep_effects(ws, p, fx, out.diff));

  const auto now = ws.clock->now();
  Landing l;
  l.proposal = p.id;
  l.state = out.held > 0 ? State::held : State::applied;
  l.held_since = out.held > 0 ? iso_utc(now) : "";
  l.drop_folder = out.held == 0;
  std::vector<std::string> conflicts;
  for (const Effect& e : fx.list)
    if (e.conflict && lands_by_path(e.kind)) conflicts.push_back(e.path);
  if (run.way == EffectsWay::overlay) {
    l.ops = ops_of(fx, umask, [](const Effect& e) { return e.verdict == EffectVerdict::lands; });
    const bool keep = ws.cfg.snapshots_keep > 0;
    if (keep && !l.ops.empty()) {
      auto fresh = ws.journal.fresh_id(now);
      if (!fresh) return fresh.error();
      l.id = *fresh;
    }
    for (const LandOp& o : l.ops) {
      const bool dir = o.after.type == NodeType::dir || o.before.type == NodeType::dir;
      if (restorable(ws, o.path, dir))
        out.landed.push_back(o.path);
      else if (!dir && !o.path.starts_with(k_git))
        notes.push_back(fmt::format("changed, not restorable: {}", o.path));
    }
    if (out.landed.empty()) l.id.clear();
  } else if (run.way == EffectsWay::snapshots && after) {
    RunUndo& u = *run.undo;
    std::set<std::string> undone;
    for (const auto& n : put_back(ws, f, u, fx, git_after, undone)) notes.push_back(n);
    // The journal: what stayed, whose before-sides the snapshot holds.
    std::vector<TreeChange> kept;
    for (auto& c : changes) {
      if (undone.count(c.rel)) continue;
      bool dir = c.after.mode == k_mode_dir;
      std::string probe = dir ? c.rel + "/x" : c.rel;
      if (c.undoable && check_write(ws.guards, RootPath{probe, ws.root / probe}))
        kept.push_back(std::move(c));
      else if (!dir)
        notes.push_back(fmt::format("changed, not restorable: {}", c.rel));
    }
    Record rec;
    if (!kept.empty()) {
      auto fresh = ws.journal.fresh_id(now);
      if (!fresh) return fresh.error();
      rec.id = *fresh;
      rec.kind = "run";
      rec.time = iso_utc(now);
      rec.proposal = p.id;
      if (auto s = u.store.keep(*u.before, kept, rec.id, u.tag, ws.cfg.snapshots_keep); !s) {
        notes.push_back(fmt::format("no snapshot: {}", ws.redact(s.error().message)));
        rec = Record{};
      } else {
        for (const auto& c : kept) rec.files.push_back(FileChange{c.rel, c.before, c.after, "", ""});
        // Folder modes that stayed: back with a rollback too.
        for (const Effect& e : fx.list)
          if (e.kind == EffectKind::mode_changed && e.after.type == NodeType::dir && !undone.count(e.path) &&
              e.verdict == EffectVerdict::lands)
            rec.files.push_back(FileChange{
                e.path, {true, "", k_mode_dir | e.before.mode}, {true, "", k_mode_dir | e.after.mode}, "", ""});
        KAI_TRY(ws.journal.write(rec));
      }
    } else {
      (void)u.store.release(u.tag);
    }
    l.id = rec.id;
    for (const auto& c : rec.files) out.landed.push_back(c.rel);
    // New objects in the run's own folder: into .git/objects, never over one.
    if (!run.plan.objects.empty())
      l.ops = ops_of(fx, umask, [](const Effect& e) { return e.kind == EffectKind::objects_added; });
  }
  if (!conflicts.empty())
    notes.push_back(fmt::format("CONFLICT: changed in the tree while the run went on, not applied: {}",
                                fmt::join(conflicts, ", ")));
  out.notes = notes;
  // The entry: what landed, with the effects on its summary.
  entry.summary = make_visible(entry.summary + "; " + effects_summary(fx, notes));
  if (out.held > 0)
    entry.result +=
        fmt::format("; {} effect{} held for CONFIRM (kaicoder approve {})", out.held, out.held == 1 ? "" : "s", p.id);
  entry.files.clear();
  for (const auto& rel : out.landed) entry.files.push_back((ws.root / rel).string());
  if (!l.id.empty()) {
    entry.rollback_id = l.id;
    entry.time = iso_utc(now);
    entry.rollback = fmt::format("restore {} from snapshot {}", count_of(out.landed.size(), "file"), l.id);
    p.rollback_id = l.id;
  }
  entry = ws.redact(std::move(entry));
  l.entry = entry;
  out.entry = entry;
  l.result = p.result;
  out.rollback_id = l.id;
  // The record the landing finishes with holds the effects' digest.
  KAI_TRY(ws.store.save(p));
  if (run.way == EffectsWay::overlay || !l.ops.empty()) {
    std::vector<std::string> lost;
    KAI_TRY(land(ws, f, l, lost, run.way == EffectsWay::overlay && !l.id.empty()));
    for (const auto& c : lost) out.notes.push_back("not applied: " + c);
  } else {
    KAI_TRY(ws.changelog.prepend(l.entry));
    p.state = l.state;
    p.held_since = l.held_since;
    KAI_TRY(ws.store.save(p));
    if (l.drop_folder) {
      std::error_code ec;
      fs::remove_all(f.dir, ec);
    }
  }
  if (auto q = ws.store.load(p.id)) p = std::move(*q);
  return out;
}

void discard_effects(Workspace& ws, EffectsRun& run) {
  (void)ws;
  if (run.undo) (void)run.undo->store.release(run.undo->tag);
  std::error_code ec;
  fs::remove_all(run.folder.dir, ec);
}

// ----- held effects decided ------------------------------------------------------

Result<RunEffects> decide_held(Workspace& ws, Proposal& p, bool keep, const std::string& decider,
                               const std::string& seen_digest, const std::string& why) {
  if (p.state != State::held)
    return make_error(Errc::conflict, fmt::format("proposal {} holds no effects (it is {})", p.id, to_string(p.state)));
  auto kept = kept_effects(ws, p);
  if (!kept) return kept.error();
  if (!seen_digest.empty() && kept->digest != seen_digest)
    return make_error(Errc::conflict,
                      fmt::format("the held effects of proposal {} changed while they were shown", p.id),
                      "review them again: kaicoder show " + std::to_string(p.id));
  RunEffects out;
  out.fx = kept->fx;
  out.diff = kept->diff;
  const RunFolder f = RunFolder::of(ws, p.id);
  Effects held;
  for (const Effect& e : kept->fx.list)
    if (e.verdict == EffectVerdict::held && !e.conflict) held.list.push_back(e);
  const std::vector<std::string> lines = effect_lines(held);
  const auto now = ws.clock->now();
  Landing l;
  l.proposal = p.id;
  l.state = State::applied;
  l.drop_folder = true;
  Entry e;
  e.time = iso_utc(now);
  e.action = std::string(action_name(Kind::run));
  e.why = p.why;
  e.approver = decider;
  if (keep) {
    e.kind = "run";
    e.summary = fmt::format("kept the held effects of run {} ({}): {}", p.id, p.summary, fmt::join(lines, "; "));
    e.result = "ok";
    l.ops = ops_of(held, owner_umask(), [](const Effect&) { return true; });
    if (ws.cfg.snapshots_keep > 0 && !l.ops.empty()) {
      auto fresh = ws.journal.fresh_id(now);
      if (!fresh) return fresh.error();
      l.id = *fresh;
    }
    for (const LandOp& o : l.ops)
      if (restorable(ws, o.path, o.after.type == NodeType::dir || o.before.type == NodeType::dir))
        out.landed.push_back(o.path);
    if (out.landed.empty()) l.id.clear();
    for (const auto& rel : out.landed) e.files.push_back((ws.root / rel).string());
    if (!l.id.empty()) {
      e.rollback_id = l.id;
      e.rollback = fmt::format("restore {} from snapshot {}", count_of(out.landed.size(), "file"), l.id);
    }
    l.result = p.result + "; held effects kept";
  } else {
    e.kind = why == "timeout" ? "timeout" : "rejected";
    e.summary = fmt::format("dropped the held effects of run {} ({}): {}", p.id, p.summary, fmt::join(lines, "; "));
    e.result = why == "timeout" ? fmt::format("timeout: not confirmed within {} s; dropped", ws.cfg.timeout)
                                : (why.empty() ? std::string("dropped") : fmt::format("dropped: {}", why));
    l.result = p.result + (why == "timeout" ? "; held effects expired, dropped" : "; held effects dropped");
  }
  l.entry = ws.redact(std::move(e));
  out.entry = l.entry;
  out.rollback_id = l.id;
  if (!l.ops.empty()) {
    std::vector<std::string> lost;
    KAI_TRY(land(ws, f, l, lost, !l.id.empty()));
    out.conflicts = lost.size();
    for (const auto& c : lost) out.notes.push_back("CONFLICT, not applied: " + c);
  } else {
    KAI_TRY(finish_landing(ws, f, l, {}));
  }
  out.held = keep ? 0 : held.list.size();
  if (auto q = ws.store.load(p.id)) p = std::move(*q);
  queue_notify(ws, p, keep ? "applied" : "rejected");
  return out;
}

// ----- runs the sweep finds ----------------------------------------------------------

namespace {

std::vector<int> run_ids(const Workspace& ws) {
  std::vector<int> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ws.store.dir() / "runs", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos || name.size() > 9) continue;
    out.push_back(std::atoi(name.c_str()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool held_past_timeout(const Workspace& ws, const Proposal& p) {
  TimePoint since;
  if (p.state != State::held || !parse_iso_utc(p.held_since, since)) return false;
  return ws.clock->now() - since > std::chrono::seconds(ws.cfg.timeout);
}

}  // namespace

Result<std::vector<std::string>> recover_runs(Workspace& ws) {
  std::vector<std::string> out;
  for (int id : run_ids(ws)) {
    const RunFolder f = RunFolder::of(ws, id);
    auto alive = FileLock::try_acquire(f.dir / "alive");
    if (!alive) continue;  // in flight
    std::error_code ec;
    if (fs::exists(landing_path(f), ec)) {
      auto l = read_landing(ws, f, id);
      if (!l) {
        // Never obeyed: set aside for a person.
        fs::rename(landing_path(f), f.dir / "landing.refused.json", ec);
        out.push_back(fmt::format("run {}: a landing that does not verify was set aside ({})", id, l.error().message));
        continue;
      }
      std::vector<LandOp> done;
      for (const LandOp& o : l->ops)
        if (perform(ws, f, o).empty()) done.push_back(o);
      KAI_TRY(finish_landing(ws, f, *l, done));
      out.push_back(fmt::format("run {}: finished landing its effects", id));
      continue;
    }
    auto p = ws.store.load(id);
    if (!p || p->sealed != SealCheck::ok) continue;  // not kaicoder's to change; doctor reports it
    if (p->state == State::approved && fs::exists(ws.store.staging_dir(id) / "started", ec)) {
      // The process that ran it died: its effects so far are recorded now.
      EffectsRun run;
      run.id = id;
      run.folder = f;
      run.alive = std::move(*alive);
      struct stat st {};
      if (::lstat((f.dir / "started").c_str(), &st) == 0) run.start_ns = change_ns(st);
      if (fs::is_directory(f.upper, ec)) {
        run.way = EffectsWay::overlay;
      } else if (auto u = restore_before(ws, f, id)) {
        run.way = EffectsWay::snapshots;
        run.undo = std::move(u);
        if (fs::is_directory(f.objects, ec)) run.plan.objects = f.objects;
      }
      Entry e = unreversible_entry(ws, *p, "run", p->decided_by,
                                   "interrupted: the process that ran it ended before the command did",
                                   fmt::format("{} (in {})", p->summary, p->cwd.empty() ? "." : p->cwd));
      p->result = "interrupted";
      p->outcome_code = static_cast<int>(Errc::io);
      auto r = finish_effects(ws, *p, run, e);
      if (!r) return r.error();
      out.push_back(
          fmt::format("run {} was interrupted: recorded, {} effect{} held", id, r->held, r->held == 1 ? "" : "s"));
      queue_notify(ws, *p, "failed");
      continue;
    }
    if (p->state == State::held) {
      if (held_past_timeout(ws, *p)) {
        alive->release();
        auto r = decide_held(ws, *p, false, "", "", "timeout");
        if (!r) return r.error();
        out.push_back(fmt::format("run {}: its held effects expired and were dropped", id));
      }
      continue;
    }
    if (p->state != State::approved) {
      alive->release();
      fs::remove_all(f.dir, ec);  // a run recorded already: its folder is no longer needed
    }
  }
  return out;
}

std::vector<std::string> inspect_runs(const Workspace& ws) {
  std::vector<std::string> out;
  for (int id : run_ids(ws)) {
    const RunFolder f = RunFolder::of(ws, id);
    std::error_code ec;
    if (!fs::exists(f.dir / "alive", ec)) continue;
    auto alive = FileLock::try_acquire(f.dir / "alive");
    if (!alive) continue;  // in flight
    if (fs::exists(landing_path(f), ec)) {
      out.push_back(
          fmt::format("run {}: landing its effects was cut short; the next command that writes finishes it", id));
      continue;
    }
    auto p = ws.store.load(id, Store::Payloads::none);
    if (!p) continue;
    if (p->state == State::approved)
      out.push_back(
          fmt::format("run {} ended before its effects were recorded (its process ended, or the disk "
                      "was full); the next command that writes records it, lands its plain effects and "
                      "holds the rest for a person",
                      id));
    else if (p->state == State::held)
      out.push_back(
          fmt::format("run {}: effects held for CONFIRM (kaicoder approve {}, or kaicoder reject {})", id, id, id));
  }
  return out;
}

}  // namespace kai
