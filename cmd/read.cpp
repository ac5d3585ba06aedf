// kaicoder read: read a file on an agent's behalf — confined, secret files
// refused, redacted, capped.

#include "cmd/cli.hpp"
#include "lib/gate/reader.hpp"

namespace kai::cmd {

RunFn setup_read(CLI::App& sub) {
  struct Args {
    std::string path, lines;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("path", a->path, "file to read")->required();
  sub.add_option("--lines", a->lines, "only lines A:B (1-based, inclusive; 'A:' to the end)");
  return [a](Session& s) {
    auto ws = s.workspace();
    if (!ws) return report(s, ws.error());
    std::optional<LineRange> range;
    if (!a->lines.empty()) {
      auto r = parse_line_range(a->lines);
      if (!r) return report(s, r.error());
      range = *r;
    }
    auto r = read_for_agent(**ws, s.env().cwd, a->path, range);
    if (!r) return report(s, r.error());
    if (s.json()) {
      emit(s, {{"path", r->path},
               {"text", r->text},
               {"binary", r->binary},
               {"cut", r->cut},
               {"total_bytes", r->total_bytes},
               {"total_lines", r->total_lines},
               {"first_line", r->first_line},
               {"last_line", r->last_line}});
      return k_exit_ok;
    }
    if (r->binary) {
      out("[{} is a binary file of {} bytes; not shown]\n", r->path, r->total_bytes);
      return k_exit_ok;
    }
    write_content(r->text);
    if (r->cut) err("[output cut at {} of {} bytes; read the rest with --lines]\n", r->text.size(), r->total_bytes);
    return k_exit_ok;
  };
}

}  // namespace kai::cmd
