#include "lib/run/validate.hpp"

#include <fmt/format.h>

#include "lib/run/confine.hpp"
#include "lib/paths/glob.hpp"
#include "lib/run/runner.hpp"
#include "lib/shell/shell.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/text.hpp"
#include "lib/util/time.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_placeholder = "{file}";
// Kept per stream in the proposal's record: enough to see why a check failed.
constexpr size_t k_max_check_output = 8192;

std::string replace_all(std::string_view text, std::string_view what, std::string_view with) {
  std::string out;
  for (size_t pos = 0;;) {
    size_t at = text.find(what, pos);
    if (at == std::string_view::npos) return out.append(text.substr(pos));
    out.append(text.substr(pos, at - pos)).append(with);
    pos = at + what.size();
  }
}

ValidationCheck run_check(const Workspace& ws, const fs::path& dir, const fs::path& copy, const std::string& pattern,
                          const std::string& command) {
  ValidationCheck c{pattern, command, "not-run", 0, false, ""};
  if (!names_file(command)) {
    c.output =
        "not run: the command does not name {file}, so it would check the live tree, which does not hold "
        "the proposed content";
    return c;
  }
  RunSpec spec;
  spec.shell = substitute_file(command, copy.string());
  spec.cwd = ws.root;  // scripts named relative to root are found; writes stay confined
  confine(ws, spec, ConfineOptions{false, {dir}, false});
  spec.env = with_env(std::move(spec.env), "TMPDIR", (dir / ".tmp").string());
  spec.timeout = ws.cfg.validate_timeout;
  spec.max_output = k_max_check_output;
  spec.redact = [&ws](std::string_view s) { return ws.redact(s); };
  auto r = run_command(spec);
  if (!r) {
    c.output = fmt::format("not run: {}", ws.redact(r.error().message));
    return c;
  }
  c.exit_code = r->exit_code;
  c.timed_out = r->timed_out;
  c.status = r->exit_code == 0 && !r->timed_out ? "ok" : "failed";
  std::string text = r->out + r->err;
  if (r->timed_out) text += fmt::format("[timed out after {} s; killed]\n", seconds_text(ws.cfg.validate_timeout));
  // The output names the private copy; the reviewer knows the file by its path.
  c.output = make_visible(replace_all(text, copy.string(), copy.lexically_relative(dir).string()));
  return c;
}

}  // namespace

bool names_file(std::string_view command) { return command.find(k_placeholder) != std::string_view::npos; }

std::string substitute_file(std::string_view command, const std::string& path) {
  return replace_all(command, k_placeholder, quote_argv({path}));
}

Validation validate_content(const Workspace& ws, const std::string& rel, std::optional<std::string_view> proposed) {
  Validation v;
  if (!proposed) return v;
  std::vector<std::pair<std::string, std::string>> matched;
  for (const auto& [pattern, command] : ws.cfg.validate)
    if (glob_match(pattern, rel)) matched.emplace_back(pattern, command);
  if (matched.empty()) return v;
  auto dir = ws.store.make_scratch("validate");
  Status made = dir ? ok_status() : Status(dir.error());
  fs::path copy;
  if (made) {
    copy = *dir / rel;
    made = make_dirs(copy.parent_path(), 0700);
    if (made) made = make_dirs(*dir / ".tmp", 0700);
    if (made) made = write_file_atomic(copy, *proposed, 0600);
  }
  for (const auto& [pattern, command] : matched) {
    if (!made) {
      v.checks.push_back({pattern, command, "not-run", 0, false,
                          fmt::format("not run: no private copy: {}", ws.redact(made.error().message))});
      continue;
    }
    v.checks.push_back(run_check(ws, *dir, copy, pattern, command));
  }
  if (dir) {
    std::error_code ec;
    fs::remove_all(*dir, ec);
  }
  bool any_ok = false, any_failed = false;
  for (const auto& c : v.checks) {
    any_ok |= c.status == "ok";
    any_failed |= c.status == "failed";
  }
  v.status = any_failed ? "failed" : any_ok ? "ok" : "not-run";
  return v;
}

}  // namespace kai
