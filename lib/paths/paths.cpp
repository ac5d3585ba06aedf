#include "lib/paths/paths.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <sys/stat.h>

#include <fmt/format.h>

#include "lib/paths/glob.hpp"
#include "lib/util/fs.hpp"
#include "lib/util/strings.hpp"
#include "lib/util/text.hpp"

namespace kai {
namespace fs = std::filesystem;

namespace {

constexpr size_t k_path_max = 4096;  // PATH_MAX, counting the final NUL

// Paths in messages: long ones shortened so the rule stays readable, hidden
// characters spelled out so that a crafted name cannot drive the terminal.
std::string shown_path(std::string_view p) {
  std::string out = make_visible(p.substr(0, 80), Allow::nothing);
  if (p.size() > 80) out += "...";
  return out;
}

Error hidden_in(std::string_view user, const HiddenChar& h) {
  if (h.invalid)
    return make_error(Errc::denied,
                      fmt::format("'{}' is not valid UTF-8 (byte 0x{:02x} at {})", shown_path(user), h.cp, h.at),
                      "rename the file by hand if it must change");
  return make_error(Errc::denied,
                    fmt::format("'{}' contains a {} ({}), which can make a name look like another", shown_path(user),
                                h.kind, code_point_name(h.cp)),
                    "name the file with visible characters only");
}

std::vector<std::string> split_path(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t slash = s.find('/', start);
    if (slash == std::string_view::npos) slash = s.size();
    out.emplace_back(s.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, size_t from = 0) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) {
    if (!out.empty()) out += '/';
    out += parts[i];
  }
  return out;
}

// `inner` relative to `root` when it lies inside it (both lexically normal,
// absolute); nullopt otherwise. "" means the root itself.
std::optional<std::string> inside(const fs::path& root, const fs::path& inner) {
  auto r = root.begin(), i = inner.begin();
  for (; r != root.end(); ++r, ++i) {
    if (r->empty()) continue;  // "/r/" ends in an empty element
    if (i == inner.end() || *r != *i) return std::nullopt;
  }
  std::string rel;
  for (; i != inner.end(); ++i) {
    if (i->empty()) continue;
    if (!rel.empty()) rel += '/';
    rel += i->string();
  }
  return rel;
}

Error outside(std::string_view user, const fs::path& root) {
  return make_error(Errc::denied, fmt::format("'{}' is outside the root '{}'", shown_path(user), root.string()));
}

// Checks made on the text alone, before anything touches the disk.
Status check_text(std::string_view user) {
  if (user.empty()) return make_error(Errc::usage, "path is empty");
  if (user.find('\0') != std::string_view::npos) return make_error(Errc::usage, "path contains a NUL byte");
  // Newlines and escapes in a name would let it forge lines in the changelog
  // or repaint the approver's terminal, and bidi or zero-width characters
  // make it read as another name; no real source file needs them. (Bytes
  // that are not UTF-8 are refused for writes only: check_name.)
  if (auto h = find_hidden(user, Allow::nothing); h && !h->invalid) return hidden_in(user, *h);
  if (user.size() >= k_path_max)
    return make_error(Errc::usage, fmt::format("'{}' is longer than {} bytes", shown_path(user), k_path_max - 1));
  // The shell expands `~`; kaicoder does not, and a folder literally named
  // `~` is far more often a mistake than an intent.
  if (user.front() == '~')
    return make_error(Errc::denied,
                      fmt::format("'{}' starts with '~', which kaicoder does not expand", shown_path(user)),
                      "give the path relative to the root or as an absolute path inside it");
  for (const std::string& part : split_path(user))
    if (part.size() > k_name_max)
      return make_error(Errc::usage, fmt::format("'{}' has a name longer than {} bytes", shown_path(user), k_name_max));
  return ok_status();
}

struct Walked {
  std::string rel;  // on-disk spelling: every symlinked ancestor replaced by its target
  bool is_dir = false;
};

Error not_a_folder(std::string_view user, const std::vector<std::string>& done) {
  return make_error(Errc::usage, fmt::format("'{}': '{}' is not a folder", shown_path(user), join(done)));
}

// Walks the components from root with lstat. A symlinked ancestor is replaced
// by its realpath, which must stay inside root: the rel we hand on then names
// the real location, so check_write sees `.git/config` even when it was
// reached through `docs -> .git`. The final component must not be a symlink
// at all, dangling or not, because a write would follow it.
Result<Walked> walk_on_disk(const fs::path& root, const std::vector<std::string>& parts, std::string_view user) {
  std::vector<std::string> done;  // real components, relative to root
  for (size_t i = 0; i < parts.size(); ++i) {
    done.push_back(parts[i]);
    fs::path here = root / join(done);
    bool last = i + 1 == parts.size();
    struct stat st {};
    if (::lstat(here.c_str(), &st) != 0) {
      int err = errno;
      if (err == ENOENT) {  // the rest does not exist yet; it will be created beneath `done`
        for (size_t j = i + 1; j < parts.size(); ++j) done.push_back(parts[j]);
        return Walked{join(done), false};
      }
      done.pop_back();
      if (err == ENOTDIR) return not_a_folder(user, done);
      return make_error(Errc::io, fmt::format("cannot inspect '{}': {}", shown_path(user), std::strerror(err)));
    }
    if (S_ISLNK(st.st_mode)) {
      if (last)
        return make_error(Errc::denied,
                          fmt::format("'{}' is a symlink, which kaicoder never follows", shown_path(user)));
      std::error_code ec;
      fs::path real = fs::canonical(here, ec);
      if (ec)
        return make_error(Errc::denied, fmt::format("'{}' leads through the symlink '{}', which does not resolve",
                                                    shown_path(user), join(done)));
      std::optional<std::string> rel = inside(root, real);
      if (!rel)
        return make_error(Errc::denied, fmt::format("'{}' is outside the root '{}' (through the symlink '{}')",
                                                    shown_path(user), root.string(), join(done)));
      done = rel->empty() ? std::vector<std::string>{} : split_path(*rel);
      if (!fs::is_directory(real, ec)) return not_a_folder(user, done);
      continue;
    }
    if (last) return Walked{join(done), S_ISDIR(st.st_mode)};
    if (!S_ISDIR(st.st_mode)) return not_a_folder(user, done);
  }
  return Walked{join(done), true};
}

// The text names a folder rather than a file: `a/`, `a/.`, `a/..`.
bool names_folder(std::string_view user) {
  if (user.back() == '/') return true;
  size_t slash = user.rfind('/');
  std::string_view last = slash == std::string_view::npos ? user : user.substr(slash + 1);
  return last == "." || last == "..";
}

// An absolute path may reach the root through an alias, say a symlinked home
// folder or /tmp, as a path built from $PWD does. What counts is where its
// folder lands on disk; the final name is kept as written so that a symlink
// there is still refused by the walk.
std::optional<std::string> through_alias(const fs::path& root, const fs::path& lexical) {
  std::error_code ec;
  fs::path folder = fs::weakly_canonical(lexical.parent_path(), ec);
  if (ec) return std::nullopt;
  return inside(root, (folder / lexical.filename()).lexically_normal());
}

// `../<root-name>/x` from inside root names a file inside it, but only by way
// of the folder above: what it means depends on what root is called, and a
// tool that normalises it will as happily follow `../<other>/x`. Refused.
Status no_reentry(const fs::path& root, const fs::path& start, const fs::path& user_path, std::string_view user) {
  fs::path here = start.lexically_normal();
  bool was_inside = inside(root, here).has_value(), left = false;
  for (const fs::path& part : user_path.relative_path()) {
    here = (here / part).lexically_normal();
    bool now_inside = inside(root, here).has_value();
    if (was_inside && !now_inside) left = true;
    if (left && now_inside)
      return make_error(Errc::denied, fmt::format("'{}' leaves the root and comes back into it", shown_path(user)),
                        "give the path from inside the root, without '..' past it");
    was_inside = was_inside || now_inside;
  }
  return ok_status();
}

// `root_in` made canonical. fs::canonical walks every component of the
// root, a system call or two each, and a command resolves every path it
// touches against the same root (a changeset, three times for each file).
// So the answer is kept, per thread, with the folder it named: while
// `root_in` still leads to that folder and the answer still names it
// (stat(2): same device and inode; a folder moved elsewhere fails the
// second), it is given again; otherwise the root is made canonical anew.
Result<fs::path> canonical_root(const fs::path& root_in) {
  struct Kept {
    std::string in;
    fs::path root;
    dev_t dev = 0;
    ino_t ino = 0;
  };
  static thread_local Kept kept;
  const auto names_kept = [](const fs::path& p) {
    struct stat now {};
    return ::stat(p.c_str(), &now) == 0 && now.st_dev == kept.dev && now.st_ino == kept.ino;
  };
  // A root given canonical (every workspace's is) is one path: one stat.
  if (!kept.in.empty() && kept.in == root_in.native() && names_kept(root_in) &&
      (kept.root == root_in || names_kept(kept.root)))
    return kept.root;
  std::error_code ec;
  fs::path root = fs::canonical(root_in, ec);
  if (ec) return make_error(Errc::io, fmt::format("cannot resolve the root '{}': {}", root_in.string(), ec.message()));
  // The folder the canonical path names, taken after it was made: what a
  // later stat of `root_in` must find again.
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0) kept = Kept{root_in.native(), root, st.st_dev, st.st_ino};
  else kept = Kept{};
  return root;
}

}  // namespace

