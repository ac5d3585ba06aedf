#include "cmd/output.hpp"

#include <unistd.h>

#include "lib/gate/envelope.hpp"

namespace kai::cmd {
namespace {
const Redactor* g_redactor = nullptr;
bool g_text_to_stderr = false;
}  // namespace

void set_redactor(const Redactor* r) { g_redactor = r; }
void send_text_to_stderr(bool yes) { g_text_to_stderr = yes; }

std::string redacted(std::string_view text) { return g_redactor ? g_redactor->apply(text) : std::string(text); }

void write_stdout(std::string_view text) {
  std::string safe = redacted(text);
  std::fwrite(safe.data(), 1, safe.size(), stdout);
}

void write_stderr(std::string_view text) {
  std::fflush(stdout);
  std::string safe = redacted(text);
  std::fwrite(safe.data(), 1, safe.size(), stderr);
}

void write_text(std::string_view text) { g_text_to_stderr ? write_stderr(text) : write_stdout(text); }

void write_content(std::string_view bytes, int fd) {
  if (fd == 1 && g_text_to_stderr) fd = 2;
  std::string shown = ::isatty(fd) == 1 ? make_visible(bytes, Allow::tab_newline) : std::string(bytes);
  fd == 2 ? write_stderr(shown) : write_stdout(shown);
}

nlohmann::json redacted_json(nlohmann::json j) {
  return g_redactor ? kai::redacted_json(std::move(j), *g_redactor) : j;
}

}  // namespace kai::cmd
