// The decision table of a run's effects (read from kaicoder-run(1)), the
// rule each effect falls under, and how an effect is told and stored.

#include "lib/run/effects.hpp"

#include <algorithm>
#include <set>
#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lib/util/strings.hpp"

namespace kai {
using json = nlohmann::json;

namespace {

constexpr std::string_view k_table_text =
#include "effects_table.inc"
    ;

// The rule ids classify() and git_meaning() give, in the table's order.
const std::vector<std::string_view> k_rule_ids = {
    "setid",   "device",    "guarded", "harness", "never-write", "git-settings", "git-lock",
    "object",  "confirm-path", "instructions", "rebase-todo", "nested", "special", "folder-mode",
    "file-mode", "tracked-deleted", "ref", "stash", "index", "commit", "index-update",
    "objects", "git-state", "mode", "file"};

std::string trim_to_string(std::string_view s) { return std::string(trim(s)); }

}  // namespace

std::string_view to_string(EffectVerdict v) {
  switch (v) {
    case EffectVerdict::lands: return "lands";
    case EffectVerdict::held: return "held";
    case EffectVerdict::never: return "never";
  }
  return "never";
}

std::optional<EffectVerdict> parse_verdict(std::string_view s) {
  if (s == "lands") return EffectVerdict::lands;
  if (s == "held") return EffectVerdict::held;
  if (s == "never") return EffectVerdict::never;
  return std::nullopt;
}

Result<std::vector<EffectRule>> parse_effect_table(std::string_view text) {
  std::vector<EffectRule> out;
  size_t line_no = 0;
  for (std::string_view line : split(text, "\n")) {
    ++line_no;
    constexpr std::string_view k_row = ".It Li ";
    if (!line.starts_with(k_row)) continue;
    std::vector<std::string_view> cells = split(line.substr(k_row.size()), " Ta ");
    if (cells.size() != 3)
      return make_error(Errc::usage, fmt::format("effects table line {}: expected three cells, found {}", line_no,
                                                 cells.size()));
    auto v = parse_verdict(trim(cells[1]));
    if (!v)
      return make_error(Errc::usage, fmt::format("effects table line {}: unknown verdict '{}'", line_no, cells[1]));
    out.push_back({trim_to_string(cells[0]), *v, trim_to_string(cells[2])});
  }
  if (out.empty()) return make_error(Errc::usage, "the effects table has no rows");
  return out;
}

const std::vector<EffectRule>& effect_table() {
  static const std::vector<EffectRule> table = [] {
    auto t = parse_effect_table(k_table_text);
    return t ? std::move(*t) : std::vector<EffectRule>{};
  }();
  return table;
}

EffectRule effect_rule(std::string_view id) {
  for (const auto& r : effect_table())
    if (r.id == id) return r;
  return {std::string(id), EffectVerdict::never, "a rule the decision table does not name"};
}

const std::vector<std::string_view>& effect_rule_ids() { return k_rule_ids; }

std::string_view to_string(NodeType t) {
  switch (t) {
    case NodeType::none: return "none";
    case NodeType::file: return "file";
    case NodeType::dir: return "folder";
    case NodeType::link: return "symlink";
    case NodeType::fifo: return "fifo";
    case NodeType::socket: return "socket";
    case NodeType::device: return "device";
    case NodeType::ref: return "ref";
  }
  return "none";
}

namespace {
constexpr std::pair<EffectKind, std::string_view> k_kind_names[] = {
    {EffectKind::file_created, "file-created"},     {EffectKind::file_changed, "file-changed"},
    {EffectKind::file_deleted, "file-deleted"},     {EffectKind::folder_created, "folder-created"},
    {EffectKind::folder_deleted, "folder-deleted"}, {EffectKind::mode_changed, "mode-changed"},
    {EffectKind::link_created, "symlink-created"},  {EffectKind::link_changed, "symlink-changed"},
    {EffectKind::link_deleted, "symlink-deleted"},  {EffectKind::special_created, "special-created"},
    {EffectKind::ref_created, "ref-created"},       {EffectKind::ref_moved, "ref-moved"},
    {EffectKind::ref_deleted, "ref-deleted"},       {EffectKind::head_moved, "head-moved"},
    {EffectKind::index_changed, "index-changed"},   {EffectKind::stash_dropped, "stash-dropped"},
    {EffectKind::objects_added, "objects-added"},   {EffectKind::object_changed, "object-changed"},
    {EffectKind::git_file, "git-file"}};

std::optional<NodeType> parse_entry_type(std::string_view s) {
  for (NodeType t : {NodeType::none, NodeType::file, NodeType::dir, NodeType::link, NodeType::fifo,
                      NodeType::socket, NodeType::device, NodeType::ref})
    if (to_string(t) == s) return t;
  return std::nullopt;
}
}  // namespace

std::string_view to_string(EffectKind k) {
  for (const auto& [kind, name] : k_kind_names)
    if (kind == k) return name;
  return "file-changed";
}

std::optional<EffectKind> parse_kind_of_effect(std::string_view s) {
  for (const auto& [kind, name] : k_kind_names)
    if (name == s) return kind;
  return std::nullopt;
}

// ----- which row ------------------------------------------------------------

bool is_instruction_file(std::string_view rel) {
  std::vector<std::string_view> parts = split(rel, "/");
  if (parts.empty()) return false;
  const std::string_view first = parts.front(), name = parts.back();
  for (std::string_view top : {".vscode", ".idea", ".husky"})
    if (first == top) return true;
  if (rel.starts_with(".github/workflows/") || rel == ".github/workflows") return true;
  // Read wherever they lie: direnv's .envrc in any folder, the agents'
  // instruction files in any folder they work in, git's attributes in any.
  for (std::string_view n : {".envrc", "CLAUDE.md", "AGENTS.md", "GEMINI.md", ".gitattributes", ".cursorrules"})
    if (name == n) return true;
  return rel == ".gitmodules";
}

namespace {

bool in_generated_dir(std::string_view rel) {
  std::vector<std::string_view> parts = split(rel, "/");
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (is_generated_dir(parts[i])) return true;
  return false;
}

// Mode bits a folder may not gain without CONFIRM: group or other write,
// set-group-ID, sticky.
constexpr unsigned k_folder_loosening = S_IWGRP | S_IWOTH | S_ISGID | S_ISVTX;
// A tracked file: group or other write, any execute bit.
constexpr unsigned k_file_loosening = S_IWGRP | S_IWOTH | S_IXUSR | S_IXGRP | S_IXOTH;

bool is_path_kind(EffectKind k) {
  switch (k) {
    case EffectKind::ref_created:
    case EffectKind::ref_moved:
    case EffectKind::ref_deleted:
    case EffectKind::head_moved:
    case EffectKind::index_changed:
    case EffectKind::stash_dropped:
    case EffectKind::objects_added:
    case EffectKind::object_changed:
    case EffectKind::git_file: return false;
    default: return true;
  }
}

bool is_deletion_kind(EffectKind k) {
  return k == EffectKind::file_deleted || k == EffectKind::link_deleted || k == EffectKind::folder_deleted;
}

// The row of one effect, the first that matches in the table's order.
std::string rule_of_effect(const Effect& e, const EffectContext& ctx, const std::vector<std::string>& renamed_blobs) {
  const bool folder = e.after.type == NodeType::dir || (e.after.type == NodeType::none && e.before.type == NodeType::dir);
  if (e.after.exists() && !folder && (e.after.mode & (S_ISUID | S_ISGID)) != 0) return "setid";
  if (e.after.type == NodeType::device) return "device";
  const bool in_git = e.path == ".git" || e.path.starts_with(".git/");
  if (!in_git) {
    if (ctx.never_rule)
      if (std::string r = ctx.never_rule(e.path); !r.empty()) return r;
  } else {
    // git_meaning's word, where it gave one; else git's other files.
    if (!e.rule.empty()) return e.rule;
    return "git-settings";  // the safe side: git_meaning names every file of .git it knows
  }
  const bool generated = in_generated_dir(e.path);
  if (!generated && ctx.confirm_reason && !ctx.confirm_reason(e.path).empty()) return "confirm-path";
  if (is_instruction_file(e.path)) return "instructions";
  if (ctx.nested && ctx.nested(e.path)) return "nested";
  if (e.after.type == NodeType::fifo || e.after.type == NodeType::socket) return "special";
  const bool mode_change = e.before.exists() && e.after.exists() && e.before.type == e.after.type &&
                           (e.before.mode & 07777) != (e.after.mode & 07777);
  const unsigned added = e.after.mode & ~e.before.mode;
  if (mode_change && e.after.type == NodeType::dir && (added & k_folder_loosening) != 0) return "folder-mode";
  if (mode_change && e.after.type == NodeType::file && (added & k_file_loosening) != 0 && ctx.tracked &&
      ctx.tracked(e.path))
    return "file-mode";
  if (is_deletion_kind(e.kind) && e.before.type != NodeType::dir && ctx.tracked && ctx.tracked(e.path) &&
      !(ctx.ignored && ctx.ignored(e.path)) &&
      std::find(renamed_blobs.begin(), renamed_blobs.end(), e.before.blob) == renamed_blobs.end())
    return "tracked-deleted";
  if (mode_change) return "mode";
  return "file";
}

int verdict_rank(EffectVerdict v) { return v == EffectVerdict::never ? 2 : v == EffectVerdict::held ? 1 : 0; }

}  // namespace

void classify(Effects& fx, const EffectContext& ctx) {
  // A file the run created with the bytes of one it deleted was moved: its
  // deletion is no deletion.
  std::vector<std::string> created_blobs;
  for (const Effect& e : fx.list)
    if ((e.kind == EffectKind::file_created || e.kind == EffectKind::link_created) && !e.after.blob.empty())
      created_blobs.push_back(e.after.blob);
  std::sort(created_blobs.begin(), created_blobs.end());
  for (Effect& e : fx.list) {
    if (!is_path_kind(e.kind) && !e.rule.empty() && e.path.starts_with(".git")) {
      // git_meaning decided; only the bits and devices of the table come first.
      if (e.after.type == NodeType::device) e.rule = "device";
    } else {
      e.rule = rule_of_effect(e, ctx, created_blobs);
    }
    e.verdict = effect_rule(e.rule).verdict;
  }
  // One path, one fate: the strictest of its effects.
  std::map<std::string, EffectVerdict> worst;
  for (const Effect& e : fx.list) {
    auto [it, fresh] = worst.emplace(e.path, e.verdict);
    if (!fresh && verdict_rank(e.verdict) > verdict_rank(it->second)) it->second = e.verdict;
  }
  for (Effect& e : fx.list) e.verdict = worst[e.path];
}

std::vector<const Effect*> shown_effects(const Effects& fx) {
  std::set<std::string> explained;
  for (const Effect& e : fx.list)
    if (e.kind != EffectKind::git_file && e.path.starts_with(".git/")) explained.insert(e.path);
  std::vector<const Effect*> out;
  bool objects = false;
  for (const Effect& e : fx.list) {
    if (e.kind == EffectKind::git_file && explained.count(e.path)) continue;
    if (e.kind == EffectKind::objects_added || (e.rule == "objects" && e.after.type == NodeType::dir)) {
      if (objects || e.kind != EffectKind::objects_added) continue;
      objects = true;
    }
    out.push_back(&e);
  }
  return out;
}

EffectVerdict strictest(const Effects& fx) {
  EffectVerdict v = EffectVerdict::lands;
  for (const Effect& e : fx.list)
    if (verdict_rank(e.verdict) > verdict_rank(v)) v = e.verdict;
  return v;
}

// ----- telling it -----------------------------------------------------------

std::string mode_text(unsigned mode) { return fmt::format("{:04o}", mode & 07777); }

namespace {
std::string effect_size_text(uint64_t n) {
  if (n < 1024) return fmt::format("{} bytes", n);
  if (n < (1u << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024);
  return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1 << 20));
}
std::string short_ref_id(const std::string& value) {
  if (value.starts_with("ref: ")) return value.substr(5);
  return value.substr(0, 7);
}
std::string effect_shown_path(const Effect& e) {
  if (e.path.empty()) return "./";
  return e.after.type == NodeType::dir || (e.after.type == NodeType::none && e.before.type == NodeType::dir)
             ? e.path + "/"
             : e.path;
}
}  // namespace