Result<RootPath> resolve(const fs::path& root_in, const fs::path& cwd_in, std::string_view user) {
  KAI_TRY(check_text(user));
  auto canonical = canonical_root(root_in);
  if (!canonical) return canonical.error();
  const fs::path root = std::move(*canonical);
  std::error_code ec;

  // Relative paths are taken from the real working folder, as the kernel would.
  fs::path cwd = cwd_in.is_absolute() ? cwd_in : root / cwd_in;
  // From the root itself (a stored root-relative path), the real folder is
  // the root just made canonical: no second walk of the same folders.
  if (cwd_in.is_absolute() && cwd_in == root_in)
    cwd = root;
  else if (fs::path real = fs::weakly_canonical(cwd, ec); !ec)
    cwd = real;
  fs::path user_path{std::string(user)};
  fs::path lexical = (user_path.is_absolute() ? user_path : cwd / user_path).lexically_normal();
  if (lexical.string().size() >= k_path_max)
    return make_error(Errc::usage, fmt::format("'{}' is longer than {} bytes", shown_path(user), k_path_max - 1));

  KAI_TRY(no_reentry(root, user_path.is_absolute() ? fs::path("/") : cwd, user_path, user));
  std::optional<std::string> rel = inside(root, lexical);
  if (!rel) rel = through_alias(root, lexical);
  if (!rel) return outside(user, root);
  if (rel->empty())
    return make_error(Errc::denied, fmt::format("'{}' is the root itself, not a path inside it", shown_path(user)));

  auto walked = walk_on_disk(root, split_path(*rel), user);
  if (!walked) return walked.error();
  if (walked->rel.empty())
    return make_error(Errc::denied, fmt::format("'{}' is the root itself, not a path inside it", shown_path(user)));
  if (names_folder(user) && !walked->is_dir)
    return make_error(Errc::usage,
                      fmt::format("'{}' names a folder but '{}' is not one", shown_path(user), walked->rel));
  return RootPath{walked->rel, root / walked->rel};
}

