#pragma once
// Reads on an agent's behalf (`kaicoder read`, `kaicoder ls`): confined to
// root, secret files refused, output redacted and capped. They change
// nothing, so they need no lock and no approval (policy `read`, default allow).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <sys/types.h>
#include <string>
#include <vector>

#include "lib/result.hpp"
#include "lib/config/workspace.hpp"

namespace kai {

struct LineRange {
  size_t first = 1, last = 0;  // 1-based, inclusive; last 0 = to the end
};

struct ReadOut {
  std::string path;        // root-relative
  std::string text;        // redacted, at most `cap` bytes
  size_t total_bytes = 0;  // of the selected lines, before capping
  size_t first_line = 1, last_line = 0, total_lines = 0;
  bool cut = false;
  bool binary = false;  // text is empty then
};

// The one rule for what an agent may read, whichever door it comes
// through (`kaicoder read`/`ls`, MCP read_file/list_dir, a harness's own
// Read, Grep or Glob let through by `kaicoder hook`): denied for kaicoder's
// state folder (staged payloads keep their raw bytes), anything inside a
// .git folder (its config may hold credentials in remote URLs), a secret or
// deny_read file, and a policy `read` deny.
Status check_agent_read(const Workspace& ws, const RootPath& rp);

// denied: outside root, check_agent_read; usage: bad range; io: missing or
// unreadable.
Result<ReadOut> read_for_agent(const Workspace& ws, const std::filesystem::path& cwd, const std::string& path,
                               std::optional<LineRange> lines, size_t cap = 256 * 1024);

// The bytes of an input file an agent names for a proposal
// (`--content-file`, `--target-file`, `--replacement-file`). Either a file
// `read` would show (inside root, not secret, not deny_read, a regular file
// with one link, no symlink on the way), or a regular file with one link,
// owned by the caller (`uid`), in the system temp folder /tmp (literally: not
// $TMPDIR, which the caller sets), not named as a secret file, reached
// without following a symlink, in folders below /tmp that are the caller's
// and writable by nobody else.
// denied for anything else (a secret, a file elsewhere, a link); io when it
// is missing. Like every read, what the caller shows of it is redacted.
// Reads at most `max` + 1 bytes, so a caller can tell a file over its limit
// without holding all of it.
Result<std::string> read_input_file(const Workspace& ws, const std::filesystem::path& cwd, const std::string& path,
                                    uid_t uid, size_t max = SIZE_MAX - 1);

// "A:B", "A:" or "A" → range; usage error otherwise.
Result<LineRange> parse_line_range(const std::string& spec);

struct DirEntry {
  std::string path;  // root-relative
  char type = 'f';   // f file, d folder, l symlink, o other
  uint64_t size = 0;
};

struct ListOut {
  std::vector<DirEntry> entries;
  bool cut = false;  // more than `cap` entries
};

// Entries of `dir` (default: the working folder), or with `glob` every path
// beneath it that matches (relative patterns only). Skips .git and the state dir.
Result<ListOut> list_for_agent(const Workspace& ws, const std::filesystem::path& cwd, const std::string& dir,
                               const std::string& glob, size_t cap = 5000);

}  // namespace kai
