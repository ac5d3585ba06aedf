#pragma once
// The owner's allow/ask/deny table (SPEC §4, §8) and the approval tiers.
// Guardrails (lib/paths.hpp) come first and no decision here can override them.

#include <string>
#include <string_view>
#include <vector>

#include "lib/config/config.hpp"
#include "lib/store/grade.hpp"

namespace kai {

struct Verdict {
  Decision decision = Decision::ask;
  std::string rule;  // "file:line" of the deciding rule, or "default"
};

// Decide `action` on a root-relative path (file actions) or a command line
// (run). Among matching rules deny beats ask beats allow; with none matching
// the [policy.default] entry decides; an unknown action is denied.
// A run rule with `exact` matches the whole command as written; one with
// `files` only when `runs` (the files of the tree the command runs,
// lib/run/tree_scripts) is given and lists exactly those files with those
// blob ids: a script changed since the rule was written no longer matches.
Verdict decide(const Config& cfg, std::string_view action, std::string_view subject, const FileBlobs* runs = nullptr);

// Whether any rule of `cfg` is bound to files (then a run's files are worth looking up).
bool has_bound_rules(const Config& cfg);

// Whole-word prefix or glob match of a command pattern: "git log" matches
// "git log -3" but not "git logout"; "npm run test*" is a glob.
bool command_matches(std::string_view pattern, std::string_view command);

// Confirm tier for protected and [paths] confirm files; `why` names the list.
Tier path_tier(const Config& cfg, std::string_view rel, std::string* why = nullptr);
bool is_protected(const Config& cfg, std::string_view rel);

}  // namespace kai
