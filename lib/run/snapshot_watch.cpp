#include "lib/run/snapshot_watch.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace kai {
namespace {

// FILEID_INO32_GEN: a 32-bit inode number, then its generation.
constexpr int k_ino32_gen = 1;
constexpr unsigned k_ino32_gen_bytes = 8;
constexpr size_t k_max_inodes = 1000000;  // distinct inodes (or names) kept before the watch gives up

// Everything that can change a file's bytes, mode or name. An open is
// counted because a file written through a shared mapping reports no write,
// and its close after writing may come after the run (a descriptor kept
// alive elsewhere). FAN_ONDIR is left out, so that the snapshot's own
// opening of every folder is not an event; entries added, removed or renamed
// in a folder are reported whatever they are, and a folder swapped for
// another is seen by its inode number.
constexpr uint64_t k_mask =
    FAN_OPEN | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_ATTRIB | FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO;

// The same for a folder's inotify watch, plus the folder itself moved or
// removed. Never IN_DONT_FOLLOW: the folder is named by /proc/self/fd/N.
constexpr uint32_t k_in_mask = IN_OPEN | IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_CREATE | IN_DELETE |
                               IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
constexpr uint32_t k_in_entries = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;

std::atomic<uint64_t> g_serial{0};

}  // namespace

std::unique_ptr<SnapshotWatch> SnapshotWatch::start(const std::filesystem::path& root, Kind want) {
  struct stat st;
  struct statfs sf;
  if (::stat(root.c_str(), &st) != 0 || ::statfs(root.c_str(), &sf) != 0) return nullptr;
  std::unique_ptr<SnapshotWatch> w(new SnapshotWatch());
  w->m_serial = ++g_serial;
  w->m_dev = static_cast<uint64_t>(st.st_dev);
  if (want == Kind::file_system) {
    w->m_fd = start_fanotify(root, st);
    if (w->m_fd >= 0) {
      std::memcpy(w->m_fsid, &sf.f_fsid, sizeof w->m_fsid);
      return w;
    }
  }
  w->m_kind = Kind::folders;
  w->m_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (w->m_fd < 0) return nullptr;
  return w;
}

int SnapshotWatch::start_fanotify(const std::filesystem::path& root, const struct stat& st) {
  // Only handles that carry the inode number as this reads them.
  alignas(file_handle) unsigned char buf[sizeof(file_handle) + 128] = {};
  auto* fh = reinterpret_cast<file_handle*>(buf);
  fh->handle_bytes = 128;
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, root.c_str(), fh, &mount_id, 0) != 0) return -1;
  uint32_t ino = 0;
  std::memcpy(&ino, buf + sizeof(file_handle), sizeof ino);
  if (fh->handle_type != k_ino32_gen || fh->handle_bytes != k_ino32_gen_bytes || ino != st.st_ino) return -1;
  int fd = ::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | FAN_REPORT_FID,
                           O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, k_mask, AT_FDCWD, root.c_str()) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

SnapshotWatch::~SnapshotWatch() {
  if (m_fd >= 0) ::close(m_fd);
}

void SnapshotWatch::enter(int dirfd, uint64_t ino) {
  if (m_kind != Kind::folders || m_broken) return;
  char path[40];
  std::snprintf(path, sizeof path, "/proc/self/fd/%d", dirfd);
  int wd = ::inotify_add_watch(m_fd, path, k_in_mask);
  if (wd < 0) return;  // no watch (the user's limit reached): the folder is never vouched for
  m_wd_dir[wd] = ino;
  m_watched.insert(ino);
}

void SnapshotWatch::aliased(uint64_t ino) {
  if (m_kind == Kind::folders) m_aliased.insert(ino);
}

bool SnapshotWatch::quiet_folder(uint64_t ino) const {
  return !m_broken && !m_inos.count(ino) && (m_kind == Kind::file_system || m_watched.count(ino));
}

bool SnapshotWatch::quiet_file(uint64_t dir, std::string_view name, uint64_t ino) const {
  if (m_broken) return false;
  if (m_kind == Kind::file_system) return !m_inos.count(ino);
  if (m_aliased.count(ino)) return false;
  auto named = m_names.find(dir);  // most folders have none: no name is copied for them
  return named == m_names.end() || !named->second.count(std::string(name));
}

