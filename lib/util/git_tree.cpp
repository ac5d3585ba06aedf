#include "lib/util/git_tree.hpp"

#include <fmt/format.h>

namespace kai {

std::string hex(const git_oid& id) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &id);
  return buf;
}

std::optional<TreeEntry> entry_at(git_tree* tree, const std::string& path) {
  git_tree_entry* raw = nullptr;
  if (!tree || git_tree_entry_bypath(&raw, tree, path.c_str()) != 0) return std::nullopt;
  EntryPtr e(raw);
  if (git_tree_entry_type(raw) == GIT_OBJECT_TREE) return std::nullopt;
  return TreeEntry{*git_tree_entry_id(raw), static_cast<uint32_t>(git_tree_entry_filemode(raw))};
}

Status object_within(git_repository* repo, const git_oid& id, size_t max, const std::string& what) {
  git_odb* raw_odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&raw_odb, repo), "opening the object database"));
  OdbPtr odb(raw_odb);
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  KAI_TRY(git_check(git_odb_read_header(&size, &type, raw_odb, &id), fmt::format("reading {}", what)));
  if (size > max)
    return make_error(Errc::conflict,
                      fmt::format("{} ({}) is {} bytes, more than the {} kaicoder reads of one object", what,
                                  hex(id).substr(0, 12), size, max),
                      "an object that large is not one people made: check where it came from (a team remote?)");
  return ok_status();
}

Result<std::optional<std::string>> blob_at(git_repository* repo, git_tree* tree, const std::string& path, size_t max) {
  auto e = entry_at(tree, path);
  if (!e || (e->mode != GIT_FILEMODE_BLOB && e->mode != GIT_FILEMODE_BLOB_EXECUTABLE))
    return std::optional<std::string>{};
  if (max != SIZE_MAX) KAI_TRY(object_within(repo, e->id, max, fmt::format("'{}'", path)));
  git_blob* raw = nullptr;
  KAI_TRY(git_check(git_blob_lookup(&raw, repo, &e->id), fmt::format("reading '{}'", path)));
  BlobPtr b(raw);
  return std::optional<std::string>(
      std::string(static_cast<const char*>(git_blob_rawcontent(raw)), static_cast<size_t>(git_blob_rawsize(raw))));
}

Error unresolved(git_repository* repo, const std::string& rev) {
  std::string why = git_repository_is_shallow(repo) == 1 ? "this checkout is shallow: " : "";
  return make_error(Errc::usage, fmt::format("revision '{}' does not resolve to a commit", rev),
                    why + "fetch the full history (git fetch --unshallow, or fetch-depth: 0 in CI) and check the name");
}

Result<CommitPtr> resolve_commit(git_repository* repo, const std::string& rev) {
  git_object* obj = nullptr;
  if (rev.empty() || git_revparse_single(&obj, repo, rev.c_str()) != 0) return unresolved(repo, rev);
  ObjectPtr o(obj);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) != 0) return unresolved(repo, rev);
  return CommitPtr(reinterpret_cast<git_commit*>(peeled));
}

Result<CommitPtr> lookup_commit(git_repository* repo, const git_oid& id, const std::string& what) {
  git_odb* raw_odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&raw_odb, repo), "opening the object database"));
  OdbPtr odb(raw_odb);
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &type, raw_odb, &id) != 0 || type != GIT_OBJECT_COMMIT) return unresolved(repo, what);
  KAI_TRY(object_within(repo, id, k_commit_max_object, what));
  git_commit* c = nullptr;
  if (git_commit_lookup(&c, repo, &id) != 0) return unresolved(repo, what);
  return CommitPtr(c);
}

Result<TreePtr> tree_of(git_commit* c) {
  KAI_TRY(object_within(git_commit_owner(c), *git_commit_tree_id(c), k_tree_max_object, "a commit's tree"));
  git_tree* t = nullptr;
  KAI_TRY(git_check(git_commit_tree(&t, c), "reading a commit's tree"));
  return TreePtr(t);
}

// SPEC: the merge base with the upstream branch, else the root commit

}  // namespace kai
