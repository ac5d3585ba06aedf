// Reading a run's effects from the disk: an overlay's upper folder against
// the live tree, or the captures and snapshot changes of the levels without
// an overlay (lib/run/effects.hpp).

#include "lib/run/effects.hpp"

#include <algorithm>
#include <optional>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fmt/format.h>
#include <git2.h>

#include "lib/util/fd.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/stack.hpp"
#include "lib/util/text.hpp"
#include "lib/util/git.hpp"
#include "lib/util/git_tree.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

int64_t stat_ctime_ns(const struct stat& st) {
  return static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
}

NodeType node_type_of(mode_t m) {
  if (S_ISREG(m)) return NodeType::file;
  if (S_ISDIR(m)) return NodeType::dir;
  if (S_ISLNK(m)) return NodeType::link;
  if (S_ISFIFO(m)) return NodeType::fifo;
  if (S_ISSOCK(m)) return NodeType::socket;
  return NodeType::device;
}

// The names in the folder `dirfd`, sorted.
std::vector<std::string> folder_names(int dirfd) {
  std::vector<std::string> out;
  int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
  if (dup < 0) return out;
  DIR* d = ::fdopendir(dup);
  if (!d) {
    ::close(dup);
    return out;
  }
  while (dirent* e = ::readdir(d)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") out.emplace_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string blob_at_fd(int dirfd, const std::string& name) {
  Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) return {};
  git_init_once();
  git_oid id;
  // libgit2 hashes a path; the descriptor's own entry in /proc is that path.
  std::string via = fmt::format("/proc/self/fd/{}", fd.get());
  if (git_odb_hashfile(&id, via.c_str(), GIT_OBJECT_BLOB) != 0) return {};
  return hex(id);
}

namespace {

std::string link_text_at(int dirfd, const std::string& name) {
  std::string buf(4096, '\0');
  ssize_t n = ::readlinkat(dirfd, name.c_str(), buf.data(), buf.size());
  if (n < 0) return {};
  buf.resize(static_cast<size_t>(n));
  return buf;
}

EntrySide node_side_at(int dirfd, const std::string& name, const struct stat& st) {
  EntrySide s;
  s.type = node_type_of(st.st_mode);
  s.mode = st.st_mode & 07777;
  if (s.type == NodeType::file) {
    s.size = static_cast<uint64_t>(st.st_size);
    s.blob = blob_at_fd(dirfd, name);
  } else if (s.type == NodeType::link) {
    s.text = link_text_at(dirfd, name);
    s.blob = blob_id(s.text);
  }
  return s;
}

bool has_xattr(int fd, const char* name, std::string_view want) {
  char buf[8];
  ssize_t n = ::fgetxattr(fd, name, buf, sizeof buf);
  return n >= 0 && std::string_view(buf, static_cast<size_t>(n)) == want;
}

// overlayfs's own attributes, in the namespace the overlay was mounted with:
// only that one, as only the kernel can write it (an overlay with trusted
// attributes passes user.overlay.* through from the command like any other
// attribute, so those mean nothing there).
std::string overlay_attr(OverlayXattrs x, std::string_view name) {
  return fmt::format("{}.overlay.{}", x == OverlayXattrs::trusted ? "trusted" : "user", name);
}

bool overlay_opaque(int dirfd, OverlayXattrs x) { return has_xattr(dirfd, overlay_attr(x, "opaque").c_str(), "y"); }

bool overlay_whiteout(int dirfd, const std::string& name, const struct stat& st, OverlayXattrs x) {
  if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0)) return true;
  if (!S_ISREG(st.st_mode) || st.st_size != 0) return false;
  Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  return fd.get() >= 0 && ::fgetxattr(fd.get(), overlay_attr(x, "whiteout").c_str(), nullptr, 0) >= 0;
}

std::string child_rel(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "/" + name;
}

class UpperReader {
public:
  UpperReader(int64_t start, const std::vector<std::string>& skip, OverlayXattrs x)
      : m_start(start), m_skip(skip), m_xattrs(x) {}

  Effects fx;