std::string describe(const Effect& e) {
  const std::string p = effect_shown_path(e);
  auto with_mode_change = [&](std::string s) {
    if (e.before.exists() && e.after.exists() && (e.before.mode & 07777) != (e.after.mode & 07777))
      s += fmt::format(", {} \u2192 {}", mode_text(e.before.mode), mode_text(e.after.mode));
    return s;
  };
  const std::string subject = e.detail.empty() ? "" : fmt::format(" \"{}\"", e.detail);
  switch (e.kind) {
    case EffectKind::file_created:
      return fmt::format("{} created ({}, {})", p, mode_text(e.after.mode), effect_size_text(e.after.size));
    case EffectKind::file_changed: return with_mode_change(fmt::format("{} changed", p));
    case EffectKind::file_deleted: return fmt::format("{} deleted", p);
    case EffectKind::folder_created: return fmt::format("{} created ({})", p, mode_text(e.after.mode));
    case EffectKind::folder_deleted: return fmt::format("{} deleted", p);
    case EffectKind::mode_changed:
      return fmt::format("{} {} \u2192 {}", p, mode_text(e.before.mode), mode_text(e.after.mode));
    case EffectKind::link_created: return fmt::format("{} -> {} (symlink) created", p, e.after.text);
    case EffectKind::link_changed:
      return fmt::format("{} (symlink) -> {} \u2192 -> {}", p, e.before.text, e.after.text);
    case EffectKind::link_deleted: return fmt::format("{} (symlink) deleted", p);
    case EffectKind::special_created:
      return fmt::format("{} ({}) created", p, to_string(e.after.type));
    case EffectKind::ref_created: return fmt::format("{} created at {}{}", e.ref, short_ref_id(e.after.text), subject);
    case EffectKind::ref_moved:
      return fmt::format("{} {} \u2192 {}{}", e.ref, short_ref_id(e.before.text), short_ref_id(e.after.text), subject);
    case EffectKind::ref_deleted: return fmt::format("{} deleted (was {})", e.ref, short_ref_id(e.before.text));
    case EffectKind::head_moved:
      return fmt::format("HEAD {} \u2192 {}{}", short_ref_id(e.before.text), short_ref_id(e.after.text), subject);
    case EffectKind::index_changed:
      return e.detail.empty() ? std::string("the index changed") : fmt::format("the index changed ({})", e.detail);
    case EffectKind::stash_dropped: return fmt::format("stash entries dropped ({})", e.detail);
    case EffectKind::objects_added: return fmt::format("git objects added ({})", e.detail);
    case EffectKind::object_changed:
      return fmt::format("{} {}", p, e.after.exists() ? "overwritten" : "removed");
    case EffectKind::git_file:
      return fmt::format("{} {}{}", p,
                         !e.before.exists() ? "created" : !e.after.exists() ? "deleted" : "changed",
                         e.detail.empty() ? "" : " (" + e.detail + ")");
  }
  return p;
}

