#include "lib/config/policy.hpp"

#include <algorithm>
#include <cctype>
#include <fnmatch.h>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "lib/paths/glob.hpp"
#include "lib/util/strings.hpp"

namespace kai {

// Anything unexpected fails closed.
static Decision rule_decision(const std::string& s) { return parse_decision(s).value_or(Decision::deny); }

bool command_matches(std::string_view pattern, std::string_view command) {
  if (pattern.find_first_of("*?[") != std::string_view::npos)
    return ::fnmatch(std::string(pattern).c_str(), std::string(command).c_str(), 0) == 0;
  if (command.substr(0, pattern.size()) != pattern) return false;
  return command.size() == pattern.size() || command[pattern.size()] == ' ' || command[pattern.size()] == '\t';
}

bool has_bound_rules(const Config& cfg) {
  return std::any_of(cfg.rules.begin(), cfg.rules.end(), [](const PolicyRule& r) { return !r.files.empty(); });
}

namespace {
bool run_rule_matches(const PolicyRule& r, std::string_view command, const FileBlobs* runs) {
  const bool said = r.exact ? command == r.command : command_matches(r.command, command);
  if (!said || r.files.empty()) return said;
  return runs && *runs == r.files;
}
}  // namespace

Verdict decide(const Config& cfg, std::string_view action, std::string_view subject, const FileBlobs* runs) {
  auto def = cfg.defaults.find(std::string(action));
  if (def == cfg.defaults.end()) return {Decision::deny, fmt::format("unknown action '{}'", action)};
  const PolicyRule* best = nullptr;
  for (const auto& r : cfg.rules) {
    if (r.action != action) continue;
    bool hit = action == "run" ? run_rule_matches(r, subject, runs) : (!r.path.empty() && glob_match(r.path, subject));
    // deny beats ask beats allow; the first rule of a rank wins.
    if (hit) {
      auto rank = [](Decision d) { return d == Decision::deny ? 0 : d == Decision::ask ? 1 : 2; };
      if (!best || rank(rule_decision(r.decision)) < rank(rule_decision(best->decision))) best = &r;
    }
  }
  if (best) return {rule_decision(best->decision), best->origin};
  return {rule_decision(def->second), "default"};
}

namespace {
// Tiers only ever add a confirmation, so they match ignoring case: on a
// case-insensitive file system ORACLE.html is oracle.html.
bool tier_match(const std::string& pattern, std::string_view rel) {
  return glob_match(ascii_lower(pattern), ascii_lower(rel));
}

// A configuration's tier patterns (protected, then confirm), lowered and
// taken apart once: a changeset asks about each of its hundreds of paths,
// and most paths match none. Kept for the lists asked about last, compared
// whole each time (a process holds one configuration; MCP calls run side
// by side).
struct TierPatterns {
  std::vector<std::string> protected_paths, confirm;  // as configured: what it was made from
  std::vector<std::string> lowered;                   // both lists, lowered; `set` keeps views of them
  std::optional<GlobSet> set;
};

std::shared_ptr<const TierPatterns> tier_patterns(const Config& cfg) {
  static std::mutex mutex;
  static std::shared_ptr<const TierPatterns> last;
  std::lock_guard<std::mutex> hold(mutex);
  if (last && last->protected_paths == cfg.protected_paths && last->confirm == cfg.confirm) return last;
  auto made = std::make_shared<TierPatterns>();
  made->protected_paths = cfg.protected_paths;
  made->confirm = cfg.confirm;
  for (const auto* list : {&cfg.protected_paths, &cfg.confirm})
    for (const auto& g : *list) made->lowered.push_back(ascii_lower(g));
  made->set.emplace(std::vector<std::string_view>(made->lowered.begin(), made->lowered.end()));
  last = made;
  return last;
}

// Whether any tier pattern matches `rel`: when none does (GlobSet::any
// answers as glob_match over the list), the lists need not be walked one
// by one for the first that does.
bool any_tier(const Config& cfg, std::string_view rel) {
  if (cfg.protected_paths.empty() && cfg.confirm.empty()) return false;
  return tier_patterns(cfg)->set->any(ascii_lower(rel));
}
}  // namespace

bool is_protected(const Config& cfg, std::string_view rel) {
  if (!any_tier(cfg, rel)) return false;
  for (const auto& g : cfg.protected_paths)
    if (tier_match(g, rel)) return true;
  return false;
}

Tier path_tier(const Config& cfg, std::string_view rel, std::string* why) {
  if (!any_tier(cfg, rel)) return Tier::normal;
  for (const auto& g : cfg.protected_paths)
    if (tier_match(g, rel)) {
      if (why) *why = fmt::format("protected path ({})", g);
      return Tier::confirm;
    }
  for (const auto& g : cfg.confirm)
    if (tier_match(g, rel)) {
      if (why) *why = fmt::format("confirm path ({})", g);
      return Tier::confirm;
    }
  return Tier::normal;
}

}  // namespace kai
