// libFuzzer target for the patch parsers and the applier (lib/patch*).
// Built and run by tests/fuzz/run.sh. Each input is read as a unified diff,
// as an envelope (wrapped in Begin/End Patch when it is not one), and as
// whichever parse_patch picks; whatever parses is applied to a small fixed
// tree. Besides crashes, leaks, undefined behaviour and hangs, it checks the
// promises the store and apply layers rely on:
//   - every path of a parsed changeset is canonical and root-relative;
//   - an error always says why;
//   - a successful apply gives every op a result but a delete, and a delete
//     none; a create never overwrites; nothing is touched twice.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "lib/patch/patch.hpp"
#include "lib/patch/patch_envelope.hpp"
#include "lib/patch/patch_unified.hpp"

namespace {

const std::map<std::string, kai::CurrentFile>& tree() {
  static const std::map<std::string, kai::CurrentFile> t = {
      {"a", {"one\ntwo\nthree\n", 0644}},
      {"b.txt", {"x\r\ny\r\nz\r\n", 0644}},
      {"src/m.c", {"int a;\nint b;\nint c;\nint d;\nint e;\n", 0755}},
      {"n", {"no newline", 0644}},
      {"e", {"", 0600}},
  };
  return t;
}

bool canonical(const std::string& p) {
  if (p.empty() || p[0] == '/' || p.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (true) {
    size_t slash = p.find('/', start);
    std::string c = p.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (c.empty() || c == "." || c == "..") return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

void check(kai::Result<kai::Changeset> cs) {
  if (!cs) {
    if (cs.error().message.empty()) __builtin_trap();
    return;
  }
  if (cs->ops.empty()) __builtin_trap();
  for (const kai::FileOp& op : cs->ops) {
    if (!canonical(op.path)) __builtin_trap();
    bool two = op.kind == kai::FileOpKind::rename || op.kind == kai::FileOpKind::copy;
    if (two != !op.to.empty()) __builtin_trap();
    if (two && !canonical(op.to)) __builtin_trap();
  }
  kai::PatchLimits limits;
  limits.max_match_steps = 200000;
  kai::ReadCurrent read = [](const std::string& p) -> kai::Result<std::optional<kai::CurrentFile>> {
    auto it = tree().find(p);
    if (it == tree().end()) return std::optional<kai::CurrentFile>();
    return std::optional<kai::CurrentFile>(it->second);
  };
  kai::Status st = kai::apply_changeset(*cs, read, limits);
  if (!st) {
    if (st.error().message.empty()) __builtin_trap();
    return;
  }
  std::set<std::string> touched;
  for (const kai::FileOp& op : cs->ops) {
    if ((op.kind == kai::FileOpKind::remove) == op.after.has_value()) __builtin_trap();
    if (op.kind == kai::FileOpKind::create && tree().count(op.path) != 0) __builtin_trap();
    if (op.kind != kai::FileOpKind::create && !op.before) __builtin_trap();
    if (op.kind != kai::FileOpKind::copy && !touched.insert(op.path).second) __builtin_trap();
    if (!op.to.empty() && !touched.insert(op.to).second) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check(kai::parse_patch(text));
  check(kai::parse_unified(text));
  if (!kai::looks_like_envelope(text)) {
    std::string wrapped = "*** Begin Patch\n";
    wrapped.append(text);
    wrapped += "\n*** End Patch\n";
    check(kai::parse_envelope(wrapped));
  }
  return 0;
}
