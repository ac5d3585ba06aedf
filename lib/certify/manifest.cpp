#include "lib/certify/manifest.hpp"

#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "lib/util/git_tree.hpp"
#include "lib/run/runner.hpp"
#include "lib/util/fs.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

Error bad(const std::string& origin, const toml::node& n, std::string_view key, std::string_view problem) {
  return make_error(Errc::usage, fmt::format("{}:{}: {}: {}", origin, n.source().begin.line, key, problem),
                    "see kaicoder-verify(1) for the manifest format");
}

// What git stores as a path: relative, '/'-separated, no empty, '.' or '..' part.
bool clean_repo_path(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.back() == '/' || p.find('\0') != std::string_view::npos) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool hex_id(std::string_view s) {
  if (s.size() != 40 && s.size() != 64) return false;
  return s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Result<std::string> string_at(const std::string& origin, const toml::node& n, std::string_view key) {
  if (auto v = n.value<std::string>(); v && n.is_string()) return *v;
  return bad(origin, n, key, "expected a string");
}

Result<Binding> parse_change(const std::string& origin, const toml::node& n) {
  const toml::table* t = n.as_table();
  if (!t) return bad(origin, n, "change", "expected [[change]] tables");
  Binding b;
  for (const auto& [k, v] : *t) {
    std::string key = "change." + std::string(k.str());
    auto s = string_at(origin, v, key);
    if (!s) return s.error();
    if (k == "path") {
      if (!clean_repo_path(*s)) return bad(origin, v, key, fmt::format("'{}' is not a path inside the repository", *s));
      b.path = *s;
    } else if (k == "kind") {
      if (*s != "add" && *s != "modify" && *s != "mode" && *s != "delete")
        return bad(origin, v, key, fmt::format("\"{}\" is not one of \"add\", \"modify\", \"mode\", \"delete\"", *s));
      b.kind = *s;
    } else if (k == "blob") {
      if (!hex_id(*s)) return bad(origin, v, key, "expected a git object id in lowercase hex");
      b.blob = *s;
    } else if (k == "mode") {
      if (*s != "100644" && *s != "100755" && *s != "120000" && *s != "160000")
        return bad(origin, v, key, fmt::format("\"{}\" is not one of 100644, 100755, 120000, 160000", *s));
      b.mode = *s;
    } else {
      return bad(origin, v, key, "unknown key");
    }
  }
  if (b.path.empty() || b.kind.empty()) return bad(origin, n, "change", "a change needs path and kind");
  if (b.kind == "delete" && (!b.blob.empty() || !b.mode.empty()))
    return bad(origin, n, "change", "a delete has no blob or mode");
  if (b.kind != "delete" && (b.blob.empty() || b.mode.empty()))
    return bad(origin, n, "change", fmt::format("a {} needs blob and mode", b.kind));
  return b;
}

}  // namespace

Result<Manifest> parse_manifest(std::string_view text, const std::string& origin) {
  toml::table t;
  try {
    t = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return make_error(Errc::usage, fmt::format("{}:{}: {}", origin, e.source().begin.line, e.description()),
                      "see kaicoder-verify(1) for the manifest format");
  }
  Manifest m;
  bool versioned = false;
  for (const auto& [k, v] : t) {
    if (k == "version") {
      if (!v.is_integer() || *v.value<int64_t>() != 1) return bad(origin, v, "version", "only version 1 is known");
      versioned = true;
    } else if (k == "base" || k == "head") {
      auto s = string_at(origin, v, k.str());
      if (!s) return s.error();
      if (!hex_id(*s)) return bad(origin, v, k.str(), "expected a commit id in lowercase hex");
      (k == "base" ? m.base : m.head) = *s;
    } else if (k == "change") {
      const toml::array* a = v.as_array();
      if (!a) return bad(origin, v, "change", "expected [[change]] tables");
      for (const auto& item : *a) {
        auto b = parse_change(origin, item);
        if (!b) return b.error();
        m.changes.push_back(std::move(*b));
      }
    } else {
      return bad(origin, v, k.str(), "unknown key");
    }
  }
  if (!versioned) return make_error(Errc::usage, fmt::format("{}: version: missing (expected version = 1)", origin));
  if (m.changes.empty())
    return make_error(Errc::usage, fmt::format("{}: change: no [[change]] in the manifest", origin));
  return m;
}

std::string format_manifest(const Manifest& m) {
  // toml++ writes strings with the escapes TOML needs, so any path reads back.
  toml::table t;
  t.insert("version", 1);
  if (!m.base.empty()) t.insert("base", m.base);
  if (!m.head.empty()) t.insert("head", m.head);
  toml::array changes;
  for (const auto& b : m.changes) {
    toml::table c;
    c.insert("path", b.path);
    c.insert("kind", b.kind);
    if (!b.deleted()) {
      c.insert("blob", b.blob);
      c.insert("mode", b.mode);
    }
    changes.push_back(std::move(c));
  }
  t.insert("change", std::move(changes));
  std::ostringstream out;
  out << "# kaicoder approval manifest: signed by its owner with ssh-keygen -Y sign -n kaicoder\n";
  out << toml::toml_formatter(t, toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings)
      << "\n";
  return out.str();
}

namespace {
bool is_manifest_name(const std::string& name) { return name.size() > 5 && name.ends_with(".toml"); }
}  // namespace

