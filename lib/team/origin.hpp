#pragma once
// The clone's origin name in team mode: 12 lowercase hex digits from
// getrandom(), unique per clone, kept in <state>/team/origin with its seal
// (lib/store/mac: kind "team-origin", bound to the root), so a writer of
// the state dir cannot make this clone speak as another. Every proposal
// this clone publishes and every decision on it carries the name.

#include <filesystem>
#include <string>

#include "lib/config/workspace.hpp"
#include "lib/result.hpp"

namespace kai::team {

// <state>/team, made (0700) when `make`; denied when it is a symlink.
Result<std::filesystem::path> team_dir(const Workspace& ws, bool make);

// The origin name, made now when there is none and `make` is set (the
// caller holds the store lock). not_found when there is none and `make` is
// not set; conflict when the file does not verify (its seal is not this
// owner's for this root: a copied state dir, or a forged name), with how to
// make a new one; denied without the owner's key.
Result<std::string> clone_origin(const Workspace& ws, bool make);

}  // namespace kai::team
