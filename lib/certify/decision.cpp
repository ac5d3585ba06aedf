#include "lib/certify/decision.hpp"

#include <charconv>
#include <climits>
#include <sstream>

#include <fmt/format.h>
#include <git2.h>
#include <toml++/toml.h>

#include "lib/util/git_tree.hpp"
#include "lib/util/time.hpp"

namespace kai {

namespace {

Error decision_bad(const std::string& origin, const toml::node& n, std::string_view key, std::string_view problem) {
  return make_error(Errc::usage, fmt::format("{}:{}: {}: {}", origin, n.source().begin.line, key, problem),
                    "see kaicoder-team(7) for the decision format");
}

bool lower_hex(std::string_view s, size_t n) {
  return s.size() == n && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool commit_hex(std::string_view s) { return lower_hex(s, 40) || lower_hex(s, 64); }

}  // namespace

bool valid_origin(std::string_view s) { return lower_hex(s, 12); }

std::optional<int> ref_id(std::string_view s) {
  if (s.empty() || s.size() > 10 || s.front() == '0' || s.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  long long v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || v < 1 || v > INT_MAX) return std::nullopt;
  return static_cast<int>(v);
}

std::optional<TeamRef> parse_team_ref(std::string_view rest) {
  const size_t a = rest.find('/');
  if (a == std::string_view::npos) return std::nullopt;
  const size_t b = rest.find('/', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  std::string_view kind = rest.substr(0, a), origin = rest.substr(a + 1, b - a - 1), id = rest.substr(b + 1);
  if (kind != "proposals" && kind != "decisions") return std::nullopt;
  if (!valid_origin(origin)) return std::nullopt;
  auto n = ref_id(id);
  if (!n) return std::nullopt;
  return TeamRef{std::string(kind), std::string(origin), *n};
}

std::string team_ref_name(std::string_view prefix, const TeamRef& r) {
  return fmt::format("{}{}/{}/{}", prefix, r.kind, r.origin, r.id);
}

std::string format_decision(const TeamDecision& d) {
  toml::table t;
  t.insert("version", 1);
  t.insert("decision", d.verdict);
  t.insert("proposal", d.proposal);
  t.insert("base", d.base);
  t.insert("origin", d.origin);
  t.insert("id", d.id);
  t.insert("decider", d.decider);
  t.insert("time", d.time);
  t.insert("tier", d.tier);
  if (!d.reason.empty()) t.insert("reason", d.reason);
  std::ostringstream out;
  out << "# kaicoder team decision: signed by its decider with ssh-keygen -Y sign -n " << k_decision_namespace << "\n";
  out << toml::toml_formatter(t, toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings)
      << "\n";
  return out.str();
}

Result<TeamDecision> parse_decision(std::string_view text, const std::string& origin) {
  toml::table t;
  try {
    t = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return make_error(Errc::usage, fmt::format("{}:{}: {}", origin, e.source().begin.line, e.description()),
                      "see kaicoder-team(7) for the decision format");
  }
  TeamDecision d;
  bool versioned = false, has_id = false;
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (key == "version") {
      if (!v.is_integer() || *v.value<int64_t>() != 1) return decision_bad(origin, v, key, "only version 1 is known");
      versioned = true;
      continue;
    }
    if (key == "id") {
      if (!v.is_integer() || *v.value<int64_t>() < 1 || *v.value<int64_t>() > INT_MAX)
        return decision_bad(origin, v, key, "expected a proposal id");
      d.id = static_cast<int>(*v.value<int64_t>());
      has_id = true;
      continue;
    }
    if (!v.is_string()) return decision_bad(origin, v, key, "expected a string");
    std::string s = *v.value<std::string>();
    if (key == "decision") {
      if (s != "approve" && s != "reject") return decision_bad(origin, v, key, "expected \"approve\" or \"reject\"");
      d.verdict = s;
    } else if (key == "proposal" || key == "base") {
      if (!commit_hex(s)) return decision_bad(origin, v, key, "expected a commit id in lowercase hex");
      (key == "proposal" ? d.proposal : d.base) = s;
    } else if (key == "origin") {
      if (!valid_origin(s)) return decision_bad(origin, v, key, "expected 12 lowercase hex digits");
      d.origin = s;
    } else if (key == "decider") {
      d.decider = s;
    } else if (key == "time") {
      TimePoint at;
      if (!parse_iso_utc(s, at)) return decision_bad(origin, v, key, "expected a UTC time like 2026-07-09T14:25:30Z");
      d.time = s;
    } else if (key == "tier") {
      if (s != "normal" && s != "confirm") return decision_bad(origin, v, key, "expected \"normal\" or \"confirm\"");
      d.tier = s;
    } else if (key == "reason") {
      d.reason = s;
    } else {
      return decision_bad(origin, v, key, "unknown key");
    }
  }
  if (!versioned || !has_id || d.verdict.empty() || d.proposal.empty() || d.base.empty() || d.origin.empty() ||
      d.time.empty() || d.tier.empty())
    return make_error(
        Errc::usage,
        fmt::format("{}: a decision needs version, decision, proposal, base, origin, id, time and tier", origin),
        "see kaicoder-team(7) for the decision format");
  return d;
}

namespace {

Error decision_refused(const std::string& commit, const std::string& why) {
  return make_error(Errc::conflict, fmt::format("decision {} is not a decision object: {}", commit.substr(0, 12), why),
                    "only kaicoder writes decisions; see kaicoder-team(7)");
}

}  // namespace

Result<DecisionObject> read_decision_commit(git_repository* repo, const git_oid& id) {
  DecisionObject o;
  o.commit = hex(id);
  git_odb* raw_odb = nullptr;
  KAI_TRY(git_check(git_repository_odb(&raw_odb, repo), "opening the object database"));
  OdbPtr odb(raw_odb);
  size_t size = 0;
  git_object_t type = GIT_OBJECT_INVALID;
  if (git_odb_read_header(&size, &type, raw_odb, &id) != 0) return decision_refused(o.commit, "it is not here");
  if (type != GIT_OBJECT_COMMIT) return decision_refused(o.commit, "it is not a commit");
  if (size > 64 * 1024) return decision_refused(o.commit, fmt::format("its commit is {} bytes", size));
  auto commit = lookup_commit(repo, id, "a decision");
  if (!commit) return commit.error();
  if (git_commit_parentcount(commit->get()) != 1) return decision_refused(o.commit, "it must have one parent");
  o.parent = hex(*git_commit_parent_id(commit->get(), 0));
  auto tree = tree_of(commit->get());
  if (!tree) return tree.error();
  if (git_tree_entrycount(tree->get()) != 2)
    return decision_refused(o.commit,
                            fmt::format("its tree must hold exactly {} and {}", k_decision_file, k_decision_sig));
  for (const std::string_view name : {k_decision_file, k_decision_sig}) {
    const git_tree_entry* e = git_tree_entry_byname(tree->get(), std::string(name).c_str());
    if (!e || git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB)
      return decision_refused(o.commit, fmt::format("its tree has no regular file {}", name));
    if (git_odb_read_header(&size, &type, raw_odb, git_tree_entry_id(e)) != 0 || type != GIT_OBJECT_BLOB)
      return decision_refused(o.commit, fmt::format("{} cannot be read", name));
    if (size > k_decision_max_bytes)
      return decision_refused(o.commit, fmt::format("{} is {} bytes (at most {})", name, size, k_decision_max_bytes));
    auto bytes = blob_at(repo, tree->get(), std::string(name));
    if (!bytes) return bytes.error();
    if (!*bytes) return decision_refused(o.commit, fmt::format("{} cannot be read", name));
    (name == k_decision_file ? o.text : o.sig) = std::move(**bytes);
  }
  auto d = parse_decision(o.text, fmt::format("decision {}", o.commit.substr(0, 12)));
  if (!d) return decision_refused(o.commit, d.error().message);
  o.decision = std::move(*d);
  return o;
}

Result<std::vector<Binding>> commit_bindings(git_repository* repo, git_commit* c) {
  if (git_commit_parentcount(c) < 1) return make_error(Errc::usage, "a proposal commit has a parent");
  git_commit* rp = nullptr;
  KAI_TRY(git_check(git_commit_parent(&rp, c, 0), "reading a proposal's base"));
  CommitPtr parent(rp);
  auto old_tree = tree_of(rp);
  if (!old_tree) return old_tree.error();
  auto new_tree = tree_of(c);
  if (!new_tree) return new_tree.error();
  git_diff_options o = GIT_DIFF_OPTIONS_INIT;
  o.flags = GIT_DIFF_INCLUDE_TYPECHANGE;
  git_diff* raw = nullptr;
  KAI_TRY(git_check(git_diff_tree_to_tree(&raw, repo, old_tree->get(), new_tree->get(), &o), "diffing a proposal"));
  DiffPtr diff(raw);
  std::vector<Binding> out;
  for (size_t i = 0; i < git_diff_num_deltas(raw); ++i) {
    const git_diff_delta& d = *git_diff_get_delta(raw, i);
    if (d.status == GIT_DELTA_DELETED) {
      out.push_back(Binding{d.old_file.path, "delete", "", ""});
      continue;
    }
    const char* kind = d.status == GIT_DELTA_ADDED                     ? "add"
                       : git_oid_equal(&d.old_file.id, &d.new_file.id) ? "mode"
                                                                       : "modify";
    out.push_back(Binding{d.new_file.path, kind, hex(d.new_file.id), fmt::format("{:06o}", d.new_file.mode)});
  }
  return out;
}

}  // namespace kai