// ----- stored ---------------------------------------------------------------

namespace {
json effect_side_json(const EntrySide& s) {
  json j = {{"type", to_string(s.type)}};
  if (!s.exists()) return j;
  j["mode"] = s.mode;
  if (!s.blob.empty()) j["blob"] = s.blob;
  if (!s.text.empty()) j["text"] = s.text;
  if (s.size) j["size"] = s.size;
  return j;
}
EntrySide effect_side_from(const json& j) {
  EntrySide s;
  if (!j.is_object()) return s;
  s.type = parse_entry_type(j.value("type", "none")).value_or(NodeType::none);
  s.mode = j.value("mode", 0u);
  s.blob = j.value("blob", "");
  s.text = j.value("text", "");
  s.size = j.value("size", uint64_t{0});
  return s;
}
}  // namespace

json to_json(const Effect& e) {
  json j = {{"kind", to_string(e.kind)},      {"path", e.path},
            {"before", effect_side_json(e.before)},  {"after", effect_side_json(e.after)},
            {"rule", e.rule},                 {"verdict", to_string(e.verdict)},
            {"why", effect_rule(e.rule).text}, {"text", describe(e)}};
  if (!e.ref.empty()) j["ref"] = e.ref;
  if (!e.detail.empty()) j["detail"] = e.detail;
  if (e.conflict) j["conflict"] = true;
  return j;
}