  // The effect of `rel` (before in `lower`, at `lst`), deleted with all below it.
  void deleted(int lowerfd, const std::string& name, const std::string& rel, const struct stat& lst) {
    if (skipped(rel)) return;
    EntrySide before = node_side_at(lowerfd, name, lst);
    if (S_ISDIR(lst.st_mode)) {
      if (!deeper(rel)) return;
      Fd sub(::openat(lowerfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0) {
        unreadable(rel);
        --m_depth;
        return;
      }
      for (const std::string& n : folder_names(sub.get())) {
        struct stat st {};
        if (::fstatat(sub.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) deleted(sub.get(), n, child_rel(rel, n), st);
      }
      --m_depth;
    }
    EffectKind k = before.type == NodeType::dir    ? EffectKind::folder_deleted
                   : before.type == NodeType::link ? EffectKind::link_deleted
                                                    : EffectKind::file_deleted;
    add(k, rel, before, {}, &lst);
  }

  // Everything in the upper folder `upperfd` at `rel` ("" at the top),
  // against the lower folder `lowerfd` (-1: none there).
  void walk(int upperfd, int lowerfd, const std::string& rel, bool is_opaque) {
    std::vector<std::string> names = folder_names(upperfd);
    if (lowerfd >= 0 && is_opaque) {
      // Every lower entry the upper folder does not hold again is deleted.
      for (const std::string& n : folder_names(lowerfd)) {
        if (std::binary_search(names.begin(), names.end(), n)) continue;
        struct stat lst {};
        if (::fstatat(lowerfd, n.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0) deleted(lowerfd, n, child_rel(rel, n), lst);
      }
    }
    for (const std::string& n : names) {
      const std::string r = child_rel(rel, n);
      if (skipped(r)) continue;
      struct stat ust {};
      if (::fstatat(upperfd, n.c_str(), &ust, AT_SYMLINK_NOFOLLOW) != 0) continue;
      // Below an overlay_opaque folder the run saw no lower entry, but the live
      // tree still holds it: it is what this one replaces.
      struct stat lst {};
      const bool had = lowerfd >= 0 && ::fstatat(lowerfd, n.c_str(), &lst, AT_SYMLINK_NOFOLLOW) == 0;
      if (overlay_whiteout(upperfd, n, ust, m_xattrs)) {
        if (had) deleted(lowerfd, n, r, lst);
        continue;
      }
      EntrySide after = node_side_at(upperfd, n, ust);
      if (S_ISDIR(ust.st_mode)) {
        if (!deeper(r)) continue;
        Fd up(::openat(upperfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (up.get() < 0) {
          unreadable(r);
          --m_depth;
          continue;
        }
        const bool op = is_opaque || overlay_opaque(up.get(), m_xattrs);
        Fd low;
        if (had && S_ISDIR(lst.st_mode)) {
          low = Fd(::openat(lowerfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
          if (low.get() < 0) {
            unreadable(r);
            --m_depth;
            continue;
          }
          if ((lst.st_mode & 07777) != (ust.st_mode & 07777))
            add(EffectKind::mode_changed, r, node_side_at(lowerfd, n, lst), after, &lst);
        } else {
          if (had) deleted(lowerfd, n, r, lst);
          add(EffectKind::folder_created, r, {}, after, nullptr);
        }
        walk(up.get(), low.get(), r, op);
        --m_depth;
        continue;
      }
      EntrySide before = had ? node_side_at(lowerfd, n, lst) : EntrySide{};
      if (had && before.type != after.type) {
        deleted(lowerfd, n, r, lst);
        before = {};
      }
      switch (after.type) {
        case NodeType::file:
          if (!before.exists())
            add(EffectKind::file_created, r, before, after, nullptr);
          else if (before.blob != after.blob || before.size != after.size)
            add(EffectKind::file_changed, r, before, after, &lst);
          else if (before.mode != after.mode)
            add(EffectKind::mode_changed, r, before, after, &lst);
          break;
        case NodeType::link:
          if (!before.exists())
            add(EffectKind::link_created, r, before, after, nullptr);
          else if (before.text != after.text)
            add(EffectKind::link_changed, r, before, after, &lst);
          break;
        default:
          if (!before.exists()) add(EffectKind::special_created, r, before, after, nullptr);
          break;
      }
    }
  }

  // The upper folder's own mode against the root's: the root's mode change.
  void root_mode(const struct stat& ust, const struct stat& lst, int lowerfd) {
    if ((ust.st_mode & 07777) == (lst.st_mode & 07777)) return;
    EntrySide before{NodeType::dir, lst.st_mode & 07777, "", "", 0};
    EntrySide after{NodeType::dir, ust.st_mode & 07777, "", "", 0};
    (void)lowerfd;
    add(EffectKind::mode_changed, "", before, after, &lst);
  }

  // The first folder that could not be read whole, or "": effects that
  // are not all known never land (read_upper fails).
  std::string failure;

private:
  // One folder level down from `rel`; false (and the failure said) past
  // k_max_depth: a tree that deep is an attack on the walk.
  bool deeper(const std::string& rel) {
    if (m_depth >= k_max_depth) {
      if (failure.empty())
        failure = fmt::format("folders are nested more than {} deep under '{}'", k_max_depth,
                              rel.substr(0, std::min<size_t>(rel.size(), 60)));
      return false;
    }
    ++m_depth;
    return true;
  }
  void unreadable(const std::string& rel) {
    if (failure.empty()) failure = fmt::format("cannot read the folder '{}': {}", rel, errno_text(errno));
  }
  static constexpr int k_max_depth = 3000;  // as the snapshots' walk (lib/run/snapshot_walk)
  int m_depth = 0;
  bool skipped(const std::string& rel) const {
    for (const auto& s : m_skip)
      if (rel == s || rel.starts_with(s + "/")) return true;
    return false;
  }
  // `live`: the live entry as stat'ed now, for the conflict test.
  void add(EffectKind k, const std::string& rel, EntrySide before, EntrySide after, const struct stat* live) {
    // A name that is not UTF-8 can be neither recorded nor shown as it is:
    // its effect never lands (it stays in the upper folder, dropped with
    // it), and the run's entry says so.
    if (first_invalid_utf8(rel)) {
      fx.notes.push_back(fmt::format("not applied: a name that is not UTF-8: {}", make_visible(rel, Allow::nothing)));
      return;
    }
    Effect e;
    e.kind = k;
    e.path = rel;
    e.before = std::move(before);
    e.after = std::move(after);
    e.conflict = live && stat_ctime_ns(*live) >= m_start;
    fx.list.push_back(std::move(e));
  }
  int64_t m_start;
  const std::vector<std::string>& m_skip;
  OverlayXattrs m_xattrs;
};

}  // namespace

Result<Effects> read_upper(const fs::path& upper, const fs::path& root, int64_t start_ns,
                           const std::vector<std::string>& skip, OverlayXattrs xattrs) {
  Fd up(::open(upper.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (up.get() < 0)
    return make_error(Errc::io, fmt::format("cannot read the run's upper folder '{}': {}", upper.string(),
                                            errno_text(errno)));
  Fd low(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (low.get() < 0)
    return make_error(Errc::io, fmt::format("cannot read the root '{}': {}", root.string(), errno_text(errno)));
  UpperReader r(start_ns, skip, xattrs);
  struct stat ust {}, lst {};
  if (::fstat(up.get(), &ust) == 0 && ::fstat(low.get(), &lst) == 0) r.root_mode(ust, lst, low.get());
  run_with_stack(k_walk_stack, [&] { r.walk(up.get(), low.get(), "", overlay_opaque(up.get(), xattrs)); });
  if (!r.failure.empty())
    return make_error(Errc::usage, fmt::format("the run's effects cannot all be read: {}", r.failure));
  std::stable_sort(r.fx.list.begin(), r.fx.list.end(), [](const Effect& a, const Effect& b) { return a.path < b.path; });
  return std::move(r.fx);
}

// ----- an overlay's folder moves ---------------------------------------------------

namespace {

constexpr const char* k_redirect = "trusted.overlay.redirect";

// The folder's trusted.overlay.redirect: nullopt when it has none; "" when it
// cannot be read (too long, or an error).
std::optional<std::string> redirect_of(int dirfd) {
  char buf[4096];
  ssize_t n = ::fgetxattr(dirfd, k_redirect, buf, sizeof buf);
  if (n < 0) return errno == ENODATA ? std::nullopt : std::optional<std::string>("");
  return std::string(buf, static_cast<size_t>(n));
}

// Makes each folder the run moved whole in the upper folder (see
// settle_redirects in lib/run/effects.hpp).
class Settler {
public:
  Settler(int lowerfd, int workfd, const std::vector<std::string>& skip,
          const std::function<bool(const std::string&)>& keep_out)
      : m_lower(lowerfd), m_work(workfd), m_skip(skip), m_keep_out(keep_out) {}

  std::string failure;

  // The upper folder `ufd` at `urel`, named `name` in a parent whose lower
  // folder is `parent_lower` (root-relative, "" the root; nullopt: none, as
  // under an opaque folder). `merging`: a folder at or below a moved one.
  void visit(int ufd, const std::string& urel, const std::optional<std::string>& parent_lower,
             const std::string& name, bool merging) {
    std::optional<std::string> lower;
    const std::optional<std::string> redirect = redirect_of(ufd);
    if (has_xattr(ufd, "trusted.overlay.opaque", "y")) {
      lower = std::nullopt;  // as overlayfs: an opaque folder's redirect is not followed
    } else if (redirect) {
      auto target = redirect_target(*redirect, parent_lower);
      if (!target) return fail(fmt::format("the folder '{}' holds a move kaicoder cannot follow", urel));
      lower = *target;
      merging = true;
    } else if (parent_lower) {
      lower = child_rel(*parent_lower, name);
    }
    const std::vector<std::string> names = folder_names(ufd);
    if (merging && lower && !skipped(*lower)) {
      Fd low = open_lower(*lower);
      if (low.get() >= 0) {
        for (const std::string& n : folder_names(low.get())) {
          if (std::binary_search(names.begin(), names.end(), n) || skipped(child_rel(*lower, n)) ||
              (m_keep_out && m_keep_out(child_rel(*lower, n))))
            continue;
          // Whole in the work folder first, then renamed in: a crash leaves
          // either the entry complete or nothing (this pass is run again).
          const std::string tmp = fmt::format("settle-{}", m_counter++);
          if (!copy_at(low.get(), n, m_work, tmp, child_rel(urel, n), child_rel(*lower, n))) return;
          if (::renameat(m_work, tmp.c_str(), ufd, n.c_str()) != 0)
            return fail(fmt::format("cannot move '{}' into the run's folder: {}", child_rel(urel, n), errno_text(errno)));
        }
      }
    }
    for (const std::string& n : names) {
      struct stat st {};
      if (::fstatat(ufd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
      if (!deeper(child_rel(urel, n))) return;
      Fd sub(::openat(ufd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0) return fail(fmt::format("cannot read the folder '{}': {}", child_rel(urel, n), errno_text(errno)));
      visit(sub.get(), child_rel(urel, n), lower, n, merging);
      --m_depth;
      if (!failure.empty()) return;
    }
    if (!merging) return;
    // Whole now: nothing below it comes from the live tree any more.
    if (::fsetxattr(ufd, "trusted.overlay.opaque", "y", 1, 0) != 0 ||
        (redirect && ::fremovexattr(ufd, k_redirect) != 0 && errno != ENODATA))
      fail(fmt::format("cannot mark the folder '{}': {}", urel, errno_text(errno)));
  }

private:
  void fail(std::string why) {
    if (failure.empty()) failure = std::move(why);
  }
  bool deeper(const std::string& rel) {
    if (m_depth >= k_max_depth) {
      fail(fmt::format("folders are nested more than {} deep under '{}'", k_max_depth,
                       rel.substr(0, std::min<size_t>(rel.size(), 60))));
      return false;
    }
    ++m_depth;
    return true;
  }
  bool skipped(const std::string& rel) const {
    for (const auto& s : m_skip)
      if (rel == s || rel.starts_with(s + "/")) return true;
    return false;
  }
  // Where a redirect points in the lower layer, as overlayfs reads it: an
  // absolute one from the layer's top, a relative one (a name) beside the
  // parent's lower folder. nullopt for one that is not plain.
  static std::optional<std::string> redirect_target(const std::string& r,
                                                    const std::optional<std::string>& parent_lower) {
    if (r.empty() || r.find('\0') != std::string::npos) return std::nullopt;
    std::string path;
    if (r[0] == '/') {
      path = r.substr(1);
    } else {
      if (r.find('/') != std::string::npos || !parent_lower) return std::nullopt;
      path = child_rel(*parent_lower, r);
    }
    for (std::string_view rest = path; !rest.empty();) {
      const size_t slash = rest.find('/');
      std::string_view part = rest.substr(0, slash);
      if (part.empty() || part == "." || part == "..") return std::nullopt;
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    }
    return path;
  }
  // The lower folder at `rel`, each step without following a link, as
  // overlayfs looks it up; -1 when there is none.
  Fd open_lower(const std::string& rel) const {
    Fd at(::fcntl(m_lower, F_DUPFD_CLOEXEC, 3));
    for (std::string_view rest = rel; !rest.empty() && at.get() >= 0;) {
      const size_t slash = rest.find('/');
      const std::string part(rest.substr(0, slash));
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
      at = Fd(::openat(at.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    return at;
  }
  // A copy of the lower entry `name` in `from` as `to` in `dst`: bytes,
  // mode, owner and times; a folder with everything in it. Extended
  // attributes are not copied.
  // `rel`: where it lands in the upper folder; `lower_rel`: where it is in
  // the tree.
  bool copy_at(int from, const std::string& name, int dst, const std::string& to, const std::string& rel,
               const std::string& lower_rel) {
    struct stat st {};
    if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return fail_copy(rel, errno_text(errno));
    const mode_t mode = st.st_mode & 07777;
    if (S_ISREG(st.st_mode)) {
      Fd in(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
      Fd out(::openat(dst, to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
      if (in.get() < 0 || out.get() < 0) return fail_copy(rel, errno_text(errno));
      for (off_t left = st.st_size; left > 0;) {
        ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr, static_cast<size_t>(left), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail_copy(rel, n == 0 ? "it shrank while it was copied" : errno_text(errno));
        left -= n;
      }
      return finish(out.get(), st, mode, rel);
    }
    if (S_ISLNK(st.st_mode)) {
      const std::string target = link_text_at(from, name);
      if (::symlinkat(target.c_str(), dst, to.c_str()) != 0) return fail_copy(rel, errno_text(errno));
      (void)::fchownat(dst, to.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
      return true;
    }
    if (S_ISDIR(st.st_mode)) {
      if (!deeper(rel)) return false;
      if (::mkdirat(dst, to.c_str(), 0700) != 0) return fail_copy(rel, errno_text(errno));
      Fd src(::openat(from, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      Fd out(::openat(dst, to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (src.get() < 0 || out.get() < 0) return fail_copy(rel, errno_text(errno));
      for (const std::string& n : folder_names(src.get())) {
        if (m_keep_out && m_keep_out(child_rel(lower_rel, n))) continue;
        if (!copy_at(src.get(), n, out.get(), n, child_rel(rel, n), child_rel(lower_rel, n))) return false;
      }
      --m_depth;
      return finish(out.get(), st, mode, rel);
    }
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
      if (::mknodat(dst, to.c_str(), (st.st_mode & S_IFMT) | 0600, 0) != 0) return fail_copy(rel, errno_text(errno));
      (void)::fchownat(dst, to.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
      (void)::fchmodat(dst, to.c_str(), mode, 0);
      return true;
    }
    return fail_copy(rel, "a device node is not moved");
  }
  bool finish(int fd, const struct stat& st, mode_t mode, const std::string& rel) {
    if (::fchown(fd, st.st_uid, st.st_gid) != 0 || ::fchmod(fd, mode) != 0) return fail_copy(rel, errno_text(errno));
    const struct timespec times[2] = {st.st_atim, st.st_mtim};
    (void)::futimens(fd, times);
    return true;
  }
  bool fail_copy(const std::string& rel, const std::string& why) {
    fail(fmt::format("cannot copy '{}' of a moved folder: {}", rel, why));
    return false;
  }
  static constexpr int k_max_depth = 3000;  // as the reader's walk
  int m_depth = 0;
  int m_lower, m_work;
  const std::vector<std::string>& m_skip;
  const std::function<bool(const std::string&)>& m_keep_out;
  unsigned m_counter = 0;
};

}  // namespace

Status settle_redirects(const fs::path& upper, const fs::path& root, const fs::path& work,
                        const std::vector<std::string>& skip, const std::function<bool(const std::string&)>& keep_out) {
  Fd up(::open(upper.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  Fd low(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  Fd wk(::open(work.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (up.get() < 0 || low.get() < 0 || wk.get() < 0)
    return make_error(Errc::io, fmt::format("cannot read the run's overlay folders: {}", errno_text(errno)));
  Settler s(low.get(), wk.get(), skip, keep_out);
  run_with_stack(k_walk_stack, [&] {
    // The root is never moved: its children are looked up beside the live tree.
    for (const std::string& n : folder_names(up.get())) {
      struct stat st {};
      if (::fstatat(up.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
      Fd sub(::openat(up.get(), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub.get() < 0) {
        s.failure = fmt::format("cannot read the folder '{}': {}", n, errno_text(errno));
        return;
      }
      s.visit(sub.get(), n, has_xattr(up.get(), "trusted.overlay.opaque", "y") ? std::nullopt
                                                                               : std::optional<std::string>(""),
              n, false);
      if (!s.failure.empty()) return;
    }
  });
  if (!s.failure.empty())
    return make_error(Errc::usage, fmt::format("the run's effects cannot all be read: {}", s.failure));
  return ok_status();
}

// ----- the levels without an overlay ---------------------------------------------

namespace {

// What git writes in ordinary work besides objects, read whole.
bool git_state_entry(std::string_view top) {
  static constexpr std::string_view exact[] = {"HEAD",       "ORIG_HEAD",      "FETCH_HEAD", "COMMIT_EDITMSG",
                                               "packed-refs", "index",         "refs",       "logs",
                                               "sequencer",  "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
                                               "AUTO_MERGE", "shallow"};
  for (auto e : exact)
    if (top == e) return true;
  return top.starts_with("MERGE_") || top.starts_with("rebase-") || top.starts_with("BISECT_");
}

void read_git_tree(const fs::path& dir, const std::string& rel, std::map<std::string, std::string>& out,
                    size_t& budget) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (budget == 0) return;
    --budget;
    std::error_code e2;
    if (!it->is_regular_file(e2) || it->is_symlink(e2)) continue;
    if (auto bytes = read_file(it->path()))
      out[rel + "/" + it->path().lexically_relative(dir).generic_string()] = std::move(*bytes);
  }
}

std::string object_stamp(const struct stat& st) {
  return fmt::format("{}:{}.{}:{}:{:o}", st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino,
                     st.st_mode & 07777);
}

}  // namespace

GitCapture capture_git(const fs::path& root) {
  GitCapture c;
  const fs::path git = root / ".git";
  struct stat st {};
  if (::lstat(git.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return c;
  size_t budget = 100000;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(git, ec)) {
    const std::string name = e.path().filename().string();
    if (!git_state_entry(name)) continue;
    std::error_code e2;
    if (e.is_symlink(e2)) continue;
    if (e.is_directory(e2))
      read_git_tree(e.path(), ".git/" + name, c.files, budget);
    else if (e.is_regular_file(e2))
      if (auto bytes = read_file(e.path())) c.files[".git/" + name] = std::move(*bytes);
  }
  // Objects: stat data only, never read.
  const fs::path objects = git / "objects";
  for (const auto& e : fs::directory_iterator(objects, ec)) {
    const std::string name = e.path().filename().string();
    const bool fanout = name.size() == 2 && std::isxdigit(static_cast<unsigned char>(name[0])) &&
                        std::isxdigit(static_cast<unsigned char>(name[1]));
    if (!fanout && name != "pack") continue;
    std::error_code e2;
    for (const auto& o : fs::directory_iterator(e.path(), e2)) {
      struct stat os {};
      if (::lstat(o.path().c_str(), &os) == 0 && S_ISREG(os.st_mode))
        c.objects[".git/objects/" + name + "/" + o.path().filename().string()] = object_stamp(os);
    }
  }
  return c;
}

std::map<std::string, unsigned> folder_modes(const fs::path& root, const std::vector<std::string>& dirs) {
  std::map<std::string, unsigned> out;
  struct stat st {};
  if (::lstat(root.c_str(), &st) == 0) out[""] = st.st_mode & 07777;
  for (const auto& d : dirs)
    if (::lstat((root / d).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out[d] = st.st_mode & 07777;
  return out;
}

Effects from_snapshots(const std::vector<SnapshotChange>& changes, const std::map<std::string, unsigned>& dirs_before,
                       const std::map<std::string, unsigned>& dirs_after, const GitCapture& git_before,
                       const GitCapture& git_after) {
  Effects fx;
  auto add = [&fx](EffectKind k, const std::string& rel, EntrySide b, EntrySide a) {
    fx.list.push_back(Effect{k, rel, std::move(b), std::move(a), "", "", "", EffectVerdict::lands, false});
  };
  for (const SnapshotChange& c : changes) {
    const EntrySide &b = c.before, &a = c.after;
    if (b.type == NodeType::dir || a.type == NodeType::dir) continue;  // from the folder modes below
    if (b.exists() && a.exists() && b.type == a.type) {
      if (a.type == NodeType::link) {
        if (b.text != a.text || b.blob != a.blob) add(EffectKind::link_changed, c.rel, b, a);
      } else if (b.blob != a.blob) {
        add(EffectKind::file_changed, c.rel, b, a);
      } else if ((b.mode & 07777) != (a.mode & 07777)) {
        add(EffectKind::mode_changed, c.rel, b, a);
      }
      continue;
    }
    if (b.exists())
      add(b.type == NodeType::link ? EffectKind::link_deleted : EffectKind::file_deleted, c.rel, b, {});
    if (a.exists())
      add(a.type == NodeType::link                                 ? EffectKind::link_created
          : a.type == NodeType::file                               ? EffectKind::file_created
                                                                    : EffectKind::special_created,
          c.rel, {}, a);
  }
  for (const auto& [rel, mode] : dirs_after) {
    auto was = dirs_before.find(rel);
    EntrySide a{NodeType::dir, mode, "", "", 0};
    if (was == dirs_before.end())
      add(EffectKind::folder_created, rel, {}, a);
    else if ((was->second & 07777) != (mode & 07777))
      add(EffectKind::mode_changed, rel, EntrySide{NodeType::dir, was->second, "", "", 0}, a);
  }
  for (const auto& [rel, mode] : dirs_before)
    if (!dirs_after.count(rel)) add(EffectKind::folder_deleted, rel, EntrySide{NodeType::dir, mode, "", "", 0}, {});
  // .git's files, whole: git_meaning says what each means.
  auto file_side = [](const std::string& bytes) {
    return EntrySide{NodeType::file, 0644, blob_id(bytes), "", bytes.size()};
  };
  for (const auto& [rel, bytes] : git_after.files) {
    auto was = git_before.files.find(rel);
    if (was == git_before.files.end())
      add(EffectKind::git_file, rel, {}, file_side(bytes));
    else if (was->second != bytes)
      add(EffectKind::git_file, rel, file_side(was->second), file_side(bytes));
  }
  for (const auto& [rel, bytes] : git_before.files)
    if (!git_after.files.count(rel)) add(EffectKind::git_file, rel, file_side(bytes), {});
  for (const auto& [rel, stamp] : git_after.objects) {
    auto was = git_before.objects.find(rel);
    if (was == git_before.objects.end())
      add(EffectKind::git_file, rel, {}, EntrySide{NodeType::file, 0444, "", "", 0});
    else if (was->second != stamp)
      add(EffectKind::object_changed, rel, EntrySide{NodeType::file, 0444, "", "", 0},
          EntrySide{NodeType::file, 0444, "", "", 0});
  }
  for (const auto& [rel, stamp] : git_before.objects)
    if (!git_after.objects.count(rel)) add(EffectKind::object_changed, rel, EntrySide{NodeType::file, 0444, "", "", 0}, {});
  std::stable_sort(fx.list.begin(), fx.list.end(), [](const Effect& a, const Effect& b) { return a.path < b.path; });
  return fx;
}

}  // namespace kai
