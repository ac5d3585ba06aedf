#include "cmd/output.hpp"

#include <unistd.h>

#include "lib/gate/envelope.hpp"

namespace kai::cmd {
namespace {
const Redactor* g_redactor = nullptr;
bool g_text_to_stderr = false;

// What a Batch holds: text for one stream, in the order it was printed.
int g_batch_depth = 0;
std::FILE* g_held_stream = nullptr;
std::string g_held;

void release_held() {
  if (!g_held.empty()) std::fwrite(g_held.data(), 1, g_held.size(), g_held_stream);
  g_held.clear();
}

void put(std::FILE* stream, std::string_view text) {
  if (stream == stderr) std::fflush(stdout);  // what came before it on stdout shows first
  std::string safe = redacted(text);
  if (g_batch_depth == 0) {
    std::fwrite(safe.data(), 1, safe.size(), stream);
    return;
  }
  if (g_held_stream != stream) {
    release_held();
    if (g_held_stream == stdout) std::fflush(stdout);
    g_held_stream = stream;
  }
  g_held += safe;
}
}  // namespace

Batch::Batch() { ++g_batch_depth; }

Batch::~Batch() {
  if (--g_batch_depth == 0) release_held();
}

void set_redactor(const Redactor* r) { g_redactor = r; }
void send_text_to_stderr(bool yes) { g_text_to_stderr = yes; }

std::string redacted(std::string_view text) { return g_redactor ? g_redactor->apply(text) : std::string(text); }

void write_stdout(std::string_view text) { put(stdout, text); }

void write_stderr(std::string_view text) { put(stderr, text); }

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