Status manifests_in_tree(git_repository* repo, git_tree* tree, std::vector<FoundManifest>& out) {
  git_tree_entry* raw = nullptr;
  if (git_tree_entry_bypath(&raw, tree, std::string(k_approvals_dir).c_str()) != 0) return ok_status();
  EntryPtr entry(raw);
  if (git_tree_entry_type(raw) != GIT_OBJECT_TREE) return ok_status();
  git_tree* sub = nullptr;
  KAI_TRY(git_check(git_tree_lookup(&sub, repo, git_tree_entry_id(raw)), "reading kaicoder-approvals/"));
  TreePtr dir(sub);
  struct Walk {
    git_repository* repo;
    git_tree* dir;
    std::vector<FoundManifest>* out;
  } w{repo, sub, &out};
  auto cb = [](const char* root, const git_tree_entry* te, void* payload) -> int {
    auto* wk = static_cast<Walk*>(payload);
    std::string name = git_tree_entry_name(te);
    if (git_tree_entry_type(te) != GIT_OBJECT_BLOB || !is_manifest_name(name)) return 0;
    std::string rel = std::string(root) + name;
    auto text = blob_at(wk->repo, wk->dir, rel);
    auto sig = blob_at(wk->repo, wk->dir, rel + ".sig");
    if (!text || !*text) return 0;
    wk->out->push_back(FoundManifest{std::string(k_approvals_dir) + "/" + rel, "head", **text,
                                     sig && *sig ? std::optional<std::string>(**sig) : std::nullopt});
    return 0;
  };
  KAI_TRY(git_check(git_tree_walk(sub, GIT_TREEWALK_PRE, cb, &w), "listing kaicoder-approvals/"));
  return ok_status();
}

void manifests_in_workdir(const fs::path& workdir, std::vector<FoundManifest>& out) {
  std::error_code ec;
  const fs::path top = workdir / k_approvals_dir;
  if (!fs::is_directory(fs::symlink_status(top, ec))) return;
  for (auto it = fs::recursive_directory_iterator(top, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    std::string name = it->path().filename().string();
    if (!is_manifest_name(name)) continue;
    auto text = read_file(it->path());
    if (!text) continue;
    auto sig = read_file(fs::path(it->path().string() + ".sig"));
    out.push_back(FoundManifest{it->path().lexically_relative(workdir).generic_string(), "work tree", *text,
                                sig ? std::optional<std::string>(*sig) : std::nullopt});
  }
}

namespace {

Result<RunResult> ssh_keygen(const SshTool& tool, const fs::path& cwd, std::vector<std::string> args,
                             const fs::path& stdin_path = {}) {
  RunSpec spec;
  spec.argv = {"ssh-keygen"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.env = tool.env;
  spec.stdin_path = stdin_path;
  spec.timeout = tool.timeout;
  spec.sandbox = SandboxMode::none;  // a system tool on files of our own private folder
  auto r = run_command(spec);
  if (!r) return r.error();
  if (r->exit_code == 127 || r->exit_code == 126)
    return make_error(Errc::io, "cannot run ssh-keygen", "install OpenSSH's ssh-keygen (Debian: openssh-client)");
  if (r->timed_out)
    return make_error(Errc::io, fmt::format("ssh-keygen did not finish within {} s", tool.timeout.count()));
  return r;
}

// ssh-keygen's own complaint, on one line.
std::string first_line(std::string_view s) {
  while (!s.empty() && (s.front() == '\n' || s.front() == ' ')) s.remove_prefix(1);
  return std::string(s.substr(0, s.find('\n')));
}

}  // namespace

Result<std::string> verify_signature(const SshTool& tool, std::string_view allowed_signers, std::string_view data,
                                     std::string_view sig, std::string_view ns) {
  auto dir = PrivateTempDir::make(tool.tmp_parent, "kaicoder-verify");
  if (!dir) return dir.error();
  const fs::path d = dir->path();
  KAI_TRY(write_file_exclusive(d / "allowed_signers", allowed_signers, 0600));
  KAI_TRY(write_file_exclusive(d / "manifest", data, 0600));
  KAI_TRY(write_file_exclusive(d / "manifest.sig", sig, 0600));
  auto who = ssh_keygen(tool, d, {"-Y", "find-principals", "-f", "allowed_signers", "-s", "manifest.sig"});
  if (!who) return who.error();
  if (who->exit_code != 0) return make_error(Errc::denied, "signed by no allowed signer");
  // find-principals only matches the key; verify checks the bytes and the namespace.
  std::string principals = who->out;
  std::string last_problem;
  size_t start = 0;
  while (start < principals.size()) {
    size_t end = principals.find('\n', start);
    if (end == std::string::npos) end = principals.size();
    std::string principal = principals.substr(start, end - start);
    start = end + 1;
    if (principal.empty()) continue;
    auto v = ssh_keygen(
        tool, d,
        {"-Y", "verify", "-f", "allowed_signers", "-I", principal, "-n", std::string(ns), "-s", "manifest.sig"},
        d / "manifest");
    if (!v) return v.error();
    if (v->exit_code == 0) return principal;
    last_problem = first_line(v->err.empty() ? v->out : v->err);
  }
  return make_error(Errc::denied, last_problem.empty() ? "signature does not verify"
                                                       : fmt::format("signature does not verify: {}", last_problem));
}

Result<std::string> sign_data(const SshTool& tool, const fs::path& key, std::string_view data, std::string_view ns) {
  auto dir = PrivateTempDir::make(tool.tmp_parent, "kaicoder-sign");
  if (!dir) return dir.error();
  const fs::path d = dir->path();
  KAI_TRY(write_file_exclusive(d / "manifest", data, 0600));
  auto r = ssh_keygen(tool, d, {"-Y", "sign", "-n", std::string(ns), "-f", key.string(), "manifest"});
  if (!r) return r.error();
  if (r->exit_code != 0)
    return make_error(Errc::io,
                      fmt::format("ssh-keygen could not sign with '{}': {}", key.string(), first_line(r->err)),
                      "a key with a passphrase must be loaded in ssh-agent: pass its public key file with --key");
  return read_file(d / "manifest.sig");
}

}  // namespace kai