namespace {

// Code points that HFS+ ignores in names, so `.g\u200cit` is `.git` there.
// git refuses these for the same reason.
constexpr std::array<std::string_view, 16> k_hfs_ignorable = {
    "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202b", "\u202c", "\u202d",
    "\u202e", "\u206a", "\u206b", "\u206c", "\u206d", "\u206e", "\u206f", "\ufeff"};

// The spelling a case-insensitive or forgiving filesystem would see: ASCII
// case folded, HFS+-ignorable code points dropped, and trailing dots and
// spaces removed (NTFS and SMB shares drop them, so `.env.` is `.env`).
// Only ever used to widen a refusal, never to build a path to write.
std::string fold_name(std::string_view name) {
  std::string out = ascii_lower(name);
  for (std::string_view ign : k_hfs_ignorable)
    for (size_t at = out.find(ign); at != std::string::npos; at = out.find(ign, at)) out.erase(at, ign.size());
  size_t keep = out.find_last_not_of(". ");
  if (keep != std::string::npos) out.resize(keep + 1);
  return out;
}

std::string fold_rel(std::string_view rel) {
  // A path of ASCII bytes alone, without an empty name (what every walk of
  // the tree asks about for each name) holds nothing HFS+ ignores: its
  // names are folded in one pass, as fold_name() would.
  const bool plain = !rel.empty() && rel.front() != '/' && rel.find("//") == std::string_view::npos &&
                     std::all_of(rel.begin(), rel.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  if (plain) {
    std::string out;
    out.reserve(rel.size());
    for (size_t start = 0;;) {
      size_t slash = rel.find('/', start);
      if (slash == std::string_view::npos) slash = rel.size();
      const std::string_view part = rel.substr(start, slash - start);
      const size_t keep = part.find_last_not_of(". ");
      for (char c : part.substr(0, keep == std::string_view::npos ? part.size() : keep + 1))
        out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
      if (slash == rel.size()) break;
      out += '/';
      start = slash + 1;
    }
    return out;
  }
  std::vector<std::string> parts = split_path(rel);
  for (std::string& part : parts) part = fold_name(part);
  return join(parts);
}

std::string strip_slashes(std::string_view s) {
  while (s.starts_with("./")) s.remove_prefix(2);
  while (!s.empty() && s.front() == '/') s.remove_prefix(1);
  while (!s.empty() && s.back() == '/') s.remove_suffix(1);
  return std::string(s);
}

bool at_or_under(std::string_view rel, std::string_view dir) {
  return !dir.empty() && (rel == dir || (rel.starts_with(dir) && rel.size() > dir.size() && rel[dir.size()] == '/'));
}

// gitignore-style, matched against the folded path (so lower case only). A
// pattern naming a folder (`.ssh`) covers everything beneath it; one without
// a '/' matches at any depth.
// clang-format off
constexpr std::array<std::string_view, 47> k_secret_patterns = {
    ".env", "*.env", ".env.*", ".envrc",                               // dotenv and direnv
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",                  // ssh keys
    "*.pem", "*.key", "*.p12", "*.pfx", "*.keystore", "*.jks", "*.ppk",  // keys, certificates with keys
    "*.kdbx", ".ssh", ".gnupg",                                        // key stores
    ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".htpasswd",   // credential files
    ".git-credentials", ".dockercfg", "**/.docker/config.json", "**/.kube/config",
    "credentials", "credentials.*", "secrets.*", ".secrets", "*.tfstate",
    ".credentials.json", "service-account*.json", "auth.json",         // cloud and package-manager tokens
    "*.tfvars", "*.tfvars.json", ".vault-token",                       // terraform variables, vault
    "kubeconfig", "kubeconfig.*", "*.kubeconfig",                      // cluster credentials
    ".s3cfg", ".boto", "**/.config/gh/hosts.yml",                      // s3cmd, boto, GitHub CLI
    "krb5cc_*",                                                        // Kerberos tickets (often in /tmp)
};
// clang-format on

// Copies that document a secret file's shape (`.env.example`) hold no
// secrets: the last name's suffix says so.
constexpr std::array<std::string_view, 3> k_documentation_suffixes = {".example", ".sample", ".template"};

Error never_write(const RootPath& p, std::string_view what) {
  return make_error(Errc::denied, fmt::format("'{}' {}", shown_path(p.rel), what),
                    "never-write paths cannot be unlocked by policy or flags; change it by hand if it must change");
}

// The built-ins that guard kaicoder's own integrity: git's metadata, the
// state dir, signed approvals, the changelog and kaicoder's config. `folded` is fold_rel(p.rel).
std::optional<Error> own_files_rule(const Guardrails& g, const RootPath& p, const std::string& folded) {
  std::vector<std::string> parts = split_path(folded);
  for (size_t i = 0; i < parts.size(); ++i) {
    // `git~1` is the 8.3 short name of `.git` on FAT and NTFS volumes.
    if (parts[i] != ".git" && parts[i] != "git~1") continue;
    if (i + 1 == parts.size()) return never_write(p, "is a .git entry, which kaicoder never writes");
    return never_write(p, "is under .git/, which kaicoder never writes");
  }
  std::string state = fold_rel(strip_slashes(g.state_dir));
  if (at_or_under(folded, state))
    return never_write(
        p, fmt::format("is under the state dir {}/, which kaicoder never writes", strip_slashes(g.state_dir)));
  // A nested tree can be a root of its own; its state and config are as
  // much off limits as ours (an agent-written sub/kaicoder.toml would become
  // the policy for anyone running kaicoder from sub/).
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i] == ".kaicoder") return never_write(p, "is under .kaicoder/, a state dir kaicoder never writes");
  // Signed approvals (`kaicoder certify`, lib/certify/manifest): only the signer's
  // own command writes them, never a proposal or a run.
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i] == "kaicoder-approvals")
      return never_write(p, "is under kaicoder-approvals/, where only `kaicoder certify` writes signed approvals");
  std::string log = fold_rel(strip_slashes(g.changelog));
  const std::string& base = parts.back();
  bool is_log = !log.empty() && (folded == log || folded.starts_with(log + "."));  // and rotated copies
  if (is_log || base == "kai-coder-changelog.md")
    return never_write(p, "is the changelog, which kaicoder never writes");
  for (const std::string& cfg : g.config_files)
    if (folded == fold_rel(strip_slashes(cfg)))
      return never_write(p, "is kaicoder's own config, which kaicoder never writes");
  if (base == "kaicoder.toml" || glob_match("**/.config/kaicoder/", folded))
    return never_write(p, "is kaicoder's own config, which kaicoder never writes");
  return std::nullopt;
}