bool SnapshotWatch::drain() {
  alignas(struct fanotify_event_metadata) alignas(struct inotify_event) char buf[65536];
  while (!m_broken) {
    ssize_t n = ::read(m_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    const bool read = n > 0 && (m_kind == Kind::file_system ? take_fanotify(buf, buf + n) : take_inotify(buf, buf + n));
    if (!read || m_inos.size() > k_max_inodes || m_named > k_max_inodes) m_broken = true;
  }
  return !m_broken;
}

bool SnapshotWatch::take_inotify(const char* p, const char* end) {
  while (p < end) {
    inotify_event ev;
    if (end - p < static_cast<ptrdiff_t>(sizeof ev)) return false;
    std::memcpy(&ev, p, sizeof ev);
    if (ev.len > static_cast<size_t>(end - p) - sizeof ev || (ev.mask & (IN_Q_OVERFLOW | IN_UNMOUNT))) return false;
    const char* name = p + sizeof ev;
    p += sizeof ev + ev.len;
    auto at = m_wd_dir.find(ev.wd);
    if (at == m_wd_dir.end()) return false;  // an event of a watch this never placed
    const uint64_t dir = at->second;
    if (ev.mask & IN_IGNORED) {  // the watch is gone, with the folder: nothing more is seen there
      m_watched.erase(dir);
      m_inos.insert(dir);
      continue;
    }
    // Folders opened (the snapshot's walk, anyone's listing) change nothing.
    if ((ev.mask & ~static_cast<uint32_t>(IN_ISDIR)) == IN_OPEN && (ev.len == 0 || (ev.mask & IN_ISDIR))) continue;
    if (ev.len == 0 || (ev.mask & k_in_entries)) m_inos.insert(dir);
    if (ev.len > 0 && m_names[dir].emplace(name, ::strnlen(name, ev.len)).second) ++m_named;
  }
  return true;
}

bool SnapshotWatch::take_fanotify(const char* p, const char* end) {
  const pid_t self = ::getpid();
  while (p < end) {
    fanotify_event_metadata meta;
    if (end - p < static_cast<ptrdiff_t>(sizeof meta)) return false;
    std::memcpy(&meta, p, sizeof meta);
    if (meta.vers != FANOTIFY_METADATA_VERSION || meta.event_len < meta.metadata_len ||
        meta.event_len > static_cast<size_t>(end - p) || (meta.mask & FAN_Q_OVERFLOW))
      return false;
    // kaicoder's own opens are the snapshot reading files: they change
    // nothing. Its writes, if any, count like anyone's.
    const bool own_read = meta.pid == self && (meta.mask & ~static_cast<uint64_t>(FAN_OPEN)) == 0;
    // Each info record: a folder's or the object's handle. Every one must be readable.
    size_t ids = 0;
    for (size_t at = meta.metadata_len; at < meta.event_len;) {
      fanotify_event_info_header hdr;
      if (meta.event_len - at < sizeof hdr) return false;
      std::memcpy(&hdr, p + at, sizeof hdr);
      if (hdr.len < sizeof hdr || hdr.len > meta.event_len - at) return false;
      const bool fid = hdr.info_type == FAN_EVENT_INFO_TYPE_FID || hdr.info_type == FAN_EVENT_INFO_TYPE_DFID ||
                       hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME;
      const size_t need = sizeof(fanotify_event_info_fid) + sizeof(file_handle) + k_ino32_gen_bytes;
      if (!fid || hdr.len < need) return false;
      fanotify_event_info_fid info;
      std::memcpy(&info, p + at, sizeof info);
      file_handle fh;
      std::memcpy(&fh, p + at + sizeof info, sizeof fh);
      uint32_t ino = 0;
      std::memcpy(&ino, p + at + sizeof info + sizeof fh, sizeof ino);
      if (std::memcmp(&info.fsid, m_fsid, sizeof m_fsid) != 0 || fh.handle_type != k_ino32_gen ||
          fh.handle_bytes != k_ino32_gen_bytes)
        return false;
      if (!own_read) m_inos.insert(ino);
      ++ids;
      at += hdr.len;
    }
    if (ids == 0) return false;
    p += meta.event_len;
  }
  return true;
}

}  // namespace kai
