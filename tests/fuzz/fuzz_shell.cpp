// libFuzzer target for the shell tokenizer and classifier (lib/shell/).
// Built and run by tests/fuzz/run.sh. Besides crashes, leaks, undefined
// behaviour and hangs, it checks the promises the rest of kaicoder relies on:
//   - the classifier never returns `allow` (only the policy may);
//   - a command with a disguising control character is always blocked;
//   - a blocked classification always says why;
//   - quote_argv and tokenize_argv round-trip any argv.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/shell/shell.hpp"

namespace {

bool outside(const std::string& p) {
  return p.empty() || p[0] == '~' || (p[0] == '/' && p != "/r" && p.rfind("/r/", 0) != 0) || p == ".." ||
         p.rfind("../", 0) == 0;
}

const kai::ShellContext& context() {
  static const kai::ShellContext ctx = [] {
    kai::ShellContext c;
    c.check_write_target = [](const std::string& p) -> kai::Status {
      if (outside(p)) return kai::make_error(kai::Errc::denied, "outside the root");
      if (p.find(".git") != std::string::npos || p.find(".env") != std::string::npos)
        return kai::make_error(kai::Errc::denied, "never written");
      return kai::ok_status();
    };
    c.is_secret = [](const std::string& p) { return p.find(".env") != std::string::npos; };
    c.extra_blocked = {"terraform destroy*", "danger"};
    c.protected_processes = {"postgres", ":5432"};
    return c;
  }();
  return ctx;
}

bool has_disguise(std::string_view s) {
  for (char ch : s) {
    auto b = static_cast<unsigned char>(ch);
    if ((b < 0x20 && b != '\t' && b != '\n') || b == 0x7F) return true;
  }
  return false;
}

void check(const kai::Classification& c, std::string_view text) {
  if (c.verdict == kai::RunVerdict::allow) __builtin_trap();
  if (has_disguise(text) && c.verdict != kai::RunVerdict::blocked) __builtin_trap();
  if (c.verdict == kai::RunVerdict::blocked && c.reasons.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const kai::ShellContext& ctx = context();

  (void)kai::tokenize_argv(text);
  check(kai::classify_shell(text, ctx), text);

  // The argv form: words separated by NUL bytes.
  std::vector<std::string> argv(1);
  for (char ch : text) {
    if (ch == '\0') {
      argv.emplace_back();
    } else {
      argv.back() += ch;
    }
  }
  kai::Classification a = kai::classify_argv(argv, ctx);
  if (a.verdict == kai::RunVerdict::allow) __builtin_trap();

  kai::Result<std::vector<std::string>> back = kai::tokenize_argv(kai::quote_argv(argv));
  if (!back || *back != argv) __builtin_trap();
  return 0;
}
