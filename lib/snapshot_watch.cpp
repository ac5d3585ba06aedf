#include "lib/snapshot_watch.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace kai {
namespace {

// FILEID_INO32_GEN: a 32-bit inode number, then its generation.
constexpr int k_ino32_gen = 1;
constexpr unsigned k_ino32_gen_bytes = 8;
constexpr size_t k_max_inodes = 1000000;  // distinct inodes kept before the watch gives up

// Everything that can change a file's bytes, mode or name. An open is
// counted because a file written through a shared mapping reports no write,
// and its close after writing may come after the run (a descriptor kept
// alive elsewhere). FAN_ONDIR is left out, so that the snapshot's own
// opening of every folder is not an event; entries added, removed or renamed
// in a folder are reported whatever they are, and a folder swapped for
// another is seen by its inode number.
constexpr uint64_t k_mask =
    FAN_OPEN | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_ATTRIB | FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO;

}  // namespace

std::unique_ptr<SnapshotWatch> SnapshotWatch::start(const std::filesystem::path& root) {
  struct stat st;
  struct statfs sf;
  if (::stat(root.c_str(), &st) != 0 || ::statfs(root.c_str(), &sf) != 0) return nullptr;
  // Only handles that carry the inode number as this reads them.
  alignas(file_handle) unsigned char buf[sizeof(file_handle) + 128] = {};
  auto* fh = reinterpret_cast<file_handle*>(buf);
  fh->handle_bytes = 128;
  int mount_id = 0;
  if (::name_to_handle_at(AT_FDCWD, root.c_str(), fh, &mount_id, 0) != 0) return nullptr;
  uint32_t ino = 0;
  std::memcpy(&ino, buf + sizeof(file_handle), sizeof ino);
  if (fh->handle_type != k_ino32_gen || fh->handle_bytes != k_ino32_gen_bytes || ino != st.st_ino) return nullptr;
  int fd = ::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | FAN_REPORT_FID,
                           O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  if (::fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, k_mask, AT_FDCWD, root.c_str()) != 0) {
    ::close(fd);
    return nullptr;
  }
  std::unique_ptr<SnapshotWatch> w(new SnapshotWatch());
  w->m_fd = fd;
  w->m_dev = static_cast<uint64_t>(st.st_dev);
  std::memcpy(w->m_fsid, &sf.f_fsid, sizeof w->m_fsid);
  return w;
}

SnapshotWatch::~SnapshotWatch() {
  if (m_fd >= 0) ::close(m_fd);
}

bool SnapshotWatch::drain() {
  alignas(struct fanotify_event_metadata) char buf[65536];
  const pid_t self = ::getpid();
  while (!m_broken) {
    ssize_t n = ::read(m_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n <= 0) {
      m_broken = true;
      break;
    }
    const char* end = buf + n;
    for (const char* p = buf; p < end && !m_broken;) {
      fanotify_event_metadata meta;
      if (end - p < static_cast<ptrdiff_t>(sizeof meta)) {
        m_broken = true;
        break;
      }
      std::memcpy(&meta, p, sizeof meta);
      if (meta.vers != FANOTIFY_METADATA_VERSION || meta.event_len < meta.metadata_len ||
          meta.event_len > static_cast<size_t>(end - p) || (meta.mask & FAN_Q_OVERFLOW)) {
        m_broken = true;
        break;
      }
      // kaicoder's own opens are the snapshot reading files: they change
      // nothing. Its writes, if any, count like anyone's.
      const bool own_read = meta.pid == self && (meta.mask & ~static_cast<uint64_t>(FAN_OPEN)) == 0;
      // Each info record: a folder's or the object's handle. Every one must be readable.
      size_t ids = 0;
      for (size_t at = meta.metadata_len; at < meta.event_len && !m_broken;) {
        fanotify_event_info_header hdr;
        if (meta.event_len - at < sizeof hdr) {
          m_broken = true;
          break;
        }
        std::memcpy(&hdr, p + at, sizeof hdr);
        if (hdr.len < sizeof hdr || hdr.len > meta.event_len - at) {
          m_broken = true;
          break;
        }
        const bool fid = hdr.info_type == FAN_EVENT_INFO_TYPE_FID || hdr.info_type == FAN_EVENT_INFO_TYPE_DFID ||
                         hdr.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME;
        const size_t need = sizeof(fanotify_event_info_fid) + sizeof(file_handle) + k_ino32_gen_bytes;
        if (!fid || hdr.len < need) {
          m_broken = true;
          break;
        }
        fanotify_event_info_fid info;
        std::memcpy(&info, p + at, sizeof info);
        file_handle fh;
        std::memcpy(&fh, p + at + sizeof info, sizeof fh);
        uint32_t ino = 0;
        std::memcpy(&ino, p + at + sizeof info + sizeof fh, sizeof ino);
        if (std::memcmp(&info.fsid, m_fsid, sizeof m_fsid) != 0 || fh.handle_type != k_ino32_gen ||
            fh.handle_bytes != k_ino32_gen_bytes) {
          m_broken = true;
          break;
        }
        if (!own_read) m_inos.insert(ino);
        ++ids;
        at += hdr.len;
      }
      if (ids == 0 || m_inos.size() > k_max_inodes) m_broken = true;
      p += meta.event_len;
    }
  }
  return !m_broken;
}

}  // namespace kai