const GlobSet& secret_patterns() {
  static const GlobSet secret(std::vector<std::string_view>(k_secret_patterns.begin(), k_secret_patterns.end()));
  return secret;
}

// Whether a folded path that matches a secret-file pattern is a secret file.
bool secret_match_stands(const std::string& folded) {
  auto matches = [](std::string_view path) { return secret_patterns().any(path); };
  std::vector<std::string> parts = split_path(folded);
  bool documentation = std::any_of(k_documentation_suffixes.begin(), k_documentation_suffixes.end(),
                                   [&](std::string_view s) { return parts.back().ends_with(s); });
  if (!documentation) return true;
  // `.ssh/config.example` is still inside a secret folder.
  for (size_t n = 1; n < parts.size(); ++n) {
    parts.pop_back();
    if (matches(join(parts))) return true;
  }
  return false;
}

}  // namespace

bool is_secret_file(std::string_view rel) {
  std::string folded = fold_rel(rel);
  return secret_patterns().any(folded) && secret_match_stands(folded);
}

Status check_write(const Guardrails& g, const RootPath& p) {
  KAI_TRY(check_name(g, p.rel));
  // kaicoder's records name the owner's home "~/" (a harness's user
  // settings, integrate --user): a folder named '~' at the root would spell
  // a path of the tree the same way, and a write or rollback of it would go
  // to the home instead.
  if (p.rel == "~" || p.rel.starts_with("~/"))
    return never_write(p, "is under a folder named '~' at the root, the name kaicoder's records give your home "
                          "folder (never written)");
  std::string folded = fold_rel(p.rel);
  if (auto e = own_files_rule(g, p, folded)) return *e;
  std::vector<std::string> parts = split_path(folded);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].find(".bak") == std::string::npos) continue;
    // kaicoder's own backup names, existing or not: a file planted under
    // such a name would pass for a backup that rollback restores.
    if (parts[i].find(".bak-kaicoder-") != std::string::npos)
      return never_write(p, "is a kaicoder backup name (*.bak-kaicoder-*), which kaicoder never writes");
    // Any other *.bak* name is someone's backup once it exists; a new
    // `docs/archive.bak` is an ordinary file.
    fs::path on_disk = p.abs;
    for (size_t up = parts.size() - 1; up > i; --up) on_disk = on_disk.parent_path();
    struct stat st {};
    if (::lstat(on_disk.c_str(), &st) == 0)
      return never_write(p, "is an existing backup (*.bak*), which kaicoder never writes");
  }
  if (is_secret_file(p.rel)) return never_write(p, "is a secret file (never written)");
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (is_generated_dir(parts[i]))
      return never_write(p, fmt::format("is under {}/, which kaicoder never writes", parts[i]));
  // Configured patterns are matched as written and case-folded: on a
  // case-insensitive filesystem `Secrets/a` is `secrets/a`, and a wider
  // refusal is the safe side to err on.
  for (const std::string& pat : g.deny_write)
    if (glob_match(pat, p.rel) || glob_match(ascii_lower(pat), folded))
      return never_write(p, fmt::format("matches the deny_write pattern '{}'", pat));
  return ok_status();
}

