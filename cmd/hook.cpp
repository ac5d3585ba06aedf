// kaicoder hook HARNESS: an agent harness's pre-tool hook. Reads the
// harness's JSON on stdin, answers in its decision format on stdout
// (lib/harness/hook decides); this file only moves the bytes. It fails
// closed: whatever goes wrong, the harness hears a deny.

#include <unistd.h>

#include <fmt/format.h>

#include "cmd/cli.hpp"
#include "lib/harness/hook.hpp"
#include "lib/util/fs.hpp"

namespace kai::cmd {
namespace {

// The largest payload read: a write of [limits] content at its ceiling,
// JSON-escaped, and room around it.
constexpr size_t k_payload_max = size_t{1} << 31;

int answer(const harness::HookAnswer& a) {
  write_stdout(a.out);
  if (!a.err.empty()) write_stderr(a.err);
  return a.exit_code;
}

}  // namespace

RunFn setup_hook(CLI::App& sub) {
  struct Args {
    std::string harness;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("harness", a->harness, "the harness whose hook payload arrives on stdin")
      ->required()
      ->check(CLI::IsMember({"claude-code", "codex", "gemini", "cursor"}));
  return [a](Session& s) {
    const harness::Harness h = *harness::harness_named(a->harness);
    std::string payload;
    try {
      auto in = read_all(0, k_payload_max);
      if (!in) return answer(harness::refuse_hook(h, "", "cannot read the hook payload: " + in.error().message));
      if (in->size() > k_payload_max) return answer(harness::refuse_hook(h, "", "the hook payload is too large"));
      payload = std::move(*in);
      auto ws = s.workspace();
      if (!ws) return answer(harness::refuse_hook(h, payload, ws.error().message));
      return answer(harness::answer_hook(h, payload, **ws, {s.env().cwd, ::getuid()}));
    } catch (const std::exception& e) {
      // Exit 2 is a block for every harness that reads exit codes; the
      // reason goes where they read it. Never exit 1, which some treat as a pass.
      write_stderr(fmt::format("kaicoder: internal error, denied: {}\n", e.what()));
      return 2;
    }
  };
}

}  // namespace kai::cmd