json to_json(const Effects& fx) {
  json list = json::array();
  for (const Effect& e : fx.list) list.push_back(to_json(e));
  return {{"effects", list}, {"notes", fx.notes}};
}

Result<Effects> effects_from_json(const json& j) {
  if (!j.is_object() || !j.contains("effects") || !j["effects"].is_array())
    return make_error(Errc::io, "not a record of a run's effects");
  Effects fx;
  for (const json& e : j["effects"]) {
    if (!e.is_object()) return make_error(Errc::io, "a run's effect is not an object");
    Effect x;
    auto k = parse_kind_of_effect(e.value("kind", ""));
    auto v = parse_verdict(e.value("verdict", ""));
    if (!k || !v) return make_error(Errc::io, "a run's effect has an unknown kind or verdict");
    x.kind = *k;
    x.verdict = *v;
    x.path = e.value("path", "");
    x.before = effect_side_from(e.value("before", json::object()));
    x.after = effect_side_from(e.value("after", json::object()));
    x.rule = e.value("rule", "");
    x.ref = e.value("ref", "");
    x.detail = e.value("detail", "");
    x.conflict = e.value("conflict", false);
    fx.list.push_back(std::move(x));
  }
  for (const json& n : j.value("notes", json::array()))
    if (n.is_string()) fx.notes.push_back(n.get<std::string>());
  return fx;
}

}  // namespace kai