bool walk_skips(const Guardrails& g, std::string_view name) {
  return name == ".git" || name == g.state_dir || is_generated_dir(name);
}

Status check_links(const Guardrails& g, std::string_view rel, unsigned long nlink) {
  if (nlink <= 1 || g.break_hardlinks) return ok_status();
  return make_error(
      Errc::denied,
      fmt::format(
          "'{}' has {} hard links; writing it would split it from its other names, which would keep the old bytes", rel,
          nlink),
      "set [paths] hardlinks = \"break\" to write a new file under this name, or break the link by hand");
}

namespace {

// The first of g.deny_read that `rel` (folded: `folded`) matches, or null.
const std::string* denied_read(const Guardrails& g, std::string_view rel, const std::string& folded) {
  for (const std::string& pat : g.deny_read)
    if (glob_match(pat, rel) || glob_match(ascii_lower(pat), folded)) return &pat;
  return nullptr;
}

}  // namespace

Status check_read(const Guardrails& g, const RootPath& p) {
  if (is_secret_file(p.rel))
    return make_error(Errc::denied, fmt::format("'{}' is a secret file (never read)", shown_path(p.rel)));
  std::string folded = fold_rel(p.rel);
  if (const std::string* pat = denied_read(g, p.rel, folded))
    return make_error(Errc::denied, fmt::format("'{}' matches the deny_read pattern '{}'", shown_path(p.rel), *pat));
  return ok_status();
}

