#pragma once
// A deep recursion on a stack of its own: the walks whose depth the tree
// sets (a chain of thousands of nested folders is one `mkdir -p` away) run
// on a thread with a large stack, so no input can overflow the caller's.
//
// A walk every command makes (the secret-file walk) first runs on the
// caller's stack with a bound on its depth, and is run again on a stack of
// its own only when the tree goes deeper: a thread and its memory cost
// about as much as the rest of that walk of a tree that did not change.

#include <cstddef>
#include <functional>

namespace kai {

// The stack a tree walk gets: 512 MiB of address space, taken only as it
// is used.
inline constexpr std::size_t k_walk_stack = std::size_t{512} << 20;

// How deep a walk may go on the caller's stack (run_shallow_first): real
// trees stay well inside it, and its frames well inside any usual stack.
inline constexpr std::size_t k_shallow_depth = 48;

// Run `f` on a thread with a stack of `bytes` and wait for it. When no such
// thread can be made, `f` runs on the caller's stack.
void run_with_stack(std::size_t bytes, const std::function<void()>& f);

// Run `walk(k_shallow_depth)` on the caller's stack; when it returns false
// (it went deeper than that and stopped), run `walk(0)` (no bound) with
// run_with_stack(bytes). A caller's stack under 1 MiB (getrlimit) goes
// there at once. `walk` starts afresh each time it is called.
void run_shallow_first(std::size_t bytes, const std::function<bool(std::size_t max_depth)>& walk);

}  // namespace kai