bool ReadCheck::readable(std::string_view rel) {
  std::string folded = fold_rel(rel);
  if (secret_patterns().any(folded, m_memo) && secret_match_stands(folded)) return false;
  return denied_read(m_g, rel, folded) == nullptr;
}

// ---- names that are traps (kept apart from the never-write lists) ----

namespace {

// check_name()'s checks of hidden characters and shell syntax.
Status unusual_name(const Guardrails& g, std::string_view rel) {
  if (auto h = find_hidden(rel, Allow::nothing)) return hidden_in(rel, *h);
  for (const std::string& part : split_path(rel)) {
    size_t at = part.find_first_of("$`;|&<>\\");
    if (!g.allow_unusual_names && (part.starts_with('-') || at != std::string::npos)) {
      std::string what = part.starts_with('-') ? "starts with '-'" : fmt::format("contains '{}'", part[at]);
      return make_error(Errc::denied,
                        fmt::format("'{}' has a name that is shell syntax ('{}' {}), a trap for scripts and globs",
                                    shown_path(rel), shown_path(part), what),
                        "choose a plain name, or set [paths] allow_unusual_names = true in kaicoder.toml");
    }
  }
  return ok_status();
}

}  // namespace

Status check_name(const Guardrails& g, std::string_view rel) {
  // Printable ASCII without shell syntax and no name starting with '-'
  // (nearly every name: a run's approval asks this of each tracked file)
  // has nothing hidden and nothing of a trap; only its length is left.
  const bool plain =
      std::all_of(rel.begin(), rel.end(),
                  [](char c) { return c >= 0x20 && c < 0x7f && std::strchr("$`;|&<>\\", c) == nullptr; }) &&
      !rel.starts_with('-') && rel.find("/-") == std::string_view::npos;
  if (!plain) KAI_TRY(unusual_name(g, rel));
  size_t slash = rel.rfind('/');
  std::string_view base = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  if (base.size() + k_backup_suffix_max > k_name_max)
    return make_error(
        Errc::denied,
        fmt::format("'{}' has a name of {} bytes, too long for its backup beside it", shown_path(rel), base.size()),
        fmt::format("names kaicoder writes have at most {} bytes", k_name_max - k_backup_suffix_max));
  return ok_status();
}

}  // namespace kai
